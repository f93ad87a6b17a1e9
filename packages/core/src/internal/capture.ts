import { Effect, type Scope } from "effect"
import type * as Access from "../Access.js"
import type * as Body from "../Body.js"
import * as Preview from "../Preview.js"
import * as Salience from "../Salience.js"
import type { KeptOutput, OutputCapture } from "../Spill.js"
import type * as SpillPolicy from "../SpillPolicy.js"
import * as Utf8 from "../Utf8.js"
import * as Ring from "./ring.js"
import { concat, copyOf } from "./bytes.js"

/** @internal */
export interface CaptureOptions {
  readonly maxChars: number
  /** Most bytes saved to one body; the rest is counted, not saved, and the preview says so. */
  readonly maxFileBytes: number
  readonly hint?: Preview.ReadHint | undefined
  readonly grepHint?: Preview.GrepHint | undefined
  readonly salience?: Salience.Compiled | undefined
  readonly tool: string
  /** The command or the tool's arguments, recorded in the manifest's origin. */
  readonly command?: string | undefined
  readonly caller: Access.Caller
}

/** Where the last `keep` bytes of `bytes` start, moved on to a code point boundary. */
const lastStart = (bytes: Uint8Array, keep: number): number => {
  let start = Math.max(0, bytes.length - keep)
  while (start < bytes.length && !Utf8.isByteBoundary(bytes, start)) start++
  return start
}

/** The text of the last `keep` bytes of `bytes`, from a code point boundary: the end of a first line longer than the head. */
const lastText = (bytes: Uint8Array, keep: number): string => Utf8.decodeLossy(bytes.subarray(lastStart(bytes, keep)))

/**
 * The preview's tail: the text of the last `keep` bytes of the output
 * (from a code point boundary), and whether it starts a line; `end` holds
 * the output's last `keep + 1` bytes, or all of it when it is shorter.
 */
const tailView = (end: Ring.Ring, keep: number) => {
  const bytes = end.last(keep + 1)
  const start = lastStart(bytes, keep)
  const atLineStart = start === 0 || bytes[start - 1] === 10
  return { text: Utf8.decodeLossy(bytes.subarray(start)), atLineStart }
}

/**
 * A command's output through one body writer: masked as it arrives, held in
 * memory while it may still be shown whole, and stored (within the profile's
 * limit, after the policy admits it) once it is longer than the cap can ever
 * show. The preview is built from the masked start and end, so nothing a
 * model sees is cut from raw bytes.
 *
 * @internal
 */
