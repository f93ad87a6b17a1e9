/**
 * The rows of `spillway_bodies`, the table manifests live in, as plain
 * data: its columns, the statement that finds one body's row, and the facts
 * a read needs of a row (who owns it, whether it is complete, its size, its
 * line index), checked without Effect. `SqlManifests` reads and writes the
 * same columns; `spillway read`'s quick path, a program too small to load
 * Effect, finds a row with the same statement and hands its facts to
 * `Permission`, as `Body.open` does.
 *
 * @since 0.1.0
 */
import type { LineIndex } from "@spillway/core"
// the module alone, not the package's index: a small program that reads a row loads no more than it needs
import * as Permission from "@spillway/core/Permission"

/** The table's columns, in the order every statement names them. */
export const COLUMNS = [
  "id",
  "profile",
  "owner",
  "channel",
  "channel_bound",
  "tool",
  "status",
  "state",
  "created_at",
  "expires_at",
  "bytes",
  "code_points",
  "lines",
  "source_bytes",
  "kept",
  "capture_error",
  "checkpoints",
  "line_index",
  "origin"
] as const

/** The statement that finds one body's row by its id (one `?` parameter). */
export const SELECT_BY_ID = `SELECT ${COLUMNS.join(", ")} FROM spillway_bodies WHERE id = ?`

/** What a read needs of a complete body's row. */
export interface ReadFacts {
  /** The body as the access check sees it. */
  readonly resource: Permission.Resource
  readonly complete: boolean
  readonly bytes: number
  /** Its line index, for a body of `bytes` bytes. */
  readonly lineIndex: LineIndex.LineIndex
}

const integer = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isSafeInteger(u) ? u : typeof u === "bigint" ? Number(u) : undefined

/** The read facts of a row, or undefined for a row this store could not have written. */
export const readFacts = (row: Record<string, unknown> | undefined): ReadFacts | undefined => {
  if (row === undefined) return undefined
  const { channel, id, owner, profile, state, tool } = row
  const bytes = integer(row.bytes)
  const lines = integer(row.lines)
  const bound = integer(row.channel_bound)
  const expiresAt = row.expires_at === null ? null : integer(row.expires_at)
  if (
    typeof id !== "string" || typeof profile !== "string" || typeof owner !== "string" || typeof channel !== "string" ||
    typeof tool !== "string" || typeof state !== "string" || bytes === undefined || lines === undefined ||
    bound === undefined || expiresAt === undefined || typeof row.line_index !== "string"
  ) return undefined
  let index: { every?: unknown; starts?: unknown }
  try {
    index = JSON.parse(row.line_index) as typeof index
  } catch {
    return undefined
  }
  if (typeof index.every !== "number" || !Array.isArray(index.starts) || !index.starts.every((n) => typeof n === "number")) return undefined
  return {
    resource: Permission.resourceOf({ profile, id, owner, channel, channelBound: bound !== 0, tool, expiresAt }),
    complete: state === "complete",
    bytes,
    lineIndex: { bytes, lines, every: index.every, checkpoints: index.starts as Array<number> }
  }
}
