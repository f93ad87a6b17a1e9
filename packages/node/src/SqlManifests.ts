/**
 * The manifests of bodies in SQL: SQLite in a file (the embedded default,
 * through `@effect/sql-sqlite-node`) or PostgreSQL (through `@effect/sql-pg`)
 * for hosts that share one view. One table, `spillway_bodies`, in SQL both
 * accept; every row read back is decoded with the manifest's `Schema`, so a
 * row this store could not have written is an error, never a cast. A
 * statement (or a transaction) that fails on a lost connection or a server
 * restarting is tried again with capped, jittered backoff for up to 5
 * seconds (`Options.retryFor`); then it fails with `StoreFailed`. A write
 * whose first try reached the database before its connection was lost is
 * found there by the next try, and counts as done.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Errors, Manifests } from "@spillway/core"
import { Duration, Effect, Layer, ParseResult, Schema, Scope } from "effect"
import * as ManifestRows from "./ManifestRows.js"
import * as SqlBackend from "./SqlBackend.js"

/** How many ids one `DELETE ... IN (...)` names, well under every backend's parameter limit. */
const DELETE_CHUNK = 500

/** An integer column as drivers return it: a number, a bigint (SQLite's safe integers) or a string (PostgreSQL's BIGINT). */
const Int = Schema.Union(
  Schema.Number,
  Schema.NumberFromString,
  Schema.transform(Schema.BigIntFromSelf, Schema.Number, { strict: true, decode: (b) => Number(b), encode: (n) => BigInt(n) })
)

// Checked in one pass: a large body's checkpoints number tens of thousands.
const Numbers = Schema.declare(
  (u: unknown): u is ReadonlyArray<number> => Array.isArray(u) && u.every((n) => typeof n === "number"),
  { identifier: "Numbers", description: "an array of numbers" }
)

/** Code-point checkpoints, kept compact as one flat array `[codePoint, byte, codePoint, byte, ...]`. */
const FlatCheckpoints = Schema.transformOrFail(
  Schema.parseJson(Numbers),
  Manifests.Manifest.fields.checkpoints,
  {
    strict: true,
    decode: (flat, _, ast) =>
      flat.length % 2 === 0
        ? ParseResult.succeed(Array.from({ length: flat.length / 2 }, (_, i) => ({ codePoint: flat[2 * i]!, byte: flat[2 * i + 1]! })))
        : ParseResult.fail(new ParseResult.Type(ast, flat, "checkpoints come in pairs")),
    encode: (checkpoints) => ParseResult.succeed(checkpoints.flatMap((c) => [c.codePoint, c.byte]))
  }
)

/** A row of `spillway_bodies`, decoded into a manifest and encoded from one. */
const Row = Schema.transform(
  Schema.Struct({
    id: Schema.String,
    profile: Schema.String,
    owner: Schema.String,
    channel: Schema.String,
    channel_bound: Int,
    tool: Schema.String,
    status: Schema.String,
    state: Schema.Literal("writing", "complete"),
    created_at: Int,
    expires_at: Schema.NullOr(Int),
    bytes: Int,
    code_points: Int,
    lines: Int,
    source_bytes: Int,
    kept: Schema.Literal("whole", "head"),
    capture_error: Schema.NullOr(Schema.String),
    checkpoints: FlatCheckpoints,
    line_index: Schema.parseJson(Manifests.LineCheckpoints),
    origin: Schema.parseJson(Manifests.Origin)
  }),
  Manifests.Manifest,
  {
    strict: true,
    decode: (r) => ({
      id: r.id,
      profile: r.profile,
      owner: r.owner,
      channel: r.channel,
      channelBound: r.channel_bound !== 0,
      tool: r.tool,
      status: r.status,
      state: r.state,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      bytes: r.bytes,
      codePoints: r.code_points,
      lines: r.lines,
      sourceBytes: r.source_bytes,
      kept: r.kept,
      captureError: r.capture_error,
      checkpoints: r.checkpoints,
      lineIndex: r.line_index,
      origin: r.origin
    }),
    encode: (m) => ({
      id: m.id,
      profile: m.profile,
      owner: m.owner,
      channel: m.channel,
      channel_bound: m.channelBound ? 1 : 0,
      tool: m.tool,
      status: m.status,
      state: m.state,
      created_at: m.createdAt,
      expires_at: m.expiresAt,
      bytes: m.bytes,
      code_points: m.codePoints,
      lines: m.lines,
      source_bytes: m.sourceBytes,
      kept: m.kept,
      capture_error: m.captureError,
      checkpoints: m.checkpoints,
      line_index: m.lineIndex,
      origin: m.origin
    })
  }
)

