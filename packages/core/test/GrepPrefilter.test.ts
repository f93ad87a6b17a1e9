import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Scan from "@spillway/core/BlockScan"
import * as Grep from "@spillway/core/Grep"
import { FastCheck as fc } from "effect"
import { alternatives, requiredLiteral, requiredLiterals, requiredRuns, requiredSets } from "../src/internal/pattern.js"
import { needlesInVain } from "../src/internal/read.js"

const checked = (pattern: string, ignoreCase = false): Scan.Checked => {
  const c = Scan.check(pattern, ignoreCase)
  if (Scan.isRefusal(c)) throw new Error(`${pattern} was refused: ${c.reason}`)
  return c
}

const bytes = (text: string) => new TextEncoder().encode(text)
const latin1 = (b: Uint8Array) => String.fromCharCode(...b)

/** True when `hay` holds `needle` as bytes. */
const holds = (hay: Uint8Array, needle: Uint8Array): boolean => {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer
    return true
  }
  return false
}

/** Lines of letters of either case (with k and s, and the characters they fold to outside ASCII), digits, punctuation, CR and bytes that are not UTF-8. */
const lineArb = fc.array(
  fc.constantFrom(
    "err", "ERR", "Err", "or:", "OR:", "sk", "SK", "\u017fk", "s\u212a", "KS", "\u212a\u017f", "k1", "e r", "E R", "ro", "o:7",
    "x", "X", "1", "\r", "é", "\ufffd", " ", "|", ".", "x.", "]"
  ),
  { maxLength: 10 }
).map((cs) => cs.join(""))

/** Patterns made of literals, alternations, groups, classes and repetition over the same characters. */
const patternArb = fc.array(
  fc.oneof(
    fc.constantFrom("err", "ERR", "or:", "sk", "KS", "k1", "e r", "ro", "o:7", "x"),
    fc.constantFrom("[0-9]+", ".", "\\s", "(?:e|r)", "o?", "s*", "|", "^", "$", "\\b", "[kK]", "[.]", "[k]", "[\\]]", "[^x]")
  ),
  { minLength: 1, maxLength: 6 }
).map((parts) => parts.join(""))

