/**
 * `spillMastra`: `spill` for a Mastra tool. Mastra's `createTool` takes a
 * `toModelOutput` as the AI SDK's tools do, called with the result alone; the
 * configuration given to `createTool` is wrapped, so the agent's steps keep
 * the raw result while the model reads Spillway's bounded, masked projection
 * with the marker naming the saved copy, which `spillwayTools` read back
 * (Mastra's agents take AI SDK tools as they are).
 *
 * @since 0.1.0
 */
import type * as Spillway from "@spillway/node/Spillway";
import type { Policy } from "./Spill.js";
/** What a Mastra tool configuration needs for `spillMastra`: its id, and its own `toModelOutput` if it has one. */
export interface MastraToolConfig {
    readonly id: string;
    readonly toModelOutput?: ((output: any) => unknown) | undefined;
}
/** The part a projection becomes in the model's prompt: a text tool result, as the AI SDK's providers take it. */
export interface TextOutput {
    readonly type: "text";
    readonly value: string;
}
/**
 * Wraps a Mastra tool configuration (the argument of `createTool`) so that
 * the model reads Spillway's projection of its result. Mastra gives
 * `toModelOutput` no call id, so the same result of the same tool is kept
 * once, recognised by its digest, however often Mastra converts it. A result
 * within the ceiling with nothing masked goes as the tool's own
 * `toModelOutput` (or Mastra's default) would send it.
 */
export declare const spillMastra: <C extends MastraToolConfig>(sw: Pick<Spillway.Spillway, "deliver">, config: C, policy?: Policy) => C;
//# sourceMappingURL=Mastra.d.ts.map