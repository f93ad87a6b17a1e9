import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Salience from "@spillway/core/Salience"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** A test file with one failing assertion that carries its own message, and one passing test. */
const TEST_FILE = [
  "const test = require('node:test')",
  "const assert = require('node:assert')",
  "const sum = (a, b) => a + b + 1",
  "test('adds two numbers', () => { assert.strictEqual(sum(1, 2), 3, 'sum should be 3') })",
  "test('a passing neighbour', () => { assert.ok(true) })",
  ""
].join("\n")

/**
 * node:test's failures as its own runner prints them (`node --test`, TAP
 * when piped and the spec reporter): the assertion's own message is among
 * the lines that explain the failure, beside the test's name and the values.
 */
describe("Salience on node --test", () => {
  let dir: string
  const run = (reporter: ReadonlyArray<string>) => {
    const r = ChildProcess.spawnSync(process.execPath, ["--test", ...reporter, "sum.test.js"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 30_000,
      maxBuffer: 1024 * 1024,
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" }
    })
    expect(r.status).toBe(1)
    return r.stdout + r.stderr
  }
  const shown = (output: string) => Salience.find(output).lines.map((l) => l.text.trim())

  beforeAll(() => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-node-test-"))
    Fs.writeFileSync(Path.join(dir, "sum.test.js"), TEST_FILE)
  })
  afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

  it("TAP (the default into a pipe): the failing test, its assertion message and the values", () => {
    const output = run([])
    expect(output).toContain("not ok 1 - adds two numbers")
    const lines = shown(output)
    expect(lines).toContain("not ok 1 - adds two numbers")
    expect(lines).toContain("sum should be 3")
    expect(lines).toContain("4 !== 3")
    // the passing test and the runner's counts are not failure lines
    expect(lines.some((l) => l.includes("a passing neighbour"))).toBe(false)
    expect(lines.some((l) => l.startsWith("# fail"))).toBe(false)
  })

  it("the message line follows the error key only: a passing run's TAP shows nothing", () => {
    const output = run([]).replace(/^not ok 1 - adds two numbers$/m, "ok 1 - adds two numbers")
    expect(shown(output)).toEqual([])
  })

  it("the spec reporter: the failing test and its assertion message", () => {
    const lines = shown(run(["--test-reporter=spec"]))
    expect(lines.some((l) => l.includes("adds two numbers"))).toBe(true)
    expect(lines.some((l) => l.includes("sum should be 3"))).toBe(true)
  })
})
