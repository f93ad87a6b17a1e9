/**
 * opencode: the MCP server in its global config (`opencode.jsonc`,
 * `opencode.json` or `config.json` in `~/.config/opencode`, or under
 * `XDG_CONFIG_HOME`), in opencode's own `{"type": "local", "command": [...]}`
 * shape, and the Spillway plugin copied into its global plugin folder.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Agent, commandLine, type Environment, envDir, type Target } from "./Agent.js"
import { copy } from "./Copy.js"
import * as Jsonc from "./Jsonc.js"

const configDir = (e: Environment) => Path.join(envDir(e, "XDG_CONFIG_HOME") ?? Path.join(e.home, ".config"), "opencode")

/** How long opencode waits for one request to the server, in milliseconds: a command run through it can take minutes. */
export const timeoutMs = 600_000

// the file opencode itself would edit: the first of these that exists
const configFile = (e: Environment) => {
  const dir = configDir(e)
  const found = ["opencode.jsonc", "opencode.json", "config.json"].map((f) => Path.join(dir, f)).find((f) => Fs.existsSync(f))
  return found ?? Path.join(dir, "opencode.json")
}

// opencode loads `{plugin,plugins}/*.{ts,js}`; an existing `plugin/` folder is used rather than a second one made
const pluginDir = (e: Environment) => {
  const dir = configDir(e)
  return !Fs.existsSync(Path.join(dir, "plugins")) && Fs.existsSync(Path.join(dir, "plugin")) ? Path.join(dir, "plugin") : Path.join(dir, "plugins")
}

const mcp = (e: Environment): Target => {
  const server = { type: "local", command: [...e.launcher, "mcp"], enabled: true, timeout: timeoutMs }
  return {
    agent: "opencode",
    file: configFile(e),
    what: `the MCP server "spillway" (\`${commandLine(e.launcher, ["mcp"])}\`)`,
    add: (current) => Jsonc.setKey(current ?? "", ["mcp", "spillway"], server),
    remove: (current) => Jsonc.removeKey(current, ["mcp", "spillway"]),
    empty: Jsonc.isEmpty
  }
}

/** opencode's files. */
export const agent: Agent = {
  name: "opencode",
  title: "opencode",
  folders: (e) => [configDir(e)],
  binaries: ["opencode"],
  targets: (e) => [
    mcp(e),
    copy("opencode", Path.join(pluginDir(e), "spillway.js"), Path.join(e.bundles, "integrations", "opencode.js"), "the Spillway plugin")
  ],
  next: "restart opencode"
}
