import { Effect, Either } from "effect"
import type * as Access from "../../Access.js"
import { InvalidRequest, type StoreFailed } from "../../Errors.js"
import * as ProcessView from "../../ProcessView.js"
import * as Utf8 from "../../Utf8.js"
import { concat } from "../bytes.js"
import { accounting, type Context, expiresAt, type Job, resourceOf, statusOf } from "./job.js"

/** The smallest page a poll may ask for: room for any one code point. @internal */
export const MIN_PAGE_BYTES = 4

/** The tool name process cursors carry. @internal */
export const TOOL = "manage_process"

/** Reads `[offset, offset + length)` of a job's output, through the body store's access check. @internal */
export const readOutput = (ctx: Context, caller: Access.Caller, job: Job, offset: number, length: number, action: Access.Action) =>
  Effect.scoped(Effect.gen(function*() {
    if (length <= 0) return new Uint8Array(0)
    const body = yield* ctx.bodies.open(caller, job.body, { action, resource: () => resourceOf(ctx, job) })
    const parts: Array<Uint8Array> = []
    let got = 0
    while (got < length) {
      const chunk = yield* body.read(offset + got, length - got)
      if (chunk.length === 0) break
      parts.push(chunk)
      got += chunk.length
    }
    return parts.length === 0 ? new Uint8Array(0) : concat(parts)
  }))

const iso = (ms: number) => new Date(ms).toISOString()

/** How a model reads on from the status view. @internal */
export const nextHint = (job: Job) =>
  `manage_process action=poll pid=${job.pid} cursor=<cursor> reads the retained output from its start; follow next_cursor until truncated is false`

/** The status view: the newest lines and the `[output retention]` record. @internal */
export const statusView = (ctx: Context, caller: Access.Caller, job: Job, action: Access.Action, wait?: ProcessView.WaitOutcome) =>
  Effect.gen(function*() {
    const a = accounting(ctx, job)
    const clipped = a.emitted > ctx.limits.captureLimitBytes || a.captureError !== undefined
    let tail: ProcessView.StatusInput["tail"]
    if (!clipped) {
      const window = Math.min(a.retained, ctx.limits.budgetChars * 4 + 4)
      tail = { bytes: yield* readOutput(ctx, caller, job, a.retained - window, window, action), start: a.retained - window }
    } else if (job.settled && job.memory !== undefined && (job.writer?.progress().maskedBytes ?? -1) === a.emitted) {
      // a complete small stream: its true tail is in memory, in emitted coordinates
      tail = { bytes: concat(job.memory.length === 0 ? [new Uint8Array(0)] : job.memory), start: 0 }
    } else tail = "withheld"
    const expires = expiresAt(ctx, job)
    return yield* ProcessView.statusView({
      pid: job.pid,
      status: statusOf(job),
      accounting: a,
      spool: job.restored ? "durable" : ctx.spoolKind,
      expiresAt: expires !== undefined ? iso(expires) : undefined,
      wait,
      cursor: ctx.codec.encode(String(job.pid), 0, job.generation),
      next: nextHint(job),
      tail,
      maxLines: ctx.limits.statusLines,
      budget: ctx.budget
    })
  })

/** The page of a job's output from a byte offset. @internal */
export const pageAt = (ctx: Context, caller: Access.Caller, job: Job, offset: number, limit: number) =>
  Effect.gen(function*() {
    const a = accounting(ctx, job)
    if (offset > a.retained) {
      return yield* new InvalidRequest({
        argument: "offset",
        reason: `offset ${offset} is past the ${a.retained} retained bytes of job ${job.pid}; poll with offset 0 for its status`
      })
    }
    const before = Math.min(3, offset)
    const bytes = yield* readOutput(ctx, caller, job, offset - before, before + Math.min(limit + 3, a.retained - offset), "poll")
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
      budget: ctx.budget
    })
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
