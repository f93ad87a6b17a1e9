/**
 * The AI SDK's own mock model, scripted turn by turn from what each prompt
 * holds, for the examples' tests (the AI SDK and Mastra examples).
 */
import { MockLanguageModelV3 } from "ai/test"

/** A prompt the model is sent. */
export type Prompt = MockLanguageModelV3["doGenerateCalls"][number]["prompt"]

/** What the model does at a step: call a tool, or answer. */
export type Turn = (prompt: Prompt) => { tool: string; input: unknown } | { text: string }

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined }
}

/** The text of the last result for a tool in a prompt, or "" when there is none. */
export const lastText = (prompt: Prompt, name: string): string => {
  const parts = prompt.flatMap((m) => m.role === "tool" ? m.content : []).filter((p) => p.type === "tool-result" && p.toolName === name)
  const output = parts.at(-1)
  return output !== undefined && output.type === "tool-result" && output.output.type === "text" ? output.output.value : ""
}

/** A mock model that takes the turns in order. */
export const scripted = (turns: ReadonlyArray<Turn>) => {
  let step = 0
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const turn = turns[step]!(prompt)
      const id = `c${step++}`
      return "tool" in turn
        ? { content: [{ type: "tool-call", toolCallId: id, toolName: turn.tool, input: JSON.stringify(turn.input) }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] }
        : { content: [{ type: "text", text: turn.text }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] }
    }
  })
}
