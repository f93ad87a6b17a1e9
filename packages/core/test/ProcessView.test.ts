import { describe, expect, it } from "@effect/vitest"
import * as Delivery from "@spillway/core/Delivery"
import * as ProcessView from "@spillway/core/ProcessView"
import * as Salience from "@spillway/core/Salience"
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
    expect(v.text.startsWith(`${ProcessView.sentence(v.retention)}\n`)).toBe(true)
    expect(v.text).toContain(v.output.endsWith("\n") ? v.output.slice(0, -1) : v.output)
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
    expect(v.text.split("\n")[0]).toBe("Job 7 is still running.")
    expect(v.text).toContain("The newest lines are not shown")
  })

  const lines = (n: number, bad: ReadonlyArray<number>) =>
    Buffer.from(Array.from({ length: n }, (_, i) => (bad.includes(i + 1) ? `Error: step ${i + 1} failed\n` : `step ${i + 1} ok\n`)).join(""))
  const failuresOf = (bytes: Uint8Array): ProcessView.Failures => {
    const found = Salience.find(Buffer.from(bytes).toString("utf8"))
    return { lines: found.lines, total: found.total }
  }

  it("says what happened first, holds no field twice, and shows a failure line once", () => {
    const bytes = lines(120, [10, 115])
    const v = Either.getOrThrow(ProcessView.statusView({
      ...input(bytes, 0, 12_000),
      status: { state: "exited", exitCode: 1 },
      tail: { bytes, start: 0, lastLine: 120 },
      failures: failuresOf(bytes)
    }))
    const text = v.text
    expect(text.split("\n")[0]).toBe("Job 7 exited with 1.")
    // the newest 50 lines hold line 115: only line 10 is in the failure section
    expect(text.match(/Error: step 115 failed/g)).toHaveLength(1)
    expect(text.match(/Error: step 10 failed/g)).toHaveLength(1)
    expect(text).toContain("10: Error: step 10 failed")
    expect(text).toContain("Lines 71-120 of 120 shown, the newest")
    expect(text.endsWith("Next: poll with the cursor]")).toBe(true)
    expect(text).not.toContain("{")
    for (const field of ["shown_intervals", "capture_limit_loss_bytes", "retained_bytes", "not_retained", "spool", "cursor"]) {
      expect(text.replace("poll with the cursor", "")).not.toContain(field)
    }
    // the facts keep every field, the failure lines among them
    expect(v.retention.failure_lines?.map((l) => l.line)).toEqual(expect.arrayContaining([10, 115]))
    expect(v.retention.shown_intervals).toEqual([[bytes.length - Buffer.byteLength(v.output), bytes.length]])
  })

  it("a failure section is left out when the newest lines show every failure line", () => {
    const bytes = lines(20, [18])
    const v = Either.getOrThrow(ProcessView.statusView({ ...input(bytes, 0, 12_000), tail: { bytes, start: 0, lastLine: 20 }, failures: failuresOf(bytes) }))
    expect(v.text).not.toContain("Lines that report errors")
    expect(v.text.match(/Error: step 18 failed/g)).toHaveLength(1)
  })

  it("bytes not settled while the job runs are pending, not lost; a settled loss is said", () => {
    const bytes = Buffer.from("")
    const running = Either.getOrThrow(ProcessView.statusView({
      ...input(bytes, 0, 12_000),
      accounting: { emitted: 16, retained: 0, captureLimitLoss: 0 },
      settled: false,
      runningMillis: 2_400
    }))
    expect(running.retention).toMatchObject({ not_retained_bytes: 0, pending_bytes: 16, running_ms: 2_400 })
    expect(running.text.split("\n")[0]).toBe("Job 7 is still running after 2 s.")
    expect(running.text).not.toContain("not kept")
    const lost = Either.getOrThrow(ProcessView.statusView({
      ...input(bytes, 0, 12_000),
      status: { state: "exited", exitCode: 0 },
      accounting: { emitted: 16, retained: 0, captureLimitLoss: 0, captureError: "disk full" }
    }))
    expect(lost.retention.not_retained_bytes).toBe(16)
    expect(lost.retention.pending_bytes).toBeUndefined()
    expect(lost.text).toContain("16 bytes were not kept; capture stopped: disk full")
  })

  it("a job whose end was never seen says why, and a started job says it was started", () => {
    const unknown = Either.getOrThrow(ProcessView.statusView({
      ...input(Buffer.from(""), 0, 12_000),
      status: { state: "unknown" },
      accounting: { emitted: 0, retained: 0, captureLimitLoss: 0 },
      statusReason: "the server that ran it stopped before the job ended"
    }))
    expect(unknown.text.split("\n")[0]).toBe("Job 7's end was never seen: the server that ran it stopped before the job ended.")
    expect(unknown.retention.status_reason).toBe("the server that ran it stopped before the job ended")
    const bytes = Buffer.from("listening on 3000\n")
    const view = Either.getOrThrow(ProcessView.statusView({ ...input(bytes, 0, 12_000), tail: { bytes, start: 0, lastLine: 1 } }))
    const started = ProcessView.asStarted(view, { limit: 12_000 })
    expect(started.text).toBe(`Started job 7; it is running.\nlistening on 3000\n${view.text.split("\n").at(-1)}`)
    // a wording that would not fit the budget leaves the view as it was
    expect(ProcessView.asStarted(view, { limit: Delivery.sizeOf(ProcessView.delivered(view)) - 1 })).toBe(view)
  })
})
