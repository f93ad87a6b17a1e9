/**
 * Salient lines against real output: logs made by real tools (see
 * make-corpus.sh), each failing one with the lines that explain it recorded
 * beside it, and single lines sorted into salient and quiet look-alikes.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Salience, Spill } from "@spillway/core"
import { NodeSpill } from "@spillway/node"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const corpus = Path.join(here, "corpus")

interface Entry {
  readonly tool: string
  /** The family the figures are given by: the tool's, or a shape several tools share (`prefixes`, `chains`). */
  readonly family?: string
  readonly command: string
  readonly exitCode: number
  readonly failed: boolean
  /** Kept out of tuning: the rules were written without looking at it. */
  readonly heldOut: boolean
  /** The lines that explain the failure (not those that only report it). */
  readonly explains: ReadonlyArray<string>
}

const entries = Fs.readdirSync(corpus)
  .filter((f) => f.endsWith(".json"))
  .map((f) => ({
    name: f.replace(/\.json$/, ""),
    entry: JSON.parse(Fs.readFileSync(Path.join(corpus, f), "utf8")) as Entry,
    log: Fs.readFileSync(Path.join(corpus, f.replace(/\.json$/, ".log")), "utf8")
  }))

type Cases = Record<string, { readonly salient: ReadonlyArray<string>; readonly quiet: ReadonlyArray<string> }>
const readCases = (file: string): Cases =>
  Object.fromEntries(Object.entries(JSON.parse(Fs.readFileSync(Path.join(here, file), "utf8")) as Record<string, unknown>)
    .filter(([group]) => group !== "//")) as Cases
// lines of real logs (see make-corpus.sh), and lines in the shapes of tools that cannot run here
const cases: Cases = { ...readCases("cases.json"), ...readCases("documented.json") }

const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-salience-"))
afterAll(() => Fs.rmSync(directory, { recursive: true, force: true }))
const layerWith = (options: Spill.Options) => NodeSpill.layer({ ...options, directory })
const layer = layerWith({})
const plain = layerWith({ salience: false })

const SECTION = "[Lines that report errors or failures"

