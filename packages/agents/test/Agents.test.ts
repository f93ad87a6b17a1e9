import { describe, expect, it } from "@effect/vitest"
import { AgentConfig, Agents } from "@spillway/agents"
import { Cursor, Delivery } from "@spillway/core"
import { Deferred, Effect, Exit, FastCheck as fc, Fiber, Layer, TestClock } from "effect"
import { codePoints, KEY, masked, me, open, revoked, runtime, SECRET, waitFor, withinBudget } from "./fixtures.js"

describe("spawn admission and configuration", () => {
  it.scoped("refuses a spawn past the concurrency limit, saying the limit and how many run", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ config: { maxConcurrentAgents: 2 } })
      const a = yield* agents.spawn(me, { agent: "scripted", task: "adm-a" })
      yield* agents.spawn(me, { agent: "scripted", task: "adm-b" })
      const refused = yield* Effect.flip(agents.spawn(me, { agent: "scripted", task: "adm-c" }))
      expect(refused._tag).toBe("AdmissionRefused")
      expect(refused.message).toContain("2 are running and agents.max_concurrent_agents is 2")
      yield* open("adm-a", "done")
      yield* waitFor(agents, [a.agent_id])
      expect(yield* agents.running).toBe(1)
      yield* agents.spawn(me, { agent: "scripted", task: "adm-c" })
      const unknown = yield* Effect.flip(agents.spawn(me, { agent: "nobody", task: "x" }))
      expect(unknown).toMatchObject({ _tag: "InvalidRequest", argument: "agent" })
      expect(unknown.message).toContain("the catalog has scripted, sleeper")
      // a hostile name is quoted within a bound
      const long = yield* Effect.flip(agents.spawn(me, { agent: "n".repeat(100_000), task: "x" }))
      expect(long.message.length).toBeLessThan(400)
    }))

  it.scoped("a failed publication keeps the old configuration and catalog; a good one replaces both, for new agents only", () =>
    Effect.gen(function*() {
      let failSaves = true
      const persistence = Layer.succeed(AgentConfig.ConfigPersistence, {
        load: Effect.succeed(undefined),
        save: () => failSaves ? Effect.fail(new AgentConfig.PersistFailed({ reason: "disk full" })) : Effect.void
      })
      const { agents, live } = yield* runtime({ config: { maxConcurrentAgents: 3, maxLifetimeSeconds: 100 }, persistence })
      const before = yield* agents.catalog
      expect(before.text).toContain("At most 3 agents run at once. An agent started now may run 100 seconds.")
      const failed = yield* Effect.flip(live.publish({ maxConcurrentAgents: 1, maxLifetimeSeconds: 5 }))
      expect(failed._tag).toBe("PublishFailed")
      expect(failed.message).toContain("disk full")
      expect(failed.message).toContain("the previous one and its catalog stay in effect")
      expect(yield* live.current).toEqual({ maxConcurrentAgents: 3, maxLifetimeSeconds: 100 })
      expect(yield* agents.catalog).toBe(before)
      expect((yield* Effect.flip(live.publish({ maxConcurrentAgents: 0, maxLifetimeSeconds: 5 })))._tag).toBe("InvalidConfig")

      const early = yield* agents.spawn(me, { agent: "sleeper", task: "50" })
      failSaves = false
      yield* live.publish({ maxConcurrentAgents: 3, maxLifetimeSeconds: 5 })
      const after = yield* agents.catalog
      expect(after).not.toBe(before)
      expect(after).toMatchObject({ max_concurrent_agents: 3, max_lifetime_seconds: 5 })
      const late = yield* agents.spawn(me, { agent: "sleeper", task: "50" })
      expect(late.max_lifetime_seconds).toBe(5)
      yield* TestClock.adjust("10 seconds")
      const view = yield* waitFor(agents, [early.agent_id, late.agent_id], 0)
      expect(view.agents.map((a) => a.status)).toEqual(["running", "expired"])
      expect(view.agents[1]!.reason).toBe("stopped after its lifetime of 5 seconds")
      yield* TestClock.adjust("45 seconds")
      expect((yield* waitFor(agents, [early.agent_id], 0)).agents[0]!.status).toBe("completed")
    }))

  it.scoped("an agent that fails with any text, even the word its lifetime is told by, is failed, not expired", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const a = yield* agents.spawn(me, { agent: "scripted", task: "fail-lifetime" })
      yield* open("fail-lifetime", "fail:lifetime")
      const row = (yield* waitFor(agents, [a.agent_id], 60_000)).agents[0]!
      expect(row).toMatchObject({ status: "failed", preview: "lifetime" })
    }))
})

