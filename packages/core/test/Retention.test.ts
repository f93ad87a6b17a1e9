import { describe, expect, it } from "@effect/vitest"
import * as Retention from "@spillway/core/Retention"
import { Effect, Either, FastCheck as fc } from "effect"

describe("Retention", () => {
  it.effect("reserves before writing, grows within what is free, settles what was used and releases once", () =>
    Effect.gen(function*() {
      const q = Retention.make({ p: { bytes: 10 } })
      const a = yield* q.reserve("p", 4)
      const b = yield* q.reserve("p", 4)
      const refused = yield* Effect.flip(q.reserve("p", 4))
      expect(refused).toMatchObject({ _tag: "QuotaExceeded", pool: "p", unit: "bytes", wanted: 4, available: 2, limit: 10 })
      expect(a.grow(5)).toBe(2)
      expect(a.held()).toBe(6)
      a.settle(3)
      a.settle(3)
      yield* a.release
      expect(q.usage("p")).toMatchObject({ used: 3, reserved: 4, entries: 2 })
      yield* b.release
      yield* b.release
      expect(q.usage("p")).toMatchObject({ used: 3, reserved: 0, entries: 1 })
      q.free("p", 3)
      expect(q.usage("p")).toMatchObject({ used: 0, reserved: 0, entries: 0 })
    }))

  it.effect("counts entries, and a body found at start-up holds room even past the limit", () =>
    Effect.gen(function*() {
      const q = Retention.make({ s: { bytes: 100, entries: 2 } })
      yield* q.reserve("s", 1)
      yield* q.reserve("s", 1)
      expect(yield* Effect.flip(q.reserve("s", 1))).toMatchObject({ unit: "entries", limit: 2 })
      const remote = Retention.make({ spool: { bytes: 10 } })
      remote.hold("spool", 20)
      expect((yield* Effect.flip(remote.reserve("spool", 1)))._tag).toBe("QuotaExceeded")
      expect((yield* remote.reserve("spool", 0)).grow(5)).toBe(0)
    }))

  it("gives every profile of the source designs its figures, and other pools no limit", () => {
    const q = Retention.make()
    expect(q.usage("evidence").limit).toBe(64 * 1024 * 1024)
    expect(q.usage("spool").limit).toBe(128 * 1024 * 1024)
    expect(q.usage("scratch")).toMatchObject({ limit: 64 * 1024 * 1024, entryLimit: 512 })
    expect(q.usage("anything").limit).toBe(Number.POSITIVE_INFINITY)
    expect(q.expiresAt("evidence", 1000)).toBe(1000 + 24 * 60 * 60 * 1000)
    expect(q.expiresAt("spill", 1000)).toBeNull()
  })

  it.prop("used plus reserved never passes the limit, whatever writers do in whatever order", [
    fc.array(
      fc.tuple(fc.constantFrom("reserve", "grow", "settle", "release", "free"), fc.integer({ min: 0, max: 60 }), fc.nat(20)),
      { maxLength: 120 }
    )
  ], ([ops]) => {
    const q = Retention.make({ p: { bytes: 100 } })
    const live: Array<Retention.Reservation> = []
    let kept = 0
    for (const [op, n, pick] of ops) {
      const r = live.length > 0 ? live[pick % live.length]! : undefined
      if (op === "reserve") {
        const got = Effect.runSync(Effect.either(q.reserve("p", n)))
        if (Either.isRight(got)) live.push(got.right)
      } else if (op === "grow") r?.grow(n)
      else if (op === "settle" && r !== undefined) {
        const k = Math.min(n, r.held())
        r.settle(k)
        kept += k
        live.splice(live.indexOf(r), 1)
      } else if (op === "release" && r !== undefined) {
        Effect.runSync(r.release)
        live.splice(live.indexOf(r), 1)
      } else if (op === "free" && kept > 0) {
        q.free("p", Math.min(n, kept))
        kept -= Math.min(n, kept)
      }
      const u = q.usage("p")
      expect(u.used + u.reserved).toBeLessThanOrEqual(100)
      expect(u.reserved).toBe(live.reduce((s, x) => s + x.held(), 0))
      expect(u.used).toBe(kept)
    }
  })
})
