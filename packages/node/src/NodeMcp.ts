/**
 * The MCP server wired for Node: one store of bodies (saved output,
 * retained evidence, scratch captures, job spools and their records) in the output directory
 * (`SPILLWAY_OUTPUT_DIR`, or `~/.spillway/tool-output`), all acting for one
 * caller (`SPILLWAY_OWNER`, or the user's name, on channel
 * `SPILLWAY_CHANNEL`, or `mcp`). Every tool fits its results to one budget,
 * `tools.tool_output_max_chars` (12,000 characters by default). The
 * read-only server holds only the read tools, over read-only grants.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import { Delivery, ErrorText, type Process, Secrets, Spill, SpillPolicy } from "@spillway/core"
import * as NodeBodies from "./NodeBodies.js"
import * as NodeChild from "./NodeChild.js"
import * as NodeTools from "./NodeTools.js"
import * as toolHost from "./internal/toolHost.js"
import type * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { AgentConfig, Agents } from "@spillway/agents"
import { Context, Effect, Exit, Layer, ParseResult, Schema } from "effect"
import * as Os from "node:os"
import * as Path from "node:path"
import { AgentHandlers, Handlers, Mcp, Tools } from "@spillway/tools"

/** Where the server keeps things, and whom it acts for. */
export interface Options {
  readonly directory?: string | undefined
  /** A catalog file of command agents; with it, the full server also serves the agent tools. */
  readonly agents?: string | undefined
  readonly readOnly?: boolean | undefined
  readonly caller?: Process.Caller | undefined
  /** Sees each save and read of a saved file and may refuse it (`NodeTools.Options.policy`). */
  readonly policy?: NodeTools.Options["policy"]
  /** The host's say in every access check (`NodeTools.Options.authorizer`). */
  readonly authorizer?: NodeTools.Options["authorizer"]
}

const callerFromEnv = (): Process.Caller => toolHost.defaultCaller("mcp")

/** The tool layers' options for a server: one caller, from the environment unless given. */
const hostOptions = (options: Options): toolHost.Options => ({
  directory: options.directory,
  caller: options.caller ?? callerFromEnv(),
  policy: options.policy,
  authorizer: options.authorizer
})

/** The read handlers over read-only grants: reading saved output, paging evidence, polling jobs (`NodeTools.layerRead`). */
export const layerRead = (options: Omit<Options, "readOnly"> = {}) => NodeTools.layerRead(hostOptions(options))

/** Every handler, over every capability (`NodeTools.layer`). */
export const layerFull = (options: Omit<Options, "readOnly"> = {}) => NodeTools.layer(hostOptions(options))

/** A command agent in a catalog file: `{task}` in its command is replaced by the task. */
export const CatalogEntry = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  command: Schema.NonEmptyArray(Schema.String)
})

/** A catalog file: `{ "agents": [{ name, description, command }], "max_concurrent_agents"?, "max_lifetime_seconds"? }`. */
export const CatalogFile = Schema.Struct({
  agents: Schema.optionalWith(Schema.Array(CatalogEntry), { default: () => [] }),
  max_concurrent_agents: Schema.optionalWith(Schema.Number, { exact: true }),
  max_lifetime_seconds: Schema.optionalWith(Schema.Number, { exact: true })
})

const decodeCatalog = Schema.decodeUnknown(Schema.parseJson(CatalogFile))

/** What is wrong with a decoded file, on one line: each problem with where it is. */
const problems = (e: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => `${i.path.length > 0 ? `${i.path.join(".")}: ` : ""}${i.message}`).join("; ")

