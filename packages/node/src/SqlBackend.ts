/**
 * Which SQL database holds manifests: SQLite in a file (the embedded
 * default), or PostgreSQL when a `postgres://` URL is given, so several
 * controllers share one view. Both stores (evidence manifests and job
 * records) speak SQL that both accept.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { Errors } from "@spillway/core"
import { Duration, Effect, ExecutionStrategy, Exit, Redacted, Schedule, Scope } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** True when a manifests location names a PostgreSQL server rather than a SQLite file. */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//.test(location)

/** The manifests location from the environment: `SPILLWAY_MANIFESTS_URL`, when set. */
export const urlFromEnv = (): string | undefined => {
  const url = process.env.SPILLWAY_MANIFESTS_URL
  return url !== undefined && url !== "" ? url : undefined
}

/** The most connections one PostgreSQL client holds unless told otherwise (`SPILLWAY_PG_POOL`). */
export const DEFAULT_PG_POOL = 4

/** The largest pool a client may be given. */
export const MAX_PG_POOL = 64

/** How long a statement, or the opening of a client, that failed on a transient error is tried again unless told otherwise. */
export const DEFAULT_RETRY_FOR: Duration.Duration = Duration.seconds(5)

/** How a PostgreSQL client connects. */
export interface PgOptions {
  /** The most connections it holds at once: `SPILLWAY_PG_POOL`, else 4; from 1 to 64. */
  readonly pool?: number | undefined
  /**
   * How long an opening that failed on a transient error (a refused
   * connection, a server starting) is tried again, with backoff: 0 (the
   * default) opens once.
   */
  readonly retryFor?: Duration.DurationInput | undefined
}

const poolSize = (raw: number | string, where: string): number => {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > MAX_PG_POOL) {
    throw new RangeError(`${where} must be a whole number from 1 to ${MAX_PG_POOL}, got ${JSON.stringify(raw)}`)
  }
  return n
}

/** The pool size a client gets: the option, else `SPILLWAY_PG_POOL`, else 4; a value out of range throws a RangeError saying so. */
export const poolOf = (pool: number | undefined): number => {
  if (pool !== undefined) return poolSize(pool, "the PostgreSQL pool size")
  const raw = process.env.SPILLWAY_PG_POOL
  return raw === undefined || raw === "" ? DEFAULT_PG_POOL : poolSize(raw, "SPILLWAY_PG_POOL")
}

/**
 * A PostgreSQL client for a URL, holding at most `pool` connections (named
 * `spillway` in `pg_stat_activity`); a connection that is lost (a restarted
 * server, a terminated backend) is opened again by the next statement. A
 * server that cannot be reached, or a pool size out of range, is a
 * StoreFailed saying which.
 */
export const pgClient = (url: string, options: PgOptions = {}): Effect.Effect<SqlClient.SqlClient, Errors.StoreFailed, Scope.Scope> =>
  Effect.try({
    try: () => poolOf(options.pool),
    catch: (e) => new Errors.StoreFailed({ operation: "manifest open", reason: (e as Error).message })
  }).pipe(Effect.flatMap((maxConnections) =>
    // loaded when first needed, so that a program that never opens a database never loads a driver
    Effect.promise(() => import("@effect/sql-pg/PgClient")).pipe(
      Effect.flatMap((PgClient) =>
        PgClient.make({
          url: Redacted.make(url),
          maxConnections,
          // a server that does not answer fails the statement within seconds, not the driver's 30
          connectTimeout: "5 seconds",
          applicationName: "spillway"
        })
      ),
      Effect.provide(Reactivity.layer),
      // each try in a scope of its own, so a failed one leaves no pool behind
      inChildScope,
      retrying(options.retryFor ?? 0),
      Effect.mapError((e) =>
        new Errors.StoreFailed({
          operation: "manifest open",
          reason: `cannot reach PostgreSQL at ${url.replace(/\/\/[^@/]*@/, "//")}: ${e.message}`
        })
      )
    )
  ))

