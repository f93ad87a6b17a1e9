/**
 * What a model sees of a process job's output: the status view (a sentence
 * that says what happened, the newest lines, the failure lines not among
 * them and the exact next call, with a record that accounts for every byte
 * the job wrote as its facts) and byte-addressed pages of the retained
 * spool. Both are fitted whole to the delivery budget. Coordinates always
 * count source bytes, also where malformed UTF-8 shows as U+FFFD. Pure
 * functions: the process manager reads the bytes, this module shapes them.
 *
 * @since 0.1.0
 */
import { Context, Either, Schema } from "effect"
import * as Delivery from "./Delivery.js"
import * as Envelope from "./Envelope.js"
import * as Preview from "./Preview.js"
import * as Salience from "./Salience.js"
import * as Terminal from "./Terminal.js"
import * as Utf8 from "./Utf8.js"

/** Where a job is: still running, ended, or restored without an observed exit. */
export const State = Schema.Literal("running", "exited", "unknown")

/** Where a job is: still running, ended, or restored without an observed exit. */
export type State = typeof State.Type

/** How a job ended, when it did. */
export interface JobStatus {
  readonly state: State
  readonly exitCode?: number | undefined
  /** The signal that ended the job, such as `SIGKILL`. */
  readonly signal?: string | undefined
}

/** The byte accounting of one job. */
export interface Accounting {
  /** Raw stdout and stderr bytes the job wrote. */
  readonly emitted: number
  /** The readable, masked prefix of the spool (no partial code point, no withheld token). */
  readonly retained: number
  /** Bytes past the per-job capture limit. */
  readonly captureLimitLoss: number
  /** Why capture stopped early, when it did. */
  readonly captureError?: string | undefined
}

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** How a wait ended. */
export const WaitOutcome = Schema.Struct({
  ended_by: Schema.Literal("exit", "match", "timeout"),
  waited_ms: Schema.Number,
  /** The first line that matched, when the wait ended on a match. */
  match: optional(Schema.Struct({ line: Schema.Number, text: Schema.String })),
  /** With a pattern: the first line it was tried on (by default the line being written when the wait began). */
  from_line: optional(Schema.Number),
  /** With a pattern: the line a next wait goes on from (its `from_line`), so no line is missed between waits. */
  next_line: optional(Schema.Number)
})

/** How a wait ended. */
export type WaitOutcome = typeof WaitOutcome.Type

/** The tail status of a job whose clipped tail cannot be shown safely. */
export const WITHHELD = "withheld_unverifiable_secret_context"

/** A range of a job's output: bytes `[from_byte, to_byte)`, lines `from_line` to `to_line` (1-based; a line cut at an end counts). */
export const Range = Schema.Struct({
  from_byte: Schema.Number,
  to_byte: Schema.Number,
  from_line: Schema.Number,
  to_line: Schema.Number
})

/** A range of a job's output. */
export type Range = typeof Range.Type

/** The ranges of a job's output that can be read, and the middle left out between them. */
export const Kept = Schema.Struct({
  /** The head (the first bytes, up to the per-job limit), then the window of newest output. */
  ranges: Schema.Array(Range),
  /** What was left out between the head and the window: not kept anywhere. */
  dropped: optional(Range),
  /** Lines of the output in all. */
  total_lines: Schema.Number
})

/** The ranges of a job's output that can be read. */
export type Kept = typeof Kept.Type

/** A line of a job's output that reports an error or a failure, by its number in the whole output. */
export const FailureLine = Schema.Struct({
  line: Schema.Number,
  /** The line without colour codes, cut in the middle past 200 characters. */
  text: Schema.String
})

/** A line of a job's output that reports an error or a failure. */
export type FailureLine = typeof FailureLine.Type

/** Lines of a job's output, by number (1-based, inclusive). */
export const LineRange = Schema.Struct({ from_line: Schema.Number, to_line: Schema.Number })

/** Lines of a job's output, by number. */
export type LineRange = typeof LineRange.Type

