// A short tool call through MCP, as an agent's client makes it: the official
// SDK's Client over a StdioClientTransport, to `spillway mcp` (the built
// command) or to `mcp-server-commands` (a server that runs the command and
// returns its output, with nothing kept). Both servers name the tool
// `run_command` and take the shell line as `command`.
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
// the SDK the command's own MCP server is built on, from its package
const sdk = createRequire(Path.join(root, "packages", "tools", "package.json"))
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js")
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js")

/** The command's bin, as a client starts it. */
export const spillwayBin = Path.join(root, "packages", "cli", "bin", "spillway.cjs")
/** mcp-server-commands' server, from the workspace. */
export const commandsServer = Path.join(root, "node_modules", "mcp-server-commands", "build", "index.js")

/** The last 4 KiB a server wrote to stderr, for the error when it fails. */
const tailOf = (stream) => {
  let text = ""
  stream?.on("data", (d) => (text = (text + d).slice(-4096)))
  return () => text
}

/**
 * Starts one server (`"spillway"` with its output in `dir`, or `"commands"`)
 * and connects a client; resolves to `call(line)`, which runs the line
 * through `run_command` and resolves to the milliseconds it took, after
 * checking that the text a model reads holds `expect`; `connectMs`, the time
 * from start to a connected client; and `close()`.
 */
export const connect = async (server, dir) => {
  Fs.mkdirSync(dir, { recursive: true })
  const args = server === "spillway" ? [spillwayBin, "mcp"] : [commandsServer]
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { PATH: process.env.PATH ?? "", HOME: dir, SPILLWAY_OUTPUT_DIR: dir, SPILLWAY_OWNER: "bench" },
    cwd: dir,
    stderr: "pipe"
  })
  const stderr = tailOf(transport.stderr)
  const client = new Client({ name: "spillway-bench", version: "1.0.0" })
  const started = performance.now()
  try {
    await client.connect(transport)
  } catch (e) {
    throw new Error(`${server} did not answer the MCP handshake: ${e}\n${stderr()}`)
  }
  const connectMs = performance.now() - started
  const call = async (line, expect) => {
    const t = performance.now()
    const r = await client.callTool({ name: "run_command", arguments: { command: line } }, undefined, { timeout: 60_000 })
    const ms = performance.now() - t
    const text = (r.content ?? []).map((c) => c.text ?? "").join("")
    // a call that failed measured something else: never report it
    if (r.isError === true || !text.includes(expect)) throw new Error(`${server}: run_command ${line} returned ${JSON.stringify(r).slice(0, 500)}\n${stderr()}`)
    return ms
  }
  return { call, connectMs, close: () => client.close() }
}