/** Reads a catalog file on the platform's `FileSystem`, decoded with `CatalogFile`: the command agents and the limits they start under. */
export const readCatalog = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((e) => new AgentConfig.InvalidConfig({ reason: `cannot read the agent catalog ${file}: ${e.message}` }))
    )
    const raw = yield* decodeCatalog(text).pipe(
      Effect.mapError((e) =>
        new AgentConfig.InvalidConfig({
          reason: `${file} is not an agent catalog (every agent needs a name, a description and a non-empty command array): ${problems(e)}`
        })
      )
    )
    return {
      definitions: raw.agents.map((a) =>
        Agents.commandAgent(a.name, a.description, (task) => {
          const [file, ...args] = a.command.map((part) => part.split("{task}").join(task))
          return [file!, ...args]
        })
      ),
      config: {
        maxConcurrentAgents: raw.max_concurrent_agents ?? AgentConfig.defaults.maxConcurrentAgents,
        maxLifetimeSeconds: raw.max_lifetime_seconds ?? AgentConfig.defaults.maxLifetimeSeconds
      }
    }
  })

/** The agent tools over the store of one server, so that results are bodies of the same store as every other kept output. */
const agentsOver = (p: toolHost.Store, catalogFile: string, options: Omit<Options, "readOnly">) =>
  Layer.unwrapEffect(Effect.map(readCatalog(catalogFile), ({ config, definitions }) =>
    Layer.merge(
      AgentHandlers.layer,
      Layer.effect(AgentCatalog, Effect.map(Agents.AgentRuntime, (runtime) => runtime.catalog))
    ).pipe(
      Layer.provideMerge(toolHost.withBudget((budgetChars) => Agents.layer(definitions, { budgetChars }))),
      Layer.provide(Layer.mergeAll(
        AgentConfig.layer(config).pipe(
          Layer.provide(AgentConfig.persistenceFile(Path.join(p.directory, ".agents", "config.json"))),
          Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
        ),
        NodeChild.layer()
      )),
      Layer.provide(Handlers.layerCaller(options.caller ?? callerFromEnv())),
      Layer.provide(p.bodies)
    ))).pipe(Layer.provide(NodeFileSystem.layer))

/**
 * The agent tools over a catalog file: results are bodies of the `agent`
 * profile in the server's store (24 hours by default), and configuration is
 * published to `<directory>/.agents/config.json`.
 */
export const layerAgents = (catalogFile: string, options: Omit<Options, "readOnly"> = {}) =>
  agentsOver(toolHost.store(hostOptions(options)), catalogFile, options)

/** The live catalog, for the `spawn_agent` description. */
class AgentCatalog extends Context.Tag("@spillway/tools/NodeMcp/AgentCatalog")<AgentCatalog, Effect.Effect<Agents.Catalog>>() {}

/** The server's first-call work (`Handlers.warm`), over its own store and masker. */
class Warm extends Context.Tag("@spillway/node/NodeMcp/Warm")<Warm, Effect.Effect<void>>() {}

/**
 * `Handlers.warm` over a store, built in the same layer graph as the tools
 * (so over the same store, masker and rules), to run once a client is
 * connected.
 */
const warmOver = (p: toolHost.Store, options: Options) =>
  Layer.effect(Warm, Effect.map(Effect.context<Spill.SpillWrite | Delivery.Budget | Handlers.ToolCaller>(), (context) => Effect.provide(Handlers.warm, context))).pipe(
    Layer.provide(Layer.mergeAll(
      Spill.layerWrite({ hint: Handlers.hint, grepHint: Handlers.grepHint }).pipe(Layer.provide(options.policy ?? SpillPolicy.allowAll)),
      toolHost.withBudget((limit) => Layer.succeed(Delivery.Budget, { limit })),
      Handlers.layerCaller(options.caller ?? callerFromEnv())
    )),
    Layer.provide(p.bodies)
  )

/** What error replies show instead of the host's own paths. */
const replies = (options: Options) => ({
  paths: [[NodeBodies.directoryOf(options), "the output directory"], [Os.homedir(), "~"]] as const
})

/** The server could not start (a full disk, a directory it cannot write, a catalog it cannot read); it said why to its client. */
export class ServerNotStarted extends Schema.TaggedError<ServerNotStarted>()("ServerNotStarted", {
  reason: Schema.String
}) {
  override get message() {
    return `the MCP server cannot start: ${this.reason}`
  }
}

