/**
 * `spillway run` for the common case, a command whose output is short,
 * before anything of Effect is loaded. The command starts at once, in the
 * forms `runArgs` reads, its output read into the queue `NodeChild` reads
 * into (`ChildPipes`). When it ends with an output shown whole (at most
 * `--max-chars` characters once masked), that output is masked and printed
 * here as the whole run prints it, and nothing is kept, as the whole run
 * keeps nothing of such an output. As soon as more has arrived than could
 * be shown whole (or the masked output turns out longer than the cap), the
 * running command and what it queued are handed over (`HandOff`) to the run
 * program, which goes on as if it had started the command, so a long
 * output is kept exactly as before.
 *
 * What it does not take (another form, a bad `--max-chars`, an output
 * directory with a problem, a program not found) it leaves to the run
 * program before starting anything, so errors are worded in one place.
 * The bin skips it, as the run program, when `SPILLWAY_QUICK=0`.
 *
 * @since 0.1.0
 */
import { exitStatus, mergedArgv } from "@spillway/core/ChildSpec"
import { buildMasker, knownValuesFromEnv, skippedValuesFromEnv } from "@spillway/core/MaskEngine"
import * as Slabs from "@spillway/core/Slabs"
import * as Utf8 from "@spillway/core/Utf8"
import * as ChildPipes from "@spillway/node/ChildPipes"
import type * as ChildProcess from "node:child_process"
import * as Os from "node:os"
import * as OutputDir from "./OutputDir.js"
import { MAX_CHARS, parseRun } from "./runArgs.js"
import * as StdinForward from "./stdinForward.js"

/**
 * Goes on with a command this run started (its output too long to show
 * whole), or, given undefined, runs the command from the start (it could
 * not be started: the run program says why).
 */
export type HandOff = (started: ChildPipes.Started | undefined) => void

/** How long the command gets to end after SIGTERM before SIGKILL, as in the run program. */
const KILL_GRACE_MILLIS = 3000

/** How long output is still read after the command exits, as in the run program. */
const DRAIN_GRACE_MILLIS = 2000

/** How long a command gets to end after a signal passed on to it, before it is stopped, as in the run program. */
const SIGNALLED_GRACE_MILLIS = 3000

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const

/**
 * Passes this process's stdin on to the child a chunk at a time (the next
 * is read once the child took the last) and closes the child's stdin at its
 * end; the returned function stops reading.
 */
const forwardStdin = (child: ChildProcess.ChildProcess): (() => void) => {
  const target = child.stdin
  const open = () => target !== null && !target.destroyed && !target.writableEnded
  return StdinForward.forward({
    write: (chunk, next) => (open() ? target!.write(chunk, () => next(open())) : next(false)),
    close: (done) => {
      if (open()) target!.end()
      done()
    }
  })
}

/**
 * What `tryShortRun` did: `started` the command (finished here or handed
 * over), left the arguments to the `run` program (a common form it does not
 * take on, whose error that program words), or to the whole `command` (not a
 * common form).
 */
export type Taken = "started" | "run" | "command"

