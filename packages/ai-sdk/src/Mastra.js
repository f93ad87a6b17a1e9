import { createHash } from "node:crypto";
import { deliver, memo, textOf } from "./internal/shrink.js";
/**
 * Wraps a Mastra tool configuration (the argument of `createTool`) so that
 * the model reads Spillway's projection of its result. Mastra gives
 * `toModelOutput` no call id, so the same result of the same tool is kept
 * once, recognised by its digest, however often Mastra converts it. A result
 * within the ceiling with nothing masked goes as the tool's own
 * `toModelOutput` (or Mastra's default) would send it.
 */
export const spillMastra = (sw, config, policy = {}) => {
    const name = policy.name ?? config.id;
    const delivered = memo();
    const own = config.toModelOutput;
    const toModelOutput = async (output) => {
        const text = textOf(output);
        const key = createHash("sha256").update(text).digest("hex");
        const projected = await delivered(key, async () => {
            const d = await deliver(sw, name, text, policy);
            return !d.truncated && d.body === text ? undefined : { type: "text", value: d.body };
        });
        if (projected !== undefined)
            return projected;
        if (own !== undefined)
            return own(output);
        return typeof output === "string" ? { type: "text", value: output } : { type: "json", value: output ?? null };
    };
    return { ...config, toModelOutput };
};
//# sourceMappingURL=Mastra.js.map