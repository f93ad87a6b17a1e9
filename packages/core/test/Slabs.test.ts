import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Slabs from "../src/Slabs.js"

describe("Slabs", () => {
  it("lends views of one slab in a row, and uses a full slab again only once every view of it is given back", () => {
    const pool = Slabs.pool({ first: 16, large: 64 })
    const a = pool.take(10)
    const b = pool.take(6)
    expect(a.slab).toBe(b.slab)
    expect(Slabs.adjoins(a, b)).toBe(true)
    // the first slab is full: the next is a large one
    const c = pool.take(40)
    expect(c.slab).not.toBe(a.slab)
    expect(c.slab!.bytes.length).toBe(64)
    const d = pool.take(30)
    expect(d.slab).not.toBe(c.slab)
    // d's slab, once given back and too full for the next, comes back from its start; c's still lends c
    Slabs.giveBack(d)
    const e = pool.take(40)
    expect(e.slab).toBe(d.slab)
    expect(e.bytes.byteOffset).toBe(0)
    // neither is free now: a third slab
    const f = pool.take(40)
    expect(f.slab).not.toBe(c.slab)
    expect(f.slab).not.toBe(e.slab)
    // c given back: its slab comes back when the current one is full
    Slabs.giveBack(c)
    const g = pool.take(40)
    expect(g.slab).toBe(c.slab)
    // more than a slab holds: a buffer of its own
    expect(pool.take(65).slab).toBeUndefined()
  })

  it("allocates nothing until it lends, and reads of unknown length claim what they used", () => {
    let made = 0
    const pool = Slabs.pool({ first: 8, large: 32, allocate: (n) => (made++, new Uint8Array(n)) })
    expect(made).toBe(0)
    const room = pool.free(8)
    expect(made).toBe(1)
    room.set([1, 2, 3])
    const got = pool.claim(3)
    expect([...got.bytes]).toEqual([1, 2, 3])
    const split = Slabs.split(got, 1)
    expect([...split.bytes]).toEqual([2, 3])
    expect(got.slab!.lent).toBe(2)
    Slabs.giveBack(got)
    Slabs.giveBack(split)
    expect(got.slab!.lent).toBe(0)
  })

  it("once released, hands every slab nothing borrows to `recycle`, never one still lent, and starts afresh", () => {
    const recycled: Array<Uint8Array> = []
    const pool = Slabs.pool({ first: 8, large: 32, recycle: (b) => recycled.push(b) })
    const first = pool.take(8)
    const second = pool.take(20)
    const third = pool.take(30)
    Slabs.giveBack(first)
    Slabs.giveBack(third)
    pool.release()
    // the first slab and the third's, not the second's: its region is still lent
    expect(recycled.map((b) => b.buffer)).toEqual([first.slab!.bytes.buffer, third.slab!.bytes.buffer])
    expect(recycled).not.toContain(second.slab!.bytes)
    // the pool lends from a slab of its own again
    const next = pool.take(4)
    expect(next.slab).not.toBe(first.slab)
    expect(next.slab!.bytes.length).toBe(8)
  })

  it("views regions as few as they make: neighbours in one slab as one view, buffers of their own joined in one copy", () => {
    const pool = Slabs.pool({ first: 64, large: 64 })
    const a = pool.take(10)
    const b = pool.take(20)
    a.bytes.fill(1)
    b.bytes.fill(2)
    const own = [{ slab: undefined, bytes: Uint8Array.of(3, 3) }, { slab: undefined, bytes: Uint8Array.of(4) }]
    const c = pool.take(5)
    c.bytes.fill(5)
    const out = Slabs.views([a, b, ...own, c])
    expect(out.map((v) => [...v])).toEqual([[...a.bytes, ...b.bytes], [3, 3, 4], [5, 5, 5, 5, 5]])
    // the first is a view of the slab, not a copy
    expect(out[0]!.buffer).toBe(a.slab!.bytes.buffer)
    expect(Slabs.views([])).toEqual([])
  })

  it.prop("never lends bytes another region still holds, and keeps a bounded number of slabs for a stream that gives back", [
    fc.array(fc.record({ size: fc.integer({ min: 1, max: 70 }), hold: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 300 })
  ], ([steps]) => {
    const slabs = new Set<Uint8Array>()
    const pool = Slabs.pool({ first: 16, large: 64, allocate: (n) => {
      const bytes = new Uint8Array(n)
      slabs.add(bytes)
      return bytes
    } })
    // each region is filled with its own number; a region overwritten by a later one would show another
    const held: Array<{ region: Slabs.Region; mark: number }> = []
    steps.forEach(({ size, hold }, mark) => {
      const region = pool.take(size)
      region.bytes.fill(mark & 0xff)
      held.push({ region, mark: mark & 0xff })
      while (held.length > hold) {
        const { region: oldest, mark: m } = held.shift()!
        expect(oldest.bytes.every((b) => b === m)).toBe(true)
        Slabs.giveBack(oldest)
      }
    })
    for (const { region, mark } of held) expect(region.bytes.every((b) => b === mark)).toBe(true)
    // at most three regions are held at once: a few slabs serve the whole stream
    expect(slabs.size).toBeLessThanOrEqual(8)
  })
})
