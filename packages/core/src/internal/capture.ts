import { concat as concatBytes } from "./bytes.js"
import { Clock, Effect, ExecutionStrategy, Exit, Fiber, Scope } from "effect"
import * as LineIndex from "../LineIndex.js"
import * as Preview from "../Preview.js"
import * as Salience from "../Salience.js"
import type * as Secrets from "../Secrets.js"
import type { KeptOutput, OutputCapture } from "../Spill.js"
import type * as SpillPolicy from "../SpillPolicy.js"
import * as SpillStore from "../SpillStore.js"
import * as Utf8 from "../Utf8.js"

/** @internal */
export interface CaptureOptions {
  readonly maxChars: number
  /** Most bytes saved to one file; the rest is counted, not saved, and the preview says so. */
  readonly maxFileBytes: number
  readonly hint?: Preview.ReadHint | undefined
  readonly grepHint?: Preview.GrepHint | undefined
  readonly salience?: Salience.Compiled | undefined
}

const concat = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => concatBytes(chunks)

const BATCH_BYTES = 1 << 20

const describe = (e: { readonly message: string }) => e.message

/**
 * Streams output through the masker into memory, and into a spill file once
 * it is longer than the cap can ever show whole, keeping the start and the end
 * for the preview.
 *
 * @internal
 */
