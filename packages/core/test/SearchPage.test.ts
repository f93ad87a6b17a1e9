import { describe, expect, it } from "@effect/vitest"
import * as Envelope from "@spillway/core/Envelope"
import * as SearchPage from "@spillway/core/SearchPage"
import { Either, FastCheck as fc } from "effect"

type Measure = Envelope.Measure

const pieces = fc.constantFrom("\"", "\\", "\n", "\r\n", "\u0001", "é", "😀", "👩‍👩‍👧", "a", " ", "\t", "</script>", "中文")

const shortText = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: "grapheme-ascii", maxLength }),
    fc.string({ unit: "grapheme", maxLength }),
    fc.string({ unit: "binary", maxLength }),
    fc.array(pieces, { maxLength }).map((a) => a.join(""))
  )

/** Texts from empty to many times larger than any budget below. */
const matchText = fc.oneof(
  { weight: 3, arbitrary: shortText(80) },
  { weight: 1, arbitrary: fc.array(pieces, { minLength: 200, maxLength: 2500 }).map((a) => a.join("")) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 500, maxLength: 3000 }) }
)

const match: fc.Arbitrary<SearchPage.Match> = fc.record(
  { title: shortText(20), url: fc.webUrl().map((u) => u.slice(0, 40)), text: matchText },
  { requiredKeys: ["text"] }
)

const snapshots = fc.array(match, { maxLength: 25 })
const measures = fc.constantFrom<Measure>("code-points", "utf8")

/** A tool's result envelope around a page, with a cursor that grows with the position. */
const envelope = (p: SearchPage.Page) => ({
  tool: "web_search",
  query: "spillway \"budget\"\n",
  ...p,
  ...(p.next !== undefined ? { next_cursor: `spw1.${p.next.match.toString(36)}.${p.next.offset.toString(36)}.c2lnbmF0dXJl` } : {})
})

const sizeOfEnvelope = (p: SearchPage.Page, measure: Measure) => Envelope.sizeOf(JSON.stringify(envelope(p)), measure)

const cps = (text: string) => [...text]

/** A page as the module should shape it, built independently for the checks. */
const pageOf = (total: number, matches: ReadonlyArray<SearchPage.Shown>, next: SearchPage.Position | undefined): SearchPage.Page => {
  const last = matches.length === 0 ? total : matches[matches.length - 1]!.rank
  return {
    matches,
    summary: `showing ${matches.length} of ${total} returned matches; ${total - last} deferred`,
    ...(next !== undefined ? { next } : {}),
    truncated: next !== undefined
  }
}

const shownOf = (m: SearchPage.Match, rank: number, text = m.text, fragment?: SearchPage.Fragment): SearchPage.Shown => ({
  rank,
  ...(m.title !== undefined ? { title: m.title } : {}),
  ...(m.url !== undefined ? { url: m.url } : {}),
  ...(fragment !== undefined ? { fragment } : {}),
  text
})

/** The smallest page that advances from a position: the first code point of the match's (rest of) text, or the empty match whole. */
const smallestFrom = (snapshot: ReadonlyArray<SearchPage.Match>, pos: SearchPage.Position): SearchPage.Page => {
  const m = snapshot[pos.match]!
  const all = cps(m.text)
  const total = snapshot.length
  const after = pos.match + 1 < total ? { match: pos.match + 1, offset: 0 } : undefined
  if (all.length === 0) return pageOf(total, [shownOf(m, pos.match + 1)], after)
  const to = pos.offset + 1
  const fragment = { from: pos.offset, to, of: all.length }
  return pageOf(total, [shownOf(m, pos.match + 1, all[pos.offset]!, fragment)], to < all.length ? { match: pos.match, offset: to } : after)
}

interface Walk {
  readonly pages: ReadonlyArray<{ readonly from: SearchPage.Position; readonly value: ReturnType<typeof envelope>; readonly page: SearchPage.Page }>
  readonly error?: Envelope.EnvelopeTooSmall
  readonly stoppedAt: SearchPage.Position
}

const walk = (snapshot: ReadonlyArray<SearchPage.Match>, budget: Envelope.Budget): Walk => {
  const pages: Array<Walk["pages"][number]> = []
  let from: SearchPage.Position = { match: 0, offset: 0 }
  for (;;) {
    const r = SearchPage.page(snapshot, from, envelope, budget)
    if (Either.isLeft(r)) return { pages, error: r.left, stoppedAt: from }
    pages.push({ from, ...r.right })
    const next = r.right.page.next
    if (next === undefined) return { pages, stoppedAt: from }
    // every page advances
    expect(next.match > from.match || (next.match === from.match && next.offset > from.offset)).toBe(true)
    from = next
  }
}

