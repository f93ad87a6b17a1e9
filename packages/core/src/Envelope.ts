/**
 * Fitting a result to a delivery budget: the largest page of content whose
 * complete serialized envelope (JSON escaping, labels, metadata, byte counts
 * and the next cursor included) fits the budget exactly. Every tool that
 * pages content through a budget uses this, so the accounting lives in one
 * place. Pure functions.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import * as Utf8 from "./Utf8.js"

/** How a budget counts the serialized envelope: Unicode code points, or UTF-8 bytes. */
export type Measure = "code-points" | "utf8"

/** A budget for one serialized result. */
export interface Budget {
  readonly limit: number
  /** Code points by default. */
  readonly measure?: Measure | undefined
}

/** Even the smallest useful envelope does not fit the budget. */
export class EnvelopeTooSmall extends Schema.TaggedError<EnvelopeTooSmall>()("EnvelopeTooSmall", {
  limit: Schema.Number,
  needed: Schema.Number,
  measure: Schema.Literal("code-points", "utf8")
}) {
  override get message() {
    return `the result needs at least ${this.needed} ${this.measure === "utf8" ? "bytes" : "characters"} to carry any content, over the budget of ${this.limit}; raise the budget or shorten the result's metadata`
  }
}

/** An envelope that fits, the content count it carries, and its serialized size. */
export interface Fitted<A> {
  readonly value: A
  /** Code points (for `fitText`) or items (for `fitCount`) of content the envelope carries. */
  readonly count: number
  readonly serialized: string
  readonly size: number
}

/** The size of a serialized envelope in a measure. */
export const sizeOf = (serialized: string, measure: Measure = "code-points"): number =>
  measure === "utf8" ? Utf8.byteLength(serialized) : Utf8.codePointLength(serialized)

const serialize = (value: unknown): string => JSON.stringify(value)

/**
 * The largest `n` in `[min, max]` whose envelope `build(n)` serializes within
 * the budget. `build` must grow (not shrink) as `n` grows; the result is
 * checked, so a `build` that breaks this can only make the fit smaller, never
 * over the budget. `build(max)` is tried first, so a result that fits whole
 * costs one serialization. Fails when even `build(min)` does not fit. `render` is
 * what the budget counts: the JSON serialization unless the result is
 * delivered in another form (plain text, say).
 */
export const fitCount = <A>(
  min: number,
  max: number,
  build: (n: number) => A,
  budget: Budget,
  render: (value: A) => string = serialize
): Either.Either<Fitted<A>, EnvelopeTooSmall> => {
  const measure = budget.measure ?? "code-points"
  const attempt = (n: number) => {
    const value = build(n)
    const serialized = render(value)
    return { value, count: n, serialized, size: sizeOf(serialized, measure) }
  }
  // most pages fit whole (the budget is larger than the page's limit): one attempt then
  const whole = max > min ? attempt(max) : undefined
  if (whole !== undefined && whole.size <= budget.limit) return Either.right(whole)
  let best = attempt(min)
  if (best.size > budget.limit) {
    return Either.left(new EnvelopeTooSmall({ limit: budget.limit, needed: best.size, measure }))
  }
  let lo = min
  let hi = whole === undefined ? max : max - 1
  while (lo < hi) {
    const mid = lo + Math.ceil((hi - lo) / 2)
    const a = attempt(mid)
    if (a.size <= budget.limit) {
      lo = mid
      best = a
    } else hi = mid - 1
  }
  return Either.right(best)
}

/**
 * The envelope carrying the longest prefix of `text` (whole code points)
 * that fits the budget; `build` receives the prefix and how many code points
 * it holds. Fails when the text is not empty and not even one code point
 * fits: a page that does not advance is never returned. `render` is what
 * the budget counts, as for `fitCount`.
 */
export const fitText = <A>(
  text: string,
  build: (part: string, codePoints: number) => A,
  budget: Budget,
  render: (value: A) => string = serialize
): Either.Either<Fitted<A>, EnvelopeTooSmall> => {
  // every code point costs at least one unit of the envelope, so no more than the limit can fit
  const window = Utf8.takeCodePoints(text, Math.max(0, budget.limit))
  const ends: Array<number> = [0]
  for (let i = 0; i < window.length;) {
    const c = window.charCodeAt(i)
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < window.length && (window.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1
    ends.push(i)
  }
  const min = window.length === 0 ? 0 : 1
  return fitCount(min, ends.length - 1, (n) => build(window.slice(0, ends[n]), n), budget, render)
}
