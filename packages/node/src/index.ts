/**
 * @spillway/node: Node layers for Spillway.
 *
 * @since 0.1.0
 */

/** The spill profile on the real file system. */
export * as NodeSpill from "./NodeSpill.js"
/** Masking on a worker thread, for streams long enough to want a second core. */
export * as NodeSecrets from "./NodeSecrets.js"
/** Runs a child process and hands its merged output on in batches. */
export * as ChildPipes from "./ChildPipes.js"
export * as NodeChild from "./NodeChild.js"
/** The tools wired for a host on Node in one layer: handlers, one store, the directory's cursor key, hints in the tools' names. */
export * as NodeTools from "./NodeTools.js"
/** The MCP server wired for Node: every profile over one body store in one directory. */
export * as NodeMcp from "./NodeMcp.js"
/** The body store on Node: bytes, SQL manifests, one quota. */
export * as NodeBodies from "./NodeBodies.js"
/** The bytes of bodies on the real file system. */
export * as NodeBodyFiles from "./NodeBodyFiles.js"
/** The manifests of bodies in SQLite or PostgreSQL. */
export * as SqlManifests from "./SqlManifests.js"
/** The rows manifests live in, as plain data: columns, the lookup by id, the facts a read needs. */
export * as ManifestRows from "./ManifestRows.js"
/** The evidence profile on Node: spill-directory bodies, SQLite manifests, a persistent cursor key. */
export * as NodeEvidence from "./NodeEvidence.js"
/** Process jobs on Node: the command executor, spools and records in the retention directory. */
export * as NodeProcess from "./NodeProcess.js"
/** SQLite or PostgreSQL for manifests, chosen by a location. */
export * as SqlBackend from "./SqlBackend.js"
/** Pattern scans on worker threads, each ended at its deadline. */
export * as NodePattern from "./NodePattern.js"
/** The web view served on Node, over the directory's stores, read capabilities only. */
export * as NodeWeb from "./NodeWeb.js"
/** Spillway for programs without Effect: one runtime over the Node layers, async methods. */
export * as Spillway from "./Spillway.js"
