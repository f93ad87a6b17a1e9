/**
 * A Mastra agent whose shell tool can print a lot: `spillMastra` wraps the
 * configuration given to `createTool`, so the model reads a bounded, masked
 * projection while the agent's steps keep the whole result, and the read
 * tools page what was cut.
 */
import { Agent } from "@mastra/core/agent"
import { createTool } from "@mastra/core/tools"
import { spillMastra, spillwayMastraTools } from "spillway/ai-sdk"
import * as Spillway from "spillway"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { z } from "zod"

type Model = ConstructorParameters<typeof Agent>[0]["model"]

export const ask = async (model: Model, question: string, dir?: string) => {
  await using sw = await Spillway.open({ dir })

  const sh = createTool(spillMastra(sw, {
    id: "sh",
    description: "Runs a shell command and returns what it printed.",
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }: { command: string }) => {
      const { stdout } = await promisify(execFile)("sh", ["-c", command], { maxBuffer: 64 * 1024 * 1024 })
      return stdout
    }
  }, { strategy: "tail", ceiling: { maxBytes: 16_000, maxLines: 400 } }))

  const agent = new Agent({
    id: "builder",
    name: "builder",
    instructions: "Run what you are asked to and report what failed.",
    model,
    tools: { sh, ...spillwayMastraTools(sw.readOnly()) }
  })
  // await before returning: the Spillway closes when this function ends
  return await agent.generate(question, { maxSteps: 10 })
}