/** The record that follows the newest lines. */
export const RetentionRecord = Schema.Struct({
  pid: Schema.Number,
  status: State,
  exit_code: optional(Schema.Number),
  signal: optional(Schema.String),
  /** Why the status is `unknown`: what is known of how the job was lost. */
  status_reason: optional(Schema.String),
  /** How long the job has run, in milliseconds, while it runs. */
  running_ms: optional(Schema.Number),
  emitted_bytes: Schema.Number,
  /** Bytes readable from the start of the output (the head); the cursor pages them, then goes on to the newest output `kept` names. */
  retained_bytes: Schema.Number,
  /** Half-open intervals of source bytes the lines above show. */
  shown_intervals: Schema.Array(Schema.Tuple(Schema.Number, Schema.Number)),
  /** Bytes dropped for the per-job limit: past the head, and not in the window of newest output. */
  capture_limit_loss_bytes: Schema.Number,
  /** Every emitted byte that cannot be read: dropped for the limit or lost to an error. Bytes a running job has written that are not readable yet are `pending_bytes`. */
  not_retained_bytes: Schema.Number,
  /** While the job's output is still coming in: bytes written but not readable yet (held until a secret can be ruled out, or a character completed). Not a loss. */
  pending_bytes: optional(Schema.Number),
  capture_error: optional(Schema.String),
  tail_status: optional(Schema.Literal(WITHHELD)),
  /** Whether the spool is in the host's retention directory or a temporary one that ends with the host. */
  spool: Schema.Literal("durable", "temporary"),
  expires_at: optional(Schema.String),
  /** Present when the output passed the head's limit and a window of its newest output is kept: what can be read, by byte and by line. */
  kept: optional(Kept),
  /** Present for a job started to keep its whole output: the saved body's name, for `read_spill` and `grep_spill`. */
  filename: optional(Schema.String),
  wait: optional(WaitOutcome),
  /**
   * Lines of the kept output (the head, and the window of newest output)
   * that report errors or failures, with the lines that explain them: the
   * explaining ones first, within a quarter of the budget. The view's text
   * shows those not among its newest lines as a section of their own.
   */
  failure_lines: optional(Schema.Array(FailureLine)),
  /** How many lines of the kept output report errors or failures in all; the dropped middle is not looked at. */
  failure_lines_total: optional(Schema.Number),
  /** Present when not every kept line was looked at for failure lines: the lines that were. */
  failure_lines_searched: optional(Schema.Array(LineRange)),
  /** A cursor to the start of the retained output. */
  cursor: Schema.String,
  next: Schema.String
})

/** The record that follows the newest lines. */
export type RetentionRecord = typeof RetentionRecord.Type

/** The status view: the newest lines, the record, and the text a model reads. */
export const StatusView = Schema.TaggedStruct("StatusView", {
  /** The newest lines shown (possibly none). */
  output: Schema.String,
  retention: RetentionRecord,
  /** What a model receives: a sentence that says what happened, `output`, the failure lines not in it, and a last line with the next call (`render`). */
  text: Schema.String
})

/** The status view: the newest lines, the record, and the text a model reads. */
export type StatusView = typeof StatusView.Type

/** A page of retained output. */
export const Page = Schema.TaggedStruct("Page", {
  pid: Schema.Number,
  status: State,
  exit_code: optional(Schema.Number),
  signal: optional(Schema.String),
  offset: Schema.Number,
  /** Where the next page starts; `offset + shown_bytes`. */
  next_offset: Schema.Number,
  offset_unit: Schema.Literal("byte"),
  /** Source bytes this page covers. */
  shown_bytes: Schema.Number,
  content: Schema.String,
  retained_bytes: Schema.Number,
  emitted_bytes: Schema.Number,
  /** True when more retained bytes follow this page. */
  truncated: Schema.Boolean,
  /** Present when more output follows, now or (while the job runs) later. */
  next_cursor: optional(Schema.String),
  note: optional(Schema.String)
})

/** A page of retained output. */
export type Page = typeof Page.Type

/** Lines of a job's output, read by line number. */
export const Lines = Schema.TaggedStruct("Lines", {
  pid: Schema.Number,
  status: State,
  /** The first line shown (1-based). */
  first_line: Schema.Number,
  /** How many lines are shown. */
  lines: Schema.Number,
  /** The lines, each with the break that ends it. */
  content: Schema.String,
  /** Lines of the output in all. */
  total_lines: Schema.Number,
  /** The line to read on from, when lines follow that can be read. */
  next_line: optional(Schema.Number),
  /** Set when the page stopped inside its only line: that line is shown in part. */
  cut: optional(Schema.Boolean),
  /** With `cut`: a cursor to the rest of that line, by byte. */
  cursor: optional(Schema.String),
  note: optional(Schema.String)
})

/** Lines of a job's output, read by line number. */
export type Lines = typeof Lines.Type

/** A line of a job's output that matched a search. */
export const SearchMatch = Schema.Struct({
  /** Its number in the whole output (1-based). */
  line: Schema.Number,
  /** The line, or its start when `cut`. */
  text: Schema.String,
  cut: Schema.Boolean
})

/** A line of a job's output that matched a search. */
export type SearchMatch = typeof SearchMatch.Type

/** A page of the lines of a job's kept output that match a pattern. */
export const Matches = Schema.TaggedStruct("Matches", {
  pid: Schema.Number,
  status: State,
  pattern: Schema.String,
  matches: Schema.Array(SearchMatch),
  /** What a search can cover: the head, then the window of newest output when one is kept. */
  ranges: Schema.Array(Range),
  /** What was left out between them: not kept, so never searched. */
  dropped: optional(Range),
  /** The lines this page's search looked at, in the ranges kept. */
  searched: Schema.Array(LineRange),
  /** Lines of the output in all. */
  total_lines: Schema.Number,
  /** True when the search stopped before the end of the kept output: more lines may match; search on with `next_cursor`. */
  more: Schema.Boolean,
  /** Present when the search can go on, now (`more`) or, while the job runs, later: pass it with the same pattern. */
  next_cursor: optional(Schema.String),
  /** The line `next_cursor` searches on from. */
  next_line: optional(Schema.Number),
  /** Set when the search reached its deadline first: the first line not searched. */
  stopped_at_line: optional(Schema.Number),
  /** Lines tested on their first 65,536 characters only. */
  clipped_lines: Schema.Number,
  /** What a model reads: the matching lines by number, then what was searched and how to go on. */
  text: Schema.String
})

