/**
 * Process jobs: a command runs in the background through the child runner,
 * and its stdout and stderr go into one spool, a body of the spool profile
 * (masked as it comes, within a per-job limit and the shared retention
 * quota, readable while it grows). A poll is a view, never a consuming read:
 * the status view shows the newest lines and an `[output retention]`
 * record, and byte cursors page the whole retained output, so one reader can
 * never move another's position. Every action asks `Access` (owner, channel,
 * the host's authorizer, expiry). Jobs come back read-only after a restart,
 * from their bodies' manifests.
 *
 * Three capabilities, one manager: `ProcessSpawn` starts jobs,
 * `ProcessControl` writes stdin and sends signals, and `ProcessRead` polls,
 * waits and lists. A host grants polling without spawning by providing
 * `ProcessRead` alone (`readOnly`).
 *
 * @since 0.1.0
 */
import { Clock, Context, Deferred, Duration, Effect, Either, Layer, Schedule, type Scope } from "effect"
import type * as Access from "./Access.js"
import { Bodies } from "./Body.js"
import * as Child from "./Child.js"
import * as Cursor from "./Cursor.js"
import type * as Envelope from "./Envelope.js"
import { type AccessDenied, type Expired, InvalidRequest, NotFound, type StoreFailed } from "./Errors.js"
import * as Utf8 from "./Utf8.js"
import * as Job from "./internal/process/job.js"
import * as Run from "./internal/process/run.js"
import * as Views from "./internal/process/views.js"
import * as Wait from "./internal/process/wait.js"
import type * as ProcessView from "./ProcessView.js"
import { Retention } from "./Retention.js"
import { Secrets } from "./Secrets.js"

/** The tool name process cursors carry; no other tool accepts them. */
export const TOOL = Views.TOOL

/** Limits of capture and delivery; every figure defaults to the source design's. */
export interface Options {
  /** Bytes kept per job; the rest is counted, not kept. 4 MiB by default. */
  readonly captureLimitBytes?: number
  /** The delivery budget for one whole result, in characters. 12,000 by default. */
  readonly budgetChars?: number
  /** Newest lines in the status view. 50 by default. */
  readonly statusLines?: number
  /** Page size when a poll gives no limit. 4,000 bytes by default. */
  readonly defaultPageBytes?: number
  /** Largest page a poll may ask for. 8,000 bytes by default. */
  readonly maxPageBytes?: number
  /** Time between SIGTERM and SIGKILL when a job is cancelled. 3 seconds by default. */
  readonly killGraceMillis?: number
  /** How long output is still read after the exit, for children that hold the pipes open. 2 seconds by default. */
  readonly drainGraceMillis?: number
  /** A stream at most this long is also kept whole in memory, so its true tail survives a capture error. 64 KiB by default. */
  readonly smallStreamBytes?: number
  /** Least time between saves of a running job's record. 1 second by default. */
  readonly saveEveryMillis?: number
  /** Time between sweeps of expired jobs. 1 minute by default. */
  readonly sweepEveryMillis?: number
  /** Whether spools outlive the manager ("durable", the default) or end with it ("temporary"), as the status record says. */
  readonly spool?: "durable" | "temporary" | undefined
}

const defaults: Job.Limits = {
  captureLimitBytes: 4 * 1024 * 1024,
  budgetChars: 12_000,
  statusLines: 50,
  defaultPageBytes: 4_000,
  maxPageBytes: 8_000,
  killGraceMillis: 3_000,
  drainGraceMillis: 2_000,
  smallStreamBytes: 64 * 1024,
  saveEveryMillis: 1_000,
  sweepEveryMillis: 60_000
}

/** The smallest page a poll may ask for: room for any one code point. */
export const MIN_PAGE_BYTES = Views.MIN_PAGE_BYTES

/** Who acts: the principal and the channel (conversation, session) it acts from. */
export type Caller = Access.Caller

/** What a job is started with. */
export type StartRequest = Run.StartRequest

/** A started job. */
export interface Started {
  readonly pid: number
  readonly generation: string
  readonly command: string
  readonly started_at: string
  readonly spool: "durable" | "temporary"
}

/** A poll: the status view, or a page by cursor or byte offset. */
export interface PollRequest {
  readonly pid: number
  /** A cursor from an earlier result of this job; takes precedence over `offset`. */
  readonly cursor?: string | null | undefined
  /** 0, blank, null or absent: the status view. 1 or more: the page from that byte. */
  readonly offset?: number | string | null | undefined
  /** Most bytes per page; 4,000 by default, 4 to 8,000. */
  readonly limit?: number | null | undefined
}

