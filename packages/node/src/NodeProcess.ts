/**
 * Process jobs wired for Node: commands run through the fast Node child
 * runner, spools are bodies in the directory with their manifests beside
 * them (SQLite, or PostgreSQL), cursors are signed with the directory's key
 * (so they survive a restart), and masking uses the default rules plus the
 * environment's secrets. Without a directory, spools go to a temporary one
 * that ends with the layer, and nothing is restored.
 *
 * @since 0.1.0
 */
import { Access, BodyFiles, Body, Cursor, Manifests, Process, ProcessView, Retention } from "@spillway/core"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as NodeBodies from "./NodeBodies.js"
import * as NodeBodyFiles from "./NodeBodyFiles.js"
import * as NodeChild from "./NodeChild.js"
import { keyFileOf, layerKeyFile } from "./NodeEvidence.js"
import * as NodeSecrets from "./NodeSecrets.js"

/** Where spools live, and the capture limits. */
export interface Options extends Process.Options, NodeBodies.Options {}

/** A body store in a fresh temporary directory, removed with the layer, its manifests in memory. */
const temporaryBodies = (pools: NodeBodies.Options["pools"]) =>
  Layer.fresh(Body.layer).pipe(
    Layer.provideMerge(Retention.layer(pools)),
    Layer.provide(Layer.scoped(
      BodyFiles.BodyFiles,
      Effect.acquireRelease(
        Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-spool-"))),
        (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
      ).pipe(Effect.map(NodeBodyFiles.make))
    )),
    Layer.provide(Manifests.layerMemory)
  )

/**
 * The three capabilities, with the host's own authorizer and masker left to
 * provide. The views they give a program say how to read on in the
 * library's words (`Process.poll(caller, { pid, cursor })`,
 * `ProcessView.libraryHints`); a host that hands them to a model provides
 * `ProcessView.CurrentHints` with the words the model calls in.
 */
export const layerWithout = (options: Options = {}) =>
  layerOver(options, options.directory !== undefined ? NodeBodies.layerWithout(options) : temporaryBodies(options.pools))

/** The three capabilities over a body store, with the directory's cursor key (a random one without a directory). */
const layerOver = <E, R>(options: Options, bodies: Layer.Layer<Body.Bodies | Retention.Retention, E, R>) => {
  const durable = options.directory !== undefined
  return Layer.merge(Process.layer({ ...options, spool: durable ? "durable" : "temporary" }), Layer.succeed(ProcessView.CurrentHints, ProcessView.libraryHints)).pipe(
    Layer.provide(NodeChild.layerForJobs()),
    Layer.provide(durable ? layerKeyFile(keyFileOf(options)) : Cursor.layerRandomKey),
    Layer.provideMerge(bodies),
    Layer.orDie
  )
}

/**
 * The three capabilities, with owner and channel checks alone deciding
 * access; over a directory, the store is `NodeBodies.layer`'s, so other
 * profiles over the same directory in one program share it.
 */
export const layer = (options: Options = {}) =>
  options.directory !== undefined
    ? layerOver(options, NodeBodies.layer(options)).pipe(Layer.provide(NodeSecrets.layerWorkerFromEnv(options.maskWorker)))
    : layerWithout(options).pipe(Layer.provide(Access.allowOwners), Layer.provide(NodeSecrets.layerWorkerFromEnv(options.maskWorker)))
