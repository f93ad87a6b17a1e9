/**
 * The controller side: the `RemoteLease` capability. A controller connects
 * to a host (a child process speaking over its stdio, such as
 * `ssh somehost spillway host --stdio`, or TCP), presents a credential for a
 * lease (renewed with the credential once half its life has passed), and
 * drives jobs through it. A remote start reserves its allowance (4 MiB
 * by default) out of the combined retention quota before it is dispatched,
 * and gives it back when the dispatch is refused or the job is seen to
 * end; the output stays on the host and is
 * paged only through the lease, never copied here. Expiring a job ends
 * access here first, then asks the host to delete the spool; when the host
 * cannot be reached or refuses the lease, the result says deletion was not
 * confirmed.
 *
 * Every call and a ping of each leased host keep the controller's view of
 * which hosts are up (`hosts`, and the state beside each of `knownHosts`;
 * see `HostHealth`). A poll, wait, search or status of a job this
 * controller has looked up before goes on while the record store does not
 * answer, from the record it saw; a start, stdin, a signal, an expiry and
 * every listing still need the store, and fail with `StoreFailed` without it.
 *
 * @since 0.1.0
 */
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Socket from "@effect/platform/Socket"
import * as RpcClient from "@effect/rpc/RpcClient"
import type * as RpcClientError from "@effect/rpc/RpcClientError"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { Errors, type Process, type ProcessView, Retention } from "@spillway/core"
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import * as ChildProcess from "node:child_process"
import { Duplex } from "node:stream"
import * as HostHealth from "./HostHealth.js"
import { HostError, HostRpcs, MAX_PAGES_AHEAD } from "./HostProtocol.js"
import * as ReadAhead from "./internal/readAhead.js"
import * as RecordCache from "./internal/recordCache.js"
import * as RecordOutbox from "./internal/recordOutbox.js"
import * as Unreachable from "./internal/unreachable.js"
import * as RemoteRecords from "./RemoteRecords.js"

/** The allowance a remote start reserves by default (`LayerOptions.reservation`). */
export const ALLOWANCE_BYTES = 4 * 1024 * 1024

/** A lease from a host other than the one a manifest names. */
export class HostMismatch extends Schema.TaggedError<HostMismatch>()("HostMismatch", { expected: Schema.String, actual: Schema.String }) {
  override get message() {
    return `the host answered with identity ${this.actual}, not ${this.expected} whose jobs these are; it was replaced or reinstalled, and the old jobs' output cannot be reached through it`
  }
}

/**
 * The host could not be reached, or the call did not complete: `reason` is
 * the cause word (`refused`, `reset`, `timeout`, `closed`, `tls`, `dns`,
 * `failed`), `address` the host as the controller dialled it.
 */
export class HostUnreachable extends Schema.TaggedError<HostUnreachable>()("HostUnreachable", {
  detail: Schema.String,
  reason: Schema.optional(Schema.Literal("refused", "reset", "timeout", "closed", "tls", "dns", "failed")),
  address: Schema.optional(Schema.String)
}) {
  override get message() {
    const at = this.address !== undefined ? ` at ${this.address}` : ""
    const why = this.reason !== undefined ? ` (${this.reason})` : ""
    // only a connection never made says the call did not reach the host; a timeout or a broken one may come after it ran
    const after = this.reason === "refused" || this.reason === "dns" || this.reason === "tls"
      ? "the call was not done, try again once the host is up"
      : "the call may have been done on the host before this: look (jobs, status) before starting a job again"
    return `the host${at} could not be reached${why}: ${this.detail}; ${after}`
  }
}

/** How an expiry went: access always ends here; deletion on the host may not be confirmed. */
export interface Expired {
  readonly pid: number
  readonly deleted: boolean
  readonly note?: string
}

/** A client of one host's RPC group. */
export class HostConnection extends Context.Tag("@spillway/remote/HostConnection")<
  HostConnection,
  RpcClient.FromGroup<typeof HostRpcs, RpcClientError.RpcClientError>
>() {}

/** The address a host connection dials, named in its errors. */
export class HostAddress extends Context.Tag("@spillway/remote/HostAddress")<HostAddress, string>() {}

