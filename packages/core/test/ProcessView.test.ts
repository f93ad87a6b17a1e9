import { describe, expect, it } from "@effect/vitest"
import * as Delivery from "@spillway/core/Delivery"
import * as ProcessView from "@spillway/core/ProcessView"
import * as Utf8 from "@spillway/core/Utf8"
import { Either, FastCheck as fc } from "effect"

/** Byte streams with valid text, malformed bytes, escapes and line breaks mixed. */
const streams = fc.array(
  fc.oneof(
    fc.constantFrom("a", "\n", "é", "€", "😀", "\"", "\\", "\u0001", "line\n").map((s) => [...Buffer.from(s)]),
    fc.constantFrom([0xff], [0xe2, 0x82], [0xf0, 0x9f], [0x80], [0xc3])
  ),
  { maxLength: 300 }
).map((parts) => Uint8Array.from(parts.flat()))

const accounting = (bytes: Uint8Array): ProcessView.Accounting => ({ emitted: bytes.length, retained: bytes.length, captureLimitLoss: 0 })

const cursorAt = (n: number) => `spw1.cursor-at-${n}.sig`

/** Pages a whole stream from byte 0. */
const pageAll = (bytes: Uint8Array, limit: number, budget: number, state: ProcessView.State = "exited") => {
  const pages: Array<ProcessView.Page> = []
  let offset = 0
  for (;;) {
    const r = ProcessView.page({
      pid: 7,
      status: { state, exitCode: 0 },
      accounting: accounting(bytes),
      offset,
      bytes: bytes.subarray(offset, offset + limit + 3),
      limit,
      cursorAt,
      budget: { limit: budget }
    })
    if (Either.isLeft(r)) return { pages, error: r.left }
    pages.push(r.right)
    if (!r.right.truncated) return { pages, error: undefined }
    offset = r.right.next_offset
  }
}

describe("ProcessView.page", () => {
  it.prop("pages are contiguous, whole code points, within limit and budget, and decode to the whole stream", [
    streams,
    fc.integer({ min: 4, max: 64 }),
    // the smallest budget that holds a page's facts and marker with one escaped character
    fc.integer({ min: 650, max: 2_000 })
  ], ([bytes, limit, budget]) => {
    const { pages, error } = pageAll(bytes, limit, budget)
    expect(error).toBeUndefined()
    let offset = 0
    for (const p of pages) {
      expect(p.offset).toBe(offset)
      expect(p.shown_bytes).toBeLessThanOrEqual(limit)
      if (p.truncated) expect(p.shown_bytes).toBeGreaterThan(0)
      expect(Utf8.isByteBoundary(bytes, p.next_offset)).toBe(true)
      expect(Delivery.sizeOf(ProcessView.delivered(p))).toBeLessThanOrEqual(budget)
      offset = p.next_offset
    }
    expect(offset).toBe(bytes.length)
    expect(pages.map((p) => p.content).join("")).toBe(Utf8.decodeLossy(bytes))
  })

  it("a tight budget shortens a page of escaped bytes, and one that cannot advance fails", () => {
    const bytes = new Uint8Array(4_000).fill(1)
    const { pages } = pageAll(bytes, 4_000, 2_000)
    expect(pages[0].shown_bytes).toBeLessThan(400)
    expect(Delivery.sizeOf(ProcessView.delivered(pages[0]))).toBeLessThanOrEqual(2_000)
    expect(pageAll(bytes, 4_000, 300).error?._tag).toBe("EnvelopeTooSmall")
  })

  it("the end of a running job's output keeps a cursor for what comes next", () => {
    const bytes = Buffer.from("done so far\n")
    const [last] = pageAll(bytes, 4_000, 12_000, "running").pages
    expect(last).toMatchObject({ truncated: false, next_offset: bytes.length, next_cursor: cursorAt(bytes.length) })
    expect(last.note).toContain("still running")
  })
})

describe("ProcessView.statusView", () => {
  const input = (bytes: Uint8Array, start: number, budget: number): ProcessView.StatusInput => ({
    pid: 7,
    status: { state: "running" },
    accounting: { emitted: start + bytes.length, retained: start + bytes.length, captureLimitLoss: 0 },
    spool: "temporary",
    cursor: cursorAt(0),
    next: "poll with the cursor",
    tail: { bytes, start },
    maxLines: 50,
    budget: { limit: budget }
  })

  it.prop("fits the budget, and its one interval is exactly the bytes it shows", [
    streams,
    fc.integer({ min: 0, max: 1_000 }),
    fc.integer({ min: 700, max: 3_000 })
  ], ([bytes, start, budget]) => {
    const r = ProcessView.statusView(input(bytes, start, budget))
    if (Either.isLeft(r)) throw r.left
    const v = r.right
    expect(Delivery.sizeOf(ProcessView.delivered(v))).toBeLessThanOrEqual(budget)
    expect(v.text).toBe(ProcessView.render(v.output, v.retention))
    if (v.output === "") {
      expect(v.retention.shown_intervals).toEqual([])
      return
    }
    const [[from, to]] = v.retention.shown_intervals
    expect(to).toBe(start + bytes.length)
    expect(Utf8.decodeLossy(bytes.subarray(from - start))).toBe(v.output)
    expect(v.output.split("\n").filter((l, i, all) => i < all.length - 1 || l !== "").length).toBeLessThanOrEqual(50)
  })

  it("a single line too long for the budget shows its end", () => {
    const bytes = Buffer.from("x".repeat(5_000) + "END")
    const v = Either.getOrThrow(ProcessView.statusView(input(bytes, 0, 1_000)))
    expect(v.output.endsWith("xxxEND")).toBe(true)
    expect(Delivery.sizeOf(ProcessView.delivered(v))).toBeLessThanOrEqual(1_000)
    expect(v.retention.shown_intervals).toEqual([[bytes.length - Buffer.byteLength(v.output), bytes.length]])
  })

  it("a withheld tail shows no bytes and says why", () => {
    const v = Either.getOrThrow(ProcessView.statusView({ ...input(Buffer.from("a\n"), 0, 12_000), tail: "withheld" }))
    expect(v.output).toBe("")
    expect(v.retention.tail_status).toBe(ProcessView.WITHHELD)
    expect(v.text.startsWith(`${ProcessView.RECORD_LABEL} {`)).toBe(true)
  })
})
