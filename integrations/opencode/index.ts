/**
 * An opencode plugin that runs the model's shell commands through Spillway.
 *
 * opencode calls a plugin's `tool.execute.before` hook with the tool's name and
 * an `output.args` object it then runs the tool with. For each call of the
 * `bash` tool, this plugin hands `args.command` to the shared rewrite, which
 * turns it into the same command run by `spillway run`: the model then reads
 * Spillway's bounded preview (the end of a long output, the exit status, the
 * failure lines, the saved name to page back) instead of the tool's own cut.
 * Commands the rewrite passes through (`cd`, `export`, background jobs,
 * interactive programs, or everything when `SPILLWAY_HOOK=off`) run as
 * written.
 *
 * opencode matches a bash command against its permission rules after this
 * hook, so when the configuration decides bash permissions per command (see
 * `Permissions.ts`), the plugin leaves every command as written and says so
 * once: the rules keep seeing the commands they were written for.
 *
 * The plugin never breaks a call: any error inside it leaves the command as
 * the model wrote it and reports one line (to opencode's log when the client
 * can take it, else to stderr). The module exports the plugin function alone,
 * as opencode calls every export of a plugin file as a plugin.
 *
 * @since 0.1.0
 */
import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin"
import { rewrite } from "@spillway/cli/Rewrite"
import { perCommandRules } from "./Permissions.js"
import { describe, oneLine } from "../report.js"


/** Writes one line to stderr, and never throws. */
const toStderr = (line: string): void => {
  try {
    console.error(line)
  } catch {
    // nowhere left to report to; the call still runs unchanged
  }
}

/** Reports one line through opencode's log (`client.app.log`) when the client has one, else on stderr. */
const reporter = (input: PluginInput | undefined) => (text: string): void => {
  const line = oneLine(text)
  try {
    const log = input?.client?.app?.log
    if (typeof log === "function") {
      const sent = input!.client.app.log({ body: { service: "spillway", level: "warn", message: line } })
      Promise.resolve(sent).catch(() => toStderr(line))
      return
    }
  } catch {
    // the client is absent or failing: fall back to stderr
  }
  toStderr(line)
}

/**
 * Rewrites a `bash` call's `args.command` in place when the shared rewrite
 * routes it through `spillway run`; leaves every other call, and this one on
 * any error, exactly as it was.
 */
const route = (call: { readonly tool: string }, output: { args: unknown }, report: (line: string) => void): void => {
  try {
    if (call.tool !== "bash") return
    const args = output.args
    if (args === null || typeof args !== "object") return
    const command = (args as Record<string, unknown>).command
    if (typeof command !== "string") return
    const decision = rewrite(command)
    if (decision._tag === "Rewrite") (args as Record<string, unknown>).command = decision.command
  } catch (error) {
    report(`spillway: left a bash command unchanged after an error: ${describe(error)}`)
  }
}

/** The plugin: opencode calls it once with its `PluginInput` and keeps the hooks it returns. */
const SpillwayPlugin: Plugin = async (input) => {
  const report = reporter(input)
  // set from opencode's configuration: why commands stay as written, if they do
  let rules: string | undefined
  const hooks: Hooks = {
    config: async (config) => {
      try {
        rules = perCommandRules(config)
      } catch (error) {
        rules = `its configuration could not be read (${describe(error)})`
      }
      if (rules !== undefined) {
        report(`spillway: bash commands run as written, not through spillway run, so opencode's permission rules still match them: ${rules}`)
      }
    },
    "tool.execute.before": async (call, output) => {
      if (rules === undefined) route(call, output, report)
    }
  }
  return hooks
}

export default SpillwayPlugin
