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
 * The first matching line from where the scan got to: in the head, then,
 * once the output has passed the head, in the window of its newest output
 * (lines that rolled out of the window before the scan reached them are not
 * seen). @internal
 */
const scan = (
  ctx: Context,
  caller: Access.Caller,
  job: Job,
  matcher: Grep.Matcher,
  patterns: Grep.PatternEngine["Type"],
  state: ScanState,
  deadline: number
) =>
  Effect.gen(function*() {
    const k = kept(ctx, caller, job)
    const end = accounting(ctx, job).retained
    // past the head, the head will not grow: its last line is whole as it is
    const read = (from: number, length: number) => readOutput(ctx, caller, job, from, length, "wait")
    const inHead = yield* scanRange(read, end, job.settled || k !== undefined, matcher, patterns, state, deadline)
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
    return yield* scanRange(fromWindow, w.fromByte + bytes.length, job.settled, matcher, patterns, state, deadline)
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
  request: { readonly timeoutMillis: number; readonly pattern?: string | undefined; readonly ignoreCase?: boolean | undefined }
) =>
  Effect.gen(function*() {
    if (!Number.isFinite(request.timeoutMillis) || request.timeoutMillis < 0) {
      return yield* new InvalidRequest({ argument: "timeout", reason: "must be a number of milliseconds, 0 or more" })
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
    const state = { from: 0, line: 1 }
    let outcome: ProcessView.WaitOutcome | undefined
    while (outcome === undefined) {
      const changed = job.changed
      const now = yield* Clock.currentTimeMillis
      // read before the scan: a job that had ended before it cannot print what the scan missed
      const ended = job.state !== "running"
      const match = matcher !== undefined ? yield* scan(ctx, caller, job, matcher, patterns, state, deadline) : undefined
      if (match === "stopped") outcome = { ended_by: "timeout", waited_ms: (yield* Clock.currentTimeMillis) - began }
      else if (match !== undefined) outcome = { ended_by: "match", waited_ms: now - began, match }
      else if (ended) outcome = { ended_by: "exit", waited_ms: now - began }
      else if (now - began >= request.timeoutMillis) outcome = { ended_by: "timeout", waited_ms: now - began }
      else {
        // without a pattern, only the end matters: output does not wake the wait
        yield* Deferred.await(matcher !== undefined ? changed : job.ended).pipe(
          Effect.timeoutOption(Duration.millis(request.timeoutMillis - (now - began)))
        )
      }
    }
    return outcome
  })
