import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ask } from "./ai-sdk.js"
import { lastText, scripted, type Turn } from "./mockModel.js"
import { docsShow } from "./promise-docs.js"

describe("ai-sdk example", () => {
  it("the model sees previews of a long command and a long file, and reads on by name", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-ai-example-"))
    const file = Path.join(dir, "..", `${Path.basename(dir)}-notes.txt`)
    Fs.writeFileSync(file, Array.from({ length: 50_000 }, (_, i) => `note ${i + 1}`).join("\n"))
    try {
      const turns: Array<Turn> = [
        () => ({ tool: "sh", input: { command: "seq 1 200000; echo 'FAILED: 1 test'" } }),
        (p) => ({ tool: "read_file", input: { path: file, _seen: lastText(p, "sh").length } }),
        (p) => ({ tool: "read_spill", input: { filename: /Full output: (\S+)\]/.exec(lastText(p, "read_file"))![1], offset: 25_000, limit: 1 } }),
        () => ({ text: "One test failed." })
      ]
      const model = scripted(turns)
      const result = await ask(model, "Run the tests.", dir)
      expect(result.text).toBe("One test failed.")
      const sh = lastText(model.doGenerateCalls[1]!.prompt, "sh")
      expect(sh).toContain("FAILED: 1 test")
      expect(sh).toMatch(/Full output: sh-\S+\.txt\]/)
      expect(sh.length).toBeLessThan(16_000)
      expect(lastText(model.doGenerateCalls[2]!.prompt, "read_file")).toMatch(/Full output: read_file-\S+\.txt\]/)
      expect(lastText(model.doGenerateCalls[3]!.prompt, "read_spill")).toContain("note 25000")
      expect(String(result.steps[0]!.toolResults[0]!.output).split("\n").length).toBe(200_002)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
      Fs.rmSync(file, { force: true })
    }
  })

  it("is what docs/frameworks.md shows", () => {
    expect(docsShow("ai-sdk.ts")).toBe(true)
  })
})
