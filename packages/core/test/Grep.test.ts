import { describe, expect, it } from "@effect/vitest"
import * as Grep from "@spillway/core/Grep"
import { requiredLiteral } from "../src/internal/pattern.js"
import { Effect, Either, FastCheck as fc } from "effect"

const matcher = (p: string, ignoreCase = false) => Either.getOrThrow(Grep.compile(p, { ignoreCase }))
const refusal = (p: string) => {
  const r = Grep.compile(p)
  if (Either.isRight(r)) throw new Error(`${p} was accepted`)
  return r.left
}

describe("Grep", () => {
  it("matches JavaScript syntax line by line", () => {
    expect(matcher("err(or|no)").test("EACCES errno 13")).toBe(true)
    expect(matcher("^\\d+ passed$").test("12 passed")).toBe(true)
    expect(matcher("^\\d+ passed$").test("x 12 passed")).toBe(false)
    expect(matcher("warning", true).test("WARNING: x")).toBe(true)
    expect(matcher("(?<word>\\w+)=\\u0041").test("key=A")).toBe(true)
  })

  it("accepts counted repetition, classes and anchors, which are linear", () => {
    expect(matcher("[0-9a-f]{40}").test(`commit ${"ab12".repeat(10)}`)).toBe(true)
    expect(matcher("x{17}").test("x".repeat(17))).toBe(true)
    expect(matcher("x{17}").test("x".repeat(16))).toBe(false)
    expect(matcher("\\*{40}").test("*".repeat(40))).toBe(true)
    expect(matcher("^a{2,5}$").test("aaa")).toBe(true)
  })

  it("refuses backreferences and lookaround, naming the construct", () => {
    const cases: Array<[string, string]> = [
      ["(a)\\1", "a backreference (\\1 at 3)"],
      ["(?<n>a)\\k<n>", "a backreference (\\k<n> at 7)"],
      ["foo(?=bar)", "a lookahead ((?= at 3)"],
      ["foo(?!bar)", "a lookahead ((?! at 3)"],
      ["(?<!x)y", "a lookbehind ((?<! at 0)"],
      ["(?<=x)y", "a lookbehind ((?<= at 0)"]
    ]
    for (const [p, named] of cases) {
      const e = refusal(p)
      expect(e.kind).toBe("unsupported")
      expect(e.message).toContain(`it uses ${named}`)
    }
    // the same characters inside a class or escaped are not those constructs
    expect(Either.isRight(Grep.compile("[(?=]\\(?="))).toBe(true)
  })

  it("refuses invalid, empty, overlong and oversized patterns, saying which", () => {
    expect(refusal("(unclosed").kind).toBe("invalid")
    expect(refusal("").kind).toBe("empty")
    expect(refusal("a".repeat(Grep.MAX_PATTERN_LENGTH + 1)).kind).toBe("too-long")
    const large = refusal("x{1001}")
    expect(large.kind).toBe("too-large")
    expect(large.message).toContain("at most 1000")
    expect(refusal("(?:(?:[a-z]{999}){999})").kind).toBe("too-large")
  })

  it("finds a literal every match contains, and none where there is no such literal", () => {
    expect(requiredLiteral("error: unit [0-9]+ failed")).toBe("error: unit ")
    expect(requiredLiteral("\\[ERROR\\] x")).toBe("[ERROR] x")
    expect(requiredLiteral("abc|def")).toBeUndefined()
    expect(requiredLiteral("ab?cdef")).toBe("cdef")
    expect(requiredLiteral("(abc)defg+h")).toBe("def")
    expect(requiredLiteral("x{17}")).toBeUndefined()
    expect(requiredLiteral("\\d\\d\\d")).toBeUndefined()
    expect(matcher("Warning", true).literal).toBeUndefined()
  })

  it.prop("every line that matches contains the required literal", [
    fc.stringMatching(/^[ab.*+?()|\\{}0-9,]{1,8}$/),
    fc.array(fc.stringMatching(/^[ab{}0-9,.]{0,10}$/), { maxLength: 8 })
  ], ([pattern, lines]) => {
    const m = Grep.compile(pattern)
    if (Either.isLeft(m) || m.right.literal === undefined) return
    for (const line of lines) {
      if (new RegExp(pattern).test(line)) expect(line).toContain(m.right.literal)
    }
  })

  it.effect.prop("a block scan finds exactly the lines that match on their own, as JavaScript does", [
    fc.constantFrom("a[^z]*b", "^x$", "q?", "a.b", "^$", "(?:ab|ba){2}", "[abxz]{3}", "b\\b", "\\sz"),
    fc.array(fc.stringMatching(/^[abxqz ]{0,6}$/), { maxLength: 12 }),
    fc.boolean()
  ], ([pattern, lines, trailing]) =>
    Effect.gen(function*() {
      const text = lines.join("\n") + (trailing && lines.length > 0 ? "\n" : "")
      const found = yield* Grep.inline.scan(matcher(pattern), text, { limit: 100, maxLineChars: 100, timeoutMillis: 10_000 })
      const lineCount = text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0)
      const expected = text.split("\n").slice(0, lineCount).flatMap((l, k) => (new RegExp(pattern).test(l) ? [k] : []))
      expect(found.matches.map(([k]) => k)).toEqual(expected)
      for (const [k, start, end] of found.matches) expect(text.slice(start, end)).toBe(text.split("\n")[k])
      expect(found.complete).toBe(true)
    }))

  it.effect("a pattern that backtracks catastrophically elsewhere scans a long line at once", () =>
    Effect.gen(function*() {
      const line = "=".repeat(10) + "x".repeat(200_000)
      for (const p of [`${".*".repeat(100)}=y`, "(a+)+$", "(x|x)*y"]) {
        const found = yield* Grep.inline.scan(matcher(p), `${line}\n${line}\n`, { limit: 10, maxLineChars: 1_000_000, timeoutMillis: 60_000 })
        expect(found).toMatchObject({ matches: [], complete: true })
      }
    }))

  it.effect("stops at the limit and says more lines match", () =>
    Effect.gen(function*() {
      const text = Array.from({ length: 10 }, (_, i) => `line ${i}`).join("\n")
      const found = yield* Grep.inline.scan(matcher("line"), text, { limit: 3, maxLineChars: 100, timeoutMillis: 10_000 })
      expect(found.matches.map(([k]) => k)).toEqual([0, 1, 2])
      expect(found.more).toBe(true)
    }))

  it.effect("the inline engine ends a scan at its deadline between slices", () =>
    Effect.gen(function*() {
      const text = "y".repeat(100) + "\n".repeat(1) + `${"x".repeat(1000)}\n`.repeat(2000)
      const found = yield* Grep.inline.scan(matcher("z"), text, { limit: 10, maxLineChars: 100, timeoutMillis: -1 })
      expect(found.complete).toBe(false)
      expect(found.lines).toBe(0)
    }))
})
