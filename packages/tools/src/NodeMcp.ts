/**
 * The MCP server wired for Node: saved output in the spill directory
 * (`SPILLWAY_OUTPUT_DIR`, or `~/.spillway/tool-output`), retained evidence
 * beside it, process spools and job records in its `.processes` folder, all
 * acting for one caller (`SPILLWAY_OWNER`, or the user's name, on channel
 * `SPILLWAY_CHANNEL`, or `mcp`). The read-only server holds only the read
 * tools, over read-only grants.
 *
 * @since 0.1.0
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Process, Secrets, Spill, SpillPolicy, ToolOutput } from "@spillway/core"
import { NodeEvidence, NodeProcess, NodeScratchStore, NodeSpillStore } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Handlers from "./Handlers.js"
import * as Mcp from "./Mcp.js"
import { FullToolkit, ReadToolkit } from "./Tools.js"

/** Where the server keeps things, and whom it acts for. */
export interface Options {
  readonly directory?: string | undefined
  /** The device's scratch root; `SPILLWAY_SCRATCH_DIR` or `~/.spillway/scratch` by default. */
  readonly scratchDirectory?: string | undefined
  readonly readOnly?: boolean | undefined
  readonly caller?: Process.Caller | undefined
}

const callerFromEnv = (): Process.Caller => ({
  owner: process.env.SPILLWAY_OWNER ?? Os.userInfo().username,
  channel: process.env.SPILLWAY_CHANNEL ?? "mcp"
})

const pieces = (options: Options) => {
  const directory = Path.resolve(options.directory ?? NodeSpillStore.defaultDirectoryFromEnv())
  const store = NodeSpillStore.layer({ directory }).pipe(Layer.provide(NodeFileSystem.layer))
  return {
    directory,
    // pages stay well inside the 64 KiB model ceiling; longer selections go on with next_offset
    spillOptions: { hint: Handlers.hint, grepHint: Handlers.grepHint, maxPageBytes: 60 * 1024 },
    store,
    processes: NodeProcess.layer({ directory: Path.join(directory, ".processes") }),
    shared: Layer.mergeAll(
      NodeEvidence.layer({ directory }),
      Handlers.layerCaller(options.caller ?? callerFromEnv()),
      ToolOutput.layer().pipe(
        Layer.provide(NodeScratchStore.layer({ directory: options.scratchDirectory })),
        Layer.provide(Secrets.layerFromEnv)
      )
    )
  }
}

/** The read handlers over read-only grants: reading saved output, paging evidence, polling jobs. */
export const layerRead = (options: Omit<Options, "readOnly"> = {}) => {
  const p = pieces(options)
  return Handlers.readLayer.pipe(
    Layer.provide(Layer.mergeAll(
      p.shared,
      Spill.layerRead(p.spillOptions).pipe(Layer.provide(p.store), Layer.provide(SpillPolicy.allowAll)),
      Process.readOnly(p.processes)
    ))
  )
}

/** Every handler, over every capability. */
export const layerFull = (options: Omit<Options, "readOnly"> = {}) => {
  const p = pieces(options)
  return Handlers.fullLayer.pipe(
    Layer.provide(Layer.mergeAll(
      p.shared,
      Spill.layer(p.spillOptions).pipe(Layer.provide(p.store), Layer.provide(SpillPolicy.allowAll), Layer.provide(Secrets.layerFromEnv)),
      p.processes,
      NodeEvidence.layerKeyFile(Path.join(p.directory, ".evidence", "cursor.key")),
      NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer))
    ))
  )
}

/** Serves the tools on a transport until the client closes it. */
export const serve = (transport: Transport, options: Options = {}) =>
  options.readOnly === true
    ? Effect.scoped(Mcp.serve(ReadToolkit, transport).pipe(Effect.provide(layerRead(options))))
    : Effect.scoped(Mcp.serve(FullToolkit, transport).pipe(Effect.provide(layerFull(options))))

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
