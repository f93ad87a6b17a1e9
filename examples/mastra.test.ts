import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ask } from "./mastra.js"
import { lastText, scripted, type Turn } from "./mockModel.js"
import { docsShow } from "./promise-docs.js"

describe("mastra example", () => {
  it("the agent's model sees the end of a long command's output, and reads on by name", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mastra-example-"))
    try {
      let saved = ""
      const turns: Array<Turn> = [
        () => ({ tool: "sh", input: { command: "seq 1 200000; echo 'FAILED: 1 test'" } }),
        (prompt) => {
          saved = /Full output: (\S+?)\]/.exec(lastText(prompt, "sh"))?.[1] ?? ""
          return { tool: "read_spill", input: { filename: saved, offset: 1, limit: 3 } }
        },
        () => ({ text: "One test failed." })
      ]
      const model = scripted(turns)
      const result = await ask(model, "Run the suite.", dir)
      expect(result.text).toBe("One test failed.")
      const preview = lastText(model.doGenerateCalls[1]!.prompt, "sh")
      expect(preview).toContain("FAILED: 1 test")
      expect(new TextEncoder().encode(preview).length).toBeLessThanOrEqual(16_000)
      expect(saved).toMatch(/^sh-/)
      expect(lastText(model.doGenerateCalls[2]!.prompt, "read_spill")).toContain("1\n2\n3")
      const raw = result.steps.flatMap((s) => s.toolResults).find((r) => r.payload.toolName === "sh")
      expect(String(raw?.payload.result).length).toBeGreaterThan(1_000_000)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("is what docs/frameworks.md shows", () => {
    expect(docsShow("mastra.ts")).toBe(true)
  })
})
