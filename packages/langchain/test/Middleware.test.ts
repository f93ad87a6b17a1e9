import { describe, expect, it } from "@effect/vitest"
import { fakeModel } from "@langchain/core/testing"
import { spillwayMiddleware, spillwayTools } from "@spillway/langchain"
import { Spillway } from "@spillway/node"
import { AIMessage, type BaseMessage, createAgent, HumanMessage, tool, ToolMessage } from "langchain"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import { z } from "zod"

const made: Array<string> = []
afterAll(() => made.forEach((dir) => Fs.rmSync(dir, { recursive: true, force: true })))
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-langchain-"))
  made.push(dir)
  return dir
}

const secrets = { aws: "AKIA" + "Z3MHQ7XK2P4L9WTR", github: "ghp_" + "R8kT2mQ9vX4bN7pL1sW6yH3jD5fG0aZcE2uK" }

/** 200,000 lines of a test log, the secrets at lines 1,000 and 150,000, a failure on the last line. */
const hugeLog = (): string => {
  const lines = new Array<string>(200_000)
  for (let i = 0; i < lines.length; i++) lines[i] = `ok ${i + 1} test case passed`
  lines[999] = `export AWS_ACCESS_KEY_ID=${secrets.aws}`
  lines[149_999] = `git remote set-url origin https://${secrets.github}@github.com/acme/app.git`
  lines[199_999] = "not ok 200000 FAILED: the database migration timed out"
  return lines.join("\n") + "\n"
}

/** The content of the last tool message a model was sent for a tool. */
const lastResult = (messages: ReadonlyArray<BaseMessage>, name: string): string => {
  const found = messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.name === name).at(-1)
  if (found === undefined) throw new Error(`no ${name} result among ${messages.length} messages`)
  return typeof found.content === "string" ? found.content : JSON.stringify(found.content)
}

const savedName = (text: string) => /Full output: ([A-Za-z0-9._-]+)\]/.exec(text)?.[1] ?? "(none)"

const call = (name: string, args: Record<string, unknown>, id: string) => new AIMessage({ content: "", tool_calls: [{ name, args, id, type: "tool_call" }] })

describe("spillwayMiddleware (LangChain)", () => {
  it("an agent's model gets a bounded, masked preview of a 200,000-line result, then pages and searches the rest", async () => {
    const dir = tempDir()
    await using sw = await Spillway.open({ dir, owner: { owner: "alice", channel: "thread-1" } })
    const runTests = tool(async () => hugeLog(), { name: "run_tests", description: "Runs the test suite.", schema: z.object({}) })
    let name = ""
    const model = fakeModel()
      .respond(call("run_tests", {}, "t1"))
      .respond((messages) => {
        name = savedName(lastResult(messages, "run_tests"))
        return call("grep_spill", { filename: name, pattern: "FAILED" }, "t2")
      })
      .respond(() => call("read_spill", { filename: name, offset: 1000, limit: 1 }, "t3"))
      .respond(() => call("get_tool_output", { cursor: "forged" }, "t4"))
      .respond(new AIMessage("The database migration timed out."))
    const agent = createAgent({
      model,
      tools: [runTests, ...spillwayTools(sw.readOnly())],
      middleware: [spillwayMiddleware(sw, { strategy: "middle", ceiling: { maxBytes: 8_000, maxLines: 200 } })]
    })
    const state = await agent.invoke({ messages: [new HumanMessage("Run the tests and say what failed.")] })
    expect(state.messages.at(-1)!.content).toBe("The database migration timed out.")

    // the second call: the preview, bounded and masked, with the last line and the marker
    const second = model.calls[1]!.messages
    const preview = lastResult(second, "run_tests")
    expect(new TextEncoder().encode(JSON.stringify({ role: "tool", tool_call_id: "t1", content: preview })).length).toBeLessThanOrEqual(8_000)
    expect(preview.split("\n").length).toBeLessThanOrEqual(200)
    expect(preview).toContain("not ok 200000 FAILED: the database migration timed out")
    expect(preview).toMatch(/\[Showing lines 1-\d+, \d+-200000 of 200000\. Full output: run_tests-[0-9a-f-]+\.txt\]/)
    const sent = JSON.stringify(model.calls.map((c) => c.messages))
    expect(sent).not.toContain(secrets.aws.slice(4))
    expect(sent).not.toContain(secrets.github.slice(4))
    // the read tools reach the saved copy, masked
    expect(lastResult(model.calls[2]!.messages, "grep_spill")).toContain("200000: not ok 200000 FAILED")
    const page = lastResult(model.calls[3]!.messages, "read_spill")
    expect(page).toContain("export AWS_ACCESS_KEY_ID=")
    expect(page).toContain(`offset=1001`)
    // a forged cursor is refused in words the model reads
    expect(lastResult(model.calls[4]!.messages, "get_tool_output")).toContain("not a cursor get_tool_output can read")
    const refused = state.messages.find((m) => ToolMessage.isInstance(m) && m.name === "get_tool_output") as ToolMessage
    expect(refused.status).toBe("error")
    // kept once; the message in the agent's state says what was kept
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("run_tests-"))).toEqual([name])
    const kept = state.messages.find((m) => ToolMessage.isInstance(m) && m.name === "run_tests")!
    expect(kept.response_metadata.spillway).toMatchObject({ truncated: true, total_lines: 200_000, saved: name, complete: true })
  })

  it("a short result passes unchanged, and one with a secret is masked", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner: { owner: "alice", channel: "thread-2" } })
    const version = tool(async () => "1.2.3", { name: "version", description: "Version.", schema: z.object({}) })
    const config = tool(async () => `token: ${secrets.github}`, { name: "config", description: "Config.", schema: z.object({}) })
    const model = fakeModel()
      .respond(call("version", {}, "v1"))
      .respond(call("config", {}, "c1"))
      .respond(new AIMessage("ok"))
    const agent = createAgent({ model, tools: [version, config], middleware: [spillwayMiddleware(sw)] })
    await agent.invoke({ messages: [new HumanMessage("check")] })
    const last = model.calls[2]!.messages
    expect(lastResult(last, "version")).toBe("1.2.3")
    expect(lastResult(last, "config")).toMatch(/^token: \S+$/)
    expect(lastResult(last, "config")).not.toContain(secrets.github.slice(4))
  })
})