/** A failed call as a typed error: the host's own errors as they are, any other (a socket's, a defect of the client) as `HostUnreachable`. */
const unreachable = (address: string | undefined) => (e: unknown): HostError | HostUnreachable => {
  if (e instanceof HostError) return e
  if (e instanceof HostUnreachable) return e.address !== undefined || address === undefined ? e : new HostUnreachable({ ...e, address })
  const { detail, reason } = Unreachable.classify(e)
  return new HostUnreachable({ detail, reason, ...(address !== undefined ? { address } : {}) })
}

/**
 * A socket over a child process's stdin and stdout (a host started as
 * `spillway host --stdio`, locally or through ssh); the child gets SIGTERM
 * when the socket closes.
 */
export const socketStdio = (
  file: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = process.env
): Layer.Layer<Socket.Socket> =>
  Layer.effect(
    Socket.Socket,
    NodeSocket.fromDuplex(
      Effect.acquireRelease(
        Effect.sync(() => {
          const child = ChildProcess.spawn(file, [...args], { stdio: ["pipe", "pipe", "inherit"], env })
          return { child, duplex: Duplex.from({ readable: child.stdout!, writable: child.stdin! }) }
        }),
        ({ child, duplex }) =>
          Effect.sync(() => {
            // the host closes its pipes as it stops: once the socket is gone nobody
            // listens, and a pipe closed early must not become an uncaught error
            const ignore = () => {}
            duplex.on("error", ignore)
            child.stdin!.on("error", ignore)
            child.stdout!.on("error", ignore)
            child.stdin!.end()
            child.kill("SIGTERM")
          })
      ).pipe(Effect.map(({ duplex }) => duplex))
    )
  )

/**
 * The client of a host reached through a socket, and the address its errors
 * name. A connection that fails fails the calls in flight and the calls
 * made until it is open again at once; it is opened again with backoff.
 */
export const layerClient = (socket: Layer.Layer<Socket.Socket, Socket.SocketError>, address?: string) =>
  Layer.merge(
    Layer.scoped(HostConnection, RpcClient.make(HostRpcs)).pipe(
      Layer.provide(RpcClient.layerProtocolSocket({ retryTransientErrors: false })),
      Layer.provide(RpcSerialization.layerNdjson),
      Layer.provide(socket)
    ),
    address !== undefined ? Layer.succeed(HostAddress, address) : Layer.empty
  )

/** A host started as a child process, speaking over its stdio. */
export const layerStdio = (file: string, args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) =>
  layerClient(socketStdio(file, args, env), [file, ...args].join(" ").replace(/\s+/g, " ").slice(0, 80))

/** A host listening for WebSocket connections, at a `ws://` or `wss://` URL. */
export const layerWebSocket = (url: string) =>
  layerClient(Socket.layerWebSocket(url).pipe(Layer.provide(NodeSocket.layerWebSocketConstructor)), url.slice(0, 200))

/** A host listening on TCP. */
export const layerTcp = (options: { readonly host: string; readonly port: number }) =>
  layerClient(NodeSocket.layerNet({ host: options.host, port: options.port }), `${options.host}:${options.port}`)

/** A remote job as a controller records it. */
export type RemoteManifest = RemoteRecords.RemoteRecord

/** Where a controller records its remote jobs, so a restarted controller finds them again. */
export const RemoteManifests = RemoteRecords.RemoteRecords

/** Records in memory: a restarted controller finds nothing. */
export const manifestsMemory = RemoteRecords.layerMemory

/** Records in a database: a `postgres://` URL (controllers that share one view) or a SQLite file. */
export const manifestsAt = RemoteRecords.layerFor

/** How long a read of a job whose record was seen before waits for the record store before it uses that record. */
const READ_STORE_MILLIS = 500

/** How long after the record store failed a read of a job whose record was seen before does not ask it again. */
const STORE_DOWN_MILLIS = 1_000

/** A job restored from the records: it can be read and signalled (so it can be stopped), but takes no stdin. */
export class RemoteJobReadOnly extends Schema.TaggedError<RemoteJobReadOnly>()("RemoteJobReadOnly", { pid: Schema.Number }) {
  override get message() {
    return `remote job ${this.pid} was started before this controller restarted: its output can be read and it can be signalled through the lease, but it takes no stdin`
  }
}

