/**
 * A test that swaps layers: the real spill store in a temporary directory, a
 * policy that records every operation, and a masker that knows one secret.
 * Copy it to test your own host's use of Spillway without touching
 * `~/.spillway`.
 */
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Secrets, Spill, SpillPolicy } from "@spillway/core"
import { NodeSpillStore } from "@spillway/node"
import { Effect, Layer } from "effect"

describe("a host's workflow with swapped layers", () => {
  it.scoped("keeps, masks, and audits", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped()
      const audit: Array<string> = []
      const layer = Spill.layer().pipe(
        Layer.provide(NodeSpillStore.layer({ directory })),
        Layer.provide(SpillPolicy.fromFunction((op) => void audit.push(`${op._tag} ${op.filename}`))),
        Layer.provide(Secrets.layer({ knownValues: ["hunter2-hunter2"] }))
      )
      const log = Array.from({ length: 3000 }, (_, i) => `test ${i} ok`).join("\n") + "\npassword was hunter2-hunter2\n"
      const kept = yield* Spill.keepOutput(log, 1).pipe(Effect.provide(layer))
      expect(kept.filename).toBeDefined()
      expect(kept.text).toContain("password was ***************")
      const hits = yield* Spill.grepSpill("password", kept.filename!).pipe(Effect.provide(layer))
      expect(hits.matches).toEqual([{ line: 3001, text: "password was ***************", cut: false }])
      expect(audit).toEqual([`spill/write ${kept.filename}`, `spill/read ${kept.filename}`])
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
