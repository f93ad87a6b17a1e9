/**
 * Process jobs wired for Node: commands run through the platform's Node
 * command executor, spools and job records (SQLite, or PostgreSQL) live in the retention
 * directory, cursors are signed with a key kept there (so they survive a
 * restart), and masking uses the default rules plus the environment's
 * secrets. Without a directory, spools are temporary and nothing is restored.
 *
 * @since 0.1.0
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Cursor, Process, ProcessManifests, Secrets } from "@spillway/core"
import { Layer } from "effect"
import * as Path from "node:path"
import { layerKeyFile } from "./NodeEvidence.js"
import * as SqlBackend from "./SqlBackend.js"
import * as SqlProcessManifests from "./SqlProcessManifests.js"

/** Where spools and job records live, and the capture limits. */
export interface Options extends Process.Options {
  /**
   * Where job records live when there is a directory: a `postgres://` URL, or
   * a SQLite file; by default `SPILLWAY_MANIFESTS_URL`, else `jobs.sqlite` in the directory.
   */
  readonly manifests?: string | undefined
}

/**
 * The three capabilities, with the host's own `ProcessAuthorizer` left to
 * provide; with a directory, records go in `<directory>/jobs.sqlite` (or PostgreSQL) and the
 * cursor key in `<directory>/cursor.key`.
 */
export const layerWithout = (options: Options = {}) => {
  const directory = options.directory !== undefined ? Path.resolve(options.directory) : undefined
  return Process.layer({ ...options, directory }).pipe(
    Layer.provide(
      directory !== undefined
        ? Layer.merge(
          SqlProcessManifests.layerFor(options.manifests ?? SqlBackend.urlFromEnv() ?? Path.join(directory, "jobs.sqlite")),
          layerKeyFile(Path.join(directory, "cursor.key"))
        )
        : Layer.merge(ProcessManifests.layerMemory, Cursor.layerRandomKey)
    ),
    Layer.provide(NodeCommandExecutor.layer),
    Layer.provide(NodeFileSystem.layer),
    Layer.provide(NodePath.layer),
    Layer.provide(Secrets.layerFromEnv)
  )
}

/** The three capabilities, with owner and channel checks alone deciding access. */
export const layer = (options: Options = {}) =>
  layerWithout(options).pipe(Layer.provide(Process.allowOwners))