/** Longest a server that cannot start waits for its client's first request, to answer it with why. */
const REFUSE_WAIT_MILLIS = 10_000

/**
 * Answers the client's first request with an error that says why the
 * server cannot start (a client's `initialize` then fails with these
 * words), and closes the transport; or closes it after a while without one.
 */
const refuse = (transport: Transport, reason: string) =>
  Effect.async<void>((resume) => {
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      transport.close().catch(() => undefined)
      resume(Effect.void)
    }
    const timer = setTimeout(finish, REFUSE_WAIT_MILLIS)
    transport.onmessage = (message) => {
      if (!("id" in message) || !("method" in message)) return
      transport.send({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InternalError, message: reason } }).then(finish, finish)
    }
    transport.onclose = finish
    transport.start().catch(finish)
    return Effect.sync(finish)
  })

/**
 * Builds a server's handlers, then serves its toolkit over them; a build
 * that fails is refused to the client, saying why. `ready` runs in the
 * background once the client is connected (see `Mcp.make`).
 */
const startWith = <Tools extends Record<string, Tool.Any>, A, E>(
  transport: Transport,
  options: Options,
  toolkit: Toolkit.Toolkit<Tools>,
  layer: Layer.Layer<A | Tool.HandlersFor<Tools>, E>,
  live?: (tool: string) => Effect.Effect<string | undefined, never, A>,
  ready?: Effect.Effect<void, never, A>
) =>
  Effect.scoped(Effect.gen(function*() {
    const built = yield* Effect.exit(Layer.build(layer))
    if (Exit.isFailure(built)) {
      const masker = Secrets.unsafeMakeMasker({ knownValues: Secrets.knownValuesFromEnv(process.env) })
      const failure = new ServerNotStarted({ reason: ErrorText.ofCause(built.cause, { masker, paths: replies(options).paths }).message })
      yield* refuse(transport, failure.message)
      return yield* failure
    }
    const context = built.value
    const describe = live === undefined ? undefined : (tool: string) => Effect.provide(live(tool), context)
    const warm = ready === undefined ? undefined : Effect.provide(ready, context)
    yield* Mcp.serve(toolkit, transport, undefined, describe, replies(options), warm).pipe(Effect.provide(context))
  }))

/**
 * Serves the tools on a transport until the client closes it; with
 * `agents`, the agent tools too. A server that cannot start (its store
 * cannot be opened: a full disk, a folder it may not write) answers the
 * client's first request with why, masked, and fails with
 * `ServerNotStarted`.
 */
export const serve = (transport: Transport, options: Options = {}) => {
  if (options.readOnly === true) return startWith(transport, options, Tools.ReadToolkit, layerRead(options))
  // one store, so the tools, their first-call work and the agent tools share one body store
  const store = toolHost.store(hostOptions(options))
  const full = Layer.merge(toolHost.full(store, hostOptions(options)), warmOver(store, options))
  const warm = Effect.flatMap(Warm, (warm) => warm)
  if (options.agents === undefined) return startWith(transport, options, Tools.FullToolkit, full, undefined, warm)
  return startWith(
    transport,
    options,
    Toolkit.merge(Tools.FullToolkit, Tools.AgentToolkit),
    Layer.merge(full, agentsOver(store, options.agents, options)),
    (tool) => (tool === "spawn_agent" ? Effect.flatMap(AgentCatalog, (catalog) => Effect.map(catalog, (c) => c.text)) : Effect.succeed(undefined)),
    warm
  )
}

/**
 * Serves the tools on this process's stdin and stdout until the client
 * closes stdin; then the jobs still running are stopped (SIGTERM, then
 * SIGKILL) and the effect ends.
 */
export const serveStdio = (options: Options = {}) =>
  Effect.suspend(() => {
    const transport = new StdioServerTransport()
    const ended = () => void transport.close()
    process.stdin.once("end", ended)
    return serve(transport, options).pipe(Effect.ensuring(Effect.sync(() => process.stdin.off("end", ended))))
  })
