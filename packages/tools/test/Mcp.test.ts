import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../cli/bin/spillway.cjs", import.meta.url))
const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

/** A client connected to `spillway mcp` over stdio, in a fresh directory. */
const connect = async (args: ReadonlyArray<string> = [], directory?: string) => {
  const dir = directory ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mcp-"))
  if (directory === undefined) dirs.push(dir)
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", ...args],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      SPILLWAY_OUTPUT_DIR: dir,
      SPILLWAY_OWNER: "tester"
    },
    stderr: "pipe"
  })
  const client = new Client({ name: "spillway-test", version: "1.0.0" })
  await client.connect(transport)
  return { client, dir }
}

type Result = {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, any>
}

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<Result> =>
  (await client.callTool({ name, arguments: args })) as unknown as Result

const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("")

/** The content of a page: the code points of its text before the marker, as its facts count them. */
const contentOf = (r: Result) => [...textOf(r)].slice(0, r.structuredContent!.content_chars).join("")

describe("spillway mcp", () => {
  let client: Client
  let dir: string
  beforeAll(async () => {
    ;({ client, dir } = await connect())
  })
  afterAll(async () => {
    await client.close()
  })

  it("lists the tools, with input schemas and the read-only annotation on the read tools", async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(["get_tool_output", "grep_spill", "manage_process", "read_spill", "run_command"])
    for (const tool of tools) expect(tool.inputSchema.type).toBe("object")
    const readOnly = Object.fromEntries(tools.map((t) => [t.name, t.annotations?.readOnlyHint]))
    expect(readOnly).toEqual({ run_command: false, read_spill: true, grep_spill: true, get_tool_output: true, manage_process: false })
    const run = tools.find((t) => t.name === "run_command")!
    expect(Object.keys(run.inputSchema.properties ?? {}).sort()).toEqual(["command", "cwd", "max_chars", "raw", "timeout_ms", "whole"])
  })

  it("runs a command with megabytes of output, then reads, greps and pages it back, the secret masked everywhere", async () => {
    const run = await call(client, "run_command", { command: `seq 1 300000; echo deploy token=${TOKEN}; echo done` })
    expect(run.isError).toBeFalsy()
    const preview = textOf(run)
    const s = run.structuredContent!
    expect(s).toMatchObject({ exit_code: 0, truncated: true, timed_out: false })
    expect(preview).toContain(`Full output: ${s.filename}]`)
    // the 2,000-character preview, then how to page the whole output, then the exit status
    expect(preview.length).toBeLessThanOrEqual(2_000 + 500)
    expect(preview).toContain(`get_tool_output cursor=${s.cursor} pages it from the start`)
    expect(preview.endsWith("\n[exit code 0]")).toBe(true)
    expect(preview).toContain("token=*")
    expect(preview).not.toContain(TOKEN.slice(4))
    // the saved file holds it all, masked
    expect(Fs.readFileSync(Path.join(dir, s.filename), "utf8")).not.toContain(TOKEN.slice(4))

    const page = await call(client, "read_spill", { filename: s.filename, offset: 150_000, limit: 3 })
    expect(textOf(page)).toBe(`150000\n150001\n150002\n[Showing lines 150000-150002 of 300002. Next: read_spill filename=${s.filename} offset=150003]`)
    expect(page.structuredContent).toMatchObject({ offset: 150_000, lines: 3, total_lines: 300_002, next_offset: 150_003 })

    const grep = await call(client, "grep_spill", { filename: s.filename, pattern: "token=" })
    expect(textOf(grep)).toMatch(/^300001: deploy token=\*+$/)
    // a thousand long matching lines are more than one result holds: each result shows what fits and names the call that goes on
    const wide = await call(client, "run_command", { command: "for i in $(seq 1 1000); do printf 'match %0200d\\n' $i; done" })
    const wideFile = wide.structuredContent!.filename as string
    const seen: Array<number> = []
    let next: Record<string, unknown> | undefined = { filename: wideFile, pattern: "^match", max_results: 1_000 }
    while (next !== undefined) {
      const many = await call(client, "grep_spill", next)
      const manyText = textOf(many)
      expect(JSON.stringify(many).length).toBeLessThanOrEqual(12_000 + 200)
      const shownLines = manyText.split("\n")
      for (const m of many.structuredContent!.matches) {
        expect(shownLines).toContain(`${m.line}: match ${String(m.line).padStart(200, "0")}`)
        seen.push(m.line)
      }
      const more = /Next: grep_spill filename=(\S+) pattern="(\^match)" offset=(\d+)\]$/.exec(manyText)
      expect(more !== null).toBe(many.structuredContent!.more)
      next = more === null ? undefined : { filename: more[1], pattern: more[2], offset: Number(more[3]), max_results: 1_000 }
    }
    expect(seen).toEqual(Array.from({ length: 1_000 }, (_, i) => i + 1))
    const exact = await call(client, "grep_spill", { filename: s.filename, pattern: "^12345$" })
    expect(exact.structuredContent!.matches).toEqual([{ line: 12345, cut: false }])
    expect(textOf(exact)).toBe("12345: 12345")

    // get_tool_output pages the whole output from the cursor, contiguous, each within the budget
    let cursor: string | undefined = s.cursor
    let whole = ""
    let pages = 0
    while (cursor !== undefined) {
      const r = await call(client, "get_tool_output", { cursor })
      expect(r.isError).toBeFalsy()
      const sc = r.structuredContent!
      expect(sc.offset_unit).toBe("code_point")
      // the page once, in the text; the whole result within the budget
      expect(sc.text).toBeUndefined()
      expect(JSON.stringify(r).length).toBeLessThanOrEqual(12_000 + 200)
      whole += contentOf(r)
      pages++
      cursor = sc.truncated ? sc.cursor : undefined
    }
    const expected = Array.from({ length: 300_000 }, (_, i) => `${i + 1}\n`).join("") + `deploy token=${"*".repeat(TOKEN.length)}\ndone\n`
    expect(whole).toBe(expected)
    expect(pages).toBeGreaterThan(100)
  }, 60_000)

  it("manages a background job: start, wait for a line, poll the status view and pages, list, stdin and signals", async () => {
    const started = await call(client, "manage_process", {
      action: "start",
      command: `for i in 1 2 3; do echo step $i; sleep 0.2; done; echo secret ${TOKEN}; echo READY`
    })
    expect(started.isError).toBeFalsy()
    const pid = started.structuredContent!.pid as number
    expect(pid).toBeGreaterThan(0)
    const waited = await call(client, "manage_process", { action: "wait", pid, timeout_ms: 10_000, pattern: "READY", from_line: 1 })
    expect(waited.structuredContent!.wait).toMatchObject({ ended_by: "match", match: { text: "READY" } })
    const done = await call(client, "manage_process", { action: "wait", pid, timeout_ms: 10_000 })
    const view = textOf(done)
    expect(view).toContain("step 1\nstep 2\nstep 3\nsecret ****")
    expect(view).not.toContain(TOKEN.slice(4))
    // one sentence first, then the lines, then the call that reads on: no record in the text, no cursor twice
    expect(view.startsWith(`Job ${pid} exited with 0.\nstep 1\n`)).toBe(true)
    expect(view).not.toContain("{")
    expect(view.split(done.structuredContent!.cursor as string)).toHaveLength(2)
    const record = done.structuredContent!
    expect(record).toMatchObject({ pid, status: "exited", exit_code: 0, not_retained_bytes: 0, capture_limit_loss_bytes: 0 })
    expect(record.retained_bytes).toBe(record.emitted_bytes)
    const first = await call(client, "manage_process", { action: "poll", pid, cursor: record.cursor, limit: 10 })
    expect(first.structuredContent).toMatchObject({ view: "page", truncated: true, offset: 0, next_offset: 10 })
    expect(contentOf(first)).toBe("step 1\nste")
    expect(textOf(first)).toBe(`step 1\nste\n[Showing bytes 0-10 of ${record.emitted_bytes}; the page ends inside a line, which the next page goes on with. Next: manage_process action=poll pid=${pid} cursor=${first.structuredContent!.cursor}]`)
    const second = await call(client, "manage_process", { action: "poll", pid, cursor: first.structuredContent!.cursor, limit: 10 })
    expect(contentOf(second)).toBe("p 2\nstep 3")
    const listed = await call(client, "manage_process", { action: "list" })
    expect(textOf(listed)).toContain(`pid ${pid}: exited (exit 0)`)

    const cat = await call(client, "manage_process", { action: "start", command: "cat", stdin: true })
    const catPid = cat.structuredContent!.pid as number
    await call(client, "manage_process", { action: "write_stdin", pid: catPid, data: "echoed back\n", close: true })
    const catDone = await call(client, "manage_process", { action: "wait", pid: catPid, timeout_ms: 10_000 })
    expect(textOf(catDone).startsWith(`Job ${catPid} exited with 0.\nechoed back\n[Line 1 of 1 shown, the newest; 12 bytes written. Next: `)).toBe(true)

    const sleeper = await call(client, "manage_process", { action: "start", command: "sleep 30" })
    const sleeperPid = sleeper.structuredContent!.pid as number
    await call(client, "manage_process", { action: "signal", pid: sleeperPid, signal: "SIGTERM" })
    const stopped = await call(client, "manage_process", { action: "wait", pid: sleeperPid, timeout_ms: 10_000 })
    expect(stopped.structuredContent).toMatchObject({ status: "exited", signal: "SIGTERM" })
  }, 60_000)

  it("answers bad arguments, refused names and bad cursors with tool errors, and keeps serving", async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["read_spill", { filename: "../../etc/passwd" }, /name|file/i],
      ["read_spill", { filename: "2026-01-01T00-00-00-000Z-abcdef.log" }, /no saved output|not found|does not exist/i],
      ["read_spill", {}, /invalid arguments for read_spill/],
      ["read_spill", { filename: "x.log", limit: "ten" }, /invalid arguments/],
      ["get_tool_output", { cursor: "spw1.garbage.x" }, /cursor/],
      ["grep_spill", { filename: "x.log", pattern: "(" }, /pattern|regular expression|invalid/i],
      ["manage_process", { action: "poll" }, /needs pid/],
      ["manage_process", { action: "poll", pid: 999_999 }, /no job with pid 999999/],
      ["manage_process", { action: "explode" }, /invalid arguments/],
      ["run_command", { command: "true", timeout_ms: -5 }, /invalid arguments/]
    ]
    for (const [name, args, message] of cases) {
      const r = await call(client, name, args)
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true)
      expect(textOf(r)).toMatch(message)
    }
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(/Unknown tool/)
    expect((await client.listTools()).tools.length).toBe(5)
  })

  it("a command that runs too long is stopped and says so", async () => {
    const r = await call(client, "run_command", { command: "echo started; sleep 20", timeout_ms: 300 })
    expect(r.structuredContent).toMatchObject({ timed_out: true, exit_code: null })
    expect(textOf(r)).toContain("started")
    expect(textOf(r)).toContain("stopped after 300 ms")
  })
})

