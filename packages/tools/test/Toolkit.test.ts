import { describe, expect, it } from "@effect/vitest"
import { ProcessView } from "@spillway/core"
import { NodeMcp } from "@spillway/node"
import { Handlers, Tools } from "@spillway/tools"
import { Context, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const caller = { owner: "agent", channel: "run-1" }

describe("toolkits", () => {
  it.scopedLive("serve an in-process agent through @effect/ai's toolkit handle", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-toolkit-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true })))
      const context = yield* Layer.build(NodeMcp.layerFull({ directory, caller }))
      const toolkit = yield* Effect.provide(Tools.FullToolkit, context)
      const run = yield* toolkit.handle("run_command", { command: "seq 1 3000" })
      expect(run.isFailure).toBe(false)
      const kept = run.result as { readonly filename: string; readonly truncated: boolean; readonly text: string }
      expect(kept.truncated).toBe(true)
      expect(kept.text).toContain(`Full output: ${kept.filename}]`)
      const grep = yield* toolkit.handle("grep_spill", { filename: kept.filename, pattern: "^2999$" })
      expect((grep.result as { readonly text: string }).text).toBe("2999: 2999")
      // the encoded result is what a model gets back from an @effect/ai agent loop
      expect(grep.encodedResult).toMatchObject({ more: false, total_lines: 3000 })
      const missing = yield* toolkit.handle("read_spill", { filename: "2026-01-01T00-00-00-000Z-abcdef.log" })
      expect(missing.isFailure).toBe(true)
      expect(missing.result).toBeInstanceOf(Tools.ToolFailure)
    }))

  it.scopedLive("tell the model the tool's words, even where the host's context holds the library's", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-toolkit-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true })))
      const context = yield* Layer.build(NodeMcp.layerFull({ directory, caller }))
      const toolkit = yield* Effect.provide(Tools.FullToolkit, context)
      // a host built over NodeProcess.layer has the library's words in its context
      const inLibraryWords = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provideService(effect, ProcessView.CurrentHints, ProcessView.libraryHints)
      const started = yield* inLibraryWords(toolkit.handle("manage_process", { action: "start", command: "seq 1 3000" }))
      const pid = (started.result as { readonly pid: number }).pid
      const done = yield* inLibraryWords(toolkit.handle("manage_process", { action: "wait", pid, timeout_ms: 20_000 }))
      const text = (done.result as { readonly text: string }).text
      expect(text).toContain(`manage_process action=poll pid=${pid}`)
      expect(text).not.toContain("Process.poll")
    }))

  it("the read toolkit holds no tool that writes, spawns or signals", () => {
    expect(Object.keys(Tools.ReadToolkit.tools).sort()).toEqual(["get_tool_output", "grep_spill", "manage_process", "read_spill"])
    const actions = (Tools.ManageProcessRead.parametersSchema.fields.action as unknown as { literals: ReadonlyArray<string> }).literals
    expect([...actions].sort()).toEqual(["grep", "list", "poll", "wait"])
    // the read handlers build from the read capabilities alone; the full ones do not
    const read = (context: Context.Context<Handlers.ReadNeeds>): Layer.Layer<Handlers.ReadHandlers> =>
      Layer.provide(Handlers.readLayer, Layer.succeedContext(context))
    const full = (context: Context.Context<Handlers.ReadNeeds>): Layer.Layer<Handlers.FullHandlers> =>
      // @ts-expect-error the full handlers also need SpillWrite, spawning, control and the executor
      Layer.provide(Handlers.fullLayer, Layer.succeedContext(context))
    expect([read, full].length).toBe(2)
  })
})
