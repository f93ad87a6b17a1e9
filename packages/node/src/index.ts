/**
 * @spillway/node: Node layers for Spillway.
 *
 * @since 0.1.0
 */

/** The spill profile on the real file system. */
export * as NodeSpill from "./NodeSpill.js"
/** The spill directory on the real file system. */
export * as NodeSpillStore from "./NodeSpillStore.js"
/** Masking on a worker thread, for streams long enough to want a second core. */
export * as NodeSecrets from "./NodeSecrets.js"
/** Runs a child process and hands its merged output on in batches. */
export * as NodeChild from "./NodeChild.js"
/** Manifests in any SQL database, SQLite by default. */
export * as SqlManifestStore from "./SqlManifestStore.js"
/** The evidence profile on Node: spill-directory bodies, SQLite manifests, a persistent cursor key. */
export * as NodeEvidence from "./NodeEvidence.js"
/** Process jobs on Node: the command executor, spools and records in the retention directory. */
export * as NodeProcess from "./NodeProcess.js"
/** Job records in any SQL database, SQLite by default. */
export * as SqlProcessManifests from "./SqlProcessManifests.js"
/** The scratch store on the real file system. */
export * as NodeScratchStore from "./NodeScratchStore.js"
/** SQLite or PostgreSQL for manifests, chosen by a location. */
export * as SqlBackend from "./SqlBackend.js"
