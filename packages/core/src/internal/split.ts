/**
 * The one head/tail splitter: how many units (lines, or code points) of the
 * start and of the end of a sequence to show within a budget, the rest left
 * out between them. One end is filled first, within its share of the
 * budget; the other end then takes what is left; the first end grows into
 * whatever the second did not use. Every view that shows both ends of a text
 * asks this: a projection's middle cut, a command's preview, the first
 * result of kept output, a squeezed result, an error's words.
 *
 * @internal
 */
import * as Utf8 from "./utf8.js"

/** An end of a sequence: its start or its end. */
export type End = "head" | "tail"

/** How many units each end shows. The two never overlap: `head + tail` is at most the sequence's units. */
export interface Ends {
  readonly head: number
  readonly tail: number
}

/** A split in its most general form: the budget is a test of counts, so it may be any monotone measure. */
export interface Plan {
  /** Units in the whole sequence; the ends together never show more, so they never overlap. */
  readonly total: number
  /** Most units the head can show (the units it holds); `total` when left out. */
  readonly headMax?: number | undefined
  /** Most units the tail can show (the units it holds); `total` when left out. */
  readonly tailMax?: number | undefined
  /** The end filled first, within its share. */
  readonly first: End
  /** Whether `n` units of the first end, alone, fit its share. Fewer units never fit worse. */
  readonly fitsShare: (n: number) => boolean
  /** Whether `head` units of the start and `tail` units of the end fit the whole budget. Fewer units never fit worse. */
  readonly fits: (head: number, tail: number) => boolean
  /** Whether the first end grows into what the second left; true when left out. */
  readonly grow?: boolean | undefined
}

/**
 * The largest `n` in `[from, max]` for which `ok` holds, given that it holds
 * for `from` and, once false, stays false: it doubles its step from `from`,
 * then halves the gap, so the tests grow with the log of the answer.
 */
export const largest = (from: number, max: number, ok: (n: number) => boolean): number => {
  let lo = from
  let step = 1
  let hi = max
  while (lo < max) {
    const next = Math.min(max, lo + step)
    if (!ok(next)) {
      hi = next - 1
      break
    }
    lo = next
    step *= 2
  }
  while (lo < hi) {
    const mid = lo + Math.ceil((hi - lo) / 2)
    if (ok(mid)) lo = mid
    else hi = mid - 1
  }
  return lo
}

/** Splits a sequence by a plan: the first end within its share, the other in what is left, the first grown. */
export const ends = (plan: Plan): Ends => {
  const total = Math.max(0, Math.floor(plan.total))
  const headMax = Math.min(total, Math.max(0, Math.floor(plan.headMax ?? total)))
  const tailMax = Math.min(total, Math.max(0, Math.floor(plan.tailMax ?? total)))
  const firstMax = plan.first === "head" ? headMax : tailMax
  const secondMax = plan.first === "head" ? tailMax : headMax
  const fits = (first: number, second: number) =>
    plan.first === "head" ? plan.fits(first, second) : plan.fits(second, first)
  const a = largest(0, firstMax, (n) => plan.fitsShare(n))
  const b = largest(0, Math.min(secondMax, total - a), (n) => fits(a, n))
  const c = plan.grow === false ? a : largest(a, Math.min(firstMax, total - b), (n) => fits(n, b))
  return plan.first === "head" ? { head: c, tail: b } : { head: b, tail: c }
}

/** One end's units by their cost: `cost(i)` is the cost of the `i`-th unit from that end (0-based). */
export interface Side {
  readonly count: number
  readonly cost: (i: number) => number
}

/** A split whose budget is a sum of unit costs (each at least 0), and at most `maxUnits` units. */
export interface Costs {
  readonly total: number
  readonly head: Side
  readonly tail: Side
  readonly first: End
  /** What the first end may take before the other has its turn: a budget, and a number of units. */
  readonly share: { readonly budget: number; readonly units?: number | undefined }
  readonly budget: number
  /** Most units the two ends show together; no limit when left out. */
  readonly maxUnits?: number | undefined
}

/** What a split by costs shows and what it costs. */
export interface Spent extends Ends {
  readonly spent: number
}

/** The sum of the first `n` costs of a side, computed as far as asked and kept. */
const prefixOf = (side: Side) => {
  const sums = [0]
  return (n: number): number => {
    for (let i = sums.length - 1; i < n; i++) sums.push(sums[i]! + side.cost(i))
    return sums[n]!
  }
}

/**
 * Splits a sequence whose units each cost something (a line its length and
 * its line break): the ends show whole units only, taken while they fit.
 */
export const byCost = (c: Costs): Spent => {
  const head = prefixOf(c.head)
  const tail = prefixOf(c.tail)
  const firstCost = c.first === "head" ? head : tail
  const maxUnits = c.maxUnits ?? Infinity
  const shareUnits = c.share.units ?? Infinity
  const split = ends({
    total: c.total,
    headMax: Math.min(c.head.count, maxUnits),
    tailMax: Math.min(c.tail.count, maxUnits),
    first: c.first,
    // a share never holds more than the whole budget, even when asked to (a budget below zero holds nothing)
    fitsShare: (n) => n <= shareUnits && firstCost(n) <= Math.min(c.share.budget, c.budget),
    fits: (h, t) => h + t <= maxUnits && head(h) + tail(t) <= c.budget
  })
  return { ...split, spent: head(split.head) + tail(split.tail) }
}

/** How `text` cuts a string: what to keep, the head's share of it, and the marker that takes the place of the rest. */
export interface TextCut {
  /** Code points to keep of both ends together. */
  readonly keep: number
  /** The head's share of `keep`, from 0 to 1, rounded up; the tail has the rest. */
  readonly headShare: number
  /** The words put between the ends, given how many code points were left out. */
  readonly marker: (omitted: number) => string
  /** The string's length in code points, when the caller knows it already. */
  readonly codePoints?: number | undefined
}

/** A string cut by `text`: the ends shown, how many code points were left out, and the whole as shown. */
export interface CutText {
  readonly head: string
  readonly tail: string
  readonly omitted: number
  /** The head, the marker and the tail; the string itself when nothing was left out. */
  readonly text: string
}

/**
 * A string longer than `keep` code points shown by its start and its end,
 * whole code points only, with a marker counting exactly the code points
 * left out between them; a string that fits is returned whole.
 */
export const text = (source: string, cut: TextCut): CutText => {
  const total = cut.codePoints ?? Utf8.codePointLength(source)
  const keep = Math.max(0, Math.floor(cut.keep))
  if (total <= keep) return { head: source, tail: "", omitted: 0, text: source }
  const share = Math.ceil(keep * Math.min(1, Math.max(0, cut.headShare)))
  const split = ends({
    total,
    first: "head",
    fitsShare: (n) => n <= share,
    fits: (h, t) => h + t <= keep
  })
  const head = Utf8.takeCodePoints(source, split.head)
  const tail = Utf8.takeLastCodePoints(source, split.tail)
  const omitted = total - split.head - split.tail
  return { head, tail, omitted, text: head + cut.marker(omitted) + tail }
}
