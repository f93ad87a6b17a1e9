import { afterAll, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Replies } from "@spillway/tools"
import { FastCheck as fc } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { connectMcp, type Result, textOf } from "./mcpStdio.js"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const SECRET_ENV = "hostile-test-secret-value-0123456789"

const connect = async () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-hostile-"))
  dirs.push(dir)
  const { client } = await connectMcp(dir, { env: { DEPLOY_TOKEN: SECRET_ENV }, name: "spillway-hostile" })
  return { client, dir }
}

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<Result>

describe("replies to hostile arguments", () => {
  it("cuts an error about a 10 MB argument to a few KB, and masks what it quotes", async () => {
    const { client, dir } = await connect()
    try {
      // 10 MB: the official SDK drops a whole message over 10 MiB before any handler sees it
      const huge = "a".repeat(10_000_000)
      for (const [name, args] of [
        ["read_spill", { filename: huge }],
        ["grep_spill", { filename: huge, pattern: "x" }],
        ["run_command", { command: "true", cwd: `/nonexistent/${huge}` }],
        ["get_tool_output", { cursor: huge }],
        ["manage_process", { action: "poll", pid: 1, cursor: huge }]
      ] as const) {
        const r = await call(client, name, args)
        expect(r.isError, name).toBe(true)
        expect(JSON.stringify(r).length, name).toBeLessThan(4 * 1024)
      }
      // a refused name that holds a registered secret is quoted masked
      const r = await call(client, "read_spill", { filename: `../${SECRET_ENV}` })
      expect(r.isError).toBe(true)
      expect(textOf(r)).not.toContain(SECRET_ENV)
      // and no error shows where the host keeps its files
      for (const [name, args] of [
        ["read_spill", { filename: "2026-01-01T00-00-00-000Z-abcdef.log" }],
        ["run_command", { command: "true", cwd: Path.join(dir, "no-such-folder") }],
        ["grep_spill", { filename: "2026-01-01T00-00-00-000Z-abcdef.log", pattern: "(a" }]
      ] as const) {
        const t = textOf(await call(client, name, args))
        expect(t, name).not.toContain(dir)
      }
    } finally {
      await client.close()
    }
  }, 60_000)

  it("answers random arguments of random shapes and sizes to every tool, and stays up", async () => {
    const { client } = await connect()
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name)
      const value = fc.letrec((tie) => ({
        any: fc.oneof(
          { depthSize: "small", withCrossShrink: true },
          fc.constantFrom(null, true, false, 0, -1, 2 ** 53, 1e308, -0.5),
          fc.string({ maxLength: 40 }),
          fc.string({ unit: "binary", maxLength: 40 }),
          fc.nat(300_000).map((n) => "z".repeat(n)),
          fc.array(tie("any"), { maxLength: 4 }),
          fc.dictionary(fc.constantFrom("pid", "cursor", "filename", "pattern", "action", "offset", "limit", "command", "x"), tie("any"), { maxKeys: 5 })
        )
      })).any
      const args = fc.dictionary(
        fc.constantFrom("filename", "pattern", "offset", "limit", "max_results", "ignore_case", "cursor", "action", "pid", "timeout_ms", "data", "signal", "close", "stdin", "cwd", "other"),
        value,
        { maxKeys: 6 }
      )
      const cases = fc.sample(fc.tuple(fc.constantFrom(...tools.filter((t) => t !== "run_command")), args), { numRuns: 150, seed: 42 })
      for (const [name, a] of cases) {
        // a wait is bounded, so the run ends: no case may take the server with it
        const bounded = a.action === "wait" ? { ...a, timeout_ms: 50 } : a
        const r = await call(client, name, bounded).catch((e: unknown) => ({ isError: true, content: [{ type: "text", text: String(e) }] }) as Result)
        expect(JSON.stringify(r).length, name).toBeLessThan(80 * 1024)
      }
      // still serving
      const ok = await call(client, "manage_process", { action: "list" })
      expect(ok.isError).toBeFalsy()
    } finally {
      await client.close()
    }
  }, 120_000)
})

describe("Replies", () => {
  it.prop("is never longer than its bound and keeps both ends of what it cuts", [fc.string({ maxLength: 10_000 })], ([text]) => {
    const out = Replies.cut(text)
    expect(out.length).toBeLessThanOrEqual(Replies.MAX_ERROR_CHARS)
    if (text.length <= Replies.MAX_ERROR_CHARS) expect(out).toBe(text)
    else {
      expect(text.startsWith(out.slice(0, 100))).toBe(true)
      expect(text.endsWith(out.slice(-100))).toBe(true)
    }
  })

  it("shows paths by a name instead", () => {
    expect(Replies.safe("open /home/x/.spillway/tool-output/a.log failed", { paths: [["/home/x/.spillway/tool-output", "the output directory"]] }))
      .toBe("open the output directory/a.log failed")
  })
})