/** A page of the lines of a job's kept output that match a pattern. */
export type Matches = typeof Matches.Type

/** Where reading a job's output goes on: from a cursor (a byte position), or from a line, so many lines at a time. */
export type ReadFrom = { readonly cursor: string } | { readonly line: number; readonly lines: number }

/**
 * How a job's views say to read on, in the words of whoever reads them: a
 * model calling a tool, or a program calling a method. The status view's
 * `next`, the markers of pages and lines, and the last line of a search's
 * matches give the exact call made with it.
 */
export interface Hints {
  /** The call that polls job `pid` from a cursor, or by line. */
  readonly poll: (pid: number, from: ReadFrom) => string
  /** The call that searches job `pid` on from `cursor` with the same pattern. */
  readonly search: (pid: number, pattern: string, cursor: string) => string
  /** The call that waits on job `pid` for a line matching `PATTERN` (the reader's own) from line `fromLine` on. */
  readonly wait: (pid: number, fromLine: number) => string
}

/** The stand-in a wait hint puts where the reader's own regular expression goes. */
export const WAIT_PATTERN = "PATTERN"

/** How long a wait hint in a program's words waits, in milliseconds: the tool's default. */
export const WAIT_MILLIS = 30_000

/** The tool's words, `manage_process action=poll pid=… cursor=…`: what a model calling the MCP server or the toolkit reads. */
export const toolHints: Hints = {
  poll: (pid, from) =>
    Delivery.call("manage_process", [
      ["action", "poll"],
      ["pid", pid],
      ...("cursor" in from ? [["cursor", from.cursor] as const] : [["line", from.line] as const, ["lines", from.lines] as const])
    ]),
  search: (pid, pattern, cursor) =>
    Delivery.call("manage_process", [["action", "grep"], ["pid", pid], ["pattern", Delivery.patternArgument(pattern)], ["cursor", cursor]]),
  wait: (pid, fromLine) => Delivery.call("manage_process", [["action", "wait"], ["pid", pid], ["pattern", WAIT_PATTERN], ["from_line", fromLine]])
}

/** An object literal of a call's options, as a program writes it: `{ pid: 7, cursor: "…" }`. */
const optionsText = (fields: ReadonlyArray<readonly [string, string | number]>) =>
  `{ ${
    fields.map(([k, v]) =>
      `${k}: ${typeof v === "number" || v === WAIT_PATTERN ? v : k === "pattern" ? Delivery.patternArgument(v) : JSON.stringify(v)}`
    ).join(", ")
  } }`

const fromFields = (from: ReadFrom): ReadonlyArray<readonly [string, string | number]> =>
  "cursor" in from ? [["cursor", from.cursor]] : [["line", from.line], ["lines", from.lines]]

/** The names of a program's job methods, and the name its wait gives the timeout option. */
export interface MethodNames {
  readonly poll: string
  readonly search: string
  readonly wait: string
  readonly timeout: string
}

/**
 * Hints that name a program's methods: called as `poll(caller, { pid, … })`
 * when the pid is a field of the options (`pid: "field"`), or as
 * `poll(pid, { … })` when it is the first argument (`pid: "argument"`).
 */
export const methodHints = (names: MethodNames, pid: "field" | "argument"): Hints => {
  const callText = (name: string, id: number, fields: ReadonlyArray<readonly [string, string | number]>) =>
    pid === "field" ? `${name}(caller, ${optionsText([["pid", id], ...fields])})` : `${name}(${id}, ${optionsText(fields)})`
  return {
    poll: (id, from) => callText(names.poll, id, fromFields(from)),
    search: (id, pattern, cursor) => callText(names.search, id, [["pattern", pattern], ["cursor", cursor]]),
    wait: (id, fromLine) => callText(names.wait, id, [[names.timeout, WAIT_MILLIS], ["pattern", WAIT_PATTERN], ["fromLine", fromLine]])
  }
}

/** The Effect library's words, `Process.poll(caller, { pid: …, cursor: "…" })`: what a program using the `Process` services reads. */
export const libraryHints: Hints = methodHints({ poll: "Process.poll", search: "Process.search", wait: "Process.wait", timeout: "timeoutMillis" }, "field")

/**
 * The words a job's views are made with in the current call: the tool's by
 * default (the MCP server, the toolkit, remote hosts); a face for programs
 * provides its own (`NodeProcess.layer` the library's, the Promise face its
 * methods').
 */
export class CurrentHints extends Context.Reference<CurrentHints>()("@spillway/core/ProcessView/CurrentHints", {
  defaultValue: (): Hints => toolHints
}) {}

const lineSpans = (ranges: ReadonlyArray<LineRange>) =>
  ranges.map((r) => (r.from_line === r.to_line ? `line ${r.from_line}` : `lines ${r.from_line}-${r.to_line}`)).join(" and ")

/**
 * The text of a page of matches: `line: text` rows, then a line that says
 * which lines were searched, what was not (the dropped middle, what the
 * deadline left), and how to go on.
 */
