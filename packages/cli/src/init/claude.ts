/**
 * Claude Code: the PreToolUse hook on the Bash tool in the user settings
 * (`~/.claude/settings.json`), and the MCP server at user scope, the
 * top-level `mcpServers` of `~/.claude.json`; both under `CLAUDE_CONFIG_DIR`
 * when it is set.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { type Agent, commandLine, type Environment, envDir, isSpillwayHook, type Target } from "./Agent.js"
import * as Jsonc from "./Jsonc.js"

const configDir = (e: Environment) => envDir(e, "CLAUDE_CONFIG_DIR") ?? Path.join(e.home, ".claude")

// Claude Code keeps user-scope MCP servers in `.claude.json`: in the home folder, or in CLAUDE_CONFIG_DIR when set
const stateFile = (e: Environment) => {
  const dir = envDir(e, "CLAUDE_CONFIG_DIR")
  return dir === undefined ? Path.join(e.home, ".claude.json") : Path.join(dir, ".claude.json")
}

const ours = (command: unknown) => isSpillwayHook(command, "claude")

const hookPath = ["hooks", "PreToolUse"]

const settings = (e: Environment): Target => {
  const group = { matcher: "Bash", hooks: [{ type: "command", command: commandLine(e.launcher, ["hook", "claude"]) }] }
  return {
    agent: "claude",
    file: Path.join(configDir(e), "settings.json"),
    what: `a PreToolUse hook on Bash that runs \`${group.hooks[0]!.command}\``,
    add: (current) => Jsonc.upsertHook(current ?? "", hookPath, group, ours),
    remove: (current) => Jsonc.removeHook(current, hookPath, ours),
    empty: Jsonc.isEmpty
  }
}

const mcp = (e: Environment): Target => {
  const [command, ...args] = [...e.launcher, "mcp"]
  const server = { type: "stdio", command: command!, args }
  return {
    agent: "claude",
    file: stateFile(e),
    what: `the MCP server "spillway" (\`${commandLine(e.launcher, ["mcp"])}\`)`,
    add: (current) => Jsonc.setKey(current ?? "", ["mcpServers", "spillway"], server),
    remove: (current) => Jsonc.removeKey(current, ["mcpServers", "spillway"]),
    empty: Jsonc.isEmpty
  }
}

/** Claude Code's files. */
export const agent: Agent = {
  name: "claude",
  title: "Claude Code",
  folders: (e) => [configDir(e), stateFile(e)],
  binaries: ["claude"],
  targets: (e) => [settings(e), mcp(e)],
  next: "restart Claude Code. A running session rewrites ~/.claude.json and can drop the new MCP entry: run `spillway init claude` again once it has restarted to check"
}
