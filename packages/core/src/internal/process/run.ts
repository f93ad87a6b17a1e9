import { Cause, Clock, Deferred, Effect, ExecutionStrategy, Exit, Scope } from "effect"
import type * as Access from "../../Access.js"
import type * as Body from "../../Body.js"
import * as Child from "../../Child.js"
import { InvalidRequest, type StoreFailed } from "../../Errors.js"
import type { Origin } from "../../Manifests.js"
import type * as Secrets from "../../Secrets.js"
import { copyOf, randomId } from "../bytes.js"
import * as Failures from "./failures.js"
import { type Context, type Job, make as makeJob, notify } from "./job.js"
import * as Tail from "./tail.js"

/** What a job is started with. @internal */
export interface StartRequest {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly shell?: boolean | undefined
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly stdin?: "pipe" | "closed" | undefined
  /**
   * "whole" keeps all the job's output in its body (up to the spill profile's
   * per-file limit, in the spill pool), so `readSpill` and `grepSpill` reach
   * every line; by default the head and a window of the newest output.
   */
  readonly keep?: "head-and-tail" | "whole" | undefined
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The job's facts as its manifest records them. @internal */
export const originOf = (job: Job): Origin => ({
  _tag: "Job",
  pid: job.pid,
  generation: job.generation,
  command: job.command,
  exitedAt: job.exitedAt ?? null,
  exitCode: job.exitCode ?? null,
  signal: job.signal ?? null,
  ...(job.startMark !== undefined ? { startMark: job.startMark } : {})
})

/** Records a running job's progress in its manifest; a failure is logged, never fatal to the job. @internal */
export const save = (job: Job) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    job.savedAt = now
    if (job.writer === undefined) return Effect.void
    return job.writer.save({ status: "running", origin: originOf(job) }).pipe(
      Effect.catchAll((e) => Effect.logWarning(`process job ${job.pid}: its record was not saved: ${e.message}`))
    )
  })

/**
 * Starts a job: the child first (its output waits for the spool), then its
 * spool, a body of the spool profile that masks every byte as it comes, keeps
 * the first `captureLimitBytes` and is readable while it grows. @internal
 */
export const start = (
  ctx: Context,
  runner: Child.Service,
  masker: Secrets.Masker,
  scope: Scope.Scope,
  caller: Access.Caller,
  request: StartRequest
): Effect.Effect<{ readonly job: Job; readonly startedAt: string }, Child.SpawnFailed | StoreFailed | InvalidRequest> =>
  Effect.gen(function*() {
    if (typeof request.command !== "string" || request.command.trim() === "") {
      return yield* new InvalidRequest({ argument: "command", reason: "must be a non-empty string" })
    }
    const shown = masker.maskText(request.shell === true ? request.command : [request.command, ...(request.args ?? [])].join(" "))
    const generation = randomId(12)
    const jobScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const fail = <E>(e: E) => Effect.zipRight(Scope.close(jobScope, Exit.void), Effect.fail(e))
    const ready = yield* Deferred.make<Job>()
    const onOutput = (chunk: Uint8Array, source: Child.Source) =>
      Effect.flatMap(Deferred.await(ready), (job) =>
        Effect.gen(function*() {
          // stdout and stderr are masked each on its own before they meet in the spool
          yield* job.writer!.write(chunk, source)
          const now = yield* Clock.currentTimeMillis
          if (now - job.savedAt >= ctx.limits.saveEveryMillis) yield* save(job)
          notify(job)
        }))
    const running = yield* runner.start(
      { command: request.command, args: request.args, shell: request.shell, cwd: request.cwd, env: request.env, stdin: request.stdin },
      onOutput,
      { killGraceMillis: ctx.limits.killGraceMillis, drainGraceMillis: ctx.limits.drainGraceMillis }
    ).pipe(Scope.extend(jobScope), Effect.catchAll((e) => fail(new Child.SpawnFailed({ command: shown, reason: e.reason }))))
    const now = yield* Clock.currentTimeMillis
    const whole = request.keep === "whole"
    const headLimit = whole ? ctx.wholeLimitBytes : ctx.limits.captureLimitBytes
    const job = makeJob({
      headLimit,
      whole,
      generation,
      pid: running.pid,
      owner: caller.owner,
      channel: caller.channel,
      command: shown,
      body: `job-${generation}.log`,
      startedAt: now,
      ...(running.startMark !== undefined ? { startMark: running.startMark } : {}),
      restored: false,
      running,
      scope: jobScope,
      // the head's failure lines are found as its masked output arrives
      failures: ctx.salience !== undefined ? Failures.head(ctx.salience, headLimit) : undefined
    })
    if (!whole && ctx.limits.tailBytes > 0) {
      // the window's room comes from the pool the spool's does, asked for as the window fills
      const room = yield* ctx.retention.reserve("spool", 0, { entry: false }).pipe(Effect.orElseSucceed(() => undefined))
      const free = () => {
        const u = ctx.retention.usage("spool")
        return u.limit - u.used - u.reserved
      }
      job.window = Tail.make(headLimit, ctx.limits.tailBytes, room, free)
    }
    const writer: Body.Writer = yield* ctx.bodies.create({
      profile: whole ? "spill" : "spool",
      name: job.body,
      owner: caller.owner,
      channel: caller.channel,
      channelBound: true,
      tool: "manage_process",
      status: "running",
      origin: originOf(job),
      createdAt: now,
      maxBytes: headLimit,
      cut: "byte",
      visible: true,
      onFailure: "keep-prefix",
      keepOnClose: true,
      onWritten: () => notify(job),
      // where the failure rules' literals begin, found in the pass that masks
      ...(ctx.salience !== undefined ? { watch: { literals: ctx.salience.literals, onMark: (p: number) => job.failures?.mark(p) } } : {}),
      // the window keeps the buffers past the head that the masker built in it, without a copy
      ...(job.window?.into !== undefined ? { maskInto: job.window.into } : {}),
      onMasked: (bytes, at, newlines) => {
        job.failures?.push(bytes, at, newlines)
        job.window?.push(bytes, at, newlines)
        if (job.memory === undefined) return
        // lent for the call only: what is kept is a copy
        if (at + bytes.length <= ctx.limits.smallStreamBytes) job.memory.push(copyOf(bytes))
        else job.memory = undefined
      }
    }).pipe(
      Scope.extend(jobScope),
      Effect.catchAll((e) => Effect.zipRight(Effect.ignore(running.terminate), fail(e._tag === "StoreFailed" ? e : new InvalidRequest({ argument: "request", reason: e.message }))))
    )
    job.writer = writer
    ctx.jobs.set(generation, job)
    ctx.byPid.set(job.pid, generation)
    yield* Deferred.succeed(ready, job)
    yield* Effect.forkIn(
      finish(ctx, job).pipe(
        // a manager that shuts down first records what it knows, the newest output with it; the exit stays unobserved
        Effect.onInterrupt(() => Effect.zipRight(save(job), keepWindow(ctx, job))),
        Effect.ensuring(Scope.close(jobScope, Exit.void))
      ),
      scope
    )
    yield* save(job)
    return { job, startedAt: iso(now) }
  })