export const matchesText = (m: Omit<Matches, "text" | "_tag">, hints: Hints = toolHints): string => {
  const rows = m.matches.map((x) => `${x.line}: ${x.text}${x.cut ? " [line cut]" : ""}`)
  const found = m.matches.length === 0 ? `no line matches ${JSON.stringify(m.pattern)}` : `${m.matches.length} matching ${m.matches.length === 1 ? "line" : "lines"}`
  const searched = m.searched.length === 0 ? "no line was searched" : `searched ${lineSpans(m.searched)} of ${m.total_lines}`
  const dropped = m.dropped !== undefined
    ? `; ${lineSpans([m.dropped])} (bytes ${m.dropped.from_byte}-${m.dropped.to_byte}) were not kept, so not searched`
    : ""
  const stopped = m.stopped_at_line !== undefined ? `; the search stopped at its deadline at line ${m.stopped_at_line}: narrow the pattern` : ""
  const again = m.next_cursor !== undefined ? hints.search(m.pid, m.pattern, m.next_cursor) : "a search from next_cursor"
  const next = m.next_line === undefined
    ? ""
    : m.more
    ? ` Next, from line ${m.next_line}: ${again}`
    : ` The job is still running; for lines from ${m.next_line} on, later: ${again}`
  return [...rows, `[${found}; ${searched}${dropped}${stopped}.${next}]`].join("\n")
}

/** What a poll returns: the status view, a page by byte, or lines by number. */
export const PollResult = Schema.Union(StatusView, Page, Lines)

/** What a poll returns: the status view, a page by byte, or lines by number. */
export type PollResult = typeof PollResult.Type

/** What a program reads of the status view: the record; the newest lines are the delivered text. */
export const StatusFacts = Schema.extend(Schema.Struct({ view: Schema.Literal("status") }), RetentionRecord)

/** What a program reads of the status view. */
export type StatusFacts = typeof StatusFacts.Type

const { _tag: _pageTag, content: _pageContent, next_cursor: _nextCursor, ...pageFields } = Page.fields

/** What a program reads of a page; the page itself is the delivered text. */
export const PageFacts = Schema.Struct({
  view: Schema.Literal("page"),
  ...pageFields,
  /** The cursor of the next page: present when more output follows, now or (while the job runs) later. */
  cursor: optional(Schema.String),
  /** Code points at the start of the text that are the output; what follows them is the page's marker. */
  content_chars: Schema.Number
})

/** What a program reads of a page. */
export type PageFacts = typeof PageFacts.Type

const { _tag: _linesTag, content: _linesContent, ...linesFields } = Lines.fields

/** What a program reads of lines read by number; the lines are the delivered text. */
export const LinesFacts = Schema.Struct({
  view: Schema.Literal("lines"),
  ...linesFields,
  /** Code points at the start of the text that are the lines; what follows them is the marker. */
  content_chars: Schema.Number
})

/** What a program reads of lines read by number. */
export type LinesFacts = typeof LinesFacts.Type

const { _tag: _matchesTag, text: _matchesText, next_cursor: _matchesCursor, ...matchesFields } = Matches.fields

/** What a program reads of a page of a job's search; the matching lines are the delivered text. */
export const MatchesFacts = Schema.Struct({
  view: Schema.Literal("matches"),
  ...matchesFields,
  /** The matching lines the text shows, by number; `cut` when the text shows only a line's start. */
  matches: Schema.Array(Schema.Struct({ line: Schema.Number, cut: Schema.Boolean })),
  /** The cursor that searches on, with the same pattern: present when the search can go on, now or later. */
  cursor: optional(Schema.String)
})

/** What a program reads of a page of a job's search. */
export type MatchesFacts = typeof MatchesFacts.Type

/** What a program reads of any view of a job. */
export type Facts = StatusFacts | PageFacts | LinesFacts | MatchesFacts

const midLine = (content: string) =>
  Delivery.endsMidLine(content) ? "; the page ends inside a line, which the next page goes on with" : ""

/** The marker after a page that is not the whole output: what it shows, and the call that reads on. */
const pageMarker = (p: Page, hints: Hints): string | undefined => {
  if (p.offset === 0 && !p.truncated && p.next_cursor === undefined && p.note === undefined) return undefined
  const shown = `Showing bytes ${p.offset}-${p.offset + p.shown_bytes} of ${p.emitted_bytes}`
  const note = p.note !== undefined ? `; ${p.note}` : ""
  if (p.next_cursor === undefined) return `[${shown}${note}: the end of the kept output]`
  return `[${shown}${note}${p.truncated ? midLine(p.content) : ""}. Next: ${hints.poll(p.pid, { cursor: p.next_cursor })}]`
}

