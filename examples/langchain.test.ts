import { describe, expect, it } from "@effect/vitest"
import { fakeModel } from "@langchain/core/testing"
import { AIMessage, ToolMessage } from "langchain"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ask } from "./langchain.js"
import { docsShow } from "./promise-docs.js"

const call = (name: string, args: Record<string, unknown>, id: string) => new AIMessage({ content: "", tool_calls: [{ name, args, id, type: "tool_call" }] })

describe("langchain example", () => {
  it("the agent's model sees the tail of a long command and reads on by name", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-lc-example-"))
    try {
      let name = ""
      const model = fakeModel()
        .respond(call("sh", { command: "seq 1 200000; echo 'FAILED: 1 test'" }, "s1"))
        .respond((messages) => {
          const sh = messages.find((m) => ToolMessage.isInstance(m) && m.name === "sh")!
          name = /Full output: (\S+)\]/.exec(String(sh.content))![1]!
          return call("read_spill", { filename: name, offset: 100_000, limit: 1 }, "r1")
        })
        .respond(new AIMessage("One test failed."))
      const state = await ask(model, "Run the tests.", dir)
      expect(state.messages.at(-1)!.content).toBe("One test failed.")
      const sh = String(model.calls[1]!.messages.find((m) => ToolMessage.isInstance(m) && m.name === "sh")!.content)
      expect(sh).toContain("FAILED: 1 test")
      expect(sh).not.toContain("\n1\n2\n3\n")
      expect(sh.length).toBeLessThan(16_000)
      const page = String(model.calls[2]!.messages.filter((m) => ToolMessage.isInstance(m) && m.name === "read_spill").at(-1)!.content)
      expect(page).toContain("100000")
      expect(Fs.readdirSync(dir)).toContain(name)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("is what docs/frameworks.md shows", () => {
    expect(docsShow("langchain.ts")).toBe(true)
  })
})
