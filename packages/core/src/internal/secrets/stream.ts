import type { StreamCheckpoint, StreamMasker } from "../../Secrets.js"
import { ALIGN_SLACK, alignedAt, concat, copyOf } from "../bytes.js"
import { applyFindingsInPlace, type Engine, type OpenBlock } from "./engine.js"
import { addRepeats, emptyRepeats, type RepeatSet } from "./repeated.js"

/** Original bytes kept before the held bytes so a match that began in emitted text is still seen whole; above every non-block match length. */
export const CONTEXT_BYTES = 8192

const EMPTY = new Uint8Array(0)
const NEWLINE = 0x0a

/** The parts joined into a new array, which masking may write into without touching the caller's bytes. */
const copied = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array =>
  parts.length === 1 ? copyOf(parts[0]!) : concat(parts, length)

/** Largest window a stream that reuses its output builds in the buffer it keeps; longer ones get a buffer of their own. */
const MAX_REUSED = 4 * 1024 * 1024

/**
 * A streaming masker. Complete lines are emitted as soon as they arrive;
 * the incomplete last line is held, up to about `maxHeldBytes`, after which
 * all but the last `CONTEXT_BYTES` of it are emitted. Every window is masked
 * together with the original bytes just before it (when it starts inside a
 * line), and key blocks still open at a cut go on in the next window with
 * the lines they have masked, so a secret split across chunks at any byte
 * is masked as in the whole text. `from` resumes a stream another one
 * checkpointed. With `output` true, every window is built in one buffer
 * the stream keeps, so what `push` and `end` return is only good until the
 * next call; given a function, every window is built in the buffer it
 * returns (see `Secrets.StreamOptions`).
 */