const COLUMNS = ManifestRows.COLUMNS

const messageOf = (u: unknown): string | undefined => {
  if (typeof u === "object" && u !== null) {
    const e = u as { message?: unknown; code?: unknown }
    const message = typeof e.message === "string" && e.message !== "" ? e.message : undefined
    const code = typeof e.code === "string" || typeof e.code === "number" ? String(e.code) : undefined
    if (message !== undefined && code !== undefined) return `${code}: ${message}`
    return message ?? code
  }
  return u === undefined ? undefined : String(u)
}

const failed = (operation: string) => (e: SqlError | ParseResult.ParseError | Errors.StoreFailed): Errors.StoreFailed => {
  if (e._tag === "StoreFailed") return e
  if (e._tag === "ParseError") {
    return new Errors.StoreFailed({ operation: `manifest ${operation}`, reason: `a stored row is not a manifest this store writes: ${e.message}` })
  }
  const outer = e.message !== "" ? e.message : "SQL error"
  const inner = messageOf(e.cause)
  return new Errors.StoreFailed({
    operation: `manifest ${operation}`,
    reason: SqlBackend.reasonOf(e, inner !== undefined && inner !== outer ? `${outer}: ${inner}` : outer)
  })
}

/**
 * A statement the driver threw on outside the client's error channel (a
 * transaction whose rollback failed, on a full disk) fails as StoreFailed
 * too, so a caller that records a manifest learns it was not recorded
 * instead of its fiber dying.
 */
const guarded = (operation: string) => <A, R>(self: Effect.Effect<A, Errors.StoreFailed, R>): Effect.Effect<A, Errors.StoreFailed, R> =>
  Effect.catchAllDefect(self, (defect) =>
    Effect.fail(
      typeof defect === "object" && defect !== null && (defect as { _tag?: unknown })._tag === "SqlError"
        ? failed(operation)(defect as SqlError)
        : new Errors.StoreFailed({ operation: `manifest ${operation}`, reason: SqlBackend.reasonOf(defect, messageOf(defect) ?? "unknown error") })
    ))

/** How the SQL manifest store behaves. */
export interface Options {
  /**
   * How long a statement that failed on a transient error (a lost or
   * refused connection, a server restarting, a busy SQLite file) is tried
   * again, with backoff; 5 seconds by default, 0 to try once.
   */
  readonly retryFor?: Duration.DurationInput | undefined
}

/** Driver codes of a key that is already there: a write's earlier try reached the database. */
const DUPLICATE = /^(23505|SQLITE_CONSTRAINT_PRIMARYKEY|SQLITE_CONSTRAINT_UNIQUE)$/

const isDuplicate = (u: unknown): boolean => {
  for (let e = u, depth = 0; typeof e === "object" && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === "string" && DUPLICATE.test(code)) return true
  }
  return false
}

