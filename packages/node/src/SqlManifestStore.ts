/**
 * The manifest store over `@effect/sql`'s generic `SqlClient`, with SQLite
 * (through `@effect/sql-sqlite-node`) as the embedded default and PostgreSQL
 * (through `@effect/sql-pg`) for controllers that share one view. One table,
 * `spillway_manifests`, in SQL that SQLite and PostgreSQL both accept.
 * Manifests are immutable: a second `put` of an id fails and never replaces
 * the first.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ManifestStore } from "@spillway/core"
import { Effect, Layer } from "effect"
import * as SqlBackend from "./SqlBackend.js"

/** How many ids one `DELETE ... IN (...)` names, well under every backend's parameter limit. */
const DELETE_CHUNK = 500

const COLUMNS =
  "id, owner, tool, status, created_at, expires_at, bytes, code_points, lines, source_bytes, checkpoints"

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

/** The reason of a SqlError, with the driver's own message (a constraint, a locked database...) when there is one. */
const reasonOf = (e: SqlError): string => {
  const outer = e.message !== "" ? e.message : "SQL error"
  const inner = messageOf(e.cause)
  return inner !== undefined && inner !== outer ? `${outer}: ${inner}` : outer
}

const storeError = (operation: string) => (e: SqlError) =>
  new ManifestStore.ManifestStoreError({ operation, reason: reasonOf(e) })

const corrupt = (operation: string, id: unknown, what: string) =>
  new ManifestStore.ManifestStoreError({ operation, reason: `stored row ${JSON.stringify(String(id))} has ${what}` })

