import { Clock, Deferred, Duration, Effect, Either } from "effect"
import type * as Access from "../../Access.js"
import type * as Body from "../../Body.js"
import { InvalidRequest, type StoreFailed } from "../../Errors.js"
import * as Grep from "../../Grep.js"
import type * as ProcessView from "../../ProcessView.js"
import * as Utf8 from "../../Utf8.js"
import { accounting, type Context, type Job, kept, readOutput } from "./job.js"

/** Bytes of a spool a wait pattern scans at once. */
const SCAN_BLOCK = 1024 * 1024

/** Time a wait pattern's search gets even when the wait's timeout is shorter. */
const MIN_SCAN_MILLIS = 100

/** Where a wait's scan has got to: a line start, and its 1-based line number. */
interface ScanState {
  from: number
  line: number
}

/**
 * The first line at or after `state.from` (a line start) that matches, up to
 * `end`, scanned on the pattern engine; "stopped" when the deadline came
 * first. `final` says the range ends with its last byte, so its last line is
 * whole even without a break.
 */
const scanRange = (
  read: (from: number, length: number) => Effect.Effect<Uint8Array, Body.OpenError | StoreFailed>,
  end: number,
  final: boolean,
  matcher: Grep.Matcher,
  patterns: Grep.PatternEngine["Type"],
  state: ScanState,
  deadline: number
) =>
  Effect.gen(function*() {
    while (state.from < end) {
      const bytes = yield* read(state.from, Math.min(SCAN_BLOCK, end - state.from))
      const whole = state.from + bytes.length === end && final
      // whole lines; at the end of the output its last line too; a line longer than a block is tested on its start
      let cut = whole ? bytes.length : bytes.lastIndexOf(10) + 1
      if (cut === 0 && bytes.length === SCAN_BLOCK) cut = bytes.length
      if (cut === 0) break
      const text = Utf8.decodeLossy(bytes.subarray(0, cut))
      const found = yield* patterns.scan(matcher, text, {
        limit: 1,
        maxLineChars: SCAN_BLOCK,
        timeoutMillis: deadline - (yield* Clock.currentTimeMillis)
      })
      const first = found.matches[0]
      if (first !== undefined) return { line: state.line + first[0], text: Utf8.takeCodePoints(text.slice(first[1], first[2]), 200) }
      if (!found.complete) return "stopped" as const
      for (let at = bytes.indexOf(10); at !== -1 && at < cut; at = bytes.indexOf(10, at + 1)) state.line++
      state.from += cut
    }
    return undefined
  })

/**
 * Moves `state` on over whole lines of `[state.from, end)` until it reaches
 * line `target`, or, with no target, until only the line still being
 * written is left (all of it when `final`: nothing more will come).
 */
const seekRange = (
  read: (from: number, length: number) => Effect.Effect<Uint8Array, Body.OpenError | StoreFailed>,
  end: number,
  final: boolean,
  state: ScanState,
  target: number | undefined
) =>
  Effect.gen(function*() {
    while (state.from < end && (target === undefined || state.line < target)) {
      const bytes = yield* read(state.from, Math.min(SCAN_BLOCK, end - state.from))
      if (bytes.length === 0) break
      let moved = 0
      for (let at = bytes.indexOf(10); at !== -1 && (target === undefined || state.line < target); at = bytes.indexOf(10, at + 1)) {
        state.line++
        moved = at + 1
      }
      // a line longer than a block is passed over as the scan passes it, a block at a time
      if (moved === 0 && (bytes.length === SCAN_BLOCK || (final && state.from + bytes.length === end))) moved = bytes.length
      if (moved === 0) break
      state.from += moved
    }
    return undefined
  })

/** One pass over a range of the output: a scan for a match, or a seek. */
type Step<A> = (
  read: (from: number, length: number) => Effect.Effect<Uint8Array, Body.OpenError | StoreFailed>,
  end: number,
  final: boolean
) => Effect.Effect<A | undefined, Body.OpenError | StoreFailed>

/**
 * Runs `step` from where `state` has got to: in the head, then, once the
 * output has passed the head, in the window of its newest output (lines
 * that rolled out of the window before the step reached them are not seen).
 */
const walk = <A>(ctx: Context, caller: Access.Caller, job: Job, state: ScanState, step: Step<A>) =>
  Effect.gen(function*() {
    const k = kept(ctx, caller, job)
    const end = accounting(ctx, job).retained
    // past the head, the head will not grow: its last line is whole as it is
    const read = (from: number, length: number) => readOutput(ctx, caller, job, from, length, "wait")
    const inHead = yield* step(read, end, job.settled || k !== undefined)
    if (inHead !== undefined || k === undefined || state.from < end) return inHead
    const w = k.window
    const bytes = yield* w.bytes
    if (state.from < w.fromByte) {
      // on from the window's first whole line
      const skip = w.lineStart ? 0 : bytes.indexOf(10) + 1
      if (!w.lineStart && skip === 0) return undefined
      state.from = w.fromByte + skip
      state.line = w.lineStart ? w.fromLine : w.fromLine + 1
    }
    const fromWindow = (from: number, length: number) => Effect.succeed(bytes.subarray(from - w.fromByte, from - w.fromByte + length))
    return yield* step(fromWindow, w.fromByte + bytes.length, job.settled)
  })

