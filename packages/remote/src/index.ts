/**
 * @spillway/remote: leased process output that stays on its host.
 *
 * @since 0.1.0
 */

/** The controller side: the RemoteLease capability. */
export * as Controller from "./Controller.js"
/** The host side: the RPC group's handlers over stdio or TCP. */
export * as Host from "./Host.js"
/** A host's persistent identity. */
export * as HostIdentity from "./HostIdentity.js"
/** The host's RPC group. */
export * as HostProtocol from "./HostProtocol.js"
/** A controller's view of which hosts are up. */
export * as HostHealth from "./HostHealth.js"
/** What a controller records of its remote jobs. */
export * as RemoteRecords from "./RemoteRecords.js"
/** Leases: grants signed by a host. */
export * as Lease from "./Lease.js"
