import { Clock, Effect, Either } from "effect"
import type * as Access from "../../Access.js"
import * as Delivery from "../../Delivery.js"
import { InvalidRequest, type StoreFailed } from "../../Errors.js"
import * as ProcessView from "../../ProcessView.js"
import * as Utf8 from "../../Utf8.js"
import { concat } from "../bytes.js"
import * as Read from "../read.js"
import * as Failures from "./failures.js"
import { accounting, type Context, expiresAt, type Job, kept, readOutput, resourceOf, statusOf } from "./job.js"

/** The smallest page a poll may ask for: room for any one code point. @internal */
export const MIN_PAGE_BYTES = 4

/** The tool name process cursors carry. @internal */
export const TOOL = "manage_process"

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * How the reader goes on from the status view, in the reader's words: for a
 * job still running, first the wait for a line from `nextLine` on (the
 * line the view's newest lines stop before, so none printed since is
 * missed); then the poll that reads the kept output from its start. @internal
 */
export const nextHint = (job: Job, cursor: string, hints: ProcessView.Hints, nextLine?: number) => {
  const poll = `${hints.poll(job.pid, { cursor })} reads the kept output from its start; each page ends with the call for the next`
  return job.state === "running" && nextLine !== undefined
    ? `${hints.wait(job.pid, nextLine)} waits for a new line matching your ${ProcessView.WAIT_PATTERN}; ${poll}`
    : poll
}

/** The line a view of `bytes` ending at line `lastLine` stops before: the next line, or its last when that is not whole yet. */
const lineAfter = (bytes: Uint8Array, lastLine: number | undefined) =>
  lastLine === undefined ? undefined : bytes.length === 0 ? lastLine + 1 : bytes[bytes.length - 1] === 10 ? lastLine + 1 : Math.max(1, lastLine)

/** Lines in `bytes`, a last line without a break counted. */
const lineCount = (bytes: Uint8Array) => {
  let n = 0
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) n++
  return bytes.length === 0 || bytes[bytes.length - 1] === 10 ? n : n + 1
}

/** Why a restored job's status is unknown: the server that ran it stopped first. @internal */
export const unknownReason = (emitted: number) =>
  "the server that ran it stopped before the job ended, so its end was not seen (a client that runs the server for one call stops it when it exits)" +
  (emitted === 0 ? ", and no output of it was recorded" : `; the ${emitted} bytes it wrote while that server ran are kept`)

/** The status view: a sentence, the newest lines, the failure lines not among them, and the next call; the record as its facts. @internal */
export const statusView = (ctx: Context, caller: Access.Caller, job: Job, action: Access.Action, wait?: ProcessView.WaitOutcome) =>
  Effect.gen(function*() {
    const a = accounting(ctx, job)
    const clipped = a.emitted > job.headLimit || a.captureError !== undefined
    const k = kept(ctx, caller, job)
    const newest = ctx.limits.budgetChars * 4 + 4
    let tail: ProcessView.StatusInput["tail"]
    if (!clipped) {
      const window = Math.min(a.retained, newest)
      const bytes = yield* readOutput(ctx, caller, job, a.retained - window, window, action)
      const p = job.writer?.progress()
      const lines = p?.lines ?? job.recorded?.headLines
      // a character not yet complete after the last break is a line the readable prefix does not have yet
      const unread = p !== undefined && bytes.at(-1) === 10 && p.lastBytes.at(-1) !== 10 && p.writtenBytes > a.retained ? 1 : 0
      tail = { bytes, start: a.retained - window, lastLine: lines === undefined ? undefined : lines - unread }
    } else if (k !== undefined && a.captureError === undefined) {
      // past the head, the window of newest output: masked by the same stream, so its secret context is verified
      const bytes = yield* k.window.newest(newest)
      const from = k.window.toByte - k.window.fromByte - bytes.length
      tail = { bytes, start: k.window.fromByte + from, lineStart: from === 0 && k.window.lineStart, lastLine: k.window.toLine }
    } else if (job.settled && job.memory !== undefined && (job.writer?.progress().maskedBytes ?? -1) === a.emitted) {
      // a complete small stream: its true tail is in memory, in emitted coordinates
      const bytes = concat(job.memory.length === 0 ? [new Uint8Array(0)] : job.memory)
      tail = { bytes, start: 0, lastLine: lineCount(bytes) }
    } else tail = "withheld"
    const failures = yield* Failures.forView(ctx, caller, job, action)
    const expires = expiresAt(ctx, job)
    const cursor = ctx.codec.encode(String(job.pid), 0, job.generation)
    const hints = yield* ProcessView.CurrentHints
    const now = yield* Clock.currentTimeMillis
    return yield* ProcessView.statusView({
      pid: job.pid,
      status: statusOf(job),
      accounting: a,
      settled: job.settled,
      runningMillis: job.state === "running" ? now - job.startedAt : undefined,
      statusReason: job.state === "unknown" ? unknownReason(a.emitted) : undefined,
      spool: job.restored ? "durable" : ctx.spoolKind,
      expiresAt: expires !== undefined ? iso(expires) : undefined,
      wait,
      cursor,
      next: nextHint(job, cursor, hints, tail === "withheld" ? undefined : lineAfter(tail.bytes, tail.lastLine)),
      tail,
      kept: k?.record,
      filename: job.whole ? job.body : undefined,
      maxLines: ctx.limits.statusLines,
      budget: ctx.budget,
      failures
    })
  })

