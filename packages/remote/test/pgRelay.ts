import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlBackend } from "@spillway/node"
import { Effect, Schedule } from "effect"
import * as Net from "node:net"

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

/** A TCP relay to PostgreSQL that can be cut (every connection reset, new ones refused) and restored on the same port. */
export const relay = (target: URL) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly cut: () => void; readonly restore: Effect.Effect<void> }>((resume) => {
      const sockets = new Set<Net.Socket>()
      let server: Net.Server
      let port = 0
      const listen = (done: () => void) => {
        server = Net.createServer((inbound) => {
          const outbound = Net.connect(Number(target.port || 5432), target.hostname)
          for (const s of [inbound, outbound]) {
            sockets.add(s)
            s.on("error", () => {})
            s.on("close", () => {
              sockets.delete(s)
              inbound.destroy()
              outbound.destroy()
            })
          }
          inbound.pipe(outbound).pipe(inbound)
        })
        server.listen(port, "127.0.0.1", () => {
          port = (server.address() as Net.AddressInfo).port
          done()
        })
      }
      const cut = () => {
        server.close()
        for (const s of sockets) s.resetAndDestroy()
      }
      listen(() => {
        const url = new URL(target.toString())
        url.hostname = "127.0.0.1"
        url.port = String(port)
        resume(Effect.succeed({ url: url.toString(), cut, restore: Effect.async<void>((back) => listen(() => back(Effect.void))) }))
      })
    }),
    ({ cut }) => Effect.sync(cut)
  )

