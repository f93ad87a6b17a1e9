/**
 * Gemini CLI: a BeforeTool hook on `run_shell_command` and the MCP server,
 * both in `~/.gemini/settings.json` (under `GEMINI_CLI_HOME` when it is set).
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { type Agent, commandLine, type Edit, type Environment, envDir, isSpillwayHook, type Target } from "./Agent.js"
import * as Jsonc from "./Jsonc.js"

const configDir = (e: Environment) => Path.join(envDir(e, "GEMINI_CLI_HOME") ?? e.home, ".gemini")

const ours = (command: unknown) => isSpillwayHook(command, "gemini")

const hookPath = ["hooks", "BeforeTool"]
const serverPath = ["mcpServers", "spillway"]

const then = (edit: Edit, next: (text: string) => Edit): Edit => (edit._tag === "Text" ? next(edit.text) : edit)

const settings = (e: Environment): Target => {
  const command = commandLine(e.launcher, ["hook", "gemini"])
  const group = { matcher: "run_shell_command", hooks: [{ name: "spillway", type: "command", command }] }
  const [server, ...args] = [...e.launcher, "mcp"]
  return {
    agent: "gemini",
    file: Path.join(configDir(e), "settings.json"),
    what: `a BeforeTool hook on run_shell_command that runs \`${command}\` and the MCP server "spillway"`,
    add: (current) =>
      then(Jsonc.upsertHook(current ?? "", hookPath, group, ours), (t) => Jsonc.setKey(t, serverPath, { command: server!, args })),
    remove: (current) => then(Jsonc.removeHook(current, hookPath, ours), (t) => Jsonc.removeKey(t, serverPath)),
    empty: Jsonc.isEmpty
  }
}

/** Gemini CLI's file. */
export const agent: Agent = {
  name: "gemini",
  title: "Gemini CLI",
  folders: (e) => [configDir(e)],
  binaries: ["gemini"],
  targets: (e) => [settings(e)],
  next: "restart Gemini CLI"
}
