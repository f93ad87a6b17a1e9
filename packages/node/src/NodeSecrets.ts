/**
 * Masking that uses a second core: a `Secrets` layer whose streams, once
 * they have seen more than a little output, hand their work to a worker
 * thread, so the thread reading a command's output and writing it to disk
 * never waits on the masker. The worker masks with the same rules and known
 * values and sends the masked bytes back in order; what a stream returns is
 * exactly what the in-thread masker returns, a little later. Small outputs
 * never start a worker.
 *
 * @since 0.1.0
 */
import { Secrets } from "@spillway/core"
import { Effect, Layer } from "effect"
import * as Os from "node:os"
import { fileURLToPath } from "node:url"
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads"
import type { FromWorker, MaskWorkerData, ToWorker } from "./internal/maskWorker.js"

/** How a worker-backed masker is built. */
export interface WorkerOptions {
  /** Literal secrets to mask (see `Secrets.MaskerOptions`). */
  readonly knownValues?: ReadonlyArray<string | Secrets.KnownValue>
  /** Cap on the bytes a stream holds back waiting for the end of a line. */
  readonly maxHeldBytes?: number
  /** Bytes a stream masks on its own thread before it starts a worker and hands on to it; 1 MiB by default. */
  readonly handOffBytes?: number
  /** Most bytes sent to the worker and not yet back before `push` waits for it; 2 MiB by default (a batch of output and the one before it). */
  readonly maxInFlightBytes?: number
  /** The worker's script; the compiled `internal/maskWorker.js` next to this module by default (a bundle passes its own). */
  readonly workerFile?: string | URL
  /**
   * Asked once a stream has seen `handOffBytes`: whether a worker would help
   * now. By default, when the machine has three cores or more. (The load
   * average is no guide: the command whose output is masked, and the
   * masker's own threads, count in it, so a rule on it refused the worker
   * after a few long outputs in a row.)
   */
  readonly shouldHandOff?: () => boolean
}

/**
 * The default `shouldHandOff`: three cores or more, one each for the command
 * writing the output, the thread reading it and the masker. With two, the
 * masking thread takes its core from the command or the reader: on 256 MiB
 * of output it saved about 5% of the wall time and cost 10% more processor
 * time and some 20 MiB more memory (a second V8 isolate, and every chunk
 * copied to it and back).
 */
export const coreToSpare = (): boolean => Os.availableParallelism() >= 3

const EMPTY = new Uint8Array(0)
/** Longest wait for the worker without a reply before a stream gives up on it. */
const STALL_MS = 60_000

const join = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (parts.length === 0) return EMPTY
  if (parts.length === 1) return parts[0]
  let length = 0
  for (const part of parts) length += part.length
  const out = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/** A worker that is starting or ready to take a stream, with the channel to it; one stream at a time uses it. */
interface Helper {
  readonly worker: Worker
  readonly port: MessagePort
  readonly signals: Int32Array
  /** Messages that call for a reply, sent so far across the streams that used it, and replies taken. */
  sent: number
  replies: number
  busy: boolean
}

const startHelper = (options: WorkerOptions, knownValues: ReadonlyArray<Secrets.KnownValue>): Helper | undefined => {
  try {
    const file = options.workerFile ?? new URL("./internal/maskWorker.js", import.meta.url)
    const channel = new MessageChannel()
    const shared = new SharedArrayBuffer(8)
    const data: MaskWorkerData = { knownValues, maxHeldBytes: options.maxHeldBytes, port: channel.port2, signals: shared }
    const worker = new Worker(typeof file === "string" ? file : fileURLToPath(file), {
      workerData: data,
      transferList: [channel.port2],
      // the masker keeps little: a small young generation keeps the thread's memory small
      resourceLimits: { maxYoungGenerationSizeMb: 2 }
    })
    // it must never keep the process alive, nor crash it: a failure shows in `signals`
    worker.unref()
    worker.on("error", () => {
      Atomics.store(new Int32Array(shared), 1, 2)
    })
    channel.port1.unref()
    return { worker, port: channel.port1, signals: new Int32Array(shared), sent: 0, replies: 0, busy: false }
  } catch {
    return undefined
  }
}

