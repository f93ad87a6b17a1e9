import { describe, expect, it } from "@effect/vitest"
import { MockLanguageModelV3 } from "ai/test"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ask } from "./mastra.js"
import { docsShow } from "./promise-docs.js"

type Prompt = MockLanguageModelV3["doGenerateCalls"][number]["prompt"]

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined }
}

/** The text of the last result for a tool in a prompt. */
const lastText = (prompt: Prompt, name: string): string => {
  const parts = prompt.flatMap((m) => m.role === "tool" ? m.content : []).filter((p) => p.type === "tool-result" && p.toolName === name)
  const output = parts.at(-1)
  return output !== undefined && output.type === "tool-result" && output.output.type === "text" ? output.output.value : ""
}

describe("mastra example", () => {
  it("the agent's model sees the end of a long command's output, and reads on by name", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mastra-example-"))
    try {
      let saved = ""
      const turns: Array<(prompt: Prompt) => { tool: string; input: unknown } | { text: string }> = [
        () => ({ tool: "sh", input: { command: "seq 1 200000; echo 'FAILED: 1 test'" } }),
        (prompt) => {
          saved = /Full output: (\S+?)\]/.exec(lastText(prompt, "sh"))?.[1] ?? ""
          return { tool: "read_spill", input: { filename: saved, offset: 1, limit: 3 } }
        },
        () => ({ text: "One test failed." })
      ]
      let step = 0
      const model = new MockLanguageModelV3({
        doGenerate: async ({ prompt }) => {
          const turn = turns[Math.min(step, turns.length - 1)]!(prompt)
          const id = `call-${step++}`
          return "tool" in turn
            ? { content: [{ type: "tool-call", toolCallId: id, toolName: turn.tool, input: JSON.stringify(turn.input) }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] }
            : { content: [{ type: "text", text: turn.text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }
        }
      })
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
