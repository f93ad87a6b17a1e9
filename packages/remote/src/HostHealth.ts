/**
 * A controller's view of which hosts are up. Every call a controller makes
 * to a host says something: an answer (a host's own refusal too) means it
 * is up, a call that could not complete means it is unreachable, with the
 * cause word and since when. Between calls, a host the controller holds a
 * lease on is pinged (its lease asked for again, which every host answers
 * cheaply) when nothing was heard of it for `pingEvery`: one ping in flight
 * per host at most, `concurrency` in all, each given up after
 * `pingTimeout`. A host is `up` while an answer came within `upFor`,
 * `unreachable` from a failure until the next answer, `unknown` before the
 * first or once the last answer is older than `upFor`.
 *
 * One view serves every host connection given it (`layer`), so a controller
 * of many hosts lists them all in one place; a connection without one keeps
 * a view of its own host.
 *
 * @since 0.1.0
 */
import { Clock, Context, Duration, Effect, Layer, Schedule, type Scope } from "effect"
import * as Live from "./internal/liveness.js"
import type * as Unreachable from "./internal/unreachable.js"

/** A host's state as a controller sees it: `up`, `unreachable` (with the cause word and since when) or `unknown`. */
export type Liveness = Live.Liveness

/** One host connection and what was seen of it. */
export interface HostState {
  /** The host as the controller dialled it. */
  readonly address: string
  /** The hash of the host's identity, once it granted a lease. */
  readonly host?: string | undefined
  readonly liveness: Liveness
}

/** How often hosts are pinged and how long an answer counts. */
export interface Options {
  /** A leased host nothing was heard of for this long is pinged; 5 seconds by default. */
  readonly pingEvery?: Duration.DurationInput | undefined
  /** A ping not answered within this is a failure (`timeout`); 2 seconds by default. */
  readonly pingTimeout?: Duration.DurationInput | undefined
  /** A host is up while its last answer is at most this old; 15 seconds by default (three pings). */
  readonly upFor?: Duration.DurationInput | undefined
  /** The most pings in flight at once, over all hosts; 8 by default. */
  readonly concurrency?: number | undefined
}

/** What one connection reports, and how it is pinged. */
export interface Connection {
  /** A call or a ping answered. */
  readonly answered: Effect.Effect<void>
  /** A call or a ping could not complete. */
  readonly failed: (failure: Unreachable.Failure) => Effect.Effect<void>
  /** The hash of the identity the host answered a lease with. */
  readonly identified: (host: string) => void
  /**
   * How to ping the host (the newest lease's, replacing any earlier): the
   * effect reports its own outcome through `answered` and `failed`.
   */
  readonly pingWith: (ping: Effect.Effect<unknown, unknown>) => void
}

/** A controller's view of its hosts. */
export interface Service {
  /** Registers a host connection, dialled at `address`, until the scope closes. */
  readonly connect: (address: string) => Effect.Effect<Connection, never, Scope.Scope>
  /** Every host connection registered, one per host (the freshest view when a host has several), by address. */
  readonly hosts: Effect.Effect<ReadonlyArray<HostState>>
  /** The state of a host by identity hash, or, when no connection knows that identity, of a connection to its address that has not leased yet. */
  readonly liveness: (host: string, address?: string | undefined) => Effect.Effect<Liveness>
}

/** A controller's view of its hosts. */
export class HostHealth extends Context.Tag("@spillway/remote/HostHealth")<HostHealth, Service>() {}

/** The most host connections one view holds; past it a new connection is not watched (and reads as `unknown`). */
export const MAX_CONNECTIONS = 10_000

interface Entry {
  readonly address: string
  host: string | undefined
  seen: Live.Seen
  /** When the connection was last heard of or pinged (epoch ms). */
  touched: number
  ping: Effect.Effect<unknown, unknown> | undefined
  pinging: boolean
}

const millisOf = (input: Duration.DurationInput | undefined, fallback: number, name: string): number => {
  const ms = input === undefined ? fallback : Duration.toMillis(Duration.decode(input))
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`${name} must be a duration above 0, got ${String(input)}`)
  return ms
}

