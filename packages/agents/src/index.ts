/**
 * @spillway/agents: agents as supervised fibers, their live configuration,
 * wait snapshots and paged results kept as bodies of the one store.
 *
 * @since 0.1.0
 */

/** The live agent configuration and its persistence. */
export * as AgentConfig from "./AgentConfig.js"
/** The agent runtime: catalog, spawn, wait and results. */
export * as Agents from "./Agents.js"
