import { Clock, Deferred, Effect } from "effect"
import type * as Access from "../../Access.js"
import * as Child from "../../Child.js"
import { InvalidRequest, NotFound } from "../../Errors.js"
import type { Manifest } from "../../Manifests.js"
import * as Utf8 from "../../Utf8.js"
import * as Job from "./job.js"

/** A request about a job that cannot be carried out as the job stands. @internal */
export const conflict = (pid: number, reason: string) => new InvalidRequest({ argument: "pid", reason: `job ${pid} ${reason}` })

/** The job, once `Access` lets the caller act on it. @internal */
export const check = (ctx: Job.Context, caller: Access.Caller, job: Job.Job, action: Access.Action) =>
  Effect.as(ctx.bodies.authorize(caller, Job.resourceOf(ctx, job), action), job)

/** The current job with a pid, for a caller allowed to act on it. @internal */
export const find = (ctx: Job.Context, caller: Access.Caller, pid: number, action: Access.Action) =>
  Effect.gen(function*() {
    const generation = ctx.byPid.get(pid)
    const job = generation === undefined ? undefined : ctx.jobs.get(generation)
    if (job === undefined) return yield* new NotFound({ resource: "job", id: String(pid) })
    return yield* check(ctx, caller, job, action)
  })

/** A job this manager runs now: not restored, not ended. @internal */
export const live = (ctx: Job.Context, caller: Access.Caller, pid: number, action: Access.Action) =>
  Effect.gen(function*() {
    const job = yield* find(ctx, caller, pid, action)
    if (job.restored) {
      return yield* conflict(pid, `was restored after a restart and is read-only: its output can be polled, but it takes no ${action}`)
    }
    if (job.state !== "running" || job.running === undefined) {
      return yield* conflict(pid, `is no longer running, so it takes no ${action}; poll it for its output`)
    }
    return { job, running: job.running }
  })

const stdinClosed = (pid: number) => conflict(pid, `has its stdin closed; start a job with stdin "pipe" to write to it`)

/** Writes to a running job's stdin. @internal */
export const writeStdin = (ctx: Job.Context, caller: Access.Caller, pid: number, data: string | Uint8Array) =>
  Effect.gen(function*() {
    const { running } = yield* live(ctx, caller, pid, "stdin")
    const open = yield* running.writeStdin(typeof data === "string" ? Utf8.encode(data) : Uint8Array.from(data))
    if (!open) return yield* stdinClosed(pid)
  })

/** Closes a running job's stdin. @internal */
export const closeStdin = (ctx: Job.Context, caller: Access.Caller, pid: number) =>
  Effect.gen(function*() {
    const { running } = yield* live(ctx, caller, pid, "stdin")
    if (!(yield* running.closeStdin)) return yield* stdinClosed(pid)
  })

/** Sends one of the allowed signals to a running job's process group. @internal */
export const signal = (ctx: Job.Context, caller: Access.Caller, pid: number, name: string) =>
  Effect.gen(function*() {
    if (!Child.SIGNALS.includes(name)) {
      return yield* new InvalidRequest({ argument: "signal", reason: `must be one of ${Child.SIGNALS.join(", ")}; got ${JSON.stringify(name).slice(0, 40)}` })
    }
    const { running } = yield* live(ctx, caller, pid, "signal")
    yield* running.signal(name)
  })

/** Stops a running job (SIGTERM, then SIGKILL) and waits until its output is all in. @internal */
export const cancel = (ctx: Job.Context, caller: Access.Caller, pid: number) =>
  Effect.gen(function*() {
    const { job, running } = yield* live(ctx, caller, pid, "cancel")
    yield* running.terminate
    yield* Deferred.await(job.ended)
  })

/** Forgets a job that has ended: its body, its manifest and its room in the quota. @internal */
export const drop = (ctx: Job.Context, job: Job.Job) =>
  Effect.gen(function*() {
    yield* Effect.ignore(ctx.bodies.remove(job.body))
    if (job.tail !== undefined) yield* Effect.ignore(ctx.bodies.remove(job.tail.body))
    job.window?.release()
    ctx.jobs.delete(job.generation)
    if (ctx.byPid.get(job.pid) === job.generation) ctx.byPid.delete(job.pid)
  })

