/**
 * A LangChain.js agent whose tool results can be huge: the middleware keeps
 * each long result and hands the model a bounded, masked projection naming
 * the saved copy, and the read tools page it.
 */
import { spillwayMiddleware, spillwayTools } from "spillway/langchain"
import * as Spillway from "spillway"
import { createAgent, HumanMessage, tool } from "langchain"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { z } from "zod"

type Model = Parameters<typeof createAgent>[0]["model"]

export const ask = async (model: Model, question: string, dir?: string) => {
  await using sw = await Spillway.open({ dir })

  const sh = tool(async ({ command }) => {
    const { stdout } = await promisify(execFile)("sh", ["-c", command], { maxBuffer: 64 * 1024 * 1024 })
    return stdout
  }, { name: "sh", description: "Runs a shell command and returns what it printed.", schema: z.object({ command: z.string() }) })

  const agent = createAgent({
    model,
    tools: [sh, ...spillwayTools(sw.readOnly())],
    middleware: [spillwayMiddleware(sw, { strategy: "tail", ceiling: { maxBytes: 16_000, maxLines: 400 } })]
  })
  // await before returning: the Spillway closes when this function ends
  return await agent.invoke({ messages: [new HumanMessage(question)] })
}
