/**
 * The evidence profile: a tool's raw output is scrubbed and kept as one
 * immutable body with a durable manifest, the model gets a preview (a
 * labelled head and tail) and an opaque cursor, and `getToolOutput` pages
 * the body back from the cursor in code points, each page fitted whole to
 * the delivery budget. Retrieval reads the kept evidence; it never re-runs
 * anything. `grep` searches the whole body a cursor names, on the same
 * bounded engine as `grepSpill`. Bodies live in the spill directory (the evidence id is the file
 * name, so `readSpill` reads them too); their limits are this profile's.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import type * as Access from "./Access.js"
import { Bodies, type OpenError, type Reader } from "./Body.js"
import * as Cursor from "./Cursor.js"
import * as Delivery from "./Delivery.js"
import * as Envelope from "./Envelope.js"
import { concat, copyOf } from "./internal/bytes.js"
import * as Split from "./internal/split.js"
import { InvalidRequest, type QuotaExceeded, StoreFailed } from "./Errors.js"
import * as Grep from "./Grep.js"
import * as Read from "./internal/read.js"
import type { Manifest } from "./Manifests.js"
import * as Salience from "./Salience.js"
import * as SearchPage from "./SearchPage.js"
import * as Terminal from "./Terminal.js"
import type { GrepResult } from "./Spill.js"
import * as Utf8 from "./Utf8.js"

/** The tool name cursors of this profile carry. */
export const TOOL = "get_tool_output"

/** Limits of the evidence profile; every figure defaults to the source design's. */
export interface Options {
  /** Most bytes kept of one result; the rest is left out with a note. 4 MiB by default. */
  readonly maxResultBytes?: number
  /** The delivery budget for one whole serialized result, in characters. 12,000 by default, at least `MIN_BUDGET_CHARS` (2,000). */
  readonly budgetChars?: number
  /** Code points between checkpoints. 65,536 by default. */
  readonly checkpointEvery?: number
  /** A search of kept output stops after this long and says where. 10 seconds by default. */
  readonly grepDeadlineMs?: number
}

const defaults = {
  maxResultBytes: 4 * 1024 * 1024,
  budgetChars: 12_000,
  checkpointEvery: 65_536,
  grepDeadlineMs: 10_000
}

/**
 * The smallest delivery budget the profile accepts, in characters: a first
 * result's facts, cursor, instructions and failure lines, or a page's facts
 * and marker with its cursor, take most of 1,300 characters before any
 * content, and the rest leaves room for the tool's name and status.
 */
export const MIN_BUDGET_CHARS = 2_000

/** The budget, when the profile can deliver a page within it; a typed refusal naming the minimum otherwise. */
export const checkBudget = (budgetChars: number): Effect.Effect<number, InvalidRequest> =>
  Number.isSafeInteger(budgetChars) && budgetChars >= MIN_BUDGET_CHARS
    ? Effect.succeed(budgetChars)
    : Effect.fail(
      new InvalidRequest({
        argument: "budgetChars",
        reason: `must be a whole number of at least ${MIN_BUDGET_CHARS} characters, which a result's facts, marker and cursor need beside any content; got ${String(budgetChars).slice(0, 40)}`
      })
    )

/** Most matching lines one search of kept output may ask for. */
export const MAX_GREP_RESULTS = 10_000

/** Search options for kept output. */
export interface GrepOptions {
  /** Most matching lines; 100 by default, 1 to 10,000. */
  readonly maxResults?: number | undefined
  readonly ignoreCase?: boolean | undefined
  /** The first line to search, 1-based; 1 by default. */
  readonly fromLine?: number | undefined
}

/** What a tool produced, for retention, and whom it belongs to. */
export interface Output {
  readonly owner: string
  /** The channel (conversation) it came from; "default" when absent. */
  readonly channel?: string | undefined
  readonly tool: string
  /** How the operation ended, kept apart from the body: "ok", "failed", "exit 2"... */
  readonly status: string
  /** The raw result, before any formatting or cut. */
  readonly body: Uint8Array | string
}

