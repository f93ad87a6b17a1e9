/**
 * Cursor: the MCP server in `~/.cursor/mcp.json`. Cursor's hooks
 * (`beforeShellExecution`) can allow, deny or ask about a shell command but
 * cannot rewrite it, so no hook is written.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { type Agent, commandLine, type Environment, type Target } from "./Agent.js"
import * as Jsonc from "./Jsonc.js"

const configDir = (e: Environment) => Path.join(e.home, ".cursor")

const mcp = (e: Environment): Target => {
  const [command, ...args] = [...e.launcher, "mcp"]
  const server = { command: command!, args }
  return {
    agent: "cursor",
    file: Path.join(configDir(e), "mcp.json"),
    what: `the MCP server "spillway" (\`${commandLine(e.launcher, ["mcp"])}\`)`,
    add: (current) => Jsonc.setKey(current ?? "", ["mcpServers", "spillway"], server),
    remove: (current) => Jsonc.removeKey(current, ["mcpServers", "spillway"]),
    empty: Jsonc.isEmpty
  }
}

/** Cursor's file. */
export const agent: Agent = {
  name: "cursor",
  title: "Cursor",
  folders: (e) => [configDir(e)],
  binaries: ["cursor", "cursor-agent"],
  targets: (e) => [mcp(e)],
  next: "restart Cursor",
  note: "Cursor's shell hooks can allow or deny a command but not rewrite it, so only the MCP server is configured"
}
