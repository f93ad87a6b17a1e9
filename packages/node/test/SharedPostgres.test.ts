import { describe, expect, it } from "@effect/vitest"
import { Evidence, Process } from "@spillway/core"
import { NodeEvidence, NodeProcess } from "@spillway/node"
import { Effect, Layer } from "effect"
import { freshDatabase, pgUrl } from "./pg.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-shared-")

describe.skipIf(pgUrl === undefined)("two servers sharing one PostgreSQL and one directory", () => {
  const me = { owner: "alice", channel: "chat-1" }

  it.scopedLive("see the same kept output and the same jobs", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const directory = tempDir()
      // evidence: kept by one, read by the other through the shared manifests (and the shared key file)
      const one = yield* Layer.build(NodeEvidence.layer({ directory, manifests: url }))
      const two = yield* Layer.build(NodeEvidence.layer({ directory, manifests: url }))
      const kept = yield* Evidence.retain({ owner: "alice", tool: "bash", status: "exit 0", body: "x\n".repeat(20_000) }).pipe(
        Effect.provide(one)
      )
      const page = yield* Evidence.getToolOutput(kept.first.next_cursor!, me).pipe(Effect.provide(two))
      expect("content" in page && page.offset).toBe(kept.first.head!.length)

      // jobs: started by one manager, seen by another started after it
      const first = yield* Layer.build(NodeProcess.layer({ directory, manifests: url }))
      const { pid } = yield* Process.start(me, { command: "echo shared; exit 2", shell: true }).pipe(Effect.provide(first))
      yield* Process.wait(me, { pid, timeoutMillis: 10_000 }).pipe(Effect.provide(first))
      const second = yield* Layer.build(NodeProcess.layer({ directory, manifests: url }))
      const jobs = yield* Process.list(me).pipe(Effect.provide(second))
      expect(jobs.map((j) => [j.pid, j.status, j.exit_code, j.read_only])).toEqual([[pid, "exited", 2, true]])
      const view = yield* Process.poll(me, { pid }).pipe(Effect.provide(second))
      expect(view._tag === "StatusView" && view.output).toBe("shared\n")
    }))
})
