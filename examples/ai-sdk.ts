/**
 * An AI SDK agent whose tools can print a lot: `spill` gives the model a
 * bounded, masked projection of `sh`'s output while the app keeps it whole,
 * the middleware shrinks `read_file`'s results too, and the read tools page
 * what was cut.
 */
import { spill, spillwayMiddleware, spillwayTools } from "spillway/ai-sdk"
import * as Spillway from "spillway"
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai"
import { execFile } from "node:child_process"
import { readFile } from "node:fs/promises"
import { promisify } from "node:util"
import { z } from "zod"

type Model = Parameters<typeof wrapLanguageModel>[0]["model"]

export const ask = async (model: Model, question: string, dir?: string) => {
  await using sw = await Spillway.open({ dir })

  const sh = spill(sw, tool({
    description: "Runs a shell command and returns what it printed.",
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }) => {
      const { stdout } = await promisify(execFile)("sh", ["-c", command], { maxBuffer: 64 * 1024 * 1024 })
      return stdout
    }
  }), { name: "sh", strategy: "tail", ceiling: { maxBytes: 16_000, maxLines: 400 } })

  // a tool without spill: the middleware shrinks its results
  const readFileTool = tool({
    description: "Reads a text file.",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => readFile(path, "utf8")
  })

  // await before returning: the Spillway closes when this function ends
  return await generateText({
    model: wrapLanguageModel({ model, middleware: spillwayMiddleware(sw, { ceiling: { maxBytes: 16_000 } }) }),
    tools: { sh, read_file: readFileTool, ...spillwayTools(sw.readOnly()) },
    stopWhen: stepCountIs(20),
    prompt: question
  })
}
