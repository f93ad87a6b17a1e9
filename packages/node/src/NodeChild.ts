/**
 * The child runner on Node, built for throughput: both pipes are read as
 * they deliver into a bounded queue that the consumer drains in batches,
 * about three times faster than reading them as two pull-based streams,
 * which is what keeps `spillway run` and job spools near disk speed. The
 * pipes are read into buffers that are used again once the consumer is done
 * with a batch, so a flood of output leaves no garbage behind. The child
 * runs in a process group of its own; signals go to the group.
 *
 * @since 0.1.0
 */
import { Child, Slabs } from "@spillway/core"
import { Deferred, Duration, Effect, Layer, Option } from "effect"
import * as Os from "node:os"
import type * as Stream from "node:stream"
import * as ChildPipes from "./ChildPipes.js"
import * as Spare from "./internal/spareShell.js"
import * as Watchdog from "./internal/watchdog.js"

/** How the queue between the pipes and the consumer is bounded. */
export interface Options {
  /** Most bytes read ahead of the consumer before the pipes are paused; 1 MiB by default (more only holds more in memory: the consumer, not the pipe, sets the pace). */
  readonly maxQueuedBytes?: number
  /** Largest batch handed to the consumer; 1 MiB by default. */
  readonly maxBatchBytes?: number
  /**
   * Read the pipes into buffers used again once the consumer is done with
   * them (true by default; see `PipeReader`); false reads each into a fresh
   * buffer, as Node's sockets do.
   */
  readonly reuseBuffers?: boolean
  /**
   * Starts each child with a watchdog in its process group that stops the
   * group when this process ends without stopping it (killed with SIGKILL,
   * say), and records each child's start mark, so a later host can stop
   * what is left (see `internal/watchdog`). False by default; true for jobs.
   */
  readonly watchdog?: boolean
  /**
   * Keeps a `/bin/sh` started ahead, which takes the next shell line run
   * without a directory, environment, stdin or watchdog of its own (see
   * `internal/spareShell`): starting a process from a server costs several
   * milliseconds, a spare a fraction of one. False by default; the tool
   * hosts, which run many short commands, turn it on. With `true` the first
   * spare is started after the first line ends (a program that runs one
   * line never starts one); with `"ready"` as the layer is built, so a
   * server's first line runs in one too. `layer` stops the spare with its
   * scope.
   */
  readonly spareShell?: boolean | "ready"
}

/** The executable `command` names, found as a shell would: a path as it is, a bare name on PATH. */
export const findExecutable = ChildPipes.findExecutable

const numbers = Os.constants.signals as unknown as Readonly<Record<string, number>>

/** An exit status as a shell reports it, with this platform's signal numbers. */
export const statusOf = (code: number | null, signal: string | null): Child.ExitStatus => Child.exitStatus(code, signal, numbers)

/**
 * Starts the child in a process group of its own, its pipes read into a
 * queue (see `ChildPipes`), or takes a spare shell for a shell line.
 */
const spawn = (
  spec: Child.Spec,
  shown: string,
  maxQueued: number,
  pooled: boolean,
  watchdogGraceMillis: number | undefined,
  spares: Spare.Spares | undefined
) =>
  Effect.async<ChildPipes.Started, Child.SpawnFailed>((resume) => {
    const merged = Child.mergedArgv(spec)
    const argv = watchdogGraceMillis === undefined ? merged : Watchdog.argv(merged, watchdogGraceMillis)
    // a spare shell stands in for `/bin/sh -c LINE` started as it would be: no stdin, directory or environment of its own
    const script = spares !== undefined && watchdogGraceMillis === undefined && spec.stdin !== "pipe" && spec.cwd === undefined &&
        spec.env === undefined
      ? Spare.scriptOf(argv)
      : undefined
    const spare = script === undefined ? undefined : spares!.take(script)
    const started = ChildPipes.open(argv, {
      stdin: spec.stdin === "pipe" ? "pipe" : "ignore",
      cwd: spec.cwd,
      env: spec.env,
      // the watchdog's pipe is the fourth entry: only this process holds its other end
      extraPipe: watchdogGraceMillis !== undefined,
      maxQueuedBytes: maxQueued,
      pooled,
      started: spare
    })
    const c = started.child
    // the next shell line finds a spare, started once this one has answered
    if (script !== undefined) c.once("exit", () => spares!.refill())
    if (spare !== undefined) {
      // started already: its own errors from here on are the command's
      c.on("error", () => undefined)
      resume(Effect.succeed(started))
      return
    }
    c.once("error", (e) => resume(Effect.fail(new Child.SpawnFailed({ command: shown, reason: e.message }))))
    c.once("spawn", () => resume(Effect.succeed(started)))
  })

/** Most turns of the event loop a batch waits for more output while the pipes keep delivering. */
const GATHER_TURNS = 16

/** A batch: the views handed to the consumer with the pipe of each, and the reads they are made of, given back once it is done with them. */
interface Batch {
  readonly chunks: ReadonlyArray<Uint8Array>
  readonly sources: ReadonlyArray<Child.Source>
  readonly regions: ReadonlyArray<Slabs.Region>
}