describe("wait_for_agents", () => {
  it.scoped("an interrupted wait says so; the children go on and finish afterwards", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const a = yield* agents.spawn(me, { agent: "scripted", task: "int-a" })
      const b = yield* agents.spawn(me, { agent: "scripted", task: "int-b" })
      const message = yield* Deferred.make<string>()
      yield* open("int-a", "first result")
      yield* waitFor(agents, [a.agent_id], 60_000)
      const waiting = yield* Effect.fork(waitFor(agents, [a.agent_id, b.agent_id], 60_000, Deferred.await(message)))
      yield* Deferred.succeed(message, `the user asked something about ${SECRET}`)
      const interrupted = yield* Fiber.join(waiting)
      expect(interrupted.notice).toContain("interrupted this wait; the agents go on running")
      expect(interrupted.text.split("\n")[0]).toBe(interrupted.notice)
      expect(interrupted.audit).toMatchObject({ interrupted: true, interrupt_reason: `the user asked something about ${masked}` })
      expect(interrupted.agents.map((r) => r.status)).toEqual(["completed", "running"])
      expect(interrupted.audit.durable_results).toEqual([a.agent_id])
      yield* open("int-b", "second result")
      const done = yield* waitFor(agents, [a.agent_id, b.agent_id], 60_000)
      expect(done.agents.map((r) => [r.status, r.preview, r.iterations])).toEqual([
        ["completed", "first result", 2],
        ["completed", "second result", 2]
      ])
      expect(done.timed_out).toBe(false)
      expect(done.notice).toBeUndefined()
      expect(done.agents[0]!.fetch).toMatch(new RegExp(`^get_agent_results agent_id=${a.agent_id} cursor=spw1\\.`))
      // the text is what a model reads: every row, its preview and how to fetch the rest
      expect(done.text).toContain(`${a.agent_id} (scripted): completed, 2 iterations\n  first result\n  complete output (12 bytes): ${done.agents[0]!.fetch}`)
    }))

  it.scoped("times out with the roster as it stands, and counts repeated ids once", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const a = yield* agents.spawn(me, { agent: "scripted", task: "to-a" })
      const waiting = yield* Effect.fork(waitFor(agents, [a.agent_id, a.agent_id, "agent-unknown"], 5_000))
      yield* TestClock.adjust("5 seconds")
      const r = yield* Fiber.join(waiting)
      expect(r.timed_out).toBe(true)
      expect(r.agents.map((row) => [row.agent_id, row.status])).toEqual([[a.agent_id, "running"], ["agent-unknown", "not_found"]])
      expect(r.text).toContain("The wait timed out; agents still running go on.")
      expect(r.text).toContain("agent-unknown: not_found, no agent with this id was started here")
    }))

  it.scoped("refuses a batch whose roster alone cannot fit, whatever the concurrency limit", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ config: { maxConcurrentAgents: 1 } })
      const ids = Array.from({ length: 400 }, (_, i) => `agent-${String(i).padStart(12, "0")}`)
      const refused = yield* Effect.flip(waitFor(agents, ids))
      expect(refused._tag).toBe("BatchTooLarge")
      const fits = (refused as Agents.BatchTooLarge).fits
      expect(fits).toBeGreaterThan(1)
      expect(refused.message).toContain(`split agent_ids into batches of at most ${fits}`)
      const ok = yield* waitFor(agents, ids.slice(0, fits), 0)
      expect(ok.agents.length).toBe(fits)
      expect((yield* Effect.flip(waitFor(agents, ids.slice(0, fits + 1), 0)))._tag).toBe("BatchTooLarge")
    }))

  it.scoped("a reader revoked while waiting gets no preview; another owner or channel never reads", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const a = yield* agents.spawn(me, { agent: "scripted", task: "rev-a" })
      const waiting = yield* Effect.fork(waitFor(agents, [a.agent_id], 60_000))
      // the wait has checked access and is waiting before access is taken away
      yield* TestClock.adjust("1 second")
      revoked.add(me.owner)
      yield* open("rev-a", `the answer, with ${SECRET}`)
      const exit = yield* Fiber.await(waiting)
      revoked.delete(me.owner)
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("AccessDenied")
      expect(JSON.stringify(exit)).not.toContain("the answer")
      for (const other of [{ owner: "other", channel: "conv-1" }, { owner: me.owner, channel: "conv-2" }]) {
        const refused = yield* Effect.flip(agents.getAgentResults(other, { agentId: a.agent_id }))
        expect(refused).toMatchObject({ _tag: "AccessDenied", resource: "agent", id: a.agent_id })
        expect((yield* Effect.flip(agents.waitForAgents(other, { agentIds: [a.agent_id], timeoutMillis: 0 })))._tag).toBe("AccessDenied")
      }
      expect((yield* waitFor(agents, [a.agent_id], 60_000)).agents[0]!.preview).toBe(`the answer, with ${masked}`)
    }))

  it.scoped("shrinks previews fairly when the batch would not fit at 800 bytes each", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ config: { maxConcurrentAgents: 30 } })
      const ids: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const s = yield* agents.spawn(me, { agent: "scripted", task: `fair-${i}` })
        ids.push(s.agent_id)
        yield* open(`fair-${i}`, `${i} `.padEnd(2_000, "é"))
      }
      const r = yield* waitFor(agents, ids, 60_000)
      expect(withinBudget(r)).toBe(true)
      const sizes = new Set(r.agents.map((row) => row.preview_bytes))
      // one ceiling for all (a two-byte character may end a preview a byte short)
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1)
      expect(Math.max(...sizes)).toBeLessThan(800)
      expect(Math.max(...sizes)).toBeGreaterThan(100)
      const few = yield* waitFor(agents, ids.slice(0, 3), 0)
      expect(few.agents.map((row) => row.preview_bytes)).toEqual([800, 800, 800])
    }))
})

