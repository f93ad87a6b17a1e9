import { Effect } from "effect"
import type * as Access from "../../Access.js"
import type { OpenError } from "../../Body.js"
import type { StoreFailed } from "../../Errors.js"
import type * as ProcessView from "../../ProcessView.js"
import * as Salience from "../../Salience.js"
import { newlines as countNewlines } from "../kernel/kernel.js"
import { accounting, type Context, type Job, kept, readOutput, type WindowRead } from "./job.js"

/**
 * The failure lines of a job's head, found as its masked output arrives:
 * the masker reports where the rules' literals begin (its watch, found in
 * the pass that masks), and a salience tracker judges only the head's lines
 * that hold one. The tracker lets go of its state when the head is full or
 * the output ends. Bytes past the head are not looked at here (the window
 * of newest output is scanned when a view asks, see `forView`). @internal
 */
export interface HeadFailures {
  /** A watched literal begins at this output offset. */
  readonly mark: (position: number) => void
  /** Masked output in order, with its offset and the line breaks it holds. */
  readonly push: (bytes: Uint8Array, at: number, newlines: number) => void
  /** The output ended: the head's last line is judged too. */
  readonly end: () => void
  /** What the head holds so far (its incomplete last line not judged while the head can still grow). */
  readonly found: () => Salience.Found
}

/** @internal */
export const head = (compiled: Salience.Compiled, headLimit: number): HeadFailures => {
  let tracker: Salience.Tracker | undefined = Salience.tracker(compiled)
  let newlines = 0
  let done: Salience.Found | undefined
  const end = () => {
    if (tracker === undefined) return
    done = tracker.result()
    tracker = undefined
  }
  return {
    mark: (position) => {
      if (tracker !== undefined && position < headLimit) tracker.mark(position)
    },
    push: (bytes, at, breaks) => {
      if (tracker === undefined || at >= headLimit || bytes.length === 0) return
      const part = at + bytes.length > headLimit ? bytes.subarray(0, headLimit - at) : bytes
      const partBreaks = part === bytes ? breaks : countNewlines(part)
      tracker.accept(part, at, newlines + 1, partBreaks)
      newlines += partBreaks
      // the head is full: its last line, cut or not, is as it will stay
      if (at + bytes.length >= headLimit) end()
    },
    end,
    found: () => done ?? tracker?.peek() ?? { lines: [], total: 0, rules: [] }
  }
}

/** What was found in a head looked at all at once (a restored job's). */
const fixed = (found: Salience.Found): HeadFailures => ({ mark: () => {}, push: () => {}, end: () => {}, found: () => found })

/** Most bytes of a restored job's head looked at for failure lines, once, when it is first viewed. */
const RESTORED_SCAN_BYTES = 16 * 1024 * 1024

/** Bytes read at once when a restored head is looked at. */
const READ_BYTES = 1024 * 1024

/** A job's failure lines renumbered from a line other than 1. */
const renumber = (found: Salience.Found, firstLine: number): Salience.Found =>
  firstLine === 1 ? found : {
    ...found,
    lines: found.lines.map((l) => ({ ...l, line: l.line + firstLine - 1, ...(l.of !== undefined ? { of: l.of + firstLine - 1 } : {}) }))
  }

/**
 * The head's failure lines of a job restored after a restart (its scanner
 * did not survive): the head is looked at once, up to 16 MiB, and what was
 * found is kept with the job.
 */
const restoredHead = (ctx: Context, compiled: Salience.Compiled, caller: Access.Caller, job: Job, action: Access.Action) =>
  Effect.gen(function*() {
    const size = Math.min(accounting(ctx, job).retained, RESTORED_SCAN_BYTES)
    // no masker runs now: the scanner looks for the rules' literals itself
    const scanner = Salience.scanner(compiled)
    let newlines = 0
    for (let at = 0; at < size; at += READ_BYTES) {
      const bytes = yield* readOutput(ctx, caller, job, at, Math.min(READ_BYTES, size - at), action)
      if (bytes.length === 0) break
      newlines += countNewlines(bytes)
      scanner.push(bytes)
    }
    const found = fixed(scanner.result())
    job.failures = found
    // a head longer than was looked at: say which lines were
    job.failuresScanned = size < accounting(ctx, job).retained ? newlines + 1 : undefined
    return found
  })

