import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { tour } from "./promise.js"
import { docsShow } from "./promise-docs.js"

describe("promise example", () => {
  it("keeps, reads, searches, runs and watches through the Promise face", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-promise-example-"))
    try {
      const { found, kept, page, ran, ready, tag } = await tour(dir)
      expect(kept.truncated).toBe(true)
      expect(kept.text).toContain("error: disk full")
      expect(page.text).toBe("error: disk full\n")
      expect(found.matches.map((m) => m.line)).toEqual([10_001])
      expect(ran.exitCode).toBe(1)
      expect(ran.text).toContain("FAILED: 2 tests")
      expect(ready.retention.wait?.ended_by).toBe("match")
      expect(tag).toBe("NotFound")
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("is what docs/frameworks.md shows", () => {
    expect(docsShow("promise.ts")).toBe(true)
  })
})
