import { afterAll } from "@effect/vitest"
import { AgentConfig, Agents } from "@spillway/agents"
import { Access, Body, BodyFiles, type Child, Cursor, Delivery, Manifests, Retention, Secrets } from "@spillway/core"
import { NodeBodyFiles, NodeChild, SqlBackend, SqlManifests } from "@spillway/node"
import { Deferred, Effect, Layer, Schedule, type Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

export const KEY = new Uint8Array(32).fill(3)
export const me: Access.Caller = { owner: "parent", channel: "conv-1" }
export const SECRET = "hunter2-hunter2"
export const masked = "*".repeat(SECRET.length)

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

/** A temporary directory, removed when the file's tests are done. */
export const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-agents-"))
  made.push(dir)
  return dir
}

/** Gates scripted agents wait on, by task. */
const gates = new Map<string, Deferred.Deferred<string>>()
const gate = (task: string) => {
  if (!gates.has(task)) gates.set(task, Deferred.unsafeMake<string>(undefined as never))
  return gates.get(task)!
}

/** Lets the scripted agent with this task end with `body` ("fail:..." for an error body). */
export const open = (task: string, body: string) => Deferred.succeed(gate(task), body)

/** Waits for its gate; a body starting "fail:" is an error body. Reports one iteration per step and a tool. */
export const scripted: Agents.AgentDefinition = {
  name: "scripted",
  description: "does what its test says",
  run: (ctx) =>
    Effect.gen(function*() {
      yield* ctx.iteration
      yield* ctx.toolUsed("grep_spill")
      const body = yield* Deferred.await(gate(ctx.task))
      yield* ctx.iteration
      if (body.startsWith("fail:")) return yield* Effect.fail(body.slice(5))
      return body
    })
}

/** Sleeps the task's number of seconds (on the test clock). */
export const sleeper: Agents.AgentDefinition = {
  name: "sleeper",
  description: "sleeps",
  run: (ctx) => Effect.as(Effect.sleep(`${Number(ctx.task)} seconds`), "slept")
}

/** Callers whose access a test has taken away. */
export const revoked = new Set<string>()

/**
 * Where results are kept: each build of `layer` is a fresh start over the
 * same kept bodies and manifests (a restart of the process, for the stores
 * on disk and in PostgreSQL).
 */
export interface Store {
  readonly layer: Layer.Layer<BodyFiles.BodyFiles | Manifests.Manifests>
}

/** Bodies and manifests in memory, shared by every runtime built over them. */
export const memoryStore: Effect.Effect<Store, never, Scope.Scope> = Effect.map(
  Layer.build(Layer.merge(BodyFiles.layerMemory, Manifests.layerMemory)),
  (context) => ({ layer: Layer.succeedContext(context) })
)

/** Bodies in a directory, manifests in SQLite beside them. */
export const diskStore: Effect.Effect<Store> = Effect.sync(() => {
  const directory = tempDir()
  return {
    layer: Layer.merge(NodeBodyFiles.layer({ directory }), SqlManifests.layerFor(Path.join(directory, ".manifests.sqlite")))
  }
})

/** The PostgreSQL server tests may use, when one is given. */
export const pgUrl = process.env.SPILLWAY_TEST_PG_URL !== undefined && process.env.SPILLWAY_TEST_PG_URL !== ""
  ? process.env.SPILLWAY_TEST_PG_URL
  : undefined

/** Bodies in a directory, manifests in a fresh PostgreSQL database dropped when the scope closes. */
export const pgStore: Effect.Effect<Store, never, Scope.Scope> = Effect.gen(function*() {
  const name = `spillway_agents_${Array.from(globalThis.crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, "0")).join("")}`
  const admin = <A, E>(f: (sql: Effect.Effect.Success<ReturnType<typeof SqlBackend.pgClient>>) => Effect.Effect<A, E>) =>
    Effect.scoped(Effect.flatMap(SqlBackend.pgClient(pgUrl!), f)).pipe(
      // an autovacuum worker busy in a database for a moment makes DROP ... WITH (FORCE) fail
      // (the role cannot end a superuser's backend): try again shortly
      Effect.retry({ times: 20, schedule: Schedule.spaced("100 millis") }),
      Effect.orDie
    )
  yield* admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  yield* Effect.addFinalizer(() => admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  const url = new URL(pgUrl!)
  url.pathname = `/${name}`
  const directory = tempDir()
  return { layer: Layer.merge(NodeBodyFiles.layer({ directory }), SqlManifests.layerFor(url.toString())) }
})

/** What a test may change about a runtime's services. */
export interface Setup {
  readonly config?: Partial<AgentConfig.Config>
  readonly persistence?: Layer.Layer<AgentConfig.ConfigPersistence>
  readonly pools?: Record<string, Retention.Pool>
  readonly store?: Store
  /** The child runner; Node's by default. */
  readonly runner?: Layer.Layer<Child.ChildRunner>
}

/** The services a runtime needs: configuration, the body store over `setup.store` (memory by default), a key, the child runner. */
export const services = (setup: Setup = {}) =>
  Effect.gen(function*() {
    const store = setup.store ?? (yield* memoryStore)
    return Layer.mergeAll(
      AgentConfig.layer({ ...AgentConfig.defaults, ...setup.config }).pipe(Layer.provide(setup.persistence ?? AgentConfig.persistenceMemory())),
      Cursor.layerKey(KEY),
      setup.runner ?? NodeChild.layer(),
      Body.layer.pipe(Layer.provideMerge(Layer.mergeAll(
        store.layer,
        Retention.layer(setup.pools),
        Secrets.layer({ knownValues: [SECRET] }),
        Access.fromFunction((caller) => !revoked.has(caller.owner))
      )))
    ).pipe(Layer.orDie)
  })

/** A runtime in the current scope over `definitions`, with its configuration service and its body store. */
export const runtime = (
  setup: Setup = {},
  options: Agents.Options = {},
  definitions: ReadonlyArray<Agents.AgentDefinition<Child.ChildRunner>> = [scripted, sleeper]
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(yield* services(setup))
    const agents = yield* Agents.make(definitions, options).pipe(Effect.provide(context))
    const live = yield* AgentConfig.AgentConfig.pipe(Effect.provide(context))
    const bodies = yield* Body.Bodies.pipe(Effect.provide(context))
    return { agents, live, bodies }
  })

/** Waits as `me`. */
export const waitFor = (r: Agents.Service, ids: ReadonlyArray<string>, timeoutMillis = 1_000, interrupt?: Effect.Effect<string>) =>
  r.waitForAgents(me, { agentIds: ids, timeoutMillis, interrupt })

/** Code points of a string. */
export const codePoints = (s: string) => [...s].length

/** True when a wait, as delivered (the text a model reads and the facts a program reads, together), fits the budget. */
export const withinBudget = (r: Agents.WaitResult, budget = 12_000) => codePoints(Delivery.serialize(Agents.deliveredWait(r))) <= budget
