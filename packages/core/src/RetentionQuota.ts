/**
 * The retention quota that local process spools and remote starts share:
 * 128 MiB by default. Local capture takes bytes as it writes them, from
 * what is neither used nor reserved; a remote start reserves its whole
 * allowance (4 MiB) before it is dispatched, and local capture can never
 * consume a reservation. A refused dispatch releases what it reserved.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"

/** Reserving would pass the quota. */
export class QuotaExhausted extends Schema.TaggedError<QuotaExhausted>()("QuotaExhausted", {
  wanted: Schema.Number,
  available: Schema.Number,
  limit: Schema.Number
}) {
  override get message() {
    return `the ${this.limit}-byte retention quota has ${this.available} bytes free, fewer than the ${this.wanted} a start reserves; wait for kept output to expire`
  }
}

/** Bytes held for one remote start. */
export interface Reservation {
  readonly bytes: number
  /** Gives the bytes back; a second release does nothing. */
  readonly release: Effect.Effect<void>
}

/** The quota. */
export interface Service {
  readonly limit: number
  /** Takes up to `bytes` for local capture from what is free (neither used nor reserved); returns how many it took. */
  readonly take: (bytes: number) => number
  /** Gives back bytes local capture took (a spool removed, a write that failed). */
  readonly give: (bytes: number) => void
  /** Counts bytes already kept (spools found at start-up), even past the limit: new capture then waits for room. */
  readonly hold: (bytes: number) => void
  /** Reserves `bytes` before a remote start is dispatched, or fails when they are not free. */
  readonly reserve: (bytes: number) => Effect.Effect<Reservation, QuotaExhausted>
  readonly usage: () => { readonly used: number; readonly reserved: number; readonly limit: number }
}

/** The retention quota service. */
export class RetentionQuota extends Context.Tag("@spillway/core/RetentionQuota")<RetentionQuota, Service>() {}

/** A quota of `limit` bytes. */
export const make = (limit: number = 128 * 1024 * 1024): Service => {
  let used = 0
  let reserved = 0
  const free = () => Math.max(0, limit - used - reserved)
  return {
    limit,
    take: (bytes) => {
      const got = Math.max(0, Math.min(bytes, free()))
      used += got
      return got
    },
    give: (bytes) => void (used = Math.max(0, used - bytes)),
    hold: (bytes) => void (used += Math.max(0, bytes)),
    reserve: (bytes) =>
      Effect.suspend(() => {
        if (bytes > free()) return Effect.fail(new QuotaExhausted({ wanted: bytes, available: free(), limit }))
        reserved += bytes
        let released = false
        return Effect.succeed({
          bytes,
          release: Effect.sync(() => {
            if (released) return
            released = true
            reserved -= bytes
          })
        })
      }),
    usage: () => ({ used, reserved, limit })
  }
}

/** The quota as a layer. */
export const layer = (limit?: number): Layer.Layer<RetentionQuota> => Layer.sync(RetentionQuota, () => make(limit))
