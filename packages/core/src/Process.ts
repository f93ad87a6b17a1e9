/**
 * Process jobs: a command runs in the background through the child runner,
 * and its stdout and stderr go into one spool, a body of the spool profile
 * (masked as it comes, within a per-job limit and the shared retention
 * quota, readable while it grows). A poll is a view, never a consuming read:
 * the status view says what happened in one sentence, then shows the newest
 * lines, the lines of the kept output that report failures (found as the
 * output arrives) not among them and the exact next call, with a record of
 * every byte as its facts; byte cursors page the whole retained output, and a search pages
 * the kept lines that match a pattern, so one reader can never move
 * another's position. Every action asks `Access` (owner, channel,
 * the host's authorizer, expiry). Jobs come back read-only after a restart,
 * from their bodies' manifests.
 *
 * Three capabilities, one manager: `ProcessSpawn` starts jobs,
 * `ProcessControl` writes stdin and sends signals, and `ProcessRead` polls,
 * waits, searches and lists. A host grants polling without spawning by providing
 * `ProcessRead` alone (`readOnly`).
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Either, Layer, Schedule, Schema, type Scope } from "effect"
import type * as Access from "./Access.js"
import { Bodies } from "./Body.js"
import * as Child from "./Child.js"
import * as Cursor from "./Cursor.js"
import type * as Envelope from "./Envelope.js"
import { type AccessDenied, type Expired, InvalidRequest, NotFound, type StoreFailed } from "./Errors.js"
import * as Control from "./internal/process/control.js"
import * as Job from "./internal/process/job.js"
import * as Run from "./internal/process/run.js"
import * as Search from "./internal/process/search.js"
import * as Views from "./internal/process/views.js"
import * as Wait from "./internal/process/wait.js"
import * as ProcessView from "./ProcessView.js"
import { Retention } from "./Retention.js"
import * as Salience from "./Salience.js"
import { Secrets } from "./Secrets.js"

/** The tool name process cursors carry; no other tool accepts them. */
export const TOOL = Views.TOOL

/** Limits of capture and delivery; every figure defaults to the source design's. */
export interface Options {
  /** Bytes kept of the start of each job's output (its head). 4 MiB by default. */
  readonly captureLimitBytes?: number
  /**
   * Bytes of each job's newest output kept past its head, in a rolling
   * window masked by the same stream as the head (so its secret context is
   * verified), counted in the spool quota; 1 MiB by default, 0 for none.
   * A running job's window of 256 KiB or more is held in memory with up to
   * 4 MiB (or the window's size, if larger) of room past it, where the
   * masker builds the output the window then keeps without a copy; a
   * smaller one copies what it keeps, in twice its size.
   */
  readonly tailBytes?: number
  /** What a job started with `keep: "whole"` may keep: the spill profile's per-file limit, 1 GiB by default. */
  readonly wholeLimitBytes?: number
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
  /** Rules for the failure lines the status view shows; `Salience.defaultRules` by default, `false` for none. */
  readonly salience?: ReadonlyArray<Salience.SalienceRule> | false | undefined
  /** A search of a job's output stops after this long and says where. 10 seconds by default. */
  readonly searchDeadlineMillis?: number | undefined
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
  sweepEveryMillis: 60_000,
  tailBytes: 1024 * 1024
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
  /** Reads by line instead: the first line (1-based), in the head or in the window of newest output. */
  readonly line?: number | null | undefined
  /** With `line`: how many lines; 200 by default, within the page size. */
  readonly lines?: number | null | undefined
}

/** A wait: until the job exits, a line of its output matches, or the timeout, whichever is first. */
export interface WaitRequest {
  readonly pid: number
  readonly timeoutMillis: number
  /** A line of output ends the wait when it matches; by default only a line printed after the call. */
  readonly pattern?: string | undefined
  readonly ignoreCase?: boolean | undefined
  /**
   * With a pattern: the line (1-based) it is first tried on, so lines already
   * printed count too (1: every kept line; a wait's `next_line`: on from
   * where it ended). Absent: from the line being written when the wait began.
   */
  readonly fromLine?: number | null | undefined
}

/**
 * A search of a job's output: the lines of its head and of its window of
 * newest output that match `pattern`, a page of at most `maxResults` (100
 * by default, 1 to 1,000); `cursor` from the last page goes on from the
 * first line that page did not search.
 */
export interface SearchRequest extends Search.SearchRequest {
  readonly pid: number
}

/** Matching lines per page when a search gives no limit. */
export const DEFAULT_SEARCH_RESULTS = Search.DEFAULT_RESULTS

/** The most matching lines a search may ask for in one page. */
export const MAX_SEARCH_RESULTS = Search.MAX_RESULTS

/** One job as `list` shows it. */
export const JobSummary = Schema.Struct({
  pid: Schema.Number,
  command: Schema.String,
  status: ProcessView.State,
  exit_code: Schema.optionalWith(Schema.Number, { exact: true }),
  signal: Schema.optionalWith(Schema.String, { exact: true }),
  started_at: Schema.String,
  emitted_bytes: Schema.Number,
  read_only: Schema.Boolean,
  /** The job's random generation: what tells it from an earlier job that had the same pid. */
  generation: Schema.String,
  /** The name of the body that keeps its output. */
  output: Schema.String
})