/** The marker after lines that are not the whole output. */
const linesMarker = (l: Lines, hints: Hints): string | undefined => {
  const last = l.first_line + l.lines - 1
  if (l.first_line === 1 && l.next_line === undefined && l.cut !== true && l.note === undefined && last >= l.total_lines) return undefined
  const shown = l.lines === 0 ? `Showing 0 lines of ${l.total_lines}` : `Showing lines ${l.first_line}-${last} of ${l.total_lines}`
  const cut = l.cut === true
    ? `; line ${l.first_line} is shown in part${l.cursor !== undefined ? `, the rest of it: ${hints.poll(l.pid, { cursor: l.cursor })}` : ""}`
    : ""
  const note = l.note !== undefined ? `; ${l.note}` : ""
  if (l.next_line === undefined) return `[${shown}${cut}${note}: the end of the output kept${l.status === "running" ? " so far" : ""}]`
  return `[${shown}${cut}${note}. Next: ${hints.poll(l.pid, { line: l.next_line, lines: Math.max(1, l.lines) })}]`
}

/**
 * A view as delivered: the newest lines and the record, a page or lines
 * with their marker (its call in the words of `hints`, the tool's by
 * default) as the text a model reads; the record or the page's fields as facts.
 */
export const delivered = (view: StatusView | Page | Lines | Matches, hints: Hints = toolHints): Delivery.Delivered<Facts> => {
  switch (view._tag) {
    case "Matches": {
      const { _tag, text, next_cursor, matches, ...fields } = view
      return {
        text,
        facts: {
          view: "matches",
          ...fields,
          matches: matches.map((m) => ({ line: m.line, cut: m.cut })),
          ...(next_cursor !== undefined ? { cursor: next_cursor } : {})
        }
      }
    }
    case "StatusView":
      return { text: view.text, facts: { view: "status", ...view.retention } }
    case "Page": {
      const { _tag, content, next_cursor, ...fields } = view
      return {
        text: Delivery.withMarker(content, pageMarker(view, hints)),
        facts: { view: "page", ...fields, ...(next_cursor !== undefined ? { cursor: next_cursor } : {}), content_chars: Delivery.contentChars(content) }
      }
    }
    case "Lines": {
      const { _tag, content, ...fields } = view
      return { text: Delivery.withMarker(content, linesMarker(view, hints)), facts: { view: "lines", ...fields, content_chars: Delivery.contentChars(content) } }
    }
  }
}

/** What the budget counts of a view: the view as delivered. */
export const measured = (view: StatusView | Page | Lines | Matches, hints: Hints = toolHints): string => Delivery.serialize(delivered(view, hints))

const decode = (bytes: Uint8Array) => Utf8.decodeLossy(bytes)

const statusFields = (status: JobStatus) => ({
  ...(status.exitCode !== undefined ? { exit_code: status.exitCode } : {}),
  ...(status.signal !== undefined ? { signal: status.signal } : {})
})

const seconds = (ms: number) => `${Math.floor(ms / 1000)} s`

/**
 * The first sentence of a job's status view: what happened to it (started,
 * still running after so long, exited with a code, killed by a signal, or
 * lost with the server that ran it), then how a wait ended. `started` words
 * it as the answer to starting the job.
 */
export const sentence = (r: RetentionRecord, started = false): string => {
  const ended = r.exit_code !== undefined ? `exited with ${r.exit_code}` : r.signal !== undefined ? `was killed by signal ${r.signal}` : "exited"
  const what = r.status === "unknown"
    ? `Job ${r.pid}'s end was never seen: ${r.status_reason ?? "its status is unknown"}.`
    : started
    ? (r.status === "running" ? `Started job ${r.pid}; it is running.` : `Started job ${r.pid}; it already ${ended}.`)
    : r.status === "running"
    ? `Job ${r.pid} is still running${r.running_ms !== undefined ? ` after ${seconds(r.running_ms)}` : ""}.`
    : `Job ${r.pid} ${ended}.`
  const w = r.wait
  const waited = w === undefined
    ? ""
    : w.ended_by === "match" && w.match !== undefined
    ? ` The wait ended after ${seconds(w.waited_ms)} on line ${w.match.line}: ${Salience.cutMiddle(w.match.text.replace(/[\r\n]+/g, " "), Preview.SALIENT_CHARS)}`
    : w.ended_by === "timeout"
    ? ` The wait timed out after ${seconds(w.waited_ms)}${w.match === undefined ? " with no line matching" : ""}.`
    : ""
  const from = w?.next_line !== undefined && r.status === "running" ? ` A next wait goes on from line ${w.next_line} (from_line ${w.next_line}).` : ""
  return `${what}${waited}${from}`
}

