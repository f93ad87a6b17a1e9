import { Buffer, isAscii } from "node:buffer"
import { Clock, Effect } from "effect"
import type * as Grep from "../Grep.js"
import * as LineIndex from "../LineIndex.js"
import type { SpillFile, SpillIoError } from "../SpillStore.js"
import * as Utf8 from "../Utf8.js"

const CHUNK = 1 << 20

/** Builds (and remembers) the index of a file that has none saved beside it. @internal */
const built = new Map<string, LineIndex.LineIndex>()

/** @internal */
export const indexOf = (file: SpillFile): Effect.Effect<LineIndex.LineIndex, SpillIoError> =>
  Effect.gen(function*() {
    const saved = yield* file.index
    if (saved && saved.bytes === file.size) return saved
    const key = `${file.filename}:${file.size}`
    const known = built.get(key)
    if (known) return known
    const b = LineIndex.builder()
    for (let at = 0; at < file.size; at += CHUNK) b.push(yield* file.read(at, Math.min(CHUNK, file.size - at)))
    const index = b.result()
    if (built.size >= 32) built.delete(built.keys().next().value!)
    built.set(key, index)
    return index
  })

/** Byte offset where line `n` (1-indexed) starts; the file's size past the last line. @internal */
export const locate = (file: SpillFile, index: LineIndex.LineIndex, n: number): Effect.Effect<number, SpillIoError> =>
  Effect.gen(function*() {
    if (n <= 1) return 0
    if (n > index.lines) return file.size
    const k = Math.min(Math.floor((n - 1) / index.every), index.checkpoints.length - 1)
    let pos = index.checkpoints[k]!
    let line = k * index.every + 1
    while (line < n) {
      const chunk = yield* file.read(pos, Math.min(1 << 16, file.size - pos))
      if (chunk.length === 0) return file.size
      let at = chunk.indexOf(10)
      while (at !== -1) {
        line++
        if (line === n) return pos + at + 1
        at = chunk.indexOf(10, at + 1)
      }
      pos += chunk.length
    }
    return pos
  })

/** Streams `[start, end)` of a file to `emit` in bounded chunks. @internal */
export const copyRange = <E>(
  file: SpillFile,
  start: number,
  end: number,
  emit: (bytes: Uint8Array) => Effect.Effect<void, E>
): Effect.Effect<void, SpillIoError | E> =>
  Effect.gen(function*() {
    for (let at = start; at < end; at += CHUNK) {
      yield* emit(yield* file.read(at, Math.min(CHUNK, end - at)))
    }
  })

/** @internal */
export interface GrepScan {
  readonly matches: Array<{ line: number; text: string; cut: boolean }>
  more: boolean
  clippedLines: number
  scannedLines: number
  stoppedAt: number | undefined
}

/**
 * Scans a file block by block (whole lines), collecting up to `maxResults`
 * matching lines and noting whether more exist; stops at the deadline.
 *
 * @internal
 */
export const grep = (
  file: SpillFile,
  matcher: Grep.Matcher,
  options: { readonly maxResults: number; readonly maxLineChars: number; readonly maxMatchChars: number; readonly deadlineMs: number }
): Effect.Effect<GrepScan, SpillIoError> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const scan: GrepScan = { matches: [], more: false, clippedLines: 0, scannedLines: 0, stoppedAt: undefined }
    let carry: Uint8Array = new Uint8Array(0)
    let lineNo = 1 // number of the first line of the next block
    let pos = 0
    let skipping = false
    const full = () => scan.matches.length >= options.maxResults

    const record = (lineText: string, n: number): boolean => {
      const clipped = lineText.length > options.maxLineChars
      const probe = clipped ? lineText.slice(0, options.maxLineChars) : lineText
      if (!matcher.test(probe)) return false
      if (full()) {
        scan.more = true
        return true
      }
      const shown = Utf8.takeCodePoints(lineText, options.maxMatchChars)
      scan.matches.push({ line: n, text: shown, cut: shown.length < lineText.length })
      return false
    }

    while (pos < file.size || carry.length > 0) {
      if ((yield* Clock.currentTimeMillis) - started > options.deadlineMs) {
        scan.stoppedAt = lineNo
        break
      }
      const chunk = pos < file.size ? yield* file.read(pos, Math.min(CHUNK, file.size - pos)) : new Uint8Array(0)
      pos += chunk.length
      let joined = carry.length === 0 ? chunk : Buffer.concat([carry, chunk])
      if (skipping) {
        // the rest of a line longer than a block, already tested on its start
        const br = joined.indexOf(10)
        if (br === -1) {
          carry = new Uint8Array(0)
          continue
        }
        skipping = false
        joined = joined.subarray(br + 1)
        lineNo++
      }
      const atEnd = pos >= file.size
      const cut = atEnd ? joined.length : joined.lastIndexOf(10) + 1
      if (cut === 0) {
        if (joined.length < options.maxLineChars * 4 + CHUNK) {
          carry = joined
          continue
        }
        // one line longer than a block: match on its start, then skip the rest of it
        const start = Utf8.decodeLossy(joined.subarray(0, options.maxLineChars * 4))
        scan.clippedLines++
        if (record(start.slice(0, options.maxLineChars), lineNo)) break
        carry = new Uint8Array(0)
        skipping = true
        continue
      }
      const block = Buffer.from(joined.buffer, joined.byteOffset, cut)
      carry = joined.subarray(cut)
      const text = isAscii(block) ? block.toString("latin1") : Utf8.decodeLossy(block)
      const endsWithBreak = text.endsWith("\n")
      const lineCount = countLines(text, endsWithBreak)
      let stop = false
      if (matcher.candidates) {
        let cursorLine = lineNo
        let cursorPos = 0 // start of line `cursorLine` in text
        let testedThrough = lineNo - 1
        for (const [s, e] of matcher.candidates(text)) {
          // advance the cursor to the line holding s
          let next = text.indexOf("\n", cursorPos)
          while (next !== -1 && next < s) {
            cursorPos = next + 1
            cursorLine++
            next = text.indexOf("\n", cursorPos)
          }
          let linePos = cursorPos
          let n = cursorLine
          const last = Math.max(s, e - 1)
          while (true) {
            const br = text.indexOf("\n", linePos)
            const lineEnd = br === -1 ? text.length : br
            if (n > testedThrough) {
              const lineText = text.slice(linePos, lineEnd)
              if (lineText.length > options.maxLineChars) scan.clippedLines++
              testedThrough = n
              if (record(lineText, n)) {
                stop = true
                break
              }
            }
            if (br === -1 || br >= last) break
            linePos = br + 1
            n++
          }
          if (stop) break
        }
      } else {
        let linePos = 0
        for (let n = lineNo; n < lineNo + lineCount; n++) {
          const br = text.indexOf("\n", linePos)
          const lineText = text.slice(linePos, br === -1 ? text.length : br)
          if (lineText.length > options.maxLineChars) scan.clippedLines++
          if (record(lineText, n)) {
            stop = true
            break
          }
          linePos = br + 1
        }
      }
      lineNo += lineCount
      scan.scannedLines = lineNo - 1
      if (stop) break
    }
    return scan
  })

const countLines = (text: string, endsWithBreak: boolean): number => {
  if (text.length === 0) return 0
  let n = 0
  let at = text.indexOf("\n")
  while (at !== -1) {
    n++
    at = text.indexOf("\n", at + 1)
  }
  return endsWithBreak ? n : n + 1
}
