import { describe, expect, it } from "@effect/vitest"
import * as Grep from "@spillway/core/Grep"
import * as Preview from "@spillway/core/Preview"
import * as Salience from "@spillway/core/Salience"
import * as Secrets from "@spillway/core/Secrets"
import * as Utf8 from "@spillway/core/Utf8"
import { Either, FastCheck as fc } from "effect"

const filler = (from: number, n: number) => Array.from({ length: n }, (_, i) => `compiling unit ${from + i} ok`)

describe("Salience rules", () => {
  it("every rule's pattern can be offered to grepSpill", () => {
    for (const rule of Salience.defaultRules) {
      expect(Either.isRight(Grep.compile(rule.pattern.source)), rule.id).toBe(true)
      for (const anchor of rule.anchors) expect(Buffer.byteLength(anchor), rule.id).toBeGreaterThanOrEqual(2)
    }
  })

  it("every rule's matches contain one of its anchors", () => {
    const samples = [
      "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
      "main.c:12:5: error: expected ';' before '}' token",
      "error[E0308]: mismatched types",
      "not ok 12 - adds numbers",
      " FAIL  test/a.test.ts > adds > numbers",
      " × adds numbers 3ms",
      "AssertionError: expected 1 to be 2 // Object.is equality",
      "Traceback (most recent call last):",
      "ZeroDivisionError: division by zero",
      "thread 'main' panicked at src/main.rs:5:5:",
      "Segmentation fault (core dumped)",
      "npm error code ELIFECYCLE",
      "make: *** [Makefile:12: foo.o] Error 1",
      "fatal: not a git repository (or any of the parent directories): .git",
      "ERROR: could not open file"
    ]
    const compiled = Salience.compile()
    for (const line of samples) {
      const rule = compiled.test(line)
      expect(rule, line).toBeDefined()
      expect(rule!.anchors.some((a) => line.includes(a)), line).toBe(true)
    }
  })

  it("is quiet on counts of zero and passing tests that mention errors", () => {
    const compiled = Salience.compile()
    for (const line of [
      "Found 0 errors. Watching for file changes.",
      "0 errors, 2 warnings",
      "# fail 0",
      " ✓ handles error: bad input 2ms",
      "ok 3 - reports an Error: when given nothing",
      "errors: 0",
      "compiling error-handling.c",
      "Tests  150 passed (150)"
    ]) expect(compiled.test(line)?.id, line).toBeUndefined()
  })
})

describe("Salience.tracker", () => {
  it.prop("finds the same lines through the masking stream, whatever the chunking", [
    fc.array(fc.oneof(
      fc.constant("main.c:3:1: error: boom"),
      fc.constant("not ok 7 - x"),
      fc.constant("all good"),
      fc.constant("0 errors"),
      fc.constant("token=hunter2-hunter2-hunter2"),
      fc.constant("x".repeat(300) + ": error: late in a long line")
    ), { maxLength: 30 }),
    fc.array(fc.nat(), { maxLength: 6 })
  ], ([lines, cuts]) => {
    const text = lines.join("\n") + "\n"
    const expected = Salience.find(text)
    const compiled = Salience.compile()
    const tracker = Salience.tracker(compiled)
    const masker = Secrets.unsafeMakeMasker({ knownValues: ["hunter2-hunter2-hunter2"] })
    const stream = masker.stream({ literals: compiled.literals, onMark: tracker.mark })
    const input = Buffer.from(text)
    let total = 0
    let newlines = 0
    const accept = (out: Uint8Array) => {
      tracker.accept(out, total, newlines + 1)
      total += out.length
      for (const b of out) if (b === 10) newlines++
    }
    let from = 0
    for (const c of [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b)) {
      accept(stream.push(input.subarray(from, c)))
      from = c
    }
    accept(stream.push(input.subarray(from)))
    accept(stream.end())
    expect(tracker.result()).toEqual(expected)
    const want = lines.flatMap((l, i) => (l.includes("error: ") || l.startsWith("not ok") ? [i + 1] : []))
    expect(expected.lines.map((l) => l.line)).toEqual(want.slice(0, 20))
    expect(expected.total).toBe(want.length)
  })
})

describe("Preview with salient lines", () => {
  const lines = [...filler(1, 1000), "src/unit1001.c:17:9: error: expected ';' before '}' token", ...filler(1002, 1999)]
  const text = lines.join("\n") + "\n"
  const found = Salience.find(text)
  const input = (salient: boolean, maxChars = 2000): Preview.PreviewInput => ({
    exitCode: 2,
    head: text.slice(0, 8000),
    headIsWhole: false,
    tail: text.slice(-8000),
    tailAtLineStart: false,
    totalLines: lines.length,
    totalBytes: Utf8.byteLength(text),
    saved: "2026-09-04T01-02-03-000Z-a1b2c3.log",
    maxChars,
    ...(salient ? { salient: { lines: found.lines, total: found.total, grep: "error" } } : {})
  })

  it("shows the failure from the middle with its line number, within the cap", () => {
    const p = Preview.make(input(true))
    expect(p.text).toContain("[Lines that report errors or failures: 1 of 1]\n1001: src/unit1001.c:17:9: error: expected ';' before '}' token")
    expect([...p.text].length).toBeLessThanOrEqual(2000)
    expect(p.text.startsWith("exit code 2 · 3000 lines")).toBe(true)
    expect(p.text).toContain("Full output: 2026-09-04T01-02-03-000Z-a1b2c3.log")
  })

  it("fits the cap when only the start of a huge first line fits beside the section", () => {
    const huge = "x".repeat(100_000)
    const p = Preview.make({
      ...input(true),
      head: huge.slice(0, 8000),
      tail: "y".repeat(8000),
      tailAtLineStart: false,
      totalLines: 3,
      totalBytes: 300_002,
      firstLineBytes: 100_000,
      salient: { lines: [{ line: 2, text: "main.c:1:1: error: boom", cut: false, rule: "compiler-diagnostic" }], total: 1 }
    })
    expect([...p.text].length).toBeLessThanOrEqual(2000)
    expect(p.text).toContain("\n2: main.c:1:1: error: boom\n")
    expect(p.text).toMatch(/\[Showing lines 1-1 of 3, line 1 cut to \d+ of 100000 bytes\. Full output: /)
  })

  it("has no section when nothing is salient", () => {
    expect(Preview.make(input(false)).text).not.toContain("Lines that report")
  })

  it.prop("always fits the cap and keeps the exit code and the file name", [fc.integer({ min: 300, max: 4000 })], ([maxChars]) => {
    const p = Preview.make(input(true, maxChars))
    expect([...p.text].length).toBeLessThanOrEqual(maxChars)
    expect(p.text).toContain("exit code 2")
    expect(p.text).toContain("2026-09-04T01-02-03-000Z-a1b2c3.log")
  })

  it("says how many more there are and how to find them all", () => {
    const many = [...filler(1, 500), ...Array.from({ length: 30 }, (_, i) => `f${i}.c:1:1: error: e${i}`), ...filler(531, 2000)]
    const t = many.join("\n")
    const f = Salience.find(t)
    const p = Preview.make({
      ...input(true),
      head: t.slice(0, 8000),
      tail: t.slice(-8000),
      totalLines: many.length,
      salient: { lines: f.lines, total: f.total, grep: "error" }
    })
    expect(p.text).toMatch(/\[Lines that report errors or failures: \d+ of 30\. Find all: grepSpill\("error", "2026-09-04T01-02-03-000Z-a1b2c3\.log"\)\]/)
    expect(p.text).toContain("501: f0.c:1:1: error: e0")
  })
})
