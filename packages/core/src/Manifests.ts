/**
 * The manifest of every kept body, one schema for every profile: who owns
 * it and from which channel, which tool made it and how that ended, when it
 * was made and when it expires, its byte, code-point and line counts with
 * their checkpoints, whether it is whole, and what it came from (a tool, a
 * search, a job, an agent). The store is a service: in memory here, SQLite
 * or PostgreSQL in `@spillway/node`, each decoding what it reads with this
 * schema.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import { StoreFailed } from "./Errors.js"

/** A code-point offset and the byte offset where that code point starts. */
export const Checkpoint = Schema.Struct({ codePoint: Schema.Number, byte: Schema.Number })

/** A code-point offset and the byte offset where that code point starts. */
export type Checkpoint = typeof Checkpoint.Type

/**
 * An array of numbers, checked in one pass and kept as it is: a large
 * body's checkpoints number tens of thousands, and checking them element by
 * element made every read of its manifest allocate megabytes.
 */
const Numbers = Schema.declare(
  (u: unknown): u is ReadonlyArray<number> => Array.isArray(u) && u.every((n) => typeof n === "number"),
  { identifier: "Numbers", description: "an array of numbers" }
)

/** Checkpoints checked in one pass and kept as they are, like `Numbers`. */
const Checkpoints = Schema.declare(
  (u: unknown): u is ReadonlyArray<Checkpoint> =>
    Array.isArray(u) &&
    u.every((c) => typeof c === "object" && c !== null && typeof c.codePoint === "number" && typeof c.byte === "number"),
  { identifier: "Checkpoints", description: "an array of { codePoint, byte }" }
)

/** Byte offsets of every `every`-th line start: `starts[k]` is where line `k * every + 1` starts. */
export const LineCheckpoints = Schema.Struct({ every: Schema.Number, starts: Numbers })

/** Byte offsets of every `every`-th line start. */
export type LineCheckpoints = typeof LineCheckpoints.Type

/** Output of a tool call or a command run in the foreground. */
export const ToolOrigin = Schema.TaggedStruct("Tool", {
  /** The command or the tool's arguments as shown to people, secrets masked; absent in manifests written before it was recorded. */
  command: Schema.optional(Schema.String)
})

/** A search tool's matches, kept as a ranked snapshot (a JSON body). */
export const SearchOrigin = Schema.TaggedStruct("Search", {})

/** A background job's spool: the facts of the job beside its output. */
export const JobOrigin = Schema.TaggedStruct("Job", {
  pid: Schema.Number,
  /** Random, so a later job that gets the same pid is told apart. */
  generation: Schema.String,
  /** The command as shown to people, secrets masked. */
  command: Schema.String,
  /** Epoch ms of the observed exit; null while running or when the exit was never seen. */
  exitedAt: Schema.NullOr(Schema.Number),
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  /** What tells the job's process from a later one with its pid (`Child.Running.startMark`), when the runner could tell. */
  startMark: Schema.optionalWith(Schema.String, { exact: true })
})

/** The newest output of a job whose output passed its head's limit: the window kept past the dropped middle. */
export const JobTailOrigin = Schema.TaggedStruct("JobTail", {
  /** The job's head body. */
  of: Schema.String,
  /** Where in the job's output the window starts: a byte offset, and the 1-based line that starts there. */
  fromByte: Schema.Number,
  fromLine: Schema.Number,
  /** Whether `fromByte` starts its line (else the head's limit cut that line). */
  lineStart: Schema.Boolean,
  /** Line breaks in the head: as many as its lines when it ends at a break. */
  headNewlines: Schema.Number
})

/** A finished agent's result or error body. */
export const AgentOrigin = Schema.TaggedStruct("Agent", {
  name: Schema.String,
  status: Schema.Literal("completed", "failed", "expired"),
  kind: Schema.Literal("result", "error"),
  reason: Schema.NullOr(Schema.String),
  iterations: Schema.Number,
  tools: Schema.Array(Schema.Struct({ name: Schema.String, calls: Schema.Number }))
})

/** What a body came from. */
export const Origin = Schema.Union(ToolOrigin, SearchOrigin, JobOrigin, JobTailOrigin, AgentOrigin)

/** What a body came from. */
export type Origin = typeof Origin.Type