/** The explaining lines a preview shows in its section, as `LINE: TEXT` rows. */
const seen = (entry: Entry, log: string, text: string) => {
  const lines = log.split("\n")
  return entry.explains.filter((line) => {
    const at = lines.indexOf(line) + 1
    // the section shows lines without terminal colour codes
    const start = [...line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")].slice(0, 100).join("")
    return at > 0 && text.includes(`\n${at}: ${start}`)
  })
}

/** True when an explaining line is among the lines a preview shows from the head and the tail. */
const inHeadOrTail = (entry: Entry, log: string, shown: ReadonlyArray<{ from: number; to: number }>) => {
  const lines = log.split("\n")
  return entry.explains.some((line) => {
    const at = lines.indexOf(line) + 1
    return shown.some((r) => r.from <= at && at <= r.to)
  })
}

const keep = (log: string, exitCode: number, l: typeof layer) =>
  Effect.runPromise(Spill.keepOutput(log, exitCode).pipe(Effect.provide(l)))

describe("the corpus of real logs", () => {
  it("has failing and clean logs from many tools, some kept out of tuning", () => {
    expect(entries.filter((e) => e.entry.failed).length).toBeGreaterThanOrEqual(30)
    expect(entries.filter((e) => !e.entry.failed).length).toBeGreaterThanOrEqual(10)
    expect(entries.filter((e) => e.entry.heldOut && e.entry.failed).length).toBeGreaterThanOrEqual(8)
    expect(entries.filter((e) => e.entry.heldOut && !e.entry.failed).length).toBeGreaterThanOrEqual(1)
    expect(new Set(entries.map((e) => e.entry.tool)).size).toBeGreaterThanOrEqual(20)
  })

  for (const { entry, log, name } of entries) {
    const half = entry.heldOut ? "held out" : "tuned"
    it(`${name} (${half}): ${entry.failed ? "the 2,000-character preview shows a line that explains the failure" : "no section, and no line lifted from the middle"}`, async () => {
      const kept = await keep(log, entry.exitCode, layer)
      expect(kept.truncated).toBe(true)
      expect([...kept.text].length).toBeLessThanOrEqual(2000)
      if (!entry.failed) {
        expect(kept.text, kept.text).not.toContain(SECTION)
        // only the head and the tail: one range from line 1, one to the last line
        expect(kept.shown.length).toBeLessThanOrEqual(2)
        expect(kept.shown[0]!.from).toBe(1)
        expect(kept.shown[kept.shown.length - 1]!.to).toBe(kept.totalLines)
        expect(Salience.find(log).total, "lines claimed").toBe(0)
        return
      }
      // the explaining line is in the middle: the same preview without the section misses it
      const without = await keep(log, entry.exitCode, plain)
      expect(inHeadOrTail(entry, log, without.shown), "a plain head and tail already show it").toBe(false)
      expect(seen(entry, log, kept.text), kept.text).not.toEqual([])
    })
  }

  it("figures: seen / total and false claims, tuned and held out", async () => {
    const rows: Array<string> = []
    const totals: Array<{ shown: number; failing: number; sections: number; claimed: number }> = []
    for (const heldOut of [false, true]) {
      const part = entries.filter((e) => e.entry.heldOut === heldOut)
      const failing = part.filter((e) => e.entry.failed)
      const clean = part.filter((e) => !e.entry.failed)
      let shown = 0
      let plainShown = 0
      for (const { entry, log } of failing) {
        if (seen(entry, log, (await keep(log, entry.exitCode, layer)).text).length > 0) shown++
        if (inHeadOrTail(entry, log, (await keep(log, entry.exitCode, plain)).shown)) plainShown++
      }
      let sections = 0
      let claimed = 0
      for (const { entry, log } of clean) {
        if ((await keep(log, entry.exitCode, layer)).text.includes(SECTION)) sections++
        claimed += Salience.find(log).total
      }
      rows.push(
        `${heldOut ? "held out" : "tuned"}: explaining line seen in ${shown} of ${failing.length} failing logs ` +
          `(head and tail alone: ${plainShown}); clean logs with a section: ${sections} of ${clean.length}, lines claimed in them: ${claimed}`
      )
      totals.push({ shown, failing: failing.length, sections, claimed })
    }
    // by family: explaining lines seen / failing logs, lines claimed in clean logs
    const families = new Map<string, { heldOut: boolean; shown: number; failing: number; claimed: number }>()
    for (const { entry, log } of entries) {
      const key = entry.family ?? entry.tool
      const f = families.get(key) ?? { heldOut: entry.heldOut, shown: 0, failing: 0, claimed: 0 }
      if (entry.failed) {
        f.failing++
        if (seen(entry, log, (await keep(log, entry.exitCode, layer)).text).length > 0) f.shown++
      } else f.claimed += Salience.find(log).total
      f.heldOut &&= entry.heldOut
      families.set(key, f)
    }
    for (const [name, f] of [...families].sort(([a], [b]) => a.localeCompare(b))) {
      rows.push(`  ${name}${f.heldOut ? " (held out)" : ""}: ${f.shown} of ${f.failing} seen, ${f.claimed} claimed in clean logs`)
    }
    console.log(rows.join("\n"))
    for (const t of totals) {
      expect(t.shown).toBe(t.failing)
      expect(t.sections).toBe(0)
      expect(t.claimed).toBe(0)
    }
  })
})

describe("this repository's own history", () => {
  // `git log -p` quotes code and tests full of errors, failures and
  // tracebacks; all of it is in diff hunks or commit messages.
  const history = (() => {
    try {
      return ChildProcess.execFileSync("git", ["log", "-p", "-n", "400"], {
        cwd: here,
        encoding: "utf8",
        maxBuffer: 256 * 1024 * 1024,
        stdio: ["ignore", "pipe", "ignore"]
      })
    } catch {
      return ""
    }
  })()

  it.skipIf(history.split("\n").length < 2000)("git log -p: no section, and the head and tail keep the preview", async () => {
    const kept = await keep(history, 0, layer)
    expect(kept.text).not.toContain(SECTION)
    const shown = kept.shown.reduce((n, r) => n + r.to - r.from + 1, 0)
    expect(shown).toBeGreaterThanOrEqual(20)
  })
})

describe("rules against real lines", () => {
  const compiled = Salience.compile()

  for (const [group, { quiet, salient }] of Object.entries(cases)) {
    it(`${group}: picks the salient lines and none of the look-alikes`, () => {
      for (const line of salient) expect(compiled.test(line)?.id, line).toBeDefined()
      for (const line of quiet) expect(compiled.test(line)?.id, line).toBeUndefined()
    })
  }

  // A rule's false case is a real line from the same tools' output (a group
  // where it picks a line) that it leaves alone, preferring one that holds
  // one of its literals.
  for (const rule of Salience.defaultRules) {
    it(`${rule.id}: has a true and a false case from real output`, () => {
      const matches = (line: string) => rule.pattern.test(line) && !(rule.unless?.test(line) ?? false)
      // a rule that opens a block marks a line that is not salient itself
      const groups = Object.values(cases).filter((c) => (rule.role === "opens" ? c.quiet : c.salient).some(matches))
      expect(groups.length, "a real line this rule picks").toBeGreaterThan(0)
      // a line a rule picks holds one of its anchors, or the capture would never test it
      for (const line of Object.values(cases).flatMap((c) => [...c.salient, ...c.quiet]).filter(matches)) {
        expect(rule.anchors.some((a) => line.includes(a)), line).toBe(true)
      }
      const quiet = groups.flatMap((c) => c.quiet).filter((l) => !matches(l))
      expect(quiet.length, "a real line from the same tools that it leaves").toBeGreaterThan(0)
    })
  }
})

describe("tools that cannot run here, in their published shapes", () => {
  it("gradle: a failing test brings the exception under it, the build's failure what went wrong", () => {
    const passing = Array.from({ length: 40 }, (_, i) => `com.acme.ledger.TotalsTest > case${i}() PASSED`)
    const text = [
      "> Task :ledger:compileJava",
      "> Task :ledger:test FAILED",
      ...passing.slice(0, 20),
      "com.acme.ledger.TotalsTest > sumsThreeAmounts() FAILED",
      "    org.opentest4j.AssertionFailedError at TotalsTest.java:8",
      ...passing.slice(20),
      "3 tests completed, 1 failed",
      "",
      "FAILURE: Build failed with an exception.",
      "",
      "* What went wrong:",
      "Execution failed for task ':ledger:test'.",
      "> There were failing tests. See the report at: file:///home/dev/project/ledger/build/reports/tests/test/index.html",
      "",
      "* Try:",
      "> Run with --stacktrace option to get the stack trace.",
      "",
      "BUILD FAILED in 2s",
      ""
    ].join("\n")
    const found = Salience.find(text)
    expect(found.lines.map((l) => [l.line, l.text, l.role ?? "explains"])).toEqual([
      [2, "> Task :ledger:test FAILED", "reports"],
      [23, "com.acme.ledger.TotalsTest > sumsThreeAmounts() FAILED", "reports"],
      [24, "    org.opentest4j.AssertionFailedError at TotalsTest.java:8", "context"],
      [47, "FAILURE: Build failed with an exception.", "reports"],
      [50, "Execution failed for task ':ledger:test'.", "context"],
      [51, "> There were failing tests. See the report at: file:///home/dev/project/ledger/build/reports/tests/test/index.html", "context"]
    ])
    expect(found.rules).toEqual(expect.arrayContaining(["gradle-test-failed", "gradle-failure"]))
  })
})