/** The manifest store over any SqlClient (SQLite, PostgreSQL, ...), with options: creates its table if missing. */
export const makeWith = (options: Options = {}): Effect.Effect<Manifests.Service, Errors.StoreFailed, SqlClient.SqlClient> => Effect.gen(function*() {
  // Column names are this store's own: no name transforms of the host's client apply.
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const columns = sql.literal(COLUMNS.join(", "))
  const retry = SqlBackend.retrying(options.retryFor ?? SqlBackend.DEFAULT_RETRY_FOR)

  yield* sql`CREATE TABLE IF NOT EXISTS spillway_bodies (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    owner TEXT NOT NULL,
    channel TEXT NOT NULL,
    channel_bound INTEGER NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    bytes BIGINT NOT NULL,
    code_points BIGINT NOT NULL,
    lines BIGINT NOT NULL,
    source_bytes BIGINT NOT NULL,
    kept TEXT NOT NULL,
    capture_error TEXT,
    checkpoints TEXT NOT NULL,
    line_index TEXT NOT NULL,
    origin TEXT NOT NULL
  )`.pipe(retry, Effect.mapError(failed("create table")))
  yield* sql`CREATE INDEX IF NOT EXISTS spillway_bodies_expires_at ON spillway_bodies (expires_at)`.pipe(
    retry,
    Effect.mapError(failed("create index"))
  )
  yield* sql`CREATE INDEX IF NOT EXISTS spillway_bodies_owner ON spillway_bodies (owner, profile)`.pipe(
    retry,
    Effect.mapError(failed("create index"))
  )
  // a listing's pages, newest first, read in index order: the first page costs the same however many rows there are
  yield* sql`CREATE INDEX IF NOT EXISTS spillway_bodies_listing ON spillway_bodies (owner, profile, created_at, id)`.pipe(
    retry,
    Effect.mapError(failed("create index"))
  )

  const encode = Schema.encode(Row)
  const decodeAll = Schema.decodeUnknown(Schema.Array(Row))

  /** The stored row of a manifest, as it would be encoded, or undefined when there is none. */
  const storedRow = (id: string) =>
    Effect.flatMap(sql`SELECT ${columns} FROM spillway_bodies WHERE id = ${id}`, (rows) =>
      rows.length === 0 ? Effect.succeed(undefined) : Effect.flatMap(decodeAll(rows), (all) => encode(all[0]!)))

  /** True when the stored row is exactly what `m` encodes to: a write tried again finds its earlier try done. */
  const holds = (m: Manifests.Manifest) =>
    Effect.zipWith(storedRow(m.id), encode(m), (stored, row) => stored !== undefined && JSON.stringify(stored) === JSON.stringify(row))

  const insert = (m: Manifests.Manifest) => {
    let tries = 0
    const once = Effect.suspend(() => {
      tries++
      return Effect.flatMap(encode(m), (row) => sql`INSERT INTO spillway_bodies ${sql.insert(row)}`)
    }).pipe(
      Effect.asVoid,
      // a key already there on a later try is this write's own first try, when the row is the same
      Effect.catchIf(
        (e) => tries > 1 && e._tag === "SqlError" && isDuplicate(e),
        (e) => Effect.flatMap(holds(m), (same) => same ? Effect.void : Effect.fail(e))
      )
    )
    return once.pipe(retry, Effect.mapError(failed("insert")))
  }

  const findById = SqlSchema.findOne({
    Request: Schema.String,
    Result: Row,
    execute: (id) => sql`SELECT ${columns} FROM spillway_bodies WHERE id = ${id}`
  })

  const get = (id: string) =>
    findById(id).pipe(
      Effect.map((found) => found._tag === "Some" ? found.value : undefined),
      retry,
      Effect.mapError(failed("get"))
    )

  const update = (m: Manifests.Manifest) => {
    let tries = 0
    return Effect.gen(function*() {
      tries++
      const rows = yield* sql<{ readonly state: string }>`SELECT state FROM spillway_bodies WHERE id = ${m.id}`
      if (rows.length === 0) return yield* new Errors.StoreFailed({ operation: "manifest update", reason: `no manifest with id ${m.id}` })
      if (rows[0]!.state === "complete") {
        // the earlier try of this very update committed before its connection was lost
        if (tries > 1 && (yield* holds(m))) return
        return yield* new Errors.StoreFailed({ operation: "manifest update", reason: `${m.id} is complete and never changes` })
      }
      const { id, ...row } = yield* encode(m)
      yield* sql`UPDATE spillway_bodies SET ${sql.update(row)} WHERE id = ${id} AND state = 'writing'`
    }).pipe(sql.withTransaction, retry, Effect.mapError(failed("update")))
  }

  const list = (filter: Manifests.Filter = {}) =>
    Effect.gen(function*() {
      const before = filter.before
      // a text filter as a LIKE pattern, its own %, _ and backslash taken literally; LOWER on both sides for every engine
      const like = filter.text !== undefined && filter.text !== ""
        ? `%${filter.text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
        : undefined
      const where = [
        ...(filter.profile !== undefined ? [sql`profile = ${filter.profile}`] : []),
        ...(filter.owner !== undefined ? [sql`owner = ${filter.owner}`] : []),
        ...(before !== undefined ? [sql`(created_at < ${before.createdAt} OR (created_at = ${before.createdAt} AND id < ${before.id}))`] : []),
        ...(like !== undefined
          ? [sql`(LOWER(id) LIKE ${like} ESCAPE '\\' OR LOWER(tool) LIKE ${like} ESCAPE '\\' OR LOWER(status) LIKE ${like} ESCAPE '\\' OR LOWER(origin) LIKE ${like} ESCAPE '\\')`]
          : [])
      ]
      const rows = filter.limit === undefined
        ? yield* sql`SELECT ${columns} FROM spillway_bodies WHERE ${sql.and(where)} ORDER BY created_at, id`
        : yield* sql`SELECT ${columns} FROM spillway_bodies WHERE ${sql.and(where)} ORDER BY created_at DESC, id DESC LIMIT ${filter.limit}`
      return yield* decodeAll(rows)
    }).pipe(retry, Effect.mapError(failed("list")))

  // Deletes exactly the rows it read, so a row written between the two statements is never removed unreturned.
  const takeExpired = (now: number) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT ${columns} FROM spillway_bodies
        WHERE expires_at IS NOT NULL AND expires_at <= ${now} ORDER BY expires_at, id`
      const manifests = yield* decodeAll(rows)
      for (let i = 0; i < manifests.length; i += DELETE_CHUNK) {
        const ids = manifests.slice(i, i + DELETE_CHUNK).map((m) => m.id)
        yield* sql`DELETE FROM spillway_bodies WHERE ${sql.in("id", ids)}`
      }
      return manifests
    }).pipe(sql.withTransaction, retry, Effect.mapError(failed("takeExpired")))

  const remove = (id: string) =>
    sql`DELETE FROM spillway_bodies WHERE id = ${id}`.pipe(Effect.asVoid, retry, Effect.mapError(failed("remove")))

  return {
    insert: (m) => guarded("insert")(insert(m)),
    update: (m) => guarded("update")(update(m)),
    get: (id) => guarded("get")(get(id)),
    list: (filter) => guarded("list")(list(filter)),
    takeExpired: (now) => guarded("takeExpired")(takeExpired(now)),
    remove: (id) => guarded("remove")(remove(id))
  } satisfies Manifests.Service
})

