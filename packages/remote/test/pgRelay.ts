import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlBackend } from "@spillway/node"
import { Effect, Schedule } from "effect"

/** The test PostgreSQL server, when one is given. */
export const pgUrl = process.env.SPILLWAY_TEST_PG_URL !== undefined && process.env.SPILLWAY_TEST_PG_URL !== "" ? process.env.SPILLWAY_TEST_PG_URL : undefined

/** A database of its own on the test server, dropped with the scope: its URL, its name, and a way to run statements as the administrator. */
export const freshUrl = Effect.gen(function*() {
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
  return { url: url.toString(), name, admin }
})

/** The cuttable relay, shared with the node package's tests. */
export { relay } from "../../node/test/pgRelay.js"
