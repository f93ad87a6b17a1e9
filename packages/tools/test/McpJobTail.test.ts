import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { mcpServer, type Result, textOf } from "./mcpStdio.js"

const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
const MiB = 1024 * 1024

/** The content of a page: the code points of its text before the marker, as its facts count them. */
const contentOf = (r: Result) => [...textOf(r)].slice(0, r.structuredContent!.content_chars).join("")

/**
 * Big background jobs through the official MCP client: the end of the
 * output is kept beside its head, both can be read by line, and the dropped
 * middle is stated exactly.
 */
describe("spillway mcp: the end of a big job", () => {
  const server = mcpServer("spillway-mcp-tail-")
  const call = (args: Record<string, unknown>): Promise<Result> => server.call("manage_process", args, 120_000)
  const finished = async (command: string, extra: Record<string, unknown> = {}) => {
    const started = await call({ action: "start", command, ...extra })
    expect(started.isError).toBeFalsy()
    const pid = started.structuredContent!.pid as number
    const done = await call({ action: "wait", pid, timeout_ms: 100_000 })
    expect(done.structuredContent!.status).toBe("exited")
    return { pid, done }
  }

  it("a 15 MB job's final line and exit code are visible, its first and last lines read by number, the middle refused by name", async () => {
    const { pid, done } = await finished("seq 1 2000000; echo FINAL-LINE; exit 3")
    const record = done.structuredContent!
    const total = 14_888_896 + "FINAL-LINE\n".length
    expect(record).toMatchObject({ status: "exited", exit_code: 3, emitted_bytes: total, retained_bytes: 4 * MiB })
    expect(record.tail_status).toBeUndefined()
    // the status view ends with the job's last lines
    const view = textOf(done)
    expect(view).toContain("1999999\n2000000\nFINAL-LINE\n[Lines 1999952-2000001 of 2000001 shown, the newest;")
    const kept = record.kept
    expect(kept.total_lines).toBe(2_000_001)
    expect(kept.ranges).toHaveLength(2)
    // the text says what was not kept, as the record does
    expect(view).toContain(`lines ${kept.dropped.from_line}-${kept.dropped.to_line} (bytes ${kept.dropped.from_byte}-${kept.dropped.to_byte}) were not kept`)
    expect(kept.ranges[1]).toMatchObject({ to_byte: total, to_line: 2_000_001 })
    expect(kept.ranges[1].to_byte - kept.ranges[1].from_byte).toBeLessThanOrEqual(MiB)
    // the 1-based line of `seq 1 2000000`'s output that a byte is in, and where that line starts
    const lineAt = (byte: number) => {
      let at = 0
      for (let n = 1;; n++) {
        const next = at + String(n).length + 1
        if (byte < next) return { line: n, start: at }
        at = next
      }
    }
    const headEnd = lineAt(4 * MiB)
    expect(headEnd.start).toBeLessThan(4 * MiB) // the 4 MiB limit cuts a line: it counts in the head and in what was dropped
    expect(kept.ranges[0]).toEqual({ from_byte: 0, to_byte: 4 * MiB, from_line: 1, to_line: headEnd.line })
    const windowStart = lineAt(kept.ranges[1].from_byte)
    expect(windowStart.start).toBe(kept.ranges[1].from_byte) // the window starts at a line start
    expect(kept.ranges[1].from_line).toBe(windowStart.line)
    expect(kept.dropped).toEqual({ from_byte: 4 * MiB, to_byte: kept.ranges[1].from_byte, from_line: headEnd.line, to_line: windowStart.line - 1 })
    expect(record.not_retained_bytes).toBe(kept.dropped.to_byte - kept.dropped.from_byte)

    const first = await call({ action: "poll", pid, line: 1, lines: 3 })
    expect(first.isError).toBeFalsy()
    expect(textOf(first)).toBe(`1\n2\n3\n[Showing lines 1-3 of 2000001. Next: manage_process action=poll pid=${pid} line=4 lines=3]`)
    expect(first.structuredContent).toMatchObject({ view: "lines", first_line: 1, lines: 3, total_lines: 2_000_001, next_line: 4, content_chars: 6 })
    const last = await call({ action: "poll", pid, line: 2_000_001 })
    expect(textOf(last)).toBe("FINAL-LINE\n[Showing lines 2000001-2000001 of 2000001: the end of the output kept]")
    expect(last.structuredContent!.next_line).toBeUndefined()
    const window = await call({ action: "poll", pid, line: kept.ranges[1].from_line, lines: 2 })
    expect(contentOf(window)).toBe(`${kept.ranges[1].from_line}\n${kept.ranges[1].from_line + 1}\n`)

    const middle = await call({ action: "poll", pid, line: 1_000_000 })
    expect(middle.isError).toBe(true)
    const why = textOf(middle)
    expect(why).toContain("line 1000000 was in the middle of the output")
    expect(why).toContain(`lines 1-${kept.ranges[0].to_line} and lines ${kept.ranges[1].from_line}-2000001`)
    // the head's last page goes on at the window, saying what was dropped
    const lastPage = await call({ action: "poll", pid, offset: kept.ranges[0].to_byte - 8 })
    expect(lastPage.structuredContent).toMatchObject({ truncated: true, next_offset: kept.ranges[1].from_byte })
    expect(lastPage.structuredContent!.note).toContain(`bytes ${kept.dropped.from_byte}-${kept.dropped.to_byte}`)
    // both windows are kept on disk, and nothing else of the job
    const spools = Fs.readdirSync(server.dir).filter((f) => f.startsWith("job-"))
    expect(spools).toHaveLength(2)
    const sizes = spools.map((f) => Fs.statSync(Path.join(server.dir, f)).size).sort((a, b) => a - b)
    expect(sizes).toContain(4 * MiB)
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5 * MiB)
  }, 120_000)

  it("a secret split across the head's limit or the window's start never appears in any view", async () => {
    // the token straddles the head's 4 MiB limit, and a second one the window's first byte
    const line = `deploy token=${TOKEN}\n`
    const headFill = 4 * MiB - 20
    const command = [
      `head -c ${headFill} /dev/zero | tr '\\0' 'a'`,
      `printf '${line}'`,
      `yes b | head -c ${4 * MiB}`,
      `printf '${line}'`,
      `yes c | head -c ${MiB - 20}`,
      "exit 0"
    ].join("; ")
    const { done, pid } = await finished(command)
    const record = done.structuredContent!
    const views: Array<string> = [textOf(done)]
    const kept = record.kept
    for (const offset of [kept.ranges[0].to_byte - 40, kept.ranges[1].from_byte]) {
      views.push(textOf(await call({ action: "poll", pid, offset, limit: 8_000 })))
    }
    views.push(textOf(await call({ action: "poll", pid, line: kept.ranges[0].to_line })))
    views.push(textOf(await call({ action: "poll", pid, line: kept.ranges[1].from_line, lines: 5 })))
    for (const file of Fs.readdirSync(server.dir).filter((f) => f.startsWith("job-"))) views.push(Fs.readFileSync(Path.join(server.dir, file), "latin1"))
    for (const v of views) {
      expect(v).not.toContain(TOKEN.slice(4, 20))
      expect(v).not.toContain(TOKEN.slice(-16))
    }
    // the head's end shows the masked start of the first token line
    expect(views[1]).toContain("deploy token=")
  }, 120_000)

  it("keep_whole keeps the whole output as a body that read_spill and grep_spill reach", async () => {
    const { done } = await finished("seq 1 1500000; echo FINAL-LINE", { keep_whole: true })
    const record = done.structuredContent!
    const total = 10_888_896 + "FINAL-LINE\n".length
    expect(record).toMatchObject({ emitted_bytes: total, retained_bytes: total, not_retained_bytes: 0 })
    expect(record.kept).toBeUndefined()
    const filename = record.filename as string
    expect(textOf(done)).toContain(`the whole output is saved as ${filename}, for read_spill and grep_spill`)
    const read = (await server.client.callTool({ name: "read_spill", arguments: { filename, offset: 1_000_000, limit: 2 } })) as unknown as Result
    expect(textOf(read)).toContain("1000000")
    expect(textOf(read)).toContain("1000001")
    const grep = (await server.client.callTool({ name: "grep_spill", arguments: { filename, pattern: "^FINAL" } })) as unknown as Result
    expect(grep.structuredContent!.matches).toEqual([{ line: 1_500_001, cut: false }])
    expect(textOf(grep)).toBe("1500001: FINAL-LINE")
  }, 120_000)
})
