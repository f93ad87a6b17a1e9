/**
 * Paging through a retained search snapshot (web search, memory search, grep
 * results...) within a delivery budget, without running the search again.
 * Matches keep their ranking order; a page carries as many whole matches as
 * its complete envelope fits, and a match larger than a page is read in
 * bounded fragments of its text, counted in code points. Pure functions.
 *
 * @since 0.1.0
 */
import { Either } from "effect"
import * as Envelope from "./Envelope.js"
import * as Utf8 from "./Utf8.js"

/** One ranked search match, as the search returned it. */
export interface Match {
  readonly title?: string
  readonly url?: string
  readonly text: string
}

/**
 * Where a reader is in a snapshot: the match index, and a code-point offset
 * inside that match's text (0 unless a match larger than a page is being read
 * in fragments).
 */
export interface Position {
  readonly match: number
  readonly offset: number
}

/** The code points `[from, to)` of a match's text that a fragment carries, out of `of`. */
export interface Fragment {
  readonly from: number
  readonly to: number
  readonly of: number
}

/** A match as a page shows it: its 1-based rank in the snapshot, and the fragment it carries when it is shown in part. */
export type Shown = Match & { readonly rank: number; readonly fragment?: Fragment }

/** A page of matches. */
export interface Page {
  readonly matches: ReadonlyArray<Shown>
  /**
   * `showing X of Y returned matches; Z deferred`: X matches on this page (a
   * fragment counts as one), Y in the snapshot, Z after the last one this
   * page shows. The rest of a match cut in a fragment is not counted in Z;
   * `next` points at it.
   */
  readonly summary: string
  /** Where the next page starts; absent when nothing is left to read. */
  readonly next?: Position
  /** True exactly when `next` is present. */
  readonly truncated: boolean
}

/** A fitted page and the envelope that carries it. */
export interface Paged<E> {
  readonly value: E
  readonly page: Page
}

const shown = (m: Match, rank: number, text: string, fragment?: Fragment): Shown => ({
  rank,
  ...(m.title !== undefined ? { title: m.title } : {}),
  ...(m.url !== undefined ? { url: m.url } : {}),
  ...(fragment !== undefined ? { fragment } : {}),
  text
})

const makePage = (matches: ReadonlyArray<Shown>, total: number, deferred: number, next: Position | undefined): Page => ({
  matches,
  summary: `showing ${matches.length} of ${total} returned matches; ${deferred} deferred`,
  ...(next !== undefined ? { next } : {}),
  truncated: next !== undefined
})

/** The code points of `text`, counted no further than `limit + 1`. */
const atLeast = (text: string, limit: number): number => {
  let n = 0
  for (let i = 0; i < text.length && n <= limit; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
    n++
  }
  return n
}

/**
 * The most whole matches from `start` (up to `count`) that could possibly fit
 * `room`: each serialized match costs at least one unit per code point of its
 * text plus one, in either measure, so no more than these need be tried.
 */
const wholeCap = (snapshot: ReadonlyArray<Match>, start: number, count: number, room: number): number => {
  let used = 0
  let n = 0
  while (n < count) {
    used += atLeast(snapshot[start + n]!.text, room) + 1
    if (used > room) break
    n++
  }
  return n
}

/**
 * All `remaining` whole matches when they fit (tried on their own, since the
 * last page has no next position and may be the smaller envelope), else the
 * most of `min` to `cap` that fit; undefined when not even `min` fit.
 */
const fitMost = <E>(
  build: (n: number) => E,
  min: number,
  cap: number,
  remaining: number,
  budget: Envelope.Budget
): Envelope.Fitted<E> | undefined => {
  if (cap === remaining) {
    const all = Envelope.fitCount(remaining, remaining, build, budget)
    if (Either.isRight(all)) return all.right
  }
  const most = Math.min(cap, remaining - 1)
  if (most >= min) {
    const some = Envelope.fitCount(min, most, build, budget)
    if (Either.isRight(some)) return some.right
  }
  return undefined
}