/** The first result a model gets for kept output. */
export interface First {
  readonly tool: string
  readonly status: string
  /** The whole output when it fits the budget; otherwise absent, and `head`/`tail` are set. */
  readonly content?: string
  readonly head?: string
  /** Context only: reading on with `next_cursor` starts right after the head. */
  readonly tail?: string
  readonly total_bytes: number
  readonly total_code_points: number
  /** Present when the output was larger than the per-result quota and only its start was kept. */
  readonly kept_in_part?: string
  /** Lines that report an error or a failure, wherever they are (the first few), with their line numbers. */
  readonly failure_lines?: ReadonlyArray<{ readonly line: number; readonly text: string }>
  /** How many lines report an error or a failure in all. */
  readonly failure_lines_total?: number
  readonly offset_unit: "code_point"
  readonly next_cursor?: string
  readonly truncated: boolean
  readonly expires_at: string
  readonly instructions?: string
}

/** A page of kept output. */
export interface Page {
  readonly tool: string
  readonly status: string
  readonly content: string
  readonly offset: number
  readonly offset_unit: "code_point"
  readonly total_bytes: number
  readonly total_code_points: number
  readonly next_cursor?: string
  readonly truncated: boolean
  readonly expires_at: string
}

/** A page of a kept search snapshot: whole matches in their original ranking, or a fragment of one larger than a page. */
export interface SearchResults {
  readonly tool: string
  readonly status: string
  readonly matches: SearchPage.Page["matches"]
  /** `showing X of Y returned matches; Z deferred` */
  readonly summary: string
  readonly next_cursor?: string
  readonly truncated: boolean
  readonly expires_at: string
}

/** What a search tool returned, for retention as a ranked snapshot. */
export interface SearchOutput {
  readonly owner: string
  readonly channel?: string | undefined
  readonly tool: string
  readonly status: string
  readonly matches: ReadonlyArray<SearchPage.Match>
}

// A search position (match, code point inside it) travels in one cursor offset.
const SEARCH_SPAN = 2 ** 26

/** Everything retention can fail with. */
export type RetainError = StoreFailed | QuotaExceeded | InvalidRequest | Envelope.EnvelopeTooSmall

/** Everything a read can fail with. */
export type ReadError = Cursor.CursorError | OpenError | Envelope.EnvelopeTooSmall

const iso = (ms: number | null) => (ms === null ? "never" : new Date(ms).toISOString())

const instructions = "Call get_tool_output with cursor=next_cursor for the rest; each page ends with the call for the next, and gives its cursor as cursor, until truncated is false."

const Snapshot = Schema.parseJson(Schema.Array(Schema.Struct({
  title: Schema.optionalWith(Schema.String, { exact: true }),
  url: Schema.optionalWith(Schema.String, { exact: true }),
  text: Schema.String
})))

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** What a program reads of a page of kept output; the page itself is the delivered text. */
export const PageFacts = Schema.Struct({
  /** True when more of the output follows this page. */
  truncated: Schema.Boolean,
  /** The cursor of the next page, when one follows: pass it to get_tool_output as `cursor`. */
  cursor: optional(Schema.String),
  /** The first code point of the output this page shows (0-based). */
  offset: Schema.Number,
  /** The first code point after this page; the next page starts there. */
  next_offset: Schema.Number,
  offset_unit: Schema.Literal("code_point"),
  /** Code points at the start of the text that are the output; what follows them is the page's marker. */
  content_chars: Schema.Number,
  total_bytes: Schema.Number,
  total_code_points: Schema.Number,
  /** How the tool that produced the output ended, such as `exit 0`. */
  status: Schema.String,
  expires_at: Schema.String
})

/** What a program reads of a page of kept output. */
export type PageFacts = typeof PageFacts.Type

/** What a program reads of a page of a kept search; the matches are the delivered text. */
export const SearchFacts = Schema.Struct({
  truncated: Schema.Boolean,
  /** The cursor of the next page, when one follows. */
  cursor: optional(Schema.String),
  /** Matches (or fragments of one) this page shows. */
  matches: Schema.Number,
  /** `showing X of Y returned matches; Z deferred` */
  summary: Schema.String,
  status: Schema.String,
  expires_at: Schema.String
})

