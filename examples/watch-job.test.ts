import { describe, expect, it } from "@effect/vitest"
import { Process } from "@spillway/core"
import { Effect, Layer } from "effect"
import { layer, review, startAndWatch } from "./watch-job.js"

const me = { owner: "example", channel: "test" }

describe("watch-job example", () => {
  it.scopedLive("waits for the line that matters, then a read-only reviewer reads everything", () =>
    Effect.gen(function*() {
      const full = yield* Layer.build(layer())
      const { pid, view } = yield* startAndWatch(me, "echo compiling; sleep 0.2; echo 'error: it broke'; sleep 5", "error:").pipe(
        Effect.provide(full)
      )
      expect(view.retention.wait?.ended_by).toBe("match")
      expect(view.retention.wait?.match).toEqual({ line: 2, text: "error: it broke" })
      expect(view.retention.status).toBe("running")
      const reader = yield* Layer.build(Process.readOnly(Layer.succeedContext(full)))
      expect(yield* review(me, pid).pipe(Effect.provide(reader))).toBe("compiling\nerror: it broke\n")
      // the reviewer's context cannot stop the job; the host's can
      yield* Process.ProcessControl.pipe(Effect.flatMap((c) => c.cancel(me, pid)), Effect.provide(full))
      const done = yield* Process.poll(me, { pid }).pipe(Effect.provide(reader))
      expect(done._tag === "StatusView" && done.retention.status).toBe("exited")
    }))
})
