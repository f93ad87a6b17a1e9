/**
 * Handlers of the agent tools over the agent runtime: `spawn_agent` (whose
 * description a server takes from the live catalog), `wait_for_agents` and
 * `get_agent_results`. A wait's text is the roster a model reads and its
 * facts the same rows without their previews; a page's text is the page
 * and its marker. Each result is fitted whole to the budget.
 *
 * @since 0.1.0
 */
import { Agents } from "@spillway/agents"
import { Terminal } from "@spillway/core"
import { Effect } from "effect"
import { ToolCaller } from "./Handlers.js"
import * as Replies from "./Replies.js"
import { AgentReadToolkit, AgentToolkit, ToolFailure } from "./Tools.js"

const handled = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ToolFailure, R> =>
  Effect.mapError(effect, (e) => {
    const error = e as { readonly _tag?: unknown; readonly message?: unknown }
    const reason = typeof error._tag === "string" ? Replies.cut(error._tag, 64) : "Error"
    return new ToolFailure({
      reason,
      kind: Replies.kindOf(reason),
      detail: Replies.safe(typeof error.message === "string" ? error.message : String(e))
    })
  })

/** The roster of a wait as a model reads it: the result's own `text`. */
export const renderWait = (result: Agents.WaitResult): string => result.text

const spawn = (params: { readonly agent: string; readonly task: string }) =>
  handled(Effect.gen(function*() {
    const caller = yield* ToolCaller
    const runtime = yield* Agents.AgentRuntime
    const started = yield* runtime.spawn(caller, params)
    return {
      text: `started ${started.agent_id} (${started.name}); it may run ${started.max_lifetime_seconds} seconds. Wait for it with wait_for_agents.`,
      agent_id: started.agent_id,
      max_lifetime_seconds: started.max_lifetime_seconds
    }
  }))

const wait = (params: { readonly agent_ids: ReadonlyArray<string>; readonly timeout_ms?: number | undefined }) =>
  handled(Effect.gen(function*() {
    const caller = yield* ToolCaller
    const runtime = yield* Agents.AgentRuntime
    const { text, facts } = Agents.deliveredWait(yield* runtime.waitForAgents(caller, { agentIds: params.agent_ids, timeoutMillis: params.timeout_ms ?? 60_000 }))
    // the agents' output as a model reads it: no terminal escapes, redrawn lines in their final state
    return { text: Terminal.plain(text), ...facts }
  }))

const results = (params: { readonly agent_id: string; readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  handled(Effect.gen(function*() {
    const caller = yield* ToolCaller
    const runtime = yield* Agents.AgentRuntime
    const { text, facts } = Agents.deliveredPage(yield* runtime.getAgentResults(caller, { agentId: params.agent_id, cursor: params.cursor, limit: params.limit }))
    return { text: Terminal.plain(text), ...facts }
  }))

/** Handlers of every agent tool. */
export const layer = AgentToolkit.toLayer(Effect.map(Effect.context<ToolCaller | Agents.AgentRuntime>(), (context) =>
  AgentToolkit.of({
    spawn_agent: (params) => Effect.provide(spawn(params), context),
    wait_for_agents: (params) => Effect.provide(wait(params), context),
    get_agent_results: (params) => Effect.provide(results(params), context)
  })))

/** Handlers of the agent tools a reader gets. */
export const readLayer = AgentReadToolkit.toLayer(Effect.map(Effect.context<ToolCaller | Agents.AgentRuntime>(), (context) =>
  AgentReadToolkit.of({
    wait_for_agents: (params) => Effect.provide(wait(params), context),
    get_agent_results: (params) => Effect.provide(results(params), context)
  })))
