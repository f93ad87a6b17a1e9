/**
 * The part of the one access check that needs nothing but its facts: who
 * owns a body and from which channel, whether a caller may act on it by
 * ownership, and whether it has expired. `Access.check` runs it with the
 * host's authorizer and the clock; `Body` names a body as the check sees
 * it; `spillway read`'s quick path, a program too small to load Effect, runs
 * the same functions on the same facts. No Effect here, on purpose.
 *
 * @since 0.1.0
 */
import type { Resource as ResourceKind } from "./Errors.js"
import type { Manifest } from "./Manifests.js"

/** Who acts: the principal, and the channel (conversation, session) it acts from. */
export interface Caller {
  readonly owner: string
  readonly channel: string
  /**
   * True for a caller that acts for the owner as a whole (a person at their
   * own terminal): it may read and list the owner's resources of every
   * channel; acting on one bound to a channel (a job's stdin, a signal)
   * still needs that channel.
   */
  readonly readsEveryChannel?: boolean | undefined
}

/** What a caller may ask to do. */
export type Action = "read" | "list" | "poll" | "wait" | "stdin" | "signal" | "cancel" | "delete"

/** What the check and the authorizer see of a resource. */
export interface Resource {
  readonly kind: ResourceKind
  /** Its name, pid or id, as the caller would name it. */
  readonly id: string
  readonly owner: string
  readonly channel: string
  /** True when only the channel it came from may reach it (jobs, agents); otherwise any channel of the owner. */
  readonly channelBound: boolean
  /** The tool that made it, when there is one. */
  readonly tool?: string | undefined
  /** Epoch milliseconds after which it is gone, or null when it does not expire. */
  readonly expiresAt?: number | null | undefined
}

/** True when the caller owns the resource (and, for one bound to its channel, acts from that channel). */
export const owns = (caller: Caller, resource: Resource): boolean =>
  caller.owner === resource.owner && (!resource.channelBound || caller.channel === resource.channel)

/** True for what a caller that reads every channel of its owner may do outside its own. */
const isReading = (action: Action): boolean => action === "read" || action === "list"

/** True when the caller may take `action` on the resource by ownership: `owns`, or an owner's read of any channel for a caller that reads every channel. */
export const mayAct = (caller: Caller, resource: Resource, action: Action): boolean =>
  owns(caller, resource) || (caller.readsEveryChannel === true && caller.owner === resource.owner && isReading(action))

/** True when the resource has expired at `now` (epoch ms). */
export const expired = (resource: Resource, now: number): boolean =>
  resource.expiresAt !== undefined && resource.expiresAt !== null && now >= resource.expiresAt

/** What kind of resource a body is, by its profile. */
export const kindOf = (manifest: Pick<Manifest, "profile">): ResourceKind =>
  manifest.profile === "spool" ? "job" : manifest.profile === "agent" ? "agent" : manifest.profile === "scratch" ? "scratch" : "output"

/** A body as the check sees it, named by its id. */
export const resourceOf = (
  manifest: Pick<Manifest, "profile" | "id" | "owner" | "channel" | "channelBound" | "tool" | "expiresAt">
): Resource => ({
  kind: kindOf(manifest),
  id: manifest.id,
  owner: manifest.owner,
  channel: manifest.channel,
  channelBound: manifest.channelBound,
  tool: manifest.tool,
  expiresAt: manifest.expiresAt
})
