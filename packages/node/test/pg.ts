import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"

/** The test server's URL (a role that may create databases); the PostgreSQL tests run only with it. */
export const pgUrl = process.env.SPILLWAY_TEST_PG_URL !== undefined && process.env.SPILLWAY_TEST_PG_URL !== ""
  ? process.env.SPILLWAY_TEST_PG_URL
  : undefined

const admin = <A, E>(f: (sql: PgClient.PgClient) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(PgClient.make({ url: Redacted.make(pgUrl!), maxConnections: 1 }), f)).pipe(
    Effect.provide(Reactivity.layer),
    // an autovacuum worker busy in a database for a moment makes DROP ... WITH (FORCE) fail
    // (the role cannot end a superuser's backend): try again shortly
    Effect.retry({ times: 20, schedule: Schedule.spaced("100 millis") }),
    Effect.orDie
  )

/** A fresh, empty database on the test server, dropped when the scope closes; its URL. */
export const freshDatabase = Effect.gen(function*() {
  const name = `spillway_t_${randomBytes(6).toString("hex")}`
  yield* admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  yield* Effect.addFinalizer(() => admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  const url = new URL(pgUrl!)
  url.pathname = `/${name}`
  return url.toString()
})
