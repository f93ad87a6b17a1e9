/**
 * Process jobs: a command runs in the background, its stdout and stderr are
 * drained together into one private spool (masked, within a per-job limit and
 * a shared quota), and a model polls it. A poll is a view, never a consuming
 * read: the status view shows the newest lines and an `[output retention]`
 * record, and byte cursors page the whole retained output, so one reader can
 * never move another's position. Jobs are recorded durably and come back
 * read-only after a restart.
 *
 * Three capabilities, one manager: `ProcessSpawn` starts jobs,
 * `ProcessControl` writes stdin and sends signals, and `ProcessRead` polls,
 * waits and lists. A host grants polling without spawning by providing
 * `ProcessRead` alone (`readOnly`).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import {
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Either,
  ExecutionStrategy,
  Exit,
  Fiber,
  FiberId,
  Layer,
  Option,
  Queue,
  Schedule,
  Schema,
  Scope,
  Stream
} from "effect"
import { randomBytes } from "node:crypto"
import * as Cursor from "./Cursor.js"
import type * as Envelope from "./Envelope.js"
import * as Grep from "./Grep.js"
import { type JobManifest, ProcessManifests } from "./ProcessManifests.js"
import * as RetentionQuota from "./RetentionQuota.js"
import * as ProcessView from "./ProcessView.js"
import { Secrets } from "./Secrets.js"
import * as Utf8 from "./Utf8.js"

/** The tool name process cursors carry; no other tool accepts them. */
export const TOOL = "manage_process"

/** Limits of process capture and delivery; every figure defaults to the source design's. */
export interface Options {
  /** The private retention directory; without one, spools go to a temporary directory removed with the manager. */
  readonly directory?: string | undefined
  /** Bytes kept per job; the rest is counted, not kept. 4 MiB by default. */
  readonly captureLimitBytes?: number
  /**
   * Bytes kept by all spools together, 128 MiB by default; used only when no
   * `RetentionQuota` service (which remote starts share) is provided.
   */
  readonly quotaBytes?: number
  /** How long output is kept after the observed exit; reads never extend it. 24 hours by default. */
  readonly ttlMillis?: number
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
}

const defaults = {
  captureLimitBytes: 4 * 1024 * 1024,
  quotaBytes: 128 * 1024 * 1024,
  ttlMillis: 24 * 60 * 60 * 1000,
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
export const MIN_PAGE_BYTES = 4

/** Who acts: the principal and the channel (conversation, session) it acts from. */
export interface Caller {
  readonly owner: string
  readonly channel: string
}

/** What a job is started with. */
export interface StartRequest {
  /** The program, or with `shell` a whole shell line run by `/bin/sh -c`. */
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly shell?: boolean | undefined
  readonly cwd?: string | undefined
  /** Variables added to the host's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** "pipe" keeps stdin open for `writeStdin`; closed by default, so programs that read it see its end. */
  readonly stdin?: "pipe" | "closed" | undefined
}

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
}

/** What an authorizer is asked about. */
export type Action = "poll" | "wait" | "list" | "stdin" | "signal" | "cancel"

/** What an authorizer sees of a job. */
export interface JobInfo {
  readonly pid: number
  readonly generation: string
  readonly owner: string
  readonly channel: string
  readonly command: string
}

/**
 * Decides, on every action, whether a caller may act on a job. The manager
 * checks owner and channel itself first; this is where a host revokes access.
 */
export class ProcessAuthorizer extends Context.Tag("@spillway/core/ProcessAuthorizer")<
  ProcessAuthorizer,
  { readonly allow: (caller: Caller, job: JobInfo, action: Action) => Effect.Effect<boolean> }
>() {}

/** An authorizer that adds nothing to the owner and channel checks. */
export const allowOwners: Layer.Layer<ProcessAuthorizer> = Layer.succeed(ProcessAuthorizer, {
  allow: () => Effect.succeed(true)
})

/** No job by that pid (never started here, or expired and removed). */
export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", { pid: Schema.Number }) {
  override get message() {
    return `no job with pid ${this.pid}: it was not started here, or it expired and was removed; list your jobs to see which exist`
  }
}

/** The caller may not act on this job. */
export class ProcessAccessDenied extends Schema.TaggedError<ProcessAccessDenied>()("ProcessAccessDenied", {
  pid: Schema.Number,
  action: Schema.String
}) {
  override get message() {
    return `you may not ${this.action} job ${this.pid}; knowing its pid or holding a cursor is not permission`
  }
}

/** The job's output has expired. */
export class JobExpired extends Schema.TaggedError<JobExpired>()("JobExpired", {
  pid: Schema.Number,
  expiresAt: Schema.String
}) {
  override get message() {
    return `the output of job ${this.pid} expired at ${this.expiresAt}; run the command again if you still need it`
  }
}