/** The manifest store over any SqlClient (SQLite, PostgreSQL, ...): creates its table if missing. */
export const make: Effect.Effect<Manifests.Service, Errors.StoreFailed, SqlClient.SqlClient> = makeWith()

/** The manifest store over the SqlClient in context. */
export const layer: Layer.Layer<Manifests.Manifests, Errors.StoreFailed, SqlClient.SqlClient> = Layer.effect(Manifests.Manifests, make)

/**
 * PostgreSQL for a `postgres://` URL, otherwise SQLite in the file it names
 * (created with its directory, mode 0600). The database is opened at the
 * first call, not when the layer is built, so a directory that cannot be
 * written fails the calls that need it (each with a clear error) rather than
 * every program that merely could keep output there. An open that fails on
 * a transient error is tried again within `retryFor`, and a failed open is
 * tried again at the next call.
 */
export const layerFor = (location: string, options: Options = {}): Layer.Layer<Manifests.Manifests> =>
  Layer.scoped(
    Manifests.Manifests,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const lock = yield* Effect.makeSemaphore(1)
      let opened: Manifests.Service | undefined
      const open = lock.withPermits(1)(Effect.suspend(() =>
        opened !== undefined
          ? Effect.succeed(opened)
          : SqlBackend.withClient(
            SqlBackend.clientFor(location, { retryFor: options.retryFor ?? SqlBackend.DEFAULT_RETRY_FOR }),
            makeWith(options)
          ).pipe(
            Scope.extend(scope),
            Effect.tap((store) => Effect.sync(() => void (opened = store)))
          )
      ))
      const via = <A extends ReadonlyArray<unknown>, B>(f: (store: Manifests.Service) => (...args: A) => Effect.Effect<B, Errors.StoreFailed>) =>
      (...args: A) => Effect.flatMap(open, (store) => f(store)(...args))
      return {
        insert: via((s) => s.insert),
        update: via((s) => s.update),
        get: via((s) => s.get),
        list: via((s) => s.list),
        takeExpired: via((s) => s.takeExpired),
        remove: via((s) => s.remove)
      } satisfies Manifests.Service
    })
  )