describe("wait_for_agents interrupted by a long parent message", () => {
  const reasonSize = (r: Agents.WaitResult) => JSON.stringify(r.audit.interrupt_reason!).length - 2

  it.scoped("one agent and a 20,000-character message: the notice, the reason cut with a marker, within the budget", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const a = yield* agents.spawn(me, { agent: "scripted", task: "long-1" })
      const r = yield* waitFor(agents, [a.agent_id], 60_000, Effect.succeed("m".repeat(20_000)))
      expect(r.notice).toContain("interrupted this wait")
      expect(r.audit.interrupted).toBe(true)
      expect(r.audit.interrupt_reason).toMatch(/^m+… \[cut: 20000 characters in all\]$/)
      expect(reasonSize(r)).toBeLessThanOrEqual(200)
      expect(withinBudget(r)).toBe(true)
    }))

  it.scoped("the largest batch the runtime says fits, and a 5,000-character message of characters JSON escapes", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ config: { maxConcurrentAgents: 100 } })
      const running: Array<string> = []
      for (let i = 0; i < 60; i++) running.push((yield* agents.spawn(me, { agent: "scripted", task: `batch-${i}` })).agent_id)
      const probe = yield* Effect.flip(waitFor(agents, running, 60_000, Effect.succeed("m".repeat(5_000))))
      const fits = (probe as Agents.BatchTooLarge).fits
      // the roster and its facts share the one budget
      expect(fits).toBeGreaterThanOrEqual(20)
      const ids = running.slice(0, fits)
      for (const message of ["m".repeat(5_000), "\"\\\u0001".repeat(5_000)]) {
        const r = yield* waitFor(agents, ids, 60_000, Effect.succeed(message))
        expect(r.agents.length).toBe(fits)
        expect(r.notice).toBeDefined()
        expect(reasonSize(r)).toBeLessThanOrEqual(200)
        expect(r.audit.interrupt_reason).toContain(`[cut: ${message.length} characters in all]`)
        expect(withinBudget(r)).toBe(true)
      }
    }))

  it.effect.prop("any message and any admitted batch, agents ending meanwhile: the notice, within the budget, never EnvelopeTooSmall", [
    fc.string({ unit: "binary", maxLength: 30_000 }),
    fc.array(fc.option(fc.string({ unit: "binary", maxLength: 2_000 }), { nil: undefined }), { minLength: 1, maxLength: 40 }),
    fc.integer({ min: 2_500, max: 12_000 })
  ], ([message, bodies, budgetChars]) =>
    Effect.scoped(Effect.gen(function*() {
      const { agents } = yield* runtime({ config: { maxConcurrentAgents: 40 } }, { budgetChars })
      const ids: Array<string> = []
      const tasks: Array<string> = []
      for (let i = 0; i < bodies.length; i++) {
        tasks.push(`prop-${i}-${Math.random()}`)
        ids.push((yield* agents.spawn(me, { agent: "scripted", task: tasks[i]! })).agent_id)
      }
      // some end while the wait is admitted and interrupted: reserved as running, shown with their bodies
      for (let i = 0; i < bodies.length; i++) if (bodies[i] !== undefined) yield* open(tasks[i]!, bodies[i]!)
      const exit = yield* Effect.exit(waitFor(agents, [...ids, "no such agent"], 60_000, Effect.succeed(message)))
      if (Exit.isFailure(exit)) {
        // the only refusal: a batch too large, said before waiting
        expect(JSON.stringify(exit.cause)).toContain("BatchTooLarge")
        return
      }
      const r = exit.value
      expect(r.audit.interrupted).toBe(true)
      expect(r.text).toContain(r.notice!)
      expect(JSON.stringify(r.audit.interrupt_reason).length - 2).toBeLessThanOrEqual(200)
      expect(withinBudget(r, budgetChars)).toBe(true)
    })), { fastCheck: { numRuns: 25 } })
})

