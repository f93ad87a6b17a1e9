import { describe, expect, it } from "@effect/vitest"
import { Spill } from "@spillway/core"
import { NodeSpill } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { layer, workflow } from "./agents-workflow.js"

describe("agents workflow example", () => {
  it.scopedLive("three agents study a saved log under a read-only grant, and every result is paged whole", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-agents-example-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true })))
      // the host saves the log; the workflow itself gets no write capability
      const log = Array.from({ length: 5_000 }, (_, i) =>
        i % 1_000 === 7 ? `step ${i}: error: unit ${i} failed` : i % 700 === 3 ? `step ${i}: warning: slow disk` : `step ${i}: compiled src/components/widget-${i}.tsx in ${i % 90} ms`
      ).join("\n")
      const kept = yield* Spill.keepOutput(log, 1).pipe(Effect.provide(NodeSpill.layer({ directory })))
      const context = yield* Layer.build(layer(directory))
      const { results, snapshot } = yield* workflow(kept.filename!).pipe(Effect.provide(context))
      expect(snapshot.agents.map((a) => a.status)).toEqual(["completed", "completed", "completed"])
      expect(results.errors!.split("\n")[0]).toBe("5 lines match error:")
      expect(results.warnings!.split("\n")[0]).toBe("8 lines match warn:")
      // timing matches 100 lines (the default result cap) and says more exist; the whole result is paged back
      expect(results.timing!.split("\n")[0]).toBe("100+ lines match [0-9]+ ?ms:")
      expect(results.timing!.split("\n").length).toBe(101)
      expect(Buffer.byteLength(results.timing!)).toBeGreaterThan(4_000)
    }))
})
