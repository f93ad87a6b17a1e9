import { describe, expect, it } from "@effect/vitest"
import * as Marker from "@spillway/core/Marker"
import * as Projection from "@spillway/core/Projection"
import * as Utf8 from "@spillway/core/Utf8"
import { FastCheck as fc } from "effect"

const numbered = (n: number, width = 10) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1}`.padEnd(width, "x")).join("\n") + "\n"

const strategies = ["head", "tail", "middle"] as const

/** A cut line as shown is the source line's real start and real end around the exact count of bytes left out. */
const expectCut = (source: string, shown: string, cut: Projection.CutLine) => {
  const src = Utf8.encode(source)
  const out = Utf8.encode(shown)
  expect(cut.totalBytes).toBe(src.length)
  expect(cut.shownBytes).toBe(cut.startBytes + cut.endBytes)
  expect(cut.shownBytes).toBeLessThan(src.length)
  expect(out.subarray(0, cut.startBytes)).toEqual(src.subarray(0, cut.startBytes))
  expect(out.subarray(out.length - cut.endBytes)).toEqual(src.subarray(src.length - cut.endBytes))
  const gap = Utf8.decodeLossy(out.subarray(cut.startBytes, out.length - cut.endBytes))
  expect(gap).toBe(cut.keep === "both" ? Marker.omitted(src.length - cut.shownBytes) : "")
  if (cut.keep !== "both") expect(cut.keep === "start" ? cut.endBytes : cut.startBytes).toBe(0)
}

describe("Projection", () => {
  it("keeps everything when it fits, and says nothing was cut", () => {
    const p = Projection.project("a\nb\nc\n", { strategy: "head", maxBytes: 100, maxLines: 10 })
    expect(p.head).toEqual(["a", "b", "c"])
    expect(p.truncated).toBe(false)
    expect(p.ranges).toEqual([{ from: 1, to: 3 }])
    expect(p.totalLines).toBe(3)
    expect(Projection.render(p)).toBe("a\nb\nc")
  })

  it("head keeps the first lines and tail the last ones", () => {
    const text = numbered(2100)
    const head = Projection.project(text, { strategy: "head", maxBytes: 1_000_000, maxLines: 2000 })
    expect(head.ranges).toEqual([{ from: 1, to: 2000 }])
    expect(Projection.marker(head)).toBe("[Showing lines 1-2000 of 2100]")
    const tail = Projection.project(text, { strategy: "tail", maxBytes: 1_000_000, maxLines: 2000 })
    expect(tail.ranges).toEqual([{ from: 101, to: 2100 }])
    expect(tail.head[0]).toBe("line 101xx")
    expect(Projection.marker(tail, "out.log")).toBe("[Showing lines 101-2100 of 2100. Full output: out.log]")
    expect(Projection.render(tail, "out.log").startsWith("[Showing lines 101-2100")).toBe(true)
  })

  it("middle keeps both ends and lists both ranges", () => {
    const p = Projection.project(numbered(100), { strategy: "middle", maxBytes: 10_000, maxLines: 10 })
    expect(p.ranges).toEqual([{ from: 1, to: 5 }, { from: 96, to: 100 }])
    const out = Projection.render(p)
    expect(out).toContain("line 5xxxx\n[Showing lines 1-5, 96-100 of 100]\nline 96xxx")
  })

  it("leaves out a line that cannot fit instead of splitting it", () => {
    const p = Projection.project("short\n" + "y".repeat(500) + "\nz\n", { strategy: "head", maxBytes: 100, maxLines: 10 })
    expect(p.head).toEqual(["short"])
    expect(p.truncated).toBe(true)
  })

  it("shows a single line longer than the whole budget by its start and its end, the bytes between counted", () => {
    const line = "\u20ac".repeat(100) // 300 bytes
    const p = Projection.project(line, { strategy: "head", maxBytes: 50, maxLines: 10 })
    // the gap "[…276 bytes omitted…]" is reserved at its longest (25 bytes), the line break takes 1: 24 bytes for both ends
    expect(p.cutLine).toEqual({ line: 1, keep: "both", shownBytes: 24, startBytes: 12, endBytes: 12, totalBytes: 300 })
    expect(p.head[0]).toBe("\u20ac".repeat(4) + "[…276 bytes omitted…]" + "\u20ac".repeat(4))
    expect(p.cost).toBeLessThanOrEqual(50)
    expect(Projection.marker(p)).toBe("[Showing lines 1-1 of 1, line 1 cut to 24 of 300 bytes]")
    const t = Projection.project("a\n" + line, { strategy: "tail", maxBytes: 50, maxLines: 10 })
    expect(t.cutLine?.keep).toBe("both")
    expect(t.ranges).toEqual([{ from: 2, to: 2 }])
    expect(Projection.render(t)).toBe(`[Showing lines 2-2 of 2, line 2 cut to 24 of 300 bytes]\n${t.head[0]}`)
    // a minified bundle: its first and its last bytes, whatever the strategy
    const bundle = "!function(){" + "var a=1;".repeat(20_000) + "}();"
    for (const strategy of strategies) {
      const b = Projection.project(bundle + "\n", { strategy, maxBytes: 2_000, maxLines: 100, measure: "json" })
      const shown = b.head[0]!
      expect(shown.startsWith("!function(){var a=1;")).toBe(true)
      expect(shown.endsWith("var a=1;}();")).toBe(true)
      expect(shown).toContain(`[…${bundle.length - b.cutLine!.shownBytes} bytes omitted…]`)
    }
    // where the gap has no room, the end the strategy keeps is shown alone
    const tiny = Projection.project(line, { strategy: "head", maxBytes: 10, maxLines: 10 })
    expect(tiny.cutLine).toEqual({ line: 1, keep: "start", shownBytes: 9, startBytes: 9, endBytes: 0, totalBytes: 300 })
  })

  it("omits a line that cannot fit when asked, so nothing is ever split", () => {
    const p = Projection.project("x".repeat(500) + "\nz\n", { strategy: "head", maxBytes: 100, maxLines: 10, longLine: "omit" })
    expect(p.ranges).toEqual([])
    expect(Projection.render(p)).toBe("[Showing 0 lines of 2]")
  })

  it("none bypasses the ceilings", () => {
    const p = Projection.project(numbered(5000), { strategy: "none", maxBytes: 10, maxLines: 1 })
    expect(p.shownLines).toBe(5000)
    expect(p.truncated).toBe(false)
  })

  it("zero kept lines says so", () => {
    const p = Projection.project(numbered(3), { strategy: "head", maxBytes: 100, maxLines: 0 })
    expect(p.ranges).toEqual([])
    expect(Projection.marker(p)).toBe("[Showing 0 lines of 3]")
  })

  it("counts JSON-escaped bytes and code points when asked", () => {
    const text = "\"q\"\n".repeat(10)
    const json = Projection.project(text, { strategy: "head", maxBytes: 20, maxLines: 100, measure: "json" })
    // each line costs 6 (\"q\") plus 2 for the escaped break
    expect(json.head.length).toBe(2)
    const cps = Projection.project("\u{1F600}\u{1F600}\n".repeat(10), { strategy: "head", maxBytes: 9, maxLines: 100, measure: "code-points" })
    expect(cps.head.length).toBe(3)
  })

  it.prop("never exceeds its budget, never splits a line, and accounts exactly", [
    fc.array(fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replace(/\n/g, " ")), { maxLength: 60 }),
    fc.constantFrom(...strategies),
    fc.integer({ min: 0, max: 400 }),
    fc.integer({ min: 0, max: 30 }),
    fc.constantFrom("utf8" as const, "json" as const, "code-points" as const)
  ], ([lines, strategy, maxBytes, maxLines, measure]) => {
    checkProjection(lines, strategy, maxBytes, maxLines, measure)
  })

  it.prop("a line longer than the budget shows its real start and real end, the bytes between counted exactly, within the budget", [
    fc.array(fc.string({ unit: "binary", maxLength: 30 }).map((s) => s.replace(/\n/g, " ")), { maxLength: 4 }),
    fc.string({ unit: "binary", minLength: 200, maxLength: 3_000 }).map((s) => s.replace(/\n/g, " ")),
    fc.nat(4),
    fc.constantFrom(...strategies),
    fc.integer({ min: 0, max: 180 }),
    fc.constantFrom("utf8" as const, "json" as const, "code-points" as const)
  ], ([short, long, at, strategy, maxBytes, measure]) => {
    const lines = [...short]
    lines.splice(at % (lines.length + 1), 0, long)
    const p = checkProjection(lines, strategy, maxBytes, 10, measure)
    // whenever not one whole line fits and the budget holds the gap and a character of each end, both ends show
    const m = Projection.measureOf(measure)
    const widest = measure === "utf8" ? 4 : measure === "json" ? 6 : 1
    const gapRoom = maxBytes - m("\n") - m(Marker.omitted(Utf8.byteLength(long))) >= 2 * widest
    if (p.cutLine !== undefined && gapRoom) expect(p.cutLine.keep).toBe("both")
    if (lines.length === 1 && gapRoom) expect(p.cutLine?.keep).toBe("both")
  })
})

const checkProjection = (
  lines: ReadonlyArray<string>,
  strategy: typeof strategies[number],
  maxBytes: number,
  maxLines: number,
  measure: Projection.Measure
) => {
  {
    const text = lines.join("\n")
    const p = Projection.project(text, { strategy, maxBytes, maxLines, measure })
    const all = Projection.splitLines(text)
    const m = Projection.measureOf(measure)
    expect(p.cost).toBeLessThanOrEqual(maxBytes)
    expect(p.cost).toBe([...p.head, ...p.tail].reduce((n, l) => n + m(l) + m("\n"), 0))
    expect(p.shownLines).toBeLessThanOrEqual(maxLines)
    expect(p.totalLines).toBe(all.length)
    expect(p.totalBytes).toBe(Utf8.byteLength(all.join("\n")))
    // each kept line is the source line at its number, except a marked cut line
    const kept = [...p.head, ...p.tail]
    const numbers = p.ranges.flatMap((r) => Array.from({ length: r.to - r.from + 1 }, (_, i) => r.from + i))
    expect(numbers.length).toBe(kept.length)
    numbers.forEach((n, i) => {
      if (p.cutLine?.line === n) expectCut(all[n - 1]!, kept[i]!, p.cutLine)
      else expect(kept[i]).toBe(all[n - 1])
    })
    expect(p.truncated).toBe(p.cutLine !== undefined || kept.length < all.length)
    // ranges are ordered and disjoint
    for (let i = 1; i < p.ranges.length; i++) expect(p.ranges[i]!.from).toBeGreaterThan(p.ranges[i - 1]!.to + 1)
    return p
  }
}

describe("Marker", () => {
  it("states the bytes left out inside a line", () => {
    expect(Marker.omitted(98_304)).toBe("[…98304 bytes omitted…]")
  })

  it("has the two forms, middle ranges, zero lines and unknown totals", () => {
    expect(Marker.format({ ranges: [{ from: 101, to: 2100 }], totalLines: 2100, fullOutput: "a.log" }))
      .toBe("[Showing lines 101-2100 of 2100. Full output: a.log]")
    expect(Marker.format({ ranges: [{ from: 1, to: 2000 }], totalLines: 2100 })).toBe("[Showing lines 1-2000 of 2100]")
    expect(Marker.format({ ranges: [{ from: 1, to: 10 }, { from: 91, to: 100 }], totalLines: 100 }))
      .toBe("[Showing lines 1-10, 91-100 of 100]")
    expect(Marker.format({ ranges: [], totalLines: 7 })).toBe("[Showing 0 lines of 7]")
    expect(Marker.format({ ranges: [{ from: 1, to: 50 }] })).toBe("[Showing lines 1-50]")
  })
})
