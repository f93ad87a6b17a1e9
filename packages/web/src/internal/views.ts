/**
 * What the pages show, read through the read-only grant and the spill
 * read capability: lists of what the person may see, windows of lines,
 * searches, a job's newest lines and salient lines, the follow stream of a
 * growing body, and the preview a model got, re-derived from the body.
 * Every body is reached by its bare name and opened for the person through
 * `Access`, acting on the body's own channel unless the view is bound to
 * one.
 *
 * @internal
 */
import { Access, Body, Cursor, Errors, Evidence, Grep, type Manifests, Preview, Salience, Spill, SpillName, Utf8 } from "@spillway/core"
import { Clock, Duration, Effect, Option, Stream } from "effect"
import { BodyRead } from "../BodyRead.js"
import * as Ansi from "./ansi.js"

/** How a host's tools told a model to read on and to search, by tool name. */
export interface Hints {
  readonly read: Preview.ReadHint
  readonly grep: Preview.GrepHint
}

/** The view's settings, every default filled in. */
export interface Config {
  readonly owner: string
  readonly channel: string | undefined
  readonly previewChars: number
  readonly hints: Readonly<Record<string, Hints>>
  readonly followPollMillis: number
  readonly followMaxMillis: number
  readonly maxSearchResults: number
  readonly windowLines: number
  readonly maxApiLines: number
  readonly jobLines: number
  readonly salienceScanBytes: number
  /** Items on one page of a list. */
  readonly listPageSize: number
  /** Most manifests one page of a list looks at, passing over those the person may not list. */
  readonly maxListLooked: number
  /** Time one request's search and highlighting may take, together. */
  readonly searchMillis: number
  /** Bytes of a body one request's search reads before it stops and says where. */
  readonly searchScanBytes: number
  /** Most lines one reply highlights; lines past them are shown unmarked, and the reply says so. */
  readonly maxHighlighted: number
  /** Characters of a line highlighted; the rest of a longer line is shown unmarked. */
  readonly maxHighlightChars: number
  /** Characters of matching lines one reply holds; the matches after them are on the next page. */
  readonly maxReplyChars: number
}

/** What a page may show of a manifest: no location, no checkpoint, no cursor. */
export interface Summary {
  readonly id: string
  readonly profile: string
  readonly tool: string
  readonly status: string
  readonly state: "writing" | "complete"
  readonly owner: string
  readonly channel: string
  readonly createdAt: number
  readonly expiresAt: number | null
  readonly bytes: number
  readonly lines: number
  readonly sourceBytes: number
  readonly kept: "whole" | "head"
  readonly captureError: string | null
  /** The command or the tool's arguments, as recorded (secrets masked); null when none was. */
  readonly command: string | null
  readonly job?: {
    readonly pid: number
    readonly command: string
    readonly exitCode: number | null
    readonly signal: string | null
    readonly exitedAt: number | null
  } | undefined
}