export const make = (
  bodies: Body.Service,
  policy: SpillPolicy.Service,
  options: CaptureOptions
): Effect.Effect<OutputCapture, never, Scope.Scope> =>
  Effect.gen(function*() {
    const salience = options.salience
    const tracker = salience ? Salience.tracker(salience) : undefined
    // the whole output's line breaks and where its first line ends (the body's own index stops at its limit)
    let newlines = 0
    let firstLineBytes = -1
    // Every code point takes at most four bytes, so more bytes than this can never fit the cap whole.
    const keep = options.maxChars * 4 + 4
    const head: Array<Uint8Array> = []
    let headBytes = 0
    // the end of the output: its last `keep` bytes and the one before them
    const tail = Ring.make(keep + 1)
    let last = -1
    let total = 0
    // the end of the first line, at least `keep` bytes of it, while the line goes on past the head
    const firstEnd: Array<Uint8Array> = []
    let firstEndBytes = 0
    let firstDone = false

    /** Sees every masked byte in order (lent for the call: what stays is copied): the preview's head and tail, the line count, the salient lines. */
    const onMasked = (chunk: Uint8Array, _at: number, breaks: number) => {
      if (chunk.length === 0) return
      tracker?.accept(chunk, total, newlines + 1, breaks)
      if (!firstDone) {
        const br = chunk.indexOf(10)
        if (br !== -1) {
          firstDone = true
          firstLineBytes = total + br
        }
        const part = br === -1 ? chunk : chunk.subarray(0, br)
        const end = part.length > keep ? part.subarray(part.length - keep) : part
        if (end.length > 0) {
          firstEnd.push(copyOf(end))
          firstEndBytes += end.length
        }
        while (firstEnd.length > 1 && firstEndBytes - firstEnd[0]!.length >= keep) firstEndBytes -= firstEnd.shift()!.length
      }
      newlines += breaks
      total += chunk.length
      if (headBytes < keep) {
        const part = copyOf(chunk, 0, Math.min(chunk.length, keep - headBytes))
        head.push(part)
        headBytes += part.length
      }
      tail.push(chunk)
      last = chunk[chunk.length - 1]!
    }

    const writer = yield* bodies.create({
      profile: "spill",
      owner: options.caller.owner,
      channel: options.caller.channel,
      tool: options.tool,
      ...(options.command !== undefined ? { origin: { _tag: "Tool" as const, command: options.command } } : {}),
      status: "running",
      maxBytes: options.maxFileBytes,
      cut: "line",
      deferBytes: keep,
      onMasked,
      ...(salience !== undefined && tracker !== undefined ? { watch: { literals: salience.literals, onMark: tracker.mark } } : {}),
      admit: (filename) => Effect.mapError(policy.check({ _tag: "spill/write", filename }), (e) => e.message)
    }).pipe(Effect.orDie)

    const finish = (exitCode: number) =>
      Effect.gen(function*() {
        yield* writer.end
        const totalLines = total === 0 ? 0 : newlines + (last === 10 ? 0 : 1)
        const firstBytes = firstLineBytes === -1 ? total : firstLineBytes
        const headText = Utf8.decodeLossy(concat(head.length === 0 ? [new Uint8Array(0)] : head))
        if (headBytes === total && Utf8.codePointLength(headText) <= options.maxChars) {
          yield* writer.discard
          return {
            text: headText,
            exitCode,
            truncated: false,
            totalLines,
            totalBytes: total,
            shown: totalLines > 0 ? [{ from: 1, to: totalLines }] : []
          } satisfies KeptOutput
        }
        const sealed = yield* Effect.either(writer.seal({ status: `exit ${exitCode}` }))
        const saved = sealed._tag === "Right" ? sealed.right : undefined
        const notSaved = sealed._tag === "Left" ? (writer.progress().captureError ?? sealed.left.message) : undefined
        const inPart = saved !== undefined && saved.bytes < total ? { lines: saved.lines, bytes: saved.bytes } : undefined
        const t = tailView(tail, keep)
        const found = tracker?.result()
        const salient = found && found.total > 0 ? found : undefined
        const preview = Preview.make({
          salient: salient && { lines: salient.lines, total: salient.total, grep: salience!.grepPattern(salient.rules) },
          grepHint: options.grepHint,
          exitCode,
          head: headText,
          headIsWhole: headBytes === total,
          tail: t.text,
          tailAtLineStart: t.atLineStart,
          totalLines,
          totalBytes: total,
          firstLineBytes: firstBytes,
          firstLineEnd: firstBytes > headBytes && firstEnd.length > 0 ? lastText(concat(firstEnd), keep) : undefined,
          saved: saved?.id,
          savedInPart: inPart,
          notSaved,
          maxChars: options.maxChars,
          hint: options.hint
        })
        return {
          text: preview.text,
          exitCode,
          truncated: true,
          totalLines,
          totalBytes: total,
          shown: preview.ranges,
          ...(saved !== undefined ? { filename: saved.id } : { notSaved: notSaved ?? "unknown reason" }),
          ...(inPart !== undefined ? { savedInPart: inPart } : {}),
          ...(salient ? { salient } : {})
        } satisfies KeptOutput
      })

    return {
      write: (chunk, stream) => writer.write(chunk, stream),
      finish
    }
  })
