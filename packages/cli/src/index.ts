/**
 * @spillway/cli: the `spillway` command.
 *
 * @since 0.1.0
 */

/** The command tree. */
export * as Cli from "./Cli.js"
/** Output streams and exit status. */
export * as Output from "./Output.js"
