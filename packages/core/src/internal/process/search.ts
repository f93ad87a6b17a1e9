import { Clock, Effect, Either } from "effect"
import type * as Access from "../../Access.js"
import * as Envelope from "../../Envelope.js"
import { InvalidRequest } from "../../Errors.js"
import * as Grep from "../../Grep.js"
import * as LineIndex from "../../LineIndex.js"
import * as ProcessView from "../../ProcessView.js"
import * as Read from "../read.js"
import { accounting, type Context, type Job, kept, resourceOf } from "./job.js"

/** The tool name search cursors carry: a poll cursor is not a search cursor, nor the other way round. @internal */
export const TOOL = "manage_process.grep"

/** Matches per page when a search gives no limit, and the most it may ask for. @internal */
export const DEFAULT_RESULTS = 100
/** @internal */
export const MAX_RESULTS = 1_000

/** Lines longer than this are searched on their start only. */
const MAX_LINE_CHARS = 65_536

/** Most characters of a matching line returned. */
const MAX_MATCH_CHARS = 1_000

/** A search of a job's output. @internal */
export interface SearchRequest {
  readonly pattern: string
  readonly ignoreCase?: boolean | undefined
  /** Most matching lines in one page; 100 by default, 1 to 1,000. */
  readonly maxResults?: number | null | undefined
  /** A cursor from an earlier page of this job's search: the search goes on from the line it names. */
  readonly cursor?: string | null | undefined
}

/** One kept range searched: its lines, read as a body. */
interface Segment {
  readonly file: Read.SpillFile
  readonly index: LineIndex.LineIndex
  /** The output's line number of the segment's first line. */
  readonly firstLine: number
  /** Whether the segment's last byte ends a line. */
  readonly endsLine: boolean
}

/** What a page of the search found so far. */
interface Found {
  readonly matches: Array<ProcessView.SearchMatch>
  readonly searched: Array<ProcessView.LineRange>
  clipped: number
  /** The line to search on from, when the search stopped before the end of the kept output. */
  next: number | undefined
  stoppedAt: number | undefined
}

/** A body held in memory (the window of newest output), as the search reads bodies. */
const memoryFile = (name: string, bytes: Uint8Array, index: LineIndex.LineIndex): Read.SpillFile => ({
  filename: name,
  size: bytes.length,
  index,
  read: (position, length, into) =>
    Effect.sync(() => {
      const part = bytes.subarray(position, Math.min(bytes.length, position + length))
      if (into === undefined) return part
      into.set(part)
      return into.subarray(0, part.length)
    })
})

/**
 * Searches one segment from output line `from` (within it) on, for at most
 * `limit` matches, until `deadline`; adds what it found to `found`.
 */
const searchSegment = (
  segment: Segment,
  from: number,
  limit: number,
  matcher: Grep.Matcher,
  patterns: Grep.PatternEngine["Type"],
  deadline: number,
  found: Found
) =>
  Effect.gen(function*() {
    const local = from - segment.firstLine + 1
    const byte = yield* Read.locate(segment.file, segment.index, local)
    const scan = yield* Read.grep(segment.file, segment.index, matcher, patterns, {
      maxResults: limit,
      maxLineChars: MAX_LINE_CHARS,
      maxMatchChars: MAX_MATCH_CHARS,
      deadlineMs: Math.max(0, deadline - (yield* Clock.currentTimeMillis)),
      from: { byte, line: local }
    })
    const shift = segment.firstLine - 1
    for (const m of scan.matches) found.matches.push({ line: m.line + shift, text: m.text, cut: m.cut })
    found.clipped += scan.clippedLines
    const last = segment.firstLine + segment.index.lines - 1
    if (scan.stoppedAt !== undefined) {
      const at = scan.stoppedAt + shift
      if (at > from) found.searched.push({ from_line: from, to_line: at - 1 })
      found.stoppedAt = at
      found.next = at
    } else if (scan.more) {
      const to = found.matches[found.matches.length - 1]!.line
      found.searched.push({ from_line: from, to_line: to })
      found.next = to + 1
    } else if (last >= from) {
      found.searched.push({ from_line: from, to_line: last })
    }
  })

/** The head as the search reads it: the retained prefix of the job's body, with its line index. */
const headSegment = (ctx: Context, caller: Access.Caller, job: Job) =>
  Effect.gen(function*() {
    const body = yield* ctx.bodies.open(caller, job.body, { action: "poll", resource: () => resourceOf(ctx, job) })
    const size = Math.min(body.size, accounting(ctx, job).retained)
    const file: Read.SpillFile = { filename: job.body, size, read: body.read, index: body.lineIndex }
    const index = yield* Read.indexOf(file, ctx.lineIndexes)
    const lastByte = size === 0 ? 10 : (yield* body.read(size - 1, 1))[0]
    return { file, index, firstLine: 1, endsLine: lastByte === 10 } satisfies Segment
  })

/** The window of newest output as the search reads it, from its first whole line. */
const windowSegment = (window: NonNullable<ReturnType<typeof kept>>["window"]) =>
  Effect.gen(function*() {
    const all = yield* window.bytes
    const skip = window.lineStart ? 0 : all.indexOf(10) + 1
    const bytes = !window.lineStart && skip === 0 ? new Uint8Array(0) : all.subarray(skip)
    const index = LineIndex.fromBytes(bytes)
    return {
      file: memoryFile("newest output", bytes, index),
      index,
      firstLine: window.lineStart ? window.fromLine : window.fromLine + 1,
      endsLine: bytes.length === 0 || bytes[bytes.length - 1] === 10
    } satisfies Segment
  })

