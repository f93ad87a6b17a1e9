import type * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { SqlBackend } from "@spillway/node"
import { RemoteRecords } from "@spillway/remote"
import { Effect, Layer, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const pgUrl = process.env.SPILLWAY_TEST_PG_URL !== undefined && process.env.SPILLWAY_TEST_PG_URL !== "" ? process.env.SPILLWAY_TEST_PG_URL : undefined

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

/** The behaviour every record store shares. */
const behaviour = (name: string, fresh: () => Layer.Layer<RemoteRecords.RemoteRecords, unknown>) =>
  describe(`${name}: shared behaviour`, () => {
    it.effect("saves, replaces, lists oldest first and removes", () =>
      Effect.gen(function*() {
        const store = yield* RemoteRecords.RemoteRecords
        yield* store.save(record("b", { startedAt: 2 }))
        yield* store.save(record("a", { startedAt: 1 }))
        const ended = record("b", { startedAt: 2, exitCode: 3, emittedBytes: 99, expiresAt: 5_000 })
        yield* store.save(ended)
        expect(yield* store.list).toEqual([record("a", { startedAt: 1 }), ended])
        yield* store.remove("a")
        yield* store.remove("a")
        expect((yield* store.list).map((r) => r.generation)).toEqual(["b"])
      }).pipe(Effect.provide(Layer.orDie(fresh()))))
  })

behaviour("memory", () => RemoteRecords.layerMemory)
behaviour("SQLite", () => RemoteRecords.layerFor(Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-records-")), "records.sqlite")))
describe.skipIf(pgUrl === undefined)("PostgreSQL", () => {
  const fresh = () =>
    Layer.unwrapScoped(Effect.gen(function*() {
      const name = `spillway_r_${Math.random().toString(16).slice(2, 10)}`
      const admin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
        Effect.scoped(Effect.flatMap(SqlBackend.pgClient(pgUrl!), f)).pipe(
          // an autovacuum worker busy in a database for a moment makes DROP ... WITH (FORCE) fail: try again shortly
          Effect.retry({ times: 20, schedule: Schedule.spaced("100 millis") }),
          Effect.orDie
        )
      yield* admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
      yield* Effect.addFinalizer(() => admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
      const url = new URL(pgUrl!)
      url.pathname = `/${name}`
      return RemoteRecords.layerFor(url.toString())
    }))
  behaviour("PostgreSQL", fresh)
})
