import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../cli/bin/spillway.cjs", import.meta.url))

/** The delivery budget the server is given, in characters. */
const BUDGET = 30_000

type Result = {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, any>
}

const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("")
const codePoints = (s: string) => [...s].length
/** The preview alone: the text before the note on how to read the whole output and the exit status. */
const previewOf = (r: Result) => textOf(r).split("\n[The whole output is kept")[0]!.split("\n[Asked for whole")[0]!
/** The size of a result as the client received it, in code points. */
const sizeOf = (r: Result) => codePoints(JSON.stringify({ content: r.content, structuredContent: r.structuredContent }))

/**
 * Preview sizes set by the caller, through the official MCP client and
 * `spillway mcp` with a 30,000-character budget: `max_chars` sizes the
 * preview and its head, failure lines and tail with it; `whole` returns an
 * output whole when it fits the budget; nothing passes the budget.
 */
describe("spillway mcp: run_command sized by the caller", () => {
  let client: Client
  let dir: string
  const run = async (args: Record<string, unknown>): Promise<Result> =>
    (await client.callTool({ name: "run_command", arguments: args }, undefined, { timeout: 60_000 })) as unknown as Result

  beforeAll(async () => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mcp-size-"))
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "mcp"],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        SPILLWAY_OUTPUT_DIR: dir,
        SPILLWAY_OWNER: "tester",
        TOOLS_TOOL_OUTPUT_MAX_CHARS: String(BUDGET)
      },
      stderr: "pipe"
    })
    client = new Client({ name: "spillway-test", version: "1.0.0" })
    await client.connect(transport)
  })
  afterAll(async () => {
    await client.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("the schema offers max_chars (400 or more) and whole", async () => {
    const { tools } = await client.listTools()
    const props = (tools.find((t) => t.name === "run_command")!.inputSchema as any).properties
    expect(props.max_chars.type).toBe("integer")
    expect(props.max_chars.minimum).toBe(400)
    expect(props.whole.type).toBe("boolean")
  })

  it("a preview asked for 8,000 characters is between half and all of that, and shows more of the head and tail than the default", async () => {
    const command = "seq 1 20000"
    const small = await run({ command })
    const large = await run({ command, max_chars: 8000 })
    expect(small.structuredContent!.truncated).toBe(true)
    expect(large.structuredContent!.truncated).toBe(true)
    expect(large.structuredContent!.exit_code).toBe(0)
    const preview = codePoints(previewOf(large))
    expect(preview).toBeGreaterThanOrEqual(4000)
    expect(preview).toBeLessThanOrEqual(8000)
    expect(codePoints(previewOf(small))).toBeLessThanOrEqual(2000)
    // the head and the tail both grow: more whole numbers from 1 and up to 20000
    const numbers = (r: Result) => new Set(previewOf(r).split("\n").filter((l) => /^\d+$/.test(l)))
    expect(numbers(large).size).toBeGreaterThan(numbers(small).size * 3)
    expect(numbers(large).has("300")).toBe(true)
    expect(numbers(large).has("19800")).toBe(true)
    expect(numbers(small).has("300")).toBe(false)
    expect(textOf(large)).toMatch(/\[exit code 0\]$/)
    // the saved output is the same whole output either way
    const page = (await client.callTool({ name: "read_spill", arguments: { filename: large.structuredContent!.filename, offset: 12345, limit: 1 } })) as unknown as Result
    expect(textOf(page)).toContain("12345")
  })

  it("a larger preview keeps a failure from the middle of the output beside its head and tail", async () => {
    const command = "seq 1 10000; echo 'Error: disk quota exceeded while writing cache'; seq 10001 20000; exit 1"
    const r = await run({ command, max_chars: 8000 })
    const preview = previewOf(r)
    expect(r.structuredContent!.exit_code).toBe(1)
    expect(preview).toContain("Error: disk quota exceeded while writing cache")
    expect(preview.split("\n")).toContain("1")
    expect(preview.split("\n")).toContain("20000")
    expect(codePoints(preview)).toBeGreaterThanOrEqual(4000)
    expect(codePoints(preview)).toBeLessThanOrEqual(8000)
  })

  it("whole returns an output longer than the default preview whole when it fits the budget", async () => {
    // 3,000 lines, 13,893 characters: past the 2,000-character preview, within the 30,000-character budget
    const expected = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("")
    const cut = await run({ command: "seq 1 3000" })
    expect(cut.structuredContent!.truncated).toBe(true)
    const r = await run({ command: "seq 1 3000", whole: true })
    expect(r.structuredContent!.truncated).toBe(false)
    expect(r.structuredContent!.filename).toBeNull()
    expect(textOf(r).startsWith(expected)).toBe(true)
    expect(textOf(r)).toMatch(/\[exit code 0\]$/)
    expect(sizeOf(r)).toBeLessThanOrEqual(BUDGET)
  })

  it("whole on an output past the budget gives the largest preview that fits, says so, and stays within the budget", async () => {
    const r = await run({ command: "seq 1 200000", whole: true })
    expect(r.structuredContent!.truncated).toBe(true)
    expect(textOf(r)).toContain("Asked for whole, the output is longer than this result's budget")
    expect(textOf(r)).toContain("get_tool_output cursor=")
    expect(sizeOf(r)).toBeLessThanOrEqual(BUDGET)
    expect(codePoints(previewOf(r))).toBeGreaterThanOrEqual(BUDGET / 2)
  })

  it("a size past the budget is lowered to what fits, also for output that escapes long", async () => {
    const plain = await run({ command: "seq 1 200000", max_chars: 1_000_000 })
    expect(sizeOf(plain)).toBeLessThanOrEqual(BUDGET)
    expect(codePoints(previewOf(plain))).toBeGreaterThanOrEqual(BUDGET / 2)
    // quotes and backslashes take two characters each as delivered
    const quoted = await run({ command: "for i in $(seq 1 3000); do echo '\"\\\\\"\\\\\"\\\\\"\\\\\"\\\\\"'; done", max_chars: 1_000_000 })
    expect(quoted.isError).toBeFalsy()
    expect(sizeOf(quoted)).toBeLessThanOrEqual(BUDGET)
  })

  it("a size under 400 or not a whole number is refused by the schema", async () => {
    for (const max_chars of [100, 0, -5, 2000.5]) {
      const r = await run({ command: "echo hi", max_chars })
      expect(r.isError).toBe(true)
    }
  })
})
