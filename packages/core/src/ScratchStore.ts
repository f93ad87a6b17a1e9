/**
 * The scratch store: files of captured tool output under one root shared by
 * every conversation on the device, at paths a path factory makes
 * (`<conversation>/outputs/<tool-name>-<uuid>.txt`). Files are created
 * exclusively (a collision is never overwritten), inside the root (no `..`,
 * no absolute path, no symbolic link on the way), within quotas: 8 MiB per
 * file, and 64 MiB or 512 entries in all. Deleting or forking a
 * conversation neither deletes nor copies its files: they belong to the
 * device, and nothing here ties them to a conversation's lifetime.
 *
 * @since 0.1.0
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"

/** The store's quotas; every figure defaults to the source design's. */
export interface Quotas {
  /** Most bytes in one file. 8 MiB by default. */
  readonly maxFileBytes: number
  /** Most bytes in all files. 64 MiB by default. */
  readonly maxTotalBytes: number
  /** Most files in all. 512 by default. */
  readonly maxEntries: number
}

/** The source design's quotas. */
export const defaultQuotas: Quotas = {
  maxFileBytes: 8 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  maxEntries: 512
}

/** A scratch operation failed: a refused path, a spent quota, or an I/O error. */
export class ScratchError extends Schema.TaggedError<ScratchError>()("ScratchError", {
  reason: Schema.Literal("path", "exists", "quota", "io"),
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `scratch file ${this.path}: ${this.detail}`
  }
}

/** One file being written. */
export interface ScratchFile {
  /** The scratch-relative path. */
  readonly path: string
  /** Appends bytes; fails (and writes nothing) when they would pass a quota. */
  readonly append: (bytes: Uint8Array) => Effect.Effect<void, ScratchError>
  /** Bytes in the file so far. */
  readonly size: () => number
}

/** The store. */
export interface Service {
  /** Creates a file at a scratch-relative path, with its parent directories; never replaces one. */
  readonly create: (path: string) => Effect.Effect<ScratchFile, ScratchError>
  /** Reads a file whole. */
  readonly read: (path: string) => Effect.Effect<Uint8Array, ScratchError>
  /** Bytes and entries in use. */
  readonly usage: Effect.Effect<{ readonly bytes: number; readonly entries: number }>
}

/** The scratch store service. */
export class ScratchStore extends Context.Tag("@spillway/core/ScratchStore")<ScratchStore, Service>() {}

/**
 * The path of a new capture: `<owner>/outputs/<tool-name>-<uuid>.txt`, where
 * the owner is the conversation's id, or the run's when there is none, and
 * the tool name's underscores become hyphens.
 */
export const pathFor = (tool: string, owner: { readonly conversationId?: string | undefined; readonly runId: string }, uuid: string = globalThis.crypto.randomUUID()): string =>
  `${owner.conversationId ?? owner.runId}/outputs/${tool.replace(/_/g, "-")}-${uuid}.txt`

/**
 * Why a scratch-relative path is refused, or undefined when it is fine:
 * it must be relative, without empty, `.` or `..` parts, NUL or backslashes.
 */
export const pathProblem = (path: string): string | undefined => {
  if (path.length === 0) return "the path is empty"
  if (path.startsWith("/")) return "the path must be relative to the scratch root"
  if (path.includes("\0") || path.includes("\\")) return "the path holds a NUL or a backslash"
  for (const part of path.split("/")) {
    if (part === "" || part === "." || part === "..") return "the path has an empty, '.' or '..' part"
  }
  return undefined
}
