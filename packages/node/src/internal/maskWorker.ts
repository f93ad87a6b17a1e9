// The masking thread of NodeSecrets: builds the same masker as the thread
// that started it, resumes the stream that thread checkpointed, and masks
// every chunk it is sent, posting the masked bytes (and watched literals'
// positions) back in order. It says it is ready, and counts each reply, in
// a shared array, so the other thread can wait for it without an event loop.
// The masker is built from core's MaskEngine rather than Secrets, so the
// thread loads the rules and the engine and nothing else.
import { buildMasker } from "@spillway/core/MaskEngine"
import type * as Secrets from "@spillway/core/Secrets"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import { type MessagePort, workerData } from "node:worker_threads"

/** What the starting thread passes. */
export interface MaskWorkerData {
  readonly knownValues: ReadonlyArray<Secrets.KnownValue>
  readonly maxHeldBytes: number | undefined
  readonly port: MessagePort
  /** [0]: replies posted; [1]: 1 once ready, 2 after a failure. */
  readonly signals: SharedArrayBuffer
}

/** Messages to the worker. */
export type ToWorker =
  | { readonly _tag: "start"; readonly checkpoint: Secrets.StreamCheckpoint; readonly literals: ReadonlyArray<string> }
  | { readonly _tag: "push"; readonly bytes: Uint8Array }
  | { readonly _tag: "end" }

/** Replies: masked bytes, with the output positions of watched literals in them. */
export type FromWorker =
  | { readonly _tag: "out"; readonly bytes: Uint8Array; readonly marks: ReadonlyArray<number>; readonly last: boolean }
  | { readonly _tag: "failed"; readonly message: string }

/**
 * Every chunk passes through a few short-lived buffers, which V8 frees only
 * when it collects, by default after tens of MiB of them: a young-generation
 * collection every 2 MiB keeps the thread's memory flat.
 */
const collect = (() => {
  let gc: ((options: { type: "minor" }) => void) | undefined
  try {
    V8.setFlagsFromString("--expose-gc")
    gc = Vm.runInNewContext("gc") as (options: { type: "minor" }) => void
  } catch {
    gc = undefined
  }
  let since = 0
  return (bytes: number) => {
    since += bytes
    if (since < 2 * 1024 * 1024) return
    since = 0
    gc?.({ type: "minor" })
  }
})()

const data = workerData as MaskWorkerData
const signals = new Int32Array(data.signals)
const port = data.port

const reply = (message: FromWorker, transfer: Array<ArrayBuffer> = []): void => {
  port.postMessage(message, transfer)
  Atomics.add(signals, 0, 1)
  Atomics.notify(signals, 0)
}

try {
  const built = buildMasker({
    knownValues: data.knownValues,
    ...(data.maxHeldBytes === undefined ? {} : { maxHeldBytes: data.maxHeldBytes })
  })
  // the starting thread built the same masker first, so a refusal cannot happen here
  if (built._tag === "Refused") throw new Error("a known value was refused")
  const masker = built.masker
  let stream: Secrets.StreamMasker | undefined
  let marks: Array<number> = []
  const send = (bytes: Uint8Array, last: boolean) => {
    const found = marks
    marks = []
    // the masked bytes sit in a buffer no one else holds: hand it over instead of copying
    const owned = bytes.byteLength > 0 && bytes.buffer instanceof ArrayBuffer
    reply({ _tag: "out", bytes, marks: found, last }, owned ? [bytes.buffer as ArrayBuffer] : [])
  }
  port.on("message", (message: ToWorker) => {
    try {
      switch (message._tag) {
        case "start":
          stream = masker.resume(
            message.checkpoint,
            message.literals.length > 0 ? { literals: message.literals, onMark: (p) => void marks.push(p) } : undefined
          )
          break
        case "push":
          send(stream!.push(message.bytes), false)
          collect(message.bytes.length)
          break
        case "end":
          send(stream!.end(), true)
          stream = undefined
          break
      }
    } catch (e) {
      Atomics.store(signals, 1, 2)
      reply({ _tag: "failed", message: e instanceof Error ? e.message : String(e) })
    }
  })
  Atomics.store(signals, 1, 1)
  Atomics.notify(signals, 1)
} catch (e) {
  Atomics.store(signals, 1, 2)
  reply({ _tag: "failed", message: e instanceof Error ? e.message : String(e) })
}
