/**
 * What a model sees of a long text: whole lines kept from the head, the tail
 * or both ends within a byte and a line budget, with an exact account of what
 * was shown and what was cut. Pure functions; no Effect needed.
 *
 * @since 0.1.0
 */
import * as Split from "./internal/split.js"
import * as Marker from "./Marker.js"
import * as Utf8 from "./Utf8.js"

/** Which lines a projection keeps: the first, the last, both ends, or everything (`none` bypasses the budget). */
export type Strategy = "head" | "tail" | "middle" | "none"

/** The unit `maxBytes` counts: UTF-8 bytes, UTF-8 bytes once JSON-escaped, or Unicode code points. */
export type Measure = "utf8" | "json" | "code-points"

/** A budget and the end(s) to keep. Each kept line is charged its length plus one line break. */
export interface Policy {
  readonly strategy: Strategy
  /** Most units (see `measure`) the kept lines may cost, line breaks included. */
  readonly maxBytes: number
  /** Most lines that may be kept. */
  readonly maxLines: number
  /** The unit of `maxBytes`; UTF-8 bytes when left out. */
  readonly measure?: Measure | undefined
  /**
   * What happens when not even one whole line fits: "cut" (the default)
   * shows that line's start and its end with the bytes left out counted
   * between them (see `elide`), "omit" shows nothing of it. A line that
   * does not fit after other whole lines is always left out, never split.
   */
  readonly longLine?: "cut" | "omit" | undefined
}

/** An inclusive, 1-indexed range of line numbers. */
export interface LineRange {
  readonly from: number
  readonly to: number
}

/**
 * A line longer than the whole budget, kept in part: its start and its end
 * around `Marker.omitted` (`both`), or where even that gap has no room, only
 * its start (head, middle) or its end (tail).
 */
export interface CutLine {
  readonly line: number
  readonly keep: "start" | "end" | "both"
  /** UTF-8 bytes of the line shown: `startBytes + endBytes`. */
  readonly shownBytes: number
  /** UTF-8 bytes of the line's start that are shown (0 when only its end is). */
  readonly startBytes: number
  /** UTF-8 bytes of the line's end that are shown (0 when only its start is). */
  readonly endBytes: number
  readonly totalBytes: number
}

/** The lines a projection kept and an exact account of the cut. */
export interface Projection {
  readonly strategy: Strategy
  /** Lines of the first kept range (all kept lines for head and tail). */
  readonly head: ReadonlyArray<string>
  /** Lines of the second kept range; only `middle` fills it. */
  readonly tail: ReadonlyArray<string>
  /** The kept ranges in order: one, two for a middle cut, none when nothing fit. */
  readonly ranges: ReadonlyArray<LineRange>
  readonly totalLines: number
  /** UTF-8 bytes of the whole input. */
  readonly totalBytes: number
  readonly shownLines: number
  /** UTF-8 bytes of the kept lines joined by line breaks (both ranges for middle). */
  readonly shownBytes: number
  /** Units of the policy's measure charged for the kept lines. */
  readonly cost: number
  /** True when any line, or any part of a line, was left out. */
  readonly truncated: boolean
  readonly cutLine?: CutLine | undefined
}

