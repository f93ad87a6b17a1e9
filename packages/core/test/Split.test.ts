import { describe, expect, it } from "@effect/vitest"
import * as Delivery from "@spillway/core/Delivery"
import * as ErrorText from "@spillway/core/ErrorText"
import * as Evidence from "@spillway/core/Evidence"
import type { Manifest } from "@spillway/core/Manifests"
import * as Marker from "@spillway/core/Marker"
import * as Preview from "@spillway/core/Preview"
import * as Projection from "@spillway/core/Projection"
import * as Utf8 from "@spillway/core/Utf8"
import { Effect, Either, FastCheck as fc } from "effect"
import * as Split from "../src/internal/split.js"

const cp = Utf8.codePointLength

/** The plain greedy rule the splitter keeps: take units from one end while each next one fits. */
const greedy = (c: Split.Costs): Split.Ends => {
  const maxUnits = c.maxUnits ?? Infinity
  const shareUnits = c.share.units ?? Infinity
  const side = { head: c.head, tail: c.tail }
  const n = { head: 0, tail: 0 }
  const spentOf = { head: 0, tail: 0 }
  const take = (end: Split.End, budget: number, units: number) => {
    const s = side[end]
    while (n[end] < s.count && n.head + n.tail < c.total && n.head + n.tail < maxUnits && n[end] < units) {
      const cost = s.cost(n[end])
      if (spentOf.head + spentOf.tail + cost > budget) break
      spentOf[end] += cost
      n[end]++
    }
  }
  const second = c.first === "head" ? "tail" : "head"
  take(c.first, Math.min(c.share.budget, c.budget), shareUnits)
  take(second, c.budget, Infinity)
  take(c.first, c.budget, Infinity)
  return n
}

/** Units from either end, with costs from a list. */
const sides = (costs: ReadonlyArray<number>) => ({
  head: { count: costs.length, cost: (i: number) => costs[i]! },
  tail: { count: costs.length, cost: (i: number) => costs[costs.length - 1 - i]! }
})

/** A code point of any plane, astral ones included. */
const text = (maxLength: number) => fc.string({ unit: "binary", maxLength })

/** True when a string holds half of a surrogate pair. */
const loneSurrogate = (s: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)

