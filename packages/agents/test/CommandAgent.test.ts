import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Agents } from "@spillway/agents"
import { Child } from "@spillway/core"
import { NodeChild } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { masked, me, runtime, SECRET, tempDir } from "./fixtures.js"

const runners: ReadonlyArray<readonly [string, Layer.Layer<Child.ChildRunner>]> = [
  ["Node's child runner", NodeChild.layer()],
  ["the runner over the platform's CommandExecutor", Child.layerExecutor.pipe(Layer.provide(NodeCommandExecutor.layer), Layer.provide(NodeFileSystem.layer))]
]

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

for (const [name, runner] of runners) {
  describe(`command agents through ${name}`, () => {
    it.scopedLive("run real commands: the output is the body, masked, in the order it came; a failure is an error body saying how it ended", () =>
      Effect.gen(function*() {
        const definitions = [
          Agents.commandAgent("echo", "answers with the task", (task) => ["/bin/sh", "-c", `echo "answer to $1: ${SECRET}"`, "_", task]),
          Agents.commandAgent("both", "writes to both pipes", () => ["/bin/sh", "-c", "echo one; echo two >&2; echo three"]),
          Agents.commandAgent("fail", "exits 3", () => ["/bin/sh", "-c", "echo nope; exit 3"]),
          Agents.commandAgent("killed", "is killed by a signal", () => ["/bin/sh", "-c", "echo going; kill -TERM $$"]),
          Agents.commandAgent("missing", "cannot start", () => ["no-such-agent-binary"])
        ]
        const { agents } = yield* runtime({ runner }, {}, definitions)
        const ids: Array<string> = []
        for (const d of definitions) ids.push((yield* agents.spawn(me, { agent: d.name, task: "life" })).agent_id)
        const done = yield* agents.waitForAgents(me, { agentIds: ids, timeoutMillis: 20_000 })
        expect(done.agents.map((a) => a.status)).toEqual(["completed", "completed", "failed", "failed", "failed"])
        expect(done.agents[0]!.preview).toBe(`answer to life: ${masked}\n`)
        expect(done.agents[1]!.preview).toBe("one\ntwo\nthree\n")
        expect(done.agents[2]!.preview).toBe("nope\n[/bin/sh ended with exit code 3]")
        expect(done.agents[3]!.preview).toBe("going\n[/bin/sh ended by SIGTERM]")
        expect(done.agents[4]!.preview).toContain("no-such-agent-binary")
        expect(done.agents[4]!.preview).toContain("not found")
        const page = yield* agents.getAgentResults(me, { agentId: ids[2]! })
        expect(page).toMatchObject({ kind: "error", status: "failed", text: "nope\n[/bin/sh ended with exit code 3]" })
      }), { timeout: 30_000 })

    it.scopedLive("a command past its lifetime is stopped, its process group with it, and the agent is expired", () =>
      Effect.gen(function*() {
        const pidFile = Path.join(tempDir(), "pid")
        const definitions = [Agents.commandAgent("stuck", "never ends", () => ["/bin/sh", "-c", `sleep 60 & echo $! > ${pidFile}; wait`])]
        const { agents } = yield* runtime({ runner, config: { maxLifetimeSeconds: 1 } }, {}, definitions)
        const { agent_id } = yield* agents.spawn(me, { agent: "stuck", task: "" })
        const done = yield* agents.waitForAgents(me, { agentIds: [agent_id], timeoutMillis: 20_000 })
        expect(done.agents[0]).toMatchObject({ status: "expired", reason: "stopped after its lifetime of 1 seconds" })
        const pid = Number(Fs.readFileSync(pidFile, "utf8"))
        for (let i = 0; i < 50 && alive(pid); i++) yield* Effect.sleep("100 millis")
        expect(alive(pid)).toBe(false)
      }), { timeout: 30_000 })
  })
}
