import { describe, expect, it } from "@effect/vitest"
import { NodeMcp } from "@spillway/node"
import { Tools } from "@spillway/tools"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const caller = { owner: "agent", channel: "run-1" }
const SECRET = "sk-proj-Q7vT2mX9pL4kR8wN3zB6yH1cF5gJ0dSa"

/** Bodies in a directory: what a user sees there, without the hidden manifests and key. */
const bodies = (directory: string) => Fs.readdirSync(directory).filter((f) => !f.startsWith("."))

describe("run_command keeps one body that every view reads", () => {
  it.scopedLive("one long output is one body on disk; read_spill, grep_spill and get_tool_output all read it, its secret masked", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-onebody-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true })))
      const context = yield* Layer.build(NodeMcp.layerFull({ directory, caller }))
      const toolkit = yield* Effect.provide(Tools.FullToolkit, context)
      // about 4.5 MiB, a secret across the 4 MiB mark where an evidence copy used to be cut
      const line = "x".repeat(99) + "\n"
      const before = Math.floor((4 * 1024 * 1024 - 20) / line.length)
      const script = `yes ${line.slice(0, 99)} | head -n ${before}; printf '%s' 'padding-'; echo 'key=${SECRET} end'; yes ${line.slice(0, 99)} | head -n 5000`
      const run = yield* toolkit.handle("run_command", { command: script })
      const kept = run.result as { readonly filename: string; readonly cursor: string; readonly truncated: boolean }
      expect(kept.truncated).toBe(true)
      expect(bodies(directory)).toEqual([kept.filename])
      const read = (yield* toolkit.handle("read_spill", { filename: kept.filename, offset: before + 1, limit: 1 })).result as { readonly text: string }
      expect(read.text).toContain("padding-key=")
      const grep = (yield* toolkit.handle("grep_spill", { filename: kept.filename, pattern: "padding" })).result as { readonly text: string }
      expect(grep.text).toContain(`${before + 1}: padding-key=`)
      // page by cursor from the start up to past the secret, as get_tool_output serves the same body
      let cursor: string | undefined = kept.cursor
      let window = ""
      let seen = ""
      for (let pages = 0; pages < 2000 && cursor !== undefined && seen === ""; pages++) {
        const page = (yield* toolkit.handle("get_tool_output", { cursor })).result as { readonly text: string; readonly cursor?: string }
        // two pages at a time, so a secret across a page boundary is seen whole
        window = (window + page.text).slice(-(page.text.length + 200))
        if (window.includes(" end\n")) seen = window
        cursor = page.cursor
      }
      for (const view of [read.text, grep.text, seen]) {
        expect(view).not.toContain(SECRET.slice(0, 12))
        expect(view).not.toContain(SECRET.slice(-12))
      }
      expect(seen).toContain("key=" + "*".repeat(SECRET.length) + " end")
    }), 120_000)
})
