import { describe, expect, it } from "@effect/vitest"
import { spillwayMiddleware, spillwayTools } from "@spillway/ai-sdk"
import { Spillway } from "@spillway/node"
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai"
import * as Fs from "node:fs"
import { z } from "zod"
import { hugeLog, jsonBytes, lastText, resultsFor, savedName, scripted, secrets } from "./model.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-middleware-")

describe("spillwayMiddleware (AI SDK)", () => {
  it("shrinks an unwrapped tool's 200,000-line result in every prompt, keeps it once, and the read tools page it", async () => {
    const dir = tempDir()
    await using sw = await Spillway.open({ dir, owner: { owner: "alice", channel: "chat-2" } })
    const raw = hugeLog()
    // a plain AI SDK tool: nothing of Spillway in it
    const build = tool({ description: "Builds the app.", inputSchema: z.object({ target: z.string() }), execute: async () => raw })
    const small = tool({ description: "Version.", inputSchema: z.object({}), execute: async () => ({ version: "1.2.3" }) })
    let name = ""
    const inner = scripted([
      () => ({ tool: "build", input: { target: "all" } }),
      (prompt) => {
        name = savedName(lastText(prompt, "build"))
        return { tool: "read_spill", input: { filename: name, offset: 999, limit: 2 } }
      },
      () => ({ tool: "version", input: {} }),
      () => ({ tool: "grep_spill", input: { filename: name, pattern: "not ok" } }),
      () => ({ text: "Line 200000 failed." })
    ])
    const model = wrapLanguageModel({ model: inner, middleware: spillwayMiddleware(sw, { ceiling: { maxBytes: 6_000 } }) })
    const result = await generateText({ model, tools: { build, version: small, ...spillwayTools(sw) }, prompt: "Build it.", stopWhen: stepCountIs(10) })
    expect(result.text).toBe("Line 200000 failed.")

    // every call after the first holds the shrunk result, never the raw one
    for (const call of inner.doGenerateCalls.slice(1)) {
      const [output] = resultsFor(call.prompt, "build")
      expect(output!.type).toBe("text")
      expect(jsonBytes(output)).toBeLessThanOrEqual(6_000)
      const text = lastText(call.prompt, "build")
      expect(text).toContain("not ok 200000 FAILED: the database migration timed out")
      expect(text).toContain(`Full output: ${name}`)
      expect(JSON.stringify(call.prompt)).not.toContain(secrets.aws.slice(4))
      expect(JSON.stringify(call.prompt)).not.toContain(secrets.github.slice(4))
    }
    // a small result passes unchanged
    expect(resultsFor(inner.doGenerateCalls[3]!.prompt, "version")).toEqual([{ type: "json", value: { version: "1.2.3" } }])
    // the saved copy pages, masked
    const page = lastText(inner.doGenerateCalls[2]!.prompt, "read_spill")
    expect(page).toContain("export AWS_ACCESS_KEY_ID=")
    expect(page).toContain("ok 999 test case passed")
    expect(page).toContain(`Next: read_spill filename=${name} offset=1001`)
    expect(lastText(inner.doGenerateCalls[4]!.prompt, "grep_spill")).toContain("200000: not ok 200000")
    // kept once, though four prompts carried it
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("build-"))).toEqual([name])
    // the application's steps hold the raw output
    expect(result.steps[0]!.toolResults[0]!.output).toBe(raw)
  })
})
