/**
 * What a controller records of the jobs it started on hosts, so a restarted
 * controller finds them again: the job's generation and pid, who started it
 * and from which channel, the command, the hash of the host's identity and of
 * the credential scope, and how the host said it ended and when its output
 * expires. Never the credential, and never output: output stays on the host.
 * In memory, or in SQLite or PostgreSQL (`spillway_remote_jobs`, and the
 * last address of each host in `spillway_remote_hosts`), each row decoded
 * with the record's schema. Every lookup is by key through an index, and
 * every listing is one caller's rows, filtered in SQL: a call costs the same
 * however many rows the whole fleet has written. A statement that fails on a
 * lost connection or a server restarting is tried again with capped,
 * jittered backoff for up to 5 seconds; then it fails with `StoreFailed`,
 * never with an empty answer.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Errors } from "@spillway/core"
import { SqlBackend } from "@spillway/node"
import { Context, type Duration, Effect, Layer, type ParseResult, Schema, Scope } from "effect"

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

/** Whose records: one caller on one host under one credential scope. */
export interface Key {
  readonly owner: string
  readonly channel: string
  /** The hash of the host's identity. */
  readonly host: string
  /** The hash of the credential scope. */
  readonly scopeHash: string
}

/** Which records a listing returns: one caller's, on one host and scope when named, and only those expired by a time when given. */
export interface Filter {
  readonly owner: string
  readonly channel: string
  readonly host?: string | undefined
  readonly scopeHash?: string | undefined
  /** Only records whose output the host said expires at or before this time (epoch ms). */
  readonly expiredBy?: number | undefined
}

/** A host a caller has jobs on: its identity hash, and the address a controller last reached it at, and when. */
export interface KnownHost {
  readonly host: string
  readonly address?: string | undefined
  /** When it was last reached there (epoch ms). */
  readonly seenAt?: number | undefined
}

/** Where a controller records its remote jobs. */
export interface Service {
  /** Records a job, replacing its earlier record. */
  readonly save: (record: RemoteRecord) => Effect.Effect<void, Errors.StoreFailed>
  /** Replaces a job's record if it is still there (a removed record stays removed); true when it was. */
  readonly update: (record: RemoteRecord) => Effect.Effect<boolean, Errors.StoreFailed>
  /** The newest record of a pid for a key, by index. */
  readonly find: (key: Key, pid: number) => Effect.Effect<RemoteRecord | undefined, Errors.StoreFailed>
  /** The records a filter selects, oldest first. */
  readonly list: (filter: Filter) => Effect.Effect<ReadonlyArray<RemoteRecord>, Errors.StoreFailed>
  readonly remove: (generation: string) => Effect.Effect<void, Errors.StoreFailed>
  /** Notes the address a host with this identity was reached at, and when. */
  readonly noteAddress: (host: string, address: string, seenAt: number) => Effect.Effect<void, Errors.StoreFailed>
  /** The hosts a caller has recorded jobs on, each with its last address when one was noted. */
  readonly hosts: (caller: { readonly owner: string; readonly channel: string }) => Effect.Effect<ReadonlyArray<KnownHost>, Errors.StoreFailed>
}

/** The record store. */
export class RemoteRecords extends Context.Tag("@spillway/remote/RemoteRecords")<RemoteRecords, Service>() {}

const byAge = (a: RemoteRecord, b: RemoteRecord) => a.startedAt - b.startedAt || (a.generation < b.generation ? -1 : a.generation > b.generation ? 1 : 0)

const selects = (f: Filter) => (r: RemoteRecord) =>
  r.owner === f.owner && r.channel === f.channel && (f.host === undefined || r.host === f.host) &&
  (f.scopeHash === undefined || r.scopeHash === f.scopeHash) &&
  (f.expiredBy === undefined || (r.expiresAt !== undefined && r.expiresAt <= f.expiredBy))

/** Records in memory: a restarted controller finds nothing. */
export const layerMemory: Layer.Layer<RemoteRecords> = Layer.sync(RemoteRecords, () => {
  const rows = new Map<string, RemoteRecord>()
  const addresses = new Map<string, { readonly address: string; readonly seenAt: number }>()
  const list = (f: Filter) => [...rows.values()].filter(selects(f)).sort(byAge)
  return {
    save: (r) => Effect.sync(() => void rows.set(r.generation, r)),
    update: (r) => Effect.sync(() => rows.has(r.generation) ? (rows.set(r.generation, r), true) : false),
    find: (key, pid) => Effect.sync(() => list(key).reverse().find((r) => r.pid === pid)),
    list: (f) => Effect.sync(() => list(f)),
    remove: (generation) => Effect.sync(() => void rows.delete(generation)),
    noteAddress: (host, address, seenAt) => Effect.sync(() => void addresses.set(host, { address, seenAt })),
    hosts: (caller) =>
      Effect.sync(() =>
        [...new Set(list(caller).map((r) => r.host))].sort().map((host) => ({ host, ...addresses.get(host) }))
      )
  }
})