/** What a program reads of a page of a kept search. */
export type SearchFacts = typeof SearchFacts.Type

/** What a program reads of any get_tool_output result. */
export const Facts = Schema.Union(PageFacts, SearchFacts)

/** What a program reads of any get_tool_output result. */
export type Facts = typeof Facts.Type

/** The call that reads the page at a cursor. */
const nextCall = (cursor: string) => Delivery.call(TOOL, [["cursor", cursor]])

/** The marker after a page that is not the whole output: what it shows, and how to read on. */
const pageMarker = (page: Page, end: number): string | undefined => {
  if (page.offset === 0 && !page.truncated) return undefined
  const shown = `Showing characters ${page.offset + 1}-${end} of ${page.total_code_points}`
  if (page.next_cursor === undefined) return `[${shown}: the end of the output]`
  const inLine = Delivery.endsMidLine(page.content) ? "; the page ends inside a line, which the next page goes on with" : ""
  return `[${shown}${inLine}. Next: ${nextCall(page.next_cursor)}]`
}

/** A page as delivered: its content and marker as the text a model reads, the rest as facts. */
export const delivered = (page: Page | SearchResults): Delivery.Delivered<Facts> => {
  if (!("content" in page)) {
    const text = [...page.matches.map((m) => [m.title, m.url, m.text].filter((x) => x !== undefined).join("\n")), page.summary].join("\n\n")
    const more = page.next_cursor !== undefined ? `\n[Next: ${nextCall(page.next_cursor)}]` : ""
    return {
      text: text + more,
      facts: {
        truncated: page.truncated,
        ...(page.next_cursor !== undefined ? { cursor: page.next_cursor } : {}),
        matches: page.matches.length,
        summary: page.summary,
        status: page.status,
        expires_at: page.expires_at
      }
    }
  }
  const chars = Delivery.contentChars(page.content)
  const end = page.offset + chars
  return {
    text: Delivery.withMarker(page.content, pageMarker(page, end)),
    facts: {
      truncated: page.truncated,
      ...(page.next_cursor !== undefined ? { cursor: page.next_cursor } : {}),
      offset: page.offset,
      next_offset: end,
      offset_unit: page.offset_unit,
      content_chars: chars,
      total_bytes: page.total_bytes,
      total_code_points: page.total_code_points,
      status: page.status,
      expires_at: page.expires_at
    }
  }
}

/** What the budget counts of a page: the page as delivered. */
const measured = (page: Page | SearchResults) => Delivery.serialize(delivered(page))

/**
 * The first result a model gets for a kept body whose masked text is
 * `text`: all of it when it fits the budget, otherwise a labelled head and
 * tail, the lines that report failures, and a cursor (made by `cursor` from
 * the code-point offset after the head). What `retain` returns; a view for
 * people re-derives it from the body with the same budget.
 */
