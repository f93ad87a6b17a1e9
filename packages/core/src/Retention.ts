/**
 * How much kept output may exist, and for how long: one quota service for
 * every profile, each profile a pool with its own limits (bytes, entries)
 * and time to live. Room is reserved before anything is written, in one
 * step that checks and takes together, so concurrent writers can never pass
 * a limit between them; a writer that needs more asks for more before it
 * writes it, and one that ends keeps what it used and gives back the rest.
 * Remote starts reserve their whole allowance out of the same pool as local
 * spools, and local capture can never take a reservation's bytes.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import { QuotaExceeded } from "./Errors.js"

/** The limits of one pool; a limit left out is no limit. */
export interface Pool {
  /** Most bytes all its bodies and reservations together may hold. */
  readonly bytes?: number | undefined
  /** Most bodies it may hold. */
  readonly entries?: number | undefined
  /** How long a body is kept from its anchor (creation, or a job's exit); absent: until removed. */
  readonly ttlMillis?: number | undefined
}

/** Room held for one writer or one remote start. */
export interface Reservation {
  readonly pool: string
  /** Bytes held now. */
  readonly held: () => number
  /** Takes up to `bytes` more from what is free, at once; returns how many it got (0 when the pool is full). */
  readonly grow: (bytes: number) => number
  /** Keeps `bytes` (at most what is held) as used, and gives the rest back. A body written: its size. */
  readonly settle: (bytes: number) => void
  /** Gives back everything, the entry included (a write abandoned, a start refused); a second release does nothing. */
  readonly release: Effect.Effect<void>
}

/** What a pool holds now. */
export interface Usage {
  /** Bytes of kept bodies. */
  readonly used: number
  /** Bytes held by reservations not settled yet. */
  readonly reserved: number
  readonly entries: number
  readonly limit: number
  readonly entryLimit: number
}

/** The quota service. */
export interface Service {
  /**
   * Reserves `bytes` (and one entry, unless `entry` is false) in a pool, or
   * fails with `QuotaExceeded` when they are not free: check and take are one step.
   */
  readonly reserve: (pool: string, bytes: number, options?: { readonly entry?: boolean }) => Effect.Effect<Reservation, QuotaExceeded>
  /** Counts bodies already kept (found at start-up) against a pool, even past its limit: new writes then wait for room. */
  readonly hold: (pool: string, bytes: number, entries?: number) => void
  /** Gives back the room of a body that was removed. */
  readonly free: (pool: string, bytes: number, entries?: number) => void
  readonly usage: (pool: string) => Usage
  /** The pool's limits, as configured. */
  readonly pool: (pool: string) => Pool
  /** When a body anchored at `anchor` (epoch ms) expires in a pool, or null when it does not. */
  readonly expiresAt: (pool: string, anchor: number) => number | null
}

/** The quota service. */
export class Retention extends Context.Tag("@spillway/core/Retention")<Retention, Service>() {}

/** The source designs' figures: 64 MiB of evidence, 128 MiB of spools, scratch of 64 MiB in 512 files, 24 hours. */
export const defaultPools: Readonly<Record<string, Pool>> = {
  spill: {},
  evidence: { bytes: 64 * 1024 * 1024, ttlMillis: 24 * 60 * 60 * 1000 },
  spool: { bytes: 128 * 1024 * 1024, ttlMillis: 24 * 60 * 60 * 1000 },
  scratch: { bytes: 64 * 1024 * 1024, entries: 512 },
  agent: { ttlMillis: 24 * 60 * 60 * 1000 }
}

interface State {
  used: number
  reserved: number
  entries: number
}

/** A quota over pools (`defaultPools` merged with `pools`); a pool not named has no limits. */
export const make = (pools: Readonly<Record<string, Pool>> = {}): Service => {
  const config: Record<string, Pool> = { ...defaultPools, ...pools }
  const states = new Map<string, State>()
  const stateOf = (pool: string) => {
    let s = states.get(pool)
    if (s === undefined) {
      s = { used: 0, reserved: 0, entries: 0 }
      states.set(pool, s)
    }
    return s
  }
  const limitOf = (pool: string) => config[pool]?.bytes ?? Number.POSITIVE_INFINITY
  const entryLimitOf = (pool: string) => config[pool]?.entries ?? Number.POSITIVE_INFINITY
  const freeBytes = (pool: string) => {
    const s = stateOf(pool)
    return Math.max(0, limitOf(pool) - s.used - s.reserved)
  }

  const reserve: Service["reserve"] = (pool, bytes, options) =>
    Effect.suspend(() => {
      const s = stateOf(pool)
      const entry = options?.entry !== false
      if (entry && s.entries + 1 > entryLimitOf(pool)) {
        return Effect.fail(
          new QuotaExceeded({ pool, unit: "entries", wanted: 1, available: 0, limit: entryLimitOf(pool) })
        )
      }
      if (bytes > freeBytes(pool)) {
        return Effect.fail(
          new QuotaExceeded({ pool, unit: "bytes", wanted: bytes, available: freeBytes(pool), limit: limitOf(pool) })
        )
      }
      s.reserved += bytes
      if (entry) s.entries++
      let held = bytes
      let done = false
      const reservation: Reservation = {
        pool,
        held: () => held,
        grow: (more) => {
          if (done) return 0
          const got = Math.max(0, Math.min(more, freeBytes(pool)))
          s.reserved += got
          held += got
          return got
        },
        settle: (keep) => {
          if (done) return
          done = true
          const kept = Math.max(0, Math.min(keep, held))
          s.reserved -= held
          s.used += kept
        },
        release: Effect.sync(() => {
          if (done) return
          done = true
          s.reserved -= held
          if (entry) s.entries--
        })
      }
      return Effect.succeed(reservation)
    })

  return {
    reserve,
    hold: (pool, bytes, entries = 1) => {
      const s = stateOf(pool)
      s.used += Math.max(0, bytes)
      s.entries += Math.max(0, entries)
    },
    free: (pool, bytes, entries = 1) => {
      const s = stateOf(pool)
      s.used = Math.max(0, s.used - bytes)
      s.entries = Math.max(0, s.entries - entries)
    },
    usage: (pool) => {
      const s = stateOf(pool)
      return { used: s.used, reserved: s.reserved, entries: s.entries, limit: limitOf(pool), entryLimit: entryLimitOf(pool) }
    },
    pool: (pool) => config[pool] ?? {},
    expiresAt: (pool, anchor) => {
      const ttl = config[pool]?.ttlMillis
      return ttl === undefined ? null : anchor + ttl
    }
  }
}

/** The quota as a layer. */
export const layer = (pools: Readonly<Record<string, Pool>> = {}): Layer.Layer<Retention> =>
  Layer.sync(Retention, () => make(pools))
