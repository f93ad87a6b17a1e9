/**
 * A test that swaps layers: the body store in memory, a policy that records
 * every operation, a masker that knows one secret, and a caller of its own.
 * Copy it to test your own host's use of Spillway without touching
 * `~/.spillway`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Manifests, Retention, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { Effect, Layer } from "effect"

describe("a host's workflow with swapped layers", () => {
  it.scoped("keeps, masks, and audits", () =>
    Effect.gen(function*() {
      const audit: Array<string> = []
      const bodies = Body.layer.pipe(
        Layer.provide(Layer.mergeAll(
          BodyFiles.layerMemory,
          Manifests.layerMemory,
          Retention.layer(),
          Secrets.layer({ knownValues: ["hunter2-hunter2"] }),
          Access.allowOwners
        ))
      )
      const layer = Layer.merge(Spill.layer(), Access.layerCaller({ owner: "ci", channel: "build-7" })).pipe(
        Layer.provide(bodies),
        Layer.provide(SpillPolicy.fromFunction((op) => void audit.push(`${op._tag} ${op.filename}`)))
      )
      const log = Array.from({ length: 3000 }, (_, i) => `test ${i} ok`).join("\n") + "\npassword was hunter2-hunter2\n"
      // one layer for the whole program: the memory stores live as long as the layer built once
      const { hits, kept } = yield* Effect.gen(function*() {
        const kept = yield* Spill.keepOutput(log, 1)
        const hits = yield* Spill.grepSpill("password", kept.filename!)
        return { kept, hits }
      }).pipe(Effect.provide(layer))
      expect(kept.filename).toBeDefined()
      expect(kept.text).toContain("password was ***************")
      expect(hits.matches).toEqual([{ line: 3001, text: "password was ***************", cut: false }])
      expect(audit).toEqual([`spill/write ${kept.filename}`, `spill/read ${kept.filename}`])
    }))
})
