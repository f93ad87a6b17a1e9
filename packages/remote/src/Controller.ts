/**
 * The controller side: the `RemoteLease` capability. A controller connects
 * to a host (a child process speaking over its stdio, such as
 * `ssh somehost spillway host --stdio`, or TCP), presents a credential for a
 * lease (renewed with the credential once half its life has passed), and
 * drives jobs through it. A remote start reserves its 4 MiB
 * allowance out of the combined retention quota before it is dispatched
 * (a refused dispatch releases it); the output stays on the host and is
 * paged only through the lease, never copied here. Expiring a job ends
 * access here first, then asks the host to delete the spool; when the host
 * cannot be reached or refuses the lease, the result says deletion was not
 * confirmed.
 *
 * @since 0.1.0
 */
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Socket from "@effect/platform/Socket"
import * as RpcClient from "@effect/rpc/RpcClient"
import type * as RpcClientError from "@effect/rpc/RpcClientError"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { type Errors, type Process, type ProcessView, Retention } from "@spillway/core"
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import * as ChildProcess from "node:child_process"
import { Duplex } from "node:stream"
import { HostError, HostRpcs, MAX_PAGES_AHEAD } from "./HostProtocol.js"
import * as ReadAhead from "./internal/readAhead.js"
import * as RemoteRecords from "./RemoteRecords.js"

/** The allowance a remote start reserves. */
export const ALLOWANCE_BYTES = 4 * 1024 * 1024

/** A lease from a host other than the one a manifest names. */
export class HostMismatch extends Schema.TaggedError<HostMismatch>()("HostMismatch", { expected: Schema.String, actual: Schema.String }) {
  override get message() {
    return `the host answered with identity ${this.actual}, not ${this.expected} whose jobs these are; it was replaced or reinstalled, and the old jobs' output cannot be reached through it`
  }
}

