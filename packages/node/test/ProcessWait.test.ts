import { describe, expect, it } from "@effect/vitest"
import { Access, Body, Cursor, Manifests, Process, Retention, Secrets } from "@spillway/core"
import { NodeBodyFiles, NodeChild } from "@spillway/node"
import { Effect, Layer } from "effect"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-wait-")

const me: Process.Caller = { owner: "alice", channel: "chat-1" }

/** A manager in the current scope, its spools in a fresh directory. */
const manager = (options: Process.Options = {}) =>
  Effect.flatMap(
    Layer.build(Layer.mergeAll(
      NodeChild.layer(),
      Cursor.layerKey(new Uint8Array(32).fill(7)),
      Body.layer.pipe(Layer.provideMerge(Layer.mergeAll(
        NodeBodyFiles.layer({ directory: tempDir() }),
        Manifests.layerMemory,
        Retention.layer(),
        Secrets.layer(),
        Access.allowOwners
      )))
    ).pipe(Layer.orDie)),
    (context) => Process.make({ spool: "durable", ...options }).pipe(Effect.provide(context))
  )

const shell = (command: string): Process.StartRequest => ({ command, shell: true })

/**
 * A wait on a pattern means from now on: a line printed before the call
 * does not end it; `fromLine` counts the lines already there, and every
 * result names where to go on from.
 */
describe("a wait on a pattern", () => {
  it.scopedLive("does not end on a line printed before the call, but on the next one that matches", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("echo compiled ok; sleep 1.5; echo waiting; echo compiled ok; sleep 30"))
      const first = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "compiled", fromLine: 1 })
      expect(first.retention.wait).toMatchObject({ ended_by: "match", match: { line: 1, text: "compiled ok" }, from_line: 1, next_line: 2 })
      const began = Date.now()
      const next = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "compiled" })
      // the old line 1 is there all along; the wait ends only when line 3 is printed
      expect(next.retention.wait).toMatchObject({ ended_by: "match", match: { line: 3, text: "compiled ok" }, from_line: 2, next_line: 4 })
      expect(Date.now() - began).toBeGreaterThanOrEqual(500)
      expect(next.retention.status).toBe("running")
      yield* m.cancel(me, pid)
    }))

  it.scopedLive("ends at the timeout on an old line, and goes on from its next_line without missing a line printed between waits", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("echo ready; echo ready again; sleep 1; echo NEEDLE; sleep 30"))
      yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "again", fromLine: 1 })
      const none = yield* m.wait(me, { pid, timeoutMillis: 200, pattern: "ready|NEEDLE" })
      expect(none.retention.wait).toMatchObject({ ended_by: "timeout", from_line: 3, next_line: 3 })
      expect(none.retention.wait?.match).toBeUndefined()
      yield* Effect.sleep("1500 millis")
      // NEEDLE came between the two waits: a wait from now on would not see it, one from next_line does
      const later = yield* m.wait(me, { pid, timeoutMillis: 200, pattern: "NEEDLE" })
      expect(later.retention.wait?.ended_by).toBe("timeout")
      const on = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "NEEDLE", fromLine: none.retention.wait!.next_line! })
      expect(on.retention.wait).toMatchObject({ ended_by: "match", match: { line: 3, text: "NEEDLE" }, next_line: 4 })
      yield* m.cancel(me, pid)
    }))

  it.scopedLive("on a job that has ended ends at its exit, even on a last line without a break, unless told to look back", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("echo one; printf 'done-line'"))
      yield* m.wait(me, { pid, timeoutMillis: 10_000 })
      const now = yield* m.wait(me, { pid, timeoutMillis: 5_000, pattern: "one|done" })
      expect(now.retention.wait?.ended_by).toBe("exit")
      expect(now.retention.wait?.match).toBeUndefined()
      const back = yield* m.wait(me, { pid, timeoutMillis: 5_000, pattern: "done", fromLine: 1 })
      expect(back.retention.wait).toMatchObject({ ended_by: "match", match: { line: 2, text: "done-line" } })
      const fromTwo = yield* m.wait(me, { pid, timeoutMillis: 5_000, pattern: "one|done", fromLine: 2 })
      expect(fromTwo.retention.wait?.match).toEqual({ line: 2, text: "done-line" })
    }))

  it.scopedLive("past the head: from now on in the window, and a from_line in the dropped middle starts at the window", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 1_000, tailBytes: 2_000 })
      const { pid } = yield* m.start(me, shell("seq 1 1000; echo NEEDLE 1; sleep 1; echo NEEDLE 2; sleep 30"))
      const first = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "NEEDLE", fromLine: 1 })
      expect(first.retention.wait?.match).toEqual({ line: 1001, text: "NEEDLE 1" })
      const next = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "NEEDLE" })
      expect(next.retention.wait).toMatchObject({ ended_by: "match", match: { line: 1002, text: "NEEDLE 2" }, from_line: 1002 })
      const dropped = next.retention.kept!.dropped!
      expect(dropped.to_line - dropped.from_line).toBeGreaterThan(100)
      const middle = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "^\\d+$|NEEDLE", fromLine: dropped.from_line + 10 })
      // the middle is not kept: the pattern is first tried on the window's first whole line
      expect(middle.retention.wait!.from_line).toBeGreaterThan(dropped.to_line)
      expect(middle.retention.wait!.match!.line).toBe(middle.retention.wait!.from_line)
      expect(middle.retention.wait!.match!.text).toBe(String(middle.retention.wait!.from_line))
      yield* m.cancel(me, pid)
    }))

  it.scopedLive("counts the line still being written when the call came: it ends after the call", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("echo first; printf 'compil'; sleep 1; echo 'ed ok'; sleep 30"))
      yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "first", fromLine: 1 })
      const v = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "compiled|first" })
      expect(v.retention.wait).toMatchObject({ ended_by: "match", match: { line: 2, text: "compiled ok" }, from_line: 2 })
      yield* m.cancel(me, pid)
    }))

  it.scopedLive("passes over a line longer than a scan block printed before the call", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("head -c 2500000 /dev/zero | tr '\\0' a; echo; echo tail; sleep 1; echo again-a; sleep 30"))
      yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "^tail$", fromLine: 1 })
      const v = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "a" })
      expect(v.retention.wait).toMatchObject({ ended_by: "match", match: { line: 3, text: "again-a" }, from_line: 3 })
      yield* m.cancel(me, pid)
    }), 30_000)

  it.scopedLive("refuses a from_line that is not a line number, or that has no pattern", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("echo x; sleep 30"))
      for (const fromLine of [0, -1, 1.5, Number.NaN]) {
        const e = yield* Effect.flip(m.wait(me, { pid, timeoutMillis: 10, pattern: "x", fromLine }))
        expect(e).toMatchObject({ _tag: "InvalidRequest", argument: "from_line" })
      }
      const alone = yield* Effect.flip(m.wait(me, { pid, timeoutMillis: 10, fromLine: 1 }))
      expect(alone).toMatchObject({ _tag: "InvalidRequest", argument: "from_line" })
      expect(alone.message).toContain("give a pattern")
      yield* m.cancel(me, pid)
    }))
})