/**
 * The failure lines of the window of newest output, scanned when a view asks
 * (at most the window's 1 MiB) and kept for that window: the newest matches
 * of each role, numbered in the whole output.
 */
const windowFound = (compiled: Salience.Compiled, job: Job, window: WindowRead) =>
  Effect.gen(function*() {
    const cached = job.windowFailures
    if (cached !== undefined && cached.from === window.fromByte && cached.to === window.toByte) return cached.found
    const all = yield* window.bytes
    // from the window's first whole line: a line the head's limit cut was looked at in the head
    const skip = window.lineStart ? 0 : all.indexOf(10) + 1
    const firstLine = window.lineStart ? window.fromLine : window.fromLine + 1
    let found: Salience.Found = { lines: [], total: 0, rules: [] }
    if ((window.lineStart || skip > 0) && skip < all.length) {
      const scanner = Salience.scanner(compiled, { newest: true })
      scanner.push(all.subarray(skip))
      found = renumber(scanner.result(), firstLine)
    }
    job.windowFailures = { from: window.fromByte, to: window.toByte, found }
    return found
  })

/**
 * The failure lines a status view shows: the head's (found as the output
 * arrived) and the window's (its newest), each within the lines that can be
 * read, with what was not looked at. Undefined when there are none.
 * @internal
 */
export const forView = (
  ctx: Context,
  caller: Access.Caller,
  job: Job,
  action: Access.Action
): Effect.Effect<ProcessView.Failures | undefined, StoreFailed | OpenError> =>
  Effect.gen(function*() {
    const compiled = ctx.salience
    if (compiled === undefined) return undefined
    const a = accounting(ctx, job)
    const k = kept(ctx, caller, job)
    const headFailures = job.failures ?? (yield* restoredHead(ctx, compiled, caller, job, action))
    const headLines = k?.record.ranges[0]!.to_line ?? job.writer?.progress().lines ?? job.recorded?.headLines ?? 0
    const inHead = headFailures.found()
    const lines = inHead.lines.filter((l) => l.line <= headLines)
    let total = inHead.total
    // past the head, the window of newest output, when its secret context was verified
    if (k !== undefined && a.captureError === undefined) {
      const inWindow = yield* windowFound(compiled, job, k.window)
      lines.push(...inWindow.lines)
      total += inWindow.total
    }
    if (total === 0) return undefined
    const dropped = k?.record.dropped
    const scanned = job.failuresScanned
    const notLooked = [
      ...(scanned !== undefined ? [`lines ${scanned + 1}-${headLines} of the head were not looked at (after a restart, only its first ${RESTORED_SCAN_BYTES} bytes are)`] : []),
      ...(dropped !== undefined ? [`lines ${dropped.from_line}-${dropped.to_line} were not kept, so not looked at`] : []),
      ...(k === undefined && a.emitted > job.headLimit ? [`the output past line ${headLines} was not kept, so not looked at`] : [])
    ]
    const notLookedAt = notLooked.length > 0 ? notLooked.join("; ") : undefined
    const searched = scanned === undefined ? undefined : [
      { from_line: 1, to_line: scanned },
      ...(k !== undefined ? [{ from_line: k.window.lineStart ? k.window.fromLine : k.window.fromLine + 1, to_line: k.window.toLine }] : [])
    ]
    return { lines, total, ...(notLookedAt !== undefined ? { notLookedAt } : {}), ...(searched !== undefined ? { searched } : {}) }
  })