/** Splits text into lines on `\n`; a final line break does not start another line, so "" has no lines. */
export const splitLines = (text: string): Array<string> => {
  if (text.length === 0) return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** The cost of a string in a measure. */
export const measureOf = (measure: Measure | undefined): (text: string) => number =>
  measure === "json" ? Utf8.jsonByteLength : measure === "code-points" ? Utf8.codePointLength : Utf8.byteLength

const fitStart = (text: string, budget: number, measure: Measure | undefined): string => {
  if (measure === "code-points") return Utf8.takeCodePoints(text, budget)
  if (measure === "json") return takeWhileFits(text, budget, Utf8.jsonByteLength, false)
  return Utf8.takeBytes(text, budget)
}

const fitEnd = (text: string, budget: number, measure: Measure | undefined): string => {
  if (measure === "code-points") return Utf8.takeLastCodePoints(text, budget)
  if (measure === "json") return takeWhileFits(text, budget, Utf8.jsonByteLength, true)
  return Utf8.takeLastBytes(text, budget)
}

/** Binary search for the longest prefix (or suffix) that fits; costs are monotone in length. */
const takeWhileFits = (text: string, budget: number, cost: (s: string) => number, fromEnd: boolean): string => {
  const cut = (n: number) => fromEnd ? text.slice(text.length - n) : text.slice(0, n)
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (cost(cut(mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  // never leave half of a surrogate pair at the cut
  const s = cut(lo)
  const first = s.charCodeAt(0)
  const last = s.charCodeAt(s.length - 1)
  if (fromEnd && first >= 0xdc00 && first <= 0xdfff) return s.slice(1)
  if (!fromEnd && last >= 0xd800 && last <= 0xdbff) return s.slice(0, -1)
  return s
}

/** A long line shown by its start and its end, with the bytes left out between them counted exactly. */
export interface Elided {
  /** The start, `Marker.omitted(omittedBytes)`, the end. */
  readonly text: string
  readonly startBytes: number
  readonly endBytes: number
  readonly omittedBytes: number
}

/**
 * Shows a line that does not fit `budget` by its start and its end, with
 * `Marker.omitted` between, costing at most `budget` units of `measure`.
 * `start` is the line or a prefix of it, `end` the line or a suffix of it
 * (each at least as long as the budget), and `totalBytes` the line's UTF-8
 * length. The start gets half of what the gap leaves and the end the rest;
 * undefined when that is not even one unit each.
 */
export const elide = (start: string, end: string, totalBytes: number, budget: number, measure?: Measure): Elided | undefined => {
  const cost = measureOf(measure)
  // the gap is reserved at its longest: the count it states can only be smaller
  const room = Math.floor(budget) - cost(Marker.omitted(totalBytes))
  if (room < 2) return undefined
  const first = fitStart(start, Math.floor(room / 2), measure)
  const last = fitEnd(end, room - cost(first), measure)
  if (first.length === 0 || last.length === 0) return undefined
  const startBytes = Utf8.byteLength(first)
  const endBytes = Utf8.byteLength(last)
  const omittedBytes = Math.max(0, totalBytes - startBytes - endBytes)
  return { text: first + Marker.omitted(omittedBytes) + last, startBytes, endBytes, omittedBytes }
}

/** Projects text onto a policy. */
export const project = (text: string, policy: Policy): Projection => projectLines(splitLines(text), policy)

/** Projects already split lines onto a policy (see `splitLines`). */
export const projectLines = (lines: ReadonlyArray<string>, policy: Policy): Projection => {
  const measure = measureOf(policy.measure)
  const totalLines = lines.length
  const totalBytes = lines.reduce((n, l) => n + Utf8.byteLength(l), 0) + Math.max(0, totalLines - 1)
  const nl = measure("\n")
  const cost = (line: string) => measure(line) + nl
  const maxBytes = Math.max(0, Math.floor(policy.maxBytes))
  const maxLines = Math.max(0, Math.floor(policy.maxLines))
  const make = (head: Array<string>, tail: Array<string>, headStart: number, spent: number, cutLine?: CutLine) => {
    const ranges: Array<LineRange> = []
    if (head.length > 0) ranges.push({ from: headStart, to: headStart + head.length - 1 })
    if (tail.length > 0) ranges.push({ from: totalLines - tail.length + 1, to: totalLines })
    const shown = head.length + tail.length
    const shownBytes = [...head, ...tail].reduce((n, l) => n + Utf8.byteLength(l), 0) +
      Math.max(0, head.length - 1) + Math.max(0, tail.length - 1)
    return {
      strategy: policy.strategy,
      head,
      tail,
      ranges,
      totalLines,
      totalBytes,
      shownLines: shown,
      shownBytes,
      cost: spent,
      truncated: cutLine !== undefined || shown < totalLines,
      ...(cutLine ? { cutLine } : {})
    } satisfies Projection
  }

  if (policy.strategy === "none") {
    return make([...lines], [], 1, lines.reduce((n, l) => n + cost(l), 0))
  }

  // Takes whole lines from one end while they fit; returns how many and what they cost.
  const take = (from: number, to: number, step: 1 | -1, budget: number, count: number) => {
    let spent = 0
    let n = 0
    for (let i = from; step === 1 ? i < to : i > to; i += step) {
      if (n >= count) break
      const c = cost(lines[i]!)
      if (spent + c > budget) break
      spent += c
      n++
    }
    return { n, spent }
  }

  // Not one whole line fits: the line at the end kept is shown by its start and its end, or where the
  // gap leaves no room for both, by the one end of it the strategy keeps.
  const cutSingle = (index: number, keep: "start" | "end"): Projection => {
    if (policy.longLine === "omit") return make([], [], 1, 0)
    const line = lines[index]!
    const totalBytes = Utf8.byteLength(line)
    const room = Math.max(0, maxBytes - nl)
    const both = elide(line, line, totalBytes, room, policy.measure)
    if (both !== undefined) {
      const cutLine: CutLine = {
        line: index + 1,
        keep: "both",
        shownBytes: both.startBytes + both.endBytes,
        startBytes: both.startBytes,
        endBytes: both.endBytes,
        totalBytes
      }
      return make([both.text], [], index + 1, measure(both.text) + nl, cutLine)
    }
    const part = keep === "start" ? fitStart(line, room, policy.measure) : fitEnd(line, room, policy.measure)
    if (part.length === 0) return make([], [], 1, 0)
    const shownBytes = Utf8.byteLength(part)
    const cutLine: CutLine = {
      line: index + 1,
      keep,
      shownBytes,
      startBytes: keep === "start" ? shownBytes : 0,
      endBytes: keep === "end" ? shownBytes : 0,
      totalBytes
    }
    return make([part], [], index + 1, measure(part) + nl, cutLine)
  }

  if (policy.strategy === "head") {
    const h = take(0, totalLines, 1, maxBytes, maxLines)
    if (h.n === 0 && totalLines > 0 && maxLines > 0) return cutSingle(0, "start")
    return make(lines.slice(0, h.n), [], 1, h.spent)
  }
  if (policy.strategy === "tail") {
    const t = take(totalLines - 1, -1, -1, maxBytes, maxLines)
    if (t.n === 0 && totalLines > 0 && maxLines > 0) return cutSingle(totalLines - 1, "end")
    return make(lines.slice(totalLines - t.n), [], totalLines - t.n + 1, t.spent)
  }

  // middle: the head gets half the budget and half the lines, the tail what
  // the head left, and the head then grows into whatever the tail did not use.
  const split = Split.byCost({
    total: totalLines,
    head: { count: totalLines, cost: (i) => cost(lines[i]!) },
    tail: { count: totalLines, cost: (i) => cost(lines[totalLines - 1 - i]!) },
    first: "head",
    share: { budget: Math.floor(maxBytes / 2), units: Math.ceil(maxLines / 2) },
    budget: maxBytes,
    maxUnits: maxLines
  })
  if (split.head + split.tail === totalLines) return make([...lines], [], 1, split.spent)
  if (split.head === 0 && split.tail === 0 && totalLines > 0 && maxLines > 0) return cutSingle(0, "start")
  if (split.head === 0) {
    return make(lines.slice(totalLines - split.tail), [], totalLines - split.tail + 1, split.spent)
  }
  return make(lines.slice(0, split.head), lines.slice(totalLines - split.tail), 1, split.spent)
}

/** The marker that states what a projection shows; `fullOutput` names a saved copy that really exists. */
export const marker = (projection: Projection, fullOutput?: string): string =>
  Marker.format({
    ranges: projection.ranges,
    totalLines: projection.totalLines,
    ...(fullOutput !== undefined ? { fullOutput } : {}),
    ...(projection.cutLine ? { cutLine: projection.cutLine } : {})
  })

/**
 * The projection as text with its marker where lines are missing: after a
 * head, before a tail, between the two ranges of a middle cut. An uncut
 * projection is returned without a marker.
 */
export const render = (projection: Projection, fullOutput?: string): string => {
  const head = projection.head.join("\n")
  if (!projection.truncated) return head
  const m = marker(projection, fullOutput)
  if (projection.tail.length > 0) return `${head}\n${m}\n${projection.tail.join("\n")}`
  if (projection.head.length === 0) return m
  const isTail = projection.ranges[0]!.to === projection.totalLines && projection.ranges[0]!.from > 1
  return isTail || (projection.cutLine?.keep === "end") ? `${m}\n${head}` : `${head}\n${m}`
}
