/**
 * Where the bytes of bodies live, by name: in memory here, on the real file
 * system in `@spillway/node`. A new body is written under a name no other
 * body has, and either published whole at `commit` (nothing visible under
 * its name before) or visible as it grows (a running job's spool). Names
 * are checked before any other step (see `Body.checkName`), and a body is
 * never replaced.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { concat } from "./internal/bytes.js"
import { InvalidRequest, NotFound, quote, StoreFailed } from "./Errors.js"
import * as SpillName from "./SpillName.js"

/** A body opened for reading. */
export interface File {
  readonly name: string
  /** Bytes in the body when it was opened. */
  readonly size: number
  /**
   * Up to `length` bytes at `position`, fewer only at the end; into `into`
   * (from its start) when given, so a reader can reuse one buffer. A body
   * still growing is read up to where it has reached.
   */
  readonly read: (position: number, length: number, into?: Uint8Array) => Effect.Effect<Uint8Array, StoreFailed>
}

/** A body being written. */
export interface Sink {
  readonly name: string
  /** Writes the bytes next. They are lent until the effect completes (the writer uses their memory again after it): a sink copies what it keeps. */
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, StoreFailed>
  /** Publishes the body under its name, never replacing one (for a visible body: makes what was written durable). */
  readonly commit: Effect.Effect<void, StoreFailed>
}

/** How a new body becomes readable. */
export type Visibility = "on-commit" | "while-writing"

/** The store of bodies' bytes. */
export interface Service {
  /** Where the bytes live, for people (a directory); a model only ever sees names. */
  readonly location: string
  /**
   * Starts a body under a fresh name. Closing the scope before `commit`
   * removes everything written: a half-written body is never left behind.
   */
  readonly create: (name: string, visibility: Visibility) => Effect.Effect<Sink, StoreFailed | InvalidRequest, Scope.Scope>
  readonly open: (name: string) => Effect.Effect<File, NotFound | InvalidRequest | StoreFailed, Scope.Scope>
  /** Removes a body; one that is not there is not an error. */
  readonly remove: (name: string) => Effect.Effect<void, StoreFailed | InvalidRequest>
  /** Removes what writers that are gone left half-written (a crash mid-write); returns how many bytes were freed. */
  readonly sweepDebris: Effect.Effect<number, StoreFailed>
}

/** The store of bodies' bytes. */
export class BodyFiles extends Context.Tag("@spillway/core/BodyFiles")<BodyFiles, Service>() {}

/**
 * Why a body name is refused, or undefined when it is fine: a bare file name
 * (see `SpillName.checkFilename`), or a relative path of such names with
 * `/` between them (scratch captures keep theirs under a conversation's folder).
 */
export const nameProblem = (name: string): string | undefined => {
  if (typeof name !== "string" || name.length === 0) return "the name is empty"
  if (name.length > 1024) return "the name is longer than 1024 characters"
  for (const part of name.split("/")) {
    const problem = SpillName.checkFilename(part)
    if (problem !== undefined) return part === "" ? "the path has an empty part" : problem
  }
  return undefined
}

/** The refusal of a name `nameProblem` finds fault with. */
export const refuseName = (name: string, problem: string) =>
  new InvalidRequest({
    argument: "name",
    reason: `refused ${quote(name)}: ${problem}; pass the bare name from a preview or listing, such as 2026-09-04T01-02-03-000Z-a1b2c3.log`
  })

/** Bodies in memory, for tests and hosts that keep nothing on disk. */
export const layerMemory: Layer.Layer<BodyFiles> = Layer.sync(BodyFiles, () => {
  const published = new Map<string, Array<Uint8Array>>()
  const writing = new Set<string>()
  const bytesOf = (parts: ReadonlyArray<Uint8Array>) => concat(parts.length === 0 ? [new Uint8Array(0)] : parts)
  const check = (name: string) => {
    const problem = nameProblem(name)
    return problem === undefined ? Effect.void : Effect.fail(refuseName(name, problem))
  }
  const service: Service = {
    location: "memory",
    create: (name, visibility) =>
      Effect.gen(function*() {
        yield* check(name)
        if (published.has(name) || writing.has(name)) {
          return yield* new StoreFailed({ operation: `create ${name}`, reason: "a body with that name exists; bodies are never replaced" })
        }
        const parts: Array<Uint8Array> = []
        writing.add(name)
        if (visibility === "while-writing") published.set(name, parts)
        let committed = false
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            writing.delete(name)
            if (!committed) published.delete(name)
          })
        )
        return {
          name,
          write: (bytes) => Effect.sync(() => void parts.push(Uint8Array.from(bytes))),
          commit: Effect.sync(() => {
            committed = true
            writing.delete(name)
            published.set(name, parts)
          })
        } satisfies Sink
      }),
    open: (name) =>
      Effect.gen(function*() {
        yield* check(name)
        const parts = published.get(name)
        if (parts === undefined) return yield* new NotFound({ resource: "output", id: name })
        const size = parts.reduce((n, p) => n + p.length, 0)
        return {
          name,
          size,
          read: (position, length, into) =>
            Effect.sync(() => {
              const all = bytesOf(parts)
              const part = all.subarray(Math.min(position, all.length), Math.min(all.length, position + length))
              if (into === undefined) return Uint8Array.from(part)
              const n = Math.min(part.length, into.length)
              into.set(part.subarray(0, n))
              return into.subarray(0, n)
            })
        } satisfies File
      }),
    remove: (name) => Effect.zipRight(check(name), Effect.sync(() => void published.delete(name))),
    sweepDebris: Effect.succeed(0)
  }
  return service
})
