import { describe, expect, it } from "@effect/vitest"
import { Agent } from "@mastra/core/agent"
import { createTool } from "@mastra/core/tools"
import { spillMastra, spillwayMastraTools } from "@spillway/ai-sdk"
import { Spillway } from "@spillway/node"
import * as Fs from "node:fs"
import { z } from "zod"
import { hugeLog, jsonBytes, lastText, resultsFor, savedName, scripted, secrets } from "./model.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-mastra-")
const owner = { owner: "alice", channel: "mastra-1" }

describe("spillMastra (Mastra's createTool and Agent)", () => {
  it("a Mastra agent's model reads a bounded, masked preview of a 200,000-line result and pages the rest", async () => {
    const dir = tempDir()
    await using sw = await Spillway.open({ dir, owner })
    const raw = hugeLog()
    let ran = 0
    const runTests = createTool(spillMastra(sw, {
      id: "run_tests",
      description: "Runs the test suite and returns its log.",
      inputSchema: z.object({}),
      execute: async () => {
        ran++
        return raw
      }
    }, { strategy: "middle", ceiling: { maxBytes: 8_000, maxLines: 200 } }))
    let name = ""
    const model = scripted([
      () => ({ tool: "run_tests", input: {} }),
      (prompt) => {
        name = savedName(lastText(prompt, "run_tests"))
        return { tool: "grep_spill", input: { filename: name, pattern: "FAILED" } }
      },
      () => ({ text: "The migration timed out." })
    ])
    const agent = new Agent({
      id: "tester",
      name: "tester",
      instructions: "Run the tests and say what failed.",
      model,
      tools: { run_tests: runTests, ...spillwayMastraTools(sw.readOnly()) }
    })
    const result = await agent.generate("Run the tests.", { maxSteps: 5 })
    expect(result.text).toBe("The migration timed out.")
    expect(ran).toBe(1)

    // what the model was sent: the preview, bounded, masked, with the last line and the marker
    const second = model.doGenerateCalls[1]!.prompt
    const [preview] = resultsFor(second, "run_tests")
    expect(preview!.type).toBe("text")
    expect(jsonBytes(preview)).toBeLessThanOrEqual(8_000)
    const text = lastText(second, "run_tests")
    expect(text).toContain("ok 1 test case passed")
    expect(text).toContain("not ok 200000 FAILED: the database migration timed out")
    expect(text).toMatch(/Full output: run_tests-[0-9a-f-]+\.txt\]/)
    expect(JSON.stringify(model.doGenerateCalls.map((c) => c.prompt))).not.toContain(secrets.aws.slice(4))
    expect(JSON.stringify(model.doGenerateCalls.map((c) => c.prompt))).not.toContain(secrets.github.slice(4))

    // the read tool pages the rest from the saved copy
    expect(lastText(model.doGenerateCalls[2]!.prompt, "grep_spill")).toContain("200000: not ok 200000 FAILED")
    // the agent's own record keeps the raw result
    const kept = result.steps.flatMap((s) => s.toolResults).find((r) => r.payload.toolName === "run_tests")
    expect(kept?.payload.result).toBe(raw)
    // one saved copy, however often Mastra converted the result
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("run_tests-"))).toEqual([name])
  })

  it("a small result reaches the model as Mastra would send it; a secret in it is masked", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner })
    const status = createTool(spillMastra(sw, {
      id: "status",
      description: "Service status.",
      inputSchema: z.object({}),
      execute: async () => ({ healthy: true, replicas: 3 })
    }))
    const config = createTool(spillMastra(sw, {
      id: "config",
      description: "Prints the deploy configuration.",
      inputSchema: z.object({}),
      execute: async () => `deploy:\n  token: ${secrets.github}\n`
    }))
    const model = scripted([
      () => ({ tool: "status", input: {} }),
      () => ({ tool: "config", input: {} }),
      () => ({ text: "done" })
    ])
    const agent = new Agent({ id: "ops", name: "ops", instructions: "Check.", model, tools: { status, config } })
    await agent.generate("check", { maxSteps: 5 })
    const prompt = model.doGenerateCalls[2]!.prompt
    expect(resultsFor(prompt, "status")).toEqual([{ type: "json", value: { healthy: true, replicas: 3 } }])
    const shown = lastText(prompt, "config")
    expect(shown).toMatch(/^deploy:\n {2}token: \S+\n$/)
    expect(shown).not.toContain(secrets.github.slice(4))
  })
})
