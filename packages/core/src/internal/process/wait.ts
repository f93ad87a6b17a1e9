import { Clock, Deferred, Duration, Effect, Either } from "effect"
import type * as Access from "../../Access.js"
import { InvalidRequest } from "../../Errors.js"
import * as Grep from "../../Grep.js"
import type * as ProcessView from "../../ProcessView.js"
import * as Utf8 from "../../Utf8.js"
import { accounting, type Context, type Job } from "./job.js"
import { readOutput } from "./views.js"

const BLOCK = 1024 * 1024

/** The first line at or after `state.from` (a line start) that matches, up to the readable end. @internal */
const scan = (ctx: Context, caller: Access.Caller, job: Job, matcher: Grep.Matcher, state: { from: number; line: number }) =>
  Effect.gen(function*() {
    const end = accounting(ctx, job).retained
    while (state.from < end) {
      const bytes = yield* readOutput(ctx, caller, job, state.from, Math.min(BLOCK, end - state.from), "wait")
      let lineStart = 0
      for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, lineStart)) {
        const text = Utf8.decodeLossy(bytes.subarray(lineStart, nl))
        if (matcher.test(text)) return { line: state.line, text: Utf8.takeCodePoints(text, 200) }
        state.line++
        lineStart = nl + 1
      }
      const whole = state.from + bytes.length === end && job.settled
      if (whole && lineStart < bytes.length) {
        const text = Utf8.decodeLossy(bytes.subarray(lineStart))
        state.from = end
        if (matcher.test(text)) return { line: state.line, text: Utf8.takeCodePoints(text, 200) }
        return undefined
      }
      if (lineStart === 0 && bytes.length === BLOCK) {
        // one line longer than a block: test what there is, then go on after it
        const text = Utf8.decodeLossy(bytes)
        state.from += bytes.length
        if (matcher.test(text)) return { line: state.line, text: Utf8.takeCodePoints(text, 200) }
        continue
      }
      state.from += lineStart
      if (lineStart === 0) break
    }
    return undefined
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
    const began = yield* Clock.currentTimeMillis
    const state = { from: 0, line: 1 }
    let outcome: ProcessView.WaitOutcome | undefined
    while (outcome === undefined) {
      const changed = job.changed
      const now = yield* Clock.currentTimeMillis
      // read before the scan: a job that had ended before it cannot print what the scan missed
      const ended = job.state !== "running"
      const match = matcher !== undefined ? yield* scan(ctx, caller, job, matcher, state) : undefined
      if (match !== undefined) outcome = { ended_by: "match", waited_ms: now - began, match }
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
