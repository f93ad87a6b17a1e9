import { describe, expect, it } from "@effect/vitest"
import { mcpServer, type Result, textOf } from "./mcpStdio.js"

/**
 * `manage_process action=wait` with a pattern through the official MCP
 * client: it waits for a line printed from now on, `from_line` counts the
 * lines already there, and the result names the line that matched and the
 * line to go on from.
 */
describe("spillway mcp: a wait on a pattern means from now on", () => {
  const server = mcpServer("spillway-mcp-wait-")
  const job = (args: Record<string, unknown>): Promise<Result> => server.call("manage_process", args)
  const start = async (command: string) => {
    const started = await job({ action: "start", command })
    expect(started.isError).toBeFalsy()
    return started.structuredContent!.pid as number
  }

  it("describes from_line in the tool's schema and its description", async () => {
    const { tools } = await server.client.listTools()
    const tool = tools.find((t) => t.name === "manage_process")!
    const fromLine = (tool.inputSchema.properties as Record<string, { type?: string; description?: string }>).from_line
    expect(fromLine.type).toBe("integer")
    expect(fromLine.description).toContain("absent: only lines printed after the call")
    expect(tool.description).toContain("a pattern matches only lines printed after the call")
    expect(tool.description).toContain("from_line: 1")
  })

  it("a pattern printed before the call does not end the wait until a new line matches", async () => {
    const pid = await start("echo compiled ok; sleep 2; echo compiled ok; sleep 30")
    const first = await job({ action: "wait", pid, timeout_ms: 10_000, pattern: "compiled", from_line: 1 })
    expect(first.structuredContent!.wait).toMatchObject({ ended_by: "match", match: { line: 1, text: "compiled ok" }, from_line: 1, next_line: 2 })
    const began = Date.now()
    const next = await job({ action: "wait", pid, timeout_ms: 10_000, pattern: "compiled" })
    expect(Date.now() - began).toBeGreaterThanOrEqual(700)
    expect(next.isError).toBeFalsy()
    expect(next.structuredContent!.wait).toMatchObject({ ended_by: "match", match: { line: 2, text: "compiled ok" }, from_line: 2, next_line: 3 })
    expect(textOf(next)).toContain("compiled ok")
    await job({ action: "signal", pid, signal: "SIGKILL" })
  }, 30_000)

  it("a wait that timed out goes on from its next_line, so a line printed between two waits is not missed", async () => {
    const pid = await start("echo ready; sleep 1; echo NEEDLE; sleep 30")
    await job({ action: "wait", pid, timeout_ms: 10_000, pattern: "ready", from_line: 1 })
    const none = await job({ action: "wait", pid, timeout_ms: 100, pattern: "ready|NEEDLE" })
    expect(none.structuredContent!.wait).toMatchObject({ ended_by: "timeout", from_line: 2, next_line: 2 })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const missed = await job({ action: "wait", pid, timeout_ms: 100, pattern: "NEEDLE" })
    expect(missed.structuredContent!.wait.ended_by).toBe("timeout")
    const on = await job({ action: "wait", pid, timeout_ms: 10_000, pattern: "NEEDLE", from_line: none.structuredContent!.wait.next_line })
    expect(on.structuredContent!.wait).toMatchObject({ ended_by: "match", match: { line: 2, text: "NEEDLE" }, next_line: 3 })
    await job({ action: "signal", pid, signal: "SIGKILL" })
  }, 30_000)

  it("refuses a from_line below 1 or without a pattern, saying what to do", async () => {
    const pid = await start("echo x; sleep 30")
    const zero = await job({ action: "wait", pid, timeout_ms: 10, pattern: "x", from_line: 0 })
    expect(zero.isError).toBe(true)
    const alone = await job({ action: "wait", pid, timeout_ms: 10, from_line: 1 })
    expect(alone.isError).toBe(true)
    expect(textOf(alone)).toContain("give a pattern with it")
    await job({ action: "signal", pid, signal: "SIGKILL" })
  }, 30_000)
})