export const first = (
  m: Manifest,
  text: string,
  options: { readonly budgetChars?: number | undefined; readonly cursor: (offset: number) => string }
): Effect.Effect<First, Envelope.EnvelopeTooSmall> =>
  Effect.gen(function*() {
    const budget = { limit: options.budgetChars ?? defaults.budgetChars }
    const base = {
      tool: m.tool,
      status: m.status,
      total_bytes: m.bytes,
      total_code_points: m.codePoints,
      ...(m.sourceBytes > m.bytes
        ? { kept_in_part: `only the first ${m.bytes} of ${m.sourceBytes} bytes were kept (the per-result limit); the rest is not retained` }
        : {}),
      offset_unit: "code_point" as const,
      expires_at: iso(m.expiresAt)
    }
    const whole: First = { ...base, content: text, truncated: false }
    if (Envelope.sizeOf(JSON.stringify(whole)) <= budget.limit) return whole
    // lines that explain a failure, wherever they are, within a fifth of the budget
    const found = Salience.find(text)
    // the explaining lines first, then what reports point back to, then the reports; shown in line order
    const failure = Salience.pick(found.lines, {
      limit: budget.limit / 5,
      base: 2,
      cost: (row) => Envelope.sizeOf(JSON.stringify(row)),
      separator: 1
    }).map(({ line, text }) => ({ line, text }))
    const withFailures = failure.length > 0
      ? { ...base, failure_lines: failure, failure_lines_total: found.total }
      : base
    // the head gets three fifths of the budget, the tail what is left; the cursor continues after the head
    const cursors = new Map<number, string>()
    const cursor = (n: number) => {
      if (!cursors.has(n)) cursors.set(n, options.cursor(n))
      return cursors.get(n)!
    }
    const shaped = (head: string, n: number, tail: string): First => ({
      ...withFailures,
      head,
      tail,
      next_cursor: cursor(n),
      truncated: true,
      instructions
    })
    // every code point costs at least one unit of the envelope: the head has no more than its share, the tail the budget
    const share = Math.floor((budget.limit * 3) / 5)
    const start = Utf8.takeCodePoints(text, share)
    const starts = codePointEnds(start)
    const end = [...Utf8.takeLastCodePoints(text, budget.limit)]
    const build = (h: number, t: number) => shaped(start.slice(0, starts[h]), h, end.slice(end.length - t).join(""))
    const size = (h: number, t: number) => Envelope.sizeOf(JSON.stringify(build(h, t)))
    // a head that does not advance is never offered: at least one code point of a text that has any
    const least = text === "" ? 0 : 1
    if (size(least, 0) > share) {
      return yield* new Envelope.EnvelopeTooSmall({ limit: share, needed: size(least, 0), measure: "code-points" })
    }
    const split = Split.ends({
      total: Utf8.codePointLength(text),
      headMax: starts.length - 1,
      tailMax: end.length,
      first: "head",
      fitsShare: (h) => size(h, 0) <= share,
      fits: (h, t) => size(h, t) <= budget.limit,
      grow: false
    })
    return build(split.head, split.tail)
  })

/** The offsets in `text` where each code point ends, after a 0 for the empty prefix. */
const codePointEnds = (text: string): Array<number> => {
  const offsets = [0]
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i)
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1
    offsets.push(i)
  }
  return offsets
}

/** The evidence service. */
export interface Service {
  /** Scrubs, keeps and indexes an output, then returns its first result. */
  readonly retain: (output: Output) => Effect.Effect<{ readonly evidence: string; readonly first: First }, RetainError>
  /**
   * Keeps a search tool's matches as a ranked snapshot and returns their
   * first page; later pages come from the snapshot, never from searching again.
   */
  readonly retainSearch: (output: SearchOutput) => Effect.Effect<{ readonly evidence: string; readonly first: SearchResults }, RetainError>
  /** The page at a cursor, for a caller: `Access` is asked on every read, whoever holds the cursor. */
  readonly getToolOutput: (cursor: string, caller: Access.Caller) => Effect.Effect<Page | SearchResults, ReadError>
  /**
   * Searches the whole kept output a cursor pages (any page's cursor names
   * it) for lines matching a pattern, as `grepSpill` searches a saved file:
   * on the pattern engine, ending at the deadline and saying where. `Access`
   * is asked, whoever holds the cursor; a search snapshot is refused.
   */
  readonly grep: (
    cursor: string,
    pattern: string,
    caller: Access.Caller,
    options?: GrepOptions
  ) => Effect.Effect<GrepResult, ReadError | Grep.GrepPatternError | InvalidRequest>
  /** The cursor of a kept body's first page, for a tool that keeps output its own way (`run_command`). */
  readonly cursorFor: (id: string, offset?: number) => string
  /**
   * The offset, as cursors count it (code points), of a byte of a kept body
   * (a code point boundary, such as the start of a line), for a caller
   * `Access` lets read it: with `cursorFor`, a cursor into the middle of a line.
   */
  readonly offsetAtByte: (id: string, byte: number, caller: Access.Caller) => Effect.Effect<number, OpenError>
  /** Removes expired kept output; returns how many bodies were removed. */
  readonly sweep: Effect.Effect<number, StoreFailed>
}

/** The evidence profile. */
export class Evidence extends Context.Tag("@spillway/core/Evidence")<Evidence, Service>() {}


