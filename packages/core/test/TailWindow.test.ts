import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { countNewlines } from "../src/internal/bytes.js"
import * as Tail from "../src/internal/process/tail.js"

const enc = new TextEncoder()
const count = (bytes: Uint8Array) => bytes.reduce((n, b) => n + (b === 10 ? 1 : 0), 0)

/** A reservation that grants up to `limit` bytes in all, as the spool pool would, beside what the head takes. */
const pool = (limit: number) => {
  let held = 0
  let head = 0
  return {
    /** The head's writer takes room for its bytes before the window sees them. */
    takeHead: (n: number) => {
      head += Math.max(0, Math.min(n, limit - held - head))
    },
    reservation: {
      pool: "spool",
      held: () => held,
      grow: (n: number) => {
        const got = Math.max(0, Math.min(n, limit - held - head))
        held += got
        return got
      },
      settle: (n: number) => {
        held = Math.min(held, n)
      },
      release: undefined as never
    },
    free: () => limit - held - head,
    held: () => held
  }
}

/** Pushes `text` in the given chunk sizes; returns the window. */
const fill = (text: Uint8Array, headLimit: number, windowBytes: number, cuts: ReadonlyArray<number>, limit = Infinity) => {
  const p = pool(limit)
  const w = Tail.make(headLimit, windowBytes, p.reservation, p.free)
  let at = 0
  for (const n of [...cuts, text.length]) {
    const to = Math.min(text.length, at + n)
    // masked output is lent for the call only: the window must keep copies, so the bytes are spoiled after it
    const part = Uint8Array.from(text.subarray(at, to))
    p.takeHead(Math.max(0, Math.min(to, headLimit) - at))
    w.push(part, at, count(part))
    part.fill(0x23)
    at = to
    if (at === text.length) break
  }
  return { w, p }
}

describe("countNewlines", () => {
  it("counts line breaks at every alignment and length, as a byte loop does", () =>
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(7), (bytes, shift) => {
      const buf = new Uint8Array(bytes.length + 8)
      buf.set(bytes.map((b) => (b % 3 === 0 ? 10 : b)), shift)
      const view = buf.subarray(shift, shift + bytes.length)
      expect(countNewlines(view)).toBe(count(view))
    }), { numRuns: 500 }))
})

describe("the window of newest output", () => {
  it("keeps the newest bytes past the head from a line start, and numbers its lines as the whole text does", () =>
    fc.assert(fc.property(
      fc.array(fc.stringMatching(/^[a-z€]{0,12}$/), { minLength: 1, maxLength: 60 }),
      fc.integer({ min: 1, max: 80 }),
      fc.integer({ min: 1, max: 120 }),
      fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 40 }),
      (lines, headLimit, windowBytes, cuts) => {
        const text = enc.encode(lines.join("\n") + "\n")
        const { w } = fill(text, headLimit, windowBytes, cuts)
        expect(w.lines()).toBe(count(text))
        const v = w.view()
        if (text.length <= headLimit) {
          expect(v).toBeUndefined()
          return
        }
        if (v === undefined) return
        // the bytes are the text's own, at the offset it says, and within the window's size
        expect(v.bytes).toEqual(text.subarray(v.fromByte, text.length))
        expect(v.bytes.length).toBeLessThanOrEqual(windowBytes)
        expect(v.fromByte).toBeGreaterThanOrEqual(headLimit)
        expect(v.fromLine).toBe(count(text.subarray(0, v.fromByte)) + 1)
        expect(v.lineStart).toBe(v.fromByte === 0 || text[v.fromByte - 1] === 10)
        // it never starts inside a character
        expect(v.bytes[0]! & 0xc0).not.toBe(0x80)
        // past the head's end, it starts at a line start
        if (v.fromByte > headLimit + 3) expect(v.lineStart).toBe(true)
        expect(w.headNewlines()).toBe(count(text.subarray(0, headLimit)))
      }
    ), { numRuns: 400 }))

  it("takes its room from the pool, leaving the head's bytes of each write theirs, and gives it back", () => {
    const text = enc.encode(Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") + "\n")
    // the head needs 300 bytes of a 500-byte pool: the window gets at most the other 200
    const { p, w } = fill(text, 300, 1_000, [text.length], 500)
    expect(p.held()).toBe(200)
    expect(w.view()!.bytes.length).toBeLessThanOrEqual(200)
    w.release()
    expect(p.held()).toBe(0)
  })

  it("keeps nothing when the pool has no room", () => {
    const text = enc.encode("a\n".repeat(500))
    const { w } = fill(text, 10, 100, [7, 13], 0)
    expect(w.view()).toBeUndefined()
    expect(w.lines()).toBe(500)
  })
})
