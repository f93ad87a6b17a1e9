/**
 * A child started in a process group of its own with its pipes read into a
 * bounded queue, without Effect: what `NodeChild` runs every child on, and
 * what a program that must start fast uses before it loads Effect (the
 * short form of `spillway run`). Such a program may hand the child and its
 * queue, with whatever has arrived, to `NodeChild.adopt`, which goes on
 * from there as if it had started the child itself.
 *
 * @since 0.1.0
 */
import type * as Slabs from "@spillway/core/Slabs"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as PipeReader from "./internal/pipeReader.js"

/** The pipe a read came from: 1 for stdout, 2 for stderr (as `Child.Source`). */
export type Source = 1 | 2

/** A read from one of the pipes, with the pipe it came from. */
export interface Arrived extends Slabs.Region {
  readonly source: Source
}

/** What the pipes have delivered that the consumer has not taken yet, and how the child stands. */
export interface Pipes {
  queue: Array<Arrived>
  queued: number
  readers: Array<PipeReader.Reader>
  /** Pipes still open (stdout, stderr). */
  open: number
  /** Called (once, then unset) when something arrives, a pipe closes or the child exits. */
  wake: (() => void) | undefined
  exited: { code: number | null; signal: string | null } | undefined
  /** When reading stops although a pipe is still open (the exit plus the drain grace), once the exit is seen. */
  drainDeadline: number | undefined
  /** Reads that arrived so far: a batch waits for more while this still grows from one turn of the event loop to the next. */
  arrived: number
  /** Whether the pipes were paused for a full queue (set once the read that filled it has been heard of). */
  paused: boolean
}

/** A child that was started, with its pipes' queue. */
export interface Started {
  readonly child: ChildProcess.ChildProcess
  readonly pipes: Pipes
}

/** How a child is started. */
export interface OpenOptions {
  readonly stdin: "pipe" | "ignore"
  readonly cwd?: string | undefined
  /** Variables added to this process's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** A fourth pipe (a watchdog's), which only this process holds the other end of. */
  readonly extraPipe?: boolean | undefined
  /** Most bytes queued before the pipes pause; 1 MiB by default. */
  readonly maxQueuedBytes?: number | undefined
  /** Read into reused buffers (see `PipeReader`); true by default. */
  readonly pooled?: boolean | undefined
  /** A child started already (a spare shell) to read instead of starting one. */
  readonly started?: ChildProcess.ChildProcess | undefined
}

/** The most bytes queued before the pipes pause, unless the options say otherwise. */
export const MAX_QUEUED_BYTES = 1024 * 1024

/** The executable `command` names, found as a shell would: a path as it is, a bare name on PATH. */
export const findExecutable = (command: string, path: string | undefined = process.env.PATH): string | undefined => {
  const runnable = (file: string) => {
    try {
      return Fs.statSync(file).isFile()
    } catch {
      return false
    }
  }
  if (command.includes("/")) return runnable(command) ? command : undefined
  for (const dir of (path ?? "").split(":")) {
    const file = Path.join(dir === "" ? "." : dir, command)
    if (runnable(file)) return file
  }
  return undefined
}

/** Calls the waiting consumer, if any. */
export const notify = (p: Pipes): void => {
  const w = p.wake
  p.wake = undefined
  w?.()
}

/**
 * Starts `argv` in a process group of its own (or takes `options.started`),
 * its stdout and stderr read into a fresh queue, paused past the queue's
 * limit. The readers start in this turn of the event loop, so no early
 * output or exit is missed. A child that cannot start reports `error` on
 * the child process, as Node's `spawn` does.
 */
export const open = (argv: readonly [string, ...Array<string>], options: OpenOptions): Started => {
  const maxQueued = options.maxQueuedBytes ?? MAX_QUEUED_BYTES
  const p: Pipes = {
    queue: [],
    queued: 0,
    readers: [],
    open: 2,
    wake: undefined,
    exited: undefined,
    drainDeadline: undefined,
    arrived: 0,
    paused: false
  }
  const c = options.started ?? ChildProcess.spawn(argv[0], argv.slice(1), {
    stdio: [options.stdin, "pipe", "pipe", ...(options.extraPipe === true ? ["pipe" as const] : [])],
    detached: true,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.env !== undefined ? { env: { ...process.env, ...options.env } } : {})
  })
  const arrived = (source: Source) => (region: PipeReader.Region): boolean => {
    p.arrived++
    p.queue.push({ slab: region.slab, bytes: region.bytes, source })
    p.queued += region.bytes.length
    // the consumer hears of it first, and may take from the queue at once; the pause is set after, since the
    // reader pauses only once this returns (a consumer waiting for a full queue looks at `queued`)
    notify(p)
    if (p.queued < maxQueued) return true
    p.paused = true
    return false
  }
  const closed = (source: Source) => (error?: Error) => {
    // say so in the output itself rather than lose the rest silently
    if (error !== undefined) {
      arrived(source)({ slab: undefined, bytes: Buffer.from(`\n[spillway: reading the command's output failed: ${error.message}]\n`) })
    }
    p.open--
    notify(p)
  }
  p.readers = ([[c.stdout!, 1], [c.stderr!, 2]] as const).map(([s, source]) =>
    PipeReader.read(s, { arrived: arrived(source), closed: closed(source) }, { pooled: options.pooled !== false })
  )
  c.stdin?.on("error", () => undefined)
  c.once("exit", (code, signal) => {
    p.exited = { code, signal }
    notify(p)
  })
  return { child: c, pipes: p }
}

/** The queue's reads, taken off it: the caller gives each back (`Slabs.giveBack`) once done with its bytes; resumes paused pipes. */
export const takeAll = (p: Pipes): Array<Arrived> => {
  const taken = p.queue
  p.queue = []
  p.queued = 0
  if (p.paused) {
    p.paused = false
    for (const reader of p.readers) reader.resume()
  }
  return taken
}
