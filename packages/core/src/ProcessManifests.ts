/**
 * Durable records of process jobs: who started a job, on which channel, its
 * random generation, when it started and ended, and its byte accounting. A
 * process manager restores its jobs from these after a restart (read-only);
 * they hold no execution handle and no file system path, only the spool's
 * file name inside the manager's retention directory.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import { StoreFailed as ManifestStoreError } from "./Errors.js"

/** The record of one job. Unlike evidence manifests, it is saved again as the job runs and ends. */
export interface JobManifest {
  /** The job's random generation, its durable id. */
  readonly generation: string
  readonly pid: number
  readonly owner: string
  readonly channel: string
  /** The command as shown to people, with secrets masked. */
  readonly command: string
  /** The spool's file name in the retention directory. */
  readonly spool: string
  /** Epoch milliseconds. */
  readonly startedAt: number
  /** Epoch milliseconds of the observed exit; absent while running, or when the exit was never observed. */
  readonly exitedAt?: number | undefined
  readonly exitCode?: number | undefined
  readonly signal?: string | undefined
  /** Raw bytes the job wrote to stdout and stderr, as last recorded. */
  readonly emittedBytes: number
  /** Masked bytes written to the spool, as last recorded (the spool file may hold more after a crash). */
  readonly spooledBytes: number
  /** Why capture stopped early (quota, a failed write), when it did. */
  readonly captureError?: string | undefined
}

/** Where job records are kept. */
export interface Service {
  /** Records a job, replacing its earlier record. */
  readonly save: (manifest: JobManifest) => Effect.Effect<void, ManifestStoreError>
  /** Every recorded job, oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<JobManifest>, ManifestStoreError>
  readonly remove: (generation: string) => Effect.Effect<void, ManifestStoreError>
}

/** The job record store. */
export class ProcessManifests extends Context.Tag("@spillway/core/ProcessManifests")<ProcessManifests, Service>() {}

/** Job records in memory: nothing survives the process, so nothing is restored. */
export const layerMemory: Layer.Layer<ProcessManifests> = Layer.sync(ProcessManifests, () => {
  const rows = new Map<string, JobManifest>()
  return {
    save: (m) => Effect.sync(() => void rows.set(m.generation, m)),
    list: Effect.sync(() => [...rows.values()].sort((a, b) => a.startedAt - b.startedAt)),
    remove: (generation) => Effect.sync(() => void rows.delete(generation))
  }
})
