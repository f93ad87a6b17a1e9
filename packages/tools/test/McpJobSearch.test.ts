import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { connectMcp } from "./mcpStdio.js"

/** Bytes `seq from to` prints. */
const seqBytes = (from: number, to: number) => {
  let n = 0
  for (let i = from; i <= to; i++) n += String(i).length + 1
  return n
}

type Result = {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, any>
}

const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("")

const TS_ERROR = "src/app.ts(1501,7): error TS2322: Type 'string' is not assignable to type 'number'."

/** A client of `spillway mcp` acting for `owner`, over stdio, on the output directory `dir`. */
const connect = async (dir: string, owner: string) => (await connectMcp(dir, { owner })).client

/**
 * Failure lines and searches of background jobs through the official MCP
 * client: what a model sees of a job's errors without paging, and how it
 * finds a line anywhere in the kept output.
 */
describe("spillway mcp: failure lines and searches of jobs", () => {
  let client: Client
  let dir: string
  const call = async (name: string, args: Record<string, unknown>, on: Client = client): Promise<Result> =>
    (await on.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as unknown as Result
  const job = (args: Record<string, unknown>, on?: Client) => call("manage_process", args, on)
  const finished = async (command: string) => {
    const started = await job({ action: "start", command })
    expect(started.isError).toBeFalsy()
    const pid = started.structuredContent!.pid as number
    const done = await job({ action: "wait", pid, timeout_ms: 100_000 })
    expect(done.structuredContent!.status).toBe("exited")
    return { pid, done }
  }

  beforeAll(async () => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mcp-search-"))
    client = await connect(dir, "tester")
  })
  afterAll(async () => {
    await client.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("a TypeScript error at line 1,501 of 4,002 shows with its number in the wait result and the status view", async () => {
    const { done, pid } = await finished(`seq 1 1500; echo "${TS_ERROR}"; seq 1502 4002; exit 2`)
    const polled = await job({ action: "poll", pid })
    for (const r of [done, polled]) {
      const s = r.structuredContent!
      expect(s.failure_lines).toEqual([{ line: 1501, text: TS_ERROR }])
      expect(s.failure_lines_total).toBe(1)
      const text = textOf(r)
      expect(text).toContain(`\n1501: ${TS_ERROR}\n`)
      // the newest lines and the record are there too, within the budget
      expect(text).toContain("4001\n4002\n[Lines that report errors or failures")
      expect(text.startsWith(`Job ${pid} exited with 2.\n`)).toBe(true)
      expect(text).toContain(`[Lines 3953-4002 of 4002 shown, the newest; ${s.emitted_bytes} bytes written. Next: manage_process action=poll pid=${pid} cursor=`)
      expect(text.length).toBeLessThanOrEqual(12_000)
      expect(JSON.stringify(s).length).toBeLessThanOrEqual(12_000)
      expect(s).toMatchObject({ exit_code: 2, emitted_bytes: seqBytes(1, 1500) + TS_ERROR.length + 1 + seqBytes(1502, 4002) })
    }
    // the line reads back by that number
    const line = await job({ action: "poll", pid, line: 1501, lines: 1 })
    expect(textOf(line)).toBe(`${TS_ERROR}\n[Showing lines 1501-1501 of 4002. Next: manage_process action=poll pid=${pid} line=1502 lines=1]`)
    // and a search finds it, past the first 4,000-byte page
    const found = await job({ action: "grep", pid, pattern: "error TS\\d+" })
    expect(found.structuredContent!).toMatchObject({ view: "matches", matches: [{ line: 1501, cut: false }] })
    expect(textOf(found)).toContain(`1501: ${TS_ERROR}\n[1 matching line; searched lines 1-4002 of 4002.]`)
  }, 120_000)

  it("a search finds lines in the head and in the newest output past the 4 MiB head, in pages, and says the middle was not searched", async () => {
    const { done, pid } = await finished(
      "seq 1 1500; echo 'needle one'; seq 1502 700000; echo 'needle middle'; seq 700002 900000; echo 'needle two'; seq 900002 1000000"
    )
    const kept = done.structuredContent!.kept
    expect(kept.dropped.from_line).toBeLessThan(700_001)
    expect(kept.dropped.to_line).toBeGreaterThan(700_001)
    expect(kept.ranges[1].from_line).toBeLessThan(900_001)
    const first = await job({ action: "grep", pid, pattern: "^needle", max_results: 1 })
    expect(first.isError).toBeFalsy()
    const one = first.structuredContent!
    // the head holds one match: the page is full, and the next goes on at the newest output
    const windowFirst = kept.ranges[1].from_line
    expect(one).toMatchObject({ matches: [{ line: 1501, cut: false }], more: true, next_line: windowFirst, total_lines: 1_000_000 })
    expect(textOf(first)).toMatch(/^1501: needle one\n/)
    expect(one.searched).toEqual([{ from_line: 1, to_line: kept.ranges[0].to_line }])
    // the text ends with the exact call that searches on
    expect(textOf(first)).toContain(`Next, from line ${windowFirst}: manage_process action=grep pid=${pid} pattern="^needle" cursor=${one.cursor}]`)
    const second = await job({ action: "grep", pid, pattern: "^needle", max_results: 1, cursor: one.cursor })
    const two = second.structuredContent!
    expect(two).toMatchObject({ matches: [{ line: 900_001, cut: false }], more: false, dropped: kept.dropped, ranges: kept.ranges })
    expect(textOf(second)).toMatch(/^900001: needle two\n/)
    expect(two.cursor).toBeUndefined()
    expect(two.searched).toEqual([{ from_line: windowFirst, to_line: 1_000_000 }])
    expect(textOf(second)).toContain(`lines ${kept.dropped.from_line}-${kept.dropped.to_line} (bytes ${kept.dropped.from_byte}-${kept.dropped.to_byte}) were not kept, so not searched`)
    // all at once: the middle's needle is never found
    const all = await job({ action: "grep", pid, pattern: "needle" })
    expect(all.structuredContent!.matches.map((m: { line: number }) => m.line)).toEqual([1501, 900_001])
  }, 120_000)

  it("a hostile pattern ends at its deadline with a clear result while the server keeps serving", async () => {
    // lines of random a and b: RE2's DFA gives up on the pattern below, and its NFA takes about a second a line
    const heavyLines = `node -e "for (let i = 0; i < 24; i++) { let s = ''; for (let k = 0; k < 65000; k++) s += Math.random() < 0.5 ? 'a' : 'b'; console.log(s) }"`
    const { pid } = await finished(heavyLines)
    const order: Array<string> = []
    const started = Date.now()
    const slow = job({ action: "grep", pid, pattern: "(?:a|b)*a[ab]{999}[^ab]" }).then((r) => (order.push("grep"), { r, seconds: (Date.now() - started) / 1000 }))
    await new Promise((r) => setTimeout(r, 500))
    const quick = job({ action: "list" }).then((r) => (order.push("list"), r))
    const [hostile, listed] = await Promise.all([slow, quick])
    expect(order).toEqual(["list", "grep"])
    expect(listed.isError).toBeFalsy()
    expect(hostile.r.isError).toBeFalsy()
    expect(hostile.r.structuredContent).toMatchObject({ matches: [], more: true, stopped_at_line: 1, next_line: 1 })
    expect(textOf(hostile.r)).toContain("the search stopped at its deadline at line 1: narrow the pattern")
    // the search deadline is 10 seconds
    expect(hostile.seconds).toBeLessThan(15)
  }, 60_000)

  it("another owner cannot search a job, nor read it", async () => {
    const { pid } = await finished("echo 'the plan is in line one'")
    expect((await job({ action: "grep", pid, pattern: "plan" })).structuredContent!.matches).toHaveLength(1)
    const other = await connect(dir, "intruder")
    try {
      const refused = await job({ action: "grep", pid, pattern: "plan" }, other)
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain(`you may not poll job with pid ${pid}`)
      expect(textOf(refused)).not.toContain("the plan is")
      expect((await job({ action: "poll", pid }, other)).isError).toBe(true)
    } finally {
      await other.close()
    }
  }, 60_000)

  it("arguments are bounded: a huge pattern, a bad page size, a foreign cursor, a missing pattern", async () => {
    const { done, pid } = await finished("seq 1 10")
    const huge = await job({ action: "grep", pid, pattern: "x".repeat(1_000_000) })
    expect(huge.isError).toBe(true)
    expect(textOf(huge)).toContain("the limit is 1024")
    expect(textOf(huge).length).toBeLessThan(2_100)
    for (const max_results of [0, 1_001]) expect((await job({ action: "grep", pid, pattern: "1", max_results })).isError).toBe(true)
    const foreign = await job({ action: "grep", pid, pattern: "1", cursor: done.structuredContent!.cursor })
    expect(foreign.isError).toBe(true)
    expect(textOf(foreign)).toContain("not issued by manage_process.grep")
    const missing = await job({ action: "grep", pid })
    expect(textOf(missing)).toContain("grep needs pattern")
  }, 60_000)

  it("grep_spill searches kept output by any of its get_tool_output cursors", async () => {
    const run = await call("run_command", { command: `seq 1 1500; echo "${TS_ERROR}"; seq 1502 40000; exit 2` })
    const cursor = run.structuredContent!.cursor as string
    const page = await call("get_tool_output", { cursor })
    for (const c of [cursor, page.structuredContent!.cursor as string]) {
      const found = await call("grep_spill", { cursor: c, pattern: "error TS\\d+" })
      expect(found.isError).toBeFalsy()
      expect(found.structuredContent).toMatchObject({ matches: [{ line: 1501, cut: false }], more: false, total_lines: 40_000 })
      expect(textOf(found)).toBe(`1501: ${TS_ERROR}`)
    }
    // a search by cursor that goes on names the call that does: by the kept output's name, from the next line
    const some = await call("grep_spill", { cursor, pattern: "^1\\d*7$", max_results: 2 })
    expect(some.structuredContent).toMatchObject({ matches: [{ line: 17 }, { line: 107 }], more: true, next_offset: 108 })
    const next = /Next: grep_spill filename=(\S+) pattern="\^1\\\\d\*7\$" offset=108\]$/.exec(textOf(some))
    expect(next).not.toBeNull()
    const on = await call("grep_spill", { filename: next![1], pattern: "^1\\d*7$", offset: 108, max_results: 1 })
    expect(textOf(on)).toMatch(/^117: 117\n/)
    const both = await call("grep_spill", { cursor, filename: run.structuredContent!.filename, pattern: "x" })
    expect(both.isError).toBe(true)
    expect(textOf(both)).toContain("needs filename")
    const other = await connect(dir, "intruder")
    try {
      const refused = await call("grep_spill", { cursor, pattern: "error" }, other)
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).not.toContain("TS2322")
    } finally {
      await other.close()
    }
  }, 60_000)
})
