import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { NodeChild } from "@spillway/node"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { AgentConfig, AgentResults, Agents } from "@spillway/agents"
import { Child, Cursor, Secrets } from "@spillway/core"
import { Deferred, Effect, Exit, FastCheck as fc, Fiber, Layer, Scope, TestClock } from "effect"
import * as Fs from "node:fs"

const KEY = new Uint8Array(32).fill(3)
const me: Agents.Caller = { owner: "parent", channel: "conv-1" }
const SECRET = "hunter2-hunter2"

/** Gates scripted agents wait on, by task. */
const gates = new Map<string, Deferred.Deferred<string>>()
const gate = (task: string) => {
  if (!gates.has(task)) gates.set(task, Deferred.unsafeMake<string>(undefined as never))
  return gates.get(task)!
}
const open = (task: string, body: string) => Deferred.succeed(gate(task), body)

/** Waits for its gate; a body starting "fail:" is an error body. Reports one iteration per step and a tool. */
const scripted: Agents.AgentDefinition = {
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
const sleeper: Agents.AgentDefinition = {
  name: "sleeper",
  description: "sleeps",
  run: (ctx) => Effect.as(Effect.sleep(`${Number(ctx.task)} seconds`), "slept")
}

const revoked = new Set<string>()
const authorizer = Layer.succeed(Agents.AgentAuthorizer, {
  canRead: (caller) => Effect.succeed(!revoked.has(caller.owner))
})

const services = (config: Partial<AgentConfig.Config> = {}, persistence?: Layer.Layer<AgentConfig.ConfigPersistence>) =>
  Layer.mergeAll(
    AgentConfig.layer({ ...AgentConfig.defaults, ...config }).pipe(Layer.provide(persistence ?? AgentConfig.persistenceMemory())),
    Secrets.layer({ knownValues: [SECRET] }),
    Cursor.layerKey(KEY),
    authorizer
  ).pipe(Layer.orDie)

/** A runtime in the current scope, with its configuration service. */
const runtime = (config: Partial<AgentConfig.Config> = {}, options: Agents.Options = {}, persistence?: Layer.Layer<AgentConfig.ConfigPersistence>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(services(config, persistence))
    const agents = yield* Agents.make([scripted, sleeper], options).pipe(Effect.provide(context))
    const live = yield* AgentConfig.AgentConfig.pipe(Effect.provide(context))
    return { agents, live }
  })

const waitFor = (r: Agents.Service, ids: ReadonlyArray<string>, timeoutMillis = 1_000, interrupt?: Effect.Effect<string>) =>
  r.waitForAgents(me, { agentIds: ids, timeoutMillis, interrupt })