/** Up to a budget's worth of the body from a code-point offset, found through the nearest checkpoint. */
const readFrom = (body: Reader, offset: number, limit: number): Effect.Effect<string, StoreFailed> =>
  Effect.gen(function*() {
    const m = body.manifest
    const at = Math.min(offset, m.codePoints)
    let k = m.checkpoints.length - 1
    while (k > 0 && m.checkpoints[k]!.codePoint > at) k--
    const cp = m.checkpoints[k] ?? { codePoint: 0, byte: 0 }
    const skip = at - cp.codePoint
    const want = (skip + limit) * 4
    const bytes = yield* body.read(cp.byte, Math.max(0, Math.min(want, m.bytes - cp.byte)))
    // never decode a sequence the read cut short
    const usable = cp.byte + bytes.length < m.bytes ? bytes.subarray(0, Utf8.byteBoundary(bytes, bytes.length)) : bytes
    const text = Utf8.decodeLossy(usable)
    const start = Utf8.takeCodePoints(text, skip).length
    return Utf8.takeCodePoints(text.slice(start), limit)
  })


/** The code point a byte of a body starts, counted as pages count them: from the nearest checkpoint, decoded. */
const codePointAt = (body: Reader, byte: number): Effect.Effect<number, StoreFailed> =>
  Effect.gen(function*() {
    const checkpoints = body.manifest.checkpoints
    const at = Math.max(0, Math.min(byte, body.size))
    let k = checkpoints.length - 1
    while (k > 0 && checkpoints[k]!.byte > at) k--
    const cp = checkpoints[k] ?? { codePoint: 0, byte: 0 }
    const parts: Array<Uint8Array> = []
    for (let got = cp.byte; got < at;) {
      const chunk = yield* body.read(got, at - got)
      if (chunk.length === 0) break
      parts.push(chunk)
      got += chunk.length
    }
    return cp.codePoint + Utf8.codePointLength(Utf8.decodeLossy(concat(parts.length === 0 ? [new Uint8Array(0)] : parts)))
  })

/** A page of a search's kept results, with a cursor to the next when there is one. */
const searchResults = (codec: Cursor.Codec, m: Manifest, page: SearchPage.Page): SearchResults => ({
  tool: m.tool,
  status: m.status,
  matches: page.matches,
  summary: page.summary,
  ...(page.next !== undefined ? { next_cursor: codec.encode(m.id, page.next.match * SEARCH_SPAN + page.next.offset) } : {}),
  truncated: page.truncated,
  expires_at: iso(m.expiresAt)
})

/** A page of kept output: `part`, `n` code points of it from `offset`, with a cursor to the rest when there is more. */
const outputPage = (codec: Cursor.Codec, m: Manifest, offset: number, part: string, n: number): Page => {
  const end = offset + n
  const total = m.codePoints
  return {
    tool: m.tool,
    status: m.status,
    content: part,
    offset,
    offset_unit: "code_point",
    total_bytes: m.bytes,
    total_code_points: total,
    ...(end < total ? { next_cursor: codec.encode(m.id, end) } : {}),
    truncated: end < total,
    expires_at: iso(m.expiresAt)
  }
}

/** Searches a kept output's lines from `fromLine`, which must be a whole number from 1 within the output. */
const grepFile = (
  file: Read.SpillFile,
  built: Read.IndexCache,
  pattern: string,
  matcher: Grep.Matcher,
  patterns: Grep.PatternEngine["Type"],
  { deadlineMs, fromLine, maxResults }: { readonly fromLine: number; readonly maxResults: number; readonly deadlineMs: number }
) =>
  Effect.gen(function*() {
    if (!Number.isSafeInteger(fromLine) || fromLine < 1) {
      return yield* new InvalidRequest({ argument: "offset", reason: `must be a whole number from 1, got ${String(fromLine).slice(0, 40)}` })
    }
    const index = yield* Read.indexOf(file, built)
    if (fromLine > Math.max(index.lines, 1)) {
      return yield* new InvalidRequest({ argument: "offset", reason: `line ${fromLine} is past the end: the output has ${index.lines} lines` })
    }
    const scan = yield* Read.grep(file, index, matcher, patterns, {
      from: { byte: yield* Read.locate(file, index, fromLine), line: fromLine },
      maxResults,
      maxLineChars: 65_536,
      maxMatchChars: 2_000,
      deadlineMs
    })
    return Read.grepResult(file.filename, pattern, scan, index)
  })

