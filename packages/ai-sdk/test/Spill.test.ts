import { describe, expect, it } from "@effect/vitest"
import { spill, spillwayTools } from "@spillway/ai-sdk"
import { Spillway } from "@spillway/node"
import { generateText, stepCountIs, tool } from "ai"
import * as Fs from "node:fs"
import { z } from "zod"
import { hugeLog, jsonBytes, lastText, resultsFor, savedName, scripted, secrets } from "./model.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-ai-sdk-")
const owner = { owner: "alice", channel: "chat-1" }

describe("spill (AI SDK)", () => {
  it("the model reads a bounded, masked preview of a 200,000-line result and pages the rest; the app keeps the raw result", async () => {
    const dir = tempDir()
    await using sw = await Spillway.open({ dir, owner })
    const raw = hugeLog()
    const runTests = spill(sw, tool({
      description: "Runs the test suite and returns its log.",
      inputSchema: z.object({}),
      execute: async () => raw
    }), { name: "run_tests", strategy: "middle", ceiling: { maxBytes: 8_000, maxLines: 200 } })
    let name = ""
    const model = scripted([
      () => ({ tool: "run_tests", input: {} }),
      (prompt) => {
        name = savedName(lastText(prompt, "run_tests"))
        return { tool: "grep_spill", input: { filename: name, pattern: "FAILED" } }
      },
      () => ({ tool: "read_spill", input: { filename: name, offset: 149_999, limit: 3 } }),
      () => ({ tool: "read_spill", input: { filename: "../../etc/passwd" } }),
      () => ({ text: "The migration timed out." })
    ])
    const result = await generateText({
      model,
      tools: { run_tests: runTests, ...spillwayTools(sw.readOnly()) },
      prompt: "Run the tests and tell me what failed.",
      stopWhen: stepCountIs(10)
    })
    expect(result.text).toBe("The migration timed out.")

    // the second call's prompt: the preview, bounded, masked, with the last line and the marker
    const second = model.doGenerateCalls[1]!.prompt
    const [preview] = resultsFor(second, "run_tests")
    expect(preview!.type).toBe("text")
    expect(jsonBytes(preview)).toBeLessThanOrEqual(8_000)
    const text = lastText(second, "run_tests")
    expect(text.split("\n").length).toBeLessThanOrEqual(200)
    expect(text).toContain("ok 1 test case passed")
    expect(text).toContain("not ok 200000 FAILED: the database migration timed out")
    expect(text).toMatch(/\[Showing lines 1-\d+, \d+-200000 of 200000\. Full output: run_tests-[0-9a-f-]+\.txt\]/)
    expect(JSON.stringify(second)).not.toContain(secrets.aws.slice(4))
    expect(JSON.stringify(second)).not.toContain(secrets.github.slice(4))

    // the read tools page the rest, masked, from the saved copy
    const third = model.doGenerateCalls[2]!.prompt
    expect(lastText(third, "grep_spill")).toContain("200000: not ok 200000 FAILED: the database migration timed out")
    const fourth = model.doGenerateCalls[3]!.prompt
    const page = lastText(fourth, "read_spill")
    expect(page).toContain("ok 149999 test case passed")
    expect(page).toContain("git remote set-url origin https://")
    expect(page).toContain("ok 150001 test case passed")
    expect(JSON.stringify(fourth)).not.toContain(secrets.github.slice(4))
    // a refusal reaches the model in words, as a tool error
    const refused = resultsFor(model.doGenerateCalls[4]!.prompt, "read_spill").at(-1)!
    expect(refused.type).toBe("error-text")
    expect(JSON.stringify(refused)).toContain("path separator")

    // the application still has the raw result, secrets and all
    const ran = result.steps[0]!.toolResults[0]!
    expect(ran.toolName).toBe("run_tests")
    expect(ran.output).toBe(raw)
    // one saved copy, however often the result was converted
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("run_tests-"))).toEqual([name])
  })

  it("a result within the ceiling reaches the model as the tool sends it, masked when it holds a secret", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner })
    const status = spill(sw, tool({
      description: "Service status.",
      inputSchema: z.object({}),
      execute: async () => ({ healthy: true, replicas: 3 })
    }), { name: "status" })
    const token = spill(sw, tool({
      description: "Prints the deploy configuration.",
      inputSchema: z.object({}),
      execute: async () => `deploy:\n  token: ${secrets.github}\n`
    }), { name: "config" })
    const model = scripted([
      () => ({ tool: "status", input: {} }),
      () => ({ tool: "config", input: {} }),
      () => ({ text: "done" })
    ])
    const result = await generateText({ model, tools: { status, config: token }, prompt: "check", stopWhen: stepCountIs(5) })
    const prompt = model.doGenerateCalls[2]!.prompt
    expect(resultsFor(prompt, "status")).toEqual([{ type: "json", value: { healthy: true, replicas: 3 } }])
    const config = lastText(prompt, "config")
    expect(config).toMatch(/^deploy:\n {2}token: \S+\n$/)
    expect(config).not.toContain(secrets.github.slice(4))
    expect(result.steps[1]!.toolResults[0]!.output).toContain(secrets.github)
  })

  it("the tail strategy keeps the end, and the head strategy the start", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner })
    const lines = Array.from({ length: 5_000 }, (_, i) => `row ${i + 1}`).join("\n")
    const make = (strategy: "head" | "tail") =>
      spill(sw, tool({ description: "rows", inputSchema: z.object({}), execute: async () => lines }), { name: `rows_${strategy}`, strategy, ceiling: { maxLines: 50 } })
    const model = scripted([
      () => ({ tool: "rows_head", input: {} }),
      () => ({ tool: "rows_tail", input: {} }),
      () => ({ text: "ok" })
    ])
    await generateText({ model, tools: { rows_head: make("head"), rows_tail: make("tail") }, prompt: "rows", stopWhen: stepCountIs(5) })
    const prompt = model.doGenerateCalls[2]!.prompt
    const head = lastText(prompt, "rows_head")
    const tail = lastText(prompt, "rows_tail")
    expect(head.startsWith("row 1\n")).toBe(true)
    expect(head).not.toContain("row 5000")
    expect(tail).toContain("row 5000")
    expect(tail).not.toContain("row 1\n")
  })
})
