/**
 * Durable manifests of retained evidence: who owns a body, which tool made
 * it, how the operation ended, when it expires, how large it is, and the
 * checkpoints that map code-point offsets to byte offsets. A service, so the
 * embedded SQLite default (`@spillway/node`) can be replaced by another SQL
 * backend, or by `layerMemory` in tests.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"

/** A code-point offset and the byte offset where that code point starts. */
export interface Checkpoint {
  readonly codePoint: number
  readonly byte: number
}

/** The manifest of one retained body. */
export interface Manifest {
  /** The evidence id, which is also the body's file name in the spill directory. */
  readonly id: string
  /** The principal the evidence belongs to. */
  readonly owner: string
  /** The tool whose output this is. */
  readonly tool: string
  /** How the operation ended ("ok", "failed", an exit code...), recorded apart from the body. */
  readonly status: string
  /** Epoch milliseconds. */
  readonly createdAt: number
  /** Epoch milliseconds; reads never move it. */
  readonly expiresAt: number
  /** UTF-8 bytes of the retained (scrubbed) body. */
  readonly bytes: number
  /** Code points of the retained body (malformed bytes count one each, as they decode to U+FFFD). */
  readonly codePoints: number
  readonly lines: number
  /** UTF-8 bytes of the output before any part of it was left out under the per-result quota. */
  readonly sourceBytes: number
  /** Checkpoints in increasing order, the first at 0. */
  readonly checkpoints: ReadonlyArray<Checkpoint>
}

/** The manifest store failed. */
export class ManifestStoreError extends Schema.TaggedError<ManifestStoreError>()("ManifestStoreError", {
  operation: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `manifest store ${this.operation} failed: ${this.reason}`
  }
}

/** Where manifests are kept. */
export interface Service {
  /** Records a manifest; its body is complete before this is called, so a recorded manifest always has a whole body. */
  readonly put: (manifest: Manifest) => Effect.Effect<void, ManifestStoreError>
  readonly get: (id: string) => Effect.Effect<Manifest | undefined, ManifestStoreError>
  /** Bytes of all bodies not expired at `now` (the aggregate quota counts these). */
  readonly retainedBytes: (now: number) => Effect.Effect<number, ManifestStoreError>
  /** Removes and returns the manifests expired at `now`, so their bodies can be removed too. */
  readonly takeExpired: (now: number) => Effect.Effect<ReadonlyArray<Manifest>, ManifestStoreError>
}

/** The manifest store service. */
export class ManifestStore extends Context.Tag("@spillway/core/ManifestStore")<ManifestStore, Service>() {}

/** Manifests in memory, for tests and hosts that need no durability. */
export const layerMemory: Layer.Layer<ManifestStore> = Layer.sync(ManifestStore, () => {
  const rows = new Map<string, Manifest>()
  return {
    put: (m) =>
      rows.has(m.id)
        ? Effect.fail(new ManifestStoreError({ operation: "put", reason: `a manifest with id ${m.id} exists; manifests are never replaced` }))
        : Effect.sync(() => void rows.set(m.id, m)),
    get: (id) => Effect.sync(() => rows.get(id)),
    retainedBytes: (now) =>
      Effect.sync(() => [...rows.values()].filter((m) => m.expiresAt > now).reduce((n, m) => n + m.bytes, 0)),
    takeExpired: (now) =>
      Effect.sync(() => {
        const expired = [...rows.values()].filter((m) => m.expiresAt <= now)
        for (const m of expired) rows.delete(m.id)
        return expired
      })
  }
})
