import { Effect } from "effect"
import type { Service as Config } from "../AgentConfig.js"
import type { AgentDefinition, Catalog } from "../Agents.js"

/**
 * The catalog as `spawn_agent` describes it, from the live configuration:
 * built again only after a publication moves the configuration's version. @internal
 */
export const make = <R>(definitions: ReadonlyArray<AgentDefinition<R>>, config: Config): Effect.Effect<Catalog> => {
  let cache: { readonly version: number; readonly catalog: Catalog } | undefined
  return Effect.gen(function*() {
    const version = yield* config.version
    if (cache !== undefined && cache.version === version) return cache.catalog
    const c = yield* config.current
    const agents = definitions.map((d) => ({ name: d.name, description: d.description }))
    const text = [
      "Start an agent on a task; it runs in the background. Agents:",
      ...agents.map((a) => `- ${a.name}: ${a.description}`),
      `At most ${c.maxConcurrentAgents} agents run at once. An agent started now may run ${c.maxLifetimeSeconds} seconds.`
    ].join("\n")
    const catalog: Catalog = { agents, max_concurrent_agents: c.maxConcurrentAgents, max_lifetime_seconds: c.maxLifetimeSeconds, text }
    cache = { version, catalog }
    return catalog
  })
}
