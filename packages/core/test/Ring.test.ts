import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Ring from "../src/internal/ring.js"

/** The model: every byte pushed, of which a ring keeps the newest `capacity`. */
const concat = (parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

describe("Ring", () => {
  it("keeps the newest bytes of any pushes, across its growth and its wrapping", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40_000 }),
        fc.array(fc.uint8Array({ maxLength: 20_000 }), { maxLength: 30 }),
        fc.integer({ min: 0, max: 50_000 }),
        (capacity, parts, ask) => {
          const ring = Ring.make(capacity)
          const pushed: Array<Uint8Array> = []
          for (const part of parts) {
            ring.push(part)
            pushed.push(part)
            const all = concat(pushed)
            const kept = all.subarray(Math.max(0, all.length - capacity))
            expect(ring.written()).toBe(all.length)
            const n = Math.min(ask, kept.length)
            expect(ring.last(ask)).toEqual(kept.subarray(kept.length - n))
            for (const back of [1, 2, kept.length, kept.length + 1]) {
              expect(ring.byteBack(back)).toBe(back >= 1 && back <= kept.length ? kept[kept.length - back] : -1)
            }
            expect(ring.held()).toBeLessThanOrEqual(capacity)
          }
        }
      ),
      { numRuns: 200 }
    )
  })

  it("holds as much memory as a short stream needs, not its whole capacity", () => {
    const ring = Ring.make(256 * 1024)
    expect(ring.held()).toBe(0)
    ring.push(new TextEncoder().encode("hi\n"))
    expect(ring.held()).toBe(4096)
    ring.push(new Uint8Array(10_000).fill(7))
    expect(ring.held()).toBe(10_003)
    for (let i = 0; i < 100; i++) ring.push(new Uint8Array(10_000).fill(i))
    expect(ring.held()).toBe(256 * 1024)
    expect(ring.last(3)).toEqual(new Uint8Array(3).fill(99))
  })
})
