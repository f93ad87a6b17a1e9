import { describe, expect, it } from "@effect/vitest"
import { Access, Process, ProcessView, Spill } from "@spillway/core"
import { NodeEvidence, NodeProcess, NodeSpill } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-one-store-")
const me: Access.Caller = { owner: "tester", channel: "chat" }
const KiB = 1024

/**
 * One store per directory, whatever layers a program combines: the spill
 * profile and process jobs over one directory share one quota, so the two
 * together keep no more than it allows.
 */
describe("layers over one directory share one store", () => {
  it.live("a job's spool and its window of newest output, beside the spill profile over one directory, stay within the spool pool's one quota", () =>
    Effect.scoped(Effect.gen(function*() {
      const directory = tempDir()
      const options = { directory, pools: { spool: { bytes: 64 * KiB } } }
      const context = yield* Layer.build(Layer.mergeAll(NodeSpill.layer(options), NodeProcess.layer({ ...options, captureLimitBytes: 16 * KiB })))
      const saved = yield* Spill.keepOutput(`${"a".repeat(99)}\n`.repeat(100), 0).pipe(Effect.provide(context))
      expect(saved.filename).toBeDefined()
      // 300 KB of output: the head and the newest output kept past it share the one 64 KiB spool quota
      const started = yield* Process.start(me, { command: "head -c 300000 /dev/zero | tr '\\0' x | fold -w 99", shell: true }).pipe(
        Effect.provide(context)
      )
      const ended = yield* Process.wait(me, { pid: started.pid, timeoutMillis: 15_000 }).pipe(Effect.provide(context))
      if (ended._tag !== "StatusView") throw new Error("expected the status view")
      expect((ended as ProcessView.StatusView).retention.status).toBe("exited")
      const spools = Fs.readdirSync(directory).filter((f) => f.startsWith("job-"))
      // the newest output is kept too, within the room the head left in the one quota (two quotas refused it, having sized it against the other)
      expect(spools.filter((f) => f.endsWith(".tail.log"))).toHaveLength(1)
      expect(spools.reduce((n, f) => n + Fs.statSync(Path.join(directory, f)).size, 0)).toBeLessThanOrEqual(64 * KiB)
    })), 30_000)

  it.live("two layers over two directories keep each its own output in its own directory", () =>
    Effect.scoped(Effect.gen(function*() {
      const spills = tempDir()
      const jobs = tempDir()
      const context = yield* Layer.build(Layer.mergeAll(NodeSpill.layer({ directory: spills }), NodeProcess.layer({ directory: jobs })))
      yield* Spill.keepOutput(`${"a".repeat(99)}\n`.repeat(100), 0).pipe(Effect.provide(context))
      const started = yield* Process.start(me, { command: "echo in its own directory", shell: true }).pipe(Effect.provide(context))
      yield* Process.wait(me, { pid: started.pid, timeoutMillis: 10_000 }).pipe(Effect.provide(context))
      expect(Fs.readdirSync(jobs).filter((f) => f.startsWith("job-"))).toHaveLength(1)
      expect(Fs.readdirSync(spills).filter((f) => f.startsWith("job-"))).toHaveLength(0)
      expect(Fs.readdirSync(spills).filter((f) => f.endsWith(".log"))).toHaveLength(1)
    })), 30_000)

  it.live("evidence and jobs over one directory are one store: one directory, one cursor key, one set of manifests", () =>
    Effect.scoped(Effect.gen(function*() {
      const directory = tempDir()
      const context = yield* Layer.build(Layer.mergeAll(NodeEvidence.layer({ directory }), NodeProcess.layer({ directory })))
      const started = yield* Process.start(me, { command: "echo one store" , shell: true }).pipe(Effect.provide(context))
      yield* Process.wait(me, { pid: started.pid, timeoutMillis: 10_000 }).pipe(Effect.provide(context))
      expect(Fs.readdirSync(directory).filter((f) => f.startsWith(".manifests.sqlite") && !f.includes("-")).length).toBe(1)
    })), 30_000)
})
