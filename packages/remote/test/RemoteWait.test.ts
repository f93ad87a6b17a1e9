import { describe, expect, it } from "@effect/vitest"
import { Controller } from "@spillway/remote"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import { hostFiles, hostProcess } from "./hosts.js"

const me = { owner: "agent-1", channel: "conversation-7" }

type Waited = { readonly retention: { readonly wait?: Record<string, unknown> } }

/** A wait over a lease means what a local wait means: a line printed from now on, or from `fromLine`. */
describe("a host wait on a pattern", () => {
  it.scopedLive("ends on a line printed after the call, and counts the lines already printed from fromLine on", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { port } = yield* hostProcess(files)
      const context = yield* Layer.build(
        Controller.layer({ callTimeout: "20 seconds" }).pipe(Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })))
      )
      const leased = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease("cred-a-4f9c2e7b1d8a", me)).pipe(Effect.provide(context))
      const job = yield* leased.start({ command: "echo compiled ok; sleep 1.5; echo compiled ok; sleep 30" })
      const first = (yield* leased.wait(job.pid, 10_000, "compiled", 1)) as Waited
      expect(first.retention.wait).toMatchObject({ ended_by: "match", match: { line: 1 }, next_line: 2 })
      const next = (yield* leased.wait(job.pid, 10_000, "compiled")) as Waited
      expect(next.retention.wait).toMatchObject({ ended_by: "match", match: { line: 2, text: "compiled ok" }, from_line: 2, next_line: 3 })
      yield* leased.signal(job.pid, "SIGKILL")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})