// An absolute path in a message (a failed write names its file): a page never shows where the store is.
const PATH = /(?:[A-Za-z]:)?(?:[\\/][^\s'"`,;:()[\]{}]+){2,}/g

/** A store's message with any path in it left out. */
export const withoutPaths = (text: string): string => text.replace(PATH, "[path]")

/** The fields of a manifest a page may show. */
export const summarize = (m: Manifests.Manifest): Summary => ({
  id: m.id,
  profile: m.profile,
  tool: m.tool,
  status: m.status,
  state: m.state,
  owner: m.owner,
  channel: m.channel,
  createdAt: m.createdAt,
  expiresAt: m.expiresAt,
  bytes: m.bytes,
  lines: m.lines,
  sourceBytes: m.sourceBytes,
  kept: m.kept,
  captureError: m.captureError === null ? null : withoutPaths(m.captureError),
  command: m.origin._tag === "Job" ? m.origin.command : m.origin._tag === "Tool" ? m.origin.command ?? null : null,
  ...(m.origin._tag === "Job"
    ? {
      job: {
        pid: m.origin.pid,
        command: m.origin.command,
        exitCode: m.origin.exitCode,
        signal: m.origin.signal,
        exitedAt: m.origin.exitedAt
      }
    }
    : {})
})

/** Whom the view acts as for a body: the person, on the body's channel unless the view is bound to one. */
const callerFor = (c: Config, m: Manifests.Manifest): Access.Caller => ({ owner: c.owner, channel: c.channel ?? m.channel })

/** The manifest of a body a page names, after its name passes the allowlist. */
const manifestOf = (name: string) =>
  Effect.gen(function*() {
    const problem = SpillName.checkFilename(name)
    if (problem !== undefined) {
      return yield* new Errors.InvalidRequest({ argument: "name", reason: `refused ${Errors.quote(name)}: ${problem}` })
    }
    const reads = yield* BodyRead
    const m = yield* reads.manifest(name)
    if (m === undefined) return yield* new Errors.NotFound({ resource: "output", id: name })
    return m
  })

/** Every body of the profiles that the person may list, newest first. */
export const list = (c: Config, profiles: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const reads = yield* BodyRead
    const out: Array<Summary> = []
    for (const profile of profiles) {
      for (const m of yield* reads.manifests(profile)) {
        if (m.owner !== c.owner || SpillName.checkFilename(m.id) !== undefined) continue
        const allowed = yield* Effect.either(reads.authorize(callerFor(c, m), Body.resourceOf(m), "list"))
        if (allowed._tag === "Right") out.push(summarize(m))
      }
    }
    // running jobs first, then newest first
    return out.sort((a, b) => (a.state === b.state ? b.createdAt - a.createdAt : a.state === "writing" ? -1 : 1))
  })

/** Where a page of a list starts: after the item with this creation time and name. */
export interface ListKey {
  readonly createdAt: number
  readonly id: string
}

/** One page of a list, and where the next one starts when there is one. */
export interface ListPage {
  readonly items: ReadonlyArray<Summary>
  readonly next: ListKey | undefined
  readonly filter: string
}

/**
 * One page of the bodies of some profiles that the person may list, newest
 * first, optionally only those whose name, tool, status or command contains
 * `filter`. Each profile is read in pages of the store's own (newest first,
 * from the key), so the first page costs the same whatever the list's
 * length; the profiles are merged, and items the person may not list are
 * passed over, looking at no more than `maxLooked` manifests in all.
 */
export const listPage = (c: Config, profiles: ReadonlyArray<string>, options: { readonly after?: ListKey | undefined; readonly filter: string; readonly size: number }) =>
  Effect.gen(function*() {
    const reads = yield* BodyRead
    const batch = options.size + 1
    const feeds = profiles.map((profile) => ({ profile, before: options.after, buffer: [] as Array<Manifests.Manifest>, done: false }))
    const out: Array<Summary> = []
    let looked = 0
    let last: Manifests.Manifest | undefined
    while (out.length <= options.size && looked < c.maxListLooked) {
      for (const f of feeds) {
        if (f.buffer.length > 0 || f.done) continue
        const got = yield* reads.manifests(f.profile, { owner: c.owner, before: f.before, text: options.filter === "" ? undefined : options.filter, limit: batch })
        f.buffer = [...got]
        if (got.length < batch) f.done = true
        const tail = got[got.length - 1]
        if (tail !== undefined) f.before = { createdAt: tail.createdAt, id: tail.id }
      }
      // the newest head of the feeds
      let pick: typeof feeds[number] | undefined
      for (const f of feeds) {
        const h = f.buffer[0]
        if (h === undefined) continue
        const p = pick?.buffer[0]
        if (p === undefined || h.createdAt > p.createdAt || (h.createdAt === p.createdAt && h.id > p.id)) pick = f
      }
      if (pick === undefined) break
      const m = pick.buffer.shift()!
      looked++
      if (m.owner !== c.owner || SpillName.checkFilename(m.id) !== undefined) continue
      const allowed = yield* Effect.either(reads.authorize(callerFor(c, m), Body.resourceOf(m), "list"))
      if (allowed._tag === "Left") continue
      if (out.length === options.size) {
        // one more than a page: there is a next page, which starts after the last item shown
        return { items: out, next: { createdAt: last!.createdAt, id: last!.id }, filter: options.filter } satisfies ListPage
      }
      out.push(summarize(m))
      last = m
    }
    const stopped = looked >= c.maxListLooked && last !== undefined
    return { items: out, next: stopped ? { createdAt: last!.createdAt, id: last!.id } : undefined, filter: options.filter } satisfies ListPage
  })

/** The summary of one body the person may read. */
export const summary = (c: Config, name: string) =>
  Effect.gen(function*() {
    const m = yield* manifestOf(name)
    const reads = yield* BodyRead
    yield* reads.authorize(callerFor(c, m), Body.resourceOf(m), "read")
    return summarize(m)
  })

/** Splits a page's text into its lines (the break that ends each, and a carriage return before it, left out). */
const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l))
}

/** A window of lines: `count` lines from the 1-indexed line `from`. */
export interface Lines {
  readonly summary: Summary
  readonly from: number
  readonly lines: ReadonlyArray<string>
  readonly total: number
  /** Set when the window's only line was longer than a page and is shown in part. */
  readonly cut?: { readonly line: number; readonly shownBytes: number; readonly totalBytes: number } | undefined
}