/** The job was restored after a restart: it can be read, not driven. */
export class JobReadOnly extends Schema.TaggedError<JobReadOnly>()("JobReadOnly", {
  pid: Schema.Number,
  action: Schema.String
}) {
  override get message() {
    return `job ${this.pid} was restored after a restart and is read-only: its output can be polled, but it takes no ${this.action}`
  }
}

/** The job has ended, so it takes no stdin and no signal. */
export class JobNotRunning extends Schema.TaggedError<JobNotRunning>()("JobNotRunning", {
  pid: Schema.Number,
  action: Schema.String
}) {
  override get message() {
    return `job ${this.pid} is no longer running, so it takes no ${this.action}; poll it for its output`
  }
}

/** The job's stdin is closed (it was started without one, or it was closed). */
export class StdinClosed extends Schema.TaggedError<StdinClosed>()("StdinClosed", { pid: Schema.Number }) {
  override get message() {
    return `the stdin of job ${this.pid} is closed; start a job with stdin "pipe" to write to it`
  }
}

/** A request the manager cannot carry out as given. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** A cursor that belongs to another job: an earlier one with the same pid, or one already removed. */
export class StaleCursor extends Schema.TaggedError<StaleCursor>()("StaleCursor", { pid: Schema.Number }) {
  override get message() {
    return `this cursor does not belong to the current job ${this.pid} (an earlier job with that pid, or one whose output is gone); poll without a cursor for a current one`
  }
}

/** The command could not be started. */
export class SpawnFailed extends Schema.TaggedError<SpawnFailed>()("SpawnFailed", {
  command: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `cannot start ${this.command}: ${this.reason}`
  }
}

/** The spool could not be created or read. */
export class SpoolFailed extends Schema.TaggedError<SpoolFailed>()("SpoolFailed", { reason: Schema.String }) {
  override get message() {
    return `the job's output spool failed: ${this.reason}`
  }
}

/** Everything a read can fail with. */
export type ReadError =
  | JobNotFound
  | ProcessAccessDenied
  | JobExpired
  | InvalidRequest
  | StaleCursor
  | SpoolFailed
  | Cursor.CursorError
  | Envelope.EnvelopeTooSmall

/** Everything a control action can fail with. */
export type ControlError = JobNotFound | ProcessAccessDenied | JobExpired | JobReadOnly | JobNotRunning | StdinClosed | InvalidRequest