/** Runs a scoped effect in a scope of its own, kept open with the outer scope when it succeeds and closed at once when it fails. */
const inChildScope = <A, E, R>(self: Effect.Effect<A, E, R | Scope.Scope>): Effect.Effect<A, E, Exclude<R, Scope.Scope> | Scope.Scope> =>
  Effect.flatMap(Effect.scope, (outer) =>
    Effect.flatMap(Scope.fork(outer, ExecutionStrategy.sequential), (child) =>
      Scope.extend(self, child).pipe(Effect.onError(() => Scope.close(child, Exit.void)))))

/** Driver codes of a database that cannot grow or map its shared memory because the disk has no room left. */
const FULL = /^(SQLITE_FULL|SQLITE_IOERR_SHMSIZE|SQLITE_IOERR_WRITE|ENOSPC|EDQUOT)$/

/** The code of an error or of the error it wraps (`SqlError` keeps the driver's in `cause`). */
const codeOf = (u: unknown): string | undefined => {
  for (let e = u, depth = 0; typeof e === "object" && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === "string") return code
  }
  return undefined
}

/**
 * Driver codes of a failure that may pass: a refused, reset or lost
 * connection, a server shutting down or starting, too many connections, a
 * busy SQLite file. A statement that failed so may be tried again.
 */
const TRANSIENT =
  /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|CONNECTION_CLOSED|CONNECTION_DESTROYED|CONNECTION_ENDED|CONNECT_TIMEOUT|08\d{3}|08P01|57P0[123]|53300|40001|40P01|SQLITE_BUSY|SQLITE_LOCKED)$/

/**
 * Words of a PostgreSQL driver whose connection ended under a statement,
 * thrown with no code (the server stopped or restarted mid-statement).
 */
const TRANSIENT_WORDS = /^(Connection terminated|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/

/** True when a driver's error is one that may pass if the statement is tried again (see `TRANSIENT`, `TRANSIENT_WORDS`). */
export const isTransient = (u: unknown): boolean => {
  for (let e = u, depth = 0; typeof e === "object" && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === "string" && TRANSIENT.test(code)) return true
    const message = (e as { message?: unknown }).message
    if (code === undefined && typeof message === "string" && TRANSIENT_WORDS.test(message)) return true
  }
  return false
}

/** The first pause before a statement is tried again; each later pause doubles, up to `RETRY_CAP`. */
const RETRY_BASE = Duration.millis(50)

/** The longest pause between two tries. */
const RETRY_CAP = Duration.seconds(1)

/**
 * Tries an effect again while it fails on a transient error (see
 * `isTransient`), pausing 50 ms, then twice as long each time up to 1 s,
 * each pause jittered (from 0.8 to 1.2 times) so that controllers that lost
 * the same server do not come back in step; no new try starts once `window`
 * has passed since the first, so the whole takes at most `window` plus one
 * try (a try that cannot connect gives up after the client's 5-second
 * connect timeout). The last error is the one returned.
 */
export const retrying = (window: Duration.DurationInput) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Duration.toMillis(Duration.decode(window)) <= 0 ? self : Effect.retry(self, {
    schedule: Schedule.exponential(RETRY_BASE, 2).pipe(
      Schedule.union(Schedule.spaced(RETRY_CAP)),
      Schedule.jittered,
      Schedule.upTo(window)
    ),
    while: isTransient
  })

/** True when a driver's error says the disk is full. */
export const isDiskFull = (u: unknown): boolean => FULL.test(codeOf(u) ?? "")

const messageOf = (u: unknown): string => {
  if (typeof u === "object" && u !== null) {
    const e = u as { message?: unknown; code?: unknown }
    const message = typeof e.message === "string" && e.message !== "" ? e.message : undefined
    const code = typeof e.code === "string" || typeof e.code === "number" ? String(e.code) : undefined
    if (message !== undefined && code !== undefined) return `${code}: ${message}`
    if (message !== undefined || code !== undefined) return (message ?? code)!
  }
  return u === undefined ? "unknown error" : String(u)
}

