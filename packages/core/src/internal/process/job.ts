import { Deferred, Effect, Exit, FiberId, type Scope } from "effect"
import { StoreFailed } from "../../Errors.js"
import type * as Access from "../../Access.js"
import type * as Body from "../../Body.js"
import type * as Child from "../../Child.js"
import type * as Cursor from "../../Cursor.js"
import type * as Envelope from "../../Envelope.js"
import type { Manifest } from "../../Manifests.js"
import type * as ProcessView from "../../ProcessView.js"
import type * as Retention from "../../Retention.js"
import type * as Salience from "../../Salience.js"
import type * as Read from "../read.js"
import type * as Failures from "./failures.js"
import type * as Tail from "./tail.js"
import * as Utf8 from "../../Utf8.js"
import { concat } from "../bytes.js"

/** The manager's limits, every default filled in. @internal */
export interface Limits {
  readonly captureLimitBytes: number
  readonly budgetChars: number
  readonly statusLines: number
  readonly defaultPageBytes: number
  readonly maxPageBytes: number
  readonly killGraceMillis: number
  readonly drainGraceMillis: number
  readonly smallStreamBytes: number
  readonly saveEveryMillis: number
  readonly sweepEveryMillis: number
  /** Bytes of newest output kept past the head, in a rolling window. */
  readonly tailBytes: number
}

/**
 * One job. Its output is a body of the spool profile; while the job runs,
 * the writer knows more than the manifest, so views take the accounting
 * from the writer; a restored job's comes from its manifest. @internal
 */
export interface Job {
  readonly generation: string
  readonly pid: number
  readonly owner: string
  readonly channel: string
  readonly command: string
  /** The body's name. */
  readonly body: string
  readonly startedAt: number
  /** What tells the job's process from a later one with its pid, when the runner could tell. */
  readonly startMark?: string | undefined
  readonly restored: boolean
  state: ProcessView.State
  exitedAt: number | undefined
  exitCode: number | undefined
  signal: string | undefined
  /** The live writer, while output may still come. */
  writer: Body.Writer | undefined
  /** The window of newest output past the head, while the job runs. */
  window: Tail.TailWindow | undefined
  /** The window once kept as a body of its own (at the end, or found after a restart). */
  tail: {
    readonly body: string
    readonly fromByte: number
    readonly fromLine: number
    readonly lineStart: boolean
    readonly headNewlines: number
    readonly bytes: number
    readonly lines: number
  } | undefined
  /** The head's limit: what it keeps of the output at most. */
  readonly headLimit: number
  /** Started to keep its whole output, as a saved body in the spill pool. */
  readonly whole: boolean
  /** What a restored job's manifest records. */
  recorded: {
    readonly emitted: number
    readonly written: number
    readonly headLines: number
    readonly captureError: string | undefined
    readonly expiresAt: number | null
  } | undefined
  /** The head's failure lines, found as its output arrives; a restored job's are found when it is first viewed. */
  failures: Failures.HeadFailures | undefined
  /** Set when a restored job's head was looked at in part for failure lines: the last line looked at. */
  failuresScanned: number | undefined
  /** The failure lines of the window of newest output, for the window they were found in. */
  windowFailures: { readonly from: number; readonly to: number; readonly found: Salience.Found } | undefined
  /** The whole masked output while it is small, so its true tail survives a capture error. */
  memory: Array<Uint8Array> | undefined
  /** True once the stream has ended and the masker has let out everything. */
  settled: boolean
  /** Completed (and replaced) when output is spooled or the job ends. */
  changed: Deferred.Deferred<void>
  /** Completed when the job has ended and all its output is in. */
  readonly ended: Deferred.Deferred<void>
  savedAt: number
  running: Child.Running | undefined
  scope: Scope.CloseableScope | undefined
}