describe("spillway mcp --read-only", () => {
  it("lists and serves only the read tools; any other is unknown to the protocol", async () => {
    const full = await connect()
    const run = await call(full.client, "run_command", { command: "seq 1 5000" })
    const filename = run.structuredContent!.filename as string
    await full.client.close()
    const { client } = await connect(["--read-only"], full.dir)
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(["get_tool_output", "grep_spill", "manage_process", "read_spill"])
    for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true)
    expect(textOf(await call(client, "read_spill", { filename, offset: 4999 }))).toBe("4999\n5000\n[Showing lines 4999-5000 of 5000]")
    for (const tool of tools) expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
    await expect(client.callTool({ name: "run_command", arguments: { command: "true" } })).rejects.toThrow(/Unknown tool: run_command/)
    const start = await call(client, "manage_process", { action: "start", command: "true" })
    expect(start.isError).toBe(true)
    expect(textOf(start)).toMatch(/invalid arguments for manage_process/)
    await client.close()
  }, 30_000)
})

describe("spillway mcp shutdown", () => {
  it("stops the jobs still running when the client goes away", async () => {
    const { client } = await connect()
    const started = await call(client, "manage_process", { action: "start", command: "sleep 60" })
    const pid = started.structuredContent!.pid as number
    const alive = () => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    expect(alive()).toBe(true)
    await client.close()
    const deadline = Date.now() + 5_000
    while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(alive()).toBe(false)
  }, 15_000)
})