describe("Grep prefilter", () => {
  it("splits a pattern at its top-level alternatives only", () => {
    expect(alternatives("error|FAIL")).toEqual(["error", "FAIL"])
    expect(alternatives("(a|b)c|[|]d|e\\|f")).toEqual(["(a|b)c", "[|]d", "e\\|f"])
    expect(requiredLiterals("error: unit [0-9]+ failed")).toEqual(["error: unit "])
    expect(requiredLiterals("error|FAIL|panic")).toEqual(["error", "FAIL", "panic"])
    // one alternative without a literal: every line may match it
    expect(requiredLiterals("error|x")).toBeUndefined()
    expect(requiredLiterals("error|")).toBeUndefined()
    expect(requiredLiterals(Array.from({ length: 9 }, (_, i) => `word${i}`).join("|"))).toBeUndefined()
    const m = Grep.compile("warning|FAIL", { ignoreCase: true })
    expect(m._tag === "Right" && m.right.literals).toEqual(["warning", "FAIL"])
  })

  it("starts each needle at the literal's rarest byte in the sample", () => {
    const sample = bytes("[000001] compiling packages/pkg-1/src/file-1.ts ok (1 ms)\n".repeat(100))
    const p = Scan.prefilter(["error: unit "], false, sample)!
    expect(p.needles.map(latin1)).toEqual([": unit "])
    // either case: a short part in each spelling, without k or s, whose other case may lie outside ASCII
    const i = Scan.prefilter(["error: unit "], true, sample)!
    expect(i.needles.map(latin1).sort()).toEqual([": UNI", ": UNi", ": UnI", ": Uni", ": uNI", ": uNi", ": unI", ": uni"])
    expect(Scan.prefilter(["ksKS"], true, sample)).toBeUndefined()
    expect(Scan.prefilter(undefined, false, sample)).toBeUndefined()
    // too many spellings: fewer letters each
    const many = Scan.prefilter(["abcd", "efgh", "ijlm", "nopq"], true, new Uint8Array(0))!
    expect(many.needles.length).toBeLessThanOrEqual(Scan.MAX_NEEDLES)
  })

  it("takes every run a match must hold, and a class of one character as that character", () => {
    expect(requiredRuns("unit 4[0-9]{2} failed")).toEqual([" failed", "unit 4"])
    expect(requiredLiteral("unit 4[0-9]{2} failed")).toBe(" failed")
    expect(requiredLiteral("[0-9]{7}[.]ts")).toBe(".ts")
    expect(requiredLiteral("a[$]bc[\\]]d")).toBe("a$bc]d")
    // a class of one character that is repeated, negated or a range is no literal
    expect(requiredLiteral("[.]+abc")).toBe("abc")
    expect(requiredRuns("[^.]ts")).toBeUndefined()
    expect(requiredRuns("a[b-c]d")).toBeUndefined()
    expect(requiredSets("unit [0-9] failed|FAIL")).toEqual([[" failed", "unit "], ["FAIL"]])
    expect(requiredLiterals("unit [0-9] failed|FAIL")).toEqual([" failed", "FAIL"])
    expect(requiredSets("abc|x")).toBeUndefined()
  })

  it("starts a needle at the rarest byte that leaves three of the literal, in the literal whose needle is rarest", () => {
    const sample = bytes("[000001] compiling packages/pkg-1/src/file-1.ts ok (1 ms)\n".repeat(100))
    // `d` is not in the sample, but a needle of `d` alone would stop at every `d` of a body
    expect(Scan.prefilter([" failed"], false, sample)!.needles.map(latin1)).toEqual(["failed"])
    // `u` is rarer than any byte of ` failed` that could start a needle
    expect(Scan.prefilter([[" failed", "unit 4"]], false, sample)!.needles.map(latin1)).toEqual(["unit 4"])
    expect(Scan.prefilter([[" failed", "unit 4"], ["FAIL"]], false, sample)!.needles.map(latin1)).toEqual(["unit 4", "FAIL"])
    // a literal of three bytes or fewer is looked for whole
    expect(Scan.prefilter(["x.t"], false, sample)!.needles.map(latin1)).toEqual(["x.t"])
    // unless its first byte is a letter whose other case may lie outside ASCII: then from a later one
    expect(Scan.prefilter(["k1x"], true, sample)!.needles.map(latin1).sort()).toEqual(["1X", "1x"])
  })

  it("gives up needles most lines hold without matching, where testing whole blocks costs less", () => {
    const sample = bytes(Array.from({ length: 200 }, (_, i) => `[${i}] compiling packages/pkg-${i}/src/file-${i}.ts ok (${i} ms)\n`).join(""))
    const judge = (c: Scan.Checked, from: Uint8Array) => {
      const p = Scan.prefilter(c.literalSets, false, from)!
      const s = Scan.sampled(p, from)
      return { needles: p.needles.map(latin1), sampled: s, inVain: s !== undefined && Scan.inVain(s, s.candidates.filter((l) => c.compiled.line.test(l)).length) }
    }
    const rare = judge(checked("[0-9]{7}[.]ts"), sample)
    expect(rare.needles).toEqual([".ts"])
    // the first 32 lines, each holding the needle, none matching
    expect(rare.sampled!.lines).toBe(32)
    expect(rare.sampled!.candidates).toHaveLength(32)
    expect(rare.inVain).toBe(true)
    // lines that hold a needle and match are not in vain: a search stops once it found enough
    expect(judge(checked("[0-9][.]ts ok"), sample)).toMatchObject({ needles: [".ts ok"], inVain: false })
    // needles on few lines are not in vain either
    expect(judge(checked("file-1[0-9][.]ts"), sample)).toMatchObject({ inVain: false })
    // fewer than 16 lines tell nothing
    expect(judge(checked("[0-9]{7}[.]ts"), sample.subarray(0, sample.indexOf(10) + 1)).sampled).toBeUndefined()
    // a matcher carries the same sets
    const m = Grep.compile("unit [0-9][.]ts|FAIL")
    expect(m._tag === "Right" && m.right.literalSets).toEqual([["unit ", ".ts"], ["FAIL"]])
  })

  it.effect("a search judges its needles on its pattern engine, and keeps them when the engine runs out of time", () =>
    Effect.gen(function*() {
      const sample = bytes(Array.from({ length: 40 }, (_, i) => `[${i}] compiling packages/pkg-${i}/src/file-${i}.ts ok (${i} ms)\n`).join(""))
      const judge = (pattern: string, timeoutMillis = 10_000) =>
        Effect.gen(function*() {
          const m = Grep.compile(pattern)
          if (m._tag === "Left") throw new Error(pattern)
          const p = Scan.prefilter(m.right.literalSets, false, sample)!
          return yield* needlesInVain(m.right, Grep.inline, p, sample, timeoutMillis)
        })
      expect(yield* judge("[0-9]{7}[.]ts")).toBe(true)
      // every sampled line holds `.ts ok` and matches
      expect(yield* judge("[0-9][.]ts ok")).toBe(false)
      // half of them match: not more than half in vain
      expect(yield* judge("[0-9]*[02468][.]ts ok")).toBe(false)
      expect(yield* judge("[0-9]*[0248][.]ts ok")).toBe(true)
      // no time to judge: the needles stay
      expect(yield* judge("[0-9]{7}[.]ts", -1)).toBe(false)
    }))

  it("samples a bounded part of any line, whatever its length or the pattern's", () => {
    const long = `${"x".repeat(100_000)}.ts\n`
    const sample = bytes(long.repeat(20) + "é".repeat(300) + ".ts\n")
    const p = Scan.prefilter([".ts"], false, sample)!
    const s = Scan.sampled(p, sample)!
    expect(s.lines).toBe(21)
    expect(s.candidates).toHaveLength(21)
    for (const line of s.candidates) expect(line.length).toBeLessThanOrEqual(Scan.SAMPLE_LINE_CHARS)
    expect(s.candidates[20]).toBe("é".repeat(Scan.SAMPLE_LINE_CHARS))
  })

  it.prop("every line that matches holds one of the needles, whatever the sample", [
    patternArb,
    fc.boolean(),
    fc.array(lineArb, { maxLength: 12 }),
    fc.uint8Array({ maxLength: 200 })
  ], ([pattern, ignoreCase, lines, sample]) => {
    const c = Scan.check(pattern, ignoreCase)
    if (Scan.isRefusal(c)) return
    for (const p of [Scan.prefilter(c.literals, ignoreCase, sample), Scan.prefilter(c.literalSets, ignoreCase, sample)]) {
      if (p === undefined) continue
      for (const line of lines) {
        if (c.compiled.line.test(line)) expect(p.needles.some((n) => holds(bytes(line), n))).toBe(true)
      }
    }
  }, { fastCheck: { numRuns: 2000 } })

  it.prop("the finder gives the first needle at or past each offset", [
    fc.array(fc.constantFrom("ab", "ba", "a", "b", "c", "\n", "abc"), { maxLength: 60 }).map((p) => p.join("")),
    fc.uniqueArray(fc.constantFrom("ab", "bc", "c", "aa", "b\nc"), { minLength: 1, maxLength: 3 }),
    fc.array(fc.nat(80), { maxLength: 10 })
  ], ([text, needles, offsets]) => {
    const block = bytes(text)
    const next = Scan.finder({ needles: needles.map(bytes) }, block)
    for (const from of [...offsets].sort((a, b) => a - b)) {
      const expected = needles.map((n) => text.indexOf(n, from)).filter((at) => at !== -1)
      expect(next(from)).toBe(expected.length === 0 ? -1 : Math.min(...expected))
    }
  })

  it("checks patterns as Grep.compile does, without Effect", () => {
    expect(Scan.check("", false)).toMatchObject({ kind: "empty" })
    expect(Scan.check("(a)\\1", false)).toMatchObject({ kind: "unsupported", reason: "it uses a backreference (\\1 at 3)" })
    expect(Scan.check("x{1001}", false)).toMatchObject({ kind: "too-large" })
    expect(Scan.check("(", false)).toMatchObject({ kind: "invalid" })
    const ok = checked("error: unit [0-9]+ failed")
    expect(ok.literals).toEqual(["error: unit "])
    expect(ok.compiled.line.test("src/a.c:1:7: error: unit 12 failed to compile")).toBe(true)
  })
})