/** The last line of a status view's text: what the lines above are, what was not kept (only when something was), and the exact call that reads on. */
const footer = (r: RetentionRecord, shownLines: LineRange | undefined, shown: boolean): string => {
  const parts: Array<string> = []
  const total = r.kept?.total_lines
  parts.push(
    shownLines === undefined
      ? shown ? "The newest lines shown" : r.emitted_bytes === 0 ? (r.status === "running" ? "No output yet" : "No output") : r.tail_status === WITHHELD ? "The newest lines are not shown: a secret may begin before them, which cannot be checked" : "No whole line shown"
      : `${shownLines.from_line === shownLines.to_line ? "Line" : "Lines"} ${lineSpans([shownLines]).replace(/^lines? /, "")} of ${total ?? shownLines.to_line} shown, the newest`
  )
  if (r.emitted_bytes > 0) parts.push(`${r.emitted_bytes} bytes written${r.pending_bytes !== undefined ? `, ${r.pending_bytes} of them not readable yet` : ""}`)
  const gap = r.kept?.dropped
  if (gap !== undefined) parts.push(`${lineSpans([gap])} (bytes ${gap.from_byte}-${gap.to_byte}) were not kept`)
  else if (r.not_retained_bytes > 0) parts.push(`${r.not_retained_bytes} bytes were not kept`)
  if (r.capture_error !== undefined) parts.push(`capture stopped: ${r.capture_error}`)
  if (r.filename !== undefined) parts.push(`the whole output is saved as ${r.filename}, for read_spill and grep_spill`)
  return `[${parts.join("; ")}. Next: ${r.next}]`
}

/**
 * The view's text: the sentence, the newest lines, the failure section
 * (the lines not already among them), and a last line with what else a
 * model needs and the exact next call. The record itself is the view's
 * facts, not its text.
 */
export const render = (output: string, record: RetentionRecord, section = "", shownLines?: LineRange): string =>
  [sentence(record), ...(output === "" ? [] : [output.endsWith("\n") ? output.slice(0, -1) : output]), ...(section === "" ? [] : [section]), footer(record, shownLines, output !== "")]
    .join("\n")

/**
 * The status view worded as the answer to starting the job: its first
 * sentence says the job was started. The view as it was when that wording
 * would not fit `budget`.
 */
export const asStarted = (view: StatusView, budget?: Envelope.Budget): StatusView => {
  const first = view.text.indexOf("\n")
  const started: StatusView = { ...view, text: `${sentence(view.retention, true)}${first === -1 ? "" : view.text.slice(first)}` }
  return budget === undefined || Envelope.sizeOf(measured(started), budget.measure) <= budget.limit ? started : view
}

/** What the status view is made from. */
export interface StatusInput {
  readonly pid: number
  readonly status: JobStatus
  readonly accounting: Accounting
  readonly spool: "durable" | "temporary"
  readonly expiresAt?: string | undefined
  readonly wait?: WaitOutcome | undefined
  /** A cursor to byte 0 of the retained output. */
  readonly cursor: string
  /** How to read on with `cursor`. */
  readonly next: string
  /**
   * The newest bytes to take lines from and the source offset of the first;
   * "withheld" when only a clipped tail exists, whose secret context cannot
   * be checked.
   */
  readonly tail:
    | {
      readonly bytes: Uint8Array
      readonly start: number
      readonly lineStart?: boolean | undefined
      /** The number of the line the last byte is in, when known: the lines shown are numbered from it, and failure lines among them are not shown twice. */
      readonly lastLine?: number | undefined
    }
    | "withheld"
  /** False while output may still come in: bytes written but not readable yet are pending, not lost. True when absent. */
  readonly settled?: boolean | undefined
  /** How long the job has run, while it runs. */
  readonly runningMillis?: number | undefined
  /** Why the status is `unknown`, when it is. */
  readonly statusReason?: string | undefined
  /** What can be read, when a window of newest output is kept past the head. */
  readonly kept?: Kept | undefined
  /** The saved body's name, for a job that keeps its whole output. */
  readonly filename?: string | undefined
  /** Most lines shown; 50 in the source design. */
  readonly maxLines: number
  readonly budget: Envelope.Budget
  /** Lines of the kept output that report errors or failures. */
  readonly failures?: Failures | undefined
}

/** Lines of a job's kept output that report errors or failures, as the status view gets them. */
export interface Failures {
  /** Matches and the lines taken with them, numbered in the whole output. */
  readonly lines: ReadonlyArray<Salience.SalientLine>
  /** Matched lines in all (lines taken with them not counted). */
  readonly total: number
  /** What of the output was not looked at, in words, when some was not (the dropped middle). */
  readonly notLookedAt?: string | undefined
  /** Set when not every kept line was looked at: the lines that were. */
  readonly searched?: ReadonlyArray<LineRange> | undefined
}

/** The share of the budget the failure lines may take, as JSON in the record. */
export const FAILURE_SHARE = 1 / 4

/**
 * The failure lines a view shows within `limit` characters of JSON: the
 * explaining lines first, then the lines reports point back to, then the
 * reports (`Salience.ranked`), each cut in the middle to 200 characters,
 * shown in line order.
 */
export const pickFailures = (
  failures: Failures,
  limit: number
): ReadonlyArray<FailureLine & { readonly match: boolean }> =>
  // as a JSON array of rows: its brackets, each row, a comma between two
  Salience.pick(failures.lines, { limit, base: 2, cost: (row) => Envelope.sizeOf(JSON.stringify(row)), separator: 1 })

/**
 * The failure lines as a section of the view's text: a title that counts
 * them, then `line: text` rows, leaving out the lines in `shown` (the
 * newest lines above already show them); empty when none is left.
 */