/** The ranges a job's output can be read in, for an error that names them. */
const rangesText = (ranges: ReadonlyArray<ProcessView.Range>, unit: "byte" | "line") =>
  ranges.map((r) => (unit === "byte" ? `bytes ${r.from_byte}-${r.to_byte}` : `lines ${r.from_line}-${r.to_line}`)).join(" and ")

/** The page of a job's output from a byte offset: in the head, or in the window of newest output past it. @internal */
export const pageAt = (ctx: Context, caller: Access.Caller, job: Job, offset: number, limit: number) =>
  Effect.gen(function*() {
    const a = accounting(ctx, job)
    const k = kept(ctx, caller, job)
    const hints = yield* ProcessView.CurrentHints
    const page = (bytes: Uint8Array, before: number, segment?: ProcessView.PageInput["segment"]) =>
      Effect.gen(function*() {
        if (!Utf8.isByteBoundary(bytes, before)) {
          const at = offset - before + Utf8.byteBoundary(bytes, before)
          return yield* new InvalidRequest({ argument: "offset", reason: `offset ${offset} falls inside a multi-byte character; start at ${at} instead` })
        }
        return yield* ProcessView.page({
          pid: job.pid,
          status: statusOf(job),
          accounting: a,
          offset,
          bytes: bytes.subarray(before),
          limit,
          cursorAt: (n) => ctx.codec.encode(String(job.pid), n, job.generation),
          budget: ctx.budget,
          segment,
          hints
        })
      })
    if (k !== undefined && offset >= k.window.fromByte && offset <= k.window.toByte) {
      const all = yield* k.window.bytes
      const at = offset - k.window.fromByte
      const before = Math.min(3, at)
      return yield* page(all.subarray(at - before, at + limit + 3), before, { end: k.window.toByte })
    }
    if (offset > a.retained) {
      return yield* new InvalidRequest({
        argument: "offset",
        reason: k !== undefined
          ? `offset ${offset} is not kept: job ${job.pid} keeps ${rangesText(k.record.ranges, "byte")} of its output; poll with offset 0 for its status`
          : `offset ${offset} is past the ${a.retained} retained bytes of job ${job.pid}; poll with offset 0 for its status`
      })
    }
    const before = Math.min(3, offset)
    const bytes = yield* readOutput(ctx, caller, job, offset - before, before + Math.min(limit + 3, a.retained - offset), "poll")
    const dropped = k?.record.dropped
    return yield* page(bytes, before, k === undefined ? undefined : {
      end: a.retained,
      then: {
        offset: k.window.fromByte,
        note: dropped !== undefined
          ? `bytes ${dropped.from_byte}-${dropped.to_byte} (lines ${dropped.from_line}-${dropped.to_line}) were not kept; the newest output goes on from byte ${k.window.fromByte} (line ${k.window.fromLine})`
          : `the newest output goes on from byte ${k.window.fromByte} (line ${k.window.fromLine})`
      }
    })
  })