/** A number from what a driver returns for an integer column: a number, a bigint (SQLite's safe integers) or a string (PostgreSQL's BIGINT and SUM). */
const toNumber = (u: unknown): number | undefined => {
  if (typeof u === "number") return Number.isFinite(u) ? u : undefined
  if (typeof u === "bigint") return Number(u)
  if (typeof u === "string" && u.trim() !== "") {
    const n = Number(u)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

const encodeCheckpoints = (checkpoints: ReadonlyArray<ManifestStore.Checkpoint>): string =>
  JSON.stringify(checkpoints.map((c) => [c.codePoint, c.byte]))

const decodeCheckpoints = (u: unknown): ReadonlyArray<ManifestStore.Checkpoint> | undefined => {
  let parsed: unknown
  try {
    parsed = typeof u === "string" ? JSON.parse(u) : u
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed)) return undefined
  const out: Array<ManifestStore.Checkpoint> = []
  for (const pair of parsed) {
    if (!Array.isArray(pair) || pair.length !== 2) return undefined
    const codePoint = toNumber(pair[0])
    const byte = toNumber(pair[1])
    if (codePoint === undefined || byte === undefined) return undefined
    out.push({ codePoint, byte })
  }
  return out
}

/** Decodes a row back to exactly the Manifest shape, or fails on a row this store could not have written. */
const decodeRow = (operation: string) =>
(row: Record<string, unknown>): Effect.Effect<ManifestStore.Manifest, ManifestStore.ManifestStoreError> =>
  Effect.try({
    try: () => {
      const text = (column: string): string => {
        const value = row[column]
        if (typeof value !== "string") throw corrupt(operation, row.id, `a non-text ${column}`)
        return value
      }
      const integer = (column: string): number => {
        const value = toNumber(row[column])
        if (value === undefined) throw corrupt(operation, row.id, `a non-numeric ${column}`)
        return value
      }
      const checkpoints = decodeCheckpoints(row.checkpoints)
      if (checkpoints === undefined) throw corrupt(operation, row.id, "malformed checkpoints")
      return {
        id: text("id"),
        owner: text("owner"),
        tool: text("tool"),
        status: text("status"),
        createdAt: integer("created_at"),
        expiresAt: integer("expires_at"),
        bytes: integer("bytes"),
        codePoints: integer("code_points"),
        lines: integer("lines"),
        sourceBytes: integer("source_bytes"),
        checkpoints
      }
    },
    catch: (e) => e instanceof ManifestStore.ManifestStoreError ? e : corrupt(operation, row.id, "an unreadable value")
  })

/** The manifest store over any SqlClient (SQLite, PostgreSQL, ...): creates its table if missing. */
export const make: Effect.Effect<ManifestStore.Service, ManifestStore.ManifestStoreError, SqlClient.SqlClient> = Effect
  .gen(function*() {
    // Column names are this store's own: no name transforms of the host's client apply.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()

    yield* sql`CREATE TABLE IF NOT EXISTS spillway_manifests (
      id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      tool TEXT NOT NULL,
      status TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      bytes BIGINT NOT NULL,
      code_points BIGINT NOT NULL,
      lines BIGINT NOT NULL,
      source_bytes BIGINT NOT NULL,
      checkpoints TEXT NOT NULL
    )`.pipe(Effect.mapError(storeError("create table")))
    yield* sql`CREATE INDEX IF NOT EXISTS spillway_manifests_expires_at ON spillway_manifests (expires_at)`.pipe(
      Effect.mapError(storeError("create index"))
    )

    const put = (m: ManifestStore.Manifest) =>
      sql`INSERT INTO spillway_manifests (${sql.literal(COLUMNS)}) VALUES (
        ${m.id}, ${m.owner}, ${m.tool}, ${m.status}, ${m.createdAt}, ${m.expiresAt},
        ${m.bytes}, ${m.codePoints}, ${m.lines}, ${m.sourceBytes}, ${encodeCheckpoints(m.checkpoints)}
      )`.pipe(Effect.asVoid, Effect.mapError(storeError("put")))

    const get = (id: string) =>
      sql<Record<string, unknown>>`SELECT ${sql.literal(COLUMNS)} FROM spillway_manifests WHERE id = ${id}`.pipe(
        Effect.mapError(storeError("get")),
        Effect.flatMap((rows) => rows.length === 0 ? Effect.succeed(undefined) : decodeRow("get")(rows[0]))
      )

    const retainedBytes = (now: number) =>
      sql<{ readonly total: unknown }>`SELECT COALESCE(SUM(bytes), 0) AS total FROM spillway_manifests WHERE expires_at > ${now}`
        .pipe(
          Effect.mapError(storeError("retainedBytes")),
          Effect.flatMap((rows) => {
            const total = rows.length === 0 ? 0 : toNumber(rows[0].total)
            return total === undefined
              ? Effect.fail(
                new ManifestStore.ManifestStoreError({ operation: "retainedBytes", reason: "the sum is not a number" })
              )
              : Effect.succeed(total)
          })
        )

    // Deletes exactly the rows it read, so a row written between the two statements is never removed unreturned.
    const takeExpired = (now: number) =>
      Effect.gen(function*() {
        const rows = yield* sql<Record<string, unknown>>`SELECT ${sql.literal(COLUMNS)} FROM spillway_manifests
          WHERE expires_at <= ${now} ORDER BY expires_at, id`
        const manifests = yield* Effect.forEach(rows, decodeRow("takeExpired"))
        for (let i = 0; i < manifests.length; i += DELETE_CHUNK) {
          const ids = manifests.slice(i, i + DELETE_CHUNK).map((m) => m.id)
          yield* sql`DELETE FROM spillway_manifests WHERE ${sql.in("id", ids)}`
        }
        return manifests
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", (e) => Effect.fail(storeError("takeExpired")(e)))
      )

    return { put, get, retainedBytes, takeExpired } satisfies ManifestStore.Service
  })

/** The manifest store over the SqlClient in context. */
export const layer: Layer.Layer<ManifestStore.ManifestStore, ManifestStore.ManifestStoreError, SqlClient.SqlClient> =
  Layer.effect(ManifestStore.ManifestStore, make)

/** The embedded default: SQLite in a file (created with its directory if missing, mode 0600 for the file). */
export const layerSqlite = (
  options: { readonly filename: string }
): Layer.Layer<ManifestStore.ManifestStore, ManifestStore.ManifestStoreError> =>
  Layer.scoped(ManifestStore.ManifestStore, SqlBackend.withClient(SqlBackend.sqliteClient(options.filename), make))

/** The store in a PostgreSQL database, for controllers that share one view. */
export const layerPg = (
  options: { readonly url: string }
): Layer.Layer<ManifestStore.ManifestStore, ManifestStore.ManifestStoreError> =>
  Layer.scoped(ManifestStore.ManifestStore, SqlBackend.withClient(SqlBackend.pgClient(options.url), make))

/** PostgreSQL for a `postgres://` URL, otherwise SQLite in the file it names. */
export const layerFor = (location: string): Layer.Layer<ManifestStore.ManifestStore, ManifestStore.ManifestStoreError> =>
  Layer.scoped(ManifestStore.ManifestStore, SqlBackend.withClient(SqlBackend.clientFor(location), make))