export const make = (
  store: SpillStore.Service,
  policy: SpillPolicy.Service,
  masker: Secrets.Masker,
  options: CaptureOptions
): Effect.Effect<OutputCapture, never, Scope.Scope> =>
  Effect.gen(function*() {
    const outer = yield* Effect.scope
    const salience = options.salience
    const tracker = salience ? Salience.tracker(salience) : undefined
    const masking = tracker ? masker.stream({ literals: salience!.literals, onMark: tracker.mark }) : masker.stream()
    const index = LineIndex.builder() // the whole output
    const fileIndex = LineIndex.builder() // what the file holds: the same, unless the output passed maxFileBytes
    let written = 0
    let full = false // the file reached maxFileBytes
    // Every code point takes at most four bytes, so more bytes than this can never fit the cap whole.
    const keep = options.maxChars * 4 + 4
    const head: Array<Uint8Array> = []
    let headBytes = 0
    const tail: Array<Uint8Array> = []
    let tailBytes = 0
    let beforeTail = -1 // the byte just before the kept tail, or -1 at the start of the output
    let total = 0
    let mode = "memory" as "memory" | "spilling" | "failed"
    let sink: SpillStore.SpillSink | undefined
    let sinkScope: Scope.CloseableScope | undefined
    let failure: string | undefined

    const fail = (reason: string) =>
      Effect.gen(function*() {
        mode = "failed"
        failure = reason
        sink = undefined
        if (sinkScope) yield* Scope.close(sinkScope, Exit.void)
        sinkScope = undefined
      })

    const startSpilling = Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const filename = SpillStore.makeFilename(now)
      const refused = yield* Effect.flip(policy.check({ _tag: "spill/write", filename })).pipe(Effect.option)
      if (refused._tag === "Some") return yield* fail(describe(refused.value))
      sinkScope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
      const created = yield* store.create(filename).pipe(Scope.extend(sinkScope), Effect.either)
      if (created._tag === "Left") return yield* fail(describe(created.left))
      sink = created.right
      mode = "spilling"
      for (const chunk of head) {
        if (mode !== "spilling") break
        yield* writeSink(chunk)
      }
    })

    // Writes go out in batches through two buffers, one in flight while the
    // other fills, so that reading the command's output never waits on the
    // disk and no batch allocates.
    const buffers = [new Uint8Array(0), new Uint8Array(0)]
    let current = 0
    let batchBytes = 0
    let inFlight: Fiber.RuntimeFiber<void> | undefined
    const settle = Effect.suspend(() => {
      const f = inFlight
      inFlight = undefined
      return f ? Fiber.join(f) : Effect.void
    })
    const flush = Effect.gen(function*() {
      yield* settle
      const data = buffers[current]!.subarray(0, batchBytes)
      batchBytes = 0
      current = 1 - current
      if (mode !== "spilling" || data.length === 0) return
      inFlight = yield* sink!.write(data).pipe(
        Effect.catchAll((e) => fail(describe(e))),
        Effect.forkIn(outer)
      )
    })
    // Keeps the file within maxFileBytes: whole lines up to the limit (or a
    // code-point cut of a line longer than all of it), then nothing more.
    const writeSink = (bytes: Uint8Array): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (full) return Effect.void
        let chunk = bytes
        if (written + chunk.length > options.maxFileBytes) {
          full = true
          const room = chunk.subarray(0, options.maxFileBytes - written)
          const lastBreak = room.lastIndexOf(10)
          chunk = lastBreak !== -1 ? room.subarray(0, lastBreak + 1) : written === 0 ? room.subarray(0, Utf8.byteBoundary(room, room.length)) : room.subarray(0, 0)
        }
        written += chunk.length
        fileIndex.push(chunk)
        return toBatch(chunk)
      })
    const toBatch = (chunk: Uint8Array): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (buffers[current]!.length === 0) buffers[current] = new Uint8Array(BATCH_BYTES)
        const room = BATCH_BYTES - batchBytes
        buffers[current]!.set(chunk.subarray(0, room), batchBytes)
        batchBytes += Math.min(room, chunk.length)
        if (batchBytes < BATCH_BYTES) return Effect.void
        return chunk.length > room ? Effect.zipRight(flush, toBatch(chunk.subarray(room))) : flush
      })

    const accept = (chunk: Uint8Array) =>
      Effect.gen(function*() {
        if (chunk.length === 0) return
        tracker?.accept(chunk, total, index.newlines() + 1)
        index.push(chunk)
        total += chunk.length
        if (headBytes < keep) {
          const part = chunk.subarray(0, keep - headBytes)
          head.push(part)
          headBytes += part.length
        }
        tail.push(chunk)
        tailBytes += chunk.length
        while (tail.length > 1 && tailBytes - tail[0]!.length >= keep) {
          const dropped = tail.shift()!
          tailBytes -= dropped.length
          beforeTail = dropped[dropped.length - 1]!
        }
        if (mode === "spilling") {
          yield* writeSink(chunk)
        } else if (mode === "memory" && total > keep) {
          yield* startSpilling
          // `head` may not hold all of this chunk: write what it cut off
          const inHead = Math.max(0, headBytes - (total - chunk.length))
          if ((mode as string) === "spilling" && inHead < chunk.length) yield* writeSink(chunk.subarray(inHead))
        }
      })

    const tailView = () => {
      const bytes = concat(tail)
      const skip = Math.max(0, bytes.length - keep)
      let start = skip
      while (start < bytes.length && !Utf8.isByteBoundary(bytes, start)) start++
      const atLineStart = start === 0 ? (beforeTail === -1 || beforeTail === 10) : bytes[start - 1] === 10
      return { text: Utf8.decodeLossy(bytes.subarray(start)), atLineStart }
    }

    const finish = (exitCode: number) =>
      Effect.gen(function*() {
        yield* accept(masking.end())
        const lines = index.result()
        if (mode === "memory") {
          const text = Utf8.decodeLossy(concat(head))
          if (Utf8.codePointLength(text) <= options.maxChars) {
            return {
              text,
              exitCode,
              truncated: false,
              totalLines: lines.lines,
              totalBytes: total,
              shown: lines.lines > 0 ? [{ from: 1, to: lines.lines }] : []
            } satisfies KeptOutput
          }
          yield* startSpilling
        }
        yield* flush
        yield* settle
        if ((mode as string) === "spilling") {
          const committed = yield* sink!.commit(fileIndex.result()).pipe(Effect.either)
          if (committed._tag === "Left") yield* fail(describe(committed.left))
        }
        const saved = mode === "spilling" ? sink!.filename : undefined
        const t = tailView()
        const found = tracker?.result()
        const salient = found && found.total > 0 ? found : undefined
        const preview = Preview.make({
          salient: salient && { lines: salient.lines, total: salient.total, grep: salience!.grepPattern(salient.rules) },
          grepHint: options.grepHint,
          exitCode,
          head: Utf8.decodeLossy(concat(head)),
          headIsWhole: headBytes === total,
          tail: t.text,
          tailAtLineStart: t.atLineStart,
          totalLines: lines.lines,
          totalBytes: total,
          firstLineBytes: index.firstLineBytes(),
          saved,
          savedInPart: saved !== undefined && full ? { lines: fileIndex.result().lines, bytes: written } : undefined,
          notSaved: failure,
          maxChars: options.maxChars,
          hint: options.hint
        })
        return {
          text: preview.text,
          exitCode,
          truncated: true,
          totalLines: lines.lines,
          totalBytes: total,
          shown: preview.ranges,
          ...(saved !== undefined ? { filename: saved } : { notSaved: failure ?? "unknown reason" }),
          ...(saved !== undefined && full ? { savedInPart: { lines: fileIndex.result().lines, bytes: written } } : {}),
          ...(salient ? { salient } : {})
        } satisfies KeptOutput
      })

    return {
      write: (chunk) => accept(masking.push(chunk)),
      finish
    }
  })
