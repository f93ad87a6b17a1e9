/**
 * Job records over `@effect/sql`'s generic `SqlClient`, with SQLite as the
 * embedded default: one table, `spillway_process_jobs`, keyed by the job's
 * generation, in SQL that SQLite and PostgreSQL both accept. A record is the
 * job manifest as JSON beside the columns a query needs.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Errors, ProcessManifests } from "@spillway/core"
import { Effect, Layer } from "effect"
import type * as Scope from "effect/Scope"
import * as SqlBackend from "./SqlBackend.js"

const storeError = (operation: string) => (e: SqlError | unknown) =>
  new Errors.StoreFailed({
    operation,
    reason: e instanceof Error && e.message !== "" ? e.message : String(e)
  })

const isNumber = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u)
const isOptional = <A>(u: unknown, is: (u: unknown) => u is A) => u === undefined || u === null || is(u)
const isString = (u: unknown): u is string => typeof u === "string"

/** Reads a stored record back, or fails on one this store could not have written. */
const decode = (generation: unknown, body: unknown): Effect.Effect<ProcessManifests.JobManifest, Errors.StoreFailed> =>
  Effect.suspend(() => {
    let m: Record<string, unknown>
    try {
      m = JSON.parse(String(body)) as Record<string, unknown>
    } catch {
      m = {}
    }
    const ok = isString(m.generation) && m.generation === generation && isNumber(m.pid) && isString(m.owner) &&
      isString(m.channel) && isString(m.command) && isString(m.spool) && isNumber(m.startedAt) &&
      isNumber(m.emittedBytes) && isNumber(m.spooledBytes) && isOptional(m.exitedAt, isNumber) &&
      isOptional(m.exitCode, isNumber) && isOptional(m.signal, isString) && isOptional(m.captureError, isString)
    return ok
      ? Effect.succeed(m as unknown as ProcessManifests.JobManifest)
      : Effect.fail(new Errors.StoreFailed({ operation: "list", reason: `stored job ${JSON.stringify(String(generation))} is not a job record` }))
  })

/** The job record store over the SqlClient in context: creates its table if missing. */
export const make: Effect.Effect<ProcessManifests.Service, Errors.StoreFailed, SqlClient.SqlClient> = Effect
  .suspend(() => makeIn("spillway_process_jobs"))

/**
 * The same store in a table of another name (`[a-z_]+`), for records of
 * another kind of job (a controller's remote jobs, say); fields a record has
 * beyond a job manifest's are kept as they are.
 */
export const makeIn = (table: string): Effect.Effect<ProcessManifests.Service, Errors.StoreFailed, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (!/^[a-z_]{1,48}$/.test(table)) return yield* Effect.dieMessage(`table name ${JSON.stringify(table)} is not [a-z_]+`)
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const t = sql.literal(table)
    yield* sql`CREATE TABLE IF NOT EXISTS ${t} (
      generation TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      channel TEXT NOT NULL,
      started_at BIGINT NOT NULL,
      body TEXT NOT NULL
    )`.pipe(Effect.mapError(storeError("create table")))

    const save = (m: ProcessManifests.JobManifest) => {
      const body = JSON.stringify(m)
      return sql`INSERT INTO ${t} (generation, owner, channel, started_at, body)
        VALUES (${m.generation}, ${m.owner}, ${m.channel}, ${m.startedAt}, ${body})
        ON CONFLICT (generation) DO UPDATE SET body = ${body}`.pipe(Effect.asVoid, Effect.mapError(storeError("save")))
    }

    const list = sql<{ readonly generation: unknown; readonly body: unknown }>`SELECT generation, body
      FROM ${t} ORDER BY started_at, generation`.pipe(
      Effect.mapError(storeError("list")),
      Effect.flatMap((rows) => Effect.forEach(rows, (row) => decode(row.generation, row.body)))
    )

    const remove = (generation: string) =>
      sql`DELETE FROM ${t} WHERE generation = ${generation}`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError("remove"))
      )

    return { save, list, remove } satisfies ProcessManifests.Service
  })

/** The job record store over the SqlClient in context. */
export const layer: Layer.Layer<ProcessManifests.ProcessManifests, Errors.StoreFailed, SqlClient.SqlClient> =
  Layer.effect(ProcessManifests.ProcessManifests, make)

/** The embedded default: SQLite in a file (created with its directory if missing, mode 0600 for the file). */
export const layerSqlite = (
  options: { readonly filename: string }
): Layer.Layer<ProcessManifests.ProcessManifests, Errors.StoreFailed> =>
  Layer.scoped(ProcessManifests.ProcessManifests, SqlBackend.withClient(SqlBackend.sqliteClient(options.filename), make))

/** The job records in a PostgreSQL database, for controllers that share one view. */
export const layerPg = (
  options: { readonly url: string }
): Layer.Layer<ProcessManifests.ProcessManifests, Errors.StoreFailed> =>
  Layer.scoped(ProcessManifests.ProcessManifests, SqlBackend.withClient(SqlBackend.pgClient(options.url), make))

/** PostgreSQL for a `postgres://` URL, otherwise SQLite in the file it names. */
export const layerFor = (location: string): Layer.Layer<ProcessManifests.ProcessManifests, Errors.StoreFailed> =>
  Layer.scoped(ProcessManifests.ProcessManifests, SqlBackend.withClient(SqlBackend.clientFor(location), make))

/**
 * The store in `table` of the database a location names (a `postgres://`
 * URL or a SQLite file), as a scoped service for a tag of the caller's own.
 */
export const serviceIn = (
  location: string,
  table: string
): Effect.Effect<ProcessManifests.Service, Errors.StoreFailed, Scope.Scope> =>
  SqlBackend.withClient(SqlBackend.clientFor(location), makeIn(table))
