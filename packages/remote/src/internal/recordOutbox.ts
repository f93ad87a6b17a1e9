/**
 * What a controller observed while its record store did not answer: the
 * exits of jobs and the addresses of hosts, kept here (at most
 * `MAX_PENDING` exits, the oldest given up first: such a job is still
 * recorded as running, and the next view of its end records it) and
 * written once the store answers again.
 */
import type { Errors } from "@spillway/core"
import { Effect } from "effect"
import type * as RemoteRecords from "../RemoteRecords.js"

/** The most exits kept for a store that does not answer. */
export const MAX_PENDING = 10_000

/** A controller's outbox of records not yet written. */
export interface Outbox {
  /** Records a job's end over its record (a removed record stays removed); kept for later when the store does not take it. */
  readonly exit: (record: RemoteRecords.RemoteRecord) => Effect.Effect<void>
  /** Notes a host's address; kept for later when the store does not take it. */
  readonly address: (host: string, address: string, seenAt: number) => Effect.Effect<void>
  /** Writes what was kept, in order, stopping at the first the store refuses. */
  readonly flush: Effect.Effect<void>
  /** Gives up a kept exit: its record was removed. */
  readonly forget: (generation: string) => void
  /** How many records are kept. */
  readonly size: () => number
}

/** An outbox over a record store. */
export const make = (records: RemoteRecords.Service): Outbox => {
  const exits = new Map<string, RemoteRecords.RemoteRecord>()
  let addressNote: { readonly host: string; readonly address: string; readonly seenAt: number } | undefined
  let flushing = false
  const keep = (r: RemoteRecords.RemoteRecord) => {
    exits.delete(r.generation)
    exits.set(r.generation, r)
    if (exits.size > MAX_PENDING) exits.delete(exits.keys().next().value!)
  }
  const writeExits: Effect.Effect<void, Errors.StoreFailed> = Effect.gen(function*() {
    for (const r of [...exits.values()]) {
      yield* records.update(r)
      if (exits.get(r.generation) === r) exits.delete(r.generation)
    }
  })
  const writeAddress: Effect.Effect<void, Errors.StoreFailed> = Effect.suspend(() => {
    const note = addressNote
    if (note === undefined) return Effect.void
    return Effect.tap(records.noteAddress(note.host, note.address, note.seenAt), () =>
      Effect.sync(() => {
        if (addressNote === note) addressNote = undefined
      }))
  })
  const flush = Effect.suspend(() => {
    if (flushing || (exits.size === 0 && addressNote === undefined)) return Effect.void
    flushing = true
    return Effect.ignore(Effect.zipRight(writeExits, writeAddress)).pipe(Effect.ensuring(Effect.sync(() => void (flushing = false))))
  })
  return {
    exit: (r) =>
      Effect.zipRight(
        Effect.sync(() => keep(r)),
        flush
      ),
    address: (host, address, seenAt) => Effect.zipRight(Effect.sync(() => void (addressNote = { host, address, seenAt })), flush),
    flush,
    forget: (generation) => void exits.delete(generation),
    size: () => exits.size + (addressNote !== undefined ? 1 : 0)
  }
}