/** The first matching line from where the scan got to, in the head and then the window. */
const scan = (
  ctx: Context,
  caller: Access.Caller,
  job: Job,
  matcher: Grep.Matcher,
  patterns: Grep.PatternEngine["Type"],
  state: ScanState,
  deadline: number
) => walk(ctx, caller, job, state, (read, end, final) => scanRange(read, end, final, matcher, patterns, state, deadline))

/**
 * Where a wait's pattern is first tried: line `fromLine`, or the next kept
 * line when that one was not kept; without it, the line still being written
 * when the wait began, or the end of an output that is complete, so only
 * lines printed from then on match.
 */
const startOf = (ctx: Context, caller: Access.Caller, job: Job, fromLine: number | undefined) =>
  Effect.gen(function*() {
    const state: ScanState = { from: 0, line: 1 }
    if (fromLine === 1) return state
    const settled = job.settled
    yield* walk(ctx, caller, job, state, (read, end, final) => seekRange(read, end, final, state, fromLine))
    if (fromLine === undefined && settled) {
      // the output is complete: its last line, even without a break, was printed before the wait
      const k = kept(ctx, caller, job)
      const end = k !== undefined ? k.window.toByte : accounting(ctx, job).retained
      if (state.from < end) state.line++
      state.from = Math.max(state.from, end)
    }
    return state
  })

/**
 * Waits until the job exits, a line of its output matches, or the timeout
 * passes; then the caller is checked again, since access may have been
 * taken away while it waited. @internal
 */
export const wait = (
  ctx: Context,
  caller: Access.Caller,
  job: Job,
  request: {
    readonly timeoutMillis: number
    readonly pattern?: string | undefined
    readonly ignoreCase?: boolean | undefined
    readonly fromLine?: number | null | undefined
  }
) =>
  Effect.gen(function*() {
    if (!Number.isFinite(request.timeoutMillis) || request.timeoutMillis < 0) {
      return yield* new InvalidRequest({ argument: "timeout", reason: "must be a number of milliseconds, 0 or more" })
    }
    const fromLine = request.fromLine ?? undefined
    if (fromLine !== undefined && (!Number.isSafeInteger(fromLine) || fromLine < 1)) {
      return yield* new InvalidRequest({
        argument: "from_line",
        reason: `must be a line number, 1 or more (1 tries every kept line); got ${String(fromLine).slice(0, 40)}`
      })
    }
    if (fromLine !== undefined && request.pattern === undefined) {
      return yield* new InvalidRequest({ argument: "from_line", reason: "names where a pattern is first tried: give a pattern with it, or leave it out" })
    }
    const matcher = request.pattern === undefined
      ? undefined
      : yield* Grep.compile(request.pattern, { ignoreCase: request.ignoreCase }).pipe(
        Either.mapLeft((e) => new InvalidRequest({ argument: "pattern", reason: e.message }))
      )
    // where wait patterns run: the platform's engine when one is provided
    const patterns = yield* Grep.engine
    if (matcher !== undefined) yield* patterns.prepare(matcher)
    const began = yield* Clock.currentTimeMillis
    // the pattern search ends with the wait, given a little time even when the wait is given none
    const deadline = began + Math.max(request.timeoutMillis, MIN_SCAN_MILLIS)
    // from now on unless told where: the lines already printed do not end the wait
    const state = matcher !== undefined ? yield* startOf(ctx, caller, job, fromLine) : { from: 0, line: 1 }
    const firstLine = state.line
    let outcome: ProcessView.WaitOutcome | undefined
    while (outcome === undefined) {
      const changed = job.changed
      const now = yield* Clock.currentTimeMillis
      // read before the scan: a job that had ended before it cannot print what the scan missed
      const ended = job.state !== "running"
      const match = matcher !== undefined ? yield* scan(ctx, caller, job, matcher, patterns, state, deadline) : undefined
      // a wait on a pattern says where it began and the line to go on from, so the next wait misses nothing
      const lines = () =>
        matcher === undefined ? {} : { from_line: firstLine, next_line: match !== undefined && match !== "stopped" ? match.line + 1 : state.line }
      if (match === "stopped") outcome = { ended_by: "timeout", waited_ms: (yield* Clock.currentTimeMillis) - began, ...lines() }
      else if (match !== undefined) outcome = { ended_by: "match", waited_ms: now - began, match, ...lines() }
      else if (ended) outcome = { ended_by: "exit", waited_ms: now - began, ...lines() }
      else if (now - began >= request.timeoutMillis) outcome = { ended_by: "timeout", waited_ms: now - began, ...lines() }
      else {
        // without a pattern, only the end matters: output does not wake the wait
        yield* Deferred.await(matcher !== undefined ? changed : job.ended).pipe(
          Effect.timeoutOption(Duration.millis(request.timeoutMillis - (now - began)))
        )
      }
    }
    return outcome
  })