/** Lines of a body, read through `readSpill` for the person: whatever the body's size, only this window is read. */
export const lines = (c: Config, name: string, from: number, count: number) =>
  Effect.gen(function*() {
    const m = yield* manifestOf(name)
    if (from > Math.max(1, m.lines) && m.state === "complete") {
      return yield* new Errors.InvalidRequest({ argument: "from", reason: `line ${from} is past the end: ${name} has ${m.lines} lines` })
    }
    const page = yield* Spill.readSpill(name, { offset: from, limit: count }).pipe(
      Effect.provideService(Access.CurrentCaller, callerFor(c, m))
    )
    return {
      summary: summarize(m),
      from: page.offset,
      lines: splitLines(page.text),
      total: page.totalLines,
      cut: page.cutLine
    } satisfies Lines
  })

/** One matching line, with where the pattern matches in it. */
export interface Match {
  readonly line: number
  /** The line without escapes; `runs` are its colours. */
  readonly text: string
  readonly runs: ReadonlyArray<Ansi.Run>
  readonly cut: boolean
  readonly spans: ReadonlyArray<readonly [number, number]>
}

/**
 * Why a search, or the highlighting of what it found, ended before all it
 * was asked for: "deadline" and "bytes" stopped the search at `line`, and
 * "size" (the reply's characters) the matches shown: the next page goes on
 * from there; "highlight" left the matches from `line` on unmarked.
 */
export interface SearchStop {
  readonly reason: "deadline" | "bytes" | "size" | "highlight"
  readonly line: number
  readonly message: string
}

/** A search of one body, or why it could not run. */
export interface SearchView {
  readonly pattern: string
  readonly ignoreCase: boolean
  readonly matches: ReadonlyArray<Match>
  readonly more: boolean
  readonly stoppedAtLine?: number | undefined
  /** What ended the search or its highlighting early, when something did. */
  readonly stopped?: ReadonlyArray<SearchStop> | undefined
  /** The first line searched. */
  readonly fromLine: number
  /** Where the next page of matches starts, when more lines match. */
  readonly nextLine?: number | undefined
  /** Why the pattern was refused, when it was. */
  readonly error?: string | undefined
}

/** Lines highlighted by a deadline: spans for each line (none for those past what was done), and how many were done. */
const highlightLines = (c: Config, matcher: Grep.Matcher, texts: ReadonlyArray<string>, deadline: number) =>
  Effect.gen(function*() {
    const engine = yield* Grep.engine
    const left = deadline - (yield* Clock.currentTimeMillis)
    const h = yield* engine.highlight(matcher, texts.slice(0, c.maxHighlighted), {
      limit: 64,
      maxLineChars: c.maxHighlightChars,
      timeoutMillis: Math.max(0, left)
    })
    return { spans: texts.map((_, k) => h.spans[k] ?? []), done: h.spans.length }
  })

const plural = (n: number, one: string) => `${n.toLocaleString("en-US")} ${n === 1 ? one : `${one}s`}`

/** Why a scan stopped early, in words that say how to go on. */
const scanStop = (c: Config, result: Spill.GrepResult): SearchStop | undefined => {
  const line = result.stoppedAtLine
  if (line === undefined) return undefined
  return result.stoppedBy === "bytes"
    ? { reason: "bytes", line, message: `the search stopped after reading ${(c.searchScanBytes / (1024 * 1024)).toLocaleString("en-US", { maximumFractionDigits: 1 })} MiB at line ${line.toLocaleString("en-US")}; the next page goes on from there` }
    : { reason: "deadline", line, message: `the search stopped at its deadline (${c.searchMillis / 1000} s) at line ${line.toLocaleString("en-US")}; the next page goes on from there, or narrow the pattern` }
}

/**
 * Searches a body with `grepSpill`, the engine `spillway grep` uses, and
 * marks where each line matches, on the pattern engine: the search and the
 * highlighting share one deadline (`searchMillis`), the search reads at most
 * `searchScanBytes`, and at most `maxHighlighted` lines are marked; what
 * stopped early is said in `stopped`.
 */