/** What the manager's parts share. @internal */
export interface Context {
  readonly limits: Limits
  readonly bodies: Body.Service
  readonly retention: Retention.Service
  /** The head's limit of a job started to keep its whole output. */
  readonly wholeLimitBytes: number
  readonly codec: Cursor.Codec
  /** Cursors of searches: the line a search goes on from. */
  readonly searchCodec: Cursor.Codec
  readonly ttlMillis: number | null
  readonly spoolKind: "durable" | "temporary"
  readonly budget: Envelope.Budget
  readonly jobs: Map<string, Job>
  readonly byPid: Map<number, string>
  /** Line indexes built of growing heads, by name and size. */
  readonly lineIndexes: Read.IndexCache
  /** The rules failure lines are found by; none when the status view shows none. */
  readonly salience: Salience.Compiled | undefined
  /** A search of a job's output ends after this long and says where. */
  readonly searchDeadlineMillis: number
}

/** A fresh job record. @internal */
export const make = (
  fields:
    & Omit<
      Job,
      | "changed" | "ended" | "memory" | "settled" | "savedAt" | "writer" | "window" | "tail" | "recorded" | "running" | "scope" | "state"
      | "exitedAt" | "exitCode" | "signal" | "failures" | "failuresScanned" | "windowFailures"
    >
    & Partial<Job>
): Job => ({
  state: "running",
  failures: undefined,
  failuresScanned: undefined,
  windowFailures: undefined,
  window: undefined,
  tail: undefined,
  exitedAt: undefined,
  exitCode: undefined,
  signal: undefined,
  writer: undefined,
  recorded: undefined,
  memory: [],
  settled: false,
  savedAt: fields.startedAt,
  running: undefined,
  scope: undefined,
  changed: Deferred.unsafeMake<void>(FiberId.none),
  ended: Deferred.unsafeMake<void>(FiberId.none),
  ...fields
})

/** Wakes whoever waits for the job's next output or its end. @internal */
export const notify = (job: Job): void => {
  const d = job.changed
  job.changed = Deferred.unsafeMake<void>(FiberId.none)
  Deferred.unsafeDone(d, Exit.void)
}

/** When the job's output expires, or undefined while it runs. @internal */
export const expiresAt = (ctx: Context, job: Job): number | undefined => {
  if (job.recorded !== undefined && job.recorded.expiresAt !== null) return job.recorded.expiresAt
  if (ctx.ttlMillis === null) return undefined
  if (job.exitedAt !== undefined) return job.exitedAt + ctx.ttlMillis
  return job.state === "unknown" ? job.startedAt + ctx.ttlMillis : undefined
}

/** The job as `Access` sees it: named by its pid, bound to its channel. @internal */
export const resourceOf = (ctx: Context, job: Job): Access.Resource => ({
  kind: "job",
  id: String(job.pid),
  owner: job.owner,
  channel: job.channel,
  channelBound: true,
  tool: "manage_process",
  expiresAt: expiresAt(ctx, job) ?? null
})

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

const EMPTY = new Uint8Array(0)

/** The byte accounting of a job, from its writer while it runs, from its manifest once restored. @internal */
export const accounting = (_ctx: Context, job: Job): ProcessView.Accounting => {
  if (job.writer === undefined && job.recorded !== undefined) {
    const r = job.recorded
    return {
      emitted: r.emitted,
      retained: r.written,
      captureLimitLoss: Math.max(0, r.emitted - job.headLimit),
      captureError: r.captureError
    }
  }
  const p = job.writer?.progress()
  const emitted = p?.sourceBytes ?? 0
  const written = p?.writtenBytes ?? 0
  const whole = job.settled && p?.captureError === undefined && written === emitted
  return {
    emitted,
    // the readable prefix: the spool, less a code point more bytes could still complete
    retained: whole ? written : written - Utf8.incompleteSuffix(p?.lastBytes ?? EMPTY),
    captureLimitLoss: Math.max(0, emitted - job.headLimit),
    captureError: p?.captureError
  }
}

/** How the job stands. @internal */
export const statusOf = (job: Job): ProcessView.JobStatus => ({ state: job.state, exitCode: job.exitCode, signal: job.signal })

