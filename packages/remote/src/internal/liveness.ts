/**
 * What a controller has seen of one host connection, and the state it
 * reads as: pure functions over the last answer and the failures since.
 *
 * @since 0.1.0
 */
import type * as Unreachable from "./unreachable.js"

/** A host's state as a controller sees it. */
export type Liveness =
  /** A call or a ping answered within the window. */
  | { readonly state: "up"; readonly answeredAt: number }
  /** The last call or ping did not complete: why (`reason`, `detail`), and since when it has not. */
  | {
    readonly state: "unreachable"
    readonly reason: Unreachable.Reason
    readonly detail: string
    readonly since: number
    readonly answeredAt?: number | undefined
  }
  /** Nothing answered within the window, and nothing failed since: never reached, or not asked lately. */
  | { readonly state: "unknown"; readonly answeredAt?: number | undefined }

/** What was seen of one connection. */
export interface Seen {
  /** When a call or a ping last answered (epoch ms). */
  readonly answeredAt?: number | undefined
  /** The failures since the last answer: the first one's time, and the newest one's cause. */
  readonly failing?: { readonly since: number; readonly reason: Unreachable.Reason; readonly detail: string } | undefined
}

/** Nothing seen yet. */
export const empty: Seen = {}

/** An answer at `at`: the failures before it are over. */
export const answered = (seen: Seen, at: number): Seen => ({ answeredAt: Math.max(at, seen.answeredAt ?? at) })

/** A failure at `at`: a streak starts, or goes on with the newest cause. */
export const failed = (seen: Seen, at: number, failure: Unreachable.Failure): Seen => ({
  answeredAt: seen.answeredAt,
  failing: { since: seen.failing?.since ?? at, reason: failure.reason, detail: failure.detail }
})

/** The state at `now`: up when an answer came within `windowMillis` and nothing failed since. */
export const stateOf = (seen: Seen, now: number, windowMillis: number): Liveness => {
  if (seen.failing !== undefined) {
    return { state: "unreachable", ...seen.failing, ...(seen.answeredAt !== undefined ? { answeredAt: seen.answeredAt } : {}) }
  }
  if (seen.answeredAt !== undefined && now - seen.answeredAt <= windowMillis) return { state: "up", answeredAt: seen.answeredAt }
  return seen.answeredAt !== undefined ? { state: "unknown", answeredAt: seen.answeredAt } : { state: "unknown" }
}