describe("wait_for_agents and get_agent_results with ids no agent has", () => {
  it.scoped("named ids get not_found rows; an id too long to echo is a bounded refusal; a read is NotFound", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const odd = ["no such agent", "../x", "x".repeat(200), "ünïcødé", "agent-../../etc", "", "agent-\n[forged line]"]
      const r = yield* waitFor(agents, odd, 0)
      expect(r.agents.map((row) => [row.agent_id, row.status, row.fetch])).toEqual(odd.map((id) => [id, "not_found", undefined]))
      // an id no agent can have is quoted in the text, so it cannot pass for a line of its own
      expect(r.text).toContain(`"agent-\\n[forged line]": not_found`)
      expect(r.text.split("\n").some((line) => line.startsWith("[forged line]"))).toBe(false)
      for (const id of odd) {
        const refused = yield* Effect.flip(agents.getAgentResults(me, { agentId: id }))
        expect(refused).toMatchObject({ _tag: "NotFound", resource: "agent", id })
        expect(refused.message.length).toBeLessThan(400)
      }
      const huge = "z".repeat(10_000_000)
      const tooLong = yield* Effect.flip(waitFor(agents, [huge], 0))
      expect(tooLong).toMatchObject({ _tag: "InvalidRequest", argument: "agent_ids" })
      expect(tooLong.message.length).toBeLessThan(400)
      const read = yield* Effect.flip(agents.getAgentResults(me, { agentId: huge }))
      expect(read.message.length).toBeLessThan(400)
      expect((yield* Effect.flip(waitFor(agents, [], 0)))._tag).toBe("InvalidRequest")
    }))

  it.effect.prop("any ids: rows or a typed refusal, never a defect", [
    fc.array(fc.oneof(fc.string({ unit: "binary", maxLength: 300 }), fc.string({ unit: "grapheme", maxLength: 40 })), { minLength: 1, maxLength: 60 })
  ], ([ids]) =>
    Effect.scoped(Effect.gen(function*() {
      const { agents } = yield* runtime()
      const exit = yield* Effect.exit(waitFor(agents, ids, 0))
      if (Exit.isSuccess(exit)) {
        expect(exit.value.agents.map((r) => r.agent_id)).toEqual([...new Set(ids)])
        expect(exit.value.agents.every((r) => r.status === "not_found")).toBe(true)
        expect(withinBudget(exit.value)).toBe(true)
      } else {
        const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error?._tag).toMatch(/^(InvalidRequest|BatchTooLarge)$/)
        expect(error!.message.length).toBeLessThan(400)
      }
      for (const id of ids.slice(0, 5)) {
        const read = yield* Effect.exit(agents.getAgentResults(me, { agentId: id }))
        expect(Exit.isFailure(read) && read.cause._tag === "Fail" && read.cause.error._tag).toMatch(/^(NotFound|InvalidRequest)$/)
      }
    })), { fastCheck: { numRuns: 40 } })
})