/** A wait: until the job exits, a line of its output matches, or the timeout, whichever is first. */
export interface WaitRequest {
  readonly pid: number
  readonly timeoutMillis: number
  readonly pattern?: string | undefined
  readonly ignoreCase?: boolean | undefined
}

/** One job as `list` shows it. */
export interface JobSummary {
  readonly pid: number
  readonly command: string
  readonly status: ProcessView.State
  readonly exit_code?: number
  readonly signal?: string
  readonly started_at: string
  readonly emitted_bytes: number
  readonly read_only: boolean
  /** The job's random generation: what tells it from an earlier job that had the same pid. */
  readonly generation: string
  /** The name of the body that keeps its output. */
  readonly output: string
}

/** Everything a read can fail with. */
export type ReadError = NotFound | AccessDenied | Expired | InvalidRequest | StoreFailed | Cursor.CursorError | Envelope.EnvelopeTooSmall

/** Everything a control action can fail with. */
export type ControlError = NotFound | AccessDenied | Expired | InvalidRequest

/** Starting jobs. */
export interface SpawnService {
  readonly start: (caller: Caller, request: StartRequest) => Effect.Effect<Started, Child.SpawnFailed | StoreFailed | InvalidRequest>
}

/** Reading jobs: the status view, pages, waits and the list. */
export interface ReadService {
  readonly poll: (caller: Caller, request: PollRequest) => Effect.Effect<ProcessView.StatusView | ProcessView.Page, ReadError>
  readonly wait: (caller: Caller, request: WaitRequest) => Effect.Effect<ProcessView.StatusView, ReadError>
  readonly list: (caller: Caller) => Effect.Effect<ReadonlyArray<JobSummary>>
}

/** Driving running jobs. */
export interface ControlService {
  readonly writeStdin: (caller: Caller, pid: number, data: string | Uint8Array) => Effect.Effect<void, ControlError>
  readonly closeStdin: (caller: Caller, pid: number) => Effect.Effect<void, ControlError>
  /** Sends a signal to the job's process group and returns at once. */
  readonly signal: (caller: Caller, pid: number, signal: string) => Effect.Effect<void, ControlError>
  /** SIGTERM to the process group, SIGKILL after the grace period; returns once the job has exited. */
  readonly cancel: (caller: Caller, pid: number) => Effect.Effect<void, ControlError>
}

/** The whole manager, as `make` builds it. */
export interface Manager extends SpawnService, ReadService, ControlService {
  /** Removes an ended job's output before it expires (its owner is done with it); a running job is refused. */
  readonly remove: (caller: Caller, pid: number) => Effect.Effect<void, ControlError>
  /** Forgets expired jobs and removes their output; returns how many. */
  readonly sweep: Effect.Effect<number>
  /** Bytes the spool pool holds. */
  readonly quotaUsed: Effect.Effect<number>
}

/** The capability to start jobs. */
export class ProcessSpawn extends Context.Tag("@spillway/core/ProcessSpawn")<ProcessSpawn, SpawnService>() {}

/** The capability to read jobs. */
export class ProcessRead extends Context.Tag("@spillway/core/ProcessRead")<ProcessRead, ReadService>() {}

/** The capability to drive jobs. */
export class ProcessControl extends Context.Tag("@spillway/core/ProcessControl")<ProcessControl, ControlService>() {}

/** Signals a caller may send. */
export const SIGNALS = Child.SIGNALS

const conflict = (pid: number, reason: string) => new InvalidRequest({ argument: "pid", reason: `job ${pid} ${reason}` })

/** Builds the manager over the body store and the child runner: restores recorded jobs, and sweeps expired ones in the background. */
export const make = (options: Options = {}): Effect.Effect<
  Manager,
  StoreFailed,
  Bodies | Child.ChildRunner | Retention | Secrets | Cursor.CursorKey | Scope.Scope
