/**
 * `spillwayTools`: `read_spill`, `grep_spill` and `get_tool_output` as AI
 * SDK tools over a read-only grant, with the descriptions and parameters the
 * MCP server gives them. A tool's result is the handler's (`text` and the
 * facts); the model reads `text`, fitted to the budget with the marker and
 * the call that continues; Mastra's agents take them as they are. A refusal (a name that is not kept, another
 * owner's output, a bad pattern) is a tool error the model reads in words.
 *
 * @since 0.1.0
 */
import { jsonSchema, tool, type Tool } from "ai"
import * as Spillway from "@spillway/node/Spillway"

/** The read tools, by name. */
export type ReadTools = { readonly [N in Spillway.ReadToolName]: Tool<Spillway.ToolParams<N>, Spillway.ToolResult<N>> }

/**
 * The tool's result from what `toModelOutput` is given: the AI SDK passes
 * `{ toolCallId, input, output }`, Mastra's agents (which take these tools as
 * they are) the result alone.
 */
const resultOf = (given: unknown): { readonly text: string } => {
  const wrapped = typeof given === "object" && given !== null && "toolCallId" in given && "output" in given
  return (wrapped ? (given as { readonly output: unknown }).output : given) as { readonly text: string }
}

/** One read tool: its definition, run through the grant, the model reading `text`. */
const readTool = <N extends Spillway.ReadToolName>(read: Spillway.ReadOnly, definition: Spillway.ToolDefinition & { readonly name: N }) =>
  tool<Spillway.ToolParams<N>, Spillway.ToolResult<N>>({
    description: definition.description,
    inputSchema: jsonSchema<Spillway.ToolParams<N>>(definition.parameters as Parameters<typeof jsonSchema>[0]),
    execute: (input: Spillway.ToolParams<N>) => read.readTool(definition.name, input),
    // the handlers give plain text already; what a model reads is plain whatever gave it
    // the handlers give the text plain, or exact when the model asked for raw
    toModelOutput: (given: unknown) => ({ type: "text", value: resultOf(given).text })
  } as never) as unknown as Tool<Spillway.ToolParams<N>, Spillway.ToolResult<N>>

/** The read tools over a read-only grant (`sw.readOnly()`, or an open Spillway, of which they use the read methods alone). */
export const spillwayTools = (sw: Spillway.ReadOnly | Spillway.Spillway): ReadTools => {
  const read = "readOnly" in sw ? sw.readOnly() : sw
  const made: Record<string, unknown> = {}
  for (const definition of Spillway.readToolDefinitions()) made[definition.name] = readTool(read, definition)
  return made as ReadTools
}
