import { describe, expect, it } from "@effect/vitest"
import type { Agents } from "@spillway/agents"
import { Effect, Exit, Scope, TestClock } from "effect"
import { diskStore, masked, me, memoryStore, open, pgStore, pgUrl, runtime, SECRET, type Store, waitFor } from "./fixtures.js"

const DAY = 24 * 60 * 60 * 1000

/** A runtime in a scope of its own, which the test closes to stop it (a restart, when the store is on disk). */
const started = (store: Store, setup: Omit<Parameters<typeof runtime>[0] & object, "store"> = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    // no background sweep while a test moves the clock a day: the test sweeps when it means to
    const r = yield* runtime({ ...setup, store }, { sweepEveryMillis: 100 * DAY }).pipe(Scope.extend(scope))
    return { ...r, stop: Scope.close(scope, Exit.void) }
  })

/** Spawns a scripted agent as `me` and lets it end with `body`; its id once its body is kept. */
const finished = (agents: Agents.Service, task: string, body: string) =>
  Effect.gen(function*() {
    const { agent_id } = yield* agents.spawn(me, { agent: "scripted", task })
    yield* open(task, body)
    yield* waitFor(agents, [agent_id], 60_000)
    return agent_id
  })

const stores: ReadonlyArray<readonly [string, Effect.Effect<Store, never, Scope.Scope>, boolean]> = [
  ["memory", memoryStore, true],
  ["disk, manifests in SQLite", diskStore, true],
  ["disk, manifests in PostgreSQL", pgStore, pgUrl !== undefined]
]

for (const [name, makeStore, enabled] of stores) {
  describe.skipIf(!enabled)(`agent results as bodies (${name})`, () => {
    it.scoped("a finished agent's result outlives its runtime: one started after it reads it back, by its owner and channel only", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        const first = yield* started(store)
        const id = yield* finished(first.agents, `outlive-${name}`, `kept ${SECRET} for later`)
        const failed = yield* finished(first.agents, `outlive-fail-${name}`, "fail:it broke")
        yield* first.stop

        const second = yield* started(store)
        // the body and its manifest: masked, of the agent profile, bound to its channel, with the agent's facts
        const m = (yield* second.bodies.manifest(id))!
        expect(m).toMatchObject({ profile: "agent", owner: me.owner, channel: me.channel, channelBound: true, bytes: 30, sourceBytes: 30 })
        expect(m.origin).toEqual({ _tag: "Agent", name: "scripted", status: "completed", kind: "result", reason: null, iterations: 2, tools: [{ name: "grep_spill", calls: 1 }] })
        expect(m.expiresAt).toBe(m.createdAt + DAY)
        const page = yield* second.agents.getAgentResults(me, { agentId: id })
        expect(page).toMatchObject({ status: "completed", kind: "result", text: `kept ${masked} for later`, truncated: false })
        const snapshot = yield* waitFor(second.agents, [id, failed], 0)
        expect(snapshot.agents.map((r) => [r.status, r.iterations, r.preview])).toEqual([["completed", 2, `kept ${masked} for later`], ["failed", 2, "it broke"]])
        expect(snapshot.audit.durable_results).toEqual([id, failed])
        expect(snapshot.timed_out).toBe(false)
        for (const other of [{ owner: "other", channel: me.channel }, { owner: me.owner, channel: "another-conversation" }]) {
          expect(yield* Effect.flip(second.agents.getAgentResults(other, { agentId: id }))).toMatchObject({ _tag: "AccessDenied", resource: "agent" })
          expect(yield* second.agents.list(other)).toEqual([])
        }
        expect((yield* second.agents.list(me)).map((a) => a.agent_id).sort()).toEqual([id, failed].sort())
      }))

    it.scoped("results expire by the agent pool's time to live: reads refuse them, a wait says so, the sweep removes them", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        const { agents, bodies } = yield* started(store)
        const id = yield* finished(agents, `expire-${name}`, "short-lived")
        yield* TestClock.adjust(DAY - 1)
        expect((yield* agents.getAgentResults(me, { agentId: id })).text).toBe("short-lived")
        yield* TestClock.adjust(1)
        const refused = yield* Effect.flip(agents.getAgentResults(me, { agentId: id }))
        expect(refused).toMatchObject({ _tag: "Expired", resource: "agent", id })
        const row = (yield* waitFor(agents, [id], 0)).agents[0]!
        expect(row).toMatchObject({ status: "not_found", reason: "its result has expired", preview: "" })
        expect(row.fetch).toBeUndefined()
        expect(yield* agents.sweep).toBe(1)
        expect(yield* bodies.manifest(id)).toBeUndefined()
        expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: id })))._tag).toBe("NotFound")
      }))

    it.scoped("a shorter time to live for the agent pool is the host's to set", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        const { agents } = yield* started(store, { pools: { agent: { ttlMillis: 60_000 } } })
        const id = yield* finished(agents, `ttl-${name}`, "brief")
        expect((yield* agents.getAgentResults(me, { agentId: id })).expires_at).toBe(new Date(60_000).toISOString())
        yield* TestClock.adjust(60_000)
        expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: id })))._tag).toBe("Expired")
      }))

    it.scoped("an agent still running when its runtime stops leaves an error body that says so", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        const first = yield* started(store)
        const { agent_id } = yield* first.agents.spawn(me, { agent: "scripted", task: `cut-off-${name}` })
        const never = yield* first.agents.spawn(me, { agent: "sleeper", task: "1000" })
        // the first has run an iteration; the second may not have started at all
        yield* TestClock.adjust(1)
        yield* first.stop
        const second = yield* started(store)
        const row = (yield* waitFor(second.agents, [agent_id], 0)).agents[0]!
        expect(row).toMatchObject({ status: "failed", reason: "stopped when its runtime shut down", iterations: 1 })
        expect(yield* second.agents.getAgentResults(me, { agentId: agent_id })).toMatchObject({ kind: "error", status: "failed", text: "" })
        expect((yield* waitFor(second.agents, [never.agent_id], 0)).agents[0]!.status).toBe("failed")
      }))

    it.scoped("a result the store cannot keep is reported, never lost silently", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        const { agents } = yield* started(store, { pools: { agent: { bytes: 10 } } })
        const id = yield* finished(agents, `quota-${name}`, "far more than ten bytes")
        const row = (yield* waitFor(agents, [id], 0)).agents[0]!
        expect(row).toMatchObject({ status: "completed", reason: "its body was not kept", body_bytes: 0 })
        const read = yield* Effect.flip(agents.getAgentResults(me, { agentId: id }))
        expect(read._tag).toBe("StoreFailed")
        expect(read.message).toContain("10-byte agent quota")
        expect(yield* Effect.flip(agents.getAgentResults({ owner: "other", channel: me.channel }, { agentId: id }))).toMatchObject({ _tag: "AccessDenied" })
      }))
  })
}
