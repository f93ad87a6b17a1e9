/**
 * Which SQL database holds manifests: SQLite in a file (the embedded
 * default), or PostgreSQL when a `postgres://` URL is given, so several
 * controllers share one view. Both stores (evidence manifests and job
 * records) speak SQL that both accept.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { ManifestStore } from "@spillway/core"
import { Effect, Redacted } from "effect"
import type { Scope } from "effect"

/** True when a manifests location names a PostgreSQL server rather than a SQLite file. */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//.test(location)

/** The manifests location from the environment: `SPILLWAY_MANIFESTS_URL`, when set. */
export const urlFromEnv = (): string | undefined => {
  const url = process.env.SPILLWAY_MANIFESTS_URL
  return url !== undefined && url !== "" ? url : undefined
}

/** A PostgreSQL client for a URL; a server that cannot be reached is a ManifestStoreError saying where. */
export const pgClient = (url: string): Effect.Effect<SqlClient.SqlClient, ManifestStore.ManifestStoreError, Scope.Scope> =>
  PgClient.make({ url: Redacted.make(url), maxConnections: 4 }).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((e) =>
      new ManifestStore.ManifestStoreError({
        operation: "open",
        reason: `cannot reach PostgreSQL at ${url.replace(/\/\/[^@/]*@/, "//")}: ${e.message}`
      })
    )
  )