export const makeStreamMasker = (
  engine: Engine,
  maxHeldBytes: number,
  onMark?: (position: number) => void,
  from?: StreamCheckpoint,
  output: boolean | ((length: number) => Uint8Array) = false
): StreamMasker => {
  // A line is cut once it is longer than `maxHeldBytes`; a small cap is
  // raised towards twice the context so each cut frees a good share of what
  // is held (what is held stays under `maxHeldBytes + CONTEXT_BYTES` plus a
  // chunk).
  const longLine = Math.max(maxHeldBytes, Math.min(maxHeldBytes + CONTEXT_BYTES, 2 * CONTEXT_BYTES))
  let chunks: Array<Uint8Array> = []
  let pendingLength = 0
  let lineLength = 0
  let context: Uint8Array = EMPTY
  // whether the context (or, without one, the pending bytes) starts a line
  let startsLine = true
  let carried: ReadonlyArray<OpenBlock> = []
  // values rules masked so far, masked wherever they recur in later windows (a checkpoint does not keep them)
  let repeats: RepeatSet = emptyRepeats()
  // Bytes emitted so far: marks are reported in output coordinates, once each.
  let emitted = 0
  // where windows are built when the output is reused
  let scratch: Uint8Array = EMPTY

  /**
   * The context and the pending chunks in one buffer masking may write
   * into: a fresh one, or the one kept. In a reused buffer the window
   * starts where its largest part copies fast (see `alignedAt`).
   */
  const windowOf = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
    if (output === false || length > MAX_REUSED) return copied(parts, length)
    const need = length + ALIGN_SLACK
    let into: Uint8Array
    if (output === true) {
      if (scratch.length < need) scratch = new Uint8Array(Math.min(MAX_REUSED + ALIGN_SLACK, Math.max(need, 2 * scratch.length)))
      into = scratch
    } else {
      into = output(need)
      if (into.length < need) throw new RangeError(`a stream's output buffer holds ${into.length} bytes, where its window needs ${need}`)
    }
    let largest = 0
    let before = 0 // bytes of the window before its largest part
    for (let i = 0, at = 0; i < parts.length; at += parts[i]!.length, i++) {
      if (parts[i]!.length > parts[largest]!.length) {
        largest = i
        before = at
      }
    }
    const start = alignedAt(parts[largest]!, into, before) - before
    const window = into.subarray(start, start + length)
    let at = 0
    for (const part of parts) {
      window.set(part, at)
      at += part.length
    }
    return window
  }

  const reset = (): void => {
    chunks = []
    pendingLength = 0
    lineLength = 0
    context = EMPTY
    startsLine = true
    carried = []
    repeats = emptyRepeats()
    emitted = 0
  }

  const emit = (cut: number, final: boolean): Uint8Array => {
    // One buffer holds the context and everything pending, so the emitted
    // part can be masked in place; what the next window needs is copied out
    // first, since it must be the original bytes.
    const combined = windowOf([context, ...chunks], context.length + pendingLength)
    const findings = engine.scan(combined, { carried, resumeAt: context.length, startsLine, final, repeats })
    const at = context.length + cut
    // values first masked in what is emitted now; those after the cut are found again in the next window
    if (findings.learned !== undefined) repeats = addRepeats(repeats, findings.learned.filter((l) => l.start < at).map((l) => l.value))

    let nextContext: Uint8Array = EMPTY
    let nextStartsLine = true
    let rest: Uint8Array = EMPTY
    if (!final) {
      // blocks opened before the cut and still open there go on in the next window
      carried = findings.blocks
        .filter((block) => block.openedAt < at && (block.closedAt === -1 || block.closedAt >= at))
        .map((block): OpenBlock => ({ rule: block.rule, lines: block.lines, prefix: block.prefix, skipped: block.skipped }))
      if (combined[at - 1] !== NEWLINE) {
        const newline = combined.lastIndexOf(NEWLINE, at - 1)
        const lineStart = newline + 1
        const from = Math.max(lineStart, at - CONTEXT_BYTES)
        nextContext = combined.slice(from, at)
        nextStartsLine = from === lineStart && (newline !== -1 || startsLine)
      }
      rest = combined.slice(at)
    }

    const out = applyFindingsInPlace(combined, findings, context.length, at)
    if (onMark !== undefined) {
      for (const mark of [...findings.marks].sort((a, b) => a - b)) {
        if (mark >= context.length && mark < at) onMark(emitted + mark - context.length)
      }
    }
    emitted += out.length
    if (final) {
      reset()
      return out
    }
    context = nextContext
    startsLine = nextStartsLine
    chunks = rest.length === 0 ? [] : [rest]
    pendingLength = rest.length
    lineLength = rest.length
    return out
  }

  const push = (chunk: Uint8Array): Uint8Array => {
    const length = chunk.length
    if (length === 0) return EMPTY
    pendingLength += length
    const newline = chunk.lastIndexOf(NEWLINE)
    lineLength = newline === -1 ? lineLength + length : length - newline - 1
    let cut = pendingLength - lineLength
    if (lineLength > longLine) cut = Math.max(cut, pendingLength - CONTEXT_BYTES)
    // a chunk kept for later is copied, since the caller may reuse its buffer;
    // one emitted now is copied into the window that emit builds
    chunks.push(cut <= 0 ? new Uint8Array(chunk) : chunk)
    return cut <= 0 ? EMPTY : emit(cut, false)
  }

  const end = (): Uint8Array => {
    if (pendingLength === 0) {
      reset()
      return EMPTY
    }
    return emit(pendingLength, true)
  }

  const checkpoint = (): StreamCheckpoint | undefined =>
    context.length > 0 ? undefined : { blocks: carried, emitted, held: copied(chunks, pendingLength) }

  if (from !== undefined) {
    carried = from.blocks
    emitted = from.emitted
    if (from.held.length > 0) {
      chunks = [new Uint8Array(from.held)]
      pendingLength = lineLength = from.held.length
    }
  }

  return { push, end, heldBytes: () => pendingLength, checkpoint }
}