/**
 * The page of a snapshot that starts at `from`, fitted so that the whole
 * envelope (`envelope(page)` serialized as JSON) fits the budget. Whole
 * matches are preferred; when not even the next whole match fits, it comes in
 * a fragment of its text, and a page that starts inside a match (a positive
 * `from.offset`) starts with the rest of that match. Every page advances by at least
 * one whole match or one code point; when that cannot fit, the page is refused
 * with `EnvelopeTooSmall`. A position at or past the end gives an empty page.
 */
export const page = <E>(
  snapshot: ReadonlyArray<Match>,
  from: Position,
  envelope: (page: Page) => E,
  budget: Envelope.Budget
): Either.Either<Paged<E>, Envelope.EnvelopeTooSmall> => {
  const total = snapshot.length
  let k = Number.isSafeInteger(from.match) && from.match > 0 ? from.match : 0
  let offset = Number.isSafeInteger(from.offset) && from.offset > 0 ? from.offset : 0
  // an offset at or past the end of its match is the start of the following one
  if (k < total && offset > 0 && offset >= Utf8.codePointLength(snapshot[k]!.text)) {
    k++
    offset = 0
  }
  const done = (fitted: Either.Either<Envelope.Fitted<E>, Envelope.EnvelopeTooSmall>, pageAt: (count: number) => Page) =>
    Either.map(fitted, (f) => ({ value: f.value, page: pageAt(f.count) }))

  if (k >= total) {
    const empty = makePage([], total, 0, undefined)
    return done(Envelope.fitCount(0, 0, () => envelope(empty), budget), () => empty)
  }

  const whole = (start: number, n: number): Array<Shown> =>
    snapshot.slice(start, start + n).map((m, i) => shown(m, start + i + 1, m.text))
  const nextAfter = (end: number): Position | undefined => (end < total ? { match: end, offset: 0 } : undefined)

  // `n` whole matches from `k`
  const wholePage = (n: number): Page => makePage(whole(k, n), total, total - k - n, nextAfter(k + n))

  const m = snapshot[k]!
  const startAt = Utf8.takeCodePoints(m.text, offset).length
  const rest = m.text.slice(startAt)
  const of = offset + Utf8.codePointLength(rest)

  // the match at `k` in a fragment from `offset`, as long as the budget allows
  const fragmentPage = (part: string, n: number): Page => {
    const to = offset + n
    return makePage(
      [shown(m, k + 1, part, { from: offset, to, of })],
      total,
      total - k - 1,
      to < of ? { match: k, offset: to } : nextAfter(k + 1)
    )
  }
  const fragment = (): Either.Either<Paged<E>, Envelope.EnvelopeTooSmall> => {
    const fitted = Envelope.fitText(rest, (part, n) => envelope(fragmentPage(part, n)), budget)
    if (Either.isRight(fitted) && fitted.right.count === 0) {
      // only an empty match gets here, and a page must advance: its whole form did not fit
      const needed = Envelope.sizeOf(JSON.stringify(envelope(wholePage(1))), budget.measure)
      return Either.left(new Envelope.EnvelopeTooSmall({ limit: budget.limit, needed, measure: budget.measure ?? "code-points" }))
    }
    return done(fitted, (count) => fragmentPage(Utf8.takeCodePoints(rest, count), count))
  }

  if (offset === 0) {
    const remaining = total - k
    const cap = wholeCap(snapshot, k, remaining, budget.limit)
    const fitted = fitMost((n) => envelope(wholePage(n)), 1, cap, remaining, budget)
    return fitted !== undefined ? done(Either.right(fitted), wholePage) : fragment()
  }

  // resuming inside a match: the rest of it whole, then as many whole matches as fit
  const restCost = atLeast(rest, budget.limit)
  if (restCost <= budget.limit) {
    const following = total - k - 1
    const mixedPage = (n: number): Page =>
      makePage(
        [shown(m, k + 1, rest, { from: offset, to: of, of }), ...whole(k + 1, n)],
        total,
        following - n,
        nextAfter(k + 1 + n)
      )
    const cap = wholeCap(snapshot, k + 1, following, budget.limit - restCost)
    const fitted = fitMost((n) => envelope(mixedPage(n)), 0, cap, following, budget)
    if (fitted !== undefined) return done(Either.right(fitted), mixedPage)
  }
  return fragment()
}