/** The manifest of one body. */
export const Manifest = Schema.Struct({
  /** The body's name in its store: a file name, or for scratch captures a relative path. */
  id: Schema.String,
  /** The profile, which is also its retention pool: spill, evidence, spool, scratch, agent. */
  profile: Schema.String,
  owner: Schema.String,
  channel: Schema.String,
  /** True when only its channel may reach it (jobs, agents). */
  channelBound: Schema.Boolean,
  tool: Schema.String,
  /** How the operation ended, kept apart from the body: "exit 1", "ok", "running"... */
  status: Schema.String,
  /** "writing" while a visible body grows (a running job's spool); "complete" once sealed, after which it never changes. */
  state: Schema.Literal("writing", "complete"),
  createdAt: Schema.Number,
  /** Epoch ms; null while a job runs, or for a profile that keeps bodies until removed. Reads never move it. */
  expiresAt: Schema.NullOr(Schema.Number),
  /** Bytes of the kept (masked) body. */
  bytes: Schema.Number,
  /** Code points of the kept body, malformed bytes counting as U+FFFD does. */
  codePoints: Schema.Number,
  lines: Schema.Number,
  /** Bytes the source produced, kept or not. */
  sourceBytes: Schema.Number,
  /** "whole" when the body holds everything the source produced, "head" when only its start. */
  kept: Schema.Literal("whole", "head"),
  /** Why capture stopped early (a quota, a failed write), when it did. */
  captureError: Schema.NullOr(Schema.String),
  checkpoints: Checkpoints,
  lineIndex: LineCheckpoints,
  origin: Origin
})

/** The manifest of one body. */
export type Manifest = typeof Manifest.Type

/** Which manifests a listing wants; every field left out matches all. */
export interface Filter {
  readonly profile?: string | undefined
  readonly owner?: string | undefined
  /** Only manifests older than this one (by `createdAt`, then `id`), for pages newest first. */
  readonly before?: { readonly createdAt: number; readonly id: string } | undefined
  /** Only manifests whose id, tool, status or origin contains this text, ignoring ASCII case. */
  readonly text?: string | undefined
  /** At most this many, newest first; every match, oldest first, when absent. */
  readonly limit?: number | undefined
}

/** True when a manifest passes a filter's `before` and `text`; the memory store's check, and a store's reference. */
export const matches = (m: Manifest, filter: Filter): boolean => {
  const b = filter.before
  if (b !== undefined && !(m.createdAt < b.createdAt || (m.createdAt === b.createdAt && m.id < b.id))) return false
  if (filter.text === undefined || filter.text === "") return true
  const t = filter.text.toLowerCase()
  return [m.id, m.tool, m.status, JSON.stringify(m.origin)].some((f) => f.toLowerCase().includes(t))
}

/** Where manifests are kept. */
export interface Service {
  /** Records a new manifest; an id that exists already is refused, never replaced. */
  readonly insert: (manifest: Manifest) => Effect.Effect<void, StoreFailed>
  /** Replaces the manifest of a body still being written; a complete manifest is never changed. */
  readonly update: (manifest: Manifest) => Effect.Effect<void, StoreFailed>
  readonly get: (id: string) => Effect.Effect<Manifest | undefined, StoreFailed>
  /** Manifests matching a filter: oldest first, or with `limit` the newest first. */
  readonly list: (filter?: Filter) => Effect.Effect<ReadonlyArray<Manifest>, StoreFailed>
  /** Removes and returns the manifests expired at `now`, so their bodies can be removed too. */
  readonly takeExpired: (now: number) => Effect.Effect<ReadonlyArray<Manifest>, StoreFailed>
  readonly remove: (id: string) => Effect.Effect<void, StoreFailed>
}

/** The manifest store. */
export class Manifests extends Context.Tag("@spillway/core/Manifests")<Manifests, Service>() {}

const failed = (operation: string, reason: string) => new StoreFailed({ operation: `manifest ${operation}`, reason })

/** Manifests in memory, for tests and hosts that need no durability. */
export const layerMemory: Layer.Layer<Manifests> = Layer.sync(Manifests, () => {
  const rows = new Map<string, Manifest>()
  const byAge = (a: Manifest, b: Manifest) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)
  return {
    insert: (m) =>
      rows.has(m.id)
        ? Effect.fail(failed("insert", `a manifest with id ${m.id} exists; manifests are never replaced`))
        : Effect.sync(() => void rows.set(m.id, m)),
    update: (m) =>
      Effect.suspend(() => {
        const old = rows.get(m.id)
        if (old === undefined) return Effect.fail(failed("update", `no manifest with id ${m.id}`))
        if (old.state === "complete") return Effect.fail(failed("update", `${m.id} is complete and never changes`))
        rows.set(m.id, m)
        return Effect.void
      }),
    get: (id) => Effect.sync(() => rows.get(id)),
    list: (filter = {}) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((m) =>
            (filter.profile === undefined || m.profile === filter.profile) && (filter.owner === undefined || m.owner === filter.owner) &&
            matches(m, filter)
          )
          .sort(byAge)
      ).pipe(Effect.map((all) => filter.limit === undefined ? all : all.reverse().slice(0, filter.limit))),
    takeExpired: (now) =>
      Effect.sync(() => {
        const expired = [...rows.values()].filter((m) => m.expiresAt !== null && m.expiresAt <= now).sort(byAge)
        for (const m of expired) rows.delete(m.id)
        return expired
      }),
    remove: (id) => Effect.sync(() => void rows.delete(id))
  }
})
