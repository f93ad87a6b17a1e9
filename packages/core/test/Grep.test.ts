import { describe, expect, it } from "@effect/vitest"
import * as Grep from "@spillway/core/Grep"
import { Either, FastCheck as fc } from "effect"

const engines = ["v8", "re2js"] as const

describe("Grep", () => {
  for (const engine of engines) {
    describe(engine, () => {
      const compile = (p: string, ignoreCase = false) => Grep.compile(p, { engine, ignoreCase })
      const matcher = (p: string, ignoreCase = false) => Either.getOrThrow(compile(p, ignoreCase))

      it("matches JavaScript syntax line by line", () => {
        expect(matcher("err(or|no)").test("EACCES errno 13")).toBe(true)
        expect(matcher("^\\d+ passed$").test("12 passed")).toBe(true)
        expect(matcher("^\\d+ passed$").test("x 12 passed")).toBe(false)
        expect(matcher("warning", true).test("WARNING: x")).toBe(true)
      })

      it("refuses backreferences and lookaround as unsupported", () => {
        for (const p of ["(a)\\1", "foo(?=bar)", "(?<!x)y", "(?<n>a)\\k<n>"]) {
          const r = compile(p)
          expect(Either.isLeft(r) && r.left.kind).toBe("unsupported")
          if (Either.isLeft(r)) expect(r.left.message).toContain("Backreferences and lookaround are not supported")
        }
      })

      it("refuses invalid, empty and overlong patterns", () => {
        const bad = compile("(unclosed")
        expect(Either.isLeft(bad) && bad.left.kind).toBe("invalid")
        const empty = compile("")
        expect(Either.isLeft(empty) && empty.left.kind).toBe("empty")
        const long = compile("a".repeat(Grep.MAX_PATTERN_LENGTH + 1))
        expect(Either.isLeft(long) && long.left.kind).toBe("too-long")
      })

      it("does not hang on a pattern that backtracks catastrophically", () => {
        const m = matcher("(a+)+$")
        const started = Date.now()
        expect(m.test("a".repeat(30_000) + "b")).toBe(false)
        expect(Date.now() - started).toBeLessThan(5_000)
      })
    })
  }

  it("the block scan finds every line that matches on its own", () => {
    const m = Either.getOrThrow(Grep.compile("a[^z]*b|^x$|q?", { engine: "v8" }))
    expect(m.candidates).toBeDefined()
    fc.assert(fc.property(fc.array(fc.stringMatching(/^[abxqz ]{0,6}$/), { maxLength: 12 }), (lines) => {
      const text = lines.join("\n")
      const starts: Array<number> = []
      let pos = 0
      for (const l of lines) {
        starts.push(pos)
        pos += l.length + 1
      }
      const lineOf = (at: number) => starts.filter((s) => s <= at).length - 1
      const flagged = new Set<number>()
      for (const [s, e] of m.candidates!(text)) {
        for (let k = lineOf(s); k <= lineOf(Math.max(s, e - 1)); k++) flagged.add(k)
      }
      lines.forEach((l, k) => {
        if (m.test(l)) expect(flagged.has(k)).toBe(true)
      })
    }))
  })
})
