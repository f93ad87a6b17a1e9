/**
 * The pattern engine for Node: block scans and highlighting run on worker
 * threads, each on a worker of its own for its length, and a scan still
 * running at its deadline (or whose caller goes away) ends with its worker,
 * which is terminated. The process's event loop never runs a pattern, so a search or
 * a wait holds up no other caller, and a signal is handled at once.
 *
 * @since 0.1.0
 */
import { Grep } from "@spillway/core"
import { Effect, Layer, type Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import type { Reply, Request } from "./internal/patternWorker.js"

/** How many workers, for how long, with how much memory. */
export interface Options {
  /** Most scans running at once; more wait for a worker, within their own deadlines. Twice the CPUs, at least 4, by default. */
  readonly maxWorkers?: number | undefined
  /** An idle worker is ended after this long. 30 seconds by default. */
  readonly idleMillis?: number | undefined
  /** The heap a worker may use before it is ended. 256 MiB by default. */
  readonly maxWorkerHeapMiB?: number | undefined
  /** The worker's module; the one beside this module by default. */
  readonly worker?: URL | undefined
}

/** The worker module shipped beside this one (built from `src/internal/patternWorker.ts`). */
const defaultWorker = (): URL => {
  const beside = new URL("./internal/patternWorker.js", import.meta.url)
  // run from the TypeScript sources (tests), the compiled worker is in dist
  if (!Fs.existsSync(fileURLToPath(beside)) && import.meta.url.endsWith(".ts")) {
    return new URL("../dist/internal/patternWorker.js", import.meta.url)
  }
  return beside
}

/** Characters of lines sent to a worker at once to be highlighted. */
const HIGHLIGHT_BATCH_CHARS = 64 * 1024

const unfinished: Grep.BlockScan = { matches: [], clipped: 0, more: false, complete: false, lines: 0 }

/** The engine over a pool of workers, ended with the scope. */
export const make = (options: Options = {}): Effect.Effect<Grep.PatternEngine["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const url = options.worker ?? defaultWorker()
    if (!Fs.existsSync(fileURLToPath(url))) {
      return yield* Effect.dieMessage(`the pattern worker ${fileURLToPath(url)} is missing; build @spillway/node`)
    }
    const max = Math.max(1, options.maxWorkers ?? Math.max(4, 2 * Os.availableParallelism()))
    const idleMillis = options.idleMillis ?? 30_000
    const heap = options.maxWorkerHeapMiB ?? 256
    const live = new Set<Worker>()
    const idle: Array<Worker> = []
    const idleTimers = new Map<Worker, ReturnType<typeof setTimeout>>()
    const waiting: Array<(worker: Worker) => void> = []
    let nextId = 0

    const discard = (worker: Worker) => {
      if (!live.delete(worker)) return
      clearTimeout(idleTimers.get(worker))
      idleTimers.delete(worker)
      const at = idle.indexOf(worker)
      if (at !== -1) idle.splice(at, 1)
      void worker.terminate()
      // a waiting scan may now start a worker of its own
      const next = waiting.shift()
      if (next !== undefined) next(spawn())
    }

    const spawn = (): Worker => {
      const worker = new Worker(url, { resourceLimits: { maxOldGenerationSizeMb: heap } })
      worker.unref()
      live.add(worker)
      worker.once("exit", () => discard(worker))
      worker.on("error", () => discard(worker))
      return worker
    }

    const acquire = (give: (worker: Worker) => void) => {
      const worker = idle.pop()
      if (worker !== undefined) {
        clearTimeout(idleTimers.get(worker))
        idleTimers.delete(worker)
        give(worker)
      } else if (live.size < max) give(spawn())
      else waiting.push(give)
    }

    const release = (worker: Worker) => {
      if (!live.has(worker)) return
      const next = waiting.shift()
      if (next !== undefined) return next(worker)
      idle.push(worker)
      const timer = setTimeout(() => discard(worker), idleMillis)
      timer.unref()
      idleTimers.set(worker, timer)
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        waiting.length = 0
        for (const worker of [...live]) discard(worker)
      })
    )

    /**
     * Runs one request on a worker within `timeoutMillis`: `done` reads its
     * reply; at the deadline, on a worker's failure, or when the caller goes
     * away, the result is `unfinishedResult` and the worker is ended.
     */
    const dispatch = <A>(
      request: (id: number) => Request,
      timeoutMillis: number,
      done: (reply: Exclude<Reply, { readonly error: string }>) => A,
      unfinishedResult: A
    ) =>
      Effect.async<A>((resume) => {
        if (timeoutMillis <= 0) return resume(Effect.succeed(unfinishedResult))
        let worker: Worker | undefined
        let over = false
        const id = nextId++
        const finish = (result: A) => {
          if (over) return
          over = true
          clearTimeout(timer)
          if (worker !== undefined) {
            worker.off("message", onMessage)
            worker.off("exit", onExit)
          }
          resume(Effect.succeed(result))
        }
        const onMessage = (reply: Reply) => {
          if (reply.id !== id) return
          const w = worker!
          if ("error" in reply) {
            finish(unfinishedResult)
            return discard(w)
          }
          finish(done(reply))
          release(w)
        }
        const onExit = () => finish(unfinishedResult)
        const start = (w: Worker) => {
          if (over) return release(w)
          worker = w
          w.on("message", onMessage)
          w.once("exit", onExit)
          w.postMessage(request(id))
        }
        const timer = setTimeout(() => {
          const w = worker
          finish(unfinishedResult)
          if (w !== undefined) discard(w)
          else {
            const at = waiting.indexOf(start)
            if (at !== -1) waiting.splice(at, 1)
          }
        }, Math.min(timeoutMillis, 2 ** 31 - 1))
        acquire(start)
        // the caller went away: its worker may be in the middle of a scan
        return Effect.sync(() => {
          if (over) return
          const w = worker
          over = true
          clearTimeout(timer)
          if (w !== undefined) discard(w)
          else {
            const at = waiting.indexOf(start)
            if (at !== -1) waiting.splice(at, 1)
          }
        })
      })

    const scan = (matcher: Grep.Matcher, text: string, scanOptions: Grep.ScanOptions) =>
      dispatch<Grep.BlockScan>(
        (id) => ({ id, source: matcher.source, ignoreCase: matcher.ignoreCase, text, limit: scanOptions.limit, maxLineChars: scanOptions.maxLineChars }),
        scanOptions.timeoutMillis,
        (reply) => {
          if (!("matches" in reply)) return unfinished
          const matches: Array<readonly [number, number, number]> = []
          for (let k = 0; k < reply.matches.length; k += 3) matches.push([reply.matches[k]!, reply.matches[k + 1]!, reply.matches[k + 2]!])
          return { matches, clipped: reply.clipped, more: reply.more, complete: true, lines: 0 }
        },
        unfinished
      )

    /** Highlights a batch of lines on a worker; at the deadline none of the batch is. */
    const highlightBatch = (matcher: Grep.Matcher, lines: ReadonlyArray<string>, o: Grep.HighlightOptions, timeoutMillis: number) =>
      dispatch<Grep.Highlighted>(
        (id) => ({ id, source: matcher.source, ignoreCase: matcher.ignoreCase, text: "", limit: o.limit, maxLineChars: o.maxLineChars, lines }),
        timeoutMillis,
        (reply) => ("spans" in reply ? { spans: reply.spans, complete: true } : { spans: [], complete: false }),
        { spans: [], complete: false }
      )

    /** Highlights lines on workers in batches of about 64 KiB, so what was done by the deadline is kept. */
    const highlight = (matcher: Grep.Matcher, lines: ReadonlyArray<string>, o: Grep.HighlightOptions) =>
      Effect.gen(function*() {
        const deadline = Date.now() + o.timeoutMillis
        const out: Array<ReadonlyArray<readonly [number, number]>> = []
        for (let at = 0; at < lines.length;) {
          let end = at
          for (let chars = 0; end < lines.length && (end === at || chars < HIGHLIGHT_BATCH_CHARS); end++) {
            chars += Math.min(lines[end]!.length, o.maxLineChars)
          }
          const got = yield* highlightBatch(matcher, lines.slice(at, end), o, deadline - Date.now())
          if (!got.complete) return { spans: out, complete: false }
          out.push(...got.spans)
          at = end
        }
        return { spans: out, complete: true } satisfies Grep.Highlighted
      })

    /** Starts a worker and has it compile the pattern, while the caller reads what it will scan. */
    const prepare = (matcher: Grep.Matcher) =>
      Effect.sync(() => {
        if (idle.length > 0 || live.size >= max) return
        const worker = spawn()
        const request: Request = { id: -1, source: matcher.source, ignoreCase: matcher.ignoreCase, text: "", limit: 0, maxLineChars: 0 }
        worker.postMessage(request)
        release(worker)
      })

    return { scan, highlight, prepare }
  })

/** The engine as a layer: workers start when first needed and end with the layer. */
export const layer = (options: Options = {}): Layer.Layer<Grep.PatternEngine> => Layer.scoped(Grep.PatternEngine, make(options))