describe("spillway mcp --agents", () => {
  it("serves the agent tools over a catalog of command agents, with the live limits in spawn_agent", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mcp-agents-"))
    dirs.push(dir)
    const catalog = Path.join(dir, "catalog.json")
    Fs.writeFileSync(catalog, JSON.stringify({
      agents: [
        { name: "echo", description: "answers with the task", command: ["/bin/sh", "-c", `printf 'answer to %s: ${TOKEN}\\n' "$0"; seq 1 2000`, "{task}"] },
        { name: "broken", description: "always fails", command: ["/bin/sh", "-c", "echo broken >&2; exit 4"] }
      ],
      max_concurrent_agents: 3,
      max_lifetime_seconds: 120
    }))
    const { client } = await connect(["--agents", catalog], dir)
    const { tools } = await client.listTools()
    const spawn = tools.find((t) => t.name === "spawn_agent")!
    expect(spawn.description).toContain("- echo: answers with the task")
    expect(spawn.description).toContain("At most 3 agents run at once. An agent started now may run 120 seconds.")
    expect(tools.find((t) => t.name === "wait_for_agents")!.annotations?.readOnlyHint).toBe(true)
    const a = await call(client, "spawn_agent", { agent: "echo", task: "life" })
    const b = await call(client, "spawn_agent", { agent: "broken", task: "x" })
    const ids = [a.structuredContent!.agent_id, b.structuredContent!.agent_id]
    const waited = await call(client, "wait_for_agents", { agent_ids: [...ids, ids[0]], timeout_ms: 10_000 })
    const roster = waited.structuredContent!
    expect(roster.agents.map((r: { status: string }) => r.status)).toEqual(["completed", "failed"])
    // the previews are in the text only
    expect(roster.agents[0].preview).toBeUndefined()
    const rosterLine = textOf(waited).split("\n").indexOf(textOf(waited).split("\n").find((l) => l.startsWith(`${ids[0]} (echo): completed,`))!)
    expect(textOf(waited).split("\n")[rosterLine + 1]).toBe(`  answer to life: ${"*".repeat(TOKEN.length)}`)
    expect(textOf(waited)).toContain(`get_agent_results agent_id=${ids[0]} cursor=`)
    let cursor: string | undefined
    let whole = ""
    do {
      const page = await call(client, "get_agent_results", { agent_id: ids[0], ...(cursor !== undefined ? { cursor } : {}) })
      expect(page.isError).toBeFalsy()
      whole += contentOf(page)
      cursor = page.structuredContent!.cursor
      if (cursor !== undefined) expect(textOf(page).endsWith(`Next: get_agent_results agent_id=${ids[0]} cursor=${cursor}]`)).toBe(true)
    } while (cursor !== undefined)
    expect(whole).toBe(`answer to life: ${"*".repeat(TOKEN.length)}\n` + Array.from({ length: 2000 }, (_, i) => `${i + 1}\n`).join(""))
    const failed = await call(client, "get_agent_results", { agent_id: ids[1] })
    expect(failed.structuredContent).toMatchObject({ kind: "error", status: "failed" })
    expect(textOf(failed)).toBe("broken\n[/bin/sh ended with exit code 4]")
    const unknown = await call(client, "spawn_agent", { agent: "nobody", task: "x" })
    expect(unknown.isError).toBe(true)
    expect(textOf(unknown)).toContain("the catalog has echo, broken")
    // ids no agent has: rows that say so, never a failure of the server
    const odd = await call(client, "wait_for_agents", { agent_ids: ["no such agent", "../x", "ünïcødé", "x".repeat(200)], timeout_ms: 0 })
    expect(odd.isError).toBeFalsy()
    expect(odd.structuredContent!.agents.map((r: { status: string }) => r.status)).toEqual(["not_found", "not_found", "not_found", "not_found"])
    const notFound = await call(client, "get_agent_results", { agent_id: "../x" })
    expect(notFound.isError).toBe(true)
    expect(textOf(notFound)).toContain("no agent \"../x\"")
    await client.close()

    // the results are bodies of the server's store: a server started again reads them, and they expire in a day
    const again = await connect(["--agents", catalog], dir)
    const kept = await call(again.client, "get_agent_results", { agent_id: ids[1] })
    expect(kept.structuredContent).toMatchObject({ kind: "error", status: "failed" })
    expect(textOf(kept)).toBe("broken\n[/bin/sh ended with exit code 4]")
    expect(Date.parse(kept.structuredContent!.expires_at) - Date.now()).toBeGreaterThan(23 * 60 * 60 * 1000)
    const restored = await call(again.client, "wait_for_agents", { agent_ids: ids, timeout_ms: 0 })
    expect(restored.structuredContent!.audit.durable_results).toEqual(ids)
    expect(Fs.existsSync(Path.join(dir, ".agents", "results"))).toBe(false)
    await again.client.close()
  }, 30_000)

  it("refuses to start on a catalog that is not one, saying what is wrong", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mcp-agents-"))
    dirs.push(dir)
    const catalog = Path.join(dir, "catalog.json")
    Fs.writeFileSync(catalog, JSON.stringify({ agents: [{ name: "no-command", description: "has none", command: [] }] }))
    const run = ChildProcess.spawnSync(process.execPath, [bin, "mcp", "--agents", catalog], {
      env: { PATH: process.env.PATH ?? "", HOME: dir, SPILLWAY_OUTPUT_DIR: dir },
      input: "",
      encoding: "utf8",
      timeout: 20_000
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("is not an agent catalog")
    expect(run.stderr).toContain("command")
  }, 30_000)
})