/** Runs `spillway run` when its arguments take a common form and it can start the command itself. */
export const tryShortRun = (args: ReadonlyArray<string>, env: Record<string, string | undefined>, handOff: HandOff): Taken => {
  const options = parseRun(args)
  if (options === undefined) return "command"
  if (options.maxChars < MAX_CHARS.min || options.maxChars > MAX_CHARS.max || OutputDir.fromEnv(env) !== undefined) return "run"
  const spec = options.shell !== undefined
    ? { command: options.shell, shell: true, mergeStderr: true }
    : { command: options.argv[0]!, args: options.argv.slice(1), mergeStderr: true }
  if (spec.shell !== true && ChildPipes.findExecutable(spec.command, env.PATH) === undefined) return "run"

  const started = ChildPipes.open(mergedArgv(spec), { stdin: options.stdin ? "pipe" : "ignore" })
  const { child, pipes } = started
  // more masked bytes than this can never be shown whole (a code point takes at most four), as the capture counts
  const keep = options.maxChars * 4 + 4
  let done = false
  let drainTimer: ReturnType<typeof setTimeout> | undefined
  const stopStdin = options.stdin ? forwardStdin(child) : () => undefined

  const groupSignal = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal)
    } catch {
      // the group is gone already
    }
  }
  /** Stops the command as the run program does when interrupted: SIGTERM, SIGKILL after the grace; status 130, nothing shown. */
  const interrupt = () => {
    if (done) return
    done = true
    if (drainTimer !== undefined) clearTimeout(drainTimer)
    stopStdin()
    const end = () => {
      for (const reader of pipes.readers) reader.destroy()
      process.exitCode = 130
    }
    if (pipes.exited !== undefined) return end()
    groupSignal("SIGTERM")
    const kill = setTimeout(() => groupSignal("SIGKILL"), KILL_GRACE_MILLIS)
    child.once("exit", () => {
      clearTimeout(kill)
      end()
    })
  }
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    // the first signal goes to the command, which ends and whose output is still shown; a second one stops it
    if (!signalled && pipes.exited === undefined) {
      signalled = true
      groupSignal(signal)
      setTimeout(interrupt, SIGNALLED_GRACE_MILLIS).unref()
      return
    }
    interrupt()
  }
  for (const signal of SIGNALS) process.on(signal, onSignal)

  const handOver = (go: ChildPipes.Started | undefined) => {
    done = true
    pipes.wake = undefined
    if (drainTimer !== undefined) clearTimeout(drainTimer)
    for (const signal of SIGNALS) process.removeListener(signal, onSignal)
    // the run program does not read stdin for a command it did not start: it is passed on here until the command ends
    if (pipes.exited !== undefined) stopStdin()
    else child.once("exit", stopStdin)
    // once the pipe's reader that told of this has paused or gone on: the run program may take from the queue at once
    queueMicrotask(() => handOff(go))
  }

  /** The output, when the command ended with one shown whole: printed as the run program prints it, and the run is over. */
  const finish = (): boolean => {
    const regions = pipes.queue
    // what the stderr pipe carries (only a failure to read it: the shell sends stderr to stdout) is masked apart by the store
    if (regions.some((r) => r.source !== 1)) return false
    const raw = regions.length === 1 ? regions[0]!.bytes : Buffer.concat(regions.map((r) => r.bytes))
    const needsMasker = raw.length > 0 || options.json
    const built = needsMasker ? buildMasker({ knownValues: knownValuesFromEnv(env) }) : undefined
    if (built?._tag === "Refused") return false
    const masker = built?.masker
    let masked: Uint8Array = raw
    if (masker !== undefined && raw.length > 0) {
      const stream = masker.stream()
      const head = stream.push(raw)
      const tail = stream.end()
      masked = tail.length === 0 ? head : Buffer.concat([head, tail])
    }
    const text = Utf8.decodeLossy(masked)
    if (masked.length > keep || Utf8.codePointLength(text) > options.maxChars) return false
    let newlines = 0
    for (let at = masked.indexOf(10); at !== -1; at = masked.indexOf(10, at + 1)) newlines++
    const totalLines = masked.length === 0 ? 0 : newlines + (masked[masked.length - 1] === 10 ? 0 : 1)
    const status = exitStatus(pipes.exited!.code, pipes.exited!.signal, Os.constants.signals as unknown as Record<string, number>).status
    const kept = {
      text,
      exitCode: status,
      truncated: false,
      totalLines,
      totalBytes: masked.length,
      shown: totalLines > 0 ? [{ from: 1, to: totalLines }] : []
    }
    for (const region of regions) Slabs.giveBack(region)
    pipes.queue = []
    pipes.queued = 0
    for (const reader of pipes.readers) reader.destroy()
    done = true
    if (drainTimer !== undefined) clearTimeout(drainTimer)
    stopStdin()
    for (const signal of SIGNALS) process.removeListener(signal, onSignal)
    let printed = text
    if (options.json) {
      const notMasked = skippedValuesFromEnv(env).map((s) => ({ name: s.name, reason: s.reason }))
      printed = JSON.stringify(notMasked.length > 0 ? { ...kept, notMasked } : kept) + "\n"
    }
    // what is printed is masked once more on the way out, as everything the command prints
    if (printed.length > 0) process.stdout.write(masker!.maskText(printed))
    process.exitCode = status
    return true
  }

  const check = (): void => {
    if (done) return
    if (pipes.queued > keep || pipes.queued >= ChildPipes.MAX_QUEUED_BYTES) return handOver(started)
    if (pipes.exited !== undefined) {
      if (pipes.open === 0 || (pipes.drainDeadline !== undefined && Date.now() >= pipes.drainDeadline)) {
        if (!finish()) handOver(started)
        return
      }
      if (pipes.drainDeadline === undefined) {
        // a background child holding the pipes is waited for no longer than the run program waits
        pipes.drainDeadline = Date.now() + DRAIN_GRACE_MILLIS
        drainTimer = setTimeout(check, DRAIN_GRACE_MILLIS)
      }
    }
    pipes.wake = check
  }
  // a command that cannot start (the shell itself missing) is started again by the run program, which says why
  child.once("error", () => {
    if (!done) handOver(undefined)
  })
  child.once("spawn", check)
  return "started"
}
