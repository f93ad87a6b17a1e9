/**
 * Running a child process, once for every caller (`spillway run`, the
 * tools, background jobs, agents): in a process group of its own, with
 * stdout and stderr both drained (or merged into one pipe, in the order the
 * child wrote them), stdin closed unless asked for, its output handed on in
 * arrival order, its exit reported as a shell does (128+N for signal N),
 * and a bounded drain grace after the exit for children that leave a
 * background process holding the pipes (`sleep 30 &`). Closing the scope
 * stops a child still running: SIGTERM to its group, then SIGKILL after a
 * grace period.
 *
 * A service, so that a host picks the implementation: `layerExecutor` runs
 * over `@effect/platform`'s `CommandExecutor` on any platform it has, and
 * `@spillway/node`'s `NodeChild.layer` reads the pipes directly, about three
 * times faster, which is what keeps capture near disk speed.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Context, Deferred, Duration, Effect, Either, Fiber, Layer, Option, Queue, Schema, type Scope, Stream } from "effect"
import { type ExitStatus, exitStatus, mergedArgv, type Spec, type Timing } from "./ChildSpec.js"

// what to run and how it ended, in a module of their own that needs no Effect (a program that starts a child before
// it loads Effect uses them; see ChildSpec)
export { argvOf, type ExitStatus, exitStatus, mergedArgv, signalNumbers, type Spec, type Timing } from "./ChildSpec.js"

/** A child that is running (or has run). */
export interface Running {
  readonly pid: number
  /**
   * What tells this process from a later one given its pid (see the
   * runner's `stopLeftover`), when the runner can tell; a job's record
   * keeps it.
   */
  readonly startMark?: string | undefined
  /** Sends a signal to the child's process group; a group that is gone already is not an error. */
  readonly signal: (name: string) => Effect.Effect<void>
  /** Writes to stdin; false when stdin is not an open pipe (never asked for, or closed). */
  readonly writeStdin: (bytes: Uint8Array) => Effect.Effect<boolean>
  /** Closes stdin, so the child sees its end; false when it was not an open pipe. */
  readonly closeStdin: Effect.Effect<boolean>
  /** True until the exit is observed. */
  readonly isRunning: Effect.Effect<boolean>
  /** Completes once the child has exited and its output is drained (or the drain grace has passed). */
  readonly exit: Effect.Effect<ExitStatus>
  /** SIGTERM to the group, SIGKILL after the grace period; completes once it has exited. */
  readonly terminate: Effect.Effect<ExitStatus>
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

/**
 * The pipe a chunk of output came from: 1 for stdout (which carries stderr
 * too with `mergeStderr`), 2 for stderr. A consumer that masks output masks
 * each on its own, so a write to one cannot cut a secret in the other.
 */
export type Source = 1 | 2

/** The runner. */
export interface Service {
  /**
   * Starts a child and hands its output to `onOutput` in arrival order, one
   * call at a time (a slow consumer holds the child back, it never loses
   * output), with the pipe each chunk came from. A chunk is the runner's:
   * it may read into the same memory again once the effect `onOutput`
   * returned has completed, so a consumer copies what it keeps. Closing the
   * scope stops the child if it still runs.
   */
  readonly start: <R>(
    spec: Spec,
    onOutput: (chunk: Uint8Array, source: Source) => Effect.Effect<void, never, R>,
    timing?: Timing
  ) => Effect.Effect<Running, SpawnFailed, Scope.Scope | R>
  /**
   * Stops what a child left running when its host ended without stopping
   * it: the process group of `pid`, only while its leader is still the
   * process `startMark` names (never a later process that got the pid),
   * SIGTERM and then SIGKILL after `graceMillis`. The signal that stopped
   * it, or undefined when nothing of it was left. Runners that cannot tell
   * processes apart leave it out.
   */
  readonly stopLeftover?: ((pid: number, startMark: string, graceMillis: number) => Effect.Effect<string | undefined>) | undefined
}

/** The child runner. */
export class ChildRunner extends Context.Tag("@spillway/core/ChildRunner")<ChildRunner, Service>() {}

/** Signals a caller may send to a child. */
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

/** Runs a child to its end (stopping it if interrupted) and returns how it ended. */
export const run = <R>(
  spec: Spec,
  onOutput: (chunk: Uint8Array, source: Source) => Effect.Effect<void, never, R>,
  timing?: Timing
): Effect.Effect<ExitStatus, SpawnFailed, ChildRunner | R> =>
  Effect.scoped(Effect.flatMap(ChildRunner, (runner) => Effect.flatMap(runner.start(spec, onOutput, timing), (r) => r.exit)))

const signalOf = (error: unknown): string | null => {
  const e = error as { message?: unknown; description?: unknown; cause?: unknown }
  const text = [e.message, e.description, (e.cause as { message?: unknown } | undefined)?.message].map(String).join(" ")
  return /signal: (SIG[A-Z0-9]+)/.exec(text)?.[1] ?? null
}

/**
 * The runner over `@effect/platform`'s `CommandExecutor`: both pipes drained
 * as two streams under one lock, the exit code from the executor (a signal
 * read from its error), SIGKILL after the grace period where the executor
 * only sends SIGTERM.
 */
export const layerExecutor: Layer.Layer<ChildRunner, never, CommandExecutor.CommandExecutor> = Layer.effect(
  ChildRunner,
  Effect.map(CommandExecutor.CommandExecutor, (executor): Service => ({
    start: (spec, onOutput, timing = {}) =>
      Effect.gen(function*() {
        const killGrace = Duration.millis(timing.killGraceMillis ?? 3000)
        const drainGrace = Duration.millis(timing.drainGraceMillis ?? 2000)
        const scope = yield* Effect.scope
        const argv = mergedArgv(spec)
        const stdin = spec.stdin === "pipe" ? yield* Queue.unbounded<Uint8Array | null>() : undefined
        let stdinClosed = false
        let command = Command.make(argv[0]!, ...argv.slice(1)).pipe(
          Command.stdin(
            stdin !== undefined
              ? Stream.fromQueue(stdin).pipe(Stream.takeWhile((c) => c !== null), Stream.map((c) => c!))
              : Stream.empty
          )
        )
        if (spec.cwd !== undefined) command = Command.workingDirectory(command, spec.cwd)
        if (spec.env !== undefined) command = Command.env(command, spec.env)
        const shown = spec.shell === true ? spec.command : [spec.command, ...(spec.args ?? [])].join(" ")
        const process = yield* executor.start(command).pipe(
          Effect.mapError((e) => new SpawnFailed({ command: shown, reason: e.message }))
        )
        const ended = yield* Deferred.make<ExitStatus>()
        // interruptible, so that the grace ends even when stopping runs as a finalizer
        const stop = process.kill("SIGTERM").pipe(
          Effect.interruptible,
          Effect.timeout(killGrace),
          Effect.catchAll(() => process.kill("SIGKILL").pipe(Effect.interruptible, Effect.timeout(killGrace))),
          Effect.ignore
        )
        // runs before the executor's own release, which sends SIGTERM and waits with no SIGKILL after it
        yield* Effect.addFinalizer(() => Effect.flatMap(process.isRunning, (running) => (running ? stop : Effect.void)).pipe(Effect.ignore))
        const lock = yield* Effect.makeSemaphore(1)
        const take = (source: Source) => (chunk: Uint8Array) => lock.withPermits(1)(onOutput(chunk, source))
        // forked into the child's scope, not the caller's fiber: the drain lives as long as the child, whichever run started it
        const drain = yield* Effect.all([Stream.runForEach(process.stdout, take(1)), Stream.runForEach(process.stderr, take(2))], {
          concurrency: 2,
          discard: true
        }).pipe(Effect.ignore, Effect.forkIn(scope))
        yield* Effect.gen(function*() {
          const code = yield* Effect.either(process.exitCode)
          yield* Fiber.join(drain).pipe(Effect.timeout(drainGrace), Effect.catchAll(() => Fiber.interrupt(drain)))
          stdinClosed = true
          if (stdin !== undefined) yield* Queue.shutdown(stdin)
          yield* Deferred.succeed(
            ended,
            Either.isRight(code) ? exitStatus(code.right as number, null) : exitStatus(null, signalOf(code.left) ?? "unknown")
          )
        }).pipe(Effect.forkIn(scope))
        const exit = Deferred.await(ended)
        return {
          pid: process.pid as number,
          // the executor's kill waits for the exit, which a signal need not cause
          signal: (name) => Effect.asVoid(Effect.forkIn(Effect.ignore(process.kill(name as CommandExecutor.Signal)), scope)),
          writeStdin: (bytes) =>
            stdin === undefined || stdinClosed ? Effect.succeed(false) : Effect.as(Queue.offer(stdin, Uint8Array.from(bytes)), true),
          closeStdin: Effect.suspend(() => {
            if (stdin === undefined || stdinClosed) return Effect.succeed(false)
            stdinClosed = true
            return Effect.as(Queue.offer(stdin, null), true)
          }),
          isRunning: Effect.map(Deferred.poll(ended), Option.isNone),
          exit,
          terminate: Effect.zipRight(stop, exit)
        } satisfies Running
      })
  }))
)