/** A driver's error as a reason: what it says, led by "the disk is full" when that is why. */
export const reasonOf = (u: unknown, said: string = messageOf(u)): string =>
  isDiskFull(u)
    ? `the disk is full (${said}); free some space on it`
    : codeOf(u) === "SQLITE_READONLY"
    ? `${said}: the manifests are open for reading only (the disk was full when they were opened); free some space on it and start again`
    : said

const openError = (e: unknown) => new Errors.StoreFailed({ operation: "manifest open", reason: reasonOf(e) })

/** Creates the database file and its directory if missing, and keeps the file to its owner. */
const prepareFile = (filename: string) =>
  Effect.try({
    try: () => {
      Fs.mkdirSync(Path.dirname(filename), { recursive: true, mode: 0o700 })
      const fd = Fs.openSync(filename, Fs.constants.O_RDWR | Fs.constants.O_CREAT, 0o600)
      try {
        Fs.fchmodSync(fd, 0o600)
      } finally {
        Fs.closeSync(fd)
      }
    },
    catch: openError
  })

/**
 * A SQLite client on a file (created with its directory if missing, mode
 * 0600), or `:memory:`; a file that is no database is a StoreFailed.
 */
export const sqliteClient = (filename: string): Effect.Effect<SqlClient.SqlClient, Errors.StoreFailed, Scope.Scope> =>
  Effect.gen(function*() {
    if (filename !== ":memory:") yield* prepareFile(filename)
    // better-sqlite3 throws when it cannot open the file or finds no database in it
    const SqliteClient = yield* Effect.promise(() => import("@effect/sql-sqlite-node/SqliteClient"))
    const open = (source: string | Buffer, readonly: boolean) =>
      // the driver opens a Buffer as a database of its own in memory; the client hands `filename` to it as it is
      SqliteClient.make({ filename: source as string, readonly }).pipe(
        Effect.provide(Reactivity.layer),
        Effect.catchAllDefect((defect) => Effect.fail(defect))
      )
    return yield* open(filename, false).pipe(
      Effect.catchAll((defect) =>
        filename !== ":memory:" && isDiskFull(defect)
          ? Effect.flatMap(readOnlyCopy(filename, defect), (copy) => open(copy, true)).pipe(Effect.catchAll(() => Effect.fail(openError(defect))))
          : Effect.fail(openError(defect))
      )
    )
  })

/** The largest database `readOnlyCopy` reads into memory. */
const MAX_COPY_BYTES = 512 * 1024 * 1024

/**
 * The database file's bytes, to open read-only in memory when the disk is
 * too full for SQLite to map the write-ahead log's shared memory beside it
 * (`SQLITE_IOERR_SHMSIZE`): what the file holds is read, so reading kept
 * output goes on while nothing can be written. The header is marked as a
 * rollback-journal database, the only kind SQLite opens in memory. Rows
 * still only in a write-ahead log (a writer that crashed) are not seen.
 */
const readOnlyCopy = (filename: string, why: unknown) =>
  Effect.try({
    try: () => {
      if (Fs.statSync(filename).size > MAX_COPY_BYTES) throw why
      const bytes = Fs.readFileSync(filename)
      // bytes 18 and 19: the file format versions for writing and reading, 2 for WAL and 1 for a rollback journal
      if (bytes.length >= 100) bytes[18] = bytes[19] = 1
      return bytes
    },
    catch: () => why
  })

/** A client for a location: PostgreSQL for a `postgres://` URL (its opening tried again for `retryFor`), otherwise SQLite in the file it names. */
export const clientFor = (location: string, options: PgOptions = {}): Effect.Effect<SqlClient.SqlClient, Errors.StoreFailed, Scope.Scope> =>
  isPostgresUrl(location) ? pgClient(location, options) : sqliteClient(location)

/** Builds a store over a client. */
export const withClient = <A, E, E2>(
  client: Effect.Effect<SqlClient.SqlClient, E, Scope.Scope>,
  make: Effect.Effect<A, E2, SqlClient.SqlClient>
): Effect.Effect<A, E | E2, Scope.Scope> => Effect.flatMap(client, (c) => Effect.provideService(make, SqlClient.SqlClient, c))
