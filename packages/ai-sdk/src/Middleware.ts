/**
 * `spillwayMiddleware`: a language model middleware that shrinks the
 * results of tools not wrapped with `spill` before the model sees them.
 * Every tool result in the prompt goes through the scratch profile's
 * projection (the policy's strategy and ceiling, masking, a saved copy named
 * in the marker); results within the ceiling with nothing to mask are left
 * as they are. A result is kept once per tool call, however many steps send
 * it again. The read tools' own results are left alone: they are fitted to
 * their budget already.
 *
 * @since 0.1.0
 */
import type { LanguageModelMiddleware } from "ai"
import type * as Spillway from "@spillway/node/Spillway"
import { deliver, memo, type Policy as ShrinkPolicy, textOf } from "./internal/shrink.js"

/** How the middleware projects results, and which tools it leaves alone. */
export interface Policy extends ShrinkPolicy {
  /** Tools whose results pass unchanged; the read tools always do. */
  readonly skip?: ReadonlyArray<string> | undefined
}

type Params = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]
type Message = Params["prompt"][number]
type ToolMessage = Extract<Message, { role: "tool" }>
type Part = ToolMessage["content"][number]
type ResultPart = Extract<Part, { type: "tool-result" }>

const READ_TOOLS: ReadonlyArray<string> = ["read_spill", "grep_spill", "get_tool_output"]

/** A middleware that keeps long tool results and sends the model their bounded, masked projection. */
export const spillwayMiddleware = (sw: Pick<Spillway.Spillway, "deliver">, policy: Policy = {}): LanguageModelMiddleware => {
  const skip = new Set([...READ_TOOLS, ...(policy.skip ?? [])])
  const shrunk = memo<ResultPart["output"] | undefined>()

  const shrink = async (part: ResultPart): Promise<ResultPart> => {
    const output = part.output
    if (skip.has(part.toolName) || !(output.type === "text" || output.type === "json" || output.type === "error-text" || output.type === "error-json")) {
      return part
    }
    const text = textOf(output.value)
    const replaced = await shrunk(`${part.toolCallId}\u0000${output.type}`, async () => {
      const d = await deliver(sw, part.toolName, text, policy)
      if (!d.truncated && d.body === text) return undefined
      const error = output.type === "error-text" || output.type === "error-json"
      return { type: error ? "error-text" : "text", value: d.body } as ResultPart["output"]
    })
    return replaced === undefined ? part : { ...part, output: replaced }
  }

  const message = async (m: Message): Promise<Message> => {
    if (m.role !== "tool") return m
    const content = await Promise.all(m.content.map((part) => part.type === "tool-result" ? shrink(part) : Promise.resolve(part)))
    return { ...m, content }
  }

  return {
    specificationVersion: "v3",
    transformParams: async ({ params }) => ({ ...params, prompt: await Promise.all(params.prompt.map(message)) })
  }
}
