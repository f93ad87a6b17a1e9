import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))

const codePoints = (s: string) => [...s].length

/**
 * `spillway run --max-chars N` into a pipe: the preview's size is the
 * caller's, its head, failure lines and tail grow with it, output up to N
 * is printed whole, and N is bounded so that a preview cannot take the
 * machine's memory.
 */
describe("spillway run --max-chars", () => {
  let dir: string
  const run = (...args: ReadonlyArray<string>) =>
    spawnSync(process.execPath, [bin, "run", ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SPILLWAY_OUTPUT_DIR: dir },
      encoding: "utf8",
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024
    })

  beforeAll(() => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-run-size-"))
  })
  afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

  it("a preview asked for 8,000 characters is between half and all of that, with a failure from the middle", () => {
    const line = "seq 1 10000; echo 'Error: disk quota exceeded while writing cache'; seq 10001 20000; exit 1"
    const small = run("-c", line)
    const large = run("--max-chars", "8000", "-c", line)
    expect(large.status).toBe(1)
    expect(codePoints(large.stdout)).toBeGreaterThanOrEqual(4000)
    expect(codePoints(large.stdout)).toBeLessThanOrEqual(8000)
    expect(codePoints(small.stdout)).toBeLessThanOrEqual(2000)
    const lines = large.stdout.split("\n")
    expect(lines).toContain("10001: Error: disk quota exceeded while writing cache")
    expect(lines).toContain("1")
    expect(lines).toContain("20000")
    const numbers = (s: string) => s.split("\n").filter((l) => /^\d+$/.test(l)).length
    expect(numbers(large.stdout)).toBeGreaterThan(numbers(small.stdout) * 3)
  })

  it("output up to the size asked for is printed whole, byte for byte", () => {
    const expected = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("")
    const r = run("--max-chars", "14000", "--", "seq", "1", "3000")
    expect(r.status).toBe(0)
    expect(r.stdout).toBe(expected)
  })

  it("a size past a million characters is refused before anything runs", () => {
    const marker = Path.join(dir, "ran")
    const r = run("--max-chars", "1000001", "-c", `touch ${marker}`)
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain("--max-chars must be from 400 to 1000000")
    expect(Fs.existsSync(marker)).toBe(false)
    expect(run("--max-chars", "1000000", "--", "true").status).toBe(0)
  })
})
