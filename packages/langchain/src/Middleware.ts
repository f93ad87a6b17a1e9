/**
 * A LangChain.js agent middleware (`createMiddleware({ wrapToolCall })`)
 * that keeps a long tool result through the Promise face and hands the model
 * its bounded, masked projection in its place: the scratch profile's
 * strategy (head, tail or both) within the ceiling, and a marker naming the
 * saved copy (`Full output: NAME`), which the read tools (`spillwayTools`)
 * page back. A result within the ceiling reaches the model as it is, with
 * any secret in it masked; the read tools' own results are left alone.
 *
 * @since 0.1.0
 */
import { type ToolOutput, Terminal } from "@spillway/core"
import type * as Spillway from "@spillway/node/Spillway"
import { createMiddleware, ToolMessage } from "langchain"

/** How the middleware projects results, and which tools it leaves alone. */
export interface Policy extends Partial<ToolOutput.ToolPolicy> {
  /** The ceiling of what the model receives of one result; 65,536 UTF-8 bytes and 2,000 lines by default. */
  readonly ceiling?: Partial<ToolOutput.Ceiling> | undefined
  /** Tools whose results pass unchanged; the read tools always do. */
  readonly skip?: ReadonlyArray<string> | undefined
}

const READ_TOOLS: ReadonlyArray<string> = ["read_spill", "grep_spill", "get_tool_output"]

/** A message's content as text: a string as it is, text blocks joined, anything else as indented JSON. */
export const textOf = (content: ToolMessage["content"]): string => {
  if (typeof content === "string") return content
  const blocks = content as ReadonlyArray<{ readonly type?: unknown; readonly text?: unknown }>
  if (blocks.every((b) => b.type === "text" && typeof b.text === "string")) return blocks.map((b) => b.text as string).join("")
  try {
    return JSON.stringify(content, null, 2) ?? ""
  } catch {
    return String(content)
  }
}

/** The middleware over an open Spillway (of which it uses `deliver` alone). */
export const spillwayMiddleware = (sw: Pick<Spillway.Spillway, "deliver">, policy: Policy = {}) => {
  const skip = new Set([...READ_TOOLS, ...(policy.skip ?? [])])
  return createMiddleware({
    name: "SpillwayMiddleware",
    wrapToolCall: async (request, handler) => {
      const result = await handler(request)
      if (!ToolMessage.isInstance(result)) return result
      const name = result.name ?? request.toolCall.name
      if (skip.has(name)) return result
      const text = textOf(result.content)
      const d = await sw.deliver(name, text, {
        policy: {
          ...(policy.strategy !== undefined ? { strategy: policy.strategy } : {}),
          ...(policy.capture !== undefined ? { capture: policy.capture } : {})
        },
        ...(policy.ceiling !== undefined ? { ceiling: policy.ceiling } : {}),
        envelope: (body) => ({ role: "tool", tool_call_id: result.tool_call_id, content: body })
      })
      if (!d.truncated && d.body === text) return result
      return new ToolMessage({
        // what the model reads of a projection is plain: no terminal escapes, redraws in their final state
        content: Terminal.plain(d.body),
        tool_call_id: result.tool_call_id,
        name,
        ...(result.status !== undefined ? { status: result.status } : {}),
        ...(result.artifact !== undefined ? { artifact: result.artifact } : {}),
        response_metadata: {
          ...result.response_metadata,
          spillway: { truncated: d.truncated, total_lines: d.totalLines, ...(d.capture !== undefined ? { saved: d.capture.path, complete: d.capture.complete } : {}) }
        }
      })
    }
  })
}
