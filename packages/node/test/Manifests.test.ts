import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Reactivity from "@effect/experimental/Reactivity"
import { describe, expect, it } from "@effect/vitest"
import { Errors, Manifests } from "@spillway/core"
import * as SqlManifests from "@spillway/node/SqlManifests"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { freshDatabase, pgUrl } from "./pg.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-manifests-")

const manifest = (id: string, fields: Partial<Manifests.Manifest> = {}): Manifests.Manifest => ({
  id,
  profile: "evidence",
  owner: "agent-7",
  channel: "conv-1",
  channelBound: false,
  tool: "bash",
  status: "exit 2",
  state: "complete",
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_600_000,
  bytes: 1234,
  codePoints: 1200,
  lines: 40,
  sourceBytes: 98_765,
  kept: "head",
  captureError: null,
  checkpoints: [{ codePoint: 0, byte: 0 }, { codePoint: 1024, byte: 1030 }],
  lineIndex: { every: 1024, starts: [0, 5000] },
  origin: { _tag: "Tool" },
  ...fields
})

const job = (id: string, fields: Partial<Manifests.Manifest> = {}) =>
  manifest(id, {
    profile: "spool",
    channelBound: true,
    state: "writing",
    expiresAt: null,
    origin: { _tag: "Job", pid: 4242, generation: "g-1", command: "make test", exitedAt: null, exitCode: null, signal: null },
    ...fields
  })

/** The behaviour every manifest store shares. */
const behaviour = (name: string, fresh: () => Layer.Layer<Manifests.Manifests, Errors.StoreFailed>) =>
  describe(`${name}: shared behaviour`, () => {
    it.effect("round-trips every profile's manifest exactly, numbers as numbers", () =>
      Effect.gen(function*() {
        const store = yield* Manifests.Manifests
        const all = [
          manifest("ev.log", { bytes: 2 ** 40, createdAt: Date.UTC(2030, 0, 1) }),
          manifest("spill.log", { profile: "spill", expiresAt: null, kept: "whole", checkpoints: [] }),
          job("job.log"),
          manifest("agent.log", {
            profile: "agent",
            channelBound: true,
            origin: { _tag: "Agent", name: "summarize", status: "failed", kind: "error", reason: "boom", iterations: 3, tools: [{ name: "grep", calls: 2 }] }
          }),
          manifest("conv/outputs/run-command-x.txt", { profile: "scratch", captureError: "the quota is used up" }),
          manifest("search.json", { origin: { _tag: "Search" } })
        ]
        for (const m of all) yield* store.insert(m)
        for (const m of all) expect(yield* store.get(m.id)).toStrictEqual(m)
        expect(yield* store.get("missing.log")).toBeUndefined()
      }).pipe(Effect.provide(fresh())))

    it.effect("refuses a second manifest with an id and keeps the first", () =>
      Effect.gen(function*() {
        const store = yield* Manifests.Manifests
        const first = manifest("dup.log")
        yield* store.insert(first)
        const e = yield* Effect.flip(store.insert(manifest("dup.log", { owner: "intruder" })))
        expect(e._tag).toBe("StoreFailed")
        expect(yield* store.get("dup.log")).toStrictEqual(first)
      }).pipe(Effect.provide(fresh())))

    it.effect("updates a body being written, and never a complete one", () =>
      Effect.gen(function*() {
        const store = yield* Manifests.Manifests
        yield* store.insert(job("grow.log"))
        yield* store.update(job("grow.log", { bytes: 99 }))
        const done = job("grow.log", { state: "complete", bytes: 100, expiresAt: 5 })
        yield* store.update(done)
        expect(yield* store.get("grow.log")).toStrictEqual(done)
        expect((yield* Effect.flip(store.update(job("grow.log", { bytes: 1 }))))._tag).toBe("StoreFailed")
        expect((yield* Effect.flip(store.update(job("never.log"))))._tag).toBe("StoreFailed")
        expect(yield* store.get("grow.log")).toStrictEqual(done)
      }).pipe(Effect.provide(fresh())))

    it.effect("lists by profile and owner, oldest first; takes exactly the expired ones; removes", () =>
      Effect.gen(function*() {
        const store = yield* Manifests.Manifests
        yield* store.insert(manifest("b.log", { createdAt: 2, expiresAt: 10 }))
        yield* store.insert(manifest("a.log", { createdAt: 1, expiresAt: 20 }))
        yield* store.insert(manifest("c.log", { createdAt: 3, owner: "other", expiresAt: null, profile: "spill" }))
        expect((yield* store.list()).map((m) => m.id)).toEqual(["a.log", "b.log", "c.log"])
        expect((yield* store.list({ profile: "spill" })).map((m) => m.id)).toEqual(["c.log"])
        expect((yield* store.list({ owner: "agent-7" })).map((m) => m.id)).toEqual(["a.log", "b.log"])
        expect((yield* store.takeExpired(10)).map((m) => m.id)).toEqual(["b.log"])
        expect((yield* store.takeExpired(10)).map((m) => m.id)).toEqual([])
        expect((yield* store.takeExpired(1e15)).map((m) => m.id)).toEqual(["a.log"])
        yield* store.remove("c.log")
        yield* store.remove("c.log")
        expect(yield* store.list()).toEqual([])
      }).pipe(Effect.provide(fresh())))
  })

behaviour("memory", () => Manifests.layerMemory)
behaviour("SQLite", () => SqlManifests.layerFor(Path.join(tempDir(), "state", "manifests.sqlite")))
describe.skipIf(pgUrl === undefined)("PostgreSQL", () => {
  behaviour("PostgreSQL", () => Layer.unwrapScoped(Effect.map(freshDatabase, SqlManifests.layerFor)))
})

describe("SQLite", () => {
  it.effect("makes the file 0600 in new folders, and refuses a row it could not have written", () => {
    const file = Path.join(tempDir(), "deep", "manifests.sqlite")
    return Effect.gen(function*() {
      const store = yield* Manifests.Manifests
      yield* store.insert(manifest("ok.log"))
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      const client = yield* SqliteClient.make({ filename: file }).pipe(Effect.provide(Reactivity.layer))
      yield* Effect.provideService(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE spillway_bodies SET origin = '{"_tag":"Nope"}'`), SqlClient.SqlClient, client)
      const e = yield* Effect.flip(store.get("ok.log"))
      expect(e._tag).toBe("StoreFailed")
      expect(e.message).toContain("not a manifest")
    }).pipe(Effect.scoped, Effect.provide(SqlManifests.layerFor(file)))
  })

  it.effect("a file that is no database, or a folder that cannot be made, is a clear error at the first call", () => {
    const file = Path.join(tempDir(), "junk.sqlite")
    Fs.writeFileSync(file, "this is not a database, just text that goes on for a while ".repeat(100))
    const blocked = Path.join(tempDir(), "plain-file")
    Fs.writeFileSync(blocked, "")
    return Effect.gen(function*() {
      for (const location of [file, Path.join(blocked, "manifests.sqlite")]) {
        const e = yield* Effect.flip(Effect.flatMap(Manifests.Manifests, (s) => s.get("x.log")).pipe(Effect.provide(SqlManifests.layerFor(location))))
        expect(e._tag).toBe("StoreFailed")
        expect(e.message).toContain("manifest open")
      }
    })
  })
})
