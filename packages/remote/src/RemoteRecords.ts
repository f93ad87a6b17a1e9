/**
 * What a controller records of the jobs it started on hosts, so a restarted
 * controller finds them again: the job's generation and pid, who started it
 * and from which channel, the command, the hash of the host's identity and of
 * the credential scope, and how the host said it ended and when its output
 * expires. Never the credential, and never output: output stays on the host.
 * In memory, or in SQLite or PostgreSQL (one table, `spillway_remote_jobs`),
 * each row decoded with the record's schema.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Errors } from "@spillway/core"
import { SqlBackend } from "@spillway/node"
import { Context, Effect, Layer, type ParseResult, Schema } from "effect"

/** One remote job, as a controller records it. */
export const RemoteRecord = Schema.Struct({
  generation: Schema.String,
  pid: Schema.Number,
  owner: Schema.String,
  channel: Schema.String,
  command: Schema.String,
  startedAt: Schema.Number,
  exitCode: Schema.optional(Schema.Number),
  signal: Schema.optional(Schema.String),
  emittedBytes: Schema.Number,
  /** The hash of the identity of the host the job runs on. */
  host: Schema.String,
  /** The hash of the credential scope it was started under. */
  scopeHash: Schema.String,
  /** When the host said its output expires (epoch ms). */
  expiresAt: Schema.optional(Schema.Number)
})

/** One remote job, as a controller records it. */
export type RemoteRecord = typeof RemoteRecord.Type

/** Where a controller records its remote jobs. */
export interface Service {
  /** Records a job, replacing its earlier record. */
  readonly save: (record: RemoteRecord) => Effect.Effect<void, Errors.StoreFailed>
  /** Every record, oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<RemoteRecord>, Errors.StoreFailed>
  readonly remove: (generation: string) => Effect.Effect<void, Errors.StoreFailed>
}

/** The record store. */
export class RemoteRecords extends Context.Tag("@spillway/remote/RemoteRecords")<RemoteRecords, Service>() {}

/** Records in memory: a restarted controller finds nothing. */
export const layerMemory: Layer.Layer<RemoteRecords> = Layer.sync(RemoteRecords, () => {
  const rows = new Map<string, RemoteRecord>()
  return {
    save: (r) => Effect.sync(() => void rows.set(r.generation, r)),
    list: Effect.sync(() => [...rows.values()].sort((a, b) => a.startedAt - b.startedAt || (a.generation < b.generation ? -1 : 1))),
    remove: (generation) => Effect.sync(() => void rows.delete(generation))
  }
})

const failed = (operation: string) => (e: SqlError | ParseResult.ParseError) =>
  new Errors.StoreFailed({
    operation: `remote record ${operation}`,
    reason: e._tag === "ParseError" ? `a stored row is not a record this store writes: ${e.message}` : e.message
  })

const Body = Schema.parseJson(RemoteRecord)

/** The record store over the SqlClient in context: creates its table if missing. */
export const make: Effect.Effect<Service, Errors.StoreFailed, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  yield* sql`CREATE TABLE IF NOT EXISTS spillway_remote_jobs (
    generation TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    channel TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    body TEXT NOT NULL
  )`.pipe(Effect.mapError(failed("create table")))
  const encode = Schema.encode(Body)
  const decodeAll = Schema.decodeUnknown(Schema.Array(Schema.Struct({ body: Body })))
  return {
    save: (r) =>
      Effect.flatMap(encode(r), (body) =>
        sql`INSERT INTO spillway_remote_jobs (generation, owner, channel, started_at, body)
          VALUES (${r.generation}, ${r.owner}, ${r.channel}, ${r.startedAt}, ${body})
          ON CONFLICT (generation) DO UPDATE SET body = ${body}`).pipe(Effect.asVoid, Effect.mapError(failed("save"))),
    list: sql`SELECT body FROM spillway_remote_jobs ORDER BY started_at, generation`.pipe(
      Effect.flatMap(decodeAll),
      Effect.map((rows) => rows.map((row) => row.body)),
      Effect.mapError(failed("list"))
    ),
    remove: (generation) =>
      sql`DELETE FROM spillway_remote_jobs WHERE generation = ${generation}`.pipe(Effect.asVoid, Effect.mapError(failed("remove")))
  }
})

/** Records in a database: a `postgres://` URL (controllers that share one view) or a SQLite file. */
export const layerFor = (location: string): Layer.Layer<RemoteRecords, Errors.StoreFailed> =>
  Layer.scoped(RemoteRecords, SqlBackend.withClient(SqlBackend.clientFor(location), make))
