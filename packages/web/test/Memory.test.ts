import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { keep, logChunks, memoryOf, serveProcess } from "./fixtures.js"

const GiB = 1024 * 1024 * 1024
let directory: string
let name: string
let lines: number
let server: Awaited<ReturnType<typeof serveProcess>>

beforeAll(async () => {
  directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-view-memory-"))
  const m = await keep(directory, logChunks(GiB, (i) => (i % 3_000_000 === 0 ? `src/m_${i}.c:1:1: error: unit ${i} failed\n` : undefined)), {
    owner: "alice",
    alreadyMasked: true
  })
  name = m.id
  lines = m.lines
  server = await serveProcess(directory, "alice")
}, 600_000)

afterAll(async () => {
  await server?.stop()
  Fs.rmSync(directory, { recursive: true, force: true })
})

describe("spillway serve under a 1 GiB body", () => {
  it("pages it from start to end, jumps to its last line and searches it, and its peak memory stays under 150 MiB", async () => {
    const base = server.url.replace(/\/$/, "")
    const peaks: Array<number> = []
    const sample = setInterval(() => peaks.push(memoryOf(server.pid).rssMiB), 20)
    try {
      const ok = async (path: string) => {
        const r = await fetch(`${base}${path}`)
        expect(r.status, path).toBe(200)
        return r.text()
      }
      await ok("/outputs")
      const before = memoryOf(server.pid)
      for (let k = 0; k <= 50; k++) {
        const from = Math.max(1, Math.min(lines - 1999, Math.floor((lines * k) / 50) + 1))
        const page = JSON.parse(await ok(`/api/view/${name}/lines?from=${from}&count=2000`))
        expect(page.from).toBe(from)
        expect(page.lines.length).toBe(2000)
        expect(page.lines[0]).toContain(`[${String(from).padStart(9, "0")}]`)
        await ok(`/view/${name}?line=${from}`)
      }
      const last = await ok(`/view/${name}?line=${lines}`)
      expect(last).toContain(`id="L${lines}"`)
      const found = JSON.parse(await ok(`/api/view/${name}/search?q=${encodeURIComponent("error: unit [0-9]+ failed")}`))
      expect(found.matches.length).toBeGreaterThan(0)
      const after = memoryOf(server.pid)
      console.log(`spillway serve over a 1 GiB body (${lines} lines): peak RSS ${after.peakMiB.toFixed(1)} MiB (${before.peakMiB.toFixed(1)} MiB before paging)`)
      expect(after.peakMiB).toBeLessThan(150)
      expect(Math.max(...peaks)).toBeLessThan(150)
    } finally {
      clearInterval(sample)
    }
  }, 300_000)
})
