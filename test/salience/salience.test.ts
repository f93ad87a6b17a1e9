/**
 * Salient lines against real output: logs made by real tools (see
 * make-corpus.sh), each failing one with the lines that explain it recorded
 * beside it, and single lines sorted into salient and quiet look-alikes.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Salience, Spill } from "@spillway/core"
import { NodeSpill } from "@spillway/node"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const corpus = Path.join(here, "corpus")

interface Entry {
  readonly tool: string
  readonly command: string
  readonly exitCode: number
  readonly failed: boolean
  readonly explains: ReadonlyArray<string>
}

const entries = Fs.readdirSync(corpus)
  .filter((f) => f.endsWith(".json"))
  .map((f) => ({
    name: f.replace(/\.json$/, ""),
    entry: JSON.parse(Fs.readFileSync(Path.join(corpus, f), "utf8")) as Entry,
    log: Fs.readFileSync(Path.join(corpus, f.replace(/\.json$/, ".log")), "utf8")
  }))

const cases = JSON.parse(Fs.readFileSync(Path.join(here, "cases.json"), "utf8")) as Record<
  string,
  { readonly salient: ReadonlyArray<string>; readonly quiet: ReadonlyArray<string> }
>

const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-salience-"))
afterAll(() => Fs.rmSync(directory, { recursive: true, force: true }))
const layer = NodeSpill.layer({ directory })

describe("the corpus of real logs", () => {
  it("has failing and successful logs from several tools", () => {
    expect(entries.filter((e) => e.entry.failed).length).toBeGreaterThanOrEqual(6)
    expect(entries.filter((e) => !e.entry.failed).length).toBeGreaterThanOrEqual(3)
  })

  for (const { entry, log, name } of entries) {
    it(`${name}: ${entry.failed ? "the 2,000-character preview shows the line that explains the failure" : "no failure is claimed"}`, async () => {
      const kept = await Effect.runPromise(Spill.keepOutput(log, entry.exitCode).pipe(Effect.provide(layer)))
      expect(kept.truncated).toBe(true)
      expect([...kept.text].length).toBeLessThanOrEqual(2000)
      if (!entry.failed) {
        expect(kept.text).not.toContain("Lines that report errors or failures")
        return
      }
      const lines = log.split("\n")
      // the explaining line is in the middle: a head and tail cut alone would hide it
      const shown = entry.explains.some((line) => {
        const at = lines.indexOf(line) + 1
        expect(at, line).toBeGreaterThan(0)
        const start = [...line].slice(0, 150).join("")
        return kept.text.includes(`${at}: ${start}`)
      })
      expect(shown, kept.text).toBe(true)
    })
  }
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
      const groups = Object.values(cases).filter((c) => c.salient.some(matches))
      expect(groups.length, "a real line this rule picks").toBeGreaterThan(0)
      const quiet = groups.flatMap((c) => c.quiet).filter((l) => !matches(l))
      expect(quiet.length, "a real line from the same tools that it leaves").toBeGreaterThan(0)
    })
  }
})
