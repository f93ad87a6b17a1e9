/**
 * @spillway/cli: the `spillway` command.
 *
 * @since 0.1.0
 */

/** The command tree. */
export * as Cli from "./Cli.js"
/** Output streams and exit status. */
export * as Output from "./Output.js"
/** `spillway init`: coding agents' configuration. */
export * as Init from "./Init.js"
/** The rewrite that routes an agent's shell command through `spillway run`. */
export * as Rewrite from "./Rewrite.js"
/** `spillway hook <agent>`: agents' hook JSON to and from the rewrite. */
export * as AgentHook from "./AgentHook.js"