describe("get_agent_results", () => {
  it.scoped("pages the scrubbed body with exact byte counts and cursors bound to the agent", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({}, { toolsAllowance: 40 })
      const a = yield* agents.spawn(me, { agent: "scripted", task: "page-a" })
      const body = `start ${SECRET} ` + "x".repeat(9_000) + " end"
      yield* open("page-a", body)
      yield* waitFor(agents, [a.agent_id], 60_000)
      const first = yield* agents.getAgentResults(me, { agentId: a.agent_id })
      expect(first).toMatchObject({
        kind: "result",
        offset: 0,
        next_offset: 4_000,
        original_bytes: body.length,
        result_bytes: body.length,
        error_bytes: 0,
        source_original_bytes: body.length,
        truncated: true,
        tools: [{ name: "grep_spill", calls: 1 }],
        tools_omitted: 0
      })
      expect(first.expires_at).toBe(new Date(24 * 60 * 60 * 1000).toISOString())
      expect(first.text.startsWith(`start ${masked} x`)).toBe(true)
      const big = yield* agents.getAgentResults(me, { agentId: a.agent_id, cursor: first.cursor!, limit: 8_000 })
      expect(big).toMatchObject({ offset: 4_000, next_offset: body.length, truncated: false })
      expect(big.cursor).toBeUndefined()
      expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: a.agent_id, limit: 8_001 })))._tag).toBe("InvalidRequest")
      // a cursor from another tool, or for another agent, is refused
      const foreign = yield* Cursor.encode({ tool: "manage_process", evidence: a.agent_id, offset: 0, unit: "byte" }).pipe(
        Effect.provide(Cursor.layerKey(KEY))
      )
      expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: a.agent_id, cursor: foreign })))._tag).toBe("CursorError")
      const b = yield* agents.spawn(me, { agent: "scripted", task: "page-b" })
      expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: b.agent_id })))._tag).toBe("AgentRunning")
      yield* open("page-b", "fail:it went wrong")
      yield* waitFor(agents, [b.agent_id], 60_000)
      expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: b.agent_id, cursor: first.cursor! })))._tag).toBe("InvalidRequest")
      const error = yield* agents.getAgentResults(me, { agentId: b.agent_id })
      expect(error).toMatchObject({ kind: "error", status: "failed", text: "it went wrong", error_bytes: 13, result_bytes: 0 })
    }))

  it.scoped("a signed cursor into the middle of a character is refused", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const a = yield* agents.spawn(me, { agent: "scripted", task: "mid-char" })
      yield* open("mid-char", "ééé")
      yield* waitFor(agents, [a.agent_id], 60_000)
      const inside = Cursor.codec(KEY, Agents.TOOL, "byte").encode(a.agent_id, 1)
      const past = Cursor.codec(KEY, Agents.TOOL, "byte").encode(a.agent_id, 7)
      expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: a.agent_id, cursor: inside })))).toMatchObject({ _tag: "InvalidRequest", argument: "cursor" })
      expect((yield* Effect.flip(agents.getAgentResults(me, { agentId: a.agent_id, cursor: past })))._tag).toBe("InvalidRequest")
    }))

  it.scoped("tool metadata has its own allowance and says truly how many tools it left out", () =>
    Effect.gen(function*() {
      const busy: Agents.AgentDefinition = {
        name: "busy",
        description: "uses many tools",
        run: (ctx) => Effect.as(Effect.forEach(["read_spill", "grep_spill", "run_command", "fetch"], ctx.toolUsed), "ok")
      }
      const { agents } = yield* runtime({}, { toolsAllowance: 60 }, [busy])
      const s = yield* agents.spawn(me, { agent: "busy", task: "" })
      yield* agents.waitForAgents(me, { agentIds: [s.agent_id], timeoutMillis: 60_000 })
      const page = yield* agents.getAgentResults(me, { agentId: s.agent_id })
      expect(JSON.stringify(page.tools).length).toBeLessThanOrEqual(60)
      expect(page.tools!.length + page.tools_omitted!).toBe(4)
      expect(page.tools_omitted).toBeGreaterThan(0)
    }))

  it.effect.prop("paging any body under any budget returns it whole, every page within the budget", [
    fc.string({ unit: "binary", maxLength: 3_000 }),
    // the smallest budget that still holds one agent's wait roster
    fc.integer({ min: 2_000, max: 4_000 }),
    fc.integer({ min: 4, max: 8_000 })
  ], ([body, budgetChars, limit]) =>
    Effect.scoped(Effect.gen(function*() {
      const { agents } = yield* runtime({}, { budgetChars })
      const task = `prop-${Math.random()}`
      const s = yield* agents.spawn(me, { agent: "scripted", task })
      yield* open(task, body)
      const waited = yield* waitFor(agents, [s.agent_id], 60_000)
      expect(withinBudget(waited, budgetChars)).toBe(true)
      let cursor: string | undefined
      let text = ""
      let offset = 0
      for (;;) {
        const page = yield* agents.getAgentResults(me, { agentId: s.agent_id, cursor, limit })
        expect(codePoints(Delivery.serialize(Agents.deliveredPage(page)))).toBeLessThanOrEqual(budgetChars)
        expect(page.offset).toBe(offset)
        if (page.truncated) expect(page.next_offset).toBeGreaterThan(page.offset)
        text += page.text
        offset = page.next_offset
        if (!page.truncated) break
        cursor = page.cursor
      }
      expect(offset).toBe(Buffer.byteLength(body))
      expect(text).toBe(Buffer.from(body).toString())
    })), { fastCheck: { numRuns: 30 } })
})
