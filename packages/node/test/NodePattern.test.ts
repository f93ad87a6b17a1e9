import { describe, expect, it } from "@effect/vitest"
import { Grep } from "@spillway/core"
import { NodePattern } from "@spillway/node"
import { Effect, Either, Fiber } from "effect"

const matcher = (p: string) => Either.getOrThrow(Grep.compile(p))

/** A megabyte of a and b at random, one line: the lazy DFA gives up on the pattern below and RE2's NFA takes seconds over it. */
const heavyLine = () => {
  let s = ""
  for (let i = 0; i < 1 << 20; i++) s += Math.random() < 0.5 ? "a" : "b"
  return s
}
const heavyPattern = "(?:a|b)*a[ab]{999}[^ab]"

describe("NodePattern", () => {
  it.scopedLive("finds the same lines as the inline engine", () =>
    Effect.gen(function*() {
      const engine = yield* NodePattern.make()
      const text = ["error: unit 3 failed", "ok", "error: unit x failed", "ERROR: unit 4 failed", "error: unit 42 failed"].join("\n")
      const options = { limit: 10, maxLineChars: 1000, timeoutMillis: 10_000 }
      const m = matcher("error: unit [0-9]+ failed")
      const theirs = yield* Grep.inline.scan(m, text, options)
      const ours = yield* engine.scan(m, text, options)
      expect(ours).toMatchObject({ matches: theirs.matches, more: false, complete: true })
      expect(ours.matches.map(([k]) => k)).toEqual([0, 4])
    }))

  it.scopedLive("highlights lines as the inline engine does, and ends a hostile highlighting at its deadline with the batches done, the event loop free", () =>
    Effect.gen(function*() {
      const engine = yield* NodePattern.make()
      const m = matcher("unit [0-9]+")
      const lines = ["error: unit 3 failed, unit 4 too", "ok", "unit 42"]
      const options = { limit: 64, maxLineChars: 1000, timeoutMillis: 10_000 }
      const ours = yield* engine.highlight(m, lines, options)
      expect(ours).toEqual(yield* Grep.inline.highlight(m, lines, options))
      expect(ours).toEqual({ spans: [[[7, 13], [22, 28]], [], [[0, 7]]], complete: true })
      // a fifth of a second a line, 200 lines of 2,000 characters: 40 s of work, stopped after 1 s
      const wide = "compiling packages/pkg-1/src/file-2.ts ok (17 ms) ".repeat(41).slice(0, 1999)
      let ticks = 0
      const interval = setInterval(() => ticks++, 20)
      const started = Date.now()
      const hostile = yield* engine.highlight(matcher("s|(?:\\w+\\W+){1,800}QQQ"), Array.from({ length: 200 }, () => wide), { ...options, timeoutMillis: 1000 })
      const took = Date.now() - started
      clearInterval(interval)
      expect(hostile.complete).toBe(false)
      expect(hostile.spans.length).toBeLessThan(200)
      expect(took).toBeLessThan(2500)
      expect(ticks).toBeGreaterThan(took / 20 / 3)
    }))

  it.scopedLive("ends a scan at its deadline, while the event loop goes on serving others", () =>
    Effect.gen(function*() {
      const engine = yield* NodePattern.make()
      const line = heavyLine()
      let ticks = 0
      const interval = setInterval(() => ticks++, 20)
      const started = Date.now()
      const found = yield* engine.scan(matcher(heavyPattern), line, { limit: 1, maxLineChars: 1 << 20, timeoutMillis: 1000 })
      const took = Date.now() - started
      clearInterval(interval)
      expect(found.complete).toBe(false)
      // the deadline holds (generously), and the loop was never held for the scan's length
      expect(took).toBeLessThan(5000)
      expect(ticks).toBeGreaterThan(10)
      // the pool goes on: a later scan is answered
      const after = yield* engine.scan(matcher("b"), "a\nb\n", { limit: 5, maxLineChars: 100, timeoutMillis: 10_000 })
      expect(after.matches.map(([k]) => k)).toEqual([1])
    }), 30_000)

  it.scopedLive("an interrupted scan ends at once, and scans beyond the pool wait for a worker", () =>
    Effect.gen(function*() {
      const engine = yield* NodePattern.make({ maxWorkers: 1 })
      const line = heavyLine()
      const fiber = yield* Effect.fork(engine.scan(matcher(heavyPattern), line, { limit: 1, maxLineChars: 1 << 20, timeoutMillis: 60_000 }))
      yield* Effect.sleep("200 millis")
      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      expect(Date.now() - started).toBeLessThan(5000)
      // one worker: the second scan waits for the first, which ends at its deadline
      const [first, second] = yield* Effect.all([
        engine.scan(matcher(heavyPattern), line, { limit: 1, maxLineChars: 1 << 20, timeoutMillis: 500 }),
        engine.scan(matcher("x"), "x\ny\n", { limit: 5, maxLineChars: 100, timeoutMillis: 20_000 })
      ], { concurrency: 2 })
      expect(first.complete).toBe(false)
      expect(second).toMatchObject({ complete: true, matches: [[0, 0, 1]] })
    }), 30_000)
})
