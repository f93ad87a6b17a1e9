import { describe, expect, it } from "@effect/vitest"
import * as RetentionQuota from "@spillway/core/RetentionQuota"
import { Effect, FastCheck as fc } from "effect"

describe("RetentionQuota", () => {
  it.effect("reserves whole allowances, refuses past the limit, and releases once", () =>
    Effect.gen(function*() {
      const q = RetentionQuota.make(10)
      const a = yield* q.reserve(4)
      const b = yield* q.reserve(4)
      const refused = yield* Effect.flip(q.reserve(4))
      expect(refused).toMatchObject({ _tag: "QuotaExhausted", wanted: 4, available: 2, limit: 10 })
      expect(q.take(5)).toBe(2)
      yield* a.release
      yield* a.release
      expect(q.usage()).toEqual({ used: 2, reserved: 4, limit: 10 })
      yield* b.release
      q.hold(20)
      expect(q.take(1)).toBe(0)
      expect((yield* Effect.flip(q.reserve(1)))._tag).toBe("QuotaExhausted")
    }))

  it.prop("used plus reserved never passes the limit through take and reserve", [
    fc.array(fc.tuple(fc.constantFrom("take", "reserve", "give"), fc.integer({ min: 0, max: 50 })), { maxLength: 60 })
  ], ([ops]) => {
    const q = RetentionQuota.make(100)
    for (const [op, n] of ops) {
      if (op === "take") q.take(n)
      else if (op === "give") q.give(n)
      else Effect.runSync(Effect.either(q.reserve(n)))
      const u = q.usage()
      expect(u.used + u.reserved).toBeLessThanOrEqual(100)
      expect(u.used).toBeGreaterThanOrEqual(0)
    }
  })
})
