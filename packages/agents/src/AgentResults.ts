/**
 * Where finished agents' results are kept, so they outlive the live
 * registry and a restart: the scrubbed body, how the agent ended, and its
 * tool metadata. In memory, or as one 0600 JSON file per agent in a
 * directory, written whole (a temporary file renamed into place).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** A finished agent, as kept. */
export interface StoredResult {
  readonly id: string
  readonly name: string
  readonly owner: string
  readonly channel: string
  readonly status: "completed" | "failed" | "expired"
  readonly reason?: string | undefined
  readonly iterations: number
  readonly kind: "result" | "error"
  /** The scrubbed body. */
  readonly body: Uint8Array
  /** UTF-8 bytes of the body before scrubbing. */
  readonly sourceBytes: number
  readonly tools: ReadonlyArray<{ readonly name: string; readonly calls: number }>
}

/** The result store failed. */
export class ResultStoreError extends Schema.TaggedError<ResultStoreError>()("ResultStoreError", { reason: Schema.String }) {
  override get message() {
    return `the agent result store failed: ${this.reason}`
  }
}

/** The store. */
export interface Service {
  readonly put: (result: StoredResult) => Effect.Effect<void, ResultStoreError>
  readonly get: (id: string) => Effect.Effect<StoredResult | undefined, ResultStoreError>
}

/** The result store service; without one, a runtime keeps results in memory for its own life. */
export class AgentResults extends Context.Tag("@spillway/agents/AgentResults")<AgentResults, Service>() {}

/** Results in memory. */
export const layerMemory: Layer.Layer<AgentResults> = Layer.sync(AgentResults, () => {
  const rows = new Map<string, StoredResult>()
  return { put: (r) => Effect.sync(() => void rows.set(r.id, r)), get: (id) => Effect.sync(() => rows.get(id)) }
})

const idPattern = /^agent-[A-Za-z0-9_-]{1,64}$/

/** Results as files in a directory (made 0700 if missing). */
export const layerDirectory = (directory: string): Layer.Layer<AgentResults, ResultStoreError> =>
  Layer.effect(
    AgentResults,
    Effect.try({
      try: () => {
        Fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
        const fileOf = (id: string) => {
          if (!idPattern.test(id)) throw new Error(`${JSON.stringify(id)} is not an agent id`)
          return Path.join(directory, `${id}.json`)
        }
        const fail = (e: unknown) => new ResultStoreError({ reason: e instanceof Error ? e.message : String(e) })
        return {
          put: (r) =>
            Effect.try({
              try: () => {
                const file = fileOf(r.id)
                const temp = `${file}.${process.pid}.tmp`
                Fs.writeFileSync(temp, JSON.stringify({ ...r, body: Buffer.from(r.body).toString("base64") }), { mode: 0o600 })
                Fs.renameSync(temp, file)
              },
              catch: fail
            }),
          get: (id) =>
            Effect.try({
              try: () => {
                if (!idPattern.test(id)) return undefined
                const file = fileOf(id)
                if (!Fs.existsSync(file)) return undefined
                const raw = JSON.parse(Fs.readFileSync(file, "utf8")) as Omit<StoredResult, "body"> & { body: string }
                return { ...raw, body: new Uint8Array(Buffer.from(raw.body, "base64")) }
              },
              catch: fail
            })
        }
      },
      catch: (e) => new ResultStoreError({ reason: e instanceof Error ? e.message : String(e) })
    })
  )