> =>
  Effect.gen(function*() {
    const limits: Job.Limits = { ...defaults, ...options }
    const bodies = yield* Bodies
    const runner = yield* Child.ChildRunner
    const retention = yield* Retention
    const masker = yield* Secrets
    const { key } = yield* Cursor.CursorKey
    const scope = yield* Effect.scope
    const ctx: Job.Context = {
      limits,
      bodies,
      codec: Cursor.codec(key, TOOL, "byte"),
      ttlMillis: retention.pool("spool").ttlMillis ?? null,
      spoolKind: options.spool ?? "durable",
      budget: { limit: limits.budgetChars },
      jobs: new Map(),
      byPid: new Map()
    }

    // Jobs recorded by an earlier manager come back read-only, as their spools are on disk.
    for (const m of yield* bodies.manifests("spool")) {
      const done = m.state === "writing" ? yield* bodies.recover(m.id, { anchor: m.createdAt }) : m
      const job = done !== undefined ? Job.restored(done) : undefined
      if (job === undefined) continue
      if (job.recorded !== undefined && job.recorded.written > 0) {
        // the readable prefix excludes a code point the spool ends inside of
        const last = yield* Effect.scoped(Effect.flatMap(bodies.open({ owner: job.owner, channel: job.channel }, job.body, {
          resource: () => ({ ...Job.resourceOf(ctx, job), expiresAt: null })
        }), (r) => r.read(Math.max(0, job.recorded!.written - 3), 3))).pipe(Effect.orElseSucceed(() => new Uint8Array(0)))
        const whole = job.recorded.captureError === undefined && job.recorded.written === job.recorded.emitted
        if (!whole) job.recorded = { ...job.recorded, written: job.recorded.written - Utf8.incompleteSuffix(last) }
      }
      ctx.jobs.set(job.generation, job)
      ctx.byPid.set(job.pid, job.generation)
    }

    const check = (caller: Caller, job: Job.Job, action: Access.Action) =>
      Effect.as(bodies.authorize(caller, Job.resourceOf(ctx, job), action), job)

    const find = (caller: Caller, pid: number, action: Access.Action) =>
      Effect.gen(function*() {
        const generation = ctx.byPid.get(pid)
        const job = generation === undefined ? undefined : ctx.jobs.get(generation)
        if (job === undefined) return yield* new NotFound({ resource: "job", id: String(pid) })
        return yield* check(caller, job, action)
      })

    const live = (caller: Caller, pid: number, action: Access.Action) =>
      Effect.gen(function*() {
        const job = yield* find(caller, pid, action)
        if (job.restored) {
          return yield* conflict(pid, `was restored after a restart and is read-only: its output can be polled, but it takes no ${action}`)
        }
        if (job.state !== "running" || job.running === undefined) {
          return yield* conflict(pid, `is no longer running, so it takes no ${action}; poll it for its output`)
        }
        return { job, running: job.running }
      })

    const start: Manager["start"] = (caller, request) =>
      Effect.map(Run.start(ctx, runner, masker, scope, caller, request), ({ job, startedAt }) => ({
        pid: job.pid,
        generation: job.generation,
        command: job.command,
        started_at: startedAt,
        spool: ctx.spoolKind
      }))

    const poll: Manager["poll"] = (caller, request) =>
      Effect.gen(function*() {
        const job = yield* find(caller, request.pid, "poll")
        const limit = yield* Views.limitOf(ctx, request.limit)
        if (typeof request.cursor === "string" && request.cursor !== "") {
          const position = yield* ctx.codec.decode(request.cursor)
          if (position.generation !== job.generation || position.evidence !== String(job.pid)) {
            return yield* new InvalidRequest({
              argument: "cursor",
              reason: `this cursor does not belong to the current job ${request.pid} (an earlier job with that pid, or one whose output is gone); poll without a cursor for a current one`
            })
          }
          return yield* Views.pageAt(ctx, caller, job, position.offset, limit)
        }
        const offset = yield* Views.offsetOf(request.offset)
        return offset === 0 ? yield* Views.statusView(ctx, caller, job, "poll") : yield* Views.pageAt(ctx, caller, job, offset, limit)
      })

    const wait: Manager["wait"] = (caller, request) =>
      Effect.gen(function*() {
        const job = yield* find(caller, request.pid, "wait")
        const outcome = yield* Wait.wait(ctx, caller, job, request)
        // access may have been revoked while waiting: the view is read only if the caller may still read
        yield* check(caller, job, "wait")
        return yield* Views.statusView(ctx, caller, job, "wait", outcome)
      })

    const list: Manager["list"] = (caller) =>
      Effect.gen(function*() {
        const out: Array<JobSummary> = []
        for (const job of ctx.jobs.values()) {
          if (ctx.byPid.get(job.pid) !== job.generation) continue
          if (Either.isLeft(yield* Effect.either(check(caller, job, "list")))) continue
          out.push({
            pid: job.pid,
            command: job.command,
            status: job.state,
            ...(job.exitCode !== undefined ? { exit_code: job.exitCode } : {}),
            ...(job.signal !== undefined ? { signal: job.signal } : {}),
            started_at: new Date(job.startedAt).toISOString(),
            emitted_bytes: Job.accounting(ctx, job).emitted,
            read_only: job.restored,
            generation: job.generation,
            output: job.body
          })
        }
        return out
      })

    const writeStdin: Manager["writeStdin"] = (caller, pid, data) =>
      Effect.gen(function*() {
        const { running } = yield* live(caller, pid, "stdin")
        const open = yield* running.writeStdin(typeof data === "string" ? Utf8.encode(data) : Uint8Array.from(data))
        if (!open) return yield* conflict(pid, `has its stdin closed; start a job with stdin "pipe" to write to it`)
      })

    const closeStdin: Manager["closeStdin"] = (caller, pid) =>
      Effect.gen(function*() {
        const { running } = yield* live(caller, pid, "stdin")
        if (!(yield* running.closeStdin)) return yield* conflict(pid, `has its stdin closed; start a job with stdin "pipe" to write to it`)
      })

    const signal: Manager["signal"] = (caller, pid, name) =>
      Effect.gen(function*() {
        if (!SIGNALS.includes(name)) {
          return yield* new InvalidRequest({ argument: "signal", reason: `must be one of ${SIGNALS.join(", ")}; got ${JSON.stringify(name).slice(0, 40)}` })
        }
        const { running } = yield* live(caller, pid, "signal")
        yield* running.signal(name)
      })

    const cancel: Manager["cancel"] = (caller, pid) =>
      Effect.gen(function*() {
        const { job, running } = yield* live(caller, pid, "cancel")
        yield* running.terminate
        yield* Deferred.await(job.ended)
      })

    /** Forgets a job that has ended: its body, its record and its room in the quota. */
    const drop = (job: Job.Job) =>
      Effect.gen(function*() {
        yield* Effect.ignore(bodies.remove(job.body))
        ctx.jobs.delete(job.generation)
        if (ctx.byPid.get(job.pid) === job.generation) ctx.byPid.delete(job.pid)
      })

    const sweep: Manager["sweep"] = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      let removed = 0
      for (const job of [...ctx.jobs.values()]) {
        const expires = Job.expiresAt(ctx, job)
        if (expires === undefined || now < expires) continue
        yield* drop(job)
        removed++
      }
      return removed
    })

    const remove: Manager["remove"] = (caller, pid) =>
      Effect.gen(function*() {
        const job = yield* find(caller, pid, "delete")
        if (job.state === "running") return yield* conflict(pid, "is still running; cancel it first")
        yield* drop(job)
      })

    yield* Effect.forkIn(Effect.repeat(sweep, Schedule.spaced(Duration.millis(limits.sweepEveryMillis))), scope)

    return {
      start,
      poll,
      wait,
      list,
      writeStdin,
      closeStdin,
      signal,
      cancel,
      remove,
      sweep,
      quotaUsed: Effect.sync(() => retention.usage("spool").used + retention.usage("spool").reserved)
    } satisfies Manager
  })

