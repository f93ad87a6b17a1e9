/**
 * What `spillway run` does once its arguments are read: run the command
 * with both pipes merged, keep its output through the body store, print the
 * output or a preview with the saved file's name, and leave with the
 * command's status. The command tree (`Cli`) and the run program of its own
 * (`quickRun`) both call it, so the two cannot differ.
 *
 * @since 0.1.0
 */
import { Child, Secrets, Spill, Terminal } from "@spillway/core"
import { NodeChild } from "@spillway/node"
import type * as ChildPipes from "@spillway/node/ChildPipes"
import { Effect, Option } from "effect"
import { cliGrepHint, cliHint } from "./Hints.js"
import * as OutputDir from "./OutputDir.js"
import { Exit2, exitCode, OutputTag } from "./Output.js"
import * as Parse from "./Parse.js"
import { MAX_CHARS } from "./runArgs.js"
import * as StdinForward from "./stdinForward.js"

/** The range `--max-chars` takes (see `runArgs`). */
export { MAX_CHARS } from "./runArgs.js"

/** Signals the running command's process group, while `spillway run` has one. */
let running: ((signal: NodeJS.Signals) => void) | undefined

/**
 * Passes a signal (Ctrl-C) on to the command `spillway run` is running, so
 * that it ends and its output is still kept and shown; false when no command
 * is running.
 */
export const signalCommand = (signal: NodeJS.Signals): boolean => {
  if (running === undefined) return false
  running(signal)
  return true
}

/** How long an interrupted command gets to end after SIGTERM before SIGKILL. */
const KILL_GRACE_MILLIS = 3000

/** How long output is still read after the command exits, for background children that keep the pipes open. */
const DRAIN_GRACE_MILLIS = 2000

const runner = NodeChild.make()

/** `spillway run`'s arguments, as the command tree reads them. */
export interface RunOptions {
  /** The command and its arguments, given after `--`. */
  readonly argv: ReadonlyArray<string>
  readonly json: boolean
  readonly maxChars: number
  /** A line for `/bin/sh -c`, given with `-c`. */
  readonly shell: Option.Option<string>
  /** Pass spillway's own stdin on to the command (`--stdin`); the command's stdin is closed otherwise. */
  readonly stdin?: boolean
}

/**
 * Passes this process's stdin on to the child, a chunk at a time (the next
 * is read once the child took the last), and closes the child's stdin at its
 * end; interrupted, it stops reading, so an open stdin keeps no one waiting.
 */
const forwardStdin = (child: Child.Running) =>
  Effect.async<void>((resume) => {
    const stop = StdinForward.forward({
      write: (chunk, next) => void Effect.runPromise(child.writeStdin(chunk)).then(next, () => next(false)),
      close: (done) => void Effect.runPromise(child.closeStdin).then(done, done)
    }, () => resume(Effect.void))
    return Effect.sync(stop)
  })

/**
 * Runs the command and prints what it kept; fails with `Exit2` for bad
 * arguments and a command that cannot start. With `started`, the command
 * was started already (by the short run, see `shortRun`, which found its
 * output too long to finish itself and passes its stdin on): it goes on
 * from what its pipes have queued.
 */
export const runCommand = ({ argv, json, maxChars, shell, stdin = false }: RunOptions, started?: ChildPipes.Started) =>
  Effect.gen(function*() {
    const out = yield* OutputTag
    if (Option.isSome(shell) === argv.length > 0) {
      return yield* new Exit2({ message: "give a command after -- or a shell line with -c, not both or neither; usage: spillway run [FLAGS] -- COMMAND [ARGUMENTS...]" })
    }
    const checked = Parse.count("--max-chars", String(maxChars), MAX_CHARS.min, MAX_CHARS.max)
    if (typeof checked !== "number") return yield* new Exit2({ message: checked.mistake })
    // a directory that cannot hold the output does not stop the command (an agent's hook sends every command
    // here): it runs, its output is shown with a marked cut, and the problem is named once on stderr
    const directory = OutputDir.fromEnv(process.env)
    if (directory !== undefined && !json) yield* out.stderr(`spillway run: ${directory}; the command runs, and a long output cannot be saved\n`)
    // secret-looking environment values too short to mask are named in --json (notMasked), not on every run's stderr
    const skipped = Secrets.skippedValuesFromEnv(process.env)
    // the body store masks with the rules built at its first use (only run writes), a long output on a second core
    const spill = yield* Spill.makeWrite({ maxChars, hint: cliHint, grepHint: cliGrepHint })
    const spec: Child.Spec = {
      ...(Option.isSome(shell) ? { command: shell.value, shell: true } : { command: argv[0]!, args: argv.slice(1) }),
      mergeStderr: true,
      stdin: stdin ? "pipe" : "closed"
    }
    const kept = yield* Effect.scoped(Effect.gen(function*() {
      const capture = yield* spill.capture({ command: Option.isSome(shell) ? shell.value : argv.join(" ") })
      const child = yield* (started === undefined ? runner : NodeChild.adopt(started)).start(
        spec,
        capture.write,
        { killGraceMillis: KILL_GRACE_MILLIS, drainGraceMillis: DRAIN_GRACE_MILLIS }
      ).pipe(
        Effect.catchTag("SpawnFailed", (e) => new Exit2({ status: 127, tag: "SpawnFailed", message: `${e.message}. Check the command's name and PATH.` }))
      )
      running = (signal) => Effect.runFork(child.signal(signal))
      if (stdin && started === undefined) yield* Effect.forkScoped(forwardStdin(child))
      const status = yield* child.exit.pipe(Effect.onInterrupt(() => child.terminate))
      running = undefined
      return yield* capture.finish(status.status)
    }).pipe(Effect.ensuring(Effect.sync(() => void (running = undefined)))))
    if (json) {
      const notMasked = skipped.map((s) => ({ name: s.name, reason: s.reason }))
      yield* out.stdout(JSON.stringify(notMasked.length > 0 ? { ...kept, notMasked } : kept) + "\n")
    }
    // a whole output is printed as the command wrote it; a preview ends its last line
    else if (!kept.truncated) yield* out.stdout(kept.text)
    else {
      // a preview is read, most often by a model through a pipe: without terminal escapes and redrawn frames there
      const preview = process.stdout.isTTY === true ? kept.text : Terminal.plain(kept.text)
      yield* out.stdout(preview + (preview.endsWith("\n") ? "" : "\n"))
    }
    return yield* exitCode(kept.exitCode)
  })
