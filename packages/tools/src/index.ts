/**
 * @spillway/tools: the model-facing tools as @effect/ai toolkits, their
 * handlers, and an MCP server over them.
 *
 * @since 0.1.0
 */

/** Tool definitions and toolkits grouped by capability. */
export * as Tools from "./Tools.js"
/** Handlers over the capabilities. */
export * as Handlers from "./Handlers.js"
/** Handlers of the agent tools. */
export * as AgentHandlers from "./AgentHandlers.js"
/** Error replies a model reads: bounded, masked, without the host's paths. */
export * as Replies from "./Replies.js"
/** An MCP server over a toolkit, through the official SDK. */
export * as Mcp from "./Mcp.js"