/** Waits for the exit, seals the spool with how the job ended, and wakes every waiter. @internal */
const finish = (ctx: Context, job: Job) =>
  Effect.gen(function*() {
    const status = yield* job.running!.exit
    const now = yield* Clock.currentTimeMillis
    if (status.code !== null) job.exitCode = status.code
    else job.signal = status.signal ?? "unknown"
    // whatever the store does (a full disk, a database gone), the job is recorded as exited below, and expires
    yield* record(ctx, job, status, now).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning(`process job ${job.pid}: its end was not recorded: ${Cause.pretty(cause).split("\n")[0]}`))
    )
    job.exitedAt = now
    // the job counts as ended only once every byte is in the spool, so a view of an ended job is whole
    job.settled = true
    job.state = "exited"
    job.running = undefined
    notify(job)
    Deferred.unsafeDone(job.ended, Exit.void)
  })

/** Ends the spool, seals it with how the job ended, and keeps its window of newest output. */
const record = (ctx: Context, job: Job, status: Child.ExitStatus, now: number) =>
  Effect.gen(function*() {
    yield* job.writer!.end
    // every masked byte is in: the head's last line is judged too
    job.failures?.end()
    job.exitedAt = now
    const sealed = yield* Effect.either(job.writer!.seal({
      status: status.code !== null ? `exit ${status.code}` : `signal ${job.signal}`,
      origin: originOf(job),
      anchor: now
    }))
    if (sealed._tag === "Left") yield* Effect.logWarning(`process job ${job.pid}: its record was not sealed: ${sealed.left.message}`)
    yield* keepWindow(ctx, job)
  })

/**
 * Keeps the window of newest output as a body of its own once the job has
 * ended (or its manager stops): only when the output passed the head, and
 * only from a line start, so the dropped middle is stated exactly.
 */
const keepWindow = (ctx: Context, job: Job) =>
  Effect.gen(function*() {
    const window = job.window
    const view = window?.view()
    if (window === undefined || view === undefined || job.tail !== undefined) return
    const lines = window.lines() - view.fromLine + 1
    const headNewlines = window.headNewlines()
    // the window's room goes back to the pool, then the body reserves its own
    window.release()
    const kept = yield* Effect.scoped(Effect.gen(function*() {
      const w = yield* ctx.bodies.create({
        profile: "spool",
        name: job.body.replace(/\.log$/, ".tail.log"),
        owner: job.owner,
        channel: job.channel,
        channelBound: true,
        tool: "manage_process",
        status: "newest output",
        origin: { _tag: "JobTail", of: job.body, fromByte: view.fromByte, fromLine: view.fromLine, lineStart: view.lineStart, headNewlines },
        alreadyMasked: true,
        reserve: view.bytes.length
      })
      yield* w.write(view.bytes)
      return yield* w.seal({ anchor: job.exitedAt ?? job.startedAt })
    })).pipe(Effect.either)
    if (kept._tag === "Left") {
      yield* Effect.logWarning(`process job ${job.pid}: its newest output was not kept: ${kept.left.message}`)
      return
    }
    job.tail = {
      body: kept.right.id,
      fromByte: view.fromByte,
      fromLine: view.fromLine,
      lineStart: view.lineStart,
      headNewlines,
      bytes: kept.right.bytes,
      lines
    }
    job.window = undefined
  })
