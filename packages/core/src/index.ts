/**
 * @spillway/core: text and budget primitives, secret masking, and the spill
 * profile's capabilities.
 *
 * @since 0.1.0
 */

/** Running child processes: one runner for every caller, as a service. */
export * as Child from "./Child.js"
/** Who may do what to kept output: the caller, the authorizer and the one check. */
export * as Access from "./Access.js"
/** The pure part of the access check: ownership and expiry, with no Effect. */
export * as Permission from "./Permission.js"
/** Kept output, one way for every profile: masked bodies with one manifest, read through one access check. */
export * as Body from "./Body.js"
/** Where the bytes of bodies live, by name. */
export * as BodyFiles from "./BodyFiles.js"
/** The errors every view and store shares. */
export * as Errors from "./Errors.js"
/** The manifest of every kept body, and where manifests are kept. */
export * as Manifests from "./Manifests.js"
/** How much kept output may exist and for how long: pools, reservations, time to live. */
export * as Retention from "./Retention.js"
/** Signed, versioned, opaque continuation cursors. */
export * as Cursor from "./Cursor.js"
/** Retained tool output behind cursors: retain, getToolOutput, sweep. */
export * as Evidence from "./Evidence.js"
/** Fitting a result to a delivery budget, envelope and all. */
export * as Envelope from "./Envelope.js"
/** What one tool call delivers (text for a model, facts for programs) and how the budget counts it. */
export * as Delivery from "./Delivery.js"
/** Pages of a ranked search snapshot within a budget. */
export * as SearchPage from "./SearchPage.js"
/** Emergency compression of results already in context. */
export * as Compress from "./Compress.js"
/** The block scan every pattern engine runs, in linear time. */
export * as BlockScan from "./BlockScan.js"
/** Grep patterns a model may write, run in linear time. */
export * as Grep from "./Grep.js"
/** Sparse line indexes kept beside saved bodies. */
export * as LineIndex from "./LineIndex.js"
/** Buffers used over and over for bytes in transit, lent out as views. */
export * as Slabs from "./Slabs.js"
/** The `[Showing lines ...]` markers. */
export * as Marker from "./Marker.js"
/** The preview that replaces a long command output. */
export * as Preview from "./Preview.js"
/** Whole-line head, tail and middle cuts with an exact account. */
export * as Projection from "./Projection.js"
/** Process jobs: spawn, spool, poll without consuming, wait, signal. */
export * as Process from "./Process.js"
/** The status view and byte pages of a job's output. */
export * as ProcessView from "./ProcessView.js"
/** Lines that explain a failure, found anywhere in an output. */
export * as Salience from "./Salience.js"
/** Terminal output read without a terminal: escapes removed, carriage-return redraws in their final state. */
export * as Terminal from "./Terminal.js"
/** The scratch profile: per-tool policies, projection onto the model ceiling, captures kept as bodies, display folding. */
export * as ToolOutput from "./ToolOutput.js"
/** Masking of credentials and registered secret values. */
export * as Secrets from "./Secrets.js"
/** Failures as words for a wire: bounded, paths hidden, masked. */
export * as ErrorText from "./ErrorText.js"
/** The masking engine without Effect, for a worker thread. */
export * as MaskEngine from "./MaskEngine.js"
/** The spill profile: keepOutput, readSpill, grepSpill and their capabilities. */
export * as Spill from "./Spill.js"
/** The policy hook every spill operation passes. */
export * as SpillPolicy from "./SpillPolicy.js"
/** Names of saved files: the allowlist and fresh names. */
export * as SpillName from "./SpillName.js"
/** UTF-8 accounting. */
export * as Utf8 from "./Utf8.js"