const failureSection = (
  all: ReadonlyArray<FailureLine & { readonly match: boolean }>,
  failures: Failures,
  shown: LineRange | undefined
): string => {
  const picked = shown === undefined ? all : all.filter((p) => p.line < shown.from_line || p.line > shown.to_line)
  if (picked.length === 0) return ""
  const matches = picked.filter((p) => p.match).length
  const around = picked.length - matches
  const above = picked.length < all.length ? ", besides those among the lines above" : ""
  const title = `[Lines that report errors or failures, by line number${above}: ${matches} of ${failures.total}` +
    (around > 0 ? `, and ${around} ${around === 1 ? "line" : "lines"} around them` : "") +
    (failures.notLookedAt !== undefined ? `; ${failures.notLookedAt}` : "") + "]"
  return [title, ...picked.map((p) => `${p.line}: ${p.text}`)].join("\n")
}

/**
 * The status view: as many of the newest `maxLines` lines as fit the budget
 * with the record (the oldest are dropped first), or, when not even one
 * whole line fits, the end of the newest line; then the failure lines, in
 * their share of the budget, and the record. The record with its failure
 * lines fits the budget too. When the record and the failure lines do not
 * fit together, the view goes without the lines (their count stays).
 * Fails only when the record alone does not fit.
 */
export const statusView = (input: StatusInput): Either.Either<StatusView, Envelope.EnvelopeTooSmall> => {
  const failures = input.failures
  const picked = failures === undefined ? [] : pickFailures(failures, Math.floor(input.budget.limit * FAILURE_SHARE))
  const withLines = failures !== undefined && picked.length > 0 ? statusViewWith(input, picked) : undefined
  if (withLines !== undefined && Either.isRight(withLines)) return withLines
  return statusViewWith(input, [])
}

const statusViewWith = (
  input: StatusInput,
  picked: ReadonlyArray<FailureLine & { readonly match: boolean }>
): Either.Either<StatusView, Envelope.EnvelopeTooSmall> => {
  const a = input.accounting
  const failures = input.failures
  // with a window of newest output kept, only the middle between it and the head is lost
  const gap = input.kept?.dropped
  const dropped = input.kept === undefined ? undefined : gap === undefined ? 0 : gap.to_byte - gap.from_byte
  const rows = picked.map((p) => ({ line: p.line, text: p.text }))
  const failureFields = failures === undefined || failures.total === 0
    ? {}
    : {
      ...(rows.length > 0 ? { failure_lines: rows } : {}),
      failure_lines_total: failures.total,
      ...(failures.searched !== undefined ? { failure_lines_searched: failures.searched } : {})
    }
  // while output comes in, what is written but not readable yet is pending, not lost
  const pending = input.settled === false && input.kept === undefined && a.captureError === undefined
    ? Math.max(0, a.emitted - a.retained - a.captureLimitLoss)
    : 0
  const record = (shown: ReadonlyArray<readonly [number, number]>): RetentionRecord => ({
    pid: input.pid,
    status: input.status.state,
    ...statusFields(input.status),
    ...(input.status.state === "unknown" && input.statusReason !== undefined ? { status_reason: input.statusReason } : {}),
    ...(input.status.state === "running" && input.runningMillis !== undefined ? { running_ms: Math.max(0, Math.round(input.runningMillis)) } : {}),
    emitted_bytes: a.emitted,
    retained_bytes: a.retained,
    shown_intervals: shown,
    capture_limit_loss_bytes: dropped ?? a.captureLimitLoss,
    not_retained_bytes: dropped ?? Math.max(0, a.emitted - a.retained - pending),
    ...(pending > 0 ? { pending_bytes: pending } : {}),
    ...(a.captureError !== undefined ? { capture_error: a.captureError } : {}),
    ...(input.tail === "withheld" ? { tail_status: WITHHELD } : {}),
    spool: input.spool,
    ...(input.expiresAt !== undefined ? { expires_at: input.expiresAt } : {}),
    ...(input.kept !== undefined ? { kept: input.kept } : {}),
    ...(input.filename !== undefined ? { filename: input.filename } : {}),
    ...(input.wait !== undefined ? { wait: input.wait } : {}),
    ...failureFields,
    cursor: input.cursor,
    next: input.next
  })
  const lastLine = input.tail === "withheld" ? undefined : input.tail.lastLine
  const view = (output: string, shown: ReadonlyArray<readonly [number, number]>): StatusView => {
    const retention = record(shown)
    // the lines shown, by number: counted back from the line the last byte is in
    const count = output === "" ? 0 : output.split("\n").length - (output.endsWith("\n") ? 1 : 0)
    const lines = lastLine !== undefined && count > 0 && lastLine - count + 1 >= 1
      ? { from_line: lastLine - count + 1, to_line: lastLine }
      : undefined
    const section = failures !== undefined && picked.length > 0 ? failureSection(picked, failures, lines) : ""
    return { _tag: "StatusView", output, retention, text: render(output, retention, section, lines) }
  }
  const fit = (max: number, build: (n: number) => StatusView) =>
    Envelope.fitCount(0, max, build, input.budget, measured)
  if (input.tail === "withheld" || input.tail.bytes.length === 0) return Either.map(fit(0, () => view("", [])), (f) => f.value)
  const { bytes, start } = input.tail
  const end = start + bytes.length
  // a window that starts inside the stream starts its first whole line after a line break;
  // one with no break at all is the end of one long line, shown as such below
  let first = 0
  let oneLine = false
  if (start > 0 && input.tail.lineStart !== true) {
    const nl = bytes.indexOf(10)
    if (nl === -1) oneLine = true
    else first = nl + 1
  }
  const starts: Array<number> = []
  if (!oneLine && first < bytes.length) starts.push(first)
  for (let nl = bytes.indexOf(10, first); nl !== -1 && nl + 1 < bytes.length; nl = bytes.indexOf(10, nl + 1)) starts.push(nl + 1)
  const lines = starts.slice(-input.maxLines)
  const byLines = fit(lines.length, (k) => {
    if (k === 0) return view("", [])
    const from = lines[lines.length - k]!
    return view(decode(bytes.subarray(from)), [[start + from, end]])
  })
  if (Either.isLeft(byLines) || byLines.right.count > 0) return Either.map(byLines, (f) => f.value)
  // not one whole line fits: show as much of the end of the newest line as does
  const lineStart = lines.length > 0 ? lines[lines.length - 1]! : first
  const suffix = fit(bytes.length - lineStart, (n) => {
    let from = bytes.length - n
    while (from < bytes.length && !Utf8.isByteBoundary(bytes, from)) from++
    return from === bytes.length ? view("", []) : view(decode(bytes.subarray(from)), [[start + from, end]])
  })
  return Either.map(suffix, (f) => f.value)
}

