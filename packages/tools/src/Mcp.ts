/**
 * An MCP server over a toolkit, through the official MCP SDK. Each tool's
 * `text` becomes the text content a model reads (a preview or a page with
 * its marker and the call that continues, a status view: never escaped
 * JSON), and its other fields, its facts, the structured content; the tool
 * fits the two together to the budget. Every tool declares its output
 * schema (its facts, or the error of a failed call) and its annotations. A
 * failing call is a tool error (`isError: true`) whose text says what to do
 * and whose structured content gives its kind; a tool the toolkit does not
 * hold is refused by the protocol as unknown.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Delivery, ErrorText, Secrets } from "@spillway/core"
import { Cause, Context, Effect, Exit, Option, ParseResult, Runtime, Schema } from "effect"
import * as Replies from "./Replies.js"
import { Facts } from "./Tools.js"

/** A failure's words and kind: a tool's own, or what was wrong with its arguments. */
const describe = (name: string, cause: Cause.Cause<unknown>): { readonly words: string; readonly kind: Replies.ErrorKind } => {
  const error = Cause.squash(cause) as { readonly _tag?: string; readonly cause?: unknown; readonly message?: string }
  if (error._tag === "MalformedOutput" && ParseResult.isParseError(error.cause)) {
    return { words: `invalid arguments for ${name}: ${ParseResult.TreeFormatter.formatErrorSync(error.cause)}`, kind: "InvalidArguments" }
  }
  return { words: ErrorText.messageOf(error), kind: Replies.kindOf(typeof error._tag === "string" ? error._tag : "") }
}

/** A failed call as delivered: the words a model reads, and the same words with their kind for programs. */
const failed = (kind: Replies.ErrorKind, words: string) => ({
  isError: true,
  content: [{ type: "text" as const, text: words }],
  structuredContent: { error: { kind, message: words } } satisfies Replies.ErrorFacts
})

/** What a tool may do, as MCP's annotations say it. */
const annotationsOf = (tool: Tool.Any) => {
  const readOnly = Context.get(tool.annotations, Tool.Readonly)
  const title = Option.getOrUndefined(Context.getOption(tool.annotations, Tool.Title))
  return {
    ...(title !== undefined ? { title } : {}),
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && Context.get(tool.annotations, Tool.Destructive),
    idempotentHint: Context.get(tool.annotations, Tool.Idempotent),
    openWorldHint: Context.get(tool.annotations, Tool.OpenWorld)
  }
}

type Json = { [key: string]: unknown }

/**
 * A JSON Schema without the titles Effect Schema derives from refinements
 * (`int`, `between(0, 600000)`), which name no field; keys of `properties`
 * and `$defs` are names, and are kept.
 */
const untitled = (node: unknown, names = false): unknown => {
  if (Array.isArray(node)) return node.map((n) => untitled(n))
  if (typeof node !== "object" || node === null) return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (!names && (key === "title" || key === "$schema")) continue
    out[key] = untitled(value, !names && (key === "properties" || key === "$defs" || key === "patternProperties"))
  }
  return out
}

/** A schema's JSON Schema, titles left out. */
export const jsonSchemaOf = (schema: Schema.Schema.All): Json =>
  untitled(Tool.getJsonSchemaFromSchemaAst(schema.ast)) as Json

/**
 * The output schema of a tool: its facts (`Tools.Facts`), or the error of
 * a failed call (`Replies.ErrorFacts`), which MCP clients check the
 * structured content of too.
 */
export const outputSchemaOf = (tool: Tool.Any): { type: "object"; [key: string]: unknown } | undefined => {
  const facts = Context.getOption(tool.annotations, Facts)
  if (Option.isNone(facts)) return undefined
  const { $defs: factDefs, ...success } = jsonSchemaOf(facts.value)
  const { $defs: errorDefs, ...error } = jsonSchemaOf(Replies.ErrorFacts)
  const defs = { ...(factDefs as Json | undefined), ...(errorDefs as Json | undefined) }
  const variants = Array.isArray(success.anyOf) && Object.keys(success).length === 1 ? success.anyOf as Array<unknown> : [success]
  return { type: "object", anyOf: [...variants, error], ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) }
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
 * `ready` runs in the background once the client has said it is
 * initialized (after `initialize` is answered): work the first call would
 * otherwise do, such as `Handlers.warm`.
 */
export const make = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>,
  info: ServerInfo = { name: "spillway", version: "0.1.0" },
  liveDescription?: Describe,
  replies: { readonly paths?: Replies.Options["paths"] } = {},
  ready?: Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const withHandler = yield* toolkit
    const runtime = yield* Effect.runtime<never>()
    // every error text is bounded, masked, and shows no absolute path of the host's
    const masker = Option.getOrUndefined(yield* Effect.serviceOption(Secrets.Secrets))
    const safe = (text: string) => Replies.safe(text, { masker, paths: replies.paths })
    const tools = Object.values(toolkit.tools).map((tool) => {
      const annotations = annotationsOf(tool)
      const outputSchema = outputSchemaOf(tool)
      return {
        name: tool.name,
        ...(annotations.title !== undefined ? { title: annotations.title } : {}),
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        inputSchema: jsonSchemaOf(tool.parametersSchema) as { type: "object"; [key: string]: unknown },
        ...(outputSchema !== undefined ? { outputSchema } : {}),
        annotations
      }
    })
    const server = new Server(info, { capabilities: { tools: {} } })
    // work done ahead of time only: whatever goes wrong in it goes wrong again, and is reported, in the call that needs it
    if (ready !== undefined) server.oninitialized = () => void Runtime.runFork(runtime)(Effect.catchAllCause(ready, () => Effect.void))
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
        const { kind, words } = describe(name, exit.cause)
        return failed(kind, safe(words))
      }
      const { isFailure, result } = exit.value
      if (isFailure) {
        const failure = result as { readonly message?: unknown; readonly kind?: unknown; readonly reason?: unknown }
        const kind = Schema.is(Replies.ErrorKind)(failure.kind) ? failure.kind : Replies.kindOf(typeof failure.reason === "string" ? failure.reason : "")
        return failed(kind, safe(typeof failure.message === "string" ? failure.message : String(result)))
      }
      // what a model reads, and the facts for programs: fitted together by the tool
      const { text, ...facts } = result as { readonly text: string }
      return Delivery.wire({ text, facts })
    })
    return server
  })

/**
 * Serves the toolkit on a transport until the client closes it. The
 * handlers' services live as long as the scope that runs this; `ready` as
 * `make` says.
 */
export const serve = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>,
  transport: Transport,
  info?: ServerInfo,
  liveDescription?: Describe,
  replies?: { readonly paths?: Replies.Options["paths"] },
  ready?: Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const server = yield* make(toolkit, info, liveDescription, replies, ready)
    yield* Effect.async<void>((resume) => {
      server.onclose = () => resume(Effect.void)
      server.connect(transport).catch(() => resume(Effect.void))
      return Effect.promise(() => server.close())
    })
  })