/** The job a restored manifest describes, read-only. @internal */
export const restored = (m: Manifest, headLimit: number): Job | undefined => {
  if (m.origin._tag !== "Job") return undefined
  const o = m.origin
  const job = make({
    headLimit,
    whole: m.profile === "spill",
    generation: o.generation,
    pid: o.pid,
    owner: m.owner,
    channel: m.channel,
    command: o.command,
    body: m.id,
    startedAt: m.createdAt,
    ...(o.startMark !== undefined ? { startMark: o.startMark } : {}),
    restored: true,
    state: o.exitedAt !== null ? "exited" : "unknown",
    exitedAt: o.exitedAt ?? undefined,
    exitCode: o.exitCode ?? undefined,
    signal: o.signal ?? undefined,
    memory: undefined,
    settled: true,
    recorded: {
      emitted: Math.max(m.sourceBytes, m.bytes),
      written: m.bytes,
      headLines: m.lines,
      captureError: m.captureError ?? undefined,
      expiresAt: m.expiresAt
    }
  })
  Deferred.unsafeDone(job.ended, Exit.void)
  return job
}

/** The window of newest output as views read it: from memory while the job runs, from its own body after. */
export interface WindowRead {
  readonly fromByte: number
  readonly fromLine: number
  /** Whether `fromByte` starts its line (else the head's limit cut that line, and reads by line start at the next). */
  readonly lineStart: boolean
  readonly toByte: number
  readonly toLine: number
  /** The window's bytes (at most the configured window). */
  readonly bytes: Effect.Effect<Uint8Array, StoreFailed>
  /** Its newest `n` bytes (all of it when it is shorter): what a status view shows, read alone. */
  readonly newest: (n: number) => Effect.Effect<Uint8Array, StoreFailed>
}

/**
 * What can be read of a job's output: the head, and the window of newest
 * output when the output passed the head's limit, with the dropped middle
 * between them; undefined while nothing passed the head.
 */
export const kept = (
  ctx: Context,
  caller: Access.Caller,
  job: Job
): { readonly record: ProcessView.Kept; readonly window: WindowRead } | undefined => {
  const a = accounting(ctx, job)
  const headLines = job.writer?.progress().lines ?? job.recorded?.headLines ?? 0
  let window: WindowRead | undefined
  let totalLines = headLines
  let headNewlines = headLines
  const live = job.window?.view()
  if (live !== undefined && job.window !== undefined) {
    totalLines = job.window.lines()
    headNewlines = job.window.headNewlines()
    window = {
      fromByte: live.fromByte,
      fromLine: live.fromLine,
      lineStart: live.lineStart,
      toByte: live.fromByte + live.bytes.length,
      toLine: totalLines,
      bytes: Effect.succeed(live.bytes),
      newest: (n) => Effect.succeed(live.bytes.subarray(Math.max(0, live.bytes.length - n)))
    }
  } else if (job.tail !== undefined) {
    const t = job.tail
    /** The newest `n` bytes of the window's body, all of it for 0. */
    const readTail = (n: number) =>
      Effect.scoped(Effect.flatMap(
        ctx.bodies.open(caller, t.body, { action: "poll", resource: () => resourceOf(ctx, job) }),
        (r) => (n <= 0 || n >= r.size ? r.read(0, r.size) : r.read(r.size - n, n))
      )).pipe(Effect.catchAll((e) => Effect.fail(e._tag === "StoreFailed" ? e : new StoreFailed({ operation: "read the newest output", reason: e.message }))))
    totalLines = t.fromLine + t.lines - 1
    headNewlines = t.headNewlines
    window = {
      fromByte: t.fromByte,
      fromLine: t.fromLine,
      lineStart: t.lineStart,
      toByte: t.fromByte + t.bytes,
      toLine: totalLines,
      bytes: readTail(0),
      newest: readTail
    }
  }
  if (window === undefined) return undefined
  const head = { from_byte: 0, to_byte: a.retained, from_line: 1, to_line: headLines }
  const tail = { from_byte: window.fromByte, to_byte: window.toByte, from_line: window.fromLine, to_line: window.toLine }
  // a line the head's limit cut, or the window's start, counts in the dropped range too
  const gap = window.fromByte > a.retained
    ? {
      from_byte: a.retained,
      to_byte: window.fromByte,
      from_line: headNewlines === headLines ? headLines + 1 : headLines,
      to_line: window.lineStart ? window.fromLine - 1 : window.fromLine
    }
    : undefined
  return {
    record: { ranges: [head, tail], ...(gap !== undefined ? { dropped: gap } : {}), total_lines: totalLines },
    window
  }
}
