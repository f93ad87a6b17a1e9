import { describe, expect, it } from "@effect/vitest"
import { Spillway } from "@spillway/node"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-size-")
const alice = { owner: "alice", channel: "app" }

const codePoints = (s: string) => [...s].length

/** 20,000 numbered lines with a failure in the middle. */
const output = () => {
  const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1}`)
  lines[10_000] = "Error: disk quota exceeded while writing cache"
  return lines.join("\n") + "\n"
}

/** The Promise face's preview size per call: `keepOutput` and `run` take `maxChars` in place of the open's. */
describe("Spillway: preview sizes per call", () => {
  it("keepOutput: a preview asked for 8,000 characters is between half and all of that, and keeps the failure", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner: alice })
    const small = await sw.keepOutput(output(), { exitCode: 1 })
    const large = await sw.keepOutput(output(), { exitCode: 1, maxChars: 8000 })
    expect(codePoints(small.text)).toBeLessThanOrEqual(2000)
    expect(codePoints(large.text)).toBeGreaterThanOrEqual(4000)
    expect(codePoints(large.text)).toBeLessThanOrEqual(8000)
    expect(large.text).toContain("Error: disk quota exceeded while writing cache")
    expect(large.shown[0]!.to).toBeGreaterThan(small.shown[0]!.to * 3)
    // the saved copy is the whole output either way
    const page = await sw.read(large.filename!, { offset: 10_001, limit: 1 })
    expect(page.text).toBe("Error: disk quota exceeded while writing cache\n")
  })

  it("run: output up to the size asked for comes back whole", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner: alice })
    const r = await sw.run("seq 1 3000", { maxChars: 14_000 })
    expect(r.truncated).toBe(false)
    expect(r.text).toBe(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join(""))
  })

  it("a size that is not a whole number from 1 to 1,000,000 rejects with InvalidRequest, and nothing runs", async () => {
    const dir = tempDir()
    await using sw = await Spillway.open({ dir, owner: alice })
    const marker = Path.join(dir, "ran")
    for (const maxChars of [0, 2.5, 1_000_001, Number.NaN]) {
      await expect(sw.keepOutput("x", { maxChars })).rejects.toMatchObject({ _tag: "InvalidRequest" })
      await expect(sw.run(`touch ${marker}`, { maxChars })).rejects.toMatchObject({ _tag: "InvalidRequest" })
    }
    expect(Fs.existsSync(marker)).toBe(false)
  })
})
