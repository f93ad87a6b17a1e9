/**
 * `read_spill`, `grep_spill` and `get_tool_output` as LangChain tools over
 * a read-only grant, with the descriptions and parameters the MCP server
 * gives them. A tool returns the text a model reads (fitted to the budget,
 * with the marker and the call that continues); a refusal is a
 * tool message with status `error` whose content is the library's words
 * for it (masked and bounded), which say what to do next.
 *
 * @since 0.1.0
 */
import * as Spillway from "@spillway/node/Spillway"
import { tool, ToolMessage } from "langchain"

/** The read tools over a read-only grant (`sw.readOnly()`, or an open Spillway, of which they use the read methods alone). */
export const spillwayTools = (sw: Spillway.ReadOnly | Spillway.Spillway) => {
  const read = "readOnly" in sw ? sw.readOnly() : sw
  return Spillway.readToolDefinitions().map((definition) =>
    tool(
      async (input: Record<string, unknown>, config?: { readonly toolCall?: { readonly id?: string | undefined } | undefined }) => {
        try {
          // the handlers give the text plain, or exact when the model asked for raw
          return (await read.readTool(definition.name, input as never)).text
        } catch (e) {
          const id = config?.toolCall?.id
          if (!Spillway.isError(e) || id === undefined) throw e
          return new ToolMessage({ content: e.message, tool_call_id: id, name: definition.name, status: "error" })
        }
      },
      { name: definition.name, description: definition.description, schema: definition.parameters as unknown as Record<string, unknown> }
    )
  )
}
