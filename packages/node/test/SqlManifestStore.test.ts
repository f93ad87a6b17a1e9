import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ManifestStore } from "@spillway/core"
import * as SqlManifestStore from "@spillway/node/SqlManifestStore"
import { Effect, Exit, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { freshDatabase, pgUrl } from "./pg.js"

/** One temp directory for the file, removed afterwards. */
const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-manifests-"))
afterAll(() => {
  Fs.rmSync(root, { recursive: true, force: true })
})

let counter = 0
/** A database file not yet created, in a directory not yet created. */
const freshFile = () => Path.join(root, `run-${++counter}`, "state", "manifests.db")

const modeOf = (file: string) => Fs.statSync(file).mode & 0o777

const manifest = (id: string, fields: Partial<ManifestStore.Manifest> = {}): ManifestStore.Manifest => ({
  id,
  owner: "agent-7",
  tool: "bash",
  status: "ok",
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_600_000,
  bytes: 1234,
  codePoints: 1200,
  lines: 40,
  sourceBytes: 98_765,
  checkpoints: [{ codePoint: 0, byte: 0 }, { codePoint: 1024, byte: 1030 }, { codePoint: 2048, byte: 2100 }],
  ...fields
})

const byId = (ms: ReadonlyArray<ManifestStore.Manifest>) => [...ms].sort((a, b) => a.id < b.id ? -1 : 1)

/** The behaviour every implementation of the store must share. */
const behaviour = (
  name: string,
  fresh: () => Layer.Layer<ManifestStore.ManifestStore, ManifestStore.ManifestStoreError>,
  options: { readonly refusesDuplicates: boolean }
) =>
  describe(`${name}: shared behaviour`, () => {
    it.effect("round-trips a manifest, checkpoints and all, as numbers", () =>
      Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        const m = manifest("ev_roundtrip", { status: "exit 2", bytes: 2 ** 40, createdAt: Date.UTC(2030, 0, 1) })
        yield* store.put(m)
        const got = yield* store.get("ev_roundtrip")
        expect(got).toStrictEqual(m)
        for (const key of ["createdAt", "expiresAt", "bytes", "codePoints", "lines", "sourceBytes"] as const) {
          expect(typeof got?.[key]).toBe("number")
        }
        expect(yield* store.get("ev_missing")).toBeUndefined()
        const empty = manifest("ev_empty", { bytes: 0, codePoints: 0, lines: 0, sourceBytes: 0, checkpoints: [] })
        yield* store.put(empty)
        expect(yield* store.get("ev_empty")).toStrictEqual(empty)
      }).pipe(Effect.provide(fresh())))

    it.effect.skipIf(!options.refusesDuplicates)("refuses a second manifest with the same id and keeps the first", () =>
      Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        const first = manifest("ev_dup")
        yield* store.put(first)
        const exit = yield* Effect.exit(store.put(manifest("ev_dup", { owner: "intruder", bytes: 1 })))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          expect(error).toBeInstanceOf(ManifestStore.ManifestStoreError)
          expect(error?.operation).toBe("put")
        }
        expect(yield* store.get("ev_dup")).toStrictEqual(first)
      }).pipe(Effect.provide(fresh())))

    it.effect("counts only unexpired bodies in retainedBytes", () =>
      Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        expect(yield* store.retainedBytes(0)).toBe(0)
        yield* store.put(manifest("ev_a", { expiresAt: 1000, bytes: 10 }))
        yield* store.put(manifest("ev_b", { expiresAt: 2000, bytes: 20 }))
        yield* store.put(manifest("ev_c", { expiresAt: 3000, bytes: 40 }))
        expect(yield* store.retainedBytes(0)).toBe(70)
        expect(yield* store.retainedBytes(999)).toBe(70)
        expect(yield* store.retainedBytes(1000)).toBe(60)
        expect(yield* store.retainedBytes(2500)).toBe(40)
        expect(yield* store.retainedBytes(3000)).toBe(0)
      }).pipe(Effect.provide(fresh())))

    it.effect("takes exactly the expired manifests, once", () =>
      Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        const a = manifest("ev_a", { expiresAt: 1000, bytes: 10 })
        const b = manifest("ev_b", { expiresAt: 2000, bytes: 20 })
        const c = manifest("ev_c", { expiresAt: 3000, bytes: 40 })
        for (const m of [c, a, b]) yield* store.put(m)
        expect(yield* store.takeExpired(999)).toStrictEqual([])
        expect(byId(yield* store.takeExpired(2000))).toStrictEqual([a, b])
        expect(yield* store.takeExpired(2000)).toStrictEqual([])
        expect(yield* store.get("ev_a")).toBeUndefined()
        expect(yield* store.get("ev_b")).toBeUndefined()
        expect(yield* store.get("ev_c")).toStrictEqual(c)
        expect(yield* store.retainedBytes(0)).toBe(40)
        expect(yield* store.takeExpired(10_000)).toStrictEqual([c])
        expect(yield* store.retainedBytes(0)).toBe(0)
      }).pipe(Effect.provide(fresh())))

    it.effect("takes many expired manifests at once", () =>
      Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        const many = Array.from({ length: 1201 }, (_, i) => manifest(`ev_${String(i).padStart(5, "0")}`, { expiresAt: i }))
        for (const m of many) yield* store.put(m)
        yield* store.put(manifest("ev_keep", { expiresAt: 5000 }))
        expect(byId(yield* store.takeExpired(1200))).toStrictEqual(many)
        expect((yield* store.takeExpired(4999)).length).toBe(0)
        expect((yield* store.get("ev_keep"))?.id).toBe("ev_keep")
      }).pipe(Effect.provide(fresh())))
  })

