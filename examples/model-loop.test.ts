import { describe, expect, it } from "@effect/vitest"
import { NodeTools } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { converse, debugBuild, scriptedModel } from "./model-loop.js"

describe("model-loop example", () => {
  it.scopedLive("a scripted model finds a build's error through the tools, then waits for tests in the background", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-loop-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true })))
      const tools = NodeTools.layer({ directory, caller: "per-call" })
      const { answer, turns } = yield* converse("Why does the build fail?").pipe(
        NodeTools.actingFor({ owner: "dev", channel: "conversation-1" }),
        Effect.provide(Layer.merge(scriptedModel(debugBuild), tools))
      )
      expect(turns.map((t) => t.tool)).toEqual(["run_command", "grep_spill", "read_spill", "get_tool_output", "manage_process", "manage_process"])
      expect(turns.every((t) => !t.isFailure)).toBe(true)
      const [run, grep, read, page, start, wait] = turns.map((t) => t.result)

      // 3,002 lines: a preview within the 2,000-character cap, the failure lines up front, the rest saved whole
      expect(run.exit_code).toBe(2)
      expect(run.truncated).toBe(true)
      const [preview, kept] = run.text.split("\n[The whole output is kept")
      expect(preview.length).toBeLessThanOrEqual(2_000)
      // then how to read it all, and the exit status
      expect(kept).toContain(`get_tool_output cursor=${run.cursor}`)
      expect(run.text).toMatch(/\[exit code 2\]$/)
      expect(run.text).toContain("1501: src/ledger.c:42: error: ledger_total undeclared")
      expect(run.text).toContain(`Full output: ${run.filename}]`)
      expect(run.text).toContain(`read_spill filename=${run.filename}`)
      expect(Fs.readFileSync(Path.join(directory, run.filename), "utf8").split("\n")).toHaveLength(3003)

      expect(grep.matches).toEqual([{ line: 1501, cut: false }])
      expect(grep.text).toBe("1501: src/ledger.c:42: error: ledger_total undeclared")
      expect(read.text.split("\n").slice(0, 5)).toEqual([
        "compiling unit 1499",
        "compiling unit 1500",
        "src/ledger.c:42: error: ledger_total undeclared",
        "compiling unit 1501",
        "compiling unit 1502"
      ])
      expect(read.next_offset).toBe(1504)

      // the cursor reads the same saved body on from the preview's head, in pages that say where to go on
      expect(page.truncated).toBe(true)
      expect(page.text).toMatch(/^compiling unit \d+\n/)
      expect(typeof page.cursor).toBe("string")

      expect(start.pid).toBeGreaterThan(0)
      expect(wait.view).toBe("status")
      expect(wait.wait.ended_by).toBe("match")
      expect(wait.wait.match.text).toBe("Tests: 5 passed")
      expect(wait.text).toContain("test 5 ok")

      expect(answer).toBe("The build fails at src/ledger.c:42: error: ledger_total undeclared; the tests pass.")
    }))

  it.scopedLive("a model's tool call that fails comes back to it as a result it can read, and the loop goes on", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-loop-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true })))
      const { answer, turns } = yield* converse("read a file that is not there").pipe(
        Effect.provide(Layer.merge(
          scriptedModel([
            () => ({ tool: "read_spill", params: { filename: "2026-01-01T00-00-00-000Z-abcdef.log" } }),
            (seen) => ({ answer: `could not: ${seen[0]!.result.reason}` })
          ]),
          NodeTools.layer({ directory, caller: { owner: "dev", channel: "conversation-2" } })
        ))
      )
      expect(turns).toHaveLength(1)
      expect(turns[0]!.isFailure).toBe(true)
      expect(turns[0]!.result).toMatchObject({ _tag: "ToolFailure", reason: "NotFound" })
      expect(answer).toBe("could not: NotFound")
    }))
})
