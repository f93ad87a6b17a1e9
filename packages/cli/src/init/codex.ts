/**
 * Codex: the MCP server as `[mcp_servers.spillway]` in `config.toml`, and a
 * PreToolUse hook on Bash in `hooks.json`, both in `~/.codex` (or
 * `CODEX_HOME`). Hooks are on by default in current Codex; Codex runs a new
 * hook only once the person has trusted it in `/hooks`.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { type Agent, commandLine, type Environment, envDir, isSpillwayHook, type Target } from "./Agent.js"
import * as Jsonc from "./Jsonc.js"
import * as Toml from "./Toml.js"

const configDir = (e: Environment) => envDir(e, "CODEX_HOME") ?? Path.join(e.home, ".codex")

/** How long Codex waits for one tool call of the server, in seconds: a command run through it can take minutes. */
export const toolTimeoutSec = 600

const table = (e: Environment): Toml.Table => {
  const [command, ...args] = [...e.launcher, "mcp"]
  return { name: ["mcp_servers", "spillway"], keys: [["command", command!], ["args", args], ["tool_timeout_sec", toolTimeoutSec]] }
}

const config = (e: Environment): Target => ({
  agent: "codex",
  file: Path.join(configDir(e), "config.toml"),
  what: `[mcp_servers.spillway] (\`${commandLine(e.launcher, ["mcp"])}\`)`,
  add: (current, owned) => Toml.upsertTable(current ?? "", table(e), owned),
  remove: (current) => Toml.removeTable(current, ["mcp_servers", "spillway"]),
  empty: Toml.isEmpty
})

const ours = (command: unknown) => isSpillwayHook(command, "codex")

const hookPath = ["hooks", "PreToolUse"]

const hooks = (e: Environment): Target => {
  const group = { matcher: "^Bash$", hooks: [{ type: "command", command: commandLine(e.launcher, ["hook", "codex"]) }] }
  return {
    agent: "codex",
    file: Path.join(configDir(e), "hooks.json"),
    what: `a PreToolUse hook on Bash that runs \`${group.hooks[0]!.command}\``,
    add: (current) => Jsonc.upsertHook(current ?? "", hookPath, group, ours),
    remove: (current) => Jsonc.removeHook(current, hookPath, ours),
    empty: Jsonc.isEmpty
  }
}

/** Codex's files. */
export const agent: Agent = {
  name: "codex",
  title: "Codex",
  folders: (e) => [configDir(e)],
  binaries: ["codex"],
  targets: (e) => [config(e), hooks(e)],
  next: "restart Codex, then trust the new hook in /hooks (Codex does not run a hook until it is trusted)"
}
