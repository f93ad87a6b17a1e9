/**
 * An MCP server over a toolkit, through the official MCP SDK. Each tool's
 * `text` becomes the text content a model reads (a preview with its marker,
 * a page, a status view: never escaped JSON), and its other fields the
 * structured content. A failing call is a tool error (`isError: true`) with
 * a message the model can act on; a tool the toolkit does not hold is
 * refused by the protocol as unknown.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Secrets } from "@spillway/core"
import { Cause, Context, Effect, Exit, Option, ParseResult, Runtime } from "effect"
import * as Replies from "./Replies.js"

/** How a result's fields split between what a model reads and the structured content. */
const structured = (name: string, result: Record<string, unknown>): Record<string, unknown> => {
  const { text, ...rest } = result
  switch (name) {
    case "get_tool_output":
      return { text, ...rest }
    case "wait_for_agents":
      return { ...(rest.result as Record<string, unknown>) }
    case "get_agent_results":
      return { ...(rest.page as Record<string, unknown>) }
    case "manage_process": {
      if (typeof rest.retention === "object" && rest.retention !== null) return { ...(rest.retention as Record<string, unknown>) }
      if (typeof rest.page === "object" && rest.page !== null) {
        const { next_cursor, ...page } = rest.page as Record<string, unknown>
        return { ...page, ...(next_cursor !== undefined ? { cursor: next_cursor } : {}) }
      }
      if (typeof rest.lines === "object" && rest.lines !== null) return { ...(rest.lines as Record<string, unknown>) }
      if (typeof rest.search === "object" && rest.search !== null) return { ...(rest.search as Record<string, unknown>) }
      return rest
    }
    default:
      return rest
  }
}

/** The words of a failure: a tool's own message, or what was wrong with its arguments. */
const describe = (name: string, cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause) as { readonly _tag?: string; readonly cause?: unknown; readonly message?: string }
  if (error._tag === "MalformedOutput" && ParseResult.isParseError(error.cause)) {
    return `invalid arguments for ${name}: ${ParseResult.TreeFormatter.formatErrorSync(error.cause)}`
  }
  return typeof error.message === "string" && error.message !== "" ? error.message : String(error)
}

const annotationsOf = (tool: Tool.Any) => {
  const readOnly = Context.get(tool.annotations, Tool.Readonly)
  return {
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && Context.get(tool.annotations, Tool.Destructive),
    openWorldHint: false
  }
}

/** Information a server gives about itself. */
export interface ServerInfo {
  readonly name: string
  readonly version: string
}

/** A tool description read at each listing, for tools whose description is live (the agent catalog). */
export type Describe = (tool: string) => Effect.Effect<string | undefined>

/**
 * Builds an MCP server whose tools are the toolkit's, handled by the
 * handlers in context. Connect it to a transport (stdio, say) to serve.
 */
export const make = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>,
  info: ServerInfo = { name: "spillway", version: "0.1.0" },
  liveDescription?: Describe,
  replies: { readonly paths?: Replies.Options["paths"] } = {}
) =>
  Effect.gen(function*() {
    const withHandler = yield* toolkit
    const runtime = yield* Effect.runtime<never>()
    // every error text is bounded, masked, and shows no absolute path of the host's
    const masker = Option.getOrUndefined(yield* Effect.serviceOption(Secrets.Secrets))
    const safe = (text: string) => Replies.safe(text, { masker, paths: replies.paths })
    const tools = Object.values(toolkit.tools).map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast) as unknown as { type: "object"; [key: string]: unknown },
      annotations: annotationsOf(tool)
    }))
    const server = new Server(info, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      if (liveDescription === undefined) return { tools }
      const live = await Runtime.runPromise(runtime)(Effect.forEach(tools, (t) =>
        Effect.map(liveDescription(t.name), (d) => d === undefined ? t : { ...t, description: d })))
      return { tools: live }
    })
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const name = request.params.name
      if (!Object.hasOwn(toolkit.tools, name)) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
      }
      const exit = await Runtime.runPromiseExit(runtime)(
        withHandler.handle(name as keyof Tools, (request.params.arguments ?? {}) as never) as Effect.Effect<
          Tool.HandlerResult<Tool.Any>,
          unknown
        >
      )
      if (Exit.isFailure(exit)) {
        return { isError: true, content: [{ type: "text" as const, text: safe(describe(name, exit.cause)) }] }
      }
      const { isFailure, result } = exit.value
      if (isFailure) {
        const message = (result as { readonly message?: unknown }).message
        return { isError: true, content: [{ type: "text" as const, text: safe(typeof message === "string" ? message : String(result)) }] }
      }
      const fields = result as Record<string, unknown>
      return {
        content: [{ type: "text" as const, text: String(fields.text ?? "") }],
        structuredContent: structured(name, fields)
      }
    })
    return server
  })

/**
 * Serves the toolkit on a transport until the client closes it. The
 * handlers' services live as long as the scope that runs this.
 */
export const serve = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>,
  transport: Transport,
  info?: ServerInfo,
  liveDescription?: Describe,
  replies?: { readonly paths?: Replies.Options["paths"] }
) =>
  Effect.gen(function*() {
    const server = yield* make(toolkit, info, liveDescription, replies)
    yield* Effect.async<void>((resume) => {
      server.onclose = () => resume(Effect.void)
      server.connect(transport).catch(() => resume(Effect.void))
      return Effect.promise(() => server.close())
    })
  })