/** Checks every page of a walk: fits, is the page its envelope carries, says the right numbers, and continues where the last one stopped. */
const checkPages = (snapshot: ReadonlyArray<SearchPage.Match>, w: Walk, budget: { limit: number; measure: Measure }) => {
  const total = snapshot.length
  let at: SearchPage.Position = { match: 0, offset: 0 }
  for (const { from, page, value } of w.pages) {
    expect(from).toEqual(at)
    const serialized = JSON.stringify(value)
    expect(Envelope.sizeOf(serialized, budget.measure)).toBeLessThanOrEqual(budget.limit)
    expect(serialized).toBe(JSON.stringify(envelope(page)))
    if (total > 0) expect(page.matches.length).toBeGreaterThan(0)
    const last = page.matches.length === 0 ? total : page.matches[page.matches.length - 1]!.rank
    expect(page.summary).toBe(`showing ${page.matches.length} of ${total} returned matches; ${total - last} deferred`)
    expect(page.truncated).toBe(page.next !== undefined)
    for (const [i, s] of page.matches.entries()) {
      const m = snapshot[s.rank - 1]!
      expect(s.title).toBe(m.title)
      expect(s.url).toBe(m.url)
      // ranks run on in snapshot order, and only a page's first or last match may be a fragment
      expect(s.rank).toBe(at.match + 1)
      if (s.fragment === undefined) {
        expect(at.offset).toBe(0)
        expect(s.text).toBe(m.text)
        at = { match: at.match + 1, offset: 0 }
      } else {
        expect(i === 0 || i === page.matches.length - 1).toBe(true)
        expect(s.fragment.from).toBe(at.offset)
        expect(s.fragment.of).toBe(cps(m.text).length)
        expect(cps(s.text).length).toBe(s.fragment.to - s.fragment.from)
        expect(s.fragment.to > s.fragment.from || m.text === "").toBe(true)
        at = s.fragment.to < s.fragment.of ? { match: at.match, offset: s.fragment.to } : { match: at.match + 1, offset: 0 }
      }
    }
    expect(page.next).toEqual(at.match < total ? at : undefined)
  }
  return at
}