export const search = (c: Config, name: string, pattern: string, ignoreCase: boolean, max: number, fromLine = 1) =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + c.searchMillis
    const m = yield* manifestOf(name)
    const result = yield* Spill.grepSpill(pattern, name, {
      maxResults: max,
      ignoreCase,
      fromLine,
      deadlineMs: c.searchMillis,
      maxScanBytes: c.searchScanBytes
    }).pipe(Effect.provideService(Access.CurrentCaller, callerFor(c, m)))
    const matcher = Grep.compile(pattern, { ignoreCase })
    // the matches a reply holds: up to `maxReplyChars` of their text, and at least one
    let kept = 0
    for (let chars = 0; kept < result.matches.length; kept++) {
      chars += result.matches[kept]!.text.length
      if (chars > c.maxReplyChars && kept > 0) break
    }
    const matches = result.matches.slice(0, kept)
    const shown = matches.map((x) => Ansi.render(x.text))
    const marked = matcher._tag === "Right"
      ? yield* highlightLines(c, matcher.right, shown.map((l) => l.text), deadline)
      : { spans: shown.map(() => []), done: shown.length }
    const stopped: Array<SearchStop> = []
    const cutAt = kept < result.matches.length ? result.matches[kept]!.line : undefined
    const scanned = cutAt === undefined ? scanStop(c, result) : undefined
    if (scanned !== undefined) stopped.push(scanned)
    if (cutAt !== undefined) {
      stopped.push({
        reason: "size",
        line: cutAt,
        message: `a reply holds at most ${plural(c.maxReplyChars, "character")} of matching lines; the next page goes on from line ${cutAt.toLocaleString("en-US")}`
      })
    }
    if (marked.done < shown.length) {
      const line = matches[marked.done]!.line
      const why = marked.done >= c.maxHighlighted ? `a reply highlights at most ${plural(c.maxHighlighted, "line")}` : "highlighting stopped at the search's deadline"
      stopped.push({ reason: "highlight", line, message: `matches from line ${line.toLocaleString("en-US")} on are shown without highlighting: ${why}` })
    }
    return {
      pattern,
      ignoreCase,
      matches: matches.map((x, k) => ({
        line: x.line,
        text: shown[k]!.text,
        runs: shown[k]!.runs,
        cut: x.cut,
        spans: marked.spans[k]!
      })),
      more: result.more || cutAt !== undefined,
      stoppedAtLine: cutAt === undefined ? result.stoppedAtLine : undefined,
      ...(stopped.length > 0 ? { stopped } : {}),
      fromLine,
      nextLine: cutAt ?? result.stoppedAtLine ?? (result.more && matches.length > 0 ? matches[matches.length - 1]!.line + 1 : undefined)
    } satisfies SearchView
  })

/** The page view: a window of lines around a target line, and a search when one was asked for. */
export interface PageView {
  readonly summary: Summary
  readonly from: number
  readonly lines: ReadonlyArray<Ansi.Rendered>
  readonly marks: ReadonlyArray<ReadonlyArray<readonly [number, number]>>
  readonly target: number | undefined
  readonly cut?: Lines["cut"]
  readonly search?: SearchView | undefined
}

/** The page view of a body around line `target` (the start when undefined), with the search's matches marked. */
export const page = (
  c: Config,
  name: string,
  target: number | undefined,
  query: { readonly pattern: string; readonly ignoreCase: boolean; readonly fromLine?: number | undefined } | undefined
) =>
  Effect.gen(function*() {
    const s = yield* summary(c, name)
    const total = s.lines
    if (target !== undefined && target > Math.max(1, total)) {
      return yield* new Errors.InvalidRequest({ argument: "line", reason: `line ${target} is past the end: ${name} has ${total} lines` })
    }
    // the target a fifth of the way down the window, and a full window at the end
    const from = target === undefined ? 1 : Math.max(1, Math.min(target - Math.floor(c.windowLines / 5), total - c.windowLines + 1))
    const window = yield* lines(c, name, from, c.windowLines)
    const deadline = (yield* Clock.currentTimeMillis) + c.searchMillis
    let found: SearchView | undefined
    let matcher: Grep.Matcher | undefined
    if (query !== undefined && query.pattern !== "") {
      const compiled = Grep.compile(query.pattern, { ignoreCase: query.ignoreCase })
      if (compiled._tag === "Left") {
        found = { pattern: query.pattern, ignoreCase: query.ignoreCase, matches: [], more: false, fromLine: 1, error: compiled.left.message }
      } else {
        matcher = compiled.right
        found = yield* search(c, name, query.pattern, query.ignoreCase, c.maxSearchResults, query.fromLine ?? 1)
      }
    }
    const shown = window.lines.map(Ansi.render)
    const marks = matcher === undefined ? shown.map(() => []) : (yield* highlightLines(c, matcher, shown.map((l) => l.text), deadline)).spans
    return {
      summary: window.summary,
      from: window.from,
      lines: shown,
      marks,
      target,
      cut: window.cut,
      search: found
    } satisfies PageView
  })

const CHUNK = 1 << 20

