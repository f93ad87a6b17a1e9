import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { connectMcp } from "./mcpStdio.js"


type Result = {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, any>
}

const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("")

/** A client of `spillway mcp` acting for `owner`, over stdio, on the output directory `dir`. */
const connect = async (dir: string, owner = "tester") => (await connectMcp(dir, { owner })).client

/** The fields of the record a model cannot act on: in the facts, never in the text. */
const FACTS_ONLY = ["shown_intervals", "capture_limit_loss_bytes", "not_retained_bytes", "retained_bytes", "emitted_bytes", "spool", "expires_at", "[output retention]"]

/** A job's text as a model reads it: one sentence first, no record, no field twice. */
const expectPlain = (r: Result, first: RegExp) => {
  const text = textOf(r)
  expect(text.split("\n")[0]).toMatch(first)
  expect(text).not.toContain("{")
  for (const field of FACTS_ONLY) expect(text).not.toContain(field)
  // the cursor once, in the exact next call, which is the last line
  const cursor = r.structuredContent!.cursor as string
  expect(text.split(cursor)).toHaveLength(2)
  // a job still running: first the wait for a line not shown yet
  const wait = r.structuredContent!.status === "running" ? String.raw`manage_process action=wait pid=\d+ pattern=PATTERN from_line=\d+ waits for a new line matching your PATTERN; ` : ""
  expect(text.split("\n").at(-1)).toMatch(new RegExp(String.raw`Next: ${wait}manage_process action=poll pid=\d+ cursor=\S+ reads the kept output from its start; each page ends with the call for the next\]$`))
  // the facts keep every field
  for (const field of ["shown_intervals", "capture_limit_loss_bytes", "not_retained_bytes", "spool"]) expect(r.structuredContent).toHaveProperty(field)
  return text
}

/**
 * The text a model reads of a background job, through the official MCP
 * client: what happened in one sentence, the newest lines, the failure
 * lines not among them, and the exact next call; the record stays in the
 * structured content.
 */
describe("spillway mcp: a job's text", () => {
  let client: Client
  let dir: string
  const call = async (args: Record<string, unknown>, on: Client = client): Promise<Result> =>
    (await on.callTool({ name: "manage_process", arguments: args }, undefined, { timeout: 60_000 })) as unknown as Result

  beforeAll(async () => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mcp-job-text-"))
    client = await connect(dir)
  })
  afterAll(async () => {
    await client.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("start answers with a sentence, what the job printed so far, and the next call", async () => {
    const started = await call({ action: "start", command: "echo booting; sleep 30" })
    expect(started.isError).toBeFalsy()
    const pid = started.structuredContent!.pid as number
    const text = expectPlain(started, new RegExp(`^Started job ${pid}; it is running\\.$`))
    expect(text.length).toBeLessThan(400)
    await call({ action: "signal", pid, signal: "SIGKILL" })
    const killed = await call({ action: "wait", pid, timeout_ms: 10_000 })
    expectPlain(killed, new RegExp(`^Job ${pid} was killed by signal SIGKILL\\.$`))
  }, 30_000)

  it("a running job says how long it has run, and nothing reads as loss while its output settles", async () => {
    const started = await call({ action: "start", command: "for i in $(seq 1 2000); do echo line $i; done; sleep 30" })
    const pid = started.structuredContent!.pid as number
    const waited = await call({ action: "wait", pid, timeout_ms: 10_000, pattern: "^line 2000$", from_line: 1 })
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const polled = await call({ action: "poll", pid })
    const text = expectPlain(polled, new RegExp(`^Job ${pid} is still running after [1-9]\\d* s\\.$`))
    expect(text).toContain("line 2000\n[Lines 1951-2000 of 2000 shown, the newest; ")
    expect(text).not.toContain("not kept")
    expect(polled.structuredContent).toMatchObject({ status: "running", not_retained_bytes: 0 })
    expect(polled.structuredContent!.running_ms).toBeGreaterThanOrEqual(1_000)
    expect(textOf(waited).split("\n")[0]).toMatch(new RegExp(`^Job ${pid} is still running after \\d+ s\\. The wait ended after \\d+ s on line 2000: line 2000`))
    await call({ action: "signal", pid, signal: "SIGKILL" })
  }, 30_000)

  it("a failure line among the newest lines shows once; one before them shows in the failure section", async () => {
    const started = await call({
      action: "start",
      command: "echo 'Error: cannot open config.yml'; seq 1 100; echo 'FAIL src/sum.test.ts > adds'; seq 101 110; exit 1"
    })
    const pid = started.structuredContent!.pid as number
    const done = await call({ action: "wait", pid, timeout_ms: 10_000 })
    const text = expectPlain(done, new RegExp(`^Job ${pid} exited with 1\\.$`))
    expect(text.match(/FAIL src\/sum\.test\.ts > adds/g)).toHaveLength(1)
    expect(text.match(/Error: cannot open config\.yml/g)).toHaveLength(1)
    expect(text).toContain("besides those among the lines above: 1 of 2]\n1: Error: cannot open config.yml\n")
    // the facts still list both, by line number
    expect((done.structuredContent!.failure_lines as Array<{ line: number }>).map((l) => l.line)).toEqual([1, 102])
  }, 30_000)

  it("a job whose server went away says so and why, not an unknown status with no reason", async () => {
    const first = await connect(dir)
    const started = await call({ action: "start", command: "echo started work; sleep 60" }, first)
    const pid = started.structuredContent!.pid as number
    await call({ action: "wait", pid, timeout_ms: 10_000, pattern: "started work", from_line: 1 }, first)
    // a one-shot client: its server ends with it
    await first.close()
    const second = await connect(dir)
    try {
      const polled = await call({ action: "poll", pid }, second)
      expect(polled.isError).toBeFalsy()
      expect(polled.structuredContent).toMatchObject({ status: "unknown" })
      expect(polled.structuredContent!.status_reason).toContain("the server that ran it stopped before the job ended")
      const text = expectPlain(polled, new RegExp(`^Job ${pid}'s end was never seen: the server that ran it stopped before the job ended`))
      expect(text).not.toContain("status: unknown")
    } finally {
      await second.close()
    }
  }, 40_000)
})
