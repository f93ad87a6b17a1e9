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
    // the stream lends its output until its next push, as the body store asks it to; the tracker copies
    // what it keeps, so the lent bytes are spoiled right after each call
    const stream = masker.stream({ literals: compiled.literals, onMark: tracker.mark }, { reuseOutput: true })
    const input = Buffer.from(text)
    let total = 0
    let newlines = 0
    const accept = (out: Uint8Array) => {
      const breaks = out.reduce((n, b) => n + (b === 10 ? 1 : 0), 0)
      tracker.accept(out, total, newlines + 1, breaks)
      total += out.length
      newlines += breaks
      out.fill(0x23)
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

describe("Salience.tracker over lent bytes", () => {
  it.prop("keeps copies: chunks cut anywhere, from one buffer spoiled after each call, find what the whole text does", [
    fc.array(fc.oneof(
      fc.constant("/usr/bin/ld: a.o: in function `main':"),
      fc.constant("a.c:(.text+0x1): undefined reference to `f'"),
      fc.constant("collect2: error: ld returned 1 exit status"),
      fc.constant("TypeError: boom"),
      fc.constant("    at f (a.js:1:1)"),
      fc.constant("all good"),
      fc.constant("y".repeat(500))
    ), { maxLength: 40 }),
    fc.array(fc.nat(), { maxLength: 10 }),
    fc.boolean()
  ], ([lines, cuts, finalBreak]) => {
    const text = lines.join("\n") + (finalBreak ? "\n" : "")
    const compiled = Salience.compile()
    const tracker = Salience.tracker(compiled)
    const input = Buffer.from(text)
    // the watched literals' positions, in order, as a masker's watch reports them
    const marks: Array<number> = []
    for (const literal of compiled.literals) {
      for (let i = text.indexOf(literal); i !== -1; i = text.indexOf(literal, i + 1)) marks.push(i)
    }
    for (const m of marks.sort((a, b) => a - b)) tracker.mark(m)
    // a Node Buffer, whose slice shares its memory: what the tracker keeps must be a real copy
    const lent = Buffer.alloc(input.length)
    let from = 0
    let newlines = 0
    for (const c of [...[...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b), input.length]) {
      const view = lent.subarray(0, c - from)
      view.set(input.subarray(from, c))
      tracker.accept(view, from, newlines + 1)
      newlines += input.subarray(from, c).reduce((n, b) => n + (b === 10 ? 1 : 0), 0)
      lent.fill(0x23)
      from = c
    }
    expect(tracker.result()).toEqual(Salience.find(text))
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

describe("Salience: explain, then report", () => {
  const around = (middle: ReadonlyArray<string>) => [...filler(1, 400), ...middle, ...filler(500, 400)].join("\n") + "\n"

  it("a linker's report brings the undefined reference and its In function line", () => {
    const found = Salience.find(around([
      "gcc -o report report.o",
      "/usr/bin/ld: report.o: in function `main':",
      "report.c:(.text.startup+0x26): undefined reference to `ledger_total'",
      "collect2: error: ld returned 1 exit status",
      "make[1]: *** [Makefile:9: report] Error 1"
    ]))
    const byLine = new Map(found.lines.map((l) => [l.line, l]))
    expect(byLine.get(402)).toMatchObject({ role: "context", of: 403 })
    expect(byLine.get(403)).toMatchObject({ rule: "undefined-reference", role: "explains" })
    expect(byLine.get(404)).toMatchObject({ rule: "linker-exit", role: "reports" })
    expect(byLine.get(405)).toMatchObject({ rule: "make-error", role: "reports" })
    // the explaining lines rank before the reports
    expect(Salience.ranked(found).map((l) => l.line)).toEqual([403, 402, 404, 405])
  })

  it("a report with nothing salient before it takes the recipe's last words", () => {
    const found = Salience.find(around([
      "../scripts/check-headers.sh pool.c",
      "check-headers: pool.c has no SPDX-License-Identifier line",
      "make[1]: *** [Makefile:14: check] Error 1"
    ]))
    expect(found.total).toBe(1)
    expect(found.lines.map((l) => [l.line, l.role])).toEqual([[401, "context"], [402, "context"], [403, "reports"]])
  })

  it("go test's FAIL brings the assertion message printed before it", () => {
    const found = Salience.find(around([
      "=== RUN   TestParse",
      "    money_test.go:33: Parse(\"1,234.56\") = 1.00, want 1234.56",
      "--- FAIL: TestParse (0.00s)"
    ]))
    expect(found.lines.find((l) => l.line === 402)).toMatchObject({ role: "context", of: 403 })
  })

  it("a Python exception brings the frame above it, a Node one its first stack frame", () => {
    const python = Salience.find(around([
      "Traceback (most recent call last):",
      "  File \"/srv/app/ingest.py\", line 18, in parse_amount",
      "    return int(text)",
      "           ^^^^^^^^^",
      "ValueError: invalid literal for int() with base 10: 'n/a'"
    ]))
    expect(python.lines.filter((l) => l.of === 405).map((l) => l.line)).toEqual([402, 403])
    const node = Salience.find(around([
      "TypeError: Cannot read properties of undefined (reading 'rate')",
      "    at convert (/srv/app/rates.js:3:20)",
      "    at main (/srv/app/main.js:9:3)"
    ]))
    expect(node.lines.filter((l) => l.of === 401).map((l) => l.line)).toEqual([402])
  })

  it("finds the same lines and context through the masking stream, whatever the chunking", () => {
    fc.assert(fc.property(
      fc.array(fc.oneof(
        fc.constant("    money_test.go:3: got 1, want 2"),
        fc.constant("--- FAIL: TestParse (0.00s)"),
        fc.constant("/usr/bin/ld: a.o: in function `main':"),
        fc.constant("a.c:(.text+0x1): undefined reference to `f'"),
        fc.constant("make: *** [Makefile:3: a] Error 1"),
        fc.constant("@@ -1,2 +1,2 @@"),
        fc.constant("+main.c:3:1: error: quoted in a diff"),
        fc.constant("```"),
        fc.constant("TypeError: boom"),
        fc.constant("    at f (a.js:1:1)"),
        fc.constant("token=hunter2-hunter2-hunter2"),
        fc.constant("all good")
      ), { maxLength: 40 }),
      fc.array(fc.nat(), { maxLength: 8 }),
      (lines, cuts) => {
        const text = lines.join("\n") + "\n"
        const compiled = Salience.compile()
        const tracker = Salience.tracker(compiled)
        const masker = Secrets.unsafeMakeMasker({ knownValues: ["hunter2-hunter2-hunter2"] })
        // lent output, spoiled after each call: the tracker keeps copies (it counts the breaks itself here)
        const stream = masker.stream({ literals: compiled.literals, onMark: tracker.mark }, { reuseOutput: true })
        const input = Buffer.from(text)
        let total = 0
        let newlines = 0
        const accept = (out: Uint8Array) => {
          tracker.accept(out, total, newlines + 1)
          total += out.length
          for (const b of out) if (b === 10) newlines++
          out.fill(0x23)
        }
        let from = 0
        for (const c of [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b)) {
          accept(stream.push(input.subarray(from, c)))
          from = c
        }
        accept(stream.push(input.subarray(from)))
        accept(stream.end())
        // context lines are taken from the masked output
        expect(tracker.result()).toEqual(Salience.find(masker.maskText(text)))
      }
    ))
  })
})

describe("Salience: claims, not mentions", () => {
  const compiled = Salience.compile()

  it("a grep -n listing quotes, a diagnostic with a location does not", () => {
    expect(compiled.test("src/config.js:5:    console.error(`error: could not open ${path}`)")).toBeUndefined()
    expect(compiled.test("docs/faq.md:12:fatal: not a git repository")).toBeUndefined()
    expect(compiled.test("src/a.c:12:5: error: expected ';'")?.id).toBe("compiler-diagnostic")
    expect(compiled.test("tests/test_money.py:12: AssertionError")).toBeUndefined()
  })

  it("passing tests whose ids say error are not failures", () => {
    expect(compiled.test("tests/test_log.py::test_accepts_log_level[error] PASSED    [ 22%]")).toBeUndefined()
    expect(compiled.test("tests/test_log.py::test_accepts_log_level[error] FAILED    [ 22%]")?.id).toBe("test-fail-label")
  })

  it("lines of a diff's hunks, a fenced block and a commit message quote; the same lines outside them report", () => {
    const quoted = [
      "commit 0123456789abcdef0123456789abcdef01234567",
      "Author: Dev <dev@example.com>",
      "Date:   Mon Apr 1 09:00:00 2024 +0000",
      "",
      "    TypeError: explained in the message",
      "",
      "diff --git a/docs/x.md b/docs/x.md",
      "--- a/docs/x.md",
      "+++ b/docs/x.md",
      "@@ -1,2 +1,4 @@",
      " context",
      "+fatal: not a git repository",
      "+Segmentation fault (core dumped)",
      " context",
      "```",
      "npm error code ELIFECYCLE",
      "```"
    ]
    const text = [...filler(1, 100), ...quoted, ...filler(200, 100)].join("\n")
    expect(Salience.find(text).total).toBe(0)
    const after = [...filler(1, 100), ...quoted, "fatal: not a git repository", ...filler(200, 100)].join("\n")
    expect(Salience.find(after).lines.map((l) => l.line)).toEqual([118])
  })

  it("a line's colour codes do not hide it", () => {
    const line = "\x1b[96msrc/a.ts\x1b[0m:\x1b[93m3\x1b[0m:\x1b[93m7\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable"
    const found = Salience.find([...filler(1, 10), line].join("\n"))
    expect(found.lines[0]!.text).toBe("src/a.ts:3:7 - error TS2322: Type 'string' is not assignable")
  })
})

describe("Preview: a fair share for the section", () => {
  // like `git log -p` before quoting was understood: every line a claim
  const claims = Array.from({ length: 3000 }, (_, i) => `src/unit${i}.c:${i}:1: error: unit ${i} failed`)
  const text = claims.join("\n") + "\n"
  const found = Salience.find(text)
  const compiled = Salience.compile()
  const input = (exitCode: number): Preview.PreviewInput => ({
    exitCode,
    head: text.slice(0, 8000),
    headIsWhole: false,
    tail: text.slice(-8000),
    tailAtLineStart: false,
    totalLines: claims.length,
    totalBytes: Utf8.byteLength(text),
    saved: "2026-09-04T01-02-03-000Z-a1b2c3.log",
    maxChars: 2000,
    salient: { lines: found.lines, total: found.total, grep: compiled.grepPattern(found.rules) }
  })
  const sectionOf = (p: Preview.Preview) => {
    const rows = p.text.split("\n")
    const at = rows.findIndex((r) => r.startsWith("[Lines that"))
    let end = at + 1
    while (end < rows.length && /^\d+: /.test(rows[end]!)) end++
    return rows.slice(at, end)
  }

  it("takes at most half the preview when the command failed, its search hint included", () => {
    const p = Preview.make(input(1))
    const section = sectionOf(p)
    const used = section.reduce((n, r) => n + [...r].length + 1, 0)
    expect(used).toBeLessThanOrEqual(1000)
    expect(section.length).toBeGreaterThan(3)
    // the head and the tail keep lines of their own
    expect(p.ranges.reduce((n, r) => n + r.to - r.from + 1, 0)).toBeGreaterThanOrEqual(8)
    expect(section[0]).toContain("Find all: grepSpill(")
    expect([...p.text].length).toBeLessThanOrEqual(2000)
  })

  it("a long search pattern gives way to the rules' literals, and a hint too long for the share is left out", () => {
    expect(compiled.grepPattern(["panic"])).toBe(Salience.defaultRules.find((r) => r.id === "panic")!.pattern.source)
    expect(compiled.grepPattern(["make-error", "make-not-remade", "compiler-diagnostic"])).toBe("error|\\*\\*\\*|not remade")
    const all = compiled.grepPattern(Salience.defaultRules.map((r) => r.id))
    const p = Preview.make({ ...input(1), salient: { lines: found.lines, total: found.total, grep: all } })
    expect(p.text).not.toContain("Find all")
    expect(sectionOf(p).length).toBeGreaterThan(3)
  })

  it("on exit 0 the section is shown after the tail, within a quarter", () => {
    const p = Preview.make(input(0))
    const rows = p.text.split("\n")
    const section = sectionOf(p)
    expect(section[0]).toContain("though the command exited 0")
    expect(rows.indexOf(section[0]!)).toBeGreaterThan(rows.findIndex((r) => r.startsWith("[Showing lines")))
    expect(section.reduce((n, r) => n + [...r].length + 1, 0)).toBeLessThanOrEqual(500)
  })
})