/** A masking worker failed or stopped answering; what it held cannot be masked, so the stream stops. */
export class MaskWorkerFailed extends Error {
  override readonly name = "MaskWorkerFailed"
}

/**
 * Posts a chunk the caller keeps. One that spans the whole of its buffer
 * is cloned, which copies its bytes outside this thread's heap; a view into
 * a larger buffer (a pipe's read buffer, a slice of a file) would be cloned
 * with all of that buffer, so its own bytes are copied out and handed over
 * instead. (A copy: a Node Buffer's `slice` shares the caller's memory,
 * which handing over would detach.)
 */
const postChunk = (port: MessagePort, chunk: Uint8Array): void => {
  const whole = chunk.buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
  if (whole) return port.postMessage({ _tag: "push", bytes: chunk } satisfies ToWorker)
  const own = new Uint8Array(chunk)
  port.postMessage({ _tag: "push", bytes: own } satisfies ToWorker, [own.buffer as ArrayBuffer])
}

const READY = 1
const FAILED = 2

const workerStream = (
  makeLocal: () => Secrets.StreamMasker,
  acquire: () => Helper | undefined,
  release: (helper: Helper, healthy: boolean) => void,
  shouldHandOff: () => boolean,
  watch: Secrets.Watch | undefined,
  handOffBytes: number,
  maxInFlight: number
): Secrets.StreamMasker => {
  let local = makeLocal()
  let pushed = 0
  // asked once per stream, when it has seen `handOffBytes`
  let wanted: boolean | undefined
  let helper: Helper | undefined
  let inFlight = 0
  let failed: string | undefined

  // after `end`, the stream starts over
  const reset = (healthy: boolean): void => {
    if (helper !== undefined) release(helper, healthy)
    helper = undefined
    local = makeLocal()
    pushed = 0
    wanted = undefined
    inFlight = 0
    failed = undefined
  }

  // Takes every reply already there, in order; true once the last one came.
  const drain = (h: Helper, into: Array<Uint8Array>): boolean => {
    let last = false
    for (let message = receiveMessageOnPort(h.port); message !== undefined; message = receiveMessageOnPort(h.port)) {
      const reply = message.message as FromWorker
      h.replies++
      if (reply._tag === "failed") {
        failed = reply.message
        continue
      }
      for (const mark of reply.marks) watch?.onMark(mark)
      inFlight -= reply.bytes.length
      if (reply.bytes.length > 0) into.push(reply.bytes)
      if (reply.last) last = true
    }
    return last
  }

  const fail = (reason: string): never => {
    reset(false)
    throw new MaskWorkerFailed(reason)
  }

  // Waits until the worker posts another reply, or fails.
  const wait = (h: Helper): void => {
    const started = Date.now()
    while (Atomics.load(h.signals, 0) === h.replies) {
      if (Atomics.load(h.signals, 1) === FAILED) fail("the masking worker failed")
      Atomics.wait(h.signals, 0, h.replies, 1000)
      if (Date.now() - started > STALL_MS) fail("the masking worker stopped answering")
    }
  }

  const push = (chunk: Uint8Array): Uint8Array => {
    if (chunk.length === 0) return EMPTY
    if (helper === undefined) {
      const out = local.push(chunk)
      pushed += chunk.length
      if (pushed >= handOffBytes && (wanted ??= shouldHandOff())) {
        const candidate = acquire()
        // hand on at the first clean point once the worker is ready; until then, mask here
        const checkpoint = candidate !== undefined ? local.checkpoint() : undefined
        if (candidate !== undefined && checkpoint !== undefined) {
          helper = candidate
          helper.port.postMessage({ _tag: "start", checkpoint, literals: watch?.literals ?? [] } satisfies ToWorker)
          inFlight = checkpoint.held.length
        } else if (candidate !== undefined) {
          release(candidate, true)
        }
      }
      return out
    }
    const h = helper
    inFlight += chunk.length
    postChunk(h.port, chunk)
    h.sent++
    const out: Array<Uint8Array> = []
    drain(h, out)
    // what is still out once every push is answered is a line the worker holds, as the masker here would
    while (inFlight > maxInFlight && h.replies < h.sent && failed === undefined) {
      wait(h)
      drain(h, out)
    }
    if (failed !== undefined) fail(`the masking worker failed: ${failed}`)
    return join(out)
  }

  const end = (): Uint8Array => {
    if (helper === undefined) {
      const out = local.end()
      reset(true)
      return out
    }
    const h = helper
    h.port.postMessage({ _tag: "end" } satisfies ToWorker)
    h.sent++
    const out: Array<Uint8Array> = []
    while (!drain(h, out)) {
      if (failed !== undefined) break
      wait(h)
    }
    if (failed !== undefined) fail(`the masking worker failed: ${failed}`)
    reset(true)
    return join(out)
  }

  return {
    push,
    end,
    heldBytes: () => (helper !== undefined ? inFlight : local.heldBytes()),
    checkpoint: () => (helper !== undefined ? undefined : local.checkpoint())
  }
}