/** One job as `list` shows it. */
export type JobSummary = typeof JobSummary.Type

/** Everything a read can fail with. */
export type ReadError = NotFound | AccessDenied | Expired | InvalidRequest | StoreFailed | Cursor.CursorError | Envelope.EnvelopeTooSmall

/** Everything a control action can fail with. */
export type ControlError = NotFound | AccessDenied | Expired | InvalidRequest

/** Starting jobs. */
export interface SpawnService {
  readonly start: (caller: Caller, request: StartRequest) => Effect.Effect<Started, Child.SpawnFailed | StoreFailed | InvalidRequest>
}

/** Reading jobs: the status view, pages, waits, searches and the list. */
export interface ReadService {
  readonly poll: (caller: Caller, request: PollRequest) => Effect.Effect<ProcessView.StatusView | ProcessView.Page | ProcessView.Lines, ReadError>
  readonly wait: (caller: Caller, request: WaitRequest) => Effect.Effect<ProcessView.StatusView, ReadError>
  /** A page of the lines of a job's kept output that match a pattern, within the search's deadline. */
  readonly search: (caller: Caller, request: SearchRequest) => Effect.Effect<ProcessView.Matches, ReadError>
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
      retention,
      wholeLimitBytes: options.wholeLimitBytes ?? 1024 * 1024 * 1024,
      codec: Cursor.codec(key, TOOL, "byte"),
      searchCodec: Cursor.codec(key, Search.TOOL, "line"),
      ttlMillis: retention.pool("spool").ttlMillis ?? null,
      spoolKind: options.spool ?? "durable",
      budget: { limit: limits.budgetChars },
      jobs: new Map(),
      byPid: new Map(),
      lineIndexes: new Map(),
      salience: options.salience === false ? undefined : Salience.compile(options.salience ?? Salience.defaultRules),
      searchDeadlineMillis: options.searchDeadlineMillis ?? 10_000
    }

    // Jobs recorded by an earlier manager come back read-only, as their spools are on disk.
    yield* Control.restore(ctx, runner)
    const find = (caller: Caller, pid: number, action: Access.Action) => Control.find(ctx, caller, pid, action)

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
        if (request.line !== undefined && request.line !== null) {
          return yield* Views.linesAt(ctx, caller, job, request.line, request.lines ?? 200)
        }
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
        yield* Control.check(ctx, caller, job, "wait")
        return yield* Views.statusView(ctx, caller, job, "wait", outcome)
      })

    const search: Manager["search"] = (caller, request) =>
      Effect.flatMap(find(caller, request.pid, "poll"), (job) => Search.search(ctx, caller, job, request))

    const list: Manager["list"] = (caller) =>
      Effect.gen(function*() {
        const out: Array<JobSummary> = []
        for (const job of ctx.jobs.values()) {
          if (ctx.byPid.get(job.pid) !== job.generation) continue
          if (Either.isLeft(yield* Effect.either(Control.check(ctx, caller, job, "list")))) continue
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

    const sweep = Control.sweep(ctx)

    yield* Effect.forkIn(Effect.repeat(sweep, Schedule.spaced(Duration.millis(limits.sweepEveryMillis))), scope)

    return {
      start,
      poll,
      wait,
      search,
      list,
      writeStdin: (caller, pid, data) => Control.writeStdin(ctx, caller, pid, data),
      closeStdin: (caller, pid) => Control.closeStdin(ctx, caller, pid),
      signal: (caller, pid, name) => Control.signal(ctx, caller, pid, name),
      cancel: (caller, pid) => Control.cancel(ctx, caller, pid),
      remove: (caller, pid) => Control.remove(ctx, caller, pid),
      sweep,
      quotaUsed: Effect.sync(() => retention.usage("spool").used + retention.usage("spool").reserved)
    } satisfies Manager
  })

/** All three capabilities over one manager. */
export const layer = (options: Options = {}) =>
  Layer.scopedContext(Effect.map(make(options), (m) =>
    Context.make(ProcessSpawn, { start: m.start }).pipe(
      Context.add(ProcessRead, { poll: m.poll, wait: m.wait, search: m.search, list: m.list }),
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
    Layer.effect(ProcessRead, Effect.map(ProcessRead, (r) => ({ poll: r.poll, wait: r.wait, search: r.search, list: r.list }))),
    full
  )

/** Starts a job. */
export const start = (caller: Caller, request: StartRequest) => Effect.flatMap(ProcessSpawn, (s) => s.start(caller, request))

/** The status view or a page of a job's output. */
export const poll = (caller: Caller, request: PollRequest) => Effect.flatMap(ProcessRead, (r) => r.poll(caller, request))

/** Waits for a job to exit, match a pattern, or time out, and returns its status view. */
export const wait = (caller: Caller, request: WaitRequest) => Effect.flatMap(ProcessRead, (r) => r.wait(caller, request))

/** A page of the lines of a job's kept output that match a pattern. */
export const search = (caller: Caller, request: SearchRequest) => Effect.flatMap(ProcessRead, (r) => r.search(caller, request))

/** The caller's jobs. */
export const list = (caller: Caller) => Effect.flatMap(ProcessRead, (r) => r.list(caller))