/** Offsets of the line starts in `bytes` from `line` (1-based, the line starting at 0), up to `count` lines and `maxBytes`. */
const takeLines = (bytes: Uint8Array, count: number, maxBytes: number) => {
  let end = 0
  let lines = 0
  while (lines < count && end < bytes.length) {
    const nl = bytes.indexOf(10, end)
    const next = nl === -1 ? bytes.length : nl + 1
    if (next > maxBytes && lines > 0) break
    end = next
    lines++
  }
  return { end, lines }
}

/** Where line `n` starts in `bytes`, whose first line is `first`; -1 past its end. */
const lineStart = (bytes: Uint8Array, first: number, n: number): number => {
  let at = 0
  for (let line = first; line < n; line++) {
    const nl = bytes.indexOf(10, at)
    if (nl === -1 || nl + 1 >= bytes.length) return -1
    at = nl + 1
  }
  return at
}

/** Lines of a job's output by number, as `read_spill` reads a saved body: from the head, or from the window of newest output. @internal */
export const linesAt = (ctx: Context, caller: Access.Caller, job: Job, first: number, count: number) =>
  Effect.gen(function*() {
    if (!Number.isSafeInteger(first) || first < 1) return yield* new InvalidRequest({ argument: "line", reason: `must be a line number, 1 or more; got ${first}` })
    if (!Number.isSafeInteger(count) || count < 1) return yield* new InvalidRequest({ argument: "lines", reason: `must be 1 or more; got ${count}` })
    const a = accounting(ctx, job)
    const k = kept(ctx, caller, job)
    const hints = yield* ProcessView.CurrentHints
    const delivered = (v: ProcessView.Lines) => ProcessView.delivered(v, hints)
    const headLines = k?.record.ranges[0]!.to_line ?? job.writer?.progress().lines ?? job.recorded?.headLines ?? 0
    const totalLines = k?.record.total_lines ?? headLines
    const maxBytes = ctx.limits.maxPageBytes
    let bytes: Uint8Array
    let start: number
    let limitLine: number
    // the source offset of bytes[0], for a cursor to the rest of a line shown in part
    let base: number
    // reads by line in the window start at its first whole line: a line the head's limit cut is read from the head
    const windowFirst = k === undefined ? undefined : k.window.lineStart ? k.window.fromLine : k.window.fromLine + 1
    if (k !== undefined && windowFirst !== undefined && first > headLines && first >= windowFirst && first <= k.window.toLine) {
      const all = yield* k.window.bytes
      const skip = k.window.lineStart ? 0 : all.indexOf(10) + 1
      bytes = all.subarray(skip)
      base = k.window.fromByte + skip
      start = lineStart(bytes, windowFirst, first)
      limitLine = k.window.toLine
    } else if (first <= headLines) {
      // the head's lines, found through its line index (built by one read of the head while it still grows)
      const range = yield* Effect.scoped(Effect.gen(function*() {
        const body = yield* ctx.bodies.open(caller, job.body, { action: "poll", resource: () => resourceOf(ctx, job) })
        const file: Read.SpillFile = { filename: job.body, size: Math.min(body.size, a.retained), read: body.read, index: body.lineIndex }
        const index = yield* Read.indexOf(file, ctx.lineIndexes)
        const from = yield* Read.locate(file, index, first)
        const to = yield* Read.locate(file, index, Math.min(first + count, index.lines + 1))
        return { read: yield* body.read(from, Math.min(to - from, maxBytes + 4)), from }
      }))
      bytes = range.read
      base = range.from
      start = 0
      limitLine = headLines
    } else {
      const kept = k !== undefined ? rangesText(k.record.ranges, "line") : `lines 1-${headLines}`
      return yield* new InvalidRequest({
        argument: "line",
        reason: k?.record.dropped !== undefined && first >= k.record.dropped.from_line && first <= k.record.dropped.to_line
          ? `line ${first} was in the middle of the output, which was not kept; job ${job.pid} keeps ${kept}`
          : `line ${first} is past the end: job ${job.pid} has ${totalLines} lines (it keeps ${kept})`
      })
    }
    if (start === -1) return yield* new InvalidRequest({ argument: "line", reason: `line ${first} is past the end of job ${job.pid}'s kept output` })
    const rest = bytes.subarray(start)
    const taken = takeLines(rest, Math.min(count, limitLine - first + 1), maxBytes)
    const nextAfter = (shown: number) => {
      const next = first + shown
      const more = next <= totalLines && (next <= limitLine || (k !== undefined && limitLine === headLines))
      const jumpTo = next > limitLine && windowFirst !== undefined ? windowFirst : next
      return { next, line: more && jumpTo <= totalLines ? jumpTo : undefined }
    }
    const view = (shown: Uint8Array, lines: number, cut: boolean): ProcessView.Lines => {
      const { next, line } = nextAfter(lines)
      return {
        _tag: "Lines",
        pid: job.pid,
        status: job.state,
        first_line: first,
        lines,
        content: Utf8.decodeLossy(shown),
        total_lines: totalLines,
        ...(line !== undefined ? { next_line: line } : {}),
        ...(cut ? { cut: true, cursor: ctx.codec.encode(String(job.pid), base + start + shown.length, job.generation) } : {}),
        ...(line !== undefined && line > next ? { note: `lines ${next}-${line - 1} were not kept (in whole); the newest output goes on from line ${line}` } : {})
      }
    }
    // whole lines, as many as fit the result as delivered
    const ends: Array<number> = []
    for (let at = 0, n = 0; n < taken.lines; n++) {
      const nl = rest.indexOf(10, at)
      at = nl === -1 || nl + 1 > taken.end ? taken.end : nl + 1
      ends.push(at)
    }
    if (taken.end <= maxBytes) {
      const whole = Delivery.fitCount(Math.min(1, taken.lines), taken.lines, (n) => view(rest.subarray(0, n === 0 ? 0 : ends[n - 1]), n, false), ctx.budget, delivered)
      if (Either.isRight(whole)) return whole.right.value
    }
    // one line too long for a page or for the result: its start, with a cursor to the rest
    const line = rest.subarray(0, Math.min(ends[0] ?? 0, maxBytes + 4))
    const most = Utf8.byteBoundary(line, Math.min(line.length, maxBytes))
    let least = Math.min(1, most)
    while (least < most && !Utf8.isByteBoundary(line, least)) least++
    const part = yield* Delivery.fitCount(least, most, (n) => view(line.subarray(0, Utf8.byteBoundary(line, n)), 1, true), ctx.budget, delivered)
    return part.value
  })

