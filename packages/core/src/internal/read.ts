import { Clock, Effect } from "effect"
import * as Scan from "../BlockScan.js"
import type * as Grep from "../Grep.js"
import * as LineIndex from "../LineIndex.js"
import type { StoreFailed } from "../Errors.js"
import type { GrepResult } from "../Spill.js"
import * as Utf8 from "../Utf8.js"
import { decodeAscii, isAscii } from "./bytes.js"

const CHUNK = 1 << 20

/** A body to read: its name, its size and a way to read a range of it. @internal */
export interface SpillFile {
  readonly filename: string
  readonly size: number
  readonly read: (position: number, length: number, into?: Uint8Array) => Effect.Effect<Uint8Array, StoreFailed>
  /** The index its manifest records. */
  readonly index: LineIndex.LineIndex | undefined
}

type SpillIoError = StoreFailed

/** Indexes built for bodies whose manifest holds none for their size, by name and size; one per store. @internal */
export type IndexCache = Map<string, LineIndex.LineIndex>

/** The index the manifest records, or one built by reading the body once (and remembered in `built`). @internal */
export const indexOf = (file: SpillFile, built: IndexCache): Effect.Effect<LineIndex.LineIndex, SpillIoError> =>
  Effect.gen(function*() {
    const saved = file.index
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

/** A page of lines as read: its bytes, how many lines they are, and the line cut when one line was too long for the page. @internal */
export interface LinePage {
  readonly bytes: Uint8Array
  readonly lines: number
  readonly cutLine?: { readonly line: number; readonly shownBytes: number; readonly totalBytes: number }
}

/**
 * The lines `first` to `end` (exclusive), at bytes `[start, stop)`, within
 * `maxBytes`: all of them when they fit, else whole lines up to the limit,
 * else the start of the first line, cut on a code point and stated.
 *
 * @internal
 */
export const linePage = (
  file: SpillFile,
  index: LineIndex.LineIndex,
  range: { readonly first: number; readonly end: number; readonly start: number; readonly stop: number },
  maxBytes: number
): Effect.Effect<LinePage, SpillIoError> =>
  Effect.gen(function*() {
    const { end, first, start, stop } = range
    if (stop - start <= maxBytes) return { bytes: yield* file.read(start, stop - start), lines: end - first }
    const bytes = yield* file.read(start, maxBytes)
    const lastBreak = bytes.lastIndexOf(10)
    if (lastBreak !== -1) {
      const page = bytes.subarray(0, lastBreak + 1)
      let lines = 0
      for (let at = page.indexOf(10); at !== -1; at = page.indexOf(10, at + 1)) lines++
      return { bytes: page, lines }
    }
    const lineEnd = yield* locate(file, index, first + 1)
    const part = bytes.subarray(0, Utf8.byteBoundary(bytes, bytes.length))
    return { bytes: part, lines: 1, cutLine: { line: first, shownBytes: part.length, totalBytes: lineEnd - start } }
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
  /** What stopped the scan early, when something did. */
  stoppedBy: "deadline" | "bytes" | undefined
}

/** A scan as a search's result: the file, the pattern, the matches and where the scan stopped. @internal */
export const grepResult = (filename: string, pattern: string, scan: GrepScan, index: LineIndex.LineIndex): GrepResult => ({
  filename,
  pattern,
  matches: scan.matches,
  more: scan.more,
  totalLines: index.lines,
  clippedLines: scan.clippedLines,
  ...(scan.stoppedAt !== undefined ? { stoppedAtLine: scan.stoppedAt, stoppedBy: scan.stoppedBy ?? "deadline" } : {})
})

/**
 * Scans a file block by block (whole lines), collecting up to `maxResults`
 * matching lines and noting whether more exist; stops at the deadline,
 * inside a block too (the engine ends its scan there). A pattern with
 * required literals (one per top-level alternative, of either case when
 * the search ignores case) is looked for first with a native byte search
 * (`BlockScan.prefilter`), and only the lines holding one go to the engine. Line numbers come from the
 * index's checkpoints, so a block with no match is never counted line by
 * line.
 *
 * @internal
 */
export const grep = (
  file: SpillFile,
  index: LineIndex.LineIndex,
  matcher: Grep.Matcher,
  engine: Grep.PatternEngine["Type"],
  options: {
    readonly maxResults: number
    readonly maxLineChars: number
    readonly maxMatchChars: number
    readonly deadlineMs: number
    /** Bytes read after which the scan stops at the next block, saying where; no limit by default. */
    readonly maxBytes?: number | undefined
    /** Where to start: a line start and its line number; the start of the file by default. */
    readonly from?: { readonly byte: number; readonly line: number } | undefined
  }
): Effect.Effect<GrepScan, SpillIoError> =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + options.deadlineMs
    const scan: GrepScan = { matches: [], more: false, clippedLines: 0, scannedLines: 0, stoppedAt: undefined, stoppedBy: undefined }
    const size = Math.min(BLOCK, Math.max(file.size, 1))
    const buf = new Uint8Array(size)
    // the lines that may match are found by a byte search for the pattern's literals, ranked on the first bytes read
    let prefilter: Scan.Prefilter | undefined
    let ranked = false
    let filled = 0 // bytes of buf holding unscanned data (a carried partial line, then new reads)
    let pos = options.from?.byte ?? 0 // file offset of the next read
    let blockStart = pos // file offset of buf[0]
    let lineNo = options.from?.line ?? 1 // number of the line starting at buf[0]
    let skipping = false

    /**
     * Runs the engine over `text` (lines), whose line `k` is line `numberOf(k)`
     * of the file; false when the search is over (enough matches, or the deadline).
     */
    const search = (text: string, numberOf: (k: number) => number) =>
      Effect.gen(function*() {
        const left = deadline - (yield* Clock.currentTimeMillis)
        const found = yield* engine.scan(matcher, text, {
          limit: options.maxResults - scan.matches.length,
          maxLineChars: options.maxLineChars,
          timeoutMillis: left
        })
        scan.clippedLines += found.clipped
        for (const [k, start, end] of found.matches) {
          const lineText = text.slice(start, end)
          const shown = Utf8.takeCodePoints(lineText, options.maxMatchChars)
          scan.matches.push({ line: numberOf(k), text: shown, cut: shown.length < lineText.length })
        }
        if (found.more) scan.more = true
        if (!found.complete) {
          scan.stoppedAt = numberOf(Math.min(found.lines, Math.max(0, countLines(text) - 1)))
          scan.stoppedBy = "deadline"
        }
        return !found.more && found.complete
      })

    const firstByte = pos
    while (true) {
      if ((yield* Clock.currentTimeMillis) > deadline) {
        scan.stoppedAt = lineNo
        scan.stoppedBy = "deadline"
        break
      }
      if (options.maxBytes !== undefined && !skipping && blockStart - firstByte >= options.maxBytes) {
        scan.stoppedAt = lineNo
        scan.stoppedBy = "bytes"
        break
      }
      if (pos < file.size && filled < buf.length) {
        const got = yield* file.read(pos, buf.length - filled, buf.subarray(filled))
        pos += got.length
        filled += got.length
      }
      if (filled === 0) break
      const atEnd = pos >= file.size
      if (!ranked) {
        prefilter = Scan.prefilter(matcher.literalSets ?? matcher.literals, matcher.ignoreCase, buf.subarray(0, filled))
        if (prefilter !== undefined) {
          const left = deadline - (yield* Clock.currentTimeMillis)
          if (yield* needlesInVain(matcher, engine, prefilter, buf.subarray(0, filled), Math.min(SAMPLE_MILLIS, left))) prefilter = undefined
        }
        ranked = true
      }
      if (skipping) {
        // the rest of a line longer than a block, already tested on its start
        const br = buf.indexOf(10)
        if (br === -1 || br >= filled) {
          blockStart += filled
          filled = 0
          if (atEnd) break
          continue
        }
        skipping = false
        buf.copyWithin(0, br + 1, filled)
        blockStart += br + 1
        filled -= br + 1
        lineNo++
        continue
      }
      const cut = atEnd ? filled : buf.lastIndexOf(10, filled - 1) + 1
      if (cut === 0) {
        // one line fills the whole buffer: match on its start, then skip the rest of it
        const start = Utf8.decodeLossy(buf.subarray(0, Math.min(filled, options.maxLineChars * 4))).slice(0, options.maxLineChars)
        const n = lineNo
        const go = yield* search(start, () => n)
        scan.clippedLines++
        if (!go) break
        skipping = true
        continue
      }
      const block = buf.subarray(0, cut)
      let go = true
      if (prefilter === undefined) {
        go = yield* search(decode(block), (k) => lineNo + k)
      } else {
        // only the lines holding a literal can match
        const starts: Array<number> = []
        const parts: Array<string> = []
        Scan.eachCandidate(prefilter, block, lineNo, (n, start, end) => {
          starts.push(n)
          parts.push(decode(block.subarray(start, end)))
          return true
        })
        if (parts.length > 0) go = yield* search(parts.join("\n"), (k) => starts[k]!)
      }
      if (!go) break
      const blockLines = atEnd ? index.lines - lineNo + 1 : Scan.linesBefore(index, buf, blockStart, lineNo, cut)
      lineNo += blockLines
      scan.scannedLines = lineNo - 1
      buf.copyWithin(0, cut, filled)
      blockStart += cut
      filled -= cut
      if (atEnd && filled === 0) break
    }
    return scan
  })

const decode = (bytes: Uint8Array): string => (isAscii(bytes) ? decodeAscii(bytes) : Utf8.decodeLossy(bytes))

const countLines = (text: string): number => {
  let n = 0
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) n++
  return text.length > 0 && !text.endsWith("\n") ? n + 1 : n
}

const BLOCK = 1 << 20

/** Most of a search's time the test of its sampled lines takes (see `needlesInVain`). */
const SAMPLE_MILLIS = 50

/**
 * Whether a search's needles are in vain on the first lines it read (see
 * `Scan.inVain`): the sampled lines holding one are tested by the engine,
 * as every line is, within `timeoutMillis`; the needles are kept when that
 * is not enough.
 */
export const needlesInVain = (
  matcher: Grep.Matcher,
  engine: Grep.PatternEngine["Type"],
  p: Scan.Prefilter,
  sample: Uint8Array,
  timeoutMillis: number
): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const s = Scan.sampled(p, sample)
    if (s === undefined || s.candidates.length === 0) return false
    const found = yield* engine.scan(matcher, s.candidates.join("\n"), { limit: s.candidates.length, maxLineChars: Scan.SAMPLE_LINE_CHARS, timeoutMillis })
    return found.complete && Scan.inVain(s, found.matches.length)
  })

