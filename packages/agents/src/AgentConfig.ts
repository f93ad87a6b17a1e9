/**
 * The live agent configuration: `agents.max_concurrent_agents` and
 * `agents.max_lifetime_seconds`. The spawn catalog and spawn admission read
 * the same live value. Publishing persists first; only a successful
 * publication replaces the live configuration and invalidates the catalog,
 * and a failed one leaves both as they were and says so.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Context, Effect, Layer, ParseResult, Ref, Schema } from "effect"

/** The limits agents run under. */
export interface Config {
  /** Agents that may run at once; a spawn past it is refused. */
  readonly maxConcurrentAgents: number
  /** Seconds an agent may run; it is stopped past it. New agents take the live value; running ones keep theirs. */
  readonly maxLifetimeSeconds: number
}

/** Defaults when nothing is persisted; the source design leaves the figures to the host. */
export const defaults: Config = { maxConcurrentAgents: 8, maxLifetimeSeconds: 3_600 }

/** A configuration that cannot take effect. */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", { reason: Schema.String }) {
  override get message() {
    return `invalid agent configuration: ${this.reason}`
  }
}

/** Persisting a configuration failed. */
export class PersistFailed extends Schema.TaggedError<PersistFailed>()("PersistFailed", { reason: Schema.String }) {
  override get message() {
    return `the agent configuration could not be saved: ${this.reason}`
  }
}

/** A publication failed; the old configuration and catalog stay in effect. */
export class PublishFailed extends Schema.TaggedError<PublishFailed>()("PublishFailed", { reason: Schema.String }) {
  override get message() {
    return `the new agent configuration was not published (${this.reason}); the previous one and its catalog stay in effect`
  }
}

/** Where configuration is kept between runs (the host's configuration center). */
export class ConfigPersistence extends Context.Tag("@spillway/agents/ConfigPersistence")<
  ConfigPersistence,
  {
    readonly load: Effect.Effect<Config | undefined, PersistFailed>
    readonly save: (config: Config) => Effect.Effect<void, PersistFailed>
  }
>() {}

/** Persistence in memory, for tests and hosts that keep configuration elsewhere. */
export const persistenceMemory = (initial?: Config): Layer.Layer<ConfigPersistence> =>
  Layer.sync(ConfigPersistence, () => {
    let saved = initial
    return { load: Effect.sync(() => saved), save: (config) => Effect.sync(() => void (saved = config)) }
  })

/**
 * The file's shape: `{ "agents": { "max_concurrent_agents": 8, "max_lifetime_seconds": 3600 } }`,
 * either figure left out taking its default.
 */
export const ConfigFile = Schema.Struct({
  agents: Schema.optionalWith(
    Schema.Struct({
      max_concurrent_agents: Schema.optionalWith(Schema.Number, { exact: true }),
      max_lifetime_seconds: Schema.optionalWith(Schema.Number, { exact: true })
    }),
    { exact: true }
  )
})

/** The file's shape. */
export type ConfigFile = typeof ConfigFile.Type

const decodeFile = Schema.decodeUnknown(Schema.parseJson(ConfigFile))

/** What is wrong with a decoded file, on one line: each problem with where it is. */
const problems = (e: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => `${i.path.length > 0 ? `${i.path.join(".")}: ` : ""}${i.message}`).join("; ")

const randomSuffix = () => {
  const bytes = new Uint8Array(6)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/**
 * Persistence in a JSON file on the platform's `FileSystem`, decoded with
 * `ConfigFile` when read and replaced whole when written (a temporary file
 * beside it, renamed over it), so a reader never sees half a file.
 */
export const persistenceFile = (file: string): Layer.Layer<ConfigPersistence, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    ConfigPersistence,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const failed = (doing: string) => (e: { readonly message: string }) => new PersistFailed({ reason: `${doing} ${file}: ${e.message}` })
      return {
        load: Effect.gen(function*() {
          if (!(yield* fs.exists(file))) return undefined
          const text = yield* fs.readFileString(file)
          const decoded = yield* decodeFile(text).pipe(
            Effect.mapError((e) => new PersistFailed({ reason: `${file} is not an agent configuration: ${problems(e)}` }))
          )
          const a = decoded.agents ?? {}
          return {
            maxConcurrentAgents: a.max_concurrent_agents ?? defaults.maxConcurrentAgents,
            maxLifetimeSeconds: a.max_lifetime_seconds ?? defaults.maxLifetimeSeconds
          }
        }).pipe(Effect.catchTag("SystemError", "BadArgument", (e) => Effect.fail(failed("cannot read")(e)))),
        save: (config) =>
          Effect.gen(function*() {
            const body: ConfigFile = {
              agents: { max_concurrent_agents: config.maxConcurrentAgents, max_lifetime_seconds: config.maxLifetimeSeconds }
            }
            yield* fs.makeDirectory(path.dirname(file), { recursive: true })
            const temp = `${file}.${randomSuffix()}.tmp`
            yield* fs.writeFileString(temp, `${JSON.stringify(body, null, 2)}\n`).pipe(
              Effect.zipRight(fs.rename(temp, file)),
              Effect.tapError(() => Effect.ignore(fs.remove(temp)))
            )
          }).pipe(Effect.mapError(failed("cannot write")))
      }
    })
  )

/** Why a configuration cannot take effect, or undefined. */
export const problem = (config: Config): string | undefined => {
  if (!Number.isSafeInteger(config.maxConcurrentAgents) || config.maxConcurrentAgents < 1) {
    return "agents.max_concurrent_agents must be a whole number, 1 or more"
  }
  if (!Number.isSafeInteger(config.maxLifetimeSeconds) || config.maxLifetimeSeconds < 1) {
    return "agents.max_lifetime_seconds must be a whole number of seconds, 1 or more"
  }
  return undefined
}

/** The live configuration. */
export interface Service {
  readonly current: Effect.Effect<Config>
  /** Bumped by every successful publication; the catalog is rebuilt when it moves. */
  readonly version: Effect.Effect<number>
  /** Persists, then replaces the live configuration; on failure nothing changes. */
  readonly publish: (config: Config) => Effect.Effect<void, PublishFailed | InvalidConfig>
}

/** The live configuration service. */
export class AgentConfig extends Context.Tag("@spillway/agents/AgentConfig")<AgentConfig, Service>() {}

/** The live configuration, starting from what is persisted (or `initial`, or the defaults). */
export const layer = (initial?: Config): Layer.Layer<AgentConfig, PersistFailed | InvalidConfig, ConfigPersistence> =>
  Layer.effect(
    AgentConfig,
    Effect.gen(function*() {
      const persistence = yield* ConfigPersistence
      const start = (yield* persistence.load) ?? initial ?? defaults
      const bad = problem(start)
      if (bad !== undefined) return yield* new InvalidConfig({ reason: bad })
      const live = yield* Ref.make({ config: start, version: 0 })
      return {
        current: Effect.map(Ref.get(live), (l) => l.config),
        version: Effect.map(Ref.get(live), (l) => l.version),
        publish: (config) =>
          Effect.gen(function*() {
            const invalid = problem(config)
            if (invalid !== undefined) return yield* new InvalidConfig({ reason: invalid })
            yield* persistence.save(config).pipe(Effect.mapError((e) => new PublishFailed({ reason: e.reason })))
            yield* Ref.update(live, (l) => ({ config, version: l.version + 1 }))
          })
      }
    })
  )