describe("spawn admission and configuration", () => {
  it.scoped("refuses a spawn past the concurrency limit, saying the limit and how many run", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ maxConcurrentAgents: 2 })
      const a = yield* agents.spawn(me, { agent: "scripted", task: "adm-a" })
      yield* agents.spawn(me, { agent: "scripted", task: "adm-b" })
      const refused = yield* Effect.flip(agents.spawn(me, { agent: "scripted", task: "adm-c" }))
      expect(refused._tag).toBe("AdmissionRefused")
      expect(refused.message).toContain("2 are running and agents.max_concurrent_agents is 2")
      yield* open("adm-a", "done")
      yield* waitFor(agents, [a.agent_id])
      expect(yield* agents.running).toBe(1)
      yield* agents.spawn(me, { agent: "scripted", task: "adm-c" })
      expect((yield* Effect.flip(agents.spawn(me, { agent: "nobody", task: "x" })))._tag).toBe("UnknownAgent")
    }))

  it.scoped("a failed publication keeps the old configuration and catalog; a good one replaces both, for new agents only", () =>
    Effect.gen(function*() {
      let failSaves = true
      const persistence = Layer.succeed(AgentConfig.ConfigPersistence, {
        load: Effect.succeed(undefined),
        save: () => failSaves ? Effect.fail(new AgentConfig.PersistFailed({ reason: "disk full" })) : Effect.void
      })
      const { agents, live } = yield* runtime({ maxConcurrentAgents: 3, maxLifetimeSeconds: 100 }, {}, persistence)
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

  it.scoped("persists a publication to a file that the next start reads", () =>
    Effect.gen(function*() {
      const file = `${process.env.TMPDIR ?? "/tmp"}/spillway-agents-${process.pid}-${Date.now()}.json`
      const persistence = AgentConfig.persistenceFile(file).pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))
      const first = yield* runtime({}, {}, persistence)
      yield* first.live.publish({ maxConcurrentAgents: 4, maxLifetimeSeconds: 60 })
      const second = yield* runtime({}, {}, persistence)
      expect(yield* second.live.current).toEqual({ maxConcurrentAgents: 4, maxLifetimeSeconds: 60 })
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
      yield* Deferred.succeed(message, "the user asked something")
      const interrupted = yield* Fiber.join(waiting)
      expect(interrupted.notice).toContain("interrupted this wait; the agents go on running")
      expect(interrupted.audit).toMatchObject({ interrupted: true, interrupt_reason: "the user asked something" })
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
    }))

  it.scoped("refuses a batch whose roster alone cannot fit, whatever the concurrency limit", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ maxConcurrentAgents: 1 })
      const ids = Array.from({ length: 400 }, (_, i) => `agent-${String(i).padStart(12, "0")}`)
      const refused = yield* Effect.flip(waitFor(agents, ids))
      expect(refused._tag).toBe("BatchTooLarge")
      const fits = (refused as Agents.BatchTooLarge).fits
      expect(fits).toBeGreaterThan(1)
      expect(refused.message).toContain(`split agent_ids into batches of at most ${fits}`)
      const ok = yield* waitFor(agents, ids.slice(0, fits), 0)
      expect(ok.agents.length).toBe(fits)
    }))

  it.scoped("a reader revoked while waiting gets no preview", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const a = yield* agents.spawn(me, { agent: "scripted", task: "rev-a" })
      const waiting = yield* Effect.fork(waitFor(agents, [a.agent_id], 60_000))
      revoked.add(me.owner)
      yield* open("rev-a", `the answer, with ${SECRET}`)
      const exit = yield* Fiber.await(waiting)
      revoked.delete(me.owner)
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("AgentAccessDenied")
      // another owner never reads it
      expect((yield* Effect.flip(agents.getAgentResults({ owner: "other", channel: "conv-1" }, { agentId: a.agent_id })))._tag).toBe(
        "AgentAccessDenied"
      )
    }))

  it.scoped("shrinks previews fairly when the batch would not fit at 800 bytes each", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ maxConcurrentAgents: 30 })
      const ids: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const s = yield* agents.spawn(me, { agent: "scripted", task: `fair-${i}` })
        ids.push(s.agent_id)
        yield* open(`fair-${i}`, `${i} `.padEnd(2_000, "é"))
      }
      const r = yield* waitFor(agents, ids, 60_000)
      expect(JSON.stringify(r).length).toBeLessThanOrEqual(12_000)
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
      expect(r.audit.interrupt_reason).toMatch(/^m+… \[cut: 20000 characters in all\]$/)
      expect(reasonSize(r)).toBeLessThanOrEqual(200)
      expect(JSON.stringify(r).length).toBeLessThanOrEqual(12_000)
    }))

  it.scoped("the largest batch the runtime says fits, and a 5,000-character message of characters JSON escapes", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({ maxConcurrentAgents: 100 })
      const running: Array<string> = []
      for (let i = 0; i < 60; i++) running.push((yield* agents.spawn(me, { agent: "scripted", task: `batch-${i}` })).agent_id)
      const fits = ((yield* Effect.flip(waitFor(agents, running, 60_000))) as Agents.BatchTooLarge).fits
      expect(fits).toBeGreaterThanOrEqual(30)
      for (const message of ["m".repeat(5_000), "\"\\\u0001".repeat(5_000)]) {
        const r = yield* waitFor(agents, running.slice(0, fits), 60_000, Effect.succeed(message))
        expect(r.notice).toBeDefined()
        expect(reasonSize(r)).toBeLessThanOrEqual(200)
        expect(JSON.stringify(r).length).toBeLessThanOrEqual(12_000)
      }
    }))
})

