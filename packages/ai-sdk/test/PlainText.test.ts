/**
 * What a model reads of a coloured log with a progress bar, through the AI
 * SDK's and Mastra's own test doubles: every projection and page of kept
 * output is plain (no escape, no carriage return, a redrawn line in its
 * final state), while the application's result stays as the tool gave it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent } from "@mastra/core/agent"
import { createTool } from "@mastra/core/tools"
import { spill, spillMastra, spillwayMastraTools, spillwayMiddleware, spillwayTools } from "@spillway/ai-sdk"
import { Spillway } from "@spillway/node"
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai"
import { z } from "zod"
import { lastText, savedName, scripted } from "./model.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-plain-")
const owner = { owner: "alice", channel: "chat-plain" }

/** 3,000 coloured lines after a progress bar redrawn with carriage returns, ending in a red failure. */
const colouredLog = (): string => {
  const lines = ["\x1b[1mbuild\x1b[0m starting", "\r[#   ] 10% fetching\r[##  ] 50% fetching\r[####] 100% fetched"]
  for (let i = 1; i <= 3_000; i++) lines.push(`\x1b[32mINFO\x1b[0m step ${i} \x1b]8;;https://example.com/${i}\x07link\x1b]8;;\x07`)
  lines.push("\x1b[31mFAILED\x1b[0m: step 3000 timed out")
  return lines.join("\n") + "\n"
}

/** Whatever a model was sent holds no escape and no carriage return, and a redrawn line only as it ended. */
const expectPlain = (sent: unknown) => {
  const json = JSON.stringify(sent)
  expect(json).not.toContain("\\u001b")
  expect(json).not.toContain("\\r")
  expect(json).not.toContain("\\u0007")
  expect(json).not.toContain("10% fetching")
}

describe("the text a model reads through the AI SDK adapters is plain", () => {
  it("spill: the preview, read_spill and grep_spill; the app keeps the coloured result", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner })
    const raw = colouredLog()
    const build = spill(sw, tool({ description: "Builds.", inputSchema: z.object({}), execute: async () => raw }), {
      name: "build",
      strategy: "middle",
      ceiling: { maxBytes: 4_000, maxLines: 100 }
    })
    let name = ""
    const model = scripted([
      () => ({ tool: "build", input: {} }),
      (prompt) => {
        name = savedName(lastText(prompt, "build"))
        return { tool: "read_spill", input: { filename: name, offset: 3, limit: 5 } }
      },
      () => ({ tool: "grep_spill", input: { filename: name, pattern: "FAILED" } }),
      () => ({ text: "Step 3000 timed out." })
    ])
    const result = await generateText({ model, tools: { build, ...spillwayTools(sw) }, prompt: "Build it.", stopWhen: stepCountIs(6) })
    expect(result.text).toBe("Step 3000 timed out.")
    const last = model.doGenerateCalls.at(-1)!.prompt
    const preview = lastText(last, "build")
    expect(preview).toContain("[####] 100% fetched")
    expect(preview).toContain("FAILED: step 3000 timed out")
    expect(lastText(last, "read_spill")).toContain("INFO step 1 link")
    expect(lastText(last, "grep_spill")).toContain("FAILED: step 3000 timed out")
    for (const call of model.doGenerateCalls) expectPlain(call.prompt)
    // the application's result is the tool's, escapes and all
    expect(result.steps[0]!.toolResults[0]!.output).toBe(raw)
  })

  it("spillwayMiddleware: an unwrapped tool's projection", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner })
    const raw = colouredLog()
    const build = tool({ description: "Builds.", inputSchema: z.object({}), execute: async () => raw })
    const inner = scripted([() => ({ tool: "build", input: {} }), () => ({ text: "done" })])
    const model = wrapLanguageModel({ model: inner, middleware: spillwayMiddleware(sw, { ceiling: { maxBytes: 4_000 } }) })
    const result = await generateText({ model, tools: { build }, prompt: "Build it.", stopWhen: stepCountIs(3) })
    const sent = inner.doGenerateCalls[1]!.prompt
    expect(lastText(sent, "build")).toContain("Full output: build-")
    expectPlain(sent)
    expect(result.steps[0]!.toolResults[0]!.output).toBe(raw)
  })

  it("spillMastra: a Mastra agent's model reads the projection plain", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner })
    const raw = colouredLog()
    const build = createTool(spillMastra(sw, { id: "build", description: "Builds.", inputSchema: z.object({}), execute: async () => raw }, {
      strategy: "middle",
      ceiling: { maxBytes: 4_000, maxLines: 100 }
    }))
    let name = ""
    const model = scripted([
      () => ({ tool: "build", input: {} }),
      (prompt) => {
        name = savedName(lastText(prompt, "build"))
        return { tool: "grep_spill", input: { filename: name, pattern: "INFO step 2$" } }
      },
      () => ({ text: "done" })
    ])
    const agent = new Agent({ id: "builder", name: "builder", instructions: "Build.", model, tools: { build, ...spillwayMastraTools(sw.readOnly()) } })
    await agent.generate("Build it.", { maxSteps: 4 })
    const last = model.doGenerateCalls.at(-1)!.prompt
    expect(lastText(last, "build")).toContain("[####] 100% fetched")
    expect(lastText(last, "grep_spill")).toContain("INFO step 2")
    for (const call of model.doGenerateCalls) expectPlain(call.prompt)
  })
})