const EMPTY: Batch = { chunks: [], sources: [], regions: [] }

/** The reads as few views as they make, never joining two pipes' output: each run of one pipe's reads is viewed on its own. */
const batchOf = (regions: ReadonlyArray<ChildPipes.Arrived>): Batch => {
  const chunks: Array<Uint8Array> = []
  const sources: Array<Child.Source> = []
  for (let from = 0; from < regions.length;) {
    const source = regions[from]!.source
    let to = from + 1
    while (to < regions.length && regions[to]!.source === source) to++
    for (const view of Slabs.views(from === 0 && to === regions.length ? regions : regions.slice(from, to))) {
      chunks.push(view)
      sources.push(source)
    }
    from = to
  }
  return { chunks, sources, regions }
}

/**
 * What has arrived, in batches of at most `maxBatch` bytes; empty once both
 * pipes closed (or the drain grace passed). While output floods in (a pipe
 * delivers 64 KiB or more a turn), a batch waits a few turns of the event
 * loop to fill up, since every batch costs the consumer the same whatever
 * its size; a turn without new output gives at once what there is.
 */
const take = (p: ChildPipes.Pipes, limits: { maxBatch: number; maxQueued: number; drainGraceMillis: number }) =>
  Effect.async<Batch>((resume) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    let gathering: ReturnType<typeof setImmediate> | undefined
    let turns = 0
    let idle = 0
    let seen = -1
    const give = (): void => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      gathering = undefined
      const graceOver = p.drainDeadline !== undefined && Date.now() >= p.drainDeadline
      if (p.queue.length === 0 && p.open > 0 && !graceOver) {
        p.wake = give
        if (p.exited !== undefined) {
          p.drainDeadline ??= Date.now() + limits.drainGraceMillis
          timer = setTimeout(give, Math.max(0, p.drainDeadline - Date.now()))
        }
        return
      }
      // a pipe that delivered in the last two turns is still flowing (a large read can take the writer a turn to follow)
      idle = turns > 0 && p.arrived === seen ? idle + 1 : 0
      const flowing = p.open > 0 && p.exited === undefined && idle < 2
      if (flowing && p.queued < limits.maxBatch && p.queued < limits.maxQueued && turns < GATHER_TURNS) {
        // still arriving: another turn, then whatever there is (`wake` stays unset, so data does not call back)
        turns++
        seen = p.arrived
        p.wake = undefined
        gathering = setImmediate(give)
        return
      }
      let size = 0
      let taken = 0
      while (taken < p.queue.length && size + p.queue[taken]!.bytes.length <= limits.maxBatch) {
        // a batch of a fair size ends where its buffer does, so that it is handed on as one view
        const next = p.queue[taken]!
        if (taken > 0 && size >= limits.maxBatch / 4 && !Slabs.adjoins(p.queue[taken - 1]!, next)) break
        size += next.bytes.length
        taken++
      }
      if (taken === 0 && p.queue.length > 0) {
        // one read larger than a batch: its first part now, the rest next
        const first = p.queue[0]!
        p.queue[0] = { ...Slabs.split(first, limits.maxBatch), source: first.source }
        p.queue.unshift({ slab: first.slab, bytes: first.bytes.subarray(0, limits.maxBatch), source: first.source })
        size = limits.maxBatch
        taken = 1
      }
      const regions = p.queue.slice(0, taken)
      p.queue = p.queue.slice(taken)
      p.queued -= size
      if (p.paused && p.queued < limits.maxQueued) {
        p.paused = false
        for (const reader of p.readers) reader.resume()
      }
      resume(Effect.succeed(regions.length === 0 ? EMPTY : batchOf(regions)))
    }
    give()
    return Effect.sync(() => {
      if (timer !== undefined) clearTimeout(timer)
      if (gathering !== undefined) clearImmediate(gathering)
      p.wake = undefined
    })
  })

/** The runner on Node. */
export const make = (options: Options = {}, spares?: Spare.Spares): Child.Service => runner(options, spares, undefined)

/**
 * The runner whose first `start` goes on with a child started already
 * (`ChildPipes.open`, by a program that began before it loaded Effect),
 * taking what its pipes have queued as the first output; its spec must be
 * the one the child was started with, and says only how the child is
 * named. Later starts start children of their own, as `make`'s.
 */
export const adopt = (started: ChildPipes.Started, options: Options = {}): Child.Service => runner(options, undefined, started)