const settingsOf = (options: Options) => {
  const concurrency = options.concurrency ?? 8
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a whole number, 1 or more, got ${concurrency}`)
  return {
    every: millisOf(options.pingEvery, 5_000, "pingEvery"),
    timeout: millisOf(options.pingTimeout, 2_000, "pingTimeout"),
    upFor: millisOf(options.upFor, 15_000, "upFor"),
    concurrency
  }
}

/** The freshest entry: the one heard of last. */
const freshest = (entries: ReadonlyArray<Entry>): Entry | undefined =>
  entries.reduce<Entry | undefined>((best, e) => best === undefined || e.touched > best.touched ? e : best, undefined)

/** Notes what was seen of a connection now. */
const noteOn = (entry: Entry, f: (seen: Live.Seen, at: number) => Live.Seen) =>
  Effect.map(Clock.currentTimeMillis, (at) => {
    entry.seen = f(entry.seen, at)
    entry.touched = Math.max(entry.touched, at)
  })

/** A view of hosts whose pinger runs until the scope closes. */
export const make = (options: Options = {}): Effect.Effect<Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = settingsOf(options)
    const entries = new Set<Entry>()
    const permits = yield* Effect.makeSemaphore(settings.concurrency)
    const scope = yield* Effect.scope
    /** One ping, holding a permit; one not answered within the ping timeout is given up and noted as a failure. */
    const pingOnce = (entry: Entry, ping: Effect.Effect<unknown, unknown>) =>
      permits.withPermits(1)(
        Effect.flatMap(Effect.timeoutOption(Effect.exit(ping), settings.timeout), (outcome) =>
          outcome._tag === "Some"
            ? Effect.void
            : noteOn(entry, (seen, at) => Live.failed(seen, at, { reason: "timeout", detail: `no answer to a ping within ${Duration.format(Duration.millis(settings.timeout))}` })))
      ).pipe(Effect.ensuring(Effect.sync(() => void (entry.pinging = false))))
    const tick = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.forEach(entries, (entry) => {
        const ping = entry.ping
        if (ping === undefined || entry.pinging || now - entry.touched < settings.every) return Effect.void
        entry.pinging = true
        entry.touched = now
        return Effect.asVoid(Effect.forkIn(pingOnce(entry, ping), scope))
      }, { discard: true }))
    yield* Effect.forkScoped(Effect.repeat(tick, Schedule.spaced(Duration.millis(Math.min(1_000, Math.max(50, settings.every / 4))))))
    const view = (entry: Entry, now: number): HostState => ({
      address: entry.address,
      ...(entry.host !== undefined ? { host: entry.host } : {}),
      liveness: Live.stateOf(entry.seen, now, settings.upFor)
    })
    return {
      connect: (address) =>
        Effect.map(
          Effect.acquireRelease(
            Effect.map(Clock.currentTimeMillis, (now): Entry => {
              const entry: Entry = { address, host: undefined, seen: Live.empty, touched: now, ping: undefined, pinging: false }
              if (entries.size < MAX_CONNECTIONS) entries.add(entry)
              return entry
            }),
            (entry) => Effect.sync(() => void entries.delete(entry))
          ),
          (entry): Connection => ({
              answered: noteOn(entry, Live.answered),
              failed: (failure) => noteOn(entry, (seen, at) => Live.failed(seen, at, failure)),
              identified: (host) => void (entry.host = host),
              pingWith: (ping) => void (entry.ping = ping)
            })
        ),
      hosts: Effect.map(Clock.currentTimeMillis, (now) => {
        const byHost = new Map<string, Array<Entry>>()
        for (const entry of entries) {
          const key = entry.host !== undefined ? `host:${entry.host}` : `address:${entry.address}`
          byHost.set(key, [...(byHost.get(key) ?? []), entry])
        }
        return [...byHost.values()].map((group) => view(freshest(group)!, now)).sort((a, b) =>
          a.address < b.address ? -1 : a.address > b.address ? 1 : (a.host ?? "") < (b.host ?? "") ? -1 : 1
        )
      }),
      liveness: (host, address) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const all = [...entries]
          const chosen = freshest(all.filter((e) => e.host === host)) ??
            (address !== undefined ? freshest(all.filter((e) => e.host === undefined && e.address === address)) : undefined)
          return chosen !== undefined ? view(chosen, now).liveness : { state: "unknown" as const }
        })
    }
  })

/** One view of hosts for every host connection in the program. */
export const layer = (options: Options = {}): Layer.Layer<HostHealth> => Layer.scoped(HostHealth, make(options))