behaviour("layerMemory", () => ManifestStore.layerMemory, { refusesDuplicates: true })
behaviour("layerSqlite", () => SqlManifestStore.layerSqlite({ filename: freshFile() }), { refusesDuplicates: true })
if (pgUrl !== undefined) {
  behaviour(
    "layerPg",
    () => Layer.unwrapScoped(Effect.map(freshDatabase, (url) => SqlManifestStore.layerPg({ url }))),
    { refusesDuplicates: true }
  )
}

describe("layerFor", () => {
  it.effect("is SQLite for a file and PostgreSQL for a postgres:// URL that it then must reach", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* Effect.scoped(Layer.build(SqlManifestStore.layerFor(file)))
      expect(Fs.existsSync(file)).toBe(true)
      const error = yield* Effect.flip(Effect.scoped(Layer.build(SqlManifestStore.layerFor("postgres://nobody:secret@127.0.0.1:1/none"))))
      expect(error.message).toContain("cannot reach PostgreSQL at postgres://127.0.0.1:1/none")
      expect(error.message).not.toContain("secret")
    }))
})

describe("layerSqlite", () => {
  it.effect("creates the file and its directory, the file mode 0600", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      expect(Fs.existsSync(Path.dirname(filename))).toBe(false)
      yield* Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        yield* store.put(manifest("ev_mode"))
        expect(modeOf(filename)).toBe(0o600)
        // SQLite gives its side files the database file's mode.
        for (const side of [`${filename}-wal`, `${filename}-shm`]) {
          if (Fs.existsSync(side)) expect(modeOf(side)).toBe(0o600)
        }
      }).pipe(Effect.provide(SqlManifestStore.layerSqlite({ filename })))
      expect(modeOf(filename)).toBe(0o600)
    }))

  it.effect("narrows an existing file to mode 0600", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      Fs.mkdirSync(Path.dirname(filename), { recursive: true })
      Fs.writeFileSync(filename, "")
      Fs.chmodSync(filename, 0o644)
      yield* ManifestStore.ManifestStore.pipe(Effect.provide(SqlManifestStore.layerSqlite({ filename })))
      expect(modeOf(filename)).toBe(0o600)
    }))

  it.effect("keeps manifests across a restart", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const layer = () => SqlManifestStore.layerSqlite({ filename })
      const kept = manifest("ev_kept", { expiresAt: 5000, bytes: 50 })
      const gone = manifest("ev_gone", { expiresAt: 1000, bytes: 10 })
      yield* Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        yield* store.put(kept)
        yield* store.put(gone)
      }).pipe(Effect.provide(layer()))
      yield* Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        expect(yield* store.get("ev_kept")).toStrictEqual(kept)
        expect(yield* store.retainedBytes(0)).toBe(60)
        expect(yield* store.takeExpired(1000)).toStrictEqual([gone])
      }).pipe(Effect.provide(layer()))
      yield* Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        expect(yield* store.get("ev_gone")).toBeUndefined()
        expect(yield* store.get("ev_kept")).toStrictEqual(kept)
        const exit = yield* Effect.exit(store.put(manifest("ev_kept")))
        expect(Exit.isFailure(exit)).toBe(true)
      }).pipe(Effect.provide(layer()))
    }))

  it.effect("fails with ManifestStoreError on a file that is not a database", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      Fs.mkdirSync(Path.dirname(filename), { recursive: true })
      Fs.writeFileSync(filename, "this is not a database, only some text that is long enough to have a header".repeat(20))
      const error = yield* Effect.flip(
        ManifestStore.ManifestStore.pipe(Effect.provide(SqlManifestStore.layerSqlite({ filename })))
      )
      expect(error).toBeInstanceOf(ManifestStore.ManifestStoreError)
      expect(error.operation).toBe("open")
    }))

  it.effect("fails with ManifestStoreError where the directory cannot be made", () =>
    Effect.gen(function*() {
      const blocker = Path.join(root, `blocker-${++counter}`)
      Fs.writeFileSync(blocker, "")
      const error = yield* Effect.flip(
        ManifestStore.ManifestStore.pipe(
          Effect.provide(SqlManifestStore.layerSqlite({ filename: Path.join(blocker, "manifests.db") }))
        )
      )
      expect(error).toBeInstanceOf(ManifestStore.ManifestStoreError)
      expect(error.operation).toBe("open")
    }))
})

