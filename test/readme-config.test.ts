/**
 * The README's MCP client configurations, as a client reads them: the JSON
 * `mcpServers` entry (Claude Desktop, Claude Code, Cursor) and the TOML
 * `[mcp_servers.spillway]` table (Codex) parse, name `spillway mcp` and the
 * environment the server reads, and the server each starts answers. The
 * command is started by its name, `spillway`, found on PATH where this clone's
 * `packages/cli/bin/spillway.cjs` stands in for an installed one
 * (`test/install.test.ts` starts the installed one).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parse as parseToml } from "smol-toml"
import { blockHolding, root, type ServerEntry, serverVariables } from "./readme.js"

const bin = Path.join(root, "packages", "cli", "bin", "spillway.cjs")

/** Every source file of the packages, for the variables the README says the server reads. */
const sources = (): string =>
  Fs.readdirSync(Path.join(root, "packages"))
    .flatMap((p) => {
      const src = Path.join(root, "packages", p, "src")
      return Fs.existsSync(src)
        ? Fs.readdirSync(src, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => Fs.readFileSync(Path.join(e.parentPath, e.name), "utf8"))
        : []
    })
    .join("\n")

const entries: ReadonlyArray<readonly [string, () => ServerEntry]> = [
  ["the JSON mcpServers entry", () => JSON.parse(blockHolding("json", "\"mcpServers\"").text).mcpServers.spillway],
  ["the TOML [mcp_servers.spillway] table", () => (parseToml(blockHolding("toml", "[mcp_servers.spillway]").text) as any).mcp_servers.spillway]
]

describe("the README's MCP client configurations", { timeout: 60_000 }, () => {
  let dir: string
  let shims: string
  const clients: Array<Client> = []

  beforeAll(() => {
    if (!Fs.existsSync(Path.join(root, "packages", "cli", "dist", "mcp.cjs"))) {
      throw new Error("the command is not built: run `npx --yes pnpm@10.34.8 build` first (`pnpm test` builds before it tests)")
    }
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-readme-config-"))
    // `spillway` on PATH, as an install puts it there
    shims = Path.join(dir, "bin")
    Fs.mkdirSync(shims)
    Fs.symlinkSync(bin, Path.join(shims, "spillway"))
  })
  afterAll(async () => {
    for (const client of clients) await client.close()
    if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  })

  /** Starts the entry's command as a client would, with an output directory of the test's own, and connects to it. */
  const connect = async (entry: ServerEntry, extraArgs: ReadonlyArray<string> = []) => {
    const output = Fs.mkdtempSync(Path.join(dir, "output-"))
    const client = new Client({ name: "spillway-readme-config", version: "1.0.0" })
    clients.push(client)
    await client.connect(
      new StdioClientTransport({
        command: entry.command,
        args: [...entry.args, ...extraArgs],
        env: {
          ...getDefaultEnvironment(),
          ...entry.env,
          HOME: dir,
          SPILLWAY_OUTPUT_DIR: output,
          PATH: [shims, Path.dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(Path.delimiter)
        },
        cwd: dir,
        stderr: "pipe"
      })
    )
    return client
  }

  it("names only variables the server reads, each in the MCP page's table and in the sources that read it", () => {
    const text = Fs.readFileSync(Path.join(root, "docs", "mcp.md"), "utf8")
    const code = sources()
    for (const name of serverVariables) {
      expect(text, `docs/mcp.md's table of variables names ${name}`).toContain(`| \`${name}\` |`)
      expect(code, `a package's sources read ${name}`).toContain(name)
    }
    for (const [what, entry] of entries) {
      const env = entry().env
      expect(Object.keys(env), `${what}'s env`).toContain("SPILLWAY_OUTPUT_DIR")
      for (const name of Object.keys(env)) expect(serverVariables, `${what} sets ${name}`).toContain(name)
      for (const value of Object.values(env)) expect(typeof value, `${what}'s env values are strings`).toBe("string")
    }
  })

  for (const [what, entry] of entries) {
    it(`${what} starts spillway mcp, which lists every tool`, async () => {
      const e = entry()
      expect(e.command).toBe("spillway")
      expect(e.args).toEqual(["mcp"])
      const client = await connect(e)
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name).sort()).toEqual(["get_tool_output", "grep_spill", "manage_process", "read_spill", "run_command"])
      const ran = await client.callTool({ name: "run_command", arguments: { command: "echo configured" } }) as any
      expect(ran.content[0].text).toMatch(/^configured\n[\s\S]*\[exit code 0\]$/)
    })
  }

  it("with --read-only, as the README says, serves only the tools that read", async () => {
    const client = await connect(entries[0]![1](), ["--read-only"])
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(["get_tool_output", "grep_spill", "manage_process", "read_spill"])
  })
})