describe("wait_for_agents and get_agent_results with ids no agent has", () => {
  it.scoped("named ids get not_found rows; an id too long to echo is a bounded refusal; a read is a bounded AgentNotFound", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime()
      const odd = ["no such agent", "../x", "x".repeat(200), "ünïcødé"]
      const r = yield* waitFor(agents, odd, 0)
      expect(r.agents.map((row) => [row.agent_id, row.status])).toEqual(odd.map((id) => [id, "not_found"]))
      for (const id of odd) {
        const refused = yield* Effect.flip(agents.getAgentResults(me, { agentId: id }))
        expect(refused._tag).toBe("AgentNotFound")
        expect(refused.message.length).toBeLessThan(400)
      }
      const tooLong = yield* Effect.flip(waitFor(agents, ["z".repeat(10_000_000)], 0))
      expect(tooLong._tag).toBe("InvalidRequest")
      expect(tooLong.message.length).toBeLessThan(400)
    }))
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
      expect(first.text.startsWith(`start ${"*".repeat(SECRET.length)} x`)).toBe(true)
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

  it.scoped("tool metadata has its own allowance and says truly how many tools it left out", () =>
    Effect.gen(function*() {
      const { agents } = yield* runtime({}, { toolsAllowance: 60 })
      const busy: Agents.AgentDefinition = {
        name: "busy",
        description: "uses many tools",
        run: (ctx) => Effect.as(Effect.forEach(["read_spill", "grep_spill", "run_command", "fetch"], ctx.toolUsed), "ok")
      }
      const context = yield* Layer.build(services())
      const r = yield* Agents.make([busy], { toolsAllowance: 60 }).pipe(Effect.provide(context))
      const s = yield* r.spawn(me, { agent: "busy", task: "" })
      yield* r.waitForAgents(me, { agentIds: [s.agent_id], timeoutMillis: 60_000 })
      const page = yield* r.getAgentResults(me, { agentId: s.agent_id })
      expect(JSON.stringify(page.tools).length).toBeLessThanOrEqual(60)
      expect(page.tools!.length + page.tools_omitted!).toBe(4)
      expect(page.tools_omitted).toBeGreaterThan(0)
      expect(agents).toBeDefined()
    }))

  it.effect.prop("paging any body under any budget returns it whole, every page within the budget", [
    fc.string({ unit: "binary", maxLength: 3_000 }),
    // the smallest budget that still holds one agent's wait roster
    fc.integer({ min: 1_500, max: 4_000 }),
    fc.integer({ min: 4, max: 8_000 })
  ], ([body, budgetChars, limit]) =>
    Effect.scoped(Effect.gen(function*() {
      const { agents } = yield* runtime({}, { budgetChars })
      const task = `prop-${Math.random()}`
      const s = yield* agents.spawn(me, { agent: "scripted", task })
      yield* open(task, body)
      yield* waitFor(agents, [s.agent_id], 60_000)
      let cursor: string | undefined
      let text = ""
      let offset = 0
      for (;;) {
        const page = yield* agents.getAgentResults(me, { agentId: s.agent_id, cursor, limit })
        expect(JSON.stringify(page).length).toBeLessThanOrEqual(budgetChars)
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

describe("durable results", () => {
  it.scoped("a finished agent's result is read back by a runtime started after it, by its owner only", () =>
    Effect.gen(function*() {
      const directory = `${process.env.TMPDIR ?? "/tmp"}/spillway-agent-results-${process.pid}-${Date.now()}`
      const results = AgentResults.layerDirectory(directory).pipe(Layer.orDie)
      const first = yield* Scope.make()
      const context = yield* Layer.build(Layer.merge(services(), results)).pipe(Scope.extend(first))
      const before = yield* Agents.make([scripted]).pipe(Effect.provide(context), Scope.extend(first))
      const a = yield* before.spawn(me, { agent: "scripted", task: "durable-a" })
      yield* open("durable-a", `kept ${SECRET} for later`)
      yield* before.waitForAgents(me, { agentIds: [a.agent_id], timeoutMillis: 60_000 })
      yield* Scope.close(first, Exit.void)
      expect(Fs.statSync(`${directory}/${a.agent_id}.json`).mode & 0o777).toBe(0o600)
      const kept = JSON.parse(Fs.readFileSync(`${directory}/${a.agent_id}.json`, "utf8")) as { body: string }
      expect(Buffer.from(kept.body, "base64").toString()).toBe(`kept ${"*".repeat(SECRET.length)} for later`)

      const after = yield* Agents.make([scripted]).pipe(Effect.provide(yield* Layer.build(Layer.merge(services(), results))))
      const page = yield* after.getAgentResults(me, { agentId: a.agent_id })
      expect(page).toMatchObject({ status: "completed", kind: "result", text: `kept ${"*".repeat(SECRET.length)} for later` })
      const snapshot = yield* after.waitForAgents(me, { agentIds: [a.agent_id], timeoutMillis: 0 })
      expect(snapshot.agents[0]).toMatchObject({ status: "completed", iterations: 2 })
      expect(snapshot.audit.durable_results).toEqual([a.agent_id])
      expect((yield* Effect.flip(after.getAgentResults({ owner: "other", channel: "conv-1" }, { agentId: a.agent_id })))._tag).toBe(
        "AgentAccessDenied"
      )
      Fs.rmSync(directory, { recursive: true, force: true })
    }))
})

const runners: ReadonlyArray<readonly [string, Layer.Layer<Child.ChildRunner>]> = [
  ["Node's child runner", NodeChild.layer()],
  ["the runner over the platform's CommandExecutor", Child.layerExecutor.pipe(Layer.provide(NodeCommandExecutor.layer), Layer.provide(NodeFileSystem.layer))]
]

for (const [name, runner] of runners) {
  describe(`command agents through ${name}`, () => {
    it.scopedLive("run real commands: the output is the body, scrubbed, in the order written; a failure is an error body saying how it ended", () =>
      Effect.gen(function*() {
        const definitions = [
          Agents.commandAgent("echo", "answers with the task", (task) => ["/bin/sh", "-c", `echo "answer to $1: ${SECRET}"`, "_", task]),
          Agents.commandAgent("both", "writes to both pipes", () => ["/bin/sh", "-c", "echo one; echo two >&2; echo three"]),
          Agents.commandAgent("fail", "exits 3", () => ["/bin/sh", "-c", "echo nope; exit 3"]),
          Agents.commandAgent("killed", "is killed by a signal", () => ["/bin/sh", "-c", "echo going; kill -TERM $$"]),
          Agents.commandAgent("missing", "cannot start", () => ["no-such-agent-binary"])
        ]
        const context = yield* Layer.build(Layer.merge(services(), runner))
        const r = yield* Agents.make(definitions).pipe(Effect.provide(context))
        const ids: Array<string> = []
        for (const d of definitions) ids.push((yield* r.spawn(me, { agent: d.name, task: "life" })).agent_id)
        const done = yield* r.waitForAgents(me, { agentIds: ids, timeoutMillis: 20_000 })
        expect(done.agents.map((a) => a.status)).toEqual(["completed", "completed", "failed", "failed", "failed"])
        expect(done.agents[0]!.preview).toBe(`answer to life: ${"*".repeat(SECRET.length)}\n`)
        expect(done.agents[1]!.preview).toBe("one\ntwo\nthree\n")
        expect(done.agents[2]!.preview).toBe("nope\n[/bin/sh ended with exit code 3]")
        expect(done.agents[3]!.preview).toBe("going\n[/bin/sh ended by SIGTERM]")
        expect(done.agents[4]!.preview).toContain("no-such-agent-binary")
        expect(done.agents[4]!.preview).toContain("not found")
      }), { timeout: 30_000 })

    it.scopedLive("a command past its lifetime is stopped, its process group with it, and the agent is expired", () =>
      Effect.gen(function*() {
        const pidFile = `${process.env.TMPDIR ?? "/tmp"}/spillway-agent-pid-${process.pid}-${Date.now()}`
        const definitions = [Agents.commandAgent("stuck", "never ends", () => ["/bin/sh", "-c", `sleep 60 & echo $! > ${pidFile}; wait`])]
        const context = yield* Layer.build(Layer.merge(services({ maxLifetimeSeconds: 1 }), runner))
        const r = yield* Agents.make(definitions).pipe(Effect.provide(context))
        const { agent_id } = yield* r.spawn(me, { agent: "stuck", task: "" })
        const done = yield* r.waitForAgents(me, { agentIds: [agent_id], timeoutMillis: 20_000 })
        expect(done.agents[0]).toMatchObject({ status: "expired", reason: "stopped after its lifetime of 1 seconds" })
        const pid = Number(Fs.readFileSync(pidFile, "utf8"))
        Fs.rmSync(pidFile, { force: true })
        const alive = () => {
          try {
            process.kill(pid, 0)
            return true
          } catch {
            return false
          }
        }
        for (let i = 0; i < 50 && alive(); i++) yield* Effect.sleep("100 millis")
        expect(alive()).toBe(false)
      }), { timeout: 30_000 })
  })
}
