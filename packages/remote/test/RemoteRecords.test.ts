import { describe, expect, it } from "@effect/vitest"
import { SqlBackend } from "@spillway/node"
import { RemoteRecords } from "@spillway/remote"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { freshUrl, pgUrl, relay } from "./pgRelay.js"


const record = (generation: string, fields: Partial<RemoteRecords.RemoteRecord> = {}): RemoteRecords.RemoteRecord => ({
  generation,
  pid: 4242,
  owner: "alice",
  channel: "chat-1",
  command: "make test",
  startedAt: 1_700_000_000_000,
  emittedBytes: 0,
  host: "h".repeat(32),
  scopeHash: "s".repeat(32),
  ...fields
})

const key: RemoteRecords.Key = { owner: "alice", channel: "chat-1", host: "h".repeat(32), scopeHash: "s".repeat(32) }

/** The median time of `runs` runs of an effect, in milliseconds. */
const median = <A, E, R>(effect: Effect.Effect<A, E, R>, runs: number) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      yield* effect
      times.push(performance.now() - start)
    }
    return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!
  })

/** Rows of other callers, `count` of them from `from` on, in batches. */
const others = (store: RemoteRecords.Service, from: number, count: number) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => from + i),
    (i) => store.save(record(`other-${i}`, { owner: `owner-${i % 97}`, pid: i % 50, startedAt: i, command: "x".repeat(200) })),
    { concurrency: 4, discard: true }
  )

/** The behaviour every record store shares. */
const behaviour = (name: string, fresh: () => Layer.Layer<RemoteRecords.RemoteRecords>) =>
  describe(`${name}: shared behaviour`, () => {
    it.effect("saves, replaces, lists oldest first, finds the newest by pid and removes", () =>
      Effect.gen(function*() {
        const store = yield* RemoteRecords.RemoteRecords
        yield* store.save(record("b", { startedAt: 2 }))
        yield* store.save(record("a", { startedAt: 1 }))
        yield* store.save(record("x", { startedAt: 3, owner: "bob" }))
        const ended = record("b", { startedAt: 2, exitCode: 3, emittedBytes: 99, expiresAt: 5_000 })
        yield* store.save(ended)
        expect(yield* store.list(key)).toEqual([record("a", { startedAt: 1 }), ended])
        expect(yield* store.find(key, 4242)).toEqual(ended)
        expect(yield* store.find({ ...key, host: "other" }, 4242)).toBeUndefined()
        expect(yield* store.list({ ...key, expiredBy: 4_999 })).toEqual([])
        expect(yield* store.list({ ...key, expiredBy: 5_000 })).toEqual([ended])
        yield* store.remove("a")
        yield* store.remove("a")
        expect((yield* store.list(key)).map((r) => r.generation)).toEqual(["b"])
        // an update does not bring back a removed record
        expect(yield* store.update(record("a", { exitCode: 0 }))).toBe(false)
        expect(yield* store.update(record("b", { startedAt: 2, exitCode: 4 }))).toBe(true)
        expect((yield* store.list(key)).map((r) => [r.generation, r.exitCode])).toEqual([["b", 4]])
      }).pipe(Effect.provide(fresh())))

    it.effect("knows each host's last address beside its identity, for the callers with jobs there", () =>
      Effect.gen(function*() {
        const store = yield* RemoteRecords.RemoteRecords
        yield* store.save(record("a", { host: "h1" }))
        yield* store.save(record("b", { host: "h2" }))
        yield* store.save(record("c", { host: "h3", owner: "bob" }))
        yield* store.noteAddress("h1", "10.0.0.1:7000", 1)
        yield* store.noteAddress("h1", "10.0.0.9:7000", 2)
        yield* store.noteAddress("h3", "10.0.0.3:7000", 3)
        expect(yield* store.hosts({ owner: "alice", channel: "chat-1" })).toEqual([
          { host: "h1", address: "10.0.0.9:7000", seenAt: 2 },
          { host: "h2" }
        ])
      }).pipe(Effect.provide(fresh())))
  })

behaviour("memory", () => RemoteRecords.layerMemory)

const sqliteFile = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-records-")), "records.sqlite")
behaviour("SQLite", () => RemoteRecords.layerFor(sqliteFile()))

/**
 * A lookup's cost stays flat as the table grows twentyfold: the median of
 * many lookups at 20,000 rows is within a generous factor of the one at
 * 1,000 (a whole-table read grows with the table: twenty times the rows).
 */