/**
 * Builds the evidence profile over the body store and a cursor key; a
 * budget below `MIN_BUDGET_CHARS` is refused here, before anything is kept.
 */
export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const o = { ...defaults, ...options }
    yield* checkBudget(o.budgetChars)
    const bodies = yield* Bodies
    const { key } = yield* Cursor.CursorKey
    const codec = Cursor.codec(key, TOOL, "code_point")
    const budget = { limit: o.budgetChars }

    /** Scrubs and keeps a body under a fresh name; its manifest and its kept text. */
    const keep = (owner: string, channel: string, tool: string, status: string, raw: Uint8Array, search: boolean) =>
      Effect.scoped(Effect.gen(function*() {
        const parts: Array<Uint8Array> = []
        const writer = yield* bodies.create({
          profile: "evidence",
          owner,
          channel,
          tool,
          status,
          origin: search ? { _tag: "Search" } : { _tag: "Tool" },
          extension: search ? ".json" : ".log",
          maxBytes: o.maxResultBytes,
          cut: "code-point",
          // the size is known: its room is taken before anything is written, or refused
          reserve: Math.min(raw.length, o.maxResultBytes),
          checkpointEvery: o.checkpointEvery,
          // lent for the call only: the kept text is a copy
          onMasked: (bytes) => void parts.push(copyOf(bytes))
        })
        yield* writer.write(raw)
        const manifest = yield* writer.seal()
        const masked = Utf8.decodeLossy(concat(parts.length === 0 ? [new Uint8Array(0)] : parts).subarray(0, manifest.bytes))
        return { manifest, text: masked }
      }))

    const retain: Service["retain"] = (output) =>
      Effect.gen(function*() {
        const raw = typeof output.body === "string" ? Utf8.encode(output.body) : output.body
        const { manifest, text } = yield* keep(output.owner, output.channel ?? "default", output.tool, output.status, raw, false)
        const first = yield* firstResult(manifest, text)
        return { evidence: manifest.id, first }
      })

    const retainSearch: Service["retainSearch"] = (output) =>
      Effect.gen(function*() {
        const raw = Utf8.encode(JSON.stringify(output.matches))
        if (raw.length > o.maxResultBytes) {
          return yield* new InvalidRequest({
            argument: "matches",
            reason: `the snapshot is ${raw.length} bytes, over the ${o.maxResultBytes}-byte limit for one kept result; keep fewer or shorter matches`
          })
        }
        const { manifest, text } = yield* keep(output.owner, output.channel ?? "default", output.tool, output.status, raw, true)
        const snapshot = yield* parseSnapshot(text)
        const first = yield* searchPage(manifest, snapshot, { match: 0, offset: 0 })
        return { evidence: manifest.id, first }
      })

    const parseSnapshot = (text: string) =>
      Schema.decodeUnknown(Snapshot)(text).pipe(
        Effect.mapError(() => new StoreFailed({ operation: "read the kept search snapshot", reason: "it is not a whole snapshot" }))
      )

    const searchPage = (m: Manifest, snapshot: ReadonlyArray<SearchPage.Match>, from: SearchPage.Position) => {
      const results = (page: SearchPage.Page) => searchResults(codec, m, page)
      // the envelope fitted is the page as delivered
      return Effect.map(SearchPage.page(snapshot, from, (page) => Delivery.wire(delivered(results(page))), budget), (paged) => results(paged.page))
    }

    const firstResult = (m: Manifest, text: string) => first(m, text, { budgetChars: budget.limit, cursor: (n) => codec.encode(m.id, n) })

    const getToolOutput: Service["getToolOutput"] = (cursor, caller) =>
      Effect.scoped(Effect.gen(function*() {
        const position = yield* codec.decode(cursor)
        const body = yield* bodies.open(caller, position.evidence)
        const m = body.manifest
        if (m.origin._tag === "Search") {
          const whole = yield* readFrom(body, 0, m.codePoints)
          const snapshot = yield* parseSnapshot(whole)
          const from = { match: Math.floor(position.offset / SEARCH_SPAN), offset: position.offset % SEARCH_SPAN }
          return yield* searchPage(m, snapshot, from)
        }
        const text = yield* readFrom(body, position.offset, budget.limit)
        const page = (part: string, n: number) => {
          // a page that is not the last ends before an escape sequence it would cut, so the next starts with it whole
          const open = position.offset + n < m.codePoints ? Terminal.openSequenceAt(part) : part.length
          if (open === 0 || open === part.length) return outputPage(codec, m, position.offset, part, n)
          const kept = part.slice(0, open)
          return outputPage(codec, m, position.offset, kept, Utf8.codePointLength(kept))
        }
        return (yield* Envelope.fitText(text, page, budget, measured)).value
      }))

    const built: Read.IndexCache = new Map()
    const grep: Service["grep"] = (cursor, pattern, caller, grepOptions = {}) =>
      Effect.scoped(Effect.gen(function*() {
        const maxResults = grepOptions.maxResults ?? 100
        if (!Number.isSafeInteger(maxResults) || maxResults < 1 || maxResults > MAX_GREP_RESULTS) {
          return yield* new InvalidRequest({ argument: "maxResults", reason: `must be a whole number from 1 to ${MAX_GREP_RESULTS}, got ${String(maxResults).slice(0, 40)}` })
        }
        const matcher = yield* Grep.compile(pattern, { ignoreCase: grepOptions.ignoreCase })
        const patterns = yield* Grep.engine
        yield* patterns.prepare(matcher)
        const position = yield* codec.decode(cursor)
        const body = yield* bodies.open(caller, position.evidence)
        if (body.manifest.origin._tag === "Search") {
          return yield* new InvalidRequest({
            argument: "cursor",
            reason: "this cursor pages a search's kept results, not a tool's output; read them with get_tool_output"
          })
        }
        const file: Read.SpillFile = { filename: position.evidence, size: body.size, read: body.read, index: body.lineIndex }
        return yield* grepFile(file, built, pattern, matcher, patterns, {
          fromLine: grepOptions.fromLine ?? 1,
          maxResults,
          deadlineMs: o.grepDeadlineMs
        })
      }))

    return Evidence.of({
      retain,
      retainSearch,
      getToolOutput,
      grep,
      cursorFor: (id, offset = 0) => codec.encode(id, offset),
      offsetAtByte: (id, byte, caller) =>
        Effect.scoped(Effect.flatMap(bodies.open(caller, id), (body) => codePointAt(body, byte))),
      sweep: bodies.sweep
    })
  })

/** The evidence profile as a layer; building it fails with `InvalidRequest` for a budget below `MIN_BUDGET_CHARS`. */
export const layer = (options: Options = {}): Layer.Layer<Evidence, InvalidRequest, Bodies | Cursor.CursorKey> =>
  Layer.effect(Evidence, make(options))

/** Keeps a tool's output and returns the first result for the model. */
export const retain = (output: Output) => Effect.flatMap(Evidence, (e) => e.retain(output))

/** Keeps a search tool's matches as a ranked snapshot and returns their first page. */
export const retainSearch = (output: SearchOutput) => Effect.flatMap(Evidence, (e) => e.retainSearch(output))

/** Reads the page a cursor points at; the caller is checked on every call. */
export const getToolOutput = (cursor: string, caller: Access.Caller) => Effect.flatMap(Evidence, (e) => e.getToolOutput(cursor, caller))

/** Searches the kept output a cursor pages for lines matching a pattern; the caller is checked. */
export const grep = (cursor: string, pattern: string, caller: Access.Caller, options?: GrepOptions) =>
  Effect.flatMap(Evidence, (e) => e.grep(cursor, pattern, caller, options))

/** Removes expired kept output. */
export const sweep = Effect.flatMap(Evidence, (e) => e.sweep)
