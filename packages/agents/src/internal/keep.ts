import { Utf8 } from "@spillway/core"
import { Deferred, Effect } from "effect"
import type { Status } from "../Agents.js"
import type { Context, Live } from "./state.js"

/** How an agent ended. @internal */
export interface Outcome {
  readonly kind: "result" | "error"
  readonly status: Exclude<Status, "running">
  /** The raw result or error text; it is masked as it is written. */
  readonly body: string
  readonly reason?: string | undefined
}

/**
 * Keeps a finished agent's body in the body store (profile `agent`, bound
 * to the channel that spawned it, its facts in the manifest's origin), then
 * lets it go from the live registry and wakes its waiters. A body that
 * cannot be kept is never lost silently: the agent is remembered for the
 * runtime's life with the reason, which its row and its reads report. Runs
 * at most once per agent. @internal
 */
export const keep = (ctx: Context, agent: Live, outcome: Outcome): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (agent.settled) return Effect.void
    agent.settled = true
    const tools = [...agent.tools.entries()].map(([name, calls]) => ({ name, calls }))
    const write = Effect.scoped(Effect.gen(function*() {
      const writer = yield* ctx.bodies.create({
        profile: "agent",
        name: agent.id,
        owner: agent.owner,
        channel: agent.channel,
        channelBound: true,
        tool: "spawn_agent",
        status: outcome.status,
        origin: {
          _tag: "Agent",
          name: agent.name,
          status: outcome.status,
          kind: outcome.kind,
          reason: outcome.reason ?? null,
          iterations: agent.iterations,
          tools
        }
      })
      yield* writer.write(Utf8.encode(outcome.body))
      return yield* writer.seal()
    }))
    return write.pipe(
      Effect.catchAll((e) =>
        Effect.zipRight(
          Effect.logWarning(`agent ${agent.id}: its ${outcome.kind} body was not kept: ${e.message}`),
          Effect.sync(() =>
            void ctx.lost.set(agent.id, {
              id: agent.id,
              name: agent.name,
              owner: agent.owner,
              channel: agent.channel,
              status: outcome.status,
              iterations: agent.iterations,
              error: ctx.masker.maskText(e.message)
            })
          )
        )
      ),
      Effect.ensuring(Effect.suspend(() => {
        ctx.live.delete(agent.id)
        return Deferred.succeed(agent.done, undefined)
      }))
    )
  })