/** Starting jobs. */
export interface SpawnService {
  readonly start: (caller: Caller, request: StartRequest) => Effect.Effect<Started, SpawnFailed | SpoolFailed | InvalidRequest>
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

/** The capability to start jobs. */
export class ProcessSpawn extends Context.Tag("@spillway/core/ProcessSpawn")<ProcessSpawn, SpawnService>() {}

/** The capability to read jobs. */
export class ProcessRead extends Context.Tag("@spillway/core/ProcessRead")<ProcessRead, ReadService>() {}

/** The capability to drive jobs. */
export class ProcessControl extends Context.Tag("@spillway/core/ProcessControl")<ProcessControl, ControlService>() {}

/** Signals a caller may send. */
export const SIGNALS: ReadonlyArray<string> = [
  "SIGTERM",
  "SIGKILL",
  "SIGINT",
  "SIGHUP",
  "SIGQUIT",
  "SIGUSR1",
  "SIGUSR2",
  "SIGSTOP",
  "SIGCONT"
]

interface Job {
  readonly generation: string
  readonly pid: number
  readonly owner: string
  readonly channel: string
  readonly command: string
  readonly spool: string
  readonly startedAt: number
  readonly restored: boolean
  state: ProcessView.State
  exitedAt: number | undefined
  exitCode: number | undefined
  signal: string | undefined
  /** Raw bytes the job wrote. */
  emitted: number
  /** Masked bytes the masker has let out (length-preserving, so a source offset too). */
  maskedOut: number
  /** Masked bytes written to the spool. */
  spooled: number
  /** The last bytes of the spool (up to 3), to find a partial code point at its end. */
  last: Uint8Array
  /** The whole masked output while it is small. */
  memory: Array<Uint8Array> | undefined
  captureError: string | undefined
  /** True once the stream has ended and the masker has let out everything. */
  settled: boolean
  /** Completed (and replaced) when output is spooled or the job ends. */
  changed: Deferred.Deferred<void>
  /** Completed when the job has ended and all its output is in. */
  ended: Deferred.Deferred<void>
  savedAt: number
  process: CommandExecutor.Process | undefined
  stdin: Queue.Queue<Uint8Array | null> | undefined
  scope: Scope.CloseableScope | undefined
}

const iso = (ms: number) => new Date(ms).toISOString()

const signalOf = (error: unknown): string | undefined => {
  const e = error as { message?: unknown; description?: unknown; cause?: unknown }
  const text = [e.message, e.description, (e.cause as { message?: unknown } | undefined)?.message].map(String).join(" ")
  return /signal: (SIG[A-Z0-9]+)/.exec(text)?.[1]
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(parts)

/** Builds the manager: restores recorded jobs, and sweeps expired ones in the background. */
export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const o = { ...defaults, ...options }
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const executor = yield* CommandExecutor.CommandExecutor
    const manifests = yield* ProcessManifests
    const masker = yield* Secrets
    const authorizer = yield* ProcessAuthorizer
    const key = yield* Cursor.CursorKey
    const scope = yield* Effect.scope
    const budget = { limit: o.budgetChars }
    const durable = o.directory !== undefined
    const spoolKind = durable ? "durable" as const : "temporary" as const
    const directory = o.directory !== undefined
      ? path.resolve(o.directory)
      : yield* fs.makeTempDirectoryScoped({ prefix: "spillway-spool-" }).pipe(Effect.orDie)
    if (durable) yield* fs.makeDirectory(directory, { recursive: true, mode: 0o700 }).pipe(Effect.orDie)
    const spoolPath = (job: { readonly spool: string }) => path.join(directory, job.spool)

    const jobs = new Map<string, Job>()
    const byPid = new Map<number, string>()
    // the quota remote starts share, when the host provides one; a private one otherwise
    const quota = Option.getOrElse(yield* Effect.serviceOption(RetentionQuota.RetentionQuota), () => RetentionQuota.make(o.quotaBytes))

    const cursorAt = (job: Job, offset: number) =>
      Effect.runSync(Effect.provideService(
        Cursor.encode({ tool: TOOL, evidence: String(job.pid), offset, unit: "byte", generation: job.generation }),
        Cursor.CursorKey,
        key
      ))

    const notify = (job: Job) => {
      const d = job.changed
      job.changed = Deferred.unsafeMake<void>(FiberId.none)
      Deferred.unsafeDone(d, Exit.void)
    }

    const expiresAt = (job: Job): number | undefined =>
      job.exitedAt !== undefined ? job.exitedAt + o.ttlMillis : job.state === "unknown" ? job.startedAt + o.ttlMillis : undefined

    const manifestOf = (job: Job): JobManifest => ({
      generation: job.generation,
      pid: job.pid,
      owner: job.owner,
      channel: job.channel,
      command: job.command,
      spool: job.spool,
      startedAt: job.startedAt,
      exitedAt: job.exitedAt,
      exitCode: job.exitCode,
      signal: job.signal,
      emittedBytes: job.emitted,
      spooledBytes: job.spooled,
      captureError: job.captureError
    })

    const save = (job: Job) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        job.savedAt = now
        return manifests.save(manifestOf(job)).pipe(
          Effect.catchAll((e) => Effect.logWarning(`process job ${job.pid}: its record was not saved: ${e.message}`))
        )
      })

    // Restore recorded jobs, read-only: their spools are read as they are on disk.
    for (const m of yield* manifests.list.pipe(Effect.orDie)) {
      const size = yield* fs.stat(spoolPath(m)).pipe(
        Effect.map((info) => Number(info.size)),
        Effect.orElseSucceed(() => -1)
      )
      if (size < 0) {
        yield* Effect.ignore(manifests.remove(m.generation))
        continue
      }
      const last = size === 0 ? new Uint8Array(0) : yield* readRange(fs, spoolPath(m), Math.max(0, size - 3), Math.min(3, size)).pipe(
        Effect.orElseSucceed(() => new Uint8Array(0))
      )
      const job: Job = {
        generation: m.generation,
        pid: m.pid,
        owner: m.owner,
        channel: m.channel,
        command: m.command,
        spool: m.spool,
        startedAt: m.startedAt,
        restored: true,
        state: m.exitedAt !== undefined ? "exited" : "unknown",
        exitedAt: m.exitedAt,
        exitCode: m.exitCode,
        signal: m.signal,
        emitted: Math.max(m.emittedBytes, size),
        maskedOut: size,
        spooled: size,
        last,
        memory: undefined,
        captureError: m.captureError,
        settled: true,
        changed: Deferred.unsafeMake<void>(FiberId.none),
        ended: Deferred.unsafeMake<void>(FiberId.none),
        savedAt: 0,
        process: undefined,
        stdin: undefined,
        scope: undefined
      }
      Deferred.unsafeDone(job.ended, Exit.void)
      jobs.set(job.generation, job)
      byPid.set(job.pid, job.generation)
      quota.hold(size)
    }

    /** The readable prefix: the spool, less a code point more bytes could still complete. */
    const readable = (job: Job): number => {
      const whole = job.settled && job.captureError === undefined && job.spooled === job.emitted
      return whole ? job.spooled : job.spooled - Utf8.incompleteSuffix(job.last)
    }

    const accounting = (job: Job): ProcessView.Accounting => ({
      emitted: job.emitted,
      retained: readable(job),
      captureLimitLoss: Math.max(0, job.emitted - o.captureLimitBytes),
      captureError: job.captureError
    })

    const statusOf = (job: Job): ProcessView.JobStatus => ({ state: job.state, exitCode: job.exitCode, signal: job.signal })

    /**
     * Writes spool parts behind the drain: while one write is in flight the
     * next parts queue up and go out together, so a flood is written in large
     * batches and a trickle at once. The queue is bounded, which holds the
     * drain (and so the child's pipe) back when the disk falls behind.
     */
    const writer = (job: Job, file: FileSystem.File) =>
      Effect.gen(function*() {
        const queue = yield* Queue.bounded<Uint8Array | null>(64)
        // after a failed write nothing more is written: the spool must stay one contiguous prefix
        let failed = false
        const fiber = yield* Effect.fork(Effect.gen(function*() {
          for (;;) {
            const parts = [...(yield* Queue.takeBetween(queue, 1, Number.POSITIVE_INFINITY))]
            const end = parts.indexOf(null)
            const batch = (end === -1 ? parts : parts.slice(0, end)) as Array<Uint8Array>
            if (batch.length > 0) {
              const bytes = batch.length === 1 ? batch[0]! : concat(batch)
              if (failed) quota.give(bytes.length)
              else {
                yield* file.writeAll(bytes).pipe(
                  Effect.map(() => {
                    job.spooled += bytes.length
                    const tail = job.last.length + bytes.length <= 3 ? concat([job.last, bytes]) : bytes.subarray(Math.max(0, bytes.length - 3))
                    job.last = Uint8Array.from(tail.subarray(Math.max(0, tail.length - 3)))
                  }),
                  Effect.catchAll((e) =>
                    Effect.sync(() => {
                      failed = true
                      quota.give(bytes.length)
                      job.captureError = `writing the spool failed (${e.message}); later output is counted, not kept`
                    })
                  )
                )
                notify(job)
              }
            }
            if (end !== -1) return
          }
        }))
        return {
          write: (part: Uint8Array) => Queue.offer(queue, part),
          /** Waits until everything queued is written. */
          flush: Effect.zipRight(Queue.offer(queue, null), Fiber.join(fiber))
        }
      })

    type Writer = Effect.Effect.Success<ReturnType<typeof writer>>

    /** Takes masked output the masker let out: keeps it in memory while small, and spools what the limit and quota allow. */
    const accept = (job: Job, spool: Writer, out: Uint8Array) =>
      Effect.suspend(() => {
        const start = job.maskedOut
        job.maskedOut += out.length
        if (job.memory !== undefined) {
          if (job.maskedOut <= o.smallStreamBytes) job.memory.push(Uint8Array.from(out))
          else job.memory = undefined
        }
        if (job.captureError !== undefined || out.length === 0) return Effect.void
        // bytes queued for the spool end where the masker's output had reached
        const want = Math.min(out.length, Math.max(0, o.captureLimitBytes - start))
        const take = quota.take(want)
        if (take < want) {
          job.captureError = `the ${quota.limit}-byte retention quota is used up; later output is counted, not kept`
        }
        if (take === 0) return Effect.void
        // the masker's output is a fresh buffer each time, so it is queued as it is
        return spool.write(out.subarray(0, take))
      })

    const onChunk = (job: Job, stream: ReturnType<typeof masker.stream>, spool: Writer) => (chunk: Uint8Array) =>
      Effect.gen(function*() {
        job.emitted += chunk.length
        // past the limit nothing more is kept (but a small stream's copy in memory), so nothing more needs masking
        if (job.maskedOut < o.captureLimitBytes || job.memory !== undefined) yield* accept(job, spool, stream.push(chunk))
        const now = yield* Clock.currentTimeMillis
        if (now - job.savedAt >= o.saveEveryMillis) yield* save(job)
        notify(job)
      })

    const terminate = (process: CommandExecutor.Process) =>
      process.kill("SIGTERM").pipe(
        Effect.timeout(Duration.millis(o.killGraceMillis)),
        Effect.catchAll(() => process.kill("SIGKILL").pipe(Effect.timeout(Duration.millis(o.killGraceMillis)))),
        Effect.ignore
      )

    const start = (caller: Caller, request: StartRequest) =>
      Effect.gen(function*() {
        if (typeof request.command !== "string" || request.command.trim() === "") {
          return yield* new InvalidRequest({ reason: "command must be a non-empty string" })
        }
        const shown = masker.maskText(
          request.shell === true ? request.command : [request.command, ...(request.args ?? [])].join(" ")
        )
        const generation = randomBytes(12).toString("base64url")
        const spool = `${generation}.spool`
        const jobScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
        const fail = <E>(e: E) =>
          Effect.zipRight(Scope.close(jobScope, Exit.void), Effect.zipRight(Effect.ignore(fs.remove(path.join(directory, spool))), Effect.fail(e)))
        const file = yield* fs.open(path.join(directory, spool), { flag: "wx", mode: 0o600 }).pipe(
          Scope.extend(jobScope),
          Effect.catchAll((e) => fail(new SpoolFailed({ reason: e.message })))
        )
        const stdin = request.stdin === "pipe" ? yield* Queue.unbounded<Uint8Array | null>() : undefined
        let command = request.shell === true
          ? Command.make("/bin/sh", "-c", request.command)
          : Command.make(request.command, ...(request.args ?? []))
        command = Command.stdin(
          command,
          stdin !== undefined
            ? Stream.fromQueue(stdin).pipe(Stream.takeWhile((c) => c !== null), Stream.map((c) => c!))
            : Stream.empty
        )
        if (request.cwd !== undefined) command = Command.workingDirectory(command, request.cwd)
        if (request.env !== undefined) command = Command.env(command, request.env)
        const process = yield* executor.start(command).pipe(
          Scope.extend(jobScope),
          Effect.catchAll((e) => fail(new SpawnFailed({ command: shown, reason: e.message })))
        )
        // runs before the executor's own release, which sends SIGTERM and waits with no SIGKILL after it
        yield* Scope.addFinalizer(
          jobScope,
          Effect.flatMap(process.isRunning, (running) => running ? terminate(process) : Effect.void).pipe(Effect.ignore)
        )
        const now = yield* Clock.currentTimeMillis
        const job: Job = {
          generation,
          pid: process.pid,
          owner: caller.owner,
          channel: caller.channel,
          command: shown,
          spool,
          startedAt: now,
          restored: false,
          state: "running",
          exitedAt: undefined,
          exitCode: undefined,
          signal: undefined,
          emitted: 0,
          maskedOut: 0,
          spooled: 0,
          last: new Uint8Array(0),
          memory: [],
          captureError: undefined,
          settled: false,
          changed: Deferred.unsafeMake<void>(FiberId.none),
          ended: Deferred.unsafeMake<void>(FiberId.none),
          savedAt: now,
          process,
          stdin,
          scope: jobScope
        }
        jobs.set(generation, job)
        byPid.set(job.pid, generation)
        // drain first: Node discards the output of a child that exits before anyone reads its pipes
        yield* Effect.forkIn(
          run(job, process, file).pipe(
            // a manager that shuts down first records what it knows; the exit stays unobserved
            Effect.onInterrupt(() => save(job)),
            Effect.ensuring(Scope.close(jobScope, Exit.void))
          ),
          scope
        )
        yield* save(job)
        return { pid: job.pid, generation, command: shown, started_at: iso(now), spool: spoolKind } satisfies Started
      })

    /** Drains both pipes into the spool until the job exits and its pipes end (or the drain grace passes). */
    const run = (job: Job, process: CommandExecutor.Process, file: FileSystem.File) =>
      Effect.gen(function*() {
        const stream = masker.stream()
        const spool = yield* writer(job, file)
        // two drains, one lock: Stream.merge would cost twice the time of reading the pipes
        const lock = yield* Effect.makeSemaphore(1)
        const handle = onChunk(job, stream, spool)
        const take = (chunk: Uint8Array) => lock.withPermits(1)(handle(chunk))
        const drain = yield* Effect.all(
          [Stream.runForEach(process.stdout, take), Stream.runForEach(process.stderr, take)],
          { concurrency: 2, discard: true }
        ).pipe(
          Effect.catchAll((e) => Effect.sync(() => void (job.captureError ??= `reading the job's output failed: ${e.message}`))),
          Effect.fork
        )
        const exit = yield* Effect.either(process.exitCode)
        const now = yield* Clock.currentTimeMillis
        yield* Fiber.join(drain).pipe(
          Effect.timeout(Duration.millis(o.drainGraceMillis)),
          Effect.catchAll(() => Fiber.interrupt(drain))
        )
        if (job.maskedOut < o.captureLimitBytes || job.memory !== undefined) yield* accept(job, spool, stream.end())
        yield* spool.flush
        if (job.stdin !== undefined) yield* Queue.shutdown(job.stdin)
        job.state = "exited"
        job.exitedAt = now
        if (Either.isRight(exit)) job.exitCode = exit.right
        else job.signal = signalOf(exit.left) ?? "unknown"
        job.settled = true
        job.process = undefined
        yield* save(job)
        notify(job)
        Deferred.unsafeDone(job.ended, Exit.void)
      })

    const info = (job: Job): JobInfo => ({
      pid: job.pid,
      generation: job.generation,
      owner: job.owner,
      channel: job.channel,
      command: job.command
    })

    const check = (caller: Caller, job: Job, action: Action) =>
      Effect.gen(function*() {
        if (job.owner !== caller.owner || job.channel !== caller.channel || !(yield* authorizer.allow(caller, info(job), action))) {
          return yield* new ProcessAccessDenied({ pid: job.pid, action })
        }
        const expires = expiresAt(job)
        if (expires !== undefined && (yield* Clock.currentTimeMillis) >= expires) {
          return yield* new JobExpired({ pid: job.pid, expiresAt: iso(expires) })
        }
        return job
      })

    const find = (caller: Caller, pid: number, action: Action) =>
      Effect.gen(function*() {
        const generation = byPid.get(pid)
        const job = generation === undefined ? undefined : jobs.get(generation)
        if (job === undefined) return yield* new JobNotFound({ pid })
        return yield* check(caller, job, action)
      })

    const readSpool = (job: Job, offset: number, length: number) =>
      readRange(fs, spoolPath(job), offset, length).pipe(Effect.mapError((e) => new SpoolFailed({ reason: e.message })))

    const next = (job: Job) =>
      `manage_process action=poll pid=${job.pid} cursor=<cursor> reads the retained output from its start; follow next_cursor until truncated is false`

    const statusView = (job: Job, wait?: ProcessView.WaitOutcome) =>
      Effect.gen(function*() {
        const a = accounting(job)
        const clipped = a.emitted > o.captureLimitBytes || a.captureError !== undefined
        let tail: ProcessView.StatusInput["tail"]
        if (!clipped) {
          const window = Math.min(a.retained, o.budgetChars * 4 + 4)
          tail = { bytes: yield* readSpool(job, a.retained - window, window), start: a.retained - window }
        } else if (job.settled && job.memory !== undefined && job.maskedOut === job.emitted) {
          // a complete small stream: its true tail is in memory, in emitted coordinates
          tail = { bytes: concat(job.memory), start: 0 }
        } else tail = "withheld"
        const expires = expiresAt(job)
        return yield* ProcessView.statusView({
          pid: job.pid,
          status: statusOf(job),
          accounting: a,
          spool: job.restored ? "durable" : spoolKind,
          expiresAt: expires !== undefined ? iso(expires) : undefined,
          wait,
          cursor: cursorAt(job, 0),
          next: next(job),
          tail,
          maxLines: o.statusLines,
          budget
        })
      })

    const pageAt = (job: Job, offset: number, limit: number) =>
      Effect.gen(function*() {
        const a = accounting(job)
        if (offset > a.retained) {
          return yield* new InvalidRequest({
            reason: `offset ${offset} is past the ${a.retained} retained bytes of job ${job.pid}; poll with offset 0 for its status`
          })
        }
        const before = Math.min(3, offset)
        const bytes = yield* readSpool(job, offset - before, before + Math.min(limit + 3, a.retained - offset))
        if (!Utf8.isByteBoundary(bytes, before)) {
          const at = offset - before + Utf8.byteBoundary(bytes, before)
          return yield* new InvalidRequest({
            reason: `offset ${offset} falls inside a multi-byte character; start at ${at} instead`
          })
        }
        return yield* ProcessView.page({
          pid: job.pid,
          status: statusOf(job),
          accounting: a,
          offset,
          bytes: bytes.subarray(before),
          limit,
          cursorAt: (n) => cursorAt(job, n),
          budget
        })
      })

    const offsetOf = (offset: PollRequest["offset"]): Either.Either<number, InvalidRequest> => {
      if (offset === undefined || offset === null) return Either.right(0)
      const text = typeof offset === "string" ? offset.trim() : undefined
      if (text === "") return Either.right(0)
      const n = text !== undefined ? (/^\d+$/.test(text) ? Number(text) : NaN) : offset
      return Number.isSafeInteger(n) && (n as number) >= 0
        ? Either.right(n as number)
        : Either.left(new InvalidRequest({ reason: `offset must be a whole number of bytes, 0 or more; got ${JSON.stringify(offset)}` }))
    }

    const limitOf = (limit: PollRequest["limit"]): Either.Either<number, InvalidRequest> => {
      if (limit === undefined || limit === null) return Either.right(o.defaultPageBytes)
      return Number.isSafeInteger(limit) && limit >= MIN_PAGE_BYTES && limit <= o.maxPageBytes
        ? Either.right(limit)
        : Either.left(new InvalidRequest({ reason: `limit must be a whole number from ${MIN_PAGE_BYTES} to ${o.maxPageBytes}; got ${limit}` }))
    }

    const poll = (caller: Caller, request: PollRequest) =>
      Effect.gen(function*() {
        const job = yield* find(caller, request.pid, "poll")
        const limit = yield* limitOf(request.limit)
        if (typeof request.cursor === "string" && request.cursor !== "") {
          const position = yield* Effect.provideService(
            Cursor.decode(request.cursor, { tool: TOOL, unit: "byte" }),
            Cursor.CursorKey,
            key
          )
          if (position.generation !== job.generation || position.evidence !== String(job.pid)) {
            return yield* new StaleCursor({ pid: request.pid })
          }
          return yield* pageAt(job, position.offset, limit)
        }
        const offset = yield* offsetOf(request.offset)
        return offset === 0 ? yield* statusView(job) : yield* pageAt(job, offset, limit)
      })

    /** The first line at or after `from` (a line start) that matches, scanning up to the readable end. */
    const scan = (job: Job, matcher: Grep.Matcher, state: { from: number; line: number }) =>
      Effect.gen(function*() {
        const end = readable(job)
        while (state.from < end) {
          const bytes = yield* readSpool(job, state.from, Math.min(1024 * 1024, end - state.from))
          let lineStart = 0
          for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, lineStart)) {
            const text = Utf8.decodeLossy(bytes.subarray(lineStart, nl))
            if (matcher.test(text)) return { line: state.line, text: Utf8.takeCodePoints(text, 200) }
            state.line++
            lineStart = nl + 1
          }
          const whole = state.from + bytes.length === end && job.settled
          if (whole && lineStart < bytes.length) {
            const text = Utf8.decodeLossy(bytes.subarray(lineStart))
            state.from = end
            if (matcher.test(text)) return { line: state.line, text: Utf8.takeCodePoints(text, 200) }
            return undefined
          }
          if (lineStart === 0 && bytes.length === 1024 * 1024) {
            // one line longer than a block: test what there is, then go on after it
            const text = Utf8.decodeLossy(bytes)
            state.from += bytes.length
            if (matcher.test(text)) return { line: state.line, text: Utf8.takeCodePoints(text, 200) }
            continue
          }
          state.from += lineStart
          if (lineStart === 0) break
        }
        return undefined
      })

    const wait = (caller: Caller, request: WaitRequest) =>
      Effect.gen(function*() {
        const job = yield* find(caller, request.pid, "wait")
        if (!Number.isFinite(request.timeoutMillis) || request.timeoutMillis < 0) {
          return yield* new InvalidRequest({ reason: "timeout must be a number of milliseconds, 0 or more" })
        }
        const matcher = request.pattern === undefined
          ? undefined
          : yield* Grep.compile(request.pattern, { ignoreCase: request.ignoreCase }).pipe(
            Either.mapLeft((e) => new InvalidRequest({ reason: e.message }))
          )
        const began = yield* Clock.currentTimeMillis
        const state = { from: 0, line: 1 }
        let outcome: ProcessView.WaitOutcome | undefined
        while (outcome === undefined) {
          const changed = job.changed
          const now = yield* Clock.currentTimeMillis
          const running = job.state === "running"
          const match = matcher !== undefined ? yield* scan(job, matcher, state) : undefined
          if (match !== undefined) outcome = { ended_by: "match", waited_ms: now - began, match }
          // the job may end while the scan reads: then its last lines are scanned once more above
          else if (job.state !== "running" && !running) outcome = { ended_by: "exit", waited_ms: now - began }
          else if (now - began >= request.timeoutMillis) outcome = { ended_by: "timeout", waited_ms: now - began }
          else {
            // without a pattern, only the end matters: output does not wake the wait
            yield* Deferred.await(matcher !== undefined ? changed : job.ended).pipe(
              Effect.timeoutOption(Duration.millis(request.timeoutMillis - (now - began)))
            )
          }
        }
        // access may have been revoked while waiting
        yield* check(caller, job, "wait")
        return yield* statusView(job, outcome)
      })

    const list = (caller: Caller) =>
      Effect.gen(function*() {
        const out: Array<JobSummary> = []
        for (const job of jobs.values()) {
          if (byPid.get(job.pid) !== job.generation) continue
          if (Either.isLeft(yield* Effect.either(check(caller, job, "list")))) continue
          out.push({
            pid: job.pid,
            command: job.command,
            status: job.state,
            ...(job.exitCode !== undefined ? { exit_code: job.exitCode } : {}),
            ...(job.signal !== undefined ? { signal: job.signal } : {}),
            started_at: iso(job.startedAt),
            emitted_bytes: job.emitted,
            read_only: job.restored,
            generation: job.generation
          })
        }
        return out
      })

    const live = (caller: Caller, pid: number, action: Action) =>
      Effect.gen(function*() {
        const job = yield* find(caller, pid, action)
        if (job.restored) return yield* new JobReadOnly({ pid, action })
        if (job.state !== "running" || job.process === undefined) return yield* new JobNotRunning({ pid, action })
        return { job, process: job.process }
      })

    const writeStdin = (caller: Caller, pid: number, data: string | Uint8Array) =>
      Effect.gen(function*() {
        const { job } = yield* live(caller, pid, "stdin")
        if (job.stdin === undefined || (yield* Queue.isShutdown(job.stdin))) return yield* new StdinClosed({ pid })
        yield* Queue.offer(job.stdin, typeof data === "string" ? Utf8.encode(data) : Uint8Array.from(data))
      })

    const closeStdin = (caller: Caller, pid: number) =>
      Effect.gen(function*() {
        const { job } = yield* live(caller, pid, "stdin")
        if (job.stdin === undefined || (yield* Queue.isShutdown(job.stdin))) return yield* new StdinClosed({ pid })
        yield* Queue.offer(job.stdin, null)
      })

    const signal = (caller: Caller, pid: number, name: string) =>
      Effect.gen(function*() {
        if (!SIGNALS.includes(name)) {
          return yield* new InvalidRequest({ reason: `signal must be one of ${SIGNALS.join(", ")}; got ${JSON.stringify(name)}` })
        }
        const { job, process } = yield* live(caller, pid, "signal")
        // the executor's kill waits for the exit, which a signal need not cause
        yield* Effect.forkIn(Effect.ignore(process.kill(name as CommandExecutor.Signal)), job.scope ?? scope)
      })

    const cancel = (caller: Caller, pid: number) =>
      Effect.gen(function*() {
        const { job, process } = yield* live(caller, pid, "cancel")
        yield* terminate(process)
        yield* Deferred.await(job.ended)
      })

    /** Removes the spools and records of expired jobs; returns how many. */
    /** Forgets a job that has ended: its spool, its record and its room in the quota. */
    const drop = (job: Job) =>
      Effect.gen(function*() {
        yield* Effect.ignore(fs.remove(spoolPath(job)))
        yield* Effect.ignore(manifests.remove(job.generation))
        jobs.delete(job.generation)
        if (byPid.get(job.pid) === job.generation) byPid.delete(job.pid)
        quota.give(job.spooled)
      })

    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      let removed = 0
      for (const job of [...jobs.values()]) {
        const expires = expiresAt(job)
        if (expires === undefined || now < expires) continue
        yield* drop(job)
        removed++
      }
      return removed
    })

    /** Removes an ended job's output before it expires (its owner is done with it); a running job is refused. */
    const remove = (caller: Caller, pid: number) =>
      Effect.gen(function*() {
        const job = yield* find(caller, pid, "cancel")
        if (job.state === "running") return yield* new InvalidRequest({ reason: `job ${pid} is still running; cancel it first` })
        yield* drop(job)
      })

    yield* Effect.forkIn(Effect.repeat(sweep, Schedule.spaced(Duration.millis(o.sweepEveryMillis))), scope)

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
      /** Bytes all spools hold. */
      quotaUsed: Effect.sync(() => quota.usage().used)
    }
  })

/** Reads `length` bytes from `offset` of a file (fewer at its end). */
const readRange = (fs: FileSystem.FileSystem, file: string, offset: number, length: number) =>
  Effect.scoped(Effect.gen(function*() {
    if (length <= 0) return new Uint8Array(0)
    const handle = yield* fs.open(file, { flag: "r" })
    yield* handle.seek(offset, "start")
    const parts: Array<Uint8Array> = []
    let got = 0
    while (got < length) {
      const chunk = yield* handle.readAlloc(length - got)
      if (Option.isNone(chunk) || chunk.value.length === 0) break
      parts.push(chunk.value)
      got += chunk.value.length
    }
    return parts.length === 1 ? parts[0]! : concat(parts)
  }))

/** The whole manager, as `make` builds it. */
export type Manager = Effect.Effect.Success<ReturnType<typeof make>>

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
