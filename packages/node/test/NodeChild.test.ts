import { describe, expect, it } from "@effect/vitest"
import { NodeChild } from "@spillway/node"
import { Effect, Exit } from "effect"

describe("NodeChild.run", () => {
  it.live("hands on all output in bounded batches, with a slow consumer", () =>
    Effect.gen(function*() {
      let total = 0
      let largest = 0
      const status = yield* NodeChild.run(
        "sh",
        ["-c", "head -c 20000000 /dev/zero; echo done >&2"],
        (chunk) =>
          Effect.gen(function*() {
            total += chunk.length
            largest = Math.max(largest, chunk.length)
            yield* Effect.sleep("1 millis")
          }),
        { maxBatchBytes: 256 * 1024, maxQueuedBytes: 512 * 1024 }
      )
      expect(status).toBe(0)
      expect(total).toBe(20_000_000 + "done\n".length)
      expect(largest).toBeLessThanOrEqual(256 * 1024)
    }))

  it.effect("reports exit codes, signals as 128+N, and commands that cannot start", () =>
    Effect.gen(function*() {
      const none = () => Effect.void
      expect(yield* NodeChild.run("sh", ["-c", "exit 7"], none)).toBe(7)
      expect(yield* NodeChild.run("sh", ["-c", "kill -KILL $$"], none)).toBe(137)
      const missing = yield* Effect.exit(NodeChild.run("no-such-command-here", [], none))
      expect(Exit.isFailure(missing) && JSON.stringify(missing.cause)).toContain("SpawnError")
    }))

  it.live("keeps reading after one pipe closes, and keeps the written order with mergeStderr", () =>
    Effect.gen(function*() {
      for (const mergeStderr of [false, true]) {
        let out = ""
        const collect = (c: Uint8Array) => Effect.sync(() => (out += Buffer.from(c).toString()))
        yield* NodeChild.run("sh", ["-c", "exec 2>&-; echo a; sleep 0.2; echo b"], collect, { mergeStderr })
        expect(out).toBe("a\nb\n")
      }
      let merged = ""
      yield* NodeChild.run(
        "sh",
        ["-c", "for i in 1 2 3 4 5 6 7 8 9; do echo out$i; echo err$i >&2; done"],
        (c) => Effect.sync(() => (merged += Buffer.from(c).toString())),
        { mergeStderr: true }
      )
      expect(merged).toBe([1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `out${i}\nerr${i}\n`).join(""))
      const missing = yield* Effect.exit(NodeChild.run("no-such-command-here", [], () => Effect.void, { mergeStderr: true }))
      expect(Exit.isFailure(missing) && JSON.stringify(missing.cause)).toContain("not found")
    }))

  it.effect("closes stdin, so commands that read it end", () =>
    Effect.gen(function*() {
      let out = ""
      const status = yield* NodeChild.run("cat", [], (c) => Effect.sync(() => (out += Buffer.from(c).toString())))
      expect(status).toBe(0)
      expect(out).toBe("")
    }))
})