/** A poll's byte offset: 0, blank, null or absent mean the status view. @internal */
export const offsetOf = (offset: number | string | null | undefined): Either.Either<number, InvalidRequest> => {
  if (offset === undefined || offset === null) return Either.right(0)
  const text = typeof offset === "string" ? offset.trim() : undefined
  if (text === "") return Either.right(0)
  const n = text !== undefined ? (/^\d{1,16}$/.test(text) ? Number(text) : NaN) : offset
  return Number.isSafeInteger(n) && (n as number) >= 0
    ? Either.right(n as number)
    : Either.left(new InvalidRequest({ argument: "offset", reason: `must be a whole number of bytes, 0 or more; got ${JSON.stringify(offset).slice(0, 40)}` }))
}

/** A poll's page size. @internal */
export const limitOf = (ctx: Context, limit: number | null | undefined): Either.Either<number, InvalidRequest> => {
  if (limit === undefined || limit === null) return Either.right(ctx.limits.defaultPageBytes)
  return Number.isSafeInteger(limit) && limit >= MIN_PAGE_BYTES && limit <= ctx.limits.maxPageBytes
    ? Either.right(limit)
    : Either.left(new InvalidRequest({ argument: "limit", reason: `must be a whole number from ${MIN_PAGE_BYTES} to ${ctx.limits.maxPageBytes}; got ${limit}` }))
}

/** Everything reading a job's output can fail with, beyond the view's own errors. @internal */
export type ReadFailure = StoreFailed