const scopeHashOf = (scope: string) => createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32)

/** What a controller does through one lease. */
export interface Leased {
  readonly scope: string
  /** The hash of the host identity that granted the lease. */
  readonly host: string
  /**
   * Reserves the allowance, then starts the command on the host, then records
   * it; a refused start releases the reservation. A job the record store does
   * not take (after retries) is stopped on the host and the start fails with
   * `StoreFailed`: no job runs that a restarted controller could not find.
   */
  readonly start: (
    request: { readonly command: string; readonly cwd?: string; readonly stdin?: boolean; readonly keep?: "head-and-tail" | "whole" }
  ) => Effect.Effect<
    { readonly pid: number; readonly generation: string; readonly started_at: string },
    HostError | HostUnreachable | Errors.QuotaExceeded | Errors.StoreFailed
  >
  /**
   * A view of the job. Like `wait`, `search` and `status`, it goes on while
   * the record store does not answer (for half a second, or since it last
   * did not) for a job this controller looked up before, by the record it
   * saw then; the host still checks the lease and the job's generation.
   */
  readonly poll: (
    pid: number,
    request?: Omit<Process.PollRequest, "pid">
  ) => Effect.Effect<ProcessView.StatusView | ProcessView.Page | ProcessView.Lines, HostError | HostUnreachable | Errors.StoreFailed>
  /** Waits on the host: for the exit, the timeout, or a line matching `pattern` printed after the call (or from line `fromLine` on). */
  readonly wait: (
    pid: number,
    timeoutMillis: number,
    pattern?: string,
    fromLine?: number
  ) => Effect.Effect<ProcessView.StatusView, HostError | HostUnreachable | Errors.StoreFailed>
  /** A page of the lines of the job's kept output that match a pattern, searched on the host. */
  readonly search: (
    pid: number,
    request: Omit<Process.SearchRequest, "pid">
  ) => Effect.Effect<ProcessView.Matches, HostError | HostUnreachable | Errors.StoreFailed>
  readonly stdin: (pid: number, data?: string, close?: boolean) => Effect.Effect<void, HostError | HostUnreachable | RemoteJobReadOnly | Errors.StoreFailed>
  readonly signal: (pid: number, signal: string) => Effect.Effect<void, HostError | HostUnreachable | RemoteJobReadOnly | Errors.StoreFailed>
  /** This caller's recorded jobs on this host; those started before a restart are read-only. */
  readonly jobs: Effect.Effect<ReadonlyArray<{ readonly pid: number; readonly command: string; readonly readOnly: boolean }>, Errors.StoreFailed>
  readonly status: (pid: number) => Effect.Effect<Process.JobSummary, HostError | HostUnreachable | Errors.StoreFailed>
  /** Ends access here and gives the reservation back, then asks the host to delete the spool. */
  readonly expire: (pid: number) => Effect.Effect<Expired, Errors.StoreFailed>
  /** Expires every recorded job of this lease whose output the host said expires by now (24 hours after its exit). */
  readonly sweep: Effect.Effect<ReadonlyArray<Expired>, Errors.StoreFailed>
}

/** A host a caller has jobs on, with its state as this controller sees it. */
export interface KnownHostState extends RemoteRecords.KnownHost {
  readonly liveness: HostHealth.Liveness
}

/** The capability to lease a host's jobs. */
export class RemoteLease extends Context.Tag("@spillway/remote/RemoteLease")<
  RemoteLease,
  {
    /** Presents a credential for a lease; with `expectHost`, a host with another identity is refused. */
    readonly lease: (
      credential: string,
      caller: Process.Caller,
      options?: { readonly expectHost?: string | undefined }
    ) => Effect.Effect<Leased, HostError | HostUnreachable | HostMismatch>
    /**
     * The hosts this caller has recorded jobs on, by identity hash, each with
     * the address a controller last reached it at and when: what a restarted
     * controller dials and leases again with `expectHost`; and each one's
     * state as this controller sees it (`unknown` for a host it has not
     * dialled).
     */
    readonly knownHosts: (caller: Process.Caller) => Effect.Effect<ReadonlyArray<KnownHostState>, Errors.StoreFailed>
    /**
     * Every host connection of this controller's view (`HostHealth`) with
     * its state: needs no record store, so it answers while the store is
     * down.
     */
    readonly hosts: Effect.Effect<ReadonlyArray<HostHealth.HostState>>
  }