describe("Split", () => {
  it.prop("finds the last count a monotone test holds for", [fc.nat(5_000), fc.nat(5_000), fc.nat(5_000)], ([from, span, cut]) => {
    const max = from + span
    const limit = from + cut
    const asked: Array<number> = []
    const n = Split.largest(from, max, (k) => {
      asked.push(k)
      return k <= limit
    })
    expect(n).toBe(Math.min(max, limit))
    // the tests grow with the log of the answer, not with the range
    expect(asked.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(n - from + 2)) + 2)
  })

  it.prop("by costs: the ends never overlap, never pass the budget or the units, and neither could show one more", [
    fc.array(fc.nat(30), { maxLength: 80 }),
    fc.integer({ min: -5, max: 600 }),
    fc.constantFrom("head" as const, "tail" as const),
    fc.integer({ min: 0, max: 5 }),
    fc.option(fc.nat(60), { nil: undefined })
  ], ([costs, budget, first, fifths, maxUnits]) => {
    const plan: Split.Costs = {
      total: costs.length,
      ...sides(costs),
      first,
      share: { budget: Math.floor((budget * fifths) / 5), units: maxUnits === undefined ? undefined : Math.ceil(maxUnits / 2) },
      budget,
      maxUnits
    }
    const s = Split.byCost(plan)
    expect({ head: s.head, tail: s.tail }).toEqual(greedy(plan))
    const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
    const spent = sum(costs.slice(0, s.head)) + sum(costs.slice(costs.length - s.tail))
    expect(s.spent).toBe(spent)
    expect(s.head + s.tail).toBeLessThanOrEqual(costs.length)
    if (s.head + s.tail > 0) expect(spent).toBeLessThanOrEqual(budget)
    if (maxUnits !== undefined) expect(s.head + s.tail).toBeLessThanOrEqual(maxUnits)
    const full = s.head + s.tail === costs.length || (maxUnits !== undefined && s.head + s.tail === maxUnits)
    if (!full) {
      expect(spent + costs[s.head]!).toBeGreaterThan(budget)
      expect(spent + costs[costs.length - 1 - s.tail]!).toBeGreaterThan(budget)
    }
  })

  it("a budget below zero shows nothing, not even units that cost nothing", () => {
    const costs = [0, 0]
    const s = Split.byCost({ total: 2, ...sides(costs), first: "head", share: { budget: 0 }, budget: -1 })
    expect({ head: s.head, tail: s.tail, spent: s.spent }).toEqual({ head: 0, tail: 0, spent: 0 })
  })

  it.prop("cuts text at whole code points, counts exactly what it left out, and keeps no more than asked", [
    text(400),
    fc.nat(300),
    fc.double({ min: 0, max: 1, noNaN: true })
  ], ([source, keep, headShare]) => {
    const cut = Split.text(source, { keep, headShare, marker: (n) => `[${n} left out]` })
    const total = cp(source)
    if (total <= keep) {
      expect(cut).toEqual({ head: source, tail: "", omitted: 0, text: source })
      return
    }
    expect(loneSurrogate(cut.head) || loneSurrogate(cut.tail)).toBe(false)
    expect(source.startsWith(cut.head)).toBe(true)
    expect(source.endsWith(cut.tail)).toBe(true)
    // UTF-8: the head's bytes are the source's first bytes, the tail's its last
    const bytes = Utf8.encode(source)
    expect(Utf8.encode(cut.head)).toEqual(bytes.subarray(0, Utf8.byteLength(cut.head)))
    expect(Utf8.encode(cut.tail)).toEqual(bytes.subarray(bytes.length - Utf8.byteLength(cut.tail)))
    expect(cp(cut.head) + cp(cut.tail)).toBe(keep)
    expect(cp(cut.head)).toBe(Math.ceil(keep * headShare))
    expect(cut.omitted).toBe(total - keep)
    expect(cp(cut.head) + cut.omitted + cp(cut.tail)).toBe(total)
    expect(cut.text).toBe(`${cut.head}[${cut.omitted} left out]${cut.tail}`)
  })

  it("works in proportion to what it shows, not to what it is given", () => {
    // ten million units, of which a budget of 100 shows 100: the costs asked stay near what is shown
    let asked = 0
    const unit = { count: 10_000_000, cost: () => (asked++, 1) }
    const s = Split.byCost({ total: 10_000_000, head: unit, tail: unit, first: "head", share: { budget: 50 }, budget: 100 })
    expect(s).toEqual({ head: 50, tail: 50, spent: 100 })
    expect(asked).toBeLessThan(400)
    // a hostile error text of 20 MB is cut to the bound quickly
    const started = Date.now()
    const words = ErrorText.cut("\u{1F600}".repeat(10_000_000))
    expect(cp(words)).toBeLessThanOrEqual(ErrorText.MAX_CHARS)
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})

/** Each view that shows both ends of a text asks the one splitter: its output is the splitter's for any input. */
describe("Split callers", () => {
  const line = fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replace(/\n/g, " "))

  it.prop("Projection's middle cut", [
    fc.array(line, { maxLength: 60 }),
    fc.integer({ min: 0, max: 500 }),
    fc.integer({ min: 0, max: 40 }),
    fc.constantFrom("utf8" as const, "json" as const, "code-points" as const)
  ], ([lines, maxBytes, maxLines, measure]) => {
    const p = Projection.projectLines(lines, { strategy: "middle", maxBytes, maxLines, measure })
    if (p.cutLine !== undefined) return
    const m = Projection.measureOf(measure)
    const costs = lines.map((l) => m(l) + m("\n"))
    const s = Split.byCost({
      total: lines.length,
      ...sides(costs),
      first: "head",
      share: { budget: Math.floor(maxBytes / 2), units: Math.ceil(maxLines / 2) },
      budget: maxBytes,
      maxUnits: maxLines
    })
    expect(p.shownLines).toBe(s.head + s.tail)
    expect(p.cost).toBe(s.spent)
    if (s.head + s.tail < lines.length && s.head > 0) {
      expect(p.head).toEqual(lines.slice(0, s.head))
      expect(p.tail).toEqual(lines.slice(lines.length - s.tail))
    }
  })

  it.prop("the command preview's head and tail", [
    fc.array(line, { minLength: 1, maxLength: 200 }),
    fc.integer({ min: 300, max: 3_000 })
  ], ([lines, maxChars]) => {
    const output = lines.join("\n") + "\n"
    const saved = "out-1.log"
    const p = Preview.make({
      exitCode: 0,
      head: output,
      headIsWhole: true,
      tail: output,
      tailAtLineStart: true,
      totalLines: lines.length,
      totalBytes: Utf8.byteLength(output),
      saved,
      maxChars
    })
    // the room the preview gives its lines: the cap less its header, its widest marker and its footer
    const widest = Number(String(lines.length).replace(/./g, "9"))
    const header = `exit code 0 · ${lines.length} lines · ${Utf8.byteLength(output)} bytes`
    const marker = Marker.format({
      ranges: [{ from: widest, to: widest }, { from: widest, to: widest }],
      totalLines: lines.length,
      fullOutput: saved,
      cutLine: { line: widest, shownBytes: Utf8.byteLength(output), totalBytes: Utf8.byteLength(output) }
    })
    const hint = Preview.toolHint(saved, widest)
    const footer = maxChars >= 600 ? `${hint.read}; ${hint.search}.` : `${hint.read}.`
    const room = Math.max(0, maxChars - (cp(header) + cp(marker) + cp(footer) + 4))
    const s = Split.byCost({
      total: lines.length,
      ...sides(lines.map((l) => cp(l) + 1)),
      first: "tail",
      share: { budget: Math.floor((room * 3) / 5) },
      budget: room
    })
    // a first line too long for any room is shown cut, as a range of its own before the tail's (or joined to it)
    const shown = s.head > 0 || s.tail === lines.length
      ? p.ranges
      : p.ranges.flatMap((r) => (r.from > 1 ? [r] : r.to > 1 ? [{ from: 2, to: r.to }] : []))
    const expected = s.head + s.tail === lines.length
      ? [{ from: 1, to: lines.length }]
      : [...(s.head > 0 ? [{ from: 1, to: s.head }] : []), ...(s.tail > 0 ? [{ from: lines.length - s.tail + 1, to: lines.length }] : [])]
    expect(shown).toEqual(expected)
    expect(cp(p.text)).toBeLessThanOrEqual(maxChars)
  })

  it.prop("the first result of kept output", [
    fc.array(line, { minLength: 1, maxLength: 400 }),
    fc.integer({ min: Evidence.MIN_BUDGET_CHARS, max: 6_000 })
  ], ([lines, budgetChars]) => {
    // longer than the budget, so it is always cut
    const once = lines.join("\n") + "\n"
    const body = once.repeat(Math.ceil((2 * budgetChars) / cp(once)))
    const m = {
      tool: "run_command",
      status: "exit 1",
      bytes: Utf8.byteLength(body),
      codePoints: cp(body),
      sourceBytes: Utf8.byteLength(body),
      expiresAt: null
    } as unknown as Manifest
    const cursor = (n: number) => `cursor-${n}`
    const first = Effect.runSync(Evidence.first(m, body, { budgetChars, cursor }))
    expect(first.content).toBeUndefined()
    const head = first.head!
    const tail = first.tail!
    // the same result with other ends: what the splitter is asked to fit
    const size = (h: number, t: number) =>
      cp(JSON.stringify({ ...first, head: Utf8.takeCodePoints(body, h), tail: Utf8.takeLastCodePoints(body, t), next_cursor: cursor(h) }))
    const s = Split.ends({
      total: cp(body),
      first: "head",
      fitsShare: (h) => size(h, 0) <= Math.floor((budgetChars * 3) / 5),
      fits: (h, t) => size(h, t) <= budgetChars,
      grow: false
    })
    expect({ head: cp(head), tail: cp(tail) }).toEqual(s)
    expect(first.next_cursor).toBe(cursor(s.head))
    expect(body.startsWith(head) && body.endsWith(tail)).toBe(true)
    expect(cp(JSON.stringify(first))).toBeLessThanOrEqual(budgetChars)
  })

  it.prop("a squeezed result", [text(3_000), fc.integer({ min: 60, max: 2_000 })], ([source, limit]) => {
    const deliver = (t: string) => ({ text: t, facts: {} })
    const result = Delivery.squeeze(source, deliver, { limit })
    if (Either.isLeft(result) || result.right.text === source) return
    const shown = result.right.text
    const at = shown.indexOf("\n[… ")
    const head = shown.slice(0, at)
    const omitted = Number(/\[… (\d+) characters/.exec(shown)![1])
    const kept = cp(source) - omitted
    const cut = Split.text(source, { keep: kept, headShare: 0.7, marker: (n) => Delivery.squeezed(n, limit) })
    expect(shown).toBe(cut.text)
    expect(cut.head).toBe(head)
  })

  it.prop("an error's words", [text(3_000), fc.integer({ min: 0, max: 2_500 })], ([source, max]) => {
    const cut = Split.text(source, {
      keep: Math.max(0, max - 60),
      headShare: 0.7,
      marker: (n) => ` [… ${n} characters left out …] `
    })
    expect(ErrorText.cut(source, max)).toBe(cp(source) <= max ? source : cut.text)
  })

  it("an error's words never split a character outside the basic plane", () => {
    const words = ErrorText.cut("\u{1F600}".repeat(3_000), 200)
    expect(loneSurrogate(words)).toBe(false)
    expect(words).toBe(`${"\u{1F600}".repeat(98)} [… 2860 characters left out …] ${"\u{1F600}".repeat(42)}`)
  })
})