/** Forgets every expired job; how many. @internal */
export const sweep = (ctx: Job.Context) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    let removed = 0
    for (const job of [...ctx.jobs.values()]) {
      const expires = Job.expiresAt(ctx, job)
      if (expires === undefined || now < expires) continue
      yield* drop(ctx, job)
      removed++
    }
    return removed
  })

/** Removes an ended job's output before it expires; a running job is refused. @internal */
export const remove = (ctx: Job.Context, caller: Access.Caller, pid: number) =>
  Effect.gen(function*() {
    const job = yield* find(ctx, caller, pid, "delete")
    if (job.state === "running") return yield* conflict(pid, "is still running; cancel it first")
    yield* drop(ctx, job)
  })

/**
 * Stops what a job recorded as running left behind when the manager that
 * ran it ended without stopping it, while its process is still the one
 * recorded (the runner checks its start mark); the job's origin then says
 * how it was stopped. @internal
 */
const stopLeft = (ctx: Job.Context, runner: Child.Service, m: Manifest) =>
  Effect.gen(function*() {
    const o = m.origin
    if (o._tag !== "Job" || o.exitedAt !== null || o.startMark === undefined || runner.stopLeftover === undefined) return undefined
    const signal = yield* runner.stopLeftover(o.pid, o.startMark, ctx.limits.killGraceMillis)
    if (signal === undefined) return undefined
    const now = yield* Clock.currentTimeMillis
    return { ...o, exitedAt: now, signal }
  })

/** Brings back, read-only, the jobs an earlier manager recorded, as their spools are on disk. @internal */
export const restore = (ctx: Job.Context, runner: Child.Service) =>
  Effect.gen(function*() {
    // jobs keep their output in the spool pool, or in the spill pool when started to keep it whole
    const all = [...yield* ctx.bodies.manifests("spool"), ...yield* ctx.bodies.manifests("spill")]
    const tails = new Map(all.flatMap((m) => (m.origin._tag === "JobTail" ? [[m.origin.of, m] as const] : [])))
    // jobs whose manager ended without stopping them, stopped all at once (each may take the kill grace)
    const stopped = new Map(
      (yield* Effect.forEach(all.filter((m) => m.state === "writing"), (m) => Effect.map(stopLeft(ctx, runner, m), (o) => [m.id, o] as const), {
        concurrency: 16
      })).flatMap(([id, o]) => (o !== undefined ? [[id, o] as const] : []))
    )
    for (const m of all) {
      if (m.origin._tag !== "Job") continue
      const left = stopped.get(m.id)
      const done = m.state === "writing"
        ? yield* ctx.bodies.recover(m.id, {
          anchor: left?.exitedAt ?? m.createdAt,
          ...(left !== undefined ? { origin: left, status: `signal ${left.signal} (stopped when a later server started)` } : {})
        })
        : m
      const job = done !== undefined ? Job.restored(done, done.profile === "spill" ? ctx.wholeLimitBytes : ctx.limits.captureLimitBytes) : undefined
      if (job === undefined) continue
      const tail = tails.get(m.id)
      if (tail !== undefined && tail.origin._tag === "JobTail") {
        const o = tail.origin
        job.tail = { body: tail.id, fromByte: o.fromByte, fromLine: o.fromLine, lineStart: o.lineStart, headNewlines: o.headNewlines, bytes: tail.bytes, lines: tail.lines }
      }
      if (job.recorded !== undefined && job.recorded.written > 0) {
        // the readable prefix excludes a code point the spool ends inside of
        const recorded = job.recorded
        const last = yield* Effect.scoped(Effect.flatMap(
          ctx.bodies.open({ owner: job.owner, channel: job.channel }, job.body, {
            resource: () => ({ ...Job.resourceOf(ctx, job), expiresAt: null })
          }),
          (r) => r.read(Math.max(0, recorded.written - 3), 3)
        )).pipe(Effect.orElseSucceed(() => new Uint8Array(0)))
        const whole = recorded.captureError === undefined && recorded.written === recorded.emitted
        if (!whole) job.recorded = { ...recorded, written: recorded.written - Utf8.incompleteSuffix(last) }
      }
      ctx.jobs.set(job.generation, job)
      ctx.byPid.set(job.pid, job.generation)
    }
  })
