/**
 * The live agent configuration: `agents.max_concurrent_agents` and
 * `agents.max_lifetime_seconds`. The spawn catalog and spawn admission read
 * the same live value. Publishing persists first; only a successful
 * publication replaces the live configuration and invalidates the catalog,
 * and a failed one leaves both as they were and says so.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Ref, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

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

/** Persistence in a JSON file, replaced atomically (a temporary file renamed over it). */
export const persistenceFile = (file: string): Layer.Layer<ConfigPersistence> =>
  Layer.succeed(ConfigPersistence, {
    load: Effect.try({
      try: () => {
        if (!Fs.existsSync(file)) return undefined
        const raw = JSON.parse(Fs.readFileSync(file, "utf8")) as { agents?: { max_concurrent_agents?: unknown; max_lifetime_seconds?: unknown } }
        const a = raw.agents ?? {}
        return {
          maxConcurrentAgents: Number(a.max_concurrent_agents ?? defaults.maxConcurrentAgents),
          maxLifetimeSeconds: Number(a.max_lifetime_seconds ?? defaults.maxLifetimeSeconds)
        }
      },
      catch: (e) => new PersistFailed({ reason: e instanceof Error ? e.message : String(e) })
    }),
    save: (config) =>
      Effect.try({
        try: () => {
          Fs.mkdirSync(Path.dirname(file), { recursive: true })
          const temp = `${file}.${process.pid}.tmp`
          Fs.writeFileSync(temp, JSON.stringify({
            agents: { max_concurrent_agents: config.maxConcurrentAgents, max_lifetime_seconds: config.maxLifetimeSeconds }
          }, null, 2))
          Fs.renameSync(temp, file)
        },
        catch: (e) => new PersistFailed({ reason: e instanceof Error ? e.message : String(e) })
      })
  })

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