describe("layer over a SqlClient", () => {
  const client = (filename: string, transform?: (s: string) => string) =>
    SqliteClient.layer({ filename, ...(transform ? { transformResultNames: transform, transformQueryNames: transform } : {}) })

  it.effect("ignores the client's name transforms", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      Fs.mkdirSync(Path.dirname(filename), { recursive: true })
      const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
      const m = manifest("ev_transform")
      yield* Effect.gen(function*() {
        const store = yield* ManifestStore.ManifestStore
        yield* store.put(m)
        expect(yield* store.get("ev_transform")).toStrictEqual(m)
        expect(yield* store.takeExpired(m.expiresAt)).toStrictEqual([m])
      }).pipe(Effect.provide(SqlManifestStore.layer.pipe(Layer.provide(client(filename, camel)))))
    }))

  it.effect("returns numbers where the driver returns bigints", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      Fs.mkdirSync(Path.dirname(filename), { recursive: true })
      const m = manifest("ev_bigint", { expiresAt: 2 ** 42, bytes: 7 })
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* SqlManifestStore.make
        yield* store.put(m)
        const raw = yield* sql<{ readonly bytes: unknown }>`SELECT bytes FROM spillway_manifests`
        expect(typeof raw[0].bytes).toBe("bigint")
        expect(yield* store.get("ev_bigint")).toStrictEqual(m)
        expect(yield* store.retainedBytes(0)).toBe(7)
        expect(yield* store.takeExpired(2 ** 42)).toStrictEqual([m])
      }).pipe(
        Effect.provideService(SqlClient.SafeIntegers, true),
        Effect.provide(client(filename))
      )
    }))

  it.effect("maps a failing query to ManifestStoreError with the operation", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      Fs.mkdirSync(Path.dirname(filename), { recursive: true })
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* SqlManifestStore.make
        yield* sql`DROP TABLE spillway_manifests`
        const attempts: ReadonlyArray<readonly [string, Effect.Effect<unknown, ManifestStore.ManifestStoreError>]> = [
          ["put", store.put(manifest("ev_x"))],
          ["get", store.get("ev_x")],
          ["retainedBytes", store.retainedBytes(0)],
          ["takeExpired", store.takeExpired(0)]
        ]
        for (const [operation, effect] of attempts) {
          const error = yield* Effect.flip(effect)
          expect(error).toBeInstanceOf(ManifestStore.ManifestStoreError)
          expect(error.operation).toBe(operation)
          expect(error.reason).toMatch(/no such table/)
        }
      }).pipe(Effect.provide(client(filename)))
    }))
})