/** What a page is made from. */
export interface PageInput {
  readonly pid: number
  readonly status: JobStatus
  readonly accounting: Accounting
  /** The source offset of `bytes[0]`, a code-point boundary. */
  readonly offset: number
  /** Retained bytes from `offset`: at least `limit` of them, or all there are. */
  readonly bytes: Uint8Array
  /** Most source bytes the page may cover. */
  readonly limit: number
  readonly cursorAt: (offset: number) => string
  readonly budget: Envelope.Budget
  /**
   * The end of the range the page is in, when it is not the retained prefix
   * (the window of newest output), and where reading goes on past it (the
   * window's start, after the head), with why.
   */
  readonly segment?: { readonly end: number; readonly then?: { readonly offset: number; readonly note: string } | undefined } | undefined
  /** The words of the marker the page is delivered with, which the budget counts; the tool's by default. */
  readonly hints?: Hints | undefined
}

/**
 * Where a page of `bytes` cut at `cut` ends so that no escape sequence is
 * left open at its end: before the sequence's escape (the last ESC byte,
 * which in UTF-8 is never part of another character), or at `cut` when none
 * is open or the sequence starts the page.
 */
const beforeOpenSequence = (bytes: Uint8Array, cut: number): number => {
  const part = bytes.subarray(0, cut)
  const text = decode(part)
  const open = Terminal.openSequenceAt(text)
  if (open === text.length) return cut
  const at = part.lastIndexOf(0x1b)
  return at > 0 ? at : cut
}

/**
 * The page at `offset`: the most whole code points, up to `limit` bytes,
 * whose result, as delivered (`delivered`), fits the budget. A page that has bytes to show
 * advances by at least one code point, or fails explicitly; one that more
 * output follows ends before an escape sequence it would cut.
 */
export const page = (input: PageInput): Either.Either<Page, Envelope.EnvelopeTooSmall> => {
  const { bytes, offset } = input
  const a = input.accounting
  const running = input.status.state === "running"
  const end = input.segment?.end ?? a.retained
  const then = input.segment?.then
  const build = (n: number): Page => {
    const whole = Utf8.byteBoundary(bytes, n)
    // a page that more output follows ends before an escape sequence it would cut, so the next starts with it whole
    const cut = offset + whole < end || running ? beforeOpenSequence(bytes, whole) : whole
    const here = offset + cut
    // past the end of the head, reading goes on at the window of newest output
    const jump = here >= end && then !== undefined
    const next = jump ? then.offset : here
    const truncated = here < end || jump
    return {
      _tag: "Page",
      pid: input.pid,
      status: input.status.state,
      ...statusFields(input.status),
      offset,
      next_offset: next,
      offset_unit: "byte",
      shown_bytes: cut,
      content: decode(bytes.subarray(0, cut)),
      retained_bytes: a.retained,
      emitted_bytes: a.emitted,
      truncated,
      ...(truncated || running ? { next_cursor: input.cursorAt(next) } : {}),
      ...(jump ? { note: then.note } : {}),
      ...(!truncated && running ? { note: "the job is still running: poll again later with this page's cursor for what it writes next" } : {}),
      ...(!truncated && !running && input.segment === undefined && a.retained < a.emitted
        ? { note: `this is the end of the retained output; ${a.emitted - a.retained} emitted bytes were not retained` }
        : {})
    }
  }
  const max = Math.min(input.limit, bytes.length)
  let min = max === 0 ? 0 : 1
  while (min < max && !Utf8.isByteBoundary(bytes, min)) min++
  return Either.map(Envelope.fitCount(min, max, build, input.budget, (p) => measured(p, input.hints)), (f) => f.value)
}
