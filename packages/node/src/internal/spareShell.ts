/**
 * A shell started ahead of the command it will run. Starting a process
 * from Node costs several milliseconds, more the more memory the process
 * holds (the kernel copies its page tables), and Node waits for it on the
 * event loop: a server answering many short commands (an MCP server's
 * `run_command`) pays that on every call. A spare `/bin/sh` started while
 * the server is idle takes the next `/bin/sh -c SCRIPT` instead: the script
 * is written to its stdin, which it reads to the end, then it points stdin
 * at `/dev/null` and evaluates the script, so the command sees what
 * `sh -c SCRIPT` would give it: the same shell, arguments, environment,
 * directory, process group and empty stdin. A spare whose server dies reads
 * the end of its stdin and exits with nothing to run.
 *
 * Linux and macOS have `/bin/sh`; a spare that failed to start or ended is
 * never handed out, and the caller starts the command as usual.
 *
 * @internal
 */
import * as ChildProcess from "node:child_process"

/**
 * What a spare runs: it reads its stdin to the end line by line (`read`
 * takes one byte at a time from a pipe), the last line with or without its
 * newline, so the script is rebuilt exactly; then it evaluates it with stdin
 * at `/dev/null`, after unsetting its own two variables, so the script sees
 * none of them.
 */
export const SPARE_SCRIPT = "__spillway_s=; while IFS= read -r __spillway_l; do __spillway_s=\"$__spillway_s$__spillway_l\n\"; done; " +
  "__spillway_s=\"$__spillway_s$__spillway_l\"; exec 0</dev/null; eval \"unset __spillway_s __spillway_l; $__spillway_s\""

/** One spare shell kept ready, started again after each command ends. */
export interface Spares {
  /**
   * A started shell that runs `script`, when a spare is ready (its script
   * already written and its stdin closed); undefined to start one as usual,
   * and a spare due to start is then not started until `refill` is called
   * again (when that command ends).
   */
  readonly take: (script: string) => ChildProcess.ChildProcess | undefined
  /**
   * Starts a spare shortly, when none is held or starting: called when a
   * command ends, so the start (which holds up the event loop for as long as
   * any start does) falls after its answer rather than inside a call.
   */
  readonly refill: () => void
  /** Stops the spare held and starts no more. */
  readonly close: () => void
}

/** Longest script a spare takes, in UTF-16 units: it reads its stdin a byte at a time, which a short line makes nothing of. */
export const MAX_SCRIPT_LENGTH = 16 * 1024

/** The argv a spare can stand in for: `/bin/sh -c SCRIPT`, with a script of at most `MAX_SCRIPT_LENGTH`, and nothing more. */
export const scriptOf = (argv: ReadonlyArray<string>): string | undefined =>
  argv.length === 3 && argv[0] === "/bin/sh" && argv[1] === "-c" && argv[2]!.length <= MAX_SCRIPT_LENGTH && !argv[2]!.includes("\0")
    ? argv[2]
    : undefined

/** How long after a command's end a spare is started: past the answer that follows it. */
const REFILL_DELAY_MILLIS = 1

/**
 * Spares started with the options of `spawn` (stdio `pipe` for all three,
 * detached: a process group of their own), the first one after the first
 * command ends (a program that runs one command never starts a spare).
 */
export const make = (): Spares => {
  let spare: ChildProcess.ChildProcess | undefined
  let ready = false
  let closed = false
  let starting: ReturnType<typeof setTimeout> | undefined

  const start = (): void => {
    starting = undefined
    if (closed || spare !== undefined) return
    let child: ChildProcess.ChildProcess
    try {
      child = ChildProcess.spawn("/bin/sh", ["-c", SPARE_SCRIPT], { stdio: ["pipe", "pipe", "pipe"], detached: true })
    } catch {
      return
    }
    spare = child
    ready = false
    child.stdin!.on("error", () => undefined)
    child.once("spawn", () => {
      if (spare === child) ready = true
    })
    const gone = () => {
      if (spare !== child) return
      spare = undefined
      ready = false
    }
    child.once("error", gone)
    child.once("exit", gone)
    // a spare waiting for work keeps nothing alive
    child.unref()
    for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.()
  }

  const refill = (): void => {
    if (!closed && spare === undefined && starting === undefined) {
      starting = setTimeout(start, REFILL_DELAY_MILLIS)
      starting.unref()
    }
  }

  return {
    take: (script) => {
      const child = spare
      const usable = child !== undefined && ready && child.exitCode === null && child.signalCode === null && child.pid !== undefined
      if (!usable) {
        // a line that came before the spare was started (a call right after the last one) starts its own shell; a spare
        // started now would hold up the event loop inside that line's call: the refill waits for the line's end
        if (starting !== undefined) {
          clearTimeout(starting)
          starting = undefined
        }
        return undefined
      }
      spare = undefined
      ready = false
      // the command it becomes keeps the server alive as any child does
      child.ref()
      for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { ref?: () => void } | null)?.ref?.()
      child.stdin!.end(script)
      return child
    },
    refill,
    close: () => {
      closed = true
      if (starting !== undefined) clearTimeout(starting)
      const child = spare
      spare = undefined
      if (child?.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL")
        } catch {
          // already gone
        }
      }
    }
  }
}