describe("SearchPage.page", () => {
  it.prop("paging from the start visits every match in order and rebuilds each one, every page fitting the budget", [
    snapshots,
    fc.integer({ min: 800, max: 4000 }),
    measures
  ], ([snapshot, limit, measure]) => {
    const w = walk(snapshot, { limit, measure })
    expect(w.error).toBeUndefined()
    const end = checkPages(snapshot, w, { limit, measure })
    expect(end).toEqual({ match: snapshot.length, offset: 0 })
    // fragments of each match, joined, give its text back exactly
    const rebuilt = snapshot.map(() => "")
    for (const { page } of w.pages) for (const s of page.matches) rebuilt[s.rank - 1] += s.text
    expect(rebuilt).toEqual(snapshot.map((m) => m.text))
  }, { fastCheck: { numRuns: 150 } })

  it.prop("prefers whole matches: as many as fit, and a fragment only when not even one whole match fits", [
    snapshots,
    fc.integer({ min: 800, max: 4000 }),
    measures
  ], ([snapshot, limit, measure]) => {
    const w = walk(snapshot, { limit, measure })
    const total = snapshot.length
    for (const { from, page } of w.pages) {
      if (from.offset !== 0 || page.matches.length === 0) continue
      const first = page.matches[0]!
      if (first.fragment !== undefined) {
        // the next match whole did not fit
        const m = snapshot[from.match]!
        const after = from.match + 1 < total ? { match: from.match + 1, offset: 0 } : undefined
        expect(sizeOfEnvelope(pageOf(total, [shownOf(m, from.match + 1)], after), measure)).toBeGreaterThan(limit)
      } else if (page.next !== undefined) {
        // one more whole match would not have fitted
        const n = page.matches.length + 1
        const more = snapshot.slice(from.match, from.match + n).map((m, i) => shownOf(m, from.match + i + 1))
        const end = from.match + n
        expect(sizeOfEnvelope(pageOf(total, more, end < total ? { match: end, offset: 0 } : undefined), measure)).toBeGreaterThan(limit)
      }
    }
  }, { fastCheck: { numRuns: 150 } })

  it.prop("with any budget, pages fit and a page is refused only when not even one code point can advance", [
    snapshots,
    fc.integer({ min: 0, max: 1500 }),
    measures
  ], ([snapshot, limit, measure]) => {
    const w = walk(snapshot, { limit, measure })
    checkPages(snapshot, w, { limit, measure })
    if (w.error === undefined) return
    expect(w.error._tag).toBe("EnvelopeTooSmall")
    expect(w.error.limit).toBe(limit)
    expect(w.error.needed).toBeGreaterThan(limit)
    const smallest = snapshot.length === 0 || w.stoppedAt.match >= snapshot.length
      ? pageOf(snapshot.length, [], undefined)
      : smallestFrom(snapshot, w.stoppedAt)
    expect(sizeOfEnvelope(smallest, measure)).toBeGreaterThan(limit)
  }, { fastCheck: { numRuns: 150 } })

  it("returns a snapshot that fits on one page whole, ranked, with nothing deferred", () => {
    const snapshot = [{ title: "A", url: "https://a.example", text: "alpha" }, { text: "beta" }, { title: "C", text: "gamma" }]
    const r = Either.getOrThrow(SearchPage.page(snapshot, { match: 0, offset: 0 }, envelope, { limit: 1000 }))
    expect(r.page.summary).toBe("showing 3 of 3 returned matches; 0 deferred")
    expect(r.page.truncated).toBe(false)
    expect(r.page.next).toBeUndefined()
    expect(r.page.matches).toEqual([
      { rank: 1, title: "A", url: "https://a.example", text: "alpha" },
      { rank: 2, text: "beta" },
      { rank: 3, title: "C", text: "gamma" }
    ])
    expect(r.value.next_cursor).toBeUndefined()
  })

  it("defers the matches that do not fit and resumes at the next one", () => {
    const snapshot = Array.from({ length: 10 }, (_, i) => ({ text: `match number ${i} `.repeat(5) }))
    const budget = { limit: 500 }
    const first = Either.getOrThrow(SearchPage.page(snapshot, { match: 0, offset: 0 }, envelope, budget))
    const shown = first.page.matches.length
    expect(shown).toBeGreaterThan(0)
    expect(shown).toBeLessThan(10)
    expect(first.page.summary).toBe(`showing ${shown} of 10 returned matches; ${10 - shown} deferred`)
    expect(first.page.next).toEqual({ match: shown, offset: 0 })
    expect(first.page.truncated).toBe(true)
    const second = Either.getOrThrow(SearchPage.page(snapshot, first.page.next!, envelope, budget))
    expect(second.page.matches[0]!.rank).toBe(shown + 1)
  })

  it("reads a match larger than the budget in fragments, then goes on with whole matches", () => {
    const big = "😀 emoji and \"quotes\"\n".repeat(200)
    const snapshot = [{ title: "big", text: big }, { text: "small one" }, { text: "small two" }]
    const budget = { limit: 600, measure: "utf8" as const }
    const first = Either.getOrThrow(SearchPage.page(snapshot, { match: 0, offset: 0 }, envelope, budget))
    const f = first.page.matches[0]!.fragment!
    expect(first.page.matches).toHaveLength(1)
    expect(f.from).toBe(0)
    expect(f.of).toBe([...big].length)
    expect(first.page.next).toEqual({ match: 0, offset: f.to })
    expect(first.page.summary).toBe("showing 1 of 3 returned matches; 2 deferred")
    const w = walk(snapshot, budget)
    expect(w.error).toBeUndefined()
    const last = w.pages[w.pages.length - 1]!.page
    // the page that finishes the large match carries the small ones whole after it
    expect(last.matches.map((m) => m.rank)).toEqual([1, 2, 3])
    expect(last.matches[0]!.fragment!.to).toBe([...big].length)
    expect(last.summary).toBe("showing 3 of 3 returned matches; 0 deferred")
    expect(w.pages.map((p) => p.page.matches[0]!.text).join("")).toBe(big)
  })

  it("starts a page inside a match with the rest of that match", () => {
    const snapshot = [{ text: "abcdefghij" }, { text: "next" }]
    const r = Either.getOrThrow(SearchPage.page(snapshot, { match: 0, offset: 4 }, envelope, { limit: 1000 }))
    expect(r.page.matches).toEqual([
      { rank: 1, fragment: { from: 4, to: 10, of: 10 }, text: "efghij" },
      { rank: 2, text: "next" }
    ])
    expect(r.page.next).toBeUndefined()
  })

  it("gives an empty page for an empty snapshot or a position past the end", () => {
    const empty = Either.getOrThrow(SearchPage.page([], { match: 0, offset: 0 }, envelope, { limit: 500 }))
    expect(empty.page).toEqual({ matches: [], summary: "showing 0 of 0 returned matches; 0 deferred", truncated: false })
    const past = Either.getOrThrow(SearchPage.page([{ text: "a" }], { match: 5, offset: 0 }, envelope, { limit: 500 }))
    expect(past.page.summary).toBe("showing 0 of 1 returned matches; 0 deferred")
    expect(past.page.next).toBeUndefined()
  })

  it("refuses a budget that cannot carry one code point instead of returning a page that does not advance", () => {
    const r = SearchPage.page([{ title: "a long title that takes room", text: "content" }], { match: 0, offset: 0 }, envelope, { limit: 150 })
    expect(Either.isLeft(r) && r.left._tag).toBe("EnvelopeTooSmall")
    if (Either.isLeft(r)) expect(r.left.needed).toBeGreaterThan(150)
  })
})