const detailOf = (e: SqlError): string => {
  const inner = (e.cause as { message?: unknown } | undefined)?.message
  const outer = e.message !== "" ? e.message : "SQL error"
  return SqlBackend.reasonOf(e.cause, typeof inner === "string" && inner !== "" && inner !== outer ? `${outer}: ${inner}` : outer)
}

const failed = (operation: string) => (e: SqlError | ParseResult.ParseError | Errors.StoreFailed): Errors.StoreFailed =>
  e._tag === "StoreFailed" ? e : new Errors.StoreFailed({
    operation: `remote record ${operation}`,
    reason: e._tag === "ParseError"
      ? `a stored row is not a record this store writes: ${e.message}`
      : `the record store could not do it (${detailOf(e)}); nothing changed there, try again once the database answers`
  })

const Body = Schema.parseJson(RemoteRecord)

const Int = Schema.Union(Schema.Number, Schema.NumberFromString, Schema.transform(Schema.BigIntFromSelf, Schema.Number, {
  strict: true,
  decode: (b) => Number(b),
  encode: (n) => BigInt(n)
}))

const HostRow = Schema.Struct({ host: Schema.String, address: Schema.NullOr(Schema.String), seen_at: Schema.NullOr(Int) })

/** How the SQL store behaves. */
export interface Options {
  /** How long a statement (or the opening) that failed on a lost connection is tried again, with capped, jittered backoff; 5 seconds by default. */
  readonly retryFor?: Duration.DurationInput | undefined
  /** The most PostgreSQL connections the store holds (see `SqlBackend.PgOptions`). */
  readonly pool?: number | undefined
}

/** The record store over the SqlClient in context: creates its tables and indexes if missing. */
export const makeWith = (options: Options = {}): Effect.Effect<Service, Errors.StoreFailed, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const retry = SqlBackend.retrying(options.retryFor ?? SqlBackend.DEFAULT_RETRY_FOR)
    yield* sql`CREATE TABLE IF NOT EXISTS spillway_remote_jobs (
      generation TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      channel TEXT NOT NULL,
      started_at BIGINT NOT NULL,
      body TEXT NOT NULL,
      host TEXT,
      scope_hash TEXT,
      pid BIGINT,
      expires_at BIGINT
    )`.pipe(retry, Effect.mapError(failed("create table")))
    yield* migrate(sql).pipe(retry, Effect.mapError(failed("migrate")))
    yield* sql`CREATE INDEX IF NOT EXISTS spillway_remote_jobs_key
      ON spillway_remote_jobs (owner, channel, host, scope_hash, pid, started_at)`.pipe(retry, Effect.mapError(failed("create index")))
    yield* sql`CREATE TABLE IF NOT EXISTS spillway_remote_hosts (
      host TEXT PRIMARY KEY,
      address TEXT NOT NULL,
      seen_at BIGINT NOT NULL
    )`.pipe(retry, Effect.mapError(failed("create table")))
    const encode = Schema.encode(Body)
    const decodeAll = Schema.decodeUnknown(Schema.Array(Schema.Struct({ body: Body })))
    const decodeHosts = Schema.decodeUnknown(Schema.Array(HostRow))
    const bodies = (rows: ReadonlyArray<unknown>) => Effect.map(decodeAll(rows), (all) => all.map((row) => row.body))
    const run = (operation: string) => <A>(self: Effect.Effect<A, SqlError | ParseResult.ParseError>) =>
      self.pipe(retry, Effect.mapError(failed(operation)))
    const where = (f: Filter) =>
      sql.and([
        sql`owner = ${f.owner}`,
        sql`channel = ${f.channel}`,
        ...(f.host !== undefined ? [sql`host = ${f.host}`] : []),
        ...(f.scopeHash !== undefined ? [sql`scope_hash = ${f.scopeHash}`] : []),
        ...(f.expiredBy !== undefined ? [sql`expires_at IS NOT NULL AND expires_at <= ${f.expiredBy}`] : [])
      ])
    return {
      save: (r) =>
        Effect.flatMap(encode(r), (body) =>
          sql`INSERT INTO spillway_remote_jobs (generation, owner, channel, started_at, body, host, scope_hash, pid, expires_at)
            VALUES (${r.generation}, ${r.owner}, ${r.channel}, ${r.startedAt}, ${body}, ${r.host}, ${r.scopeHash}, ${r.pid}, ${r.expiresAt ?? null})
            ON CONFLICT (generation) DO UPDATE SET body = ${body}, expires_at = ${r.expiresAt ?? null}`).pipe(Effect.asVoid, run("save")),
      update: (r) =>
        Effect.flatMap(encode(r), (body) =>
          sql<{ readonly generation: string }>`UPDATE spillway_remote_jobs SET body = ${body}, expires_at = ${r.expiresAt ?? null}
            WHERE generation = ${r.generation} RETURNING generation`).pipe(Effect.map((rows) => rows.length > 0), run("update")),
      find: (key, pid) =>
        sql`SELECT body FROM spillway_remote_jobs WHERE ${where(key)} AND pid = ${pid}
          ORDER BY started_at DESC, generation DESC LIMIT 1`.pipe(Effect.flatMap(bodies), Effect.map((found) => found[0]), run("find")),
      list: (f) =>
        sql`SELECT body FROM spillway_remote_jobs WHERE ${where(f)} ORDER BY started_at, generation`.pipe(Effect.flatMap(bodies), run("list")),
      remove: (generation) => sql`DELETE FROM spillway_remote_jobs WHERE generation = ${generation}`.pipe(Effect.asVoid, run("remove")),
      noteAddress: (host, address, seenAt) =>
        sql`INSERT INTO spillway_remote_hosts (host, address, seen_at) VALUES (${host}, ${address}, ${seenAt})
          ON CONFLICT (host) DO UPDATE SET address = ${address}, seen_at = ${seenAt}`.pipe(Effect.asVoid, run("note address")),
      hosts: (caller) =>
        sql`SELECT k.host AS host, h.address AS address, h.seen_at AS seen_at
          FROM (SELECT DISTINCT host FROM spillway_remote_jobs WHERE owner = ${caller.owner} AND channel = ${caller.channel}) k
          LEFT JOIN spillway_remote_hosts h ON h.host = k.host ORDER BY k.host`.pipe(
          Effect.flatMap(decodeHosts),
          Effect.map((rows) =>
            rows.map((r) => r.address === null ? { host: r.host } : { host: r.host, address: r.address, seenAt: r.seen_at ?? undefined })
          ),
          run("hosts")
        )
    }
  })

