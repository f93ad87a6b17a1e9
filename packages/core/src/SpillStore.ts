/**
 * The directory saved output lives in, as a service: creating a new file
 * that is published whole or not at all, and opening a saved file by name
 * after checking that it is a plain file of ours. The spill profile's
 * read and write capabilities are built on it; `@spillway/node` provides the
 * real file system implementation.
 *
 * @since 0.1.0
 */
import { Context, type Effect, Schema, type Scope } from "effect"
import type * as LineIndex from "./LineIndex.js"

/** A file name was refused before any file system call. */
export class SpillNameRefused extends Schema.TaggedError<SpillNameRefused>()("SpillNameRefused", {
  filename: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `refused file name ${JSON.stringify(this.filename)}: ${this.reason}. Pass the bare file name from the preview, such as 2026-09-04T01-02-03-000Z-a1b2c3.log.`
  }
}

/** No saved file has that name. */
export class SpillNotFound extends Schema.TaggedError<SpillNotFound>()("SpillNotFound", {
  filename: Schema.String
}) {
  override get message() {
    return `no saved output named ${this.filename}; check the name in the preview (saved files may have been cleaned up).`
  }
}

/** A file with that name exists but is not one Spillway would read: a link, a FIFO, a device, or someone else's. */
export class SpillFileRefused extends Schema.TaggedError<SpillFileRefused>()("SpillFileRefused", {
  filename: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `refused to read ${this.filename}: ${this.reason}. Only regular files written by Spillway are read.`
  }
}

/** The file system failed. */
export class SpillIoError extends Schema.TaggedError<SpillIoError>()("SpillIoError", {
  operation: Schema.String,
  filename: Schema.optional(Schema.String),
  reason: Schema.String
}) {
  override get message() {
    return `${this.operation}${this.filename !== undefined ? ` ${this.filename}` : ""} failed: ${this.reason}`
  }
}

/** Everything opening a saved file can fail with. */
export type OpenError = SpillNameRefused | SpillNotFound | SpillFileRefused | SpillIoError

/** A saved file, opened and checked. */
export interface SpillFile {
  readonly filename: string
  /** Byte length of the body. */
  readonly size: number
  /**
   * Reads up to `length` bytes at `position`, fewer only at the end of the
   * body; into `into` (from its start) when given, so a caller can reuse one buffer.
   */
  readonly read: (position: number, length: number, into?: Uint8Array) => Effect.Effect<Uint8Array, SpillIoError>
  /** The index saved beside the body, when there is one that matches it. */
  readonly index: Effect.Effect<LineIndex.LineIndex | undefined>
}

/** A new file being written; nothing is visible under its name until `commit`. */
export interface SpillSink {
  /** The name the file is published under. */
  readonly filename: string
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, SpillIoError>
  /** Publishes the body and its index under `filename`, never replacing an existing file. */
  readonly commit: (index: LineIndex.LineIndex) => Effect.Effect<void, SpillIoError>
}

/** The spill directory. */
export interface Service {
  /** Where saved files live, for people; models only ever see file names. */
  readonly directory: string
  /**
   * Starts a new file named `filename` (see `makeFilename`). Closing the scope
   * without `commit` removes everything written.
   */
  readonly create: (filename: string) => Effect.Effect<SpillSink, SpillIoError, Scope.Scope>
  /** Opens a saved file after checking its name (see `checkFilename`) and what it is. */
  readonly open: (filename: string) => Effect.Effect<SpillFile, OpenError, Scope.Scope>
  /** Removes a saved file and its index (for expiry sweeps); a missing file is not an error. */
  readonly remove: (filename: string) => Effect.Effect<void, SpillNameRefused | SpillIoError>
}

/** The spill directory service. */
export class SpillStore extends Context.Tag("@spillway/core/SpillStore")<SpillStore, Service>() {}

/** Name checks and fresh names, kept in a module of their own so small programs can use them alone. */
export { checkFilename, makeFilename, MAX_NAME_BYTES, randomFraction } from "./SpillName.js"