/**
 * Builds a masker whose streams mask on a worker thread once they have
 * seen `handOffBytes`; whole inputs (`maskBytes`, `maskText`) are masked on
 * the calling thread. Fails as `Secrets.makeMasker` does.
 */
export const makeWorkerMasker = (
  options: WorkerOptions = {}
): Effect.Effect<Secrets.Masker, Secrets.SecretTooShort | Secrets.InvalidSecret> =>
  Effect.map(
    Secrets.makeMasker({
      ...(options.knownValues === undefined ? {} : { knownValues: options.knownValues }),
      ...(options.maxHeldBytes === undefined ? {} : { maxHeldBytes: options.maxHeldBytes })
    }),
    (local): Secrets.Masker => {
      const knownValues = (options.knownValues ?? []).map((v) => (typeof v === "string" ? { name: "", value: v } : v))
      const handOff = options.handOffBytes ?? 1024 * 1024
      const maxInFlight = options.maxInFlightBytes ?? 2 * 1024 * 1024
      // one worker, started by the first long stream and kept (idle, unreferenced) for the next
      let helper: Helper | undefined
      let broken = false
      const shouldHandOff = options.shouldHandOff ?? coreToSpare
      const acquire = (): Helper | undefined => {
        if (broken) return undefined
        helper ??= startHelper(options, knownValues)
        if (helper === undefined) {
          broken = true
          return undefined
        }
        const state = Atomics.load(helper.signals, 1)
        if (state === FAILED) {
          void helper.worker.terminate()
          broken = true
          return undefined
        }
        if (state !== READY || helper.busy) return undefined
        helper.busy = true
        return helper
      }
      const release = (h: Helper, healthy: boolean): void => {
        h.busy = false
        if (!healthy) {
          void h.worker.terminate()
          broken = true
        }
      }
      return {
        maskBytes: local.maskBytes,
        maskText: local.maskText,
        resume: local.resume,
        // the worker's replies are fresh buffers, which a caller that asked for reuse may keep as well
        stream: (watch, streamOptions) =>
          workerStream(() => local.stream(watch, streamOptions), acquire, release, shouldHandOff, watch, handOff, maxInFlight)
      }
    }
  )

/** Provides `Secrets` with streams masked on a worker thread. */
export const layerWorker = (options: WorkerOptions = {}): Layer.Layer<Secrets.Secrets, Secrets.SecretTooShort | Secrets.InvalidSecret> =>
  Layer.effect(Secrets.Secrets, makeWorkerMasker(options))

/**
 * `layerWorker` with the default rules and the secret-looking values of
 * `process.env`, as `Secrets.layerFromEnv` takes them, built at the first
 * use: a program that never masks never compiles the rules.
 */
export const layerWorkerFromEnv = (options: Omit<WorkerOptions, "knownValues"> = {}): Layer.Layer<Secrets.Secrets> =>
  Layer.sync(
    Secrets.Secrets,
    () =>
      Secrets.lazy(() =>
        Effect.runSync(Effect.orDie(makeWorkerMasker({ ...options, knownValues: Secrets.knownValuesFromEnv(process.env) })))
      )
  )
