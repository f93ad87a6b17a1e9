/**
 * `spillMastra`: `spill` for a Mastra tool. Mastra's `createTool` takes a
 * `toModelOutput` as the AI SDK's tools do, called with the result alone; the
 * configuration given to `createTool` is wrapped, so the agent's steps keep
 * the raw result while the model reads Spillway's bounded, masked projection
 * with the marker naming the saved copy, which the read tools read back
 * (`spillwayMastraTools`).
 *
 * @since 0.1.0
 */
import type * as Spillway from "@spillway/node/Spillway"
import { createHash } from "node:crypto"
import { deliver, memo, textOf } from "./internal/shrink.js"
import type { Policy } from "./Spill.js"
import { spillwayTools } from "./Tools.js"

/** What a Mastra tool configuration needs for `spillMastra`: its id, and its own `toModelOutput` if it has one. */
export interface MastraToolConfig {
  readonly id: string
  readonly toModelOutput?: ((output: any) => unknown) | undefined
}

/** The part a projection becomes in the model's prompt: a text tool result, as the AI SDK's providers take it. */
export interface TextOutput {
  readonly type: "text"
  readonly value: string
}

/**
 * Wraps a Mastra tool configuration (the argument of `createTool`) so that
 * the model reads Spillway's projection of its result. Mastra gives
 * `toModelOutput` no call id, so the same result of the same tool is kept
 * once, recognised by its digest, however often Mastra converts it. A result
 * within the ceiling with nothing masked goes as the tool's own
 * `toModelOutput` (or Mastra's default) would send it.
 */
export const spillMastra = <C extends MastraToolConfig>(sw: Pick<Spillway.Spillway, "deliver">, config: C, policy: Policy = {}): C => {
  const name = policy.name ?? config.id
  const delivered = memo<TextOutput | undefined>()
  const own = config.toModelOutput
  const toModelOutput = async (output: unknown): Promise<unknown> => {
    const text = textOf(output)
    const key = createHash("sha256").update(text).digest("hex")
    const projected = await delivered(key, async () => {
      const d = await deliver(sw, name, text, policy)
      return !d.truncated && d.body === text ? undefined : { type: "text", value: d.body }
    })
    if (projected !== undefined) return projected
    if (own !== undefined) return own(output)
    return typeof output === "string" ? { type: "text", value: output } : { type: "json", value: output ?? null }
  }
  return { ...config, toModelOutput }
}

/**
 * The read tools (`spillwayTools`) for a Mastra agent's `tools`. They are the
 * same AI SDK tools, typed loosely: Mastra's tool types and the AI SDK's
 * disagree under `exactOptionalPropertyTypes`, though Mastra runs them as they are.
 */
export const spillwayMastraTools = (sw: Spillway.ReadOnly | Spillway.Spillway): { readonly [N in Spillway.ReadToolName]: any } =>
  spillwayTools(sw)
