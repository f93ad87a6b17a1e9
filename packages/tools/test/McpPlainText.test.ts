import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { bin, mcpServer, textOf } from "./mcpStdio.js"

/** Any terminal control: an escape, a carriage return, another control character but a tab or a line break. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/

/**
 * A coloured build log with a progress bar redrawn by carriage returns
 * (line 301), long enough to be cut: 300 green INFO lines, the bar, a red
 * failure line and a title set by OSC, as a test runner forced to colour
 * prints them.
 */
const COLOURED = [
  "for i in $(seq 1 300); do printf '\\033[32mINFO\\033[0m step %d of the build\\n' $i; done",
  "printf ' 10%% [#   ]\\r 50%% [##  ]\\r100%% [####]\\n'",
  "printf '\\033]0;building\\007\\033[1;31mERROR\\033[0m link failed: undefined symbol main\\n'",
  "exit 1"
].join("; ")

/**
 * What a model reads of terminal output, through the official MCP client
 * against `spillway mcp`: previews, pages, search results and job views
 * hold no escape sequence or carriage return, a redrawn line only its final
 * frame, and line numbers agree with the kept body, which `raw` reads back
 * exactly.
 */
describe("spillway mcp: terminal output as plain text", () => {
  const server = mcpServer("spillway-mcp-plain-")
  const call = server.call

  it("a coloured, redrawn output's preview, pages and search results hold no escape or carriage return, only the final frame", async () => {
    const run = await call("run_command", { command: COLOURED })
    expect(run.isError).toBeFalsy()
    const preview = textOf(run)
    expect(preview).not.toMatch(CONTROL)
    expect(preview).toContain("ERROR link failed: undefined symbol main")
    expect(preview).toContain("INFO step 1 of the build")
    expect(preview).toContain("[exit code 1]")
    const { filename, cursor, truncated } = run.structuredContent!
    expect(truncated).toBe(true)

    // every page of the kept output, from the start, plain
    let pages = ""
    let next: string | undefined = cursor
    for (let n = 0; next !== undefined && n < 20; n++) {
      const page = await call("get_tool_output", { cursor: next })
      expect(page.isError).toBeFalsy()
      const text = textOf(page)
      expect(text).not.toMatch(CONTROL)
      pages += text
      next = page.structuredContent!.truncated === true ? page.structuredContent!.cursor : undefined
    }
    expect(next).toBeUndefined()
    expect(pages).toContain("INFO step 300 of the build\n100% [####]\nERROR link failed")
    expect(pages).not.toContain(" 50% [##  ]")

    // line numbers agree: line 301 is the bar, read and found by that number
    const line = await call("read_spill", { filename, offset: 301, limit: 2 })
    expect(textOf(line)).toMatch(/^100% \[####\]\nERROR link failed: undefined symbol main\n/)
    // content_chars counts the page as the text shows it: the marker follows it
    const shownLines = "100% [####]\nERROR link failed: undefined symbol main\n"
    expect(line.structuredContent!.content_chars).toBe(shownLines.length)
    expect(textOf(line).slice(shownLines.length)).toMatch(/^\[Showing lines 301-302 of/)
    const found = await call("grep_spill", { filename, pattern: "ERROR|####" })
    expect(textOf(found)).toBe("301: 100% [####]\n302: ERROR link failed: undefined symbol main")
    expect(found.structuredContent!.matches).toEqual([{ line: 301, cut: false }, { line: 302, cut: false }])

    // the kept body is exact: raw reads it back as the command wrote it
    const exact = await call("read_spill", { filename, offset: 301, limit: 1, raw: true })
    expect(textOf(exact)).toMatch(/^ 10% \[# {3}\]\r 50% \[## {2}\]\r100% \[####\]\n/)
    const exactPage = await call("get_tool_output", { cursor, raw: true })
    expect(textOf(exactPage)).toContain("\x1b[32mINFO\x1b[0m step 1 of the build\n")
    const exactFound = await call("grep_spill", { filename, pattern: "ERROR", raw: true })
    expect(textOf(exactFound)).toContain("302: \x1b]0;building\x07\x1b[1;31mERROR\x1b[0m link failed")
  })

  it("pages of a densely coloured output end before an escape sequence, never inside one", async () => {
    const run = await call("run_command", { command: `awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "\\033[38;5;208mword%d\\033[0m ", i }'` })
    let shown = ""
    let pages = 0
    for (let next: string | undefined = run.structuredContent!.cursor; next !== undefined; pages++) {
      const page = await call("get_tool_output", { cursor: next })
      const text = textOf(page)
      expect(text).not.toMatch(CONTROL)
      // the page itself, before its marker, as content_chars counts it
      shown += [...text].slice(0, page.structuredContent!.content_chars).join("")
      next = page.structuredContent!.truncated === true ? page.structuredContent!.cursor : undefined
    }
    expect(pages).toBeGreaterThan(3)
    expect(shown).toBe(Array.from({ length: 3000 }, (_, i) => `word${i + 1} `).join(""))
  })

  it("a job's views hold no escape or carriage return", async () => {
    const started = await call("manage_process", { action: "start", command: COLOURED })
    expect(started.isError).toBeFalsy()
    expect(textOf(started)).not.toMatch(CONTROL)
    const pid = started.structuredContent!.pid as number
    const done = await call("manage_process", { action: "wait", pid, timeout_ms: 30_000 })
    expect(done.structuredContent!.status).toBe("exited")
    const view = textOf(done)
    expect(view).not.toMatch(CONTROL)
    expect(view).toContain("100% [####]\nERROR link failed: undefined symbol main")
    const lines = await call("manage_process", { action: "poll", pid, line: 300, lines: 3 })
    expect(textOf(lines)).not.toMatch(CONTROL)
    expect(textOf(lines)).toContain("INFO step 300 of the build\n100% [####]\nERROR link failed")
    const shownLines = "INFO step 300 of the build\n100% [####]\nERROR link failed: undefined symbol main\n"
    expect(lines.structuredContent!.content_chars).toBe(shownLines.length)
    expect(textOf(lines).slice(0, shownLines.length)).toBe(shownLines)
    const found = await call("manage_process", { action: "grep", pid, pattern: "ERROR" })
    expect(textOf(found)).not.toMatch(CONTROL)
    expect(textOf(found)).toContain("302: ERROR link failed")
  })
})

describe("spillway run: terminal output to a pipe", () => {
  it("prints a preview without escapes or redrawn frames, and keeps the output exact in the saved file", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-run-plain-"))
    try {
      const env = { PATH: process.env.PATH ?? "", HOME: dir, SPILLWAY_OUTPUT_DIR: dir, SPILLWAY_OWNER: "tester" }
      const r = spawnSync(process.execPath, [bin, "run", "-c", COLOURED], { env, encoding: "utf8", timeout: 30_000 })
      expect(r.status).toBe(1)
      expect(r.stdout).not.toMatch(CONTROL)
      expect(r.stdout).toContain("ERROR link failed: undefined symbol main")
      expect(r.stdout).not.toContain(" 50% [##  ]")
      const name = /spillway read (\S+)/.exec(r.stdout)?.[1]
      expect(name, r.stdout).toBeDefined()
      const read = spawnSync(process.execPath, [bin, "read", name!, "--offset", "301", "--limit", "1"], { env, encoding: "utf8", timeout: 30_000 })
      expect(read.stdout).toBe(" 10% [#   ]\r 50% [##  ]\r100% [####]\n")
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