const runner = (options: Options, spares: Spare.Spares | undefined, adopted: ChildPipes.Started | undefined): Child.Service => ({
  start: (spec, onOutput, timing = {}) =>
    Effect.gen(function*() {
      const limits = {
        maxQueued: options.maxQueuedBytes ?? ChildPipes.MAX_QUEUED_BYTES,
        maxBatch: options.maxBatchBytes ?? 1024 * 1024,
        drainGraceMillis: timing.drainGraceMillis ?? 2000
      }
      const killGrace = Duration.millis(timing.killGraceMillis ?? 3000)
      const shown = spec.shell === true ? spec.command : [spec.command, ...(spec.args ?? [])].join(" ")
      const watched = options.watchdog === true
      const taken = adopted
      adopted = undefined
      // a shell in front of the program reports a missing one as exit 127: it is refused here instead
      if (taken === undefined && (spec.mergeStderr === true || watched) && spec.shell !== true && findExecutable(spec.command) === undefined) {
        return yield* new Child.SpawnFailed({ command: shown, reason: "not found (no such file, and not on PATH)" })
      }
      const { child, pipes: p } = taken ?? (yield* spawn(
        spec,
        shown,
        limits.maxQueued,
        options.reuseBuffers !== false,
        watched ? Duration.toMillis(killGrace) : undefined,
        spares
      ))
      const startMark = watched ? Watchdog.startMark(child.pid!) : undefined
      /** Tells the watchdog the child's end was seen, so it leaves without a signal. */
      const standDown = Effect.sync(() => {
        const pipe = child.stdio[Watchdog.FD] as Stream.Writable | null | undefined
        if (pipe === null || pipe === undefined || pipe.destroyed) return
        pipe.on("error", () => undefined)
        pipe.end(Watchdog.STAND_DOWN)
      })
      const groupSignal = (name: string) =>
        Effect.sync(() => {
          try {
            process.kill(-child.pid!, name as NodeJS.Signals)
          } catch {
            // the group is gone already
          }
        })
      const exitSeen = Effect.async<void>((resume) => {
        if (p.exited !== undefined) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
      })
      const ended = yield* Deferred.make<Child.ExitStatus>()
      const stop = Effect.gen(function*() {
        if (p.exited !== undefined) return
        yield* groupSignal("SIGTERM")
        // interruptible, so that the grace ends even when stopping runs as a finalizer
        const gone = yield* exitSeen.pipe(Effect.interruptible, Effect.timeout(killGrace), Effect.option)
        if (Option.isNone(gone)) {
          yield* groupSignal("SIGKILL")
          yield* exitSeen
        }
      })
      const scope = yield* Effect.scope
      yield* Effect.addFinalizer(() => Effect.zipRight(stop, standDown))
      yield* Effect.gen(function*() {
        for (;;) {
          const batch = yield* take(p, limits)
          if (batch.regions.length === 0) break
          for (let i = 0; i < batch.chunks.length; i++) yield* onOutput(batch.chunks[i]!, batch.sources[i]!)
          // the consumer is done with the views: their buffers may be read into again
          for (const region of batch.regions) Slabs.giveBack(region)
        }
        yield* exitSeen
        // past the drain grace, whatever still holds the pipes is not waited for
        for (const reader of p.readers) reader.destroy()
        child.stdin?.destroy()
        yield* standDown
        yield* Deferred.succeed(ended, statusOf(p.exited!.code, p.exited!.signal))
      }).pipe(Effect.forkIn(scope))
      return {
        pid: child.pid!,
        startMark,
        signal: groupSignal,
        writeStdin: (bytes) =>
          child.stdin === null || child.stdin.destroyed || child.stdin.writableEnded
            ? Effect.succeed(false)
            : Effect.async<boolean>((resume) => {
              child.stdin!.write(bytes, () => resume(Effect.succeed(true)))
            }),
        closeStdin: Effect.sync(() => {
          if (child.stdin === null || child.stdin.destroyed || child.stdin.writableEnded) return false
          child.stdin.end()
          return true
        }),
        isRunning: Effect.sync(() => p.exited === undefined),
        exit: Deferred.await(ended),
        terminate: Effect.zipRight(stop, Deferred.await(ended))
      } satisfies Child.Running
    }),
  stopLeftover: (pid, mark, graceMillis) => Effect.promise(() => Watchdog.stopLeftover(pid, mark, graceMillis))
})

/** The Node runner as the `ChildRunner` service. */
export const layer = (options: Options = {}): Layer.Layer<Child.ChildRunner> =>
  options.spareShell === true || options.spareShell === "ready"
    ? Layer.scoped(
      Child.ChildRunner,
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => {
            const spares = Spare.make()
            if (options.spareShell === "ready") spares.refill()
            return spares
          }),
          (spares) => Effect.sync(spares.close)
        ),
        (spares) => make(options, spares)
      )
    )
    : Layer.succeed(Child.ChildRunner, make(options))

/**
 * The runner for process jobs: batches of at most 256 KiB unless the
 * options say otherwise, so that the masker's buffers and the job's window
 * of newest output (a ring of twice the largest batch) stay in the
 * processor's cache together. Captures that keep no window use `layer`'s
 * 1 MiB batches. Each job has a watchdog in its process group, so no job
 * outlives the process that started it, and a start mark in its record.
 */
export const layerForJobs = (options: Options = {}): Layer.Layer<Child.ChildRunner> =>
  layer({ maxBatchBytes: 256 * 1024, watchdog: true, ...options })
