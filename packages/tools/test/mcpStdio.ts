/**
 * `spillway mcp` started from the built command for one test file, with the
 * official MCP client connected over stdio, in a directory of its own.
 */
import { afterAll, beforeAll } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The command's bin, as a client would start it. */
export const bin = fileURLToPath(new URL("../../cli/bin/spillway.cjs", import.meta.url))

/** A tool result as the client receives it. */
export type Result = {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, any>
}

/** The text a model reads of a result. */
export const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("")

/** What a client of `spillway mcp` may change: who it acts for, the command's arguments, more environment, its own name. */
export interface ConnectOptions {
  readonly owner?: string
  readonly args?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  readonly name?: string
}

/** A client of `spillway mcp` over stdio on the output directory `dir` (also its HOME), with its transport. */
export const connectMcp = async (dir: string, options: ConnectOptions = {}) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", ...(options.args ?? [])],
    env: { PATH: process.env.PATH ?? "", HOME: dir, SPILLWAY_OUTPUT_DIR: dir, SPILLWAY_OWNER: options.owner ?? "tester", ...options.env },
    stderr: "pipe"
  })
  const client = new Client({ name: options.name ?? "spillway-test", version: "1.0.0" })
  await client.connect(transport)
  return { client, transport }
}

/** The server of a test file: its client, its directory, and a tool call through the client (60 s unless told). */
export interface Server {
  readonly client: Client
  readonly dir: string
  readonly call: (name: string, args: Record<string, unknown>, timeoutMillis?: number) => Promise<Result>
}

/** Starts the server before the file's tests and ends it after them; `prefix` names its directory. */
export const mcpServer = (prefix: string): Server => {
  let client: Client | undefined
  let dir = ""
  beforeAll(async () => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
    client = (await connectMcp(dir)).client
  })
  afterAll(async () => {
    await client?.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  })
  const connected = (): Client => {
    if (client === undefined) throw new Error("the MCP server is not started: use it inside a test")
    return client
  }
  return {
    get client() {
      return connected()
    },
    get dir() {
      return dir
    },
    call: async (name, args, timeoutMillis = 60_000) =>
      (await connected().callTool({ name, arguments: args }, undefined, { timeout: timeoutMillis })) as unknown as Result
  }
}