/** Salient lines of a body's first `limit` bytes, read in chunks. */
const salientOf = (reader: Body.Reader, size: number) =>
  Effect.gen(function*() {
    const scan = Salience.scanner()
    for (let at = 0; at < size; at += CHUNK) scan.push(yield* reader.read(at, Math.min(CHUNK, size - at)))
    return scan.result()
  })

/** The line number of the line starting at byte `offset`, from the nearest checkpoint before it. */
const lineAt = (reader: Body.Reader, offset: number) =>
  Effect.gen(function*() {
    const index = reader.lineIndex
    let k = index.checkpoints.length - 1
    while (k > 0 && (index.checkpoints[k]! > offset || index.checkpoints[k]! > index.bytes)) k--
    let pos = index.checkpoints[k] ?? 0
    let line = k * index.every + 1
    while (pos < offset) {
      const chunk = yield* reader.read(pos, Math.min(1 << 16, offset - pos))
      if (chunk.length === 0) break
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) line++
      pos += chunk.length
    }
    return line
  })

/** A job's page: its newest whole lines, where following starts, and the lines that report failures. */
export interface JobView {
  readonly summary: Summary
  readonly from: number
  readonly lines: ReadonlyArray<string>
  /** The byte after the last line shown: following starts there. */
  readonly endOffset: number
  readonly salient: Salience.Found
}

/** Reads the newest whole lines of a job's output (at most `jobLines`, from at most its last 256 KiB). */
export const job = (c: Config, name: string) =>
  Effect.scoped(Effect.gen(function*() {
    const m = yield* manifestOf(name)
    const reads = yield* BodyRead
    const reader = yield* reads.open(callerFor(c, m), name)
    const size = reader.size
    const windowStart = Math.max(0, size - 256 * 1024)
    const bytes = yield* reader.read(windowStart, size - windowStart)
    // whole lines only: from the first line start in the window to the last break
    const end = bytes.lastIndexOf(10) + 1
    let start = windowStart === 0 ? 0 : bytes.indexOf(10) + 1
    if (start > end) start = end
    let text = splitLines(Utf8.decodeLossy(bytes.subarray(start, end)))
    let first = yield* lineAt(reader, windowStart + start)
    if (text.length > c.jobLines) {
      first += text.length - c.jobLines
      text = text.slice(text.length - c.jobLines)
    }
    const salient = yield* salientOf(reader, Math.min(size, c.salienceScanBytes))
    return {
      summary: summarize(reader.manifest),
      from: first,
      lines: text,
      endOffset: windowStart + end,
      salient
    } satisfies JobView
  }))

const encoder = new TextEncoder()

