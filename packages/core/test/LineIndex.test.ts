import { describe, expect, it } from "@effect/vitest"
import * as LineIndex from "@spillway/core/LineIndex"
import { FastCheck as fc } from "effect"

const lineStarts = (bytes: Uint8Array) => {
  const starts = bytes.length > 0 ? [0] : []
  bytes.forEach((b, i) => {
    if (b === 10 && i + 1 < bytes.length) starts.push(i + 1)
  })
  return starts
}

describe("LineIndex", () => {
  it.prop("checkpoints are the starts of every k-th line, whatever the chunking", [
    fc.uint8Array({ maxLength: 400 }).map((b) => b.map((x) => (x % 4 === 0 ? 10 : x))),
    fc.array(fc.nat(400), { maxLength: 6 }),
    fc.integer({ min: 1, max: 7 })
  ], ([bytes, cuts, every]) => {
    const b = LineIndex.builder(every)
    let at = 0
    for (const c of [...cuts].sort((x, y) => x - y)) {
      b.push(bytes.subarray(at, Math.max(at, Math.min(c, bytes.length))))
      at = Math.max(at, Math.min(c, bytes.length))
    }
    b.push(bytes.subarray(at))
    const index = b.result()
    const starts = lineStarts(bytes)
    expect(index.lines).toBe(starts.length)
    expect(index.bytes).toBe(bytes.length)
    expect(index.checkpoints).toEqual(starts.filter((_, i) => i % every === 0).concat(starts.length === 0 ? [0] : []))
    expect(LineIndex.decode(LineIndex.encode(index))).toEqual(index)
  })

  it.prop("checkpoints stay exact over chunks of many blocks, with few or many breaks", [
    fc.integer({ min: 1, max: 60_000 }),
    fc.integer({ min: 2, max: 300 }),
    fc.array(fc.nat(60_000), { maxLength: 5 }),
    fc.integer({ min: 1, max: 500 })
  ], ([size, spacing, cuts, every]) => {
    const bytes = new Uint8Array(size).map((_, i) => ((i * 7919) % spacing === 0 ? 10 : 97))
    const b = LineIndex.builder(every)
    let at = 0
    for (const c of [...cuts].sort((x, y) => x - y)) {
      const to = Math.max(at, Math.min(c, size))
      b.push(bytes.subarray(at, to))
      at = to
    }
    b.push(bytes.subarray(at))
    const starts = lineStarts(bytes)
    expect(b.result().checkpoints).toEqual(starts.filter((_, i) => i % every === 0).concat(starts.length === 0 ? [0] : []))
    expect(b.newlines()).toBe(bytes.filter((x) => x === 10).length)
  }, { fastCheck: { numRuns: 150 } })

  it("rejects bytes that are not an index", () => {
    expect(LineIndex.decode(new Uint8Array(40))).toBeUndefined()
    expect(LineIndex.decode(new TextEncoder().encode("SPWIDX01"))).toBeUndefined()
  })
})
