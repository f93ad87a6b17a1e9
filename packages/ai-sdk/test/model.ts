import { MockLanguageModelV3 } from "ai/test"

type Options = MockLanguageModelV3["doGenerateCalls"][number]
type Prompt = Options["prompt"]
type Part = Extract<Prompt[number], { role: "tool" }>["content"][number]
type Output = Extract<Part, { type: "tool-result" }>["output"]

/** What a scripted model does at a step: call a tool, or answer. */
export type Turn = { readonly tool: string; readonly input: unknown } | { readonly text: string }

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

/**
 * The AI SDK's own mock model, answering each step from what its prompt
 * holds (as a model reads the tool results it was sent).
 */
export const scripted = (turns: ReadonlyArray<(prompt: Prompt) => Turn>) => {
  let step = 0
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const turn = turns[Math.min(step, turns.length - 1)]!(prompt)
      const id = `call-${step++}`
      return "tool" in turn
        ? {
          content: [{ type: "tool-call", toolCallId: id, toolName: turn.tool, input: JSON.stringify(turn.input) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: []
        }
        : { content: [{ type: "text", text: turn.text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }
    }
  })
}

/** The tool results a prompt holds, for a tool's name: what the model was sent. */
export const resultsFor = (prompt: Prompt, toolName: string): Array<Output> =>
  prompt.flatMap((m) => m.role === "tool" ? m.content : []).flatMap((p) => p.type === "tool-result" && p.toolName === toolName ? [p.output] : [])

/** The text of the last result a prompt holds for a tool, or the test fails. */
export const lastText = (prompt: Prompt, toolName: string): string => {
  const output = resultsFor(prompt, toolName).at(-1)
  if (output === undefined || !(output.type === "text" || output.type === "error-text")) {
    throw new Error(`no text result of ${toolName} in the prompt: ${JSON.stringify(output)}`)
  }
  return output.value
}

/** The saved copy a marker names. */
export const savedName = (text: string): string => {
  const m = /Full output: ([A-Za-z0-9._-]+)\]/.exec(text)
  if (m === null) throw new Error(`no saved name in ${text.slice(0, 200)}`)
  return m[1]!
}

/** An AWS access key id and a GitHub token the masker must catch. */
export const secrets = { aws: "AKIA" + "Z3MHQ7XK2P4L9WTR", github: "ghp_" + "R8kT2mQ9vX4bN7pL1sW6yH3jD5fG0aZcE2uK" }

/** 200,000 lines of a test log, the secrets at lines 1,000 and 150,000, a failure on the last line. */
export const hugeLog = (): string => {
  const lines = new Array<string>(200_000)
  for (let i = 0; i < lines.length; i++) lines[i] = `ok ${i + 1} test case passed`
  lines[999] = `export AWS_ACCESS_KEY_ID=${secrets.aws}`
  lines[149_999] = `git remote set-url origin https://${secrets.github}@github.com/acme/app.git`
  lines[199_999] = "not ok 200000 FAILED: the database migration timed out"
  return lines.join("\n") + "\n"
}

/** UTF-8 bytes of a value serialized as JSON: what a provider would send. */
export const jsonBytes = (value: unknown): number => new TextEncoder().encode(JSON.stringify(value)).length
