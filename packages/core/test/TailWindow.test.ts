import { beforeEach, describe, expect, it } from "@effect/vitest"
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
  // the spare arenas are the module's: each case starts with none
  beforeEach(() => Tail.dropSpares())

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

  it("keeps what the masker built in its arena where it lies, with bytes copied in, unpushed outputs and moves to the front between", () =>
    fc.assert(fc.property(
      fc.array(fc.stringMatching(/^[a-z€]{0,12}$/), { minLength: 1, maxLength: 80 }),
      fc.integer({ min: 0, max: 60 }),
      fc.integer({ min: 1, max: 120 }),
      fc.integer({ min: 1, max: 200 }),
      fc.array(fc.record({ n: fc.integer({ min: 0, max: 60 }), context: fc.nat(20), how: fc.constantFrom("built", "copied", "unpushed") }), { maxLength: 60 }),
      (lines, headLimit, windowBytes, slack, steps) => {
        const text = enc.encode(lines.join("\n") + "\n")
        const p = pool(Infinity)
        const w = Tail.make(headLimit, windowBytes, p.reservation, p.free, slack)
        let at = 0
        for (const { n: asked, context, how } of [...steps, { n: text.length, context: 0, how: "built" as const }]) {
          const n = Math.min(asked, text.length - at)
          const part = text.subarray(at, at + n)
          if (how === "copied") {
            const copy = Uint8Array.from(part)
            w.push(copy, at, count(copy))
            copy.fill(0x23)
          } else {
            // as the masker does: the window's context first, then the output, in memory the window lends and may take back
            const into = w.into!(context + n + 3)
            expect(into.length).toBeGreaterThanOrEqual(context + n + 3)
            into.fill(0x23)
            if (how === "unpushed") continue
            into.set(part, context)
            w.push(into.subarray(context, context + n), at, count(part))
          }
          at += n
          const v = w.view()
          if (v !== undefined) expect(Buffer.from(v.bytes).equals(Buffer.from(text.subarray(v.fromByte, at)))).toBe(true)
          if (at === text.length) break
        }
        expect(at).toBe(text.length)
        if (text.length > headLimit + windowBytes) {
          // the window is full: its bytes are the text's newest, from the first whole line in them
          const v = w.view()
          const newest = text.subarray(text.length - windowBytes)
          const nl = text[text.length - windowBytes - 1] === 10 ? -1 : newest.indexOf(10)
          if (nl + 1 < newest.length) expect(Buffer.from(v!.bytes).equals(Buffer.from(newest.subarray(nl + 1)))).toBe(true)
          else expect(v).toBeUndefined()
        }
      }
    ), { numRuns: 2000 }))

  it("keeps output built in its arena without a copy, and copies output from elsewhere", () => {
    const p = pool(Infinity)
    // a small window copies what it keeps, lending the masker nothing, unless told to lend
    expect(Tail.make(0, 100, p.reservation, p.free).into).toBeUndefined()
    const w = Tail.make(0, 100, p.reservation, p.free, 1024)
    const built = w.into!(10)
    built.set(enc.encode("abcdefghi\n"))
    w.push(built.subarray(0, 10), 0, 1)
    // the window's bytes are the very ones the masker built
    built[0] = 0x5a
    expect(new TextDecoder().decode(w.view()!.bytes)).toBe("Zbcdefghi\n")
    const elsewhere = enc.encode("jklmn\n")
    w.push(elsewhere, 10, 1)
    elsewhere.fill(0x23)
    expect(new TextDecoder().decode(w.view()!.bytes)).toBe("Zbcdefghi\njklmn\n")
  })

  it("holds at most the window and the room past it however much goes through, and lends bigger buffers of their own", () => {
    const p = pool(Infinity)
    const windowBytes = 1 << 20
    const w = Tail.make(0, windowBytes, p.reservation, p.free)
    const line = enc.encode("0123456789abcdef".repeat(4095) + "0123456789abcde\n")
    const arenas = new Set<ArrayBufferLike>()
    let at = 0
    // 64 MiB through the window in outputs of 64 KiB to 2 MiB, as the runner's reads come
    for (let i = 0; at < 64 << 20; i++) {
      const n = line.length * (1 + (i % 32))
      const into = w.into!(n)
      arenas.add(into.buffer)
      expect(into.buffer.byteLength).toBeLessThanOrEqual(windowBytes + 1 + 4 * 1024 * 1024)
      for (let k = 0; k < n; k += line.length) into.set(line, k)
      w.push(into.subarray(0, n), at, n / line.length)
      at += n
    }
    // one arena, grown to its full size once, then reused: a buffer per output would be hundreds
    expect(arenas.size).toBeLessThanOrEqual(3)
    const v = w.view()!
    expect(v.bytes.length).toBe(windowBytes)
    expect(v.fromByte).toBe(at - windowBytes)
    expect(Buffer.from(v.bytes.subarray(0, line.length)).equals(Buffer.from(line))).toBe(true)
    const big = w.into!(5 * 1024 * 1024)
    expect(big.buffer.byteLength).toBe(5 * 1024 * 1024)
    w.release()
    // a released window lends buffers of their own and keeps nothing
    expect(w.into!(10).buffer.byteLength).toBe(10)
    expect(w.view()).toBeUndefined()
  })

  it("keeps its ring to twice the largest output past the window, in a bigger spare too, and takes all the room after a bigger output", () => {
    const p = pool(Infinity)
    const windowBytes = 1 << 20
    const keep = windowBytes + 1
    const line = enc.encode("x".repeat(1023) + "\n")
    /** Outputs of `lines` lines, `count` of them: the furthest byte of its arena each went to. */
    const run = (w: Tail.TailWindow, lines: number, count: number, at: number) => {
      let furthest = 0
      for (let i = 0; i < count; i++) {
        const n = line.length * lines
        const into = w.into!(n)
        furthest = Math.max(furthest, into.byteOffset + n)
        for (let k = 0; k < n; k += line.length) into.set(line, k)
        w.push(into.subarray(0, n), at, lines)
        at += n
      }
      return { furthest, at }
    }
    // 1 MiB outputs go round the window and 2 MiB of ring (in whatever arena it has: a spare may be bigger)
    const big = Tail.make(0, windowBytes, p.reservation, p.free)
    const filled = run(big, 1024, 8, 0)
    expect(filled.furthest).toBeLessThanOrEqual(keep + 2 * 1024 * 1024)
    expect(filled.furthest).toBeGreaterThan(keep + 1024 * 1024)
    big.release()
    // a window of 64 KiB outputs takes a spare of at least that size, but goes round only the window and 512 KiB of it
    const small = Tail.make(0, windowBytes, p.reservation, p.free)
    const first = small.into!(64 * 1024)
    expect(first.buffer.byteLength).toBeGreaterThanOrEqual(keep + 2 * 1024 * 1024)
    const { furthest, at } = run(small, 64, 256, 0)
    expect(furthest).toBeLessThanOrEqual(keep + 512 * 1024)
    expect(furthest).toBeGreaterThan(keep)
    // one output bigger than the ring: from then on the ring has all the room, 4 MiB
    const after = run(small, 1536, 1, at)
    expect(small.into!(1).buffer.byteLength).toBeGreaterThanOrEqual(keep + 4 * 1024 * 1024)
    const { furthest: later } = run(small, 1024, 16, after.at)
    expect(later).toBeGreaterThan(keep + 2 * 1024 * 1024)
    // and the window is still the newest bytes, from a line start
    const v = small.view()!
    expect(v.bytes.length).toBe(windowBytes)
    expect(v.fromByte).toBe(after.at + 16 * 1024 * line.length - windowBytes)
    expect(v.bytes.every((b, i) => b === line[i % line.length])).toBe(true)
    small.release()
  })

  it("gives a released window's arena to the next windows, and keeps at most two", () => {
    const p = pool(Infinity)
    const windowBytes = 1 << 20
    const line = enc.encode("secret-free output line ".repeat(2730) + "\n")
    /** A window past its head whose arena has its full size, holding output. */
    const filled = () => {
      const w = Tail.make(0, windowBytes, p.reservation, p.free)
      let at = 0
      for (let i = 0; i < 8; i++) {
        const into = w.into!(line.length * 16)
        for (let k = 0; k < 16; k++) into.set(line, k * line.length)
        w.push(into.subarray(0, line.length * 16), at, 16)
        at += line.length * 16
      }
      const arena = w.into!(1).buffer
      // the window, its byte before, and a ring of twice the largest output past them
      expect(arena.byteLength).toBe(windowBytes + 1 + 2 * 16 * line.length)
      return { w, arena }
    }
    const first = [filled(), filled(), filled()]
    for (const { w } of first) w.release()
    const old = new Set(first.map((f) => f.arena))
    // each new window's first buffer comes from a spare while there is one, already of the full size
    const next = [0, 1, 2].map(() => Tail.make(0, windowBytes, p.reservation, p.free).into!(64 * 1024).buffer)
    expect(next.filter((b) => old.has(b)).length).toBe(2)
    expect(next[2]!.byteLength).toBe(64 * 1024)
    // a window on a spare shows only what it was given, never the bytes of the job before it
    const reused = Tail.make(0, windowBytes, p.reservation, p.free)
    const spare = filled()
    spare.w.release()
    const into = reused.into!(6)
    expect(into.buffer).toBe(spare.arena)
    into.set(enc.encode("fresh\n"))
    reused.push(into.subarray(0, 6), 0, 1)
    expect(new TextDecoder().decode(reused.view()!.bytes)).toBe("fresh\n")
    expect(reused.lines()).toBe(1)
    // a window whose arena would be smaller does not take a bigger spare
    const small = filled()
    small.w.release()
    expect(Tail.make(0, 300 * 1024, p.reservation, p.free, 300 * 1024).into!(1000).buffer).not.toBe(small.arena)
  })
})
