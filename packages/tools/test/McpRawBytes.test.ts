import { describe, expect, it } from "@effect/vitest"
import { Terminal } from "@spillway/core"
import { mcpServer, textOf } from "./mcpStdio.js"

/** Any terminal control: an escape, a carriage return, another control character but a tab or a line break. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/

/** A short coloured output with a progress bar redrawn by carriage returns. */
const SHORT = "printf '\\033[32mINFO\\033[0m ready\\n 10%% [#   ]\\r100%% [####]\\n\\033[1;31mERROR\\033[0m failed\\n'"

/** A long one, cut to a preview: 300 green lines, then the bar and a red failure line. */
const LONG = [
  "for i in $(seq 1 300); do printf '\\033[32mINFO\\033[0m step %d of the build\\n' $i; done",
  "printf ' 10%% [#   ]\\r100%% [####]\\n\\033[1;31mERROR\\033[0m link failed\\n'",
  "exit 1"
].join("; ")

/** Every word in a 256-colour escape sequence of its own: a page cut anywhere is likely to fall inside one. */
const DENSE = `awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "\\033[38;5;208mword%d\\033[0m ", i }'`
const DENSE_WORDS = Array.from({ length: 3000 }, (_, i) => `word${i + 1} `).join("")
const DENSE_EXACT = Array.from({ length: 3000 }, (_, i) => `\x1b[38;5;208mword${i + 1}\x1b[0m `).join("")

/**
 * The exact bytes on request, through the official MCP client against
 * `spillway mcp`: `raw: true` on run_command and on manage_process's poll,
 * wait and grep returns the output as written, escapes and carriage returns
 * included, where the default is plain text; and a job's byte pages never
 * end inside an escape sequence, so the next page starts with it whole.
 */
describe("spillway mcp: the exact bytes of commands and jobs", () => {
  const server = mcpServer("spillway-mcp-raw-")
  const call = server.call

  it("run_command with raw returns the output exactly, whole or as a preview; without it, plain", async () => {
    const plain = await call("run_command", { command: SHORT })
    expect(textOf(plain)).toBe("INFO ready\n100% [####]\nERROR failed\n[exit code 0]")
    const exact = await call("run_command", { command: SHORT, raw: true })
    expect(textOf(exact)).toBe("\x1b[32mINFO\x1b[0m ready\n 10% [#   ]\r100% [####]\n\x1b[1;31mERROR\x1b[0m failed\n[exit code 0]")

    const preview = await call("run_command", { command: LONG })
    expect(preview.structuredContent!.truncated).toBe(true)
    expect(textOf(preview)).not.toMatch(CONTROL)
    const exactPreview = await call("run_command", { command: LONG, raw: true })
    expect(exactPreview.structuredContent!.truncated).toBe(true)
    const text = textOf(exactPreview)
    expect(text).toContain("\x1b[32mINFO\x1b[0m step 1 of the build\n")
    expect(text).toContain(" 10% [#   ]\r100% [####]\n\x1b[1;31mERROR\x1b[0m link failed")
    expect(text).toMatch(/\[exit code 1\]$/)
  })

  it("manage_process poll, wait and grep with raw return the job's exact bytes; without it, plain", async () => {
    const started = await call("manage_process", { action: "start", command: LONG })
    const pid = started.structuredContent!.pid as number
    const waited = await call("manage_process", { action: "wait", pid, timeout_ms: 30_000, raw: true })
    expect(waited.structuredContent!.status).toBe("exited")
    expect(textOf(waited)).toContain(" 10% [#   ]\r100% [####]\n\x1b[1;31mERROR\x1b[0m link failed")
    const waitedPlain = await call("manage_process", { action: "wait", pid, timeout_ms: 0 })
    expect(textOf(waitedPlain)).not.toMatch(CONTROL)
    expect(textOf(waitedPlain)).toContain("100% [####]\nERROR link failed")

    const status = await call("manage_process", { action: "poll", pid, raw: true })
    expect(textOf(status)).toContain("\x1b[1;31mERROR\x1b[0m link failed")
    const cursor = status.structuredContent!.cursor as string
    const page = await call("manage_process", { action: "poll", pid, cursor, limit: 200, raw: true })
    expect(page.structuredContent!.view).toBe("page")
    expect(textOf(page)).toMatch(/^\x1b\[32mINFO\x1b\[0m step 1 of the build\n/)
    const plainPage = await call("manage_process", { action: "poll", pid, cursor, limit: 200 })
    expect(textOf(plainPage)).toMatch(/^INFO step 1 of the build\n/)
    expect(textOf(plainPage)).not.toMatch(CONTROL)

    const found = await call("manage_process", { action: "grep", pid, pattern: "ERROR|####", raw: true })
    expect(textOf(found)).toContain("301:  10% [#   ]\r100% [####]\n302: \x1b[1;31mERROR\x1b[0m link failed")
    const foundPlain = await call("manage_process", { action: "grep", pid, pattern: "ERROR|####" })
    expect(textOf(foundPlain)).toContain("301: 100% [####]\n302: ERROR link failed")
    expect(textOf(foundPlain)).not.toMatch(CONTROL)
  })

  it("a job's byte pages end before an escape sequence, never inside one, plain or raw", async () => {
    const started = await call("manage_process", { action: "start", command: DENSE })
    const pid = started.structuredContent!.pid as number
    const done = await call("manage_process", { action: "wait", pid, timeout_ms: 30_000 })
    expect(done.structuredContent!.status).toBe("exited")
    const first = done.structuredContent!.cursor as string

    const pageThrough = async (raw: boolean) => {
      let shown = ""
      let pages = 0
      for (let next: string | undefined = first; next !== undefined && pages < 200; pages++) {
        const page = await call("manage_process", { action: "poll", pid, cursor: next, limit: 1_000, raw })
        expect(page.isError).toBeFalsy()
        const text = textOf(page)
        // the page itself, before its marker, as content_chars counts it
        const content = [...text].slice(0, page.structuredContent!.content_chars).join("")
        if (raw) expect(Terminal.openSequenceAt(content)).toBe(content.length)
        else expect(text).not.toMatch(CONTROL)
        shown += content
        next = page.structuredContent!.truncated === true ? page.structuredContent!.cursor : undefined
      }
      expect(pages).toBeGreaterThan(10)
      return shown
    }
    expect(await pageThrough(false)).toBe(DENSE_WORDS)
    expect(await pageThrough(true)).toBe(DENSE_EXACT)
  })
})
