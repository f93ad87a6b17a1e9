/**
 * The tools wired for a host on Node, in one layer: the handlers of
 * `Tools.FullToolkit` (or `Tools.ReadToolkit`) over one body store in one
 * directory, for a model loop of the host's own (@effect/ai's
 * `LanguageModel.generateText` with the toolkit) or an MCP server.
 *
 * What must agree is wired here, not left to the host: previews point the
 * model at the tools (`read_spill`, `grep_spill`), never at library
 * functions; cursors that `run_command` hands out are signed with the
 * directory's key file, the one `get_tool_output` and job polls check; every
 * view asks the same authorizer. The host chooses whom the tools act for (one
 * caller, or the caller of each call), a policy for saved files, and an
 * authorizer.
 *
 * @since 0.1.0
 */
import type { Access } from "@spillway/core"
import { Effect } from "effect"
import type * as NodeBodies from "./NodeBodies.js"
import * as host from "./internal/toolHost.js"

/** Where the tools keep what they save, whom they act for, and who may do what. */
export interface Options extends NodeBodies.Options {
  /**
   * Whom the tools act for: one caller, or `"per-call"`, the
   * `Access.CurrentCaller` the calling fiber provides at each tool call
   * (`actingFor`), so one layer serves many conversations. By default,
   * `SPILLWAY_OWNER` (the user's name) on `SPILLWAY_CHANNEL` (`tools`).
   */
  readonly caller?: Access.Caller | "per-call" | undefined
  /** Sees each save and read of a saved file and may refuse it; `SpillPolicy.allowAll` by default. */
  readonly policy?: host.PolicyLayer | undefined
  /** The host's say in every access check, after the owner and channel match; `Access.allowOwners` by default. */
  readonly authorizer?: host.AuthorizerLayer | undefined
}

/**
 * Handlers of every tool (`Tools.FullToolkit`): run commands, start and
 * control jobs, read, search and page what they kept. The layer also holds
 * the store's services (bodies, masking, the authorizer, the cursor key),
 * which an MCP server uses to mask its error replies.
 */
export const layer = (options: Options = {}) => host.full(host.store(options), options)

/**
 * Handlers of the read tools alone (`Tools.ReadToolkit`), over read-only
 * grants: nothing in it can run, write, signal or feed a job.
 */
export const layerRead = (options: Options = {}) => host.read(host.store(options), options)

/**
 * Runs an effect (a tool call, a model loop that makes tool calls, an MCP
 * server's session) for a caller: what a layer built with `caller: "per-call"`
 * acts for.
 */
export const actingFor: {
  (caller: Access.Caller): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Access.CurrentCaller>>
  <A, E, R>(self: Effect.Effect<A, E, R>, caller: Access.Caller): Effect.Effect<A, E, Exclude<R, Access.CurrentCaller>>
} = host.actingFor
