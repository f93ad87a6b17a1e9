import { describe, expect, it } from "@effect/vitest"
import * as Envelope from "@spillway/core/Envelope"
import { Either, FastCheck as fc } from "effect"

const texts = fc.oneof(
  fc.string({ unit: "grapheme-ascii", maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 300 }),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.array(fc.constantFrom("\"", "\\", "\n", "\u0001", "é", "😀", "a", "\t", "</script>"), { maxLength: 200 }).map((a) => a.join(""))
)

/** A page envelope like a paging tool's, whose cursor grows with the offset. */
const page = (offset: number) => (part: string, n: number) => ({
  content: part,
  offset_unit: "code_point",
  next_cursor: `spw1.${(offset + n).toString(36)}.sig`,
  truncated: true,
  total_bytes: 123456
})

describe("Envelope.fitText", () => {
  it.prop("fits exactly: within the budget, and one more code point would not fit", [
    texts,
    fc.integer({ min: 0, max: 400 }),
    fc.constantFrom("code-points" as const, "utf8" as const)
  ], ([text, limit, measure]) => {
    const r = Envelope.fitText(text, page(0), { limit, measure })
    if (Either.isLeft(r)) {
      // the smallest page, one code point (or none of an empty text), did not fit
      const first = [...text].slice(0, 1).join("")
      expect(Envelope.sizeOf(JSON.stringify(page(0)(first, first.length > 0 ? 1 : 0)), measure)).toBeGreaterThan(limit)
      return
    }
    const fitted = r.right
    expect(fitted.size).toBeLessThanOrEqual(limit)
    expect(fitted.size).toBe(Envelope.sizeOf(JSON.stringify(fitted.value), measure))
    const cps = [...text]
    expect(fitted.value.content).toBe(cps.slice(0, fitted.count).join(""))
    if (fitted.count < cps.length) {
      const more = JSON.stringify(page(0)(cps.slice(0, fitted.count + 1).join(""), fitted.count + 1))
      expect(Envelope.sizeOf(more, measure)).toBeGreaterThan(limit)
    }
  })

  it.prop("pages fitted one after another give the text back, each advancing", [
    texts.filter((t) => t.length > 0),
    fc.integer({ min: 180, max: 400 })
  ], ([text, limit]) => {
    const cps = [...text]
    let offset = 0
    let out = ""
    while (offset < cps.length) {
      const rest = cps.slice(offset).join("")
      const r = Envelope.fitText(rest, page(offset), { limit })
      expect(Either.isRight(r)).toBe(true)
      if (Either.isLeft(r)) return
      expect(r.right.count).toBeGreaterThan(0)
      out += r.right.value.content
      offset += r.right.count
    }
    expect(out).toBe(text)
  })

  it("refuses an envelope that cannot carry one code point, instead of a page that does not advance", () => {
    const r = Envelope.fitText("abc", page(0), { limit: 20 })
    expect(Either.isLeft(r) && r.left._tag).toBe("EnvelopeTooSmall")
    if (Either.isLeft(r)) expect(r.left.message).toContain("over the budget of 20")
    // an empty text fits as an empty page when the envelope does
    const empty = Envelope.fitText("", page(0), { limit: 200 })
    expect(Either.isRight(empty) && empty.right.count).toBe(0)
  })
})

describe("Envelope.fitCount", () => {
  it.prop("finds the most whole items that fit", [
    fc.array(fc.string({ maxLength: 40 }), { maxLength: 60 }),
    fc.integer({ min: 10, max: 2000 })
  ], ([items, limit]) => {
    const build = (n: number) => ({ matches: items.slice(0, n), showing: n, of: items.length })
    const r = Envelope.fitCount(0, items.length, build, { limit })
    if (Either.isLeft(r)) {
      expect(JSON.stringify(build(0)).length).toBeGreaterThan(limit)
      return
    }
    expect(r.right.size).toBeLessThanOrEqual(limit)
    if (r.right.count < items.length) expect([...JSON.stringify(build(r.right.count + 1))].length).toBeGreaterThan(limit)
  })

  it("builds a result that fits whole once, and one that does not in a search", () => {
    const items = Array.from({ length: 1000 }, (_, i) => `item ${i}`)
    let built = 0
    const build = (n: number) => {
      built++
      return { matches: items.slice(0, n) }
    }
    const whole = Envelope.fitCount(0, items.length, build, { limit: 100_000 })
    expect(Either.isRight(whole) && whole.right.count).toBe(1000)
    expect(built).toBe(1)
    built = 0
    const part = Envelope.fitCount(0, items.length, build, { limit: 2_000 })
    expect(Either.isRight(part) && part.right.count).toBeLessThan(1000)
    expect(built).toBeGreaterThan(2)
    expect(built).toBeLessThanOrEqual(13)
  })
})
