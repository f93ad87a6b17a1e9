import type { Access } from "@spillway/core"
import { Errors } from "@spillway/core"
import { Cause, Clock, Deferred, Duration, Effect, Either, Exit, Option } from "effect"
import type { Service as Config } from "../AgentConfig.js"
import type { AgentContext, AgentDefinition, Spawned, Summary } from "../Agents.js"
import { AdmissionRefused } from "./errors.js"
import { keep, type Outcome } from "./keep.js"
import { MAX_ITERATIONS, reasons } from "./roster.js"
import { type Context, freshId, type Live, resourceOf } from "./state.js"

/** What a definition's run failing with its lifetime passed is told apart by. */
const LIFETIME: unique symbol = Symbol("lifetime")

/** How a run ended, as the body it leaves. @internal */
export const outcomeOf = (exit: Exit.Exit<string, string | typeof LIFETIME>, lifetimeSeconds: number): Outcome => {
  if (Exit.isSuccess(exit)) return { kind: "result", status: "completed", body: exit.value }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && failure.value === LIFETIME) {
    return { kind: "error", status: "expired", body: "", reason: reasons.lifetime(lifetimeSeconds) }
  }
  if (Option.isSome(failure)) return { kind: "error", status: "failed", body: failure.value as string }
  return { kind: "error", status: "failed", body: `the agent crashed: ${Cause.pretty(exit.cause).split("\n")[0]}` }
}

/** What an agent cut off by its runtime's end leaves. */
const shutDown: Outcome = { kind: "error", status: "failed", body: "", reason: reasons.shutDown }

/**
 * Spawning: admission against the live configuration, then the agent's run
 * forked into the runtime's scope under its lifetime; whatever ends it (a
 * result, a failure, the lifetime, the runtime shutting down), its body is
 * kept. @internal
 */
export const make = <R>(ctx: Context, definitions: ReadonlyArray<AgentDefinition<R>>, config: Config) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const services = yield* Effect.context<R>()
    const byName = new Map(definitions.map((d) => [d.name, d]))
    // runs after the agents' fibers are stopped (they were forked later, so they stop first): each one cut off leaves a body
    yield* Effect.addFinalizer(() => Effect.forEach([...ctx.live.values()], (agent) => keep(ctx, agent, shutDown), { discard: true }))

    const spawn = (caller: Access.Caller, request: { readonly agent: string; readonly task: string }) =>
      Effect.gen(function*() {
        const definition = byName.get(request.agent)
        if (definition === undefined) {
          return yield* new Errors.InvalidRequest({
            argument: "agent",
            reason: `no agent named ${Errors.quote(request.agent)}; the catalog has ${[...byName.keys()].join(", ") || "none"}`
          })
        }
        const c = yield* config.current
        if (ctx.live.size >= c.maxConcurrentAgents) return yield* new AdmissionRefused({ limit: c.maxConcurrentAgents, running: ctx.live.size })
        const agent: Live = {
          id: freshId(),
          name: definition.name,
          owner: caller.owner,
          channel: caller.channel,
          lifetimeSeconds: c.maxLifetimeSeconds,
          iterations: 0,
          tools: new Map(),
          settled: false,
          done: yield* Deferred.make<void>()
        }
        ctx.live.set(agent.id, agent)
        const context: AgentContext = {
          task: request.task,
          iteration: Effect.sync(() => void (agent.iterations = Math.min(agent.iterations + 1, MAX_ITERATIONS))),
          toolUsed: (name) => Effect.sync(() => void agent.tools.set(name, (agent.tools.get(name) ?? 0) + 1))
        }
        const run = definition.run(context).pipe(
          Effect.provide(services),
          Effect.timeoutFail({ duration: Duration.seconds(agent.lifetimeSeconds), onTimeout: (): string | typeof LIFETIME => LIFETIME }),
          Effect.exit,
          // once it has ended, its body is kept whole even if the runtime stops meanwhile
          Effect.flatMap((exit) => Effect.uninterruptible(keep(ctx, agent, outcomeOf(exit, agent.lifetimeSeconds))))
        )
        yield* Effect.forkIn(run, scope)
        return { agent_id: agent.id, name: agent.name, status: "running", max_lifetime_seconds: agent.lifetimeSeconds } satisfies Spawned
      })

    return { spawn }
  })

/** The agents the caller may list: running, lost, and those with a kept result. @internal */
export const list = (ctx: Context, caller: Access.Caller) =>
  Effect.gen(function*() {
    const out: Array<Summary> = []
    const allowed = (resource: Access.Resource) => Effect.map(Effect.either(ctx.bodies.authorize(caller, resource, "list")), Either.isRight)
    for (const agent of ctx.live.values()) {
      if (yield* allowed(resourceOf({ _tag: "Running", agent }))) {
        out.push({ agent_id: agent.id, name: agent.name, status: "running", iterations: agent.iterations })
      }
    }
    for (const lost of ctx.lost.values()) {
      if (yield* allowed(resourceOf({ _tag: "Lost", lost }))) {
        out.push({ agent_id: lost.id, name: lost.name, status: lost.status, iterations: lost.iterations })
      }
    }
    for (const m of yield* ctx.bodies.list(caller, "agent")) {
      if (m.origin._tag !== "Agent" || ctx.live.has(m.id)) continue
      out.push({ agent_id: m.id, name: m.origin.name, status: m.origin.status, iterations: m.origin.iterations })
    }
    return out as ReadonlyArray<Summary>
  })

/** Removes the result bodies of the `agent` profile that have expired; returns how many. @internal */
export const sweep = (ctx: Context) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    let removed = 0
    for (const m of yield* ctx.bodies.manifests("agent")) {
      if (m.expiresAt === null || now < m.expiresAt) continue
      yield* ctx.bodies.remove(m.id)
      removed++
    }
    return removed
  })
