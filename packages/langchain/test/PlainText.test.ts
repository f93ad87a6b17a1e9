/**
 * What a LangChain agent's model reads of a coloured log with a progress
 * bar, through LangChain's own fake model: the middleware's projection and
 * the read tools' pages are plain (no escape, no carriage return, a redrawn
 * line in its final state); the saved copy keeps the bytes.
 */
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
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-langchain-plain-"))
  made.push(dir)
  return dir
}

/** 3,000 coloured lines after a progress bar redrawn with carriage returns, ending in a red failure. */
const colouredLog = (): string => {
  const lines = ["\x1b[1mbuild\x1b[0m starting", "\r[#   ] 10% fetching\r[##  ] 50% fetching\r[####] 100% fetched"]
  for (let i = 1; i <= 3_000; i++) lines.push(`\x1b[32mINFO\x1b[0m step ${i} \x1b]8;;https://example.com/${i}\x07link\x1b]8;;\x07`)
  lines.push("\x1b[31mFAILED\x1b[0m: step 3000 timed out")
  return lines.join("\n") + "\n"
}

const lastResult = (messages: ReadonlyArray<BaseMessage>, name: string): string => {
  const found = messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.name === name).at(-1)
  if (found === undefined) throw new Error(`no ${name} result among ${messages.length} messages`)
  return typeof found.content === "string" ? found.content : JSON.stringify(found.content)
}

const call = (name: string, args: Record<string, unknown>, id: string) => new AIMessage({ content: "", tool_calls: [{ name, args, id, type: "tool_call" }] })

describe("the text a LangChain agent's model reads is plain", () => {
  it("the middleware's projection, read_spill and grep_spill: no escape, no carriage return, the bar's last frame", async () => {
    const dir = tempDir()
    await using sw = await Spillway.open({ dir, owner: { owner: "alice", channel: "thread-plain" } })
    const build = tool(async () => colouredLog(), { name: "build", description: "Builds.", schema: z.object({}) })
    let name = ""
    const model = fakeModel()
      .respond(call("build", {}, "b1"))
      .respond((messages) => {
        name = /Full output: ([A-Za-z0-9._-]+)\]/.exec(lastResult(messages, "build"))?.[1] ?? "(none)"
        return call("read_spill", { filename: name, offset: 1, limit: 5 }, "b2")
      })
      .respond(() => call("grep_spill", { filename: name, pattern: "FAILED" }, "b3"))
      .respond(new AIMessage("Step 3000 timed out."))
    const agent = createAgent({
      model,
      tools: [build, ...spillwayTools(sw.readOnly())],
      middleware: [spillwayMiddleware(sw, { strategy: "middle", ceiling: { maxBytes: 4_000, maxLines: 100 } })]
    })
    await agent.invoke({ messages: [new HumanMessage("Build it.")] })
    const last = model.calls.at(-1)!.messages
    expect(lastResult(last, "build")).toContain("[####] 100% fetched")
    expect(lastResult(last, "build")).toContain("FAILED: step 3000 timed out")
    expect(lastResult(last, "read_spill")).toContain("INFO step 1 link")
    expect(lastResult(last, "grep_spill")).toContain("FAILED: step 3000 timed out")
    const sent = JSON.stringify(model.calls.map((c) => c.messages))
    expect(sent).not.toContain("\\u001b")
    expect(sent).not.toContain("\\r")
    expect(sent).not.toContain("\\u0007")
    expect(sent).not.toContain("10% fetching")
    // the saved copy keeps the bytes
    expect(Fs.readFileSync(Path.join(dir, name), "utf8")).toContain("\x1b[32mINFO\x1b[0m step 1 ")
  })
})
