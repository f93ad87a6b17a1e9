import { describe, expect, it } from "@effect/vitest"
import * as Marker from "@spillway/core/Marker"
import * as Projection from "@spillway/core/Projection"
import * as Utf8 from "@spillway/core/Utf8"
import { FastCheck as fc } from "effect"

const numbered = (n: number, width = 10) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1}`.padEnd(width, "x")).join("\n") + "\n"

const strategies = ["head", "tail", "middle"] as const

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

  it("cuts a single line longer than the whole budget on a code point, and marks it", () => {
    const line = "\u20ac".repeat(100) // 300 bytes
    const p = Projection.project(line, { strategy: "head", maxBytes: 50, maxLines: 10 })
    expect(p.cutLine).toEqual({ line: 1, keep: "start", shownBytes: 48, totalBytes: 300 })
    expect(p.head[0]).toBe("\u20ac".repeat(16))
    expect(Projection.marker(p)).toBe("[Showing lines 1-1 of 1, line 1 cut to 48 of 300 bytes]")
    const t = Projection.project("a\n" + line, { strategy: "tail", maxBytes: 50, maxLines: 10 })
    expect(t.cutLine?.keep).toBe("end")
    expect(t.ranges).toEqual([{ from: 2, to: 2 }])
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
      if (p.cutLine?.line === n) {
        const src = all[n - 1]!
        expect(p.cutLine.keep === "start" ? src.startsWith(kept[i]!) : src.endsWith(kept[i]!)).toBe(true)
      } else expect(kept[i]).toBe(all[n - 1])
    })
    expect(p.truncated).toBe(p.cutLine !== undefined || kept.length < all.length)
    // ranges are ordered and disjoint
    for (let i = 1; i < p.ranges.length; i++) expect(p.ranges[i]!.from).toBeGreaterThan(p.ranges[i - 1]!.to + 1)
  })
})

describe("Marker", () => {
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