>() {}

/** How a controller calls its host. */
export interface LayerOptions {
  /** Longest wait for one round trip; 30 seconds by default. A wait's own deadline is added to its call's. */
  readonly callTimeout?: Duration.DurationInput
  /**
   * Reading ahead: a reader that pages a finished job's output cursor after
   * cursor, each within `millis` of the last, gets up to `pages` pages per
   * call to the host, the ones after the first kept here for at most
   * `millis` (so a revoked credential can still be served pages that arrived
   * up to that long before). 8 pages and 1 second by default; `false` (or
   * `pages: 1`) makes one call per page.
   */
  readonly readAhead?: false | { readonly pages?: number; readonly millis?: number }
  /**
   * What a start reserves of the retention quota until its job ends:
   * `bytesPerStart` (4 MiB by default) each, and, when no `Retention` is in
   * context, a private quota of `maxStarts` such reservations (32 by
   * default). A reservation goes back once a poll, wait or status shows the
   * job ended, or when the job is expired.
   */
  readonly reservation?: { readonly bytesPerStart?: number; readonly maxStarts?: number }
  /** How this host is pinged when no `HostHealth.HostHealth` view is in context (see `HostHealth.Options`). */
  readonly health?: HostHealth.Options
}

const reservationOf = (option: LayerOptions["reservation"]) => {
  const bytes = option?.bytesPerStart ?? ALLOWANCE_BYTES
  const starts = option?.maxStarts ?? 32
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`reservation.bytesPerStart must be a whole number of bytes, 0 or more, got ${bytes}`)
  if (!Number.isSafeInteger(starts) || starts < 1) throw new RangeError(`reservation.maxStarts must be a whole number, 1 or more, got ${starts}`)
  return { bytes, starts }
}

const aheadOf = (option: LayerOptions["readAhead"]): ReadAhead.Options => {
  if (option === false) return { pages: 1, millis: 0 }
  const pages = option?.pages ?? MAX_PAGES_AHEAD
  const millis = option?.millis ?? 1000
  if (!Number.isInteger(pages) || pages < 1 || pages > MAX_PAGES_AHEAD) {
    throw new RangeError(`readAhead.pages must be a whole number from 1 to ${MAX_PAGES_AHEAD}, got ${pages}`)
  }
  if (!Number.isFinite(millis) || millis < 0) throw new RangeError(`readAhead.millis must be 0 or more, got ${millis}`)
  return { pages, millis }
}

/**
 * The capability over one host connection, reserving from the retention
 * quota in context (or a private one), and noting what it sees of the host
 * in the `HostHealth` view in context (or a private one).
 */