/** The host could not be reached, or the call did not complete. */
export class HostUnreachable extends Schema.TaggedError<HostUnreachable>()("HostUnreachable", { detail: Schema.String }) {
  override get message() {
    return `the host could not be reached: ${this.detail}`
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

const unreachable = (e: unknown) =>
  e instanceof HostError ? e : new HostUnreachable({ detail: (e as { message?: string }).message ?? String(e) })

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

/** The client of a host reached through a socket. */
export const layerClient = (socket: Layer.Layer<Socket.Socket, Socket.SocketError>) =>
  Layer.scoped(HostConnection, RpcClient.make(HostRpcs)).pipe(
    Layer.provide(RpcClient.layerProtocolSocket({ retryTransientErrors: false })),
    Layer.provide(RpcSerialization.layerNdjson),
    Layer.provide(socket)
  )

/** A host started as a child process, speaking over its stdio. */
export const layerStdio = (file: string, args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) =>
  layerClient(socketStdio(file, args, env))

/** A host listening for WebSocket connections, at a `ws://` or `wss://` URL. */
export const layerWebSocket = (url: string) =>
  layerClient(Socket.layerWebSocket(url).pipe(Layer.provide(NodeSocket.layerWebSocketConstructor)))

/** A host listening on TCP. */
export const layerTcp = (options: { readonly host: string; readonly port: number }) =>
  layerClient(NodeSocket.layerNet({ host: options.host, port: options.port }))

/** A remote job as a controller records it. */
export type RemoteManifest = RemoteRecords.RemoteRecord

/** Where a controller records its remote jobs, so a restarted controller finds them again. */
export const RemoteManifests = RemoteRecords.RemoteRecords

/** Records in memory: a restarted controller finds nothing. */
export const manifestsMemory = RemoteRecords.layerMemory

/** Records in a database: a `postgres://` URL (controllers that share one view) or a SQLite file. */
export const manifestsAt = RemoteRecords.layerFor

/** A job restored from the records: it can be read, not driven. */
export class RemoteJobReadOnly extends Schema.TaggedError<RemoteJobReadOnly>()("RemoteJobReadOnly", { pid: Schema.Number }) {
  override get message() {
    return `remote job ${this.pid} was started before this controller restarted: its output can be read through the lease, but it takes no stdin and no signal`
  }
}

const scopeHashOf = (scope: string) => createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32)

/** What a controller does through one lease. */
export interface Leased {
  readonly scope: string
  /** The hash of the host identity that granted the lease. */
  readonly host: string
  /** Reserves the allowance, then starts the command on the host; a refused start releases the reservation. */
  readonly start: (
    request: { readonly command: string; readonly cwd?: string; readonly stdin?: boolean; readonly keep?: "head-and-tail" | "whole" }
  ) => Effect.Effect<
    { readonly pid: number; readonly generation: string; readonly started_at: string },
    HostError | HostUnreachable | Errors.QuotaExceeded
  >
  readonly poll: (
    pid: number,
    request?: Omit<Process.PollRequest, "pid">
  ) => Effect.Effect<ProcessView.StatusView | ProcessView.Page | ProcessView.Lines, HostError | HostUnreachable>
  /** Waits on the host: for the exit, the timeout, or a line matching `pattern` printed after the call (or from line `fromLine` on). */
  readonly wait: (
    pid: number,
    timeoutMillis: number,
    pattern?: string,
    fromLine?: number
  ) => Effect.Effect<ProcessView.StatusView, HostError | HostUnreachable>
  /** A page of the lines of the job's kept output that match a pattern, searched on the host. */
  readonly search: (
    pid: number,
    request: Omit<Process.SearchRequest, "pid">
  ) => Effect.Effect<ProcessView.Matches, HostError | HostUnreachable>
  readonly stdin: (pid: number, data?: string, close?: boolean) => Effect.Effect<void, HostError | HostUnreachable | RemoteJobReadOnly>
  readonly signal: (pid: number, signal: string) => Effect.Effect<void, HostError | HostUnreachable | RemoteJobReadOnly>
  /** This caller's recorded jobs on this host; those started before a restart are read-only. */
  readonly jobs: Effect.Effect<ReadonlyArray<{ readonly pid: number; readonly command: string; readonly readOnly: boolean }>>
  readonly status: (pid: number) => Effect.Effect<Process.JobSummary, HostError | HostUnreachable>
  /** Ends access here and gives the reservation back, then asks the host to delete the spool. */
  readonly expire: (pid: number) => Effect.Effect<Expired>
  /** Expires every recorded job of this lease whose output the host said expires by now (24 hours after its exit). */
  readonly sweep: Effect.Effect<ReadonlyArray<Expired>>
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
    /** The hosts this caller has recorded jobs on, by identity hash: what a restarted controller leases again with `expectHost`. */
    readonly knownHosts: (caller: Process.Caller) => Effect.Effect<ReadonlyArray<string>>
  }
>() {}

/** How a controller calls its host. */
export interface LayerOptions {
  /** Longest wait for one call; 30 seconds by default. */
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

/** The capability over one host connection, reserving from the retention quota in context (or a private one). */
export const layer = (options: LayerOptions = {}) =>
  Layer.effect(
    RemoteLease,
    Effect.gen(function*() {
      const ahead = aheadOf(options.readAhead)
      const client = yield* HostConnection
      const quota = Option.getOrElse(yield* Effect.serviceOption(Retention.Retention), () => Retention.make())
      const records = yield* Option.match(yield* Effect.serviceOption(RemoteRecords.RemoteRecords), {
        onNone: () => Effect.provide(RemoteRecords.RemoteRecords, RemoteRecords.layerMemory),
        onSome: Effect.succeed
      })
      const recorded = Effect.map(Effect.orElseSucceed(records.list, () => []), (all) => all as ReadonlyArray<RemoteManifest>)
      const record = (m: RemoteManifest) => Effect.ignore(records.save(m))
      // jobs this controller started itself, since it came up
      const driven = new Set<string>()
      const timeout = options.callTimeout ?? Duration.seconds(30)
      const call = <A, E>(effect: Effect.Effect<A, E>) =>
        effect.pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new HostUnreachable({ detail: "the call timed out" }) }),
          Effect.mapError(unreachable)
        ) as Effect.Effect<A, HostError | HostUnreachable>
      return {
        lease: (credential, caller, leaseOptions) =>
          Effect.gen(function*() {
            const granted = yield* call(client.Lease({ credential, owner: caller.owner, channel: caller.channel }))
            if (leaseOptions?.expectHost !== undefined && leaseOptions.expectHost !== granted.host) {
              return yield* new HostMismatch({ expected: leaseOptions.expectHost, actual: granted.host })
            }
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
            const withLease = <A>(f: (lease: string) => Effect.Effect<A, unknown>) => Effect.flatMap(current, (l) => call(f(l)))
            const scopeHash = scopeHashOf(granted.scope)
            const readAhead = ReadAhead.make<HostError | HostUnreachable>(ahead)
            const reservations = new Map<number, Retention.Reservation>()
            const mine = (m: RemoteManifest) =>
              m.host === granted.host && m.scopeHash === scopeHash && m.owner === caller.owner && m.channel === caller.channel
            const findRecord = (pid: number) => Effect.map(recorded, (all) => all.filter(mine).reverse().find((m) => m.pid === pid))
            /** Notes what a view says about the job's end, so expiry can follow it. */
            const observe = (pid: number, view: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) =>
              Effect.gen(function*() {
                if (view._tag !== "StatusView" || view.retention.status === "running") return
                const r = view.retention
                const m = yield* findRecord(pid)
                if (m === undefined) return
                yield* record({
                  ...m,
                  exitCode: r.exit_code,
                  signal: r.signal,
                  emittedBytes: r.emitted_bytes ?? m.emittedBytes,
                  expiresAt: r.expires_at !== undefined ? Date.parse(r.expires_at) : m.expiresAt
                })
              })
            /** The generation recorded for a pid, which binds every call to the job this controller knows. */
            const generationOf = (pid: number) => Effect.map(findRecord(pid), (m) => m?.generation)
            const drive = (pid: number) =>
              Effect.flatMap(findRecord(pid), (m) =>
                m !== undefined && !driven.has(m.generation) ? Effect.fail(new RemoteJobReadOnly({ pid })) : Effect.void)
            const leased: Leased = {
              scope: granted.scope,
              host: granted.host,
              start: (request) =>
                Effect.gen(function*() {
                  // the remote job's whole allowance, from the pool local spools use; no local body, so no entry
                  const reservation = yield* quota.reserve("spool", ALLOWANCE_BYTES, { entry: false })
                  const started = yield* withLease((lease) => client.Start({ lease, ...request })).pipe(Effect.tapError(() => reservation.release))
                  reservations.set(started.pid, reservation)
                  driven.add(started.generation)
                  yield* record({
                    generation: started.generation,
                    pid: started.pid,
                    owner: caller.owner,
                    channel: caller.channel,
                    command: request.command,
                    startedAt: yield* Clock.currentTimeMillis,
                    emittedBytes: 0,
                    host: granted.host,
                    scopeHash
                  } satisfies RemoteManifest)
                  return started
                }),
              poll: (pid, request = {}) =>
                Effect.flatMap(generationOf(pid), (generation) => {
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
                Effect.flatMap(generationOf(pid), (generation) =>
                  Effect.tap(withLease((lease) => client.Wait({ lease, pid, generation, timeoutMillis, pattern, fromLine })), (v) => observe(pid, v))),
              search: (pid, request) =>
                Effect.flatMap(generationOf(pid), (generation) => withLease((lease) => client.Search({ lease, pid, generation, ...request }))),
              stdin: (pid, data, close) =>
                Effect.zipRight(drive(pid), Effect.flatMap(generationOf(pid), (generation) => withLease((lease) => client.Stdin({ lease, pid, generation, data, close })))),
              signal: (pid, signal) =>
                Effect.zipRight(drive(pid), Effect.flatMap(generationOf(pid), (generation) => withLease((lease) => client.Signal({ lease, pid, generation, signal })))),
              sweep: Effect.gen(function*() {
                const now = yield* Clock.currentTimeMillis
                const due = (yield* recorded).filter((m) => mine(m) && m.expiresAt !== undefined && m.expiresAt <= now)
                return yield* Effect.forEach(due, (m) => leased.expire(m.pid))
              }),
              jobs: Effect.map(recorded, (all) =>
                all.filter(mine).map((m) => ({ pid: m.pid, command: m.command, readOnly: !driven.has(m.generation) }))),
              status: (pid) => Effect.flatMap(generationOf(pid), (generation) => withLease((lease) => client.Status({ lease, pid, generation }))),
              expire: (pid) =>
                Effect.gen(function*() {
                  const reservation = reservations.get(pid)
                  reservations.delete(pid)
                  if (reservation !== undefined) yield* reservation.release
                  // access ends here first, whatever the host says
                  const m = yield* findRecord(pid)
                  if (m !== undefined) yield* Effect.ignore(records.remove(m.generation))
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
          Effect.map(recorded, (all) => [
            ...new Set(all.filter((m) => m.owner === caller.owner && m.channel === caller.channel).map((m) => m.host))
          ])
      }
    })
  )