/** One server-sent event. */
const event = (name: string, data: unknown, id?: number) =>
  encoder.encode(`${id !== undefined ? `id: ${id}\n` : ""}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)

interface FollowState {
  readonly offset: number
  readonly done: boolean
  readonly quietSince: number
  readonly startedAt: number
}

/**
 * Follows a body as it grows, from byte `from`: each poll opens it again
 * for the person (so a revoked or expired body stops the stream), sends
 * what was added in whole code points as `output` events whose id is the
 * byte to resume from, and ends with an `end` event once the body is
 * complete and sent. The stream closes after `followMaxMillis`; the
 * browser reconnects with the last id and resumes there.
 */
export const follow = (c: Config, name: string, from: number) =>
  Effect.gen(function*() {
    const m = yield* manifestOf(name)
    const reads = yield* BodyRead
    const caller = callerFor(c, m)
    const size = yield* Effect.scoped(Effect.map(reads.open(caller, name), (r) => r.size))
    if (from > size) {
      return yield* new Errors.InvalidRequest({ argument: "offset", reason: `byte ${from} is past the end: ${name} holds ${size} bytes so far` })
    }
    const now = yield* Clock.currentTimeMillis
    const step = (s: FollowState): Effect.Effect<Option.Option<readonly [Uint8Array, FollowState]>> =>
      Effect.gen(function*() {
        if (s.done) return Option.none()
        while (true) {
          const t = yield* Clock.currentTimeMillis
          const polled = yield* Effect.either(Effect.scoped(Effect.gen(function*() {
            const reader = yield* reads.open(caller, name)
            const want = Math.min(reader.size - s.offset, 64 * 1024)
            const bytes = want > 0 ? yield* reader.read(s.offset, want) : new Uint8Array(0)
            return { manifest: reader.manifest, size: reader.size, bytes }
          })))
          if (polled._tag === "Left") {
            const e = polled.left
            const message = e._tag === "StoreFailed" ? "the output could not be read any more" : e.message
            return Option.some([event("failed", { message }), { ...s, done: true }] as const)
          }
          const { bytes, manifest } = polled.right
          const complete = manifest.state === "complete"
          const atEnd = complete && s.offset + bytes.length >= polled.right.size
          // whole lines, so each is shown with its colours once; a line longer than a read goes in whole code points
          const lastBreak = bytes.lastIndexOf(10)
          const usable = atEnd ? bytes.length : lastBreak !== -1 ? lastBreak + 1 : bytes.length === 64 * 1024 ? bytes.length - Utf8.incompleteSuffix(bytes) : 0
          if (usable > 0) {
            const next = s.offset + usable
            const text = Utf8.decodeLossy(bytes.subarray(0, usable))
            const open = !text.endsWith("\n")
            const lines = splitLines(text).map(Ansi.render)
            return Option.some([event("output", { offset: s.offset, lines, open }, next), { ...s, offset: next, quietSince: t }] as const)
          }
          if (complete) {
            const sum = summarize(manifest)
            return Option.some([event("end", { status: sum.status, job: sum.job ?? null, bytes: sum.bytes, lines: sum.lines }, s.offset), { ...s, done: true }] as const)
          }
          if (t - s.startedAt >= c.followMaxMillis) return Option.none()
          if (t - s.quietSince >= 15_000) {
            return Option.some([encoder.encode(": still following\n\n"), { ...s, quietSince: t }] as const)
          }
          yield* Effect.sleep(Duration.millis(c.followPollMillis))
        }
      })
    const first = encoder.encode(`retry: 1000\n\n`)
    return Stream.concat(
      Stream.make(first),
      Stream.unfoldEffect({ offset: from, done: false, quietSince: now, startedAt: now } as FollowState, step)
    )
  })

/** One part of the body beside a preview: lines the model was shown, or a range it was not. */
export type BodyPart =
  | { readonly kind: "shown"; readonly from: number; readonly lines: ReadonlyArray<string> }
  | { readonly kind: "omitted"; readonly from: number; readonly to: number }

/** What the model saw, beside the body it stands for. */
export interface SeenView {
  readonly summary: Summary
  readonly preview: string
  readonly note: string
  readonly body: ReadonlyArray<BodyPart>
  /** The lines the model was shown in its section of failure lines, by number. */
  readonly failures: ReadonlyArray<number>
}

/** Line ranges with some single lines added, merged and in order. */
const withLines = (ranges: ReadonlyArray<{ readonly from: number; readonly to: number }>, lines: ReadonlyArray<number>) => {
  const all = [...ranges, ...lines.map((n) => ({ from: n, to: n }))].sort((a, b) => a.from - b.from)
  const out: Array<{ from: number; to: number }> = []
  for (const r of all) {
    const last = out[out.length - 1]
    if (last !== undefined && r.from <= last.to + 1) last.to = Math.max(last.to, r.to)
    else out.push({ ...r })
  }
  return out
}

/** A first result of get_tool_output as a model reads its text: its content or head and tail, the failure lines and the facts, with no JSON escapes. */
const evidenceText = (first: Evidence.First): string => {
  const parts: Array<string> = [`tool: ${first.tool} · status: ${first.status} · ${first.total_bytes} bytes · ${first.total_code_points} code points`]
  if (first.kept_in_part !== undefined) parts.push(`kept in part: ${first.kept_in_part}`)
  if (first.content !== undefined) parts.push(`content:\n${first.content}`)
  if (first.failure_lines !== undefined) {
    parts.push(`failure lines (${first.failure_lines.length} of ${first.failure_lines_total ?? first.failure_lines.length}):\n${first.failure_lines.map((l) => `${l.line}: ${l.text}`).join("\n")}`)
  }
  if (first.head !== undefined) parts.push(`head:\n${first.head}`)
  if (first.tail !== undefined && first.tail !== "") parts.push(`tail:\n${first.tail}`)
  if (first.next_cursor !== undefined) parts.push("next_cursor: (a signed cursor; not shown here)")
  if (first.instructions !== undefined) parts.push(`instructions: ${first.instructions}`)
  parts.push(`truncated: ${first.truncated} · expires at ${first.expires_at}`)
  return Ansi.strip(parts.join("\n\n"))
}

const exitOf = (status: string): number | undefined => {
  const m = /^exit (-?\d+)$/.exec(status)
  return m === null ? undefined : Number(m[1])
}

// Most lines of one shown range set beside the preview; a longer range is cut with a link to the page view.
const SHOWN_LINES = 400

/** The body's parts: the shown line ranges read whole (up to `SHOWN_LINES` each), the gaps marked. */
const partsOf = (c: Config, name: string, total: number, ranges: ReadonlyArray<{ readonly from: number; readonly to: number }>) =>
  Effect.gen(function*() {
    const parts: Array<BodyPart> = []
    let next = 1
    for (const r of ranges) {
      if (r.from > next) parts.push({ kind: "omitted", from: next, to: r.from - 1 })
      const count = Math.min(r.to - r.from + 1, SHOWN_LINES)
      const window = yield* lines(c, name, r.from, count)
      parts.push({ kind: "shown", from: r.from, lines: window.lines })
      if (count < r.to - r.from + 1) parts.push({ kind: "omitted", from: r.from + count, to: r.to })
      next = r.to + 1
    }
    if (next <= total) parts.push({ kind: "omitted", from: next, to: total })
    return parts
  })

/** Line ranges that a code-point range of a text covers. */
const linesOfRange = (text: string, start: number, end: number) => {
  const before = text.slice(0, start)
  const from = before.split("\n").length
  const upto = text.slice(0, end)
  const to = upto.split("\n").length - (upto.endsWith("\n") ? 1 : 0)
  return { from, to: Math.max(from, to) }
}

/**
 * What the model saw of a kept body, re-derived from the body with the same
 * code that made it, since previews are not stored: for a saved output, the
 * preview `spillway run` and `run_command` return (from the body's start and
 * end and its salient lines); for evidence, the first result
 * `get_tool_output` cursors continue from, its cursor withheld.
 */
export const seen = (c: Config, name: string) =>
  Effect.scoped(Effect.gen(function*() {
    const m = yield* manifestOf(name)
    const reads = yield* BodyRead
    const reader = yield* reads.open(callerFor(c, m), name)
    const s = summarize(reader.manifest)
    const size = reader.size
    if (m.profile === "evidence" && m.origin._tag === "Tool") {
      if (size > 64 * 1024 * 1024) {
        return yield* new Errors.InvalidRequest({ argument: "name", reason: `${name} is larger than a kept result can be; its first result cannot be re-derived here` })
      }
      const text = Utf8.decodeLossy(yield* reader.read(0, size))
      // a cursor of the same length, signed with a key of its own, so the fitting is the same and no real cursor is shown
      const codec = Cursor.codec(globalThis.crypto.getRandomValues(new Uint8Array(32)), Evidence.TOOL, "code_point")
      const first = yield* Evidence.first(m, text, { cursor: (n) => codec.encode(m.id, n) }).pipe(
        Effect.mapError((e) => new Errors.InvalidRequest({ argument: "name", reason: e.message }))
      )
      const total = s.lines
      let ranges: Array<{ from: number; to: number }>
      if (first.content !== undefined) ranges = total > 0 ? [{ from: 1, to: total }] : []
      else {
        const headEnd = first.head?.length ?? 0
        const tailStart = text.length - (first.tail?.length ?? 0)
        const h = linesOfRange(text, 0, headEnd)
        const t = linesOfRange(text, tailStart, text.length)
        ranges = headEnd === 0 ? [t] : t.from <= h.to + 1 ? [{ from: 1, to: t.to }] : [h, t]
      }
      const failures = (first.failure_lines ?? []).map((l) => l.line)
      return {
        summary: s,
        preview: evidenceText(first),
        note: "Re-derived from the body with the same code and the default 12,000-character budget, as get_tool_output's first result; the first and last lines shown may be shown only in part.",
        body: yield* partsOf(c, name, total, withLines(ranges, failures)),
        failures
      } satisfies SeenView
    }
    if (m.profile !== "spill") {
      const what = m.profile === "spool"
        ? "a job's output, which a model polls for its newest lines"
        : m.origin._tag === "Search"
        ? "a kept search, whose matches a model pages with get_tool_output"
        : `kept by the ${m.profile} profile`
      return yield* new Errors.InvalidRequest({
        argument: "name",
        reason: `${name} is ${what}; it has no single preview. Open it in the page view instead`
      })
    }
    const exitCode = exitOf(m.status)
    const keep = c.previewChars * 4 + 4
    const head = yield* reader.read(0, Math.min(keep, size))
    let tailStart = Math.max(0, size - keep)
    const tailBytes = yield* reader.read(tailStart, size - tailStart)
    let skip = 0
    while (skip < tailBytes.length && !Utf8.isByteBoundary(tailBytes, skip)) skip++
    tailStart += skip
    const before = tailStart === 0 ? -1 : (yield* reader.read(tailStart - 1, 1))[0]!
    // the salient lines and the first line's length, from one pass over the body
    const scan = Salience.scanner()
    let firstBreak = -1
    const started = yield* Clock.currentTimeMillis
    let scanned = 0
    for (; scanned < size; scanned += CHUNK) {
      const chunk = yield* reader.read(scanned, Math.min(CHUNK, size - scanned))
      if (firstBreak === -1) {
        const at = chunk.indexOf(10)
        if (at !== -1) firstBreak = scanned + at
      }
      scan.push(chunk)
    }
    const found = scan.result()
    const took = (yield* Clock.currentTimeMillis) - started
    const hints = c.hints[m.tool]
    const compiled = Salience.compile()
    const preview = Preview.make({
      exitCode: exitCode ?? 0,
      head: Utf8.decodeLossy(head),
      headIsWhole: size <= keep,
      tail: Utf8.decodeLossy(tailBytes.subarray(skip)),
      tailAtLineStart: tailStart === 0 || before === 10,
      totalLines: m.lines,
      totalBytes: m.kept === "whole" ? m.bytes : m.sourceBytes,
      firstLineBytes: firstBreak === -1 ? size : firstBreak,
      saved: m.id,
      savedInPart: m.kept === "head" ? { lines: m.lines, bytes: m.bytes } : undefined,
      maxChars: c.previewChars,
      hint: hints?.read,
      grepHint: hints?.grep,
      salient: found.total > 0 ? { lines: found.lines, total: found.total, grep: compiled.grepPattern(found.rules) } : undefined
    })
    const notes = [
      `Previews are not stored: this one is re-derived from the body with the same code, the default rules for failure lines and a ${c.previewChars.toLocaleString("en-US")}-character cap, as spillway run and run_command use by default (a host with another cap or rules of its own showed a different cut).`,
      m.kept === "head" ? "Only the start of the output was kept, so its line count here is the kept part's." : "",
      exitCode === undefined ? `Its status (${m.status}) names no exit code; 0 is assumed.` : "",
      took > 1000 ? `Finding its failure lines read all ${size.toLocaleString("en-US")} bytes (${(took / 1000).toFixed(1)} s).` : ""
    ].filter((n) => n !== "")
    // the lines the preview's section shows, as its picker chose them
    const failures = preview.salient
    return {
      summary: s,
      preview: Ansi.strip(preview.text),
      note: notes.join(" "),
      body: yield* partsOf(c, name, m.lines, withLines(preview.ranges, failures)),
      failures
    } satisfies SeenView
  }))

/**
 * Where a search's pattern matches in each of some lines (without their
 * escapes), for highlighting them, on the pattern engine within
 * `searchMillis`; `done` says how many lines were, from the first.
 */
export const marksOf = (c: Config, query: { readonly pattern: string; readonly ignoreCase: boolean }, lines: ReadonlyArray<Ansi.Rendered>) =>
  Effect.gen(function*() {
    const matcher = yield* Grep.compile(query.pattern, { ignoreCase: query.ignoreCase })
    const deadline = (yield* Clock.currentTimeMillis) + c.searchMillis
    return yield* highlightLines(c, matcher, lines.map((l) => l.text), deadline)
  })

/** A body's facts and the lines that report failures, as they stand now: what a page of a growing body polls. */
export interface LiveView {
  readonly summary: Summary
  readonly salient: Salience.Found
}

/** The facts and failure lines of a body now, its failure lines found in at most its first `salienceScanBytes`. */
export const live = (c: Config, name: string) =>
  Effect.scoped(Effect.gen(function*() {
    const m = yield* manifestOf(name)
    const reads = yield* BodyRead
    const reader = yield* reads.open(callerFor(c, m), name)
    const salient = yield* salientOf(reader, Math.min(reader.size, c.salienceScanBytes))
    return { summary: summarize(reader.manifest), salient } satisfies LiveView
  }))

const RAW_CHUNK = 256 * 1024

/**
 * The masked body as it is kept, for a download: opened for the person
 * through `Access`, read in chunks of 256 KiB up to its size at the open,
 * whatever that size.
 */
export const raw = (c: Config, name: string) =>
  Effect.gen(function*() {
    const m = yield* manifestOf(name)
    const reads = yield* BodyRead
    const caller = callerFor(c, m)
    // the check runs now, so a refusal is an answer of its own and not a broken download
    yield* Effect.scoped(reads.open(caller, name))
    return Stream.unwrapScoped(Effect.map(reads.open(caller, name), (reader) =>
      Stream.unfoldEffect(0, (at) =>
        at >= reader.size
          ? Effect.succeed(Option.none())
          : Effect.map(reader.read(at, Math.min(RAW_CHUNK, reader.size - at)), (bytes) =>
            bytes.length === 0 ? Option.none() : Option.some([bytes, at + bytes.length] as const)
          ))
    ))
  })
