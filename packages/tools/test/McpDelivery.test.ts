import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Ajv, type ValidateFunction } from "ajv"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * What an MCP client and a model receive, through the official SDK client
 * and `spillway mcp`: every result within the budget as delivered, output
 * schemas every structured content matches, honest annotations, texts a
 * text-only client can act on, and failures with a stable kind.
 */

const bin = fileURLToPath(new URL("../../cli/bin/spillway.cjs", import.meta.url))

/** The delivery budget of one result, in characters (code points). */
const BUDGET = 12_000
/**
 * What the protocol adds around a result beyond what the budget counts (the
 * server fits `{ content, structuredContent }`): `isError` on a failure,
 * and anything the client adds as it parses. 100 characters.
 */
const FRAMING = 100

const KINDS = [
  "InvalidArguments",
  "InvalidRequest",
  "InvalidCursor",
  "NotFound",
  "AccessDenied",
  "Refused",
  "Expired",
  "QuotaExceeded",
  "NotReady",
  "TooLarge",
  "SpawnFailed",
  "StoreFailed",
  "Internal"
]

type Result = {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, any>
}

const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("")
const codePoints = (s: string) => [...s].length
/** The content of a page: the code points of its text before the marker, as its facts count them. */
const contentOf = (r: Result) => [...textOf(r)].slice(0, r.structuredContent!.content_chars).join("")
/** The size of a result as the client received it, in code points. */
const sizeOf = (r: Result) => codePoints(JSON.stringify(r))

/** Programs that write hostile output: characters JSON escapes long, broken UTF-8, one huge line. */
const generators: Record<string, string> = {
  // 30,000 bytes of U+0001, each six characters once escaped, in lines of 300
  "ctrl.js": "let s = ''; for (let i = 0; i < 100; i++) s += '\\u0001'.repeat(299) + '\\n'; process.stdout.write(s)",
  // quotes, backslashes, tabs, control characters, emoji and accents, numbered, the last line without a break
  "mixed.js": "let s = ''; for (let i = 1; i <= 4000; i++) s += i + ' \"\\\\\\t\\u0002 😀 é ' + (i % 7 === 0 ? 'ERROR failed ' : '') + '\\n'; process.stdout.write(s + 'no break at the end')",
  // one line of 100,000 escaped characters, then a short one
  "longline.js": "process.stdout.write('\\u0003'.repeat(100000) + '\\nshort\\n')",
  // bytes that are not UTF-8
  "binary.js": "const b = Buffer.alloc(40000); for (let i = 0; i < b.length; i++) b[i] = (i * 131 + 7) % 256; process.stdout.write(b)"
}

/** The lines the mixed generator writes. */
const mixedOutput = () => {
  let s = ""
  for (let i = 1; i <= 4000; i++) s += `${i} "\\\t\u0002 😀 é ${i % 7 === 0 ? "ERROR failed " : ""}\n`
  return s + "no break at the end"
}

/** The call that continues, as the end of a text names it: `Next[, …]: TOOL key=value …]`. */
const nextCall = (text: string): { readonly tool: string; readonly args: Record<string, unknown> } | undefined => {
  const m = /Next(?:, [^:\]]*)?: (\w+)((?: \w+=\S+)+)\]$/.exec(text)
  if (m === null) return undefined
  const args: Record<string, unknown> = {}
  for (const part of m[2]!.trim().split(" ")) {
    const at = part.indexOf("=")
    const value = part.slice(at + 1)
    args[part.slice(0, at)] = value.startsWith("\"") ? JSON.parse(value) : /^\d+$/.test(value) ? Number(value) : value
  }
  return { tool: m[1]!, args }
}