/** The line a search cursor names, for this job. */
const fromOf = (ctx: Context, job: Job, cursor: string | null | undefined) =>
  Effect.gen(function*() {
    if (cursor === undefined || cursor === null || cursor === "") return 1
    const position = yield* ctx.searchCodec.decode(cursor)
    if (position.generation !== job.generation || position.evidence !== String(job.pid)) {
      return yield* new InvalidRequest({
        argument: "cursor",
        reason: `this cursor does not belong to a search of the current job ${job.pid}; search without a cursor to start from its first line`
      })
    }
    return Math.max(1, position.offset)
  })

/** A page's size: 100 matching lines by default, 1 to 1,000. */
const limitOf = (limit: number | null | undefined): Either.Either<number, InvalidRequest> =>
  limit === undefined || limit === null
    ? Either.right(DEFAULT_RESULTS)
    : Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_RESULTS
    ? Either.right(limit)
    : Either.left(new InvalidRequest({ argument: "max_results", reason: `must be a whole number from 1 to ${MAX_RESULTS}; got ${String(limit).slice(0, 40)}` }))

/**
 * The lines of a job's kept output that match a pattern, a page at a time:
 * the head, then the window of newest output (the dropped middle between
 * them is not kept, so never searched), on the pattern engine, ending at the
 * search's deadline. The page fits the delivery budget; its cursor goes on
 * from the first line it did not search. @internal
 */
export const search = (ctx: Context, caller: Access.Caller, job: Job, request: SearchRequest) =>
  Effect.scoped(Effect.gen(function*() {
    const limit = yield* limitOf(request.maxResults)
    const matcher = yield* Grep.compile(request.pattern, { ignoreCase: request.ignoreCase }).pipe(
      Either.mapLeft((e) => new InvalidRequest({ argument: "pattern", reason: e.message }))
    )
    const from = yield* fromOf(ctx, job, request.cursor)
    const patterns = yield* Grep.engine
    yield* patterns.prepare(matcher)
    const deadline = (yield* Clock.currentTimeMillis) + ctx.searchDeadlineMillis
    const k = kept(ctx, caller, job)
    const head = yield* headSegment(ctx, caller, job)
    const headLast = k?.record.ranges[0]!.to_line ?? head.index.lines
    const found: Found = { matches: [], searched: [], clipped: 0, next: undefined, stoppedAt: undefined }
    const hints = yield* ProcessView.CurrentHints
    if (from <= head.index.lines) yield* searchSegment(head, from, limit, matcher, patterns, deadline, found)
    let last: Segment = head
    if (k !== undefined && found.next === undefined) {
      const window = yield* windowSegment(k.window)
      last = window
      const start = Math.max(from, window.firstLine)
      const end = window.firstLine + window.index.lines - 1
      if (start <= end && found.matches.length >= limit) found.next = start
      else if (start <= end) yield* searchSegment(window, start, limit - found.matches.length, matcher, patterns, deadline, found)
    }
    const totalLines = k?.record.total_lines ?? head.index.lines
    // a running job writes on: its search can go on later, from its last line when that is not whole yet
    const later = job.state === "running" && found.next === undefined
      ? Math.max(from, last.endsLine ? totalLines + 1 : totalLines)
      : undefined
    const ranges = k !== undefined
      ? k.record.ranges
      : head.file.size === 0
      ? []
      : [{ from_byte: 0, to_byte: head.file.size, from_line: 1, to_line: headLast }]
    const page = (n: number): ProcessView.Matches => {
      // a page the budget cut short goes on from its first match left out
      const cutAt = n < found.matches.length ? found.matches[n]!.line : undefined
      const next = cutAt ?? found.next ?? later
      const searched = cutAt === undefined ? found.searched : clip(found.searched, cutAt - 1)
      const fields = {
        pid: job.pid,
        status: job.state,
        pattern: request.pattern,
        matches: found.matches.slice(0, n),
        ranges,
        ...(k?.record.dropped !== undefined ? { dropped: k.record.dropped } : {}),
        searched,
        total_lines: totalLines,
        more: cutAt !== undefined || found.next !== undefined,
        ...(next !== undefined ? { next_cursor: ctx.searchCodec.encode(String(job.pid), next, job.generation), next_line: next } : {}),
        ...(cutAt === undefined && found.stoppedAt !== undefined ? { stopped_at_line: found.stoppedAt } : {}),
        clipped_lines: found.clipped
      }
      return { _tag: "Matches", ...fields, text: ProcessView.matchesText(fields, hints) }
    }
    // what is delivered must fit: the text and the facts, as a client receives them
    const fitted = yield* Envelope.fitCount(Math.min(1, found.matches.length), found.matches.length, page, ctx.budget, ProcessView.measured)
    return fitted.value
  }))

/** Line ranges cut to end at `to`. */
const clip = (ranges: ReadonlyArray<ProcessView.LineRange>, to: number): Array<ProcessView.LineRange> =>
  ranges.filter((r) => r.from_line <= to).map((r) => (r.to_line > to ? { from_line: r.from_line, to_line: to } : r))
