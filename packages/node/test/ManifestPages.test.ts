import { afterAll, describe, expect, it } from "@effect/vitest"
import { Manifests } from "@spillway/core"
import { SqlManifests } from "@spillway/node"
import { Effect, type Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const base: Manifests.Manifest = {
  id: "x.log",
  profile: "spill",
  owner: "alice",
  channel: "cli",
  channelBound: false,
  tool: "command",
  status: "exit 0",
  state: "complete",
  createdAt: 1_000_000,
  expiresAt: null,
  bytes: 1,
  codePoints: 1,
  lines: 1,
  sourceBytes: 1,
  kept: "whole",
  captureError: null,
  checkpoints: [],
  lineIndex: { every: 1024, starts: [0] },
  origin: { _tag: "Tool" }
}

/** Twelve manifests: three share a creation time, one is bob's, one is evidence, one has no recorded command. */
const rows: Array<Manifests.Manifest> = [
  ...Array.from({ length: 9 }, (_, i) => ({
    ...base,
    id: `out-${i}.log`,
    createdAt: base.createdAt + (i < 3 ? 0 : i),
    origin: { _tag: "Tool" as const, command: i === 4 ? "make 100%_done" : `make step-${i}` }
  })),
  { ...base, id: "old.log", createdAt: base.createdAt + 20 },
  { ...base, id: "bob.log", owner: "bob", createdAt: base.createdAt + 30 },
  { ...base, id: "ev.log", profile: "evidence", createdAt: base.createdAt + 40 }
]

const suite = (name: string, layer: () => Layer.Layer<Manifests.Manifests>) =>
  describe(`manifest pages, ${name}`, () => {
    const withStore = <A>(f: (s: Manifests.Service) => Effect.Effect<A, unknown>) =>
      Effect.runPromise(Effect.gen(function*() {
        const store = yield* Manifests.Manifests
        for (const m of rows) yield* store.insert(m)
        return yield* f(store)
      }).pipe(Effect.provide(layer())) as Effect.Effect<A>)

    it("pages newest first from a key, ties broken by name, and never repeats or skips one", async () => {
      const ids = await withStore((s) =>
        Effect.gen(function*() {
          const out: Array<string> = []
          let before: Manifests.Filter["before"]
          for (let k = 0; k < 10; k++) {
            const page = yield* s.list({ profile: "spill", owner: "alice", limit: 4, before })
            out.push(...page.map((m) => m.id))
            if (page.length < 4) break
            before = { createdAt: page[3]!.createdAt, id: page[3]!.id }
          }
          return out
        })
      )
      expect(ids).toEqual(["old.log", "out-8.log", "out-7.log", "out-6.log", "out-5.log", "out-4.log", "out-3.log", "out-2.log", "out-1.log", "out-0.log"])
    })

    it("filters on id, tool, status and the recorded command, ignoring case and taking % and _ literally", async () => {
      const [step, literal, none, all] = await withStore((s) =>
        Effect.all([
          s.list({ profile: "spill", owner: "alice", text: "STEP-7", limit: 50 }),
          s.list({ profile: "spill", owner: "alice", text: "100%_", limit: 50 }),
          s.list({ profile: "spill", owner: "alice", text: "%", limit: 50 }),
          s.list({ profile: "spill", owner: "alice" })
        ])
      )
      expect(step.map((m) => m.id)).toEqual(["out-7.log"])
      expect(literal.map((m) => m.id)).toEqual(["out-4.log"])
      expect(none.map((m) => m.id)).toEqual(["out-4.log"])
      // without a limit, every match oldest first, as before
      expect(all.map((m) => m.id)).toEqual(["out-0.log", "out-1.log", "out-2.log", "out-3.log", "out-4.log", "out-5.log", "out-6.log", "out-7.log", "out-8.log", "old.log"])
      // a manifest kept before commands were recorded reads as it did
      expect(all.at(-1)!.origin).toEqual({ _tag: "Tool" })
    })
  })

suite("in memory", () => Manifests.layerMemory)
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-manifest-pages-"))
let stores = 0
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))
suite("in SQLite", () => SqlManifests.layerFor(Path.join(dir, `manifests-${stores++}.sqlite`)))