/** A client of `spillway mcp --agents` in a fresh directory, whose every call is checked against a budget. */
const session = async (budget: number) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-delivery-"))
  for (const [name, source] of Object.entries(generators)) Fs.writeFileSync(Path.join(dir, name), source)
  const catalog = Path.join(dir, "catalog.json")
  Fs.writeFileSync(catalog, JSON.stringify({
    agents: [
      { name: "echo", description: "answers with the task", command: ["/bin/sh", "-c", "printf 'answer: %s\\n' \"$0\"", "{task}"] },
      { name: "mixed", description: "writes hostile output", command: [process.execPath, Path.join(dir, "mixed.js")] },
      { name: "slow", description: "takes its time", command: ["/bin/sh", "-c", "sleep 20"] }
    ],
    max_concurrent_agents: 8,
    max_lifetime_seconds: 60
  }))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", "--agents", catalog],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      SPILLWAY_OUTPUT_DIR: dir,
      SPILLWAY_OWNER: "tester",
      ...(budget !== BUDGET ? { TOOLS_TOOL_OUTPUT_MAX_CHARS: String(budget) } : {})
    },
    stderr: "pipe"
  })
  const client = new Client({ name: "spillway-delivery", version: "1.0.0" })
  await client.connect(transport)
  const validators = new Map<string, ValidateFunction>()
  const ajv = new Ajv({ strict: true, allErrors: true })
  for (const tool of (await client.listTools()).tools) validators.set(tool.name, ajv.compile(tool.outputSchema!))
  const largest = new Map<string, number>()

  /** Calls a tool and checks what every result must be: within the budget, matching its output schema, a failure with a kind. */
  const call = async (name: string, args: Record<string, unknown>): Promise<Result> => {
    const r = (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as unknown as Result
    const where = `${name} ${JSON.stringify(args).slice(0, 120)}`
    expect(sizeOf(r), where).toBeLessThanOrEqual(budget + FRAMING)
    largest.set(name, Math.max(largest.get(name) ?? 0, sizeOf(r)))
    expect(r.content.map((c) => c.type), where).toEqual(["text"])
    expect(r.structuredContent, where).toBeDefined()
    const validate = validators.get(name)!
    expect(validate(r.structuredContent), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true)
    if (r.isError === true) {
      expect(KINDS, where).toContain(r.structuredContent!.error.kind)
      expect(r.structuredContent!.error.message, where).toBe(textOf(r))
    } else {
      expect(r.structuredContent!.error, where).toBeUndefined()
      // the text is never repeated in the facts
      expect(r.structuredContent!.text, where).toBeUndefined()
    }
    return r
  }
  return {
    client,
    dir,
    call,
    largest,
    run: (command: string, extra: Record<string, unknown> = {}) => call("run_command", { command, ...extra }),
    node: (script: string) => `node ${JSON.stringify(Path.join(dir, script))}`,
    close: async () => {
      await client.close()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

type Session = Awaited<ReturnType<typeof session>>

describe("what an MCP client and a model receive", () => {
  let s: Session
  let client: Client
  let dir: string
  let call: Session["call"]
  let run: Session["run"]
  let node: Session["node"]
  beforeAll(async () => {
    s = await session(BUDGET)
    ;({ call, client, dir, node, run } = s)
  })
  afterAll(() => s.close())

  it("declares output schemas, honest annotations and a description of every parameter", async () => {
    const { tools } = await client.listTools()
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]))
    const reads = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
    const acts = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }
    expect(hints).toMatchObject({
      run_command: acts,
      manage_process: acts,
      spawn_agent: acts,
      read_spill: reads,
      grep_spill: reads,
      get_tool_output: reads,
      wait_for_agents: reads,
      get_agent_results: reads
    })
    expect(tools.length).toBe(8)
    // Effect Schema's own titles and descriptions (`int`, `between(0, 600000)`, "an integer") name no field
    const effectDefaults = /^(an? (integer|number|string|boolean)|a (positive|non-negative|negative) |a number (between|greater|less)|int$|between\(|greaterThan|lessThan|positive$)/
    const walk = (node: unknown, names: boolean, at: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, false, `${at}[${i}]`))
      if (typeof node !== "object" || node === null) return
      for (const [key, value] of Object.entries(node)) {
        if (!names) {
          expect(key, at).not.toBe("title")
          if (key === "description") expect(value, `${at}.description`).not.toMatch(effectDefaults)
        }
        walk(value, !names && (key === "properties" || key === "$defs"), `${at}.${key}`)
      }
    }
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe("object")
      walk(tool.inputSchema, false, `${tool.name}.inputSchema`)
      walk(tool.outputSchema, false, `${tool.name}.outputSchema`)
      for (const [param, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${tool.name}.${param}`).toMatch(/\w{3,}/)
      }
      // the field a result delivers is `cursor`: no description names another
      expect(tool.description, tool.name).not.toContain("next_cursor")
    }
  })

  it("the read-only server says its manage_process only reads", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "mcp", "--read-only"],
      env: { PATH: process.env.PATH ?? "", HOME: dir, SPILLWAY_OUTPUT_DIR: dir, SPILLWAY_OWNER: "tester" },
      stderr: "pipe"
    })
    const reader = new Client({ name: "spillway-reader", version: "1.0.0" })
    await reader.connect(transport)
    const { tools } = await reader.listTools()
    await reader.close()
    const processTool = tools.find((t) => t.name === "manage_process")!
    expect(processTool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect((processTool.inputSchema.properties as Record<string, { enum?: Array<string> }>).action.enum).toEqual(["poll", "wait", "grep", "list"])
    expect(processTool.outputSchema?.type).toBe("object")
  })

  it("run_command's text ends with the exit status, and names the cursor and the file whenever it cut", async () => {
    const three = await run("echo hi; exit 3")
    expect(textOf(three)).toBe("hi\n[exit code 3]")
    expect(three.structuredContent).toEqual({ exit_code: 3, timed_out: false, truncated: false, filename: null, cursor: null })
    expect(textOf(await run("true"))).toBe("[exit code 0]")
    expect(textOf(await run("printf 'no break'"))).toBe("no break\n[exit code 0]")
    expect(textOf(await run("kill -TERM $$"))).toBe("[exit code 143: ended by SIGTERM]")
    const stopped = await run("echo started; sleep 20", { timeout_ms: 300 })
    expect(textOf(stopped)).toBe("started\n[exit code none: stopped after 300 ms, its timeout; the command did not finish]")
    for (const command of ["seq 1 100000; exit 2", node("ctrl.js"), node("mixed.js"), node("longline.js"), node("binary.js")]) {
      const r = await run(command)
      const s = r.structuredContent!
      expect(s.truncated, command).toBe(true)
      const text = textOf(r)
      expect(text, command).toContain(`\n[The whole output is kept: get_tool_output cursor=${s.cursor} pages it from the start; read_spill and grep_spill read it by line with filename=${s.filename}]\n`)
      expect(text.endsWith(`\n[exit code ${s.exit_code}]`), command).toBe(true)
    }
  }, 60_000)

  it("every result of every tool fits the budget, on outputs that escape long", async () => {
    const files: Record<string, string> = {}
    for (const script of Object.keys(generators)) files[script] = (await run(node(script))).structuredContent!.filename
    files.seq = (await run("seq 1 300000")).structuredContent!.filename
    for (const filename of Object.values(files)) {
      for (const args of [{}, { offset: 2 }, { offset: 3, limit: 2_000 }, { limit: 1 }]) await call("read_spill", { filename, ...args })
      for (const pattern of [".", "^", "ERROR|\\x01", "no such text"]) await call("grep_spill", { filename, pattern, max_results: 1_000 })
      // a page that is cut fills its result: within 2,000 characters of the budget (a line of 300 escaped characters is 1,800);
      // asked for exactly, as escapes and carriage returns leave a model's form of a binary output shorter
      let r = await call("read_spill", { filename, raw: true })
      if (r.structuredContent!.next_offset !== undefined) expect(sizeOf(r), filename).toBeGreaterThan(BUDGET - 2_000)
      r = await run(`cat ${JSON.stringify(Path.join(dir, filename))}`)
      for (let cursor: string | undefined = r.structuredContent!.cursor, pages = 0; cursor !== undefined && pages < 6; pages++) {
        const page = await call("get_tool_output", { cursor, raw: true })
        cursor = page.structuredContent!.cursor
        if (cursor !== undefined) expect(sizeOf(page), filename).toBeGreaterThan(BUDGET - 600)
      }
    }
    const many = await call("grep_spill", { filename: files.seq, pattern: "7", max_results: 1_000 })
    expect(sizeOf(many)).toBeGreaterThan(BUDGET - 100)
    expect(many.structuredContent!.next_offset).toBeGreaterThan(0)
  }, 120_000)

  it("manage_process views, pages and line reads fit the budget, and its list too", async () => {
    // lines 1-100 of escaped characters, 101-4101 mixed, 4102 one of 100,000 escaped characters, 4103 short
    const started = await call("manage_process", { action: "start", command: `${node("ctrl.js")}; ${node("mixed.js")}; echo; ${node("longline.js")}` })
    const pid = started.structuredContent!.pid as number
    expect(started.structuredContent!.view).toBe("status")
    const done = await call("manage_process", { action: "wait", pid, timeout_ms: 30_000 })
    expect(done.structuredContent).toMatchObject({ view: "status", status: "exited", exit_code: 0 })
    // the status view: the newest lines and the next call, the record as facts, within the budget
    expect(textOf(done)).toContain(`Next: manage_process action=poll pid=${pid} cursor=${done.structuredContent!.cursor} reads`)
    for (const offset of [1, 100, 30_000, 60_000]) {
      const page = await call("manage_process", { action: "poll", pid, offset, limit: 8_000 })
      expect(page.structuredContent!.view).toBe("page")
      if (offset === 1) expect(sizeOf(page)).toBeGreaterThan(BUDGET - 300)
    }
    for (const line of [1, 50, 100, 101, 4101, 4102, 4103]) {
      const lines = await call("manage_process", { action: "poll", pid, line, lines: 2_000 })
      expect(lines.structuredContent!.view).toBe("lines")
      if (line === 1) expect(sizeOf(lines)).toBeGreaterThan(BUDGET - 1_900)
    }
    // a line too long for any result: its start, and a cursor to the rest of it
    const long = await call("manage_process", { action: "poll", pid, line: 4102 })
    expect(long.structuredContent).toMatchObject({ first_line: 4102, lines: 1, cut: true })
    expect(textOf(long).endsWith(`the rest of it: manage_process action=poll pid=${pid} cursor=${long.structuredContent!.cursor}. Next: manage_process action=poll pid=${pid} line=4103 lines=1]`)).toBe(true)
    expect(sizeOf(long)).toBeGreaterThan(BUDGET - 100)
    const rest = await call("manage_process", { action: "poll", pid, cursor: long.structuredContent!.cursor })
    expect(contentOf(rest)).toBe("\u0003".repeat(rest.structuredContent!.shown_bytes))
    // many jobs with long commands: the list shows what fits and the call for the next
    for (let i = 0; i < 30; i++) await call("manage_process", { action: "start", command: `true ${String(i).padStart(4, "0")} ${"x".repeat(5_000)}` })
    let listed = 0
    let total = 0
    for (let next: Record<string, unknown> | undefined = { action: "list" }; next !== undefined;) {
      const list = await call("manage_process", next)
      const s = list.structuredContent!
      expect(s.view).toBe("jobs")
      for (const job of s.jobs) expect(codePoints(job.command)).toBeLessThanOrEqual(230)
      listed += s.jobs.length
      total = s.total
      const more = nextCall(textOf(list))
      expect(more !== undefined).toBe(s.next_offset !== undefined)
      if (more !== undefined) expect(sizeOf(list)).toBeGreaterThan(BUDGET - 1_000)
      next = more?.args
    }
    expect(listed).toBe(total)
    expect(total).toBeGreaterThan(30)
    const cat = await call("manage_process", { action: "start", command: "cat", stdin: true })
    const catPid = cat.structuredContent!.pid as number
    const wrote = await call("manage_process", { action: "write_stdin", pid: catPid, data: "é\n", close: true })
    expect(wrote.structuredContent).toEqual({ view: "stdin", pid: catPid, bytes_written: 3, stdin_closed: true })
    const sleeper = await call("manage_process", { action: "start", command: "sleep 30" })
    const sent = await call("manage_process", { action: "signal", pid: sleeper.structuredContent!.pid, signal: "SIGKILL" })
    expect(sent.structuredContent).toEqual({ view: "signal", pid: sleeper.structuredContent!.pid, signal: "SIGKILL" })
  }, 120_000)

  it("a text-only client pages kept output to its end by the calls the texts name", async () => {
    const r = await run(node("mixed.js"))
    const first = /get_tool_output cursor=(\S+) pages it/.exec(textOf(r))![1]!
    let whole = ""
    let pages = 0
    for (let args: Record<string, unknown> | undefined = { cursor: first }; args !== undefined; pages++) {
      const page = await call("get_tool_output", args)
      const text = textOf(page)
      const content = contentOf(page)
      whole += content
      const next = nextCall(text)
      expect(next !== undefined).toBe(page.structuredContent!.truncated)
      if (next === undefined) {
        expect(text.endsWith("the end of the output]")).toBe(true)
        args = undefined
        continue
      }
      expect(next).toEqual({ tool: "get_tool_output", args: { cursor: page.structuredContent!.cursor } })
      // a page that stops inside a line says so
      expect(text.includes("the page ends inside a line"), `page ${pages}`).toBe(!content.endsWith("\n"))
      args = next.args
    }
    expect(whole).toBe(mixedOutput())
    // no page carries more than the budget, and the output took many of them
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(codePoints(whole) / BUDGET))
    expect(pages).toBeGreaterThanOrEqual(5)
  }, 60_000)

  it("a text-only client reads a job by byte and by line, and a saved file by line, by the calls the texts name", async () => {
    const started = await call("manage_process", { action: "start", command: node("mixed.js") })
    const pid = started.structuredContent!.pid as number
    const done = await call("manage_process", { action: "wait", pid, timeout_ms: 30_000 })
    const from = /Next: (manage_process action=poll pid=\d+ cursor=\S+) reads/.exec(textOf(done))![1]!
    const follow = async (args: Record<string, unknown>, tool = "manage_process") => {
      let whole = ""
      for (let at: Record<string, unknown> | undefined = args; at !== undefined;) {
        const page = await call(tool, at)
        whole += contentOf(page)
        const next = nextCall(textOf(page))
        if (next !== undefined) expect(next.tool).toBe(tool)
        at = next?.args
      }
      return whole
    }
    const byByte = nextCall(`Next: ${from}]`)!.args
    expect(await follow(byByte)).toBe(mixedOutput())
    expect(await follow({ action: "poll", pid, line: 1, lines: 2_000 })).toBe(mixedOutput())
    const saved = (await run(node("mixed.js"))).structuredContent!.filename
    expect(await follow({ filename: saved }, "read_spill")).toBe(mixedOutput())
    // a search goes on from where it stopped, to every matching line
    const found: Array<number> = []
    for (let at: Record<string, unknown> | undefined = { filename: saved, pattern: "ERROR", max_results: 1_000 }; at !== undefined;) {
      const page = await call("grep_spill", at)
      found.push(...page.structuredContent!.matches.map((m: { line: number }) => m.line))
      at = nextCall(textOf(page))?.args
    }
    expect(found).toEqual(Array.from({ length: Math.floor(4000 / 7) }, (_, i) => (i + 1) * 7))
    // a line too long for a result: its start, then the rest of it by cursor
    const long = (await run(node("longline.js"))).structuredContent!.filename
    const part = await call("read_spill", { filename: long })
    expect(part.structuredContent).toMatchObject({ offset: 1, lines: 1, next_offset: 2, cut_line: { line: 1 } })
    const rest = nextCall(textOf(part))!
    expect(rest.tool).toBe("get_tool_output")
    expect(textOf(part)).toContain(`the line after it: read_spill filename=${long} offset=2`)
    let line = contentOf(part)
    for (let at: Record<string, unknown> | undefined = rest.args; at !== undefined && !line.includes("\n");) {
      const page = await call("get_tool_output", at)
      line += contentOf(page)
      at = nextCall(textOf(page))?.args
    }
    expect(line.startsWith("\u0003".repeat(100_000) + "\n")).toBe(true)
  }, 120_000)

  it("agent results page to their end by the calls the texts name, and a wait fits", async () => {
    const a = await call("spawn_agent", { agent: "mixed", task: "x" })
    const b = await call("spawn_agent", { agent: "echo", task: "\u0001\"\\".repeat(3_000) })
    const ids = [a.structuredContent!.agent_id, b.structuredContent!.agent_id]
    const waited = await call("wait_for_agents", { agent_ids: ids, timeout_ms: 30_000 })
    expect(waited.structuredContent!.agents.map((r: { status: string }) => r.status)).toEqual(["completed", "completed"])
    let whole = ""
    for (let at: Record<string, unknown> | undefined = { agent_id: ids[0], limit: 8_000 }; at !== undefined;) {
      const page = await call("get_agent_results", { limit: 8_000, ...at })
      whole += contentOf(page)
      const next = nextCall(textOf(page))
      if (next !== undefined) {
        expect(next.tool).toBe("get_agent_results")
        // a page stops at its 8,000 bytes or at the budget, whichever comes first
        const s = page.structuredContent!
        expect(s.next_offset - s.offset > 8_000 - 4 || sizeOf(page) > BUDGET - 600).toBe(true)
      }
      at = next?.args
    }
    expect(whole).toBe(mixedOutput())
    const echoed = await call("get_agent_results", { agent_id: ids[1], limit: 8_000 })
    expect(contentOf(echoed).startsWith("answer: \u0001\"\\")).toBe(true)
  }, 60_000)

  it("a failure carries a stable kind beside its words, bounded", async () => {
    const slow = await call("spawn_agent", { agent: "slow", task: "x" })
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["read_spill", { filename: "2026-01-01T00-00-00-000Z-abcdef.log" }, "NotFound"],
      ["read_spill", { filename: "../../etc/passwd" }, "InvalidRequest"],
      ["read_spill", { filename: "x.log", limit: "ten" }, "InvalidArguments"],
      ["grep_spill", { filename: "x.log", pattern: "(" }, "InvalidRequest"],
      ["get_tool_output", { cursor: "spw1.garbage.x" }, "InvalidCursor"],
      ["get_tool_output", { cursor: "x".repeat(5_000_000) }, "InvalidCursor"],
      ["manage_process", { action: "poll" }, "InvalidRequest"],
      ["manage_process", { action: "poll", pid: 999_999 }, "NotFound"],
      ["manage_process", { action: "explode" }, "InvalidArguments"],
      ["run_command", { command: "true", cwd: Path.join(dir, "no-such-folder") }, "SpawnFailed"],
      ["spawn_agent", { agent: "nobody", task: "x" }, "InvalidRequest"],
      ["get_agent_results", { agent_id: slow.structuredContent!.agent_id }, "NotReady"],
      ["get_agent_results", { agent_id: "../x" }, "NotFound"]
    ]
    for (const [name, args, kind] of cases) {
      const r = await call(name, args)
      const where = `${name} ${JSON.stringify(args).slice(0, 80)}`
      expect(r.isError, where).toBe(true)
      expect(r.structuredContent!.error.kind, where).toBe(kind)
      expect(sizeOf(r), where).toBeLessThan(5 * 1024)
      expect(textOf(r), where).not.toContain(dir)
    }
  }, 60_000)

  it("the sizes seen stay within the budget for every tool", () => {
    const largest = s.largest
    expect([...largest.keys()].sort()).toEqual([
      "get_agent_results",
      "get_tool_output",
      "grep_spill",
      "manage_process",
      "read_spill",
      "run_command",
      "spawn_agent",
      "wait_for_agents"
    ])
    for (const size of largest.values()) expect(size).toBeLessThanOrEqual(BUDGET + FRAMING)
  })
})

describe("with a smaller budget (tools.tool_output_max_chars)", () => {
  it("every tool keeps to 3,000 characters, and a preview that would not fit gives way in its middle", async () => {
    const budget = 3_000
    const s = await session(budget)
    try {
      for (const script of ["ctrl.js", "mixed.js", "longline.js", "binary.js"]) {
        const r = await s.run(s.node(script))
        const filename = r.structuredContent!.filename as string
        expect(textOf(r).endsWith("\n[exit code 0]"), script).toBe(true)
        await s.call("read_spill", { filename })
        await s.call("grep_spill", { filename, pattern: ".", max_results: 1_000 })
        await s.call("get_tool_output", { cursor: r.structuredContent!.cursor })
        // the exact form fills its result: a model's form of a binary output is shorter by its escapes
        const page = await s.call("get_tool_output", { cursor: r.structuredContent!.cursor, raw: true })
        expect(sizeOf(page), script).toBeGreaterThan(budget - 600)
      }
      const squeezed = await s.run(s.node("ctrl.js"))
      expect(textOf(squeezed)).toMatch(/\n\[… \d+ characters left out here to fit the 3000-character result …\]\n/)
      expect(textOf(squeezed)).toContain(`get_tool_output cursor=${squeezed.structuredContent!.cursor} pages it`)
      expect(sizeOf(squeezed)).toBeGreaterThan(budget - 10)
      const started = await s.call("manage_process", { action: "start", command: `${s.node("ctrl.js")}; ${s.node("mixed.js")}` })
      const pid = started.structuredContent!.pid as number
      await s.call("manage_process", { action: "wait", pid, timeout_ms: 30_000 })
      await s.call("manage_process", { action: "poll", pid })
      await s.call("manage_process", { action: "poll", pid, offset: 1, limit: 8_000 })
      await s.call("manage_process", { action: "poll", pid, line: 1, lines: 2_000 })
      await s.call("manage_process", { action: "poll", pid, line: 200, lines: 2_000 })
      await s.call("manage_process", { action: "list" })
      const agent = await s.call("spawn_agent", { agent: "mixed", task: "x" })
      await s.call("wait_for_agents", { agent_ids: [agent.structuredContent!.agent_id], timeout_ms: 30_000 })
      const result = await s.call("get_agent_results", { agent_id: agent.structuredContent!.agent_id, limit: 8_000 })
      expect(nextCall(textOf(result))?.tool).toBe("get_agent_results")
      for (const size of s.largest.values()) expect(size).toBeLessThanOrEqual(budget + FRAMING)
    } finally {
      await s.close()
    }
  }, 120_000)
})