/** The record store over the SqlClient in context, with the default options. */
export const make: Effect.Effect<Service, Errors.StoreFailed, SqlClient.SqlClient> = makeWith()

/** Rows a table written before the key columns existed holds, filled from their bodies this many at a time. */
const MIGRATE_CHUNK = 500

/** Adds the key columns to a table written before they existed, and fills them in from each row's body. */
const migrate = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    for (const column of ["host TEXT", "scope_hash TEXT", "pid BIGINT", "expires_at BIGINT"]) {
      // the column is there already on every table this version created: the statement then fails, and that is fine
      yield* Effect.ignore(sql.unsafe(`ALTER TABLE spillway_remote_jobs ADD COLUMN ${column}`))
    }
    const decode = Schema.decodeUnknown(Schema.Array(Schema.Struct({ body: Body })))
    for (;;) {
      const rows = yield* sql`SELECT body FROM spillway_remote_jobs WHERE host IS NULL LIMIT ${MIGRATE_CHUNK}`
      if (rows.length === 0) return
      const records = yield* Effect.orDie(decode(rows))
      for (const { body: r } of records) {
        yield* sql`UPDATE spillway_remote_jobs SET host = ${r.host}, scope_hash = ${r.scopeHash}, pid = ${r.pid}, expires_at = ${r.expiresAt ?? null}
          WHERE generation = ${r.generation}`
      }
    }
  })

/**
 * Records in a database: a `postgres://` URL (controllers that share one
 * view) or a SQLite file. The database is opened at the first call, not
 * when the layer is built, so a controller starts while its database is
 * down; every call then fails with `StoreFailed` until it is back, and a
 * failed open is tried again at the next call.
 */
export const layerFor = (location: string, options: Options = {}): Layer.Layer<RemoteRecords> =>
  Layer.scoped(
    RemoteRecords,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const lock = yield* Effect.makeSemaphore(1)
      let opened: Service | undefined
      const open = lock.withPermits(1)(Effect.suspend(() =>
        opened !== undefined
          ? Effect.succeed(opened)
          : SqlBackend.withClient(SqlBackend.clientFor(location, { pool: options.pool, retryFor: options.retryFor ?? SqlBackend.DEFAULT_RETRY_FOR }), makeWith(options)).pipe(
            Scope.extend(scope),
            Effect.tap((store) => Effect.sync(() => void (opened = store)))
          )
      ))
      const via = <A extends ReadonlyArray<unknown>, B>(f: (store: Service) => (...args: A) => Effect.Effect<B, Errors.StoreFailed>) =>
      (...args: A) => Effect.flatMap(open, (store) => f(store)(...args))
      return {
        save: via((s) => s.save),
        update: via((s) => s.update),
        find: via((s) => s.find),
        list: via((s) => s.list),
        remove: via((s) => s.remove),
        noteAddress: via((s) => s.noteAddress),
        hosts: via((s) => s.hosts)
      } satisfies Service
    })
  )
