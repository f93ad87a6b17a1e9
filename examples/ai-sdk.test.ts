import { describe, expect, it } from "@effect/vitest"
import { MockLanguageModelV3 } from "ai/test"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ask } from "./ai-sdk.js"
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

describe("ai-sdk example", () => {
  it("the model sees previews of a long command and a long file, and reads on by name", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-ai-example-"))
    const file = Path.join(dir, "..", `${Path.basename(dir)}-notes.txt`)
    Fs.writeFileSync(file, Array.from({ length: 50_000 }, (_, i) => `note ${i + 1}`).join("\n"))
    try {
      const turns: Array<(prompt: Prompt) => { tool: string; input: unknown } | { text: string }> = [
        () => ({ tool: "sh", input: { command: "seq 1 200000; echo 'FAILED: 1 test'" } }),
        (p) => ({ tool: "read_file", input: { path: file, _seen: lastText(p, "sh").length } }),
        (p) => ({ tool: "read_spill", input: { filename: /Full output: (\S+)\]/.exec(lastText(p, "read_file"))![1], offset: 25_000, limit: 1 } }),
        () => ({ text: "One test failed." })
      ]
      let step = 0
      const model = new MockLanguageModelV3({
        doGenerate: async ({ prompt }) => {
          const turn = turns[step]!(prompt)
          const id = `c${step++}`
          return "tool" in turn
            ? { content: [{ type: "tool-call", toolCallId: id, toolName: turn.tool, input: JSON.stringify(turn.input) }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] }
            : { content: [{ type: "text", text: turn.text }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] }
        }
      })
      const result = await ask(model, "Run the tests.", dir)
      expect(result.text).toBe("One test failed.")
      const sh = lastText(model.doGenerateCalls[1]!.prompt, "sh")
      expect(sh).toContain("FAILED: 1 test")
      expect(sh).toMatch(/Full output: sh-\S+\.txt\]/)
      expect(sh.length).toBeLessThan(16_000)
      expect(lastText(model.doGenerateCalls[2]!.prompt, "read_file")).toMatch(/Full output: read_file-\S+\.txt\]/)
      expect(lastText(model.doGenerateCalls[3]!.prompt, "read_spill")).toContain("note 25000")
      expect(String(result.steps[0]!.toolResults[0]!.output).split("\n").length).toBe(200_002)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
      Fs.rmSync(file, { force: true })
    }
  })

  it("is what docs/frameworks.md shows", () => {
    expect(docsShow("ai-sdk.ts")).toBe(true)
  })
})
