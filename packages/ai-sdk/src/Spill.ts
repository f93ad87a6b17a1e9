/**
 * `spill`: an AI SDK tool whose result the application still gets whole
 * (from `execute`, in `result.steps`), while the model gets Spillway's
 * bounded, masked projection through `toModelOutput`: the head, the tail or
 * both, as the policy says, with a marker naming the saved copy
 * (`Full output: NAME`), which `read_spill`, `grep_spill` and
 * `get_tool_output` (see `spillwayTools`) read back. A result within the
 * ceiling reaches the model as it is, with any secret in it masked.
 *
 * @since 0.1.0
 */
import type { Tool } from "ai"
import type * as Spillway from "@spillway/node/Spillway"
import { deliver, memo, type Policy as ShrinkPolicy, textOf } from "./internal/shrink.js"

/** How `spill` projects a tool's result: the scratch profile's strategy, capture and ceiling, and the name it is kept under. */
export interface Policy extends ShrinkPolicy {
  /** The tool's name, which names the saved copy and picks the profile's row for it; `tool` by default. */
  readonly name?: string | undefined
}

/** What `toModelOutput` returns. */
type ModelOutput = Awaited<ReturnType<NonNullable<Tool["toModelOutput"]>>>

/**
 * Wraps a tool so that the model reads Spillway's projection of its result.
 * The tool's own `toModelOutput`, if it has one, still shapes results that
 * fit the ceiling; a result that does not is kept once per tool call, however
 * often the AI SDK converts it.
 */
export const spill = <T extends Tool<any, any>>(sw: Pick<Spillway.Spillway, "deliver">, tool: T, policy: Policy = {}): T => {
  const name = policy.name ?? "tool"
  const delivered = memo<ModelOutput | undefined>()
  const own = tool.toModelOutput
  const toModelOutput = async (options: { toolCallId: string; input: unknown; output: unknown }): Promise<ModelOutput> => {
    const text = textOf(options.output)
    const projected = await delivered(options.toolCallId, async () => {
      const d = await deliver(sw, name, text, policy)
      // a whole result with nothing masked goes as the tool would send it; anything else as the delivered text
      return !d.truncated && d.body === text ? undefined : { type: "text", value: d.body }
    })
    if (projected !== undefined) return projected
    if (own !== undefined) return own(options as never)
    return typeof options.output === "string" ? { type: "text", value: options.output } : { type: "json", value: (options.output ?? null) as never }
  }
  return { ...tool, toModelOutput } as T
}