describe("spillway mcp with hostile patterns", () => {
  /** Lines of random a and b: RE2's DFA gives up on the pattern below, and its NFA takes about a second a line. */
  const heavyLines = `node -e "for (let i = 0; i < 24; i++) { let s = ''; for (let k = 0; k < 65000; k++) s += Math.random() < 0.5 ? 'a' : 'b'; console.log(s) }"`
  const heavy = "(?:a|b)*a[ab]{999}[^ab]"
  /** Calls `first`, and `second` once `first` has had a moment; says which answered first. */
  const race = async (first: () => Promise<Result>, second: () => Promise<Result>) => {
    const order: Array<string> = []
    const started = Date.now()
    const a = first().then((r) => (order.push("first"), { r, seconds: (Date.now() - started) / 1000 }))
    await new Promise((r) => setTimeout(r, 500))
    const b = second().then((r) => (order.push("second"), r))
    const [one, two] = await Promise.all([a, b])
    return { order, first: one, second: two }
  }

  it("a search that cannot finish ends at its deadline with a clear result, and other calls are served meanwhile", async () => {
    const { client } = await connect()
    const run = await call(client, "run_command", { command: heavyLines })
    const filename = run.structuredContent!.filename as string
    const r = await race(
      () => call(client, "grep_spill", { pattern: heavy, filename }),
      () => call(client, "read_spill", { filename, offset: 1, limit: 1 })
    )
    expect(r.order).toEqual(["second", "first"])
    expect(r.second.isError).toBeFalsy()
    expect(r.first.r.structuredContent).toMatchObject({ matches: [], total_lines: 24 })
    expect(r.first.r.structuredContent!.stopped_at_line).toBeGreaterThanOrEqual(1)
    expect(textOf(r.first.r)).toContain("the search stopped at its deadline")
    // the search deadline is 10 seconds
    expect(r.first.seconds).toBeLessThan(15)
    await client.close()
  }, 60_000)

  it("a wait pattern ends with the wait's timeout, on the full and the read-only server, serving others meanwhile", async () => {
    const full = await connect()
    const started = await call(full.client, "manage_process", { action: "start", command: `${heavyLines}; sleep 60` })
    const pid = started.structuredContent!.pid as number
    const ready = await call(full.client, "manage_process", { action: "wait", pid, timeout_ms: 30_000, pattern: "^[ab]{10}", from_line: 1 })
    expect(textOf(ready)).toMatch(/^Job \d+ is still running after \d+ s\. The wait ended after \d+ s on line \d+: [ab]{10}/)
    const r = await race(
      () => call(full.client, "manage_process", { action: "wait", pid, timeout_ms: 3000, pattern: heavy, from_line: 1 }),
      () => call(full.client, "manage_process", { action: "list" })
    )
    expect(r.order).toEqual(["second", "first"])
    expect(textOf(r.first.r)).toContain("The wait timed out after")
    expect(r.first.seconds).toBeLessThan(10)
    await call(full.client, "manage_process", { action: "signal", pid, signal: "SIGKILL" })
    await call(full.client, "manage_process", { action: "wait", pid, timeout_ms: 10_000 })
    await full.client.close()

    const { client } = await connect(["--read-only"], full.dir)
    const again = await race(
      () => call(client, "manage_process", { action: "wait", pid, timeout_ms: 3000, pattern: heavy, from_line: 1 }),
      () => call(client, "manage_process", { action: "list" })
    )
    expect(again.order).toEqual(["second", "first"])
    expect(again.first.r.structuredContent!.wait).toMatchObject({ ended_by: "timeout" })
    expect(again.first.seconds).toBeLessThan(10)
    await client.close()
  }, 90_000)
})
