/**
 * The body store on Node: bytes in one directory (`SPILLWAY_OUTPUT_DIR`, or
 * `~/.spillway/tool-output`), manifests in SQLite beside them (or in
 * PostgreSQL, given a `postgres://` URL in `SPILLWAY_MANIFESTS_URL`), one
 * retention quota for every profile, masking from the default rules plus
 * the environment's secrets, and owners reading what is theirs unless a
 * host provides its own authorizer.
 *
 * @since 0.1.0
 */
import { Access, Body, Errors, Retention, Secrets } from "@spillway/core"
import { Duration, Effect, Layer, Schedule } from "effect"
import * as Os from "node:os"
import * as Path from "node:path"
import * as NodeBodyFiles from "./NodeBodyFiles.js"
import * as NodeSecrets from "./NodeSecrets.js"
import * as SqlBackend from "./SqlBackend.js"
import * as SqlManifests from "./SqlManifests.js"

/** Where bodies live and how much of them. */
export interface Options {
  /** The directory; `SPILLWAY_OUTPUT_DIR` or `~/.spillway/tool-output` by default. */
  readonly directory?: string | undefined
  /**
   * Where manifests live: a `postgres://` URL, or a SQLite file; by default
   * `SPILLWAY_MANIFESTS_URL`, else `.manifests.sqlite` in the directory.
   */
  readonly manifests?: string | undefined
  /** Limits per profile, over `Retention.defaultPools`. */
  readonly pools?: Readonly<Record<string, Retention.Pool>> | undefined
  /** How `layer` masks a long output on a second core (see `NodeSecrets.WorkerOptions`); its defaults otherwise. */
  readonly maskWorker?: Omit<NodeSecrets.WorkerOptions, "knownValues"> | undefined
}

/** The directory bodies live in, from an option or the environment. */
export const directoryOf = (options: Options = {}): string =>
  Path.resolve(options.directory ?? NodeBodyFiles.defaultDirectoryFromEnv())

/** Where the manifests of a directory live, from an option or the environment. */
export const manifestsOf = (options: Options = {}): string =>
  options.manifests ?? SqlBackend.urlFromEnv() ?? Path.join(directoryOf(options), ".manifests.sqlite")

/** The caller from the environment: `SPILLWAY_OWNER` (the user's name by default) on `SPILLWAY_CHANNEL` (`fallback` by default). */
export const callerFromEnv = (fallback: string): Access.Caller => ({
  owner: process.env.SPILLWAY_OWNER !== undefined && process.env.SPILLWAY_OWNER !== "" ? process.env.SPILLWAY_OWNER : Os.userInfo().username,
  channel: process.env.SPILLWAY_CHANNEL !== undefined && process.env.SPILLWAY_CHANNEL !== "" ? process.env.SPILLWAY_CHANNEL : fallback
})

/**
 * Layers already made, by what they are made of: asked again for the same
 * directory, manifests and limits, `layerWithout` and `layer` give the same
 * layer, and Effect builds a layer once in a program's layer graph however
 * many layers use it. So every profile a program combines over one
 * directory (`NodeSpill`, `NodeEvidence`, `NodeProcess`, ...) writes
 * through one store with one quota, and never counts the directory twice.
 */
const made = new Map<string, Layer.Layer<Body.Bodies | Retention.Retention, Errors.StoreFailed, any>>()

/** What tells one store from another: the directory, where its manifests are, and its limits. */
const keyOf = (options: Options, extra: unknown = null) =>
  JSON.stringify([directoryOf(options), manifestsOf(options), options.pools ?? null, extra])

const memoized = <R>(key: string, make: () => Layer.Layer<Body.Bodies | Retention.Retention, Errors.StoreFailed, R>) => {
  let layer = made.get(key) as Layer.Layer<Body.Bodies | Retention.Retention, Errors.StoreFailed, R> | undefined
  if (layer === undefined) {
    layer = make()
    made.set(key, layer)
  }
  return layer
}

/**
 * The body store and its quota, with the masker and the authorizer left to
 * the host: one store per directory in a program's layer graph (the same
 * layer for the same directory, manifests and limits), and a store of its
 * own for each directory.
 */
export const layerWithout = (
  options: Options = {}
): Layer.Layer<Body.Bodies | Retention.Retention, Errors.StoreFailed, Secrets.Secrets | Access.Authorizer> =>
  memoized(keyOf(options), () =>
    // fresh: `Body.layer` is one value, which Effect would otherwise build once for every directory of a graph
    Layer.fresh(Body.layer).pipe(
      Layer.provideMerge(Retention.layer(options.pools)),
      Layer.provide(NodeBodyFiles.layer({ directory: directoryOf(options) })),
      Layer.provide(SqlManifests.layerFor(manifestsOf(options)))
    ))

/**
 * The body store and its quota, masking the environment's secrets (a long
 * output on a second core, see `NodeSecrets`), owners reading what is
 * theirs; one per directory in a layer graph, as `layerWithout`.
 */
export const layer = (options: Options = {}): Layer.Layer<Body.Bodies | Retention.Retention, Errors.StoreFailed> =>
  memoized(keyOf(options, options.maskWorker ?? null), () =>
    layerWithout(options).pipe(Layer.provide(NodeSecrets.layerWorkerFromEnv(options.maskWorker)), Layer.provide(Access.allowOwners)))

/** Removes expired bodies and writers' debris every `everyMillis`, for as long as the scope lasts. */
export const sweepEvery = (everyMillis: number) =>
  Effect.flatMap(Body.Bodies, (bodies) =>
    Effect.forkScoped(Effect.repeat(Effect.ignore(bodies.sweep), Schedule.spaced(Duration.millis(everyMillis)))))