/** All three capabilities over one manager. */
export const layer = (options: Options = {}) =>
  Layer.scopedContext(Effect.map(make(options), (m) =>
    Context.make(ProcessSpawn, { start: m.start }).pipe(
      Context.add(ProcessRead, { poll: m.poll, wait: m.wait, list: m.list }),
      Context.add(ProcessControl, { writeStdin: m.writeStdin, closeStdin: m.closeStdin, signal: m.signal, cancel: m.cancel })
    )))

/**
 * Reading alone, out of a layer that provides more: a program that needs
 * `ProcessSpawn` or `ProcessControl` does not compile against the result.
 */
export const readOnly = <E, R>(
  full: Layer.Layer<ProcessRead, E, R>
): Layer.Layer<ProcessRead, E, R> =>
  Layer.provide(
    Layer.effect(ProcessRead, Effect.map(ProcessRead, (r) => ({ poll: r.poll, wait: r.wait, list: r.list }))),
    full
  )

/** Starts a job. */
export const start = (caller: Caller, request: StartRequest) => Effect.flatMap(ProcessSpawn, (s) => s.start(caller, request))

/** The status view or a page of a job's output. */
export const poll = (caller: Caller, request: PollRequest) => Effect.flatMap(ProcessRead, (r) => r.poll(caller, request))

/** Waits for a job to exit, match a pattern, or time out, and returns its status view. */
export const wait = (caller: Caller, request: WaitRequest) => Effect.flatMap(ProcessRead, (r) => r.wait(caller, request))

/** The caller's jobs. */
export const list = (caller: Caller) => Effect.flatMap(ProcessRead, (r) => r.list(caller))