export const layer = (options: LayerOptions = {}) =>
  Layer.scoped(
    RemoteLease,
    Effect.gen(function*() {
      const ahead = aheadOf(options.readAhead)
      const client = yield* HostConnection
      const reserving = reservationOf(options.reservation)
      const quota = Option.getOrElse(
        yield* Effect.serviceOption(Retention.Retention),
        () => Retention.make({ spool: { ...Retention.defaultPools.spool, bytes: Math.max(reserving.bytes, 1) * reserving.starts } })
      )
      const records = yield* Option.match(yield* Effect.serviceOption(RemoteRecords.RemoteRecords), {
        onNone: () => Effect.provide(RemoteRecords.RemoteRecords, RemoteRecords.layerMemory),
        onSome: Effect.succeed
      })
      // what was observed while the record store did not answer, written once it answers again
      const outbox = RecordOutbox.make(records)
      // jobs this controller started itself, since it came up
      const driven = new Set<string>()
      // the records seen, for reads while the store does not answer, and when it last did not
      const cache = RecordCache.make()
      let storeDownAt: number | undefined
      const timeout = Duration.decode(options.callTimeout ?? Duration.seconds(30))
      const address = Option.getOrUndefined(yield* Effect.serviceOption(HostAddress))
      const failed = unreachable(address)
      const health = yield* Option.match(yield* Effect.serviceOption(HostHealth.HostHealth), {
        onNone: () => HostHealth.make(options.health),
        onSome: Effect.succeed
      })
      const seen = yield* health.connect(address ?? "a host connection")
      /** One round trip, within the call timeout plus `extraMillis` (what a wait spends on the host); a defect of the client is a typed error too. */
      const call = <A, E>(effect: Effect.Effect<A, E>, extraMillis = 0) =>
        (effect.pipe(
          Effect.timeoutFail({
            duration: Duration.sum(timeout, Duration.millis(extraMillis)),
            onTimeout: () => new HostUnreachable({ detail: `no answer within ${Duration.format(Duration.sum(timeout, Duration.millis(extraMillis)))}`, reason: "timeout" })
          }),
          // a socket that failed under the client surfaces as a defect of its send: it is a typed failure here
          Effect.catchAllDefect((defect) => Unreachable.isConnectionFailure(defect) ? Effect.fail(defect) : Effect.die(defect)),
          Effect.mapError(failed)
        ) as Effect.Effect<A, HostError | HostUnreachable>).pipe(
          // an answer, a refusal too, says the host is up; a call that did not complete, that it is not
          Effect.tapBoth({
            onFailure: (e) => e._tag === "HostUnreachable" ? seen.failed({ reason: e.reason ?? "failed", detail: e.detail }) : seen.answered,
            onSuccess: () => seen.answered
          })
        )
      return {
        lease: (credential, caller, leaseOptions) =>
          Effect.gen(function*() {
            const granted = yield* call(client.Lease({ credential, owner: caller.owner, channel: caller.channel }))
            if (leaseOptions?.expectHost !== undefined && leaseOptions.expectHost !== granted.host) {
              return yield* new HostMismatch({ expected: leaseOptions.expectHost, actual: granted.host })
            }
            // the host is pinged with the newest lease's credential: asking for a lease again costs the host little
            seen.identified(granted.host)
            seen.pingWith(call(client.Lease({ credential, owner: caller.owner, channel: caller.channel })))
            // where this identity was reached, so a restarted controller finds its hosts without dialling every address
            if (address !== undefined) yield* outbox.address(granted.host, address, yield* Clock.currentTimeMillis)
            // the lease is renewed with the credential once half its life has passed, before a call that needs it
            let lease = granted.lease
            let renewAt = (yield* Clock.currentTimeMillis) + granted.ttlMillis / 2
            const renewing = yield* Effect.makeSemaphore(1)
            const current: Effect.Effect<string, HostError | HostUnreachable> = renewing.withPermits(1)(Effect.gen(function*() {
              const now = yield* Clock.currentTimeMillis
              if (now < renewAt) return lease
              const again = yield* call(client.Lease({ credential, owner: caller.owner, channel: caller.channel }))
              if (again.host !== granted.host) {
                return yield* new HostError({ reason: "HostMismatch", detail: new HostMismatch({ expected: granted.host, actual: again.host }).message })
              }
              lease = again.lease
              renewAt = now + again.ttlMillis / 2
              return lease
            }))
            /** Calls the host with the current lease. */
            const withLease = <A>(f: (lease: string) => Effect.Effect<A, unknown>, extraMillis = 0) =>
              Effect.flatMap(current, (l) => call(f(l), extraMillis))
            const scopeHash = scopeHashOf(granted.scope)
            const readAhead = ReadAhead.make<HostError | HostUnreachable>(ahead)
            const reservations = new Map<number, Retention.Reservation>()
            const key: RemoteRecords.Key = { owner: caller.owner, channel: caller.channel, host: granted.host, scopeHash }
            /** The newest record of a pid, by key, from the store; what the outbox kept is written once the store answers. */
            const findRecord = (pid: number) =>
              records.find(key, pid).pipe(
                Effect.tap((m) =>
                  Effect.sync(() => {
                    cache.set(key, pid, m)
                    storeDownAt = undefined
                  })
                ),
                Effect.tap(() => outbox.flush)
              )
            /**
             * The record a read goes by: the store's, or, for a job looked up
             * before, the one seen when the store does not answer within
             * `READ_STORE_MILLIS` (and, for `STORE_DOWN_MILLIS` after it did
             * not, without asking it).
             */
            const recordToRead = (pid: number) =>
              Effect.gen(function*() {
                const before = cache.get(key, pid)
                if (before === undefined) return yield* findRecord(pid)
                const now = yield* Clock.currentTimeMillis
                if (storeDownAt !== undefined && now - storeDownAt < STORE_DOWN_MILLIS) return before
                return yield* findRecord(pid).pipe(
                  Effect.timeoutFail({
                    duration: Duration.millis(READ_STORE_MILLIS),
                    onTimeout: () => new Errors.StoreFailed({ operation: "remote record find", reason: "the record store did not answer in time" })
                  }),
                  Effect.catchAll(() =>
                    Effect.map(Clock.currentTimeMillis, (at) => {
                      storeDownAt = at
                      return cache.get(key, pid) ?? before
                    })
                  )
                )
              })
            /** Gives back what a start reserved; the output stays on the host, in the host's own pool. */
            const release = (pid: number) =>
              Effect.suspend(() => {
                const reservation = reservations.get(pid)
                reservations.delete(pid)
                return reservation !== undefined ? reservation.release : Effect.void
              })
            /** Notes what a view says about the job's end, so expiry can follow it, and gives its reservation back. */
            const observe = (pid: number, view: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) =>
              Effect.gen(function*() {
                if (view._tag !== "StatusView" || view.retention.status === "running") return
                yield* release(pid)
                const r = view.retention
                const m = cache.get(key, pid) ?? (yield* Effect.orElseSucceed(findRecord(pid), () => undefined))
                if (m === undefined) return
                const ended: RemoteManifest = {
                  ...m,
                  exitCode: r.exit_code,
                  signal: r.signal,
                  emittedBytes: r.emitted_bytes ?? m.emittedBytes,
                  expiresAt: r.expires_at !== undefined ? Date.parse(r.expires_at) : m.expiresAt
                }
                // already recorded so (or kept to be): nothing to write
                if (
                  m.exitCode === ended.exitCode && m.signal === ended.signal && m.emittedBytes === ended.emittedBytes &&
                  m.expiresAt === ended.expiresAt
                ) return
                cache.set(key, pid, ended)
                // a read does not wait out the store's retries: what it could not write in time stays in the outbox for the next call
                yield* Effect.timeoutOption(outbox.exit(ended), Duration.millis(READ_STORE_MILLIS))
              })
            /** The generation recorded for a pid, which binds every call to the job this controller knows. */
            const generationOf = (pid: number) => Effect.map(findRecord(pid), (m) => m?.generation)
            /** The generation a read goes by (see `recordToRead`). */
            const generationToRead = (pid: number) => Effect.map(recordToRead(pid), (m) => m?.generation)
            /** Stops and deletes a job the record store did not take, and gives its reservation back. */
            const unrecorded = (pid: number, generation: string) =>
              Effect.gen(function*() {
                driven.delete(generation)
                yield* release(pid)
                yield* Effect.ignore(withLease((lease) => client.Signal({ lease, pid, generation, signal: "SIGKILL" })))
                yield* Effect.ignore(withLease((lease) => client.Wait({ lease, pid, generation, timeoutMillis: 5_000 }), 5_000))
                yield* Effect.ignore(withLease((lease) => client.Delete({ lease, pid, generation })))
              })
            const drive = (pid: number) =>
              Effect.flatMap(findRecord(pid), (m) =>
                m !== undefined && !driven.has(m.generation) ? Effect.fail(new RemoteJobReadOnly({ pid })) : Effect.void)
            const leased: Leased = {
              scope: granted.scope,
              host: granted.host,
              start: (request) =>
                Effect.gen(function*() {
                  // the remote job's whole allowance, from the pool local spools use; no local body, so no entry
                  const reservation = yield* quota.reserve("spool", reserving.bytes, { entry: false })
                  const started = yield* withLease((lease) => client.Start({ lease, ...request })).pipe(Effect.tapError(() => reservation.release))
                  reservations.set(started.pid, reservation)
                  driven.add(started.generation)
                  const m: RemoteManifest = {
                    generation: started.generation,
                    pid: started.pid,
                    owner: caller.owner,
                    channel: caller.channel,
                    command: request.command,
                    startedAt: yield* Clock.currentTimeMillis,
                    emittedBytes: 0,
                    host: granted.host,
                    scopeHash
                  }
                  // a job nobody could find again must not run: one the store does not take is stopped, and the start fails
                  yield* records.save(m).pipe(Effect.catchAll((e) =>
                    Effect.zipRight(
                      unrecorded(started.pid, started.generation),
                      Effect.fail(
                        new Errors.StoreFailed({
                          operation: e.operation,
                          reason: `${e.reason}; the job started on the host as pid ${started.pid} was stopped, since no restarted controller could find it`
                        })
                      )
                    )
                  ))
                  cache.set(key, started.pid, m)
                  return started
                }),
              poll: (pid, request = {}) =>
                Effect.flatMap(generationToRead(pid), (generation) => {
                  const one = Effect.tap(withLease((lease) => client.Poll({ lease, pid, generation, ...request })), (v) => observe(pid, v))
                  const { cursor, limit, line } = request
                  // a page by cursor (a line number takes precedence over a cursor) may come from the pages read ahead
                  if (typeof cursor !== "string" || cursor === "" || (line !== undefined && line !== null)) return one
                  return readAhead(
                    { pid, generation, limit, cursor },
                    one,
                    (count) => withLease((lease) => client.Pages({ lease, pid, generation, cursor, limit, count }))
                  )
                }),
              wait: (pid, timeoutMillis, pattern, fromLine) =>
                Effect.flatMap(generationToRead(pid), (generation) =>
                                    // the wait's own deadline extends its call's: the host answers by then
                  Effect.tap(
                    withLease((lease) => client.Wait({ lease, pid, generation, timeoutMillis, pattern, fromLine }), Math.max(0, timeoutMillis)),
                    (v) => observe(pid, v)
                  )),
              search: (pid, request) =>
                Effect.flatMap(generationToRead(pid), (generation) => withLease((lease) => client.Search({ lease, pid, generation, ...request }))),
              stdin: (pid, data, close) =>
                Effect.zipRight(drive(pid), Effect.flatMap(generationOf(pid), (generation) => withLease((lease) => client.Stdin({ lease, pid, generation, data, close })))),
              signal: (pid, signal) =>
                // a job restored from the records takes signals: a controller that replaced the one that started it can stop it
                Effect.flatMap(generationOf(pid), (generation) => withLease((lease) => client.Signal({ lease, pid, generation, signal }))),
              sweep: Effect.gen(function*() {
                const now = yield* Clock.currentTimeMillis
                const due = yield* records.list({ ...key, expiredBy: now })
                return yield* Effect.forEach(due, (m) => leased.expire(m.pid))
              }),
              jobs: Effect.map(Effect.tap(records.list(key), () => outbox.flush), (all) =>
                all.map((m) => ({ pid: m.pid, command: m.command, readOnly: !driven.has(m.generation) }))),
              status: (pid) =>
                Effect.flatMap(generationToRead(pid), (generation) =>
                  Effect.tap(withLease((lease) => client.Status({ lease, pid, generation })), (job) => job.status === "running" ? Effect.void : release(pid))),
              expire: (pid) =>
                Effect.gen(function*() {
                  yield* release(pid)
                  // access ends here first, whatever the host says
                  const m = yield* findRecord(pid)
                  if (m !== undefined) {
                    yield* records.remove(m.generation)
                    outbox.forget(m.generation)
                    cache.set(key, pid, undefined)
                  }
                  return yield* withLease((lease) => client.Delete({ lease, pid, generation: m?.generation })).pipe(
                    Effect.as({ pid, deleted: true } satisfies Expired),
                    Effect.catchAll((e) =>
                      Effect.succeed({
                        pid,
                        deleted: false,
                        note: `access ended here, but the host could not confirm that it deleted the output: ${e.message}`
                      } satisfies Expired)
                    )
                  )
                })
            }
            return leased
          }),
        knownHosts: (caller) =>
          Effect.flatMap(Effect.zipRight(outbox.flush, records.hosts(caller)), (known) =>
            Effect.forEach(known, (h) => Effect.map(health.liveness(h.host, h.address), (liveness): KnownHostState => ({ ...h, liveness })))),
        hosts: health.hosts
      }
    })
  )
