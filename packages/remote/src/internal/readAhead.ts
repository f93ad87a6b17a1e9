/**
 * Reading ahead through a lease. A reader that pages a finished job's output
 * cursor after cursor, coming back for the next page within `millis`, gets
 * the following pages in the same call: one more page the second time, then
 * three, then up to `pages - 1`, each served from memory for at most `millis`
 * after it arrived. A reader that comes back later (a model between two tool
 * calls) makes one call per page, as without it. Pages of a job still running
 * are never kept: its next page may still change. A host that does not know
 * the call for several pages (one from before it) is read one page at a time.
 *
 * @internal
 */
import type { ProcessView } from "@spillway/core"
import { Clock, Effect } from "effect"

/** How far a controller reads ahead. */
export interface Options {
  /** Most pages one call to the host returns (1: no reading ahead). */
  readonly pages: number
  /** How long a page read ahead is kept, and how soon a reader must come back for the next page to count as reading in a row. */
  readonly millis: number
}

/** Where a read starts: the job, the page size and the cursor. */
export interface At {
  readonly pid: number
  readonly generation: string | undefined
  readonly limit: number | null | undefined
  readonly cursor: string
}

/** The reads a controller makes: `one` page, or `many` in a row from the cursor. */
export type Read<E> = (
  at: At,
  one: Effect.Effect<ProcessView.PollResult, E>,
  many: (count: number) => Effect.Effect<ReadonlyArray<ProcessView.Page>, E>
) => Effect.Effect<ProcessView.PollResult, E>

/** A reader's place: the cursor it will ask for next if it reads on, until when that counts, and how many pages its last call asked for. */
interface Reader {
  readonly next: string | undefined
  readonly until: number
  readonly window: number
}

/** Pages kept at once, whatever the number of jobs read. */
const MAX_KEPT = 64

const keyOf = (pid: number, generation: string | undefined, limit: number | null | undefined, cursor: string): string =>
  JSON.stringify([pid, generation ?? null, limit ?? null, cursor])

const nextOf = (view: ProcessView.PollResult): string | undefined =>
  view._tag === "Page" && view.truncated ? view.next_cursor : undefined

/** @internal */
export const make = <E>(options: Options): Read<E> => {
  const kept = new Map<string, { readonly page: ProcessView.Page; readonly until: number }>()
  const readers = new Map<string, Reader>()
  let hostReadsAhead = true
  const prune = (now: number) => {
    for (const [key, entry] of kept) if (entry.until <= now) kept.delete(key)
    for (const [key, reader] of readers) if (reader.until <= now) readers.delete(key)
    // the oldest first: a Map iterates in insertion order
    for (const key of kept.keys()) {
      if (kept.size <= MAX_KEPT) break
      kept.delete(key)
    }
  }
  return (at, one, many) =>
    Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<ProcessView.PollResult, E> => {
      prune(now)
      const job = JSON.stringify([at.pid, at.generation ?? null])
      const reader = readers.get(job)
      const served = (view: ProcessView.PollResult, window: number) => {
        readers.set(job, { next: nextOf(view), until: now + options.millis, window })
      }
      const key = keyOf(at.pid, at.generation, at.limit, at.cursor)
      const hit = kept.get(key)
      if (hit !== undefined) {
        kept.delete(key)
        served(hit.page, reader?.window ?? 1)
        return Effect.succeed(hit.page)
      }
      const inRow = reader !== undefined && reader.next === at.cursor
      const window = inRow ? Math.min(options.pages, reader.window * 2) : 1
      if (window <= 1 || !hostReadsAhead) return Effect.tap(one, (view) => served(view, 1))
      // a host from before the call answers that it does not know it: read one page at a time from then on
      const asked = Effect.catchAllDefect(
        // no page at all is no answer: the one page, asked for alone
        Effect.flatMap(many(window), (pages): Effect.Effect<ReadonlyArray<ProcessView.PollResult>, E> =>
          pages.length > 0 ? Effect.succeed(pages) : Effect.map(one, (view) => [view])),
        (defect) => {
          if (!String(defect).includes("Unknown request tag")) return Effect.die(defect)
          hostReadsAhead = false
          return Effect.map(one, (view) => [view])
        }
      )
      return Effect.flatMap(asked, (answered) =>
        Effect.map(Clock.currentTimeMillis, (arrived): ProcessView.PollResult => {
          const first = answered[0]!
          if (first._tag !== "Page" || answered.length === 1) {
            served(first, window)
            return first
          }
          const pages = answered as ReadonlyArray<ProcessView.Page>
          for (let i = 1; i < pages.length; i++) {
            const before = pages[i - 1]!
            const page = pages[i]!
            if (page.status === "running" || before.next_cursor === undefined) break
            kept.set(keyOf(at.pid, at.generation, at.limit, before.next_cursor), { page, until: arrived + options.millis })
          }
          served(first, window)
          return first
        }))
    })
}