const flat = (name: string, fresh: () => Layer.Layer<RemoteRecords.RemoteRecords>) =>
  it.live(`${name}: a lookup and a caller's listing cost the same at 1,000 and at 20,000 rows`, () =>
    Effect.gen(function*() {
      const store = yield* RemoteRecords.RemoteRecords
      yield* store.save(record("mine", { pid: 7 }))
      yield* others(store, 0, 1_000)
      const poll = Effect.zip(store.find(key, 7), store.list(key))
      yield* median(poll, 20)
      const small = yield* median(poll, 60)
      yield* others(store, 1_000, 19_000)
      yield* median(poll, 20)
      const large = yield* median(poll, 60)
      expect((yield* store.find(key, 7))?.generation).toBe("mine")
      expect(large).toBeLessThan(small * 4 + 2)
    }).pipe(Effect.provide(fresh())), 180_000)

flat("SQLite", () => RemoteRecords.layerFor(sqliteFile()))

describe("a table written before the key columns existed", () => {
  it.live("is migrated: its rows are found by key", () =>
    Effect.gen(function*() {
      const file = sqliteFile()
      yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlBackend.sqliteClient(file)
        yield* sql.unsafe(`CREATE TABLE spillway_remote_jobs (generation TEXT PRIMARY KEY, owner TEXT NOT NULL, channel TEXT NOT NULL,
          started_at BIGINT NOT NULL, body TEXT NOT NULL)`)
        const old = record("old", { pid: 9 })
        yield* sql`INSERT INTO spillway_remote_jobs (generation, owner, channel, started_at, body)
          VALUES (${old.generation}, ${old.owner}, ${old.channel}, ${old.startedAt}, ${JSON.stringify(old)})`
      }))
      const found = yield* Effect.flatMap(RemoteRecords.RemoteRecords, (s) => s.find(key, 9)).pipe(Effect.provide(RemoteRecords.layerFor(file)))
      expect(found).toEqual(record("old", { pid: 9 }))
    }))
})

describe.skipIf(pgUrl === undefined)("PostgreSQL", () => {
  const fresh = () => Layer.unwrapScoped(Effect.map(freshUrl, ({ url }) => RemoteRecords.layerFor(url)))
  behaviour("PostgreSQL", fresh)
  flat("PostgreSQL", fresh)

  it.scopedLive("holds at most its pool's connections, and reconnects after its connections are terminated", () =>
    Effect.gen(function*() {
      const { admin, name, url } = yield* freshUrl
      const context = yield* Layer.build(RemoteRecords.layerFor(url, { pool: 2 }))
      const store = yield* Effect.provide(RemoteRecords.RemoteRecords, context)
      yield* store.save(record("a"))
      yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => i), (i) => store.find(key, i), { concurrency: 50, discard: true })
      const held = yield* admin((sql) => sql<{ readonly n: string }>`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = ${name}`)
      expect(Number(held[0]!.n)).toBeGreaterThan(0)
      expect(Number(held[0]!.n)).toBeLessThanOrEqual(2)
      yield* admin((sql) => sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`)
      expect((yield* store.find(key, 4242))?.generation).toBe("a")
    }), 60_000)

  it.scopedLive("fails with StoreFailed naming the record store while the database cannot be reached, and works once it is back", () =>
    Effect.gen(function*() {
      const { url } = yield* freshUrl
      const link = yield* relay(new URL(url))
      const context = yield* Layer.build(RemoteRecords.layerFor(link.url, { retryFor: "1 second" }))
      const store = yield* Effect.provide(RemoteRecords.RemoteRecords, context)
      yield* store.save(record("a"))
      link.cut()
      const failure = yield* Effect.flip(store.list(key))
      expect(failure._tag).toBe("StoreFailed")
      expect(failure.message).toContain("remote record list failed")
      expect((yield* Effect.flip(store.save(record("b"))))._tag).toBe("StoreFailed")
      expect((yield* Effect.flip(store.find(key, 4242)))._tag).toBe("StoreFailed")
      yield* link.restore
      expect((yield* store.list(key)).map((r) => r.generation)).toEqual(["a"])
    }), 60_000)

  it.scopedLive("a statement over a connection cut for less than its retry window succeeds", () =>
    Effect.gen(function*() {
      const { url } = yield* freshUrl
      const link = yield* relay(new URL(url))
      const context = yield* Layer.build(RemoteRecords.layerFor(link.url))
      const store = yield* Effect.provide(RemoteRecords.RemoteRecords, context)
      yield* store.save(record("a"))
      link.cut()
      yield* Effect.fork(Effect.zipRight(Effect.sleep("700 millis"), link.restore))
      yield* store.save(record("b", { startedAt: 1_800_000_000_000 }))
      expect((yield* store.list(key)).map((r) => r.generation)).toEqual(["a", "b"])
    }), 60_000)
})
