/**
 * The evidence profile: a tool's raw output is scrubbed and kept as one
 * immutable body with a durable manifest, the model gets a preview (a
 * labelled head and tail) and an opaque cursor, and `getToolOutput` pages
 * the body back from the cursor in code points, each page fitted whole to
 * the delivery budget. Retrieval reads the kept evidence; it never re-runs
 * anything. Bodies live in the spill directory (the evidence id is the file
 * name, so `readSpill` reads them too); their limits are this profile's.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as Cursor from "./Cursor.js"
import * as Envelope from "./Envelope.js"
import * as LineIndex from "./LineIndex.js"
import { type Checkpoint, type Manifest, ManifestStore } from "./ManifestStore.js"
import * as Preview from "./Preview.js"
import * as Salience from "./Salience.js"
import * as SearchPage from "./SearchPage.js"
import { Secrets } from "./Secrets.js"
import * as SpillPolicy from "./SpillPolicy.js"
import { makeFilename, SpillStore } from "./SpillStore.js"
import * as Utf8 from "./Utf8.js"

/** The tool name cursors of this profile carry. */
export const TOOL = "get_tool_output"

/** Limits of the evidence profile; every figure defaults to the source design's. */
export interface Options {
  /** Most bytes kept of one result; the rest is left out with a note. 4 MiB by default. */
  readonly maxResultBytes?: number
  /** Most bytes of unexpired bodies in all; a result past it is refused. 64 MiB by default. */
  readonly maxRetainedBytes?: number
  /** How long evidence is kept from retention; reads do not extend it. 24 hours by default. */
  readonly ttlMillis?: number
  /** The delivery budget for one whole serialized result, in characters. 12,000 by default. */
  readonly budgetChars?: number
  /** Code points between checkpoints. 65,536 by default. */
  readonly checkpointEvery?: number
}

const defaults = {
  maxResultBytes: 4 * 1024 * 1024,
  maxRetainedBytes: 64 * 1024 * 1024,
  ttlMillis: 24 * 60 * 60 * 1000,
  budgetChars: 12_000,
  checkpointEvery: 65_536
}

/** Saving the evidence failed; no cursor was handed out. */
export class RetentionFailed extends Schema.TaggedError<RetentionFailed>()("RetentionFailed", {
  reason: Schema.String
}) {
  override get message() {
    return `the output could not be kept (${this.reason}); nothing can be read back from it`
  }
}

/** Keeping the result would pass the aggregate quota. */
export class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", {
  retainedBytes: Schema.Number,
  neededBytes: Schema.Number,
  limitBytes: Schema.Number
}) {
  override get message() {
    return `keeping ${this.neededBytes} more bytes would pass the ${this.limitBytes}-byte quota for kept output (${this.retainedBytes} in use); older output frees its room when it expires`
  }
}

/** No evidence by that id (never kept, or already swept). */
export class EvidenceNotFound extends Schema.TaggedError<EvidenceNotFound>()("EvidenceNotFound", {}) {
  override get message() {
    return "no kept output for this cursor; it may have expired and been removed. Run the tool again if you still need its output"
  }
}

/** The evidence has expired. */
export class EvidenceExpired extends Schema.TaggedError<EvidenceExpired>()("EvidenceExpired", {
  expiresAt: Schema.String
}) {
  override get message() {
    return `this output expired at ${this.expiresAt}; run the tool again if you still need it`
  }
}

/** The reader may not read this evidence, whatever cursor it holds. */
export class AccessDenied extends Schema.TaggedError<AccessDenied>()("AccessDenied", {}) {
  override get message() {
    return "you may not read this output; holding a cursor is not permission"
  }
}

/** Decides, on every read, whether a reader may read a manifest's evidence. */
export class EvidenceAuthorizer extends Context.Tag("@spillway/core/EvidenceAuthorizer")<
  EvidenceAuthorizer,
  { readonly canRead: (reader: string, manifest: Manifest) => Effect.Effect<boolean> }
>() {}

/** Only the evidence's owner may read it. */
export const ownerOnly: Layer.Layer<EvidenceAuthorizer> = Layer.succeed(EvidenceAuthorizer, {
  canRead: (reader, manifest) => Effect.succeed(reader === manifest.owner)
})

/** What a tool produced, for retention. */
export interface Output {
  readonly owner: string
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
  readonly tool: string
  readonly status: string
  readonly matches: ReadonlyArray<SearchPage.Match>
}

// A search position (match, code point inside it) travels in one cursor offset.
const SEARCH_SPAN = 2 ** 26
const isSearch = (id: string) => id.endsWith(".json")

/** Everything retention can fail with. */
export type RetainError = RetentionFailed | QuotaExceeded | Envelope.EnvelopeTooSmall

/** Everything a read can fail with. */
export type ReadError = Cursor.CursorError | EvidenceNotFound | EvidenceExpired | AccessDenied | RetentionFailed | Envelope.EnvelopeTooSmall

const instructions = "Call get_tool_output with next_cursor for the rest, page by page, until truncated is false."

/** Code point count and checkpoints of a body, every `every` code points. */
const account = (body: Uint8Array, every: number) => {
  const { offsets, text } = Utf8.decodeWithOffsets(body)
  const checkpoints: Array<Checkpoint> = [{ codePoint: 0, byte: 0 }]
  let codePoints = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xdc00 && c <= 0xdfff && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800) continue
    if (codePoints > 0 && codePoints % every === 0) checkpoints.push({ codePoint: codePoints, byte: offsets[i]! })
    codePoints++
  }
  return { codePoints, checkpoints, text }
}

/** Builds the evidence profile from a store, manifests, a masker, a cursor key and an authorizer. */
export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const o = { ...defaults, ...options }
    const store = yield* SpillStore
    const manifests = yield* ManifestStore
    const masker = yield* Secrets
    const authorizer = yield* EvidenceAuthorizer
    const key = yield* Cursor.CursorKey
    const withKey = <A, E>(e: Effect.Effect<A, E, Cursor.CursorKey>) => Effect.provideService(e, Cursor.CursorKey, key)
    const budget = { limit: o.budgetChars }
    const iso = (ms: number) => new Date(ms).toISOString()
    const cursorAt = (id: string, offset: number) => withKey(Cursor.encode({ tool: TOOL, evidence: id, offset, unit: "code_point" }))

    /** Scrubs, keeps and indexes a body under a fresh id, and records its manifest. */
    const keep = (owner: string, tool: string, status: string, raw: Uint8Array, extension: ".log" | ".json") =>
      Effect.gen(function*() {
        const scrubbed = masker.maskBytes(raw)
        // over the per-result quota: keep the start, cut on a code point, and say so
        const kept = scrubbed.length > o.maxResultBytes
          ? scrubbed.subarray(0, Utf8.byteBoundary(scrubbed, o.maxResultBytes))
          : scrubbed
        const now = yield* Clock.currentTimeMillis
        const inUse = yield* manifests.retainedBytes(now).pipe(Effect.mapError((e) => new RetentionFailed({ reason: e.message })))
        if (inUse + kept.length > o.maxRetainedBytes) {
          return yield* new QuotaExceeded({ retainedBytes: inUse, neededBytes: kept.length, limitBytes: o.maxRetainedBytes })
        }
        const id = makeFilename(new Date(now), undefined, extension)
        const index = LineIndex.fromBytes(kept)
        yield* Effect.scoped(Effect.gen(function*() {
          const sink = yield* store.create(id)
          yield* sink.write(kept)
          yield* sink.commit(index)
        })).pipe(Effect.mapError((e) => new RetentionFailed({ reason: e.message })))
        const { checkpoints, codePoints, text } = account(kept, o.checkpointEvery)
        const manifest: Manifest = {
          id,
          owner,
          tool,
          status,
          createdAt: now,
          expiresAt: now + o.ttlMillis,
          bytes: kept.length,
          codePoints,
          lines: index.lines,
          sourceBytes: scrubbed.length,
          checkpoints
        }
        // the manifest goes in only once the body is whole, so no cursor ever names a partial body
        yield* manifests.put(manifest).pipe(
          Effect.tapError(() => Effect.ignore(store.remove(id))),
          Effect.mapError((e) => new RetentionFailed({ reason: e.message }))
        )
        return { manifest, text }
      })

    /** Scrubs, keeps and indexes an output, then returns its first result. */
    const retain = (output: Output): Effect.Effect<{ readonly evidence: string; readonly first: First }, RetainError> =>
      Effect.gen(function*() {
        const raw = typeof output.body === "string" ? Utf8.encode(output.body) : output.body
        const { manifest, text } = yield* keep(output.owner, output.tool, output.status, raw, ".log")
        const first = yield* firstResult(manifest, text)
        return { evidence: manifest.id, first }
      })

    /**
     * Keeps a search tool's matches as a ranked snapshot and returns their
     * first page; later pages come from the snapshot, never from searching again.
     */
    const retainSearch = (
      output: SearchOutput
    ): Effect.Effect<{ readonly evidence: string; readonly first: SearchResults }, RetainError | RetentionFailed> =>
      Effect.gen(function*() {
        const raw = Utf8.encode(JSON.stringify(output.matches))
        const { manifest, text } = yield* keep(output.owner, output.tool, output.status, raw, ".json")
        const snapshot = yield* parseSnapshot(text)
        const first = yield* searchPage(manifest, snapshot, { match: 0, offset: 0 })
        return { evidence: manifest.id, first }
      })

    const parseSnapshot = (text: string) =>
      Effect.try({
        try: () => JSON.parse(text) as ReadonlyArray<SearchPage.Match>,
        catch: () => new RetentionFailed({ reason: "the kept search snapshot is not whole (it passed the per-result limit)" })
      })

    const searchPage = (m: Manifest, snapshot: ReadonlyArray<SearchPage.Match>, from: SearchPage.Position) =>
      Effect.map(
        SearchPage.page(snapshot, from, (page): SearchResults => ({
          tool: m.tool,
          status: m.status,
          matches: page.matches,
          summary: page.summary,
          ...(page.next !== undefined
            ? { next_cursor: Effect.runSync(cursorAt(m.id, page.next.match * SEARCH_SPAN + page.next.offset)) }
            : {}),
          truncated: page.truncated,
          expires_at: iso(m.expiresAt)
        }), budget),
        (paged) => paged.value
      )

    const firstResult = (m: Manifest, text: string): Effect.Effect<First, Envelope.EnvelopeTooSmall> =>
      Effect.gen(function*() {
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
        const failure: Array<{ line: number; text: string }> = []
        for (const l of Salience.ranked(found)) {
          const row = { line: l.line, text: Salience.cutMiddle(l.text, Preview.SALIENT_CHARS) }
          if (Envelope.sizeOf(JSON.stringify([...failure, row])) > budget.limit / 5) continue
          failure.push(row)
        }
        failure.sort((a, b) => a.line - b.line)
        const withFailures = failure.length > 0
          ? { ...base, failure_lines: failure, failure_lines_total: found.total }
          : base
        // the head gets three fifths of the budget, the tail what is left; the cursor continues after the head
        const cursors = new Map<number, string>()
        const cursor = (n: number) => {
          if (!cursors.has(n)) cursors.set(n, Effect.runSync(cursorAt(m.id, n)))
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
        const head = yield* Envelope.fitText(text, (part, n) => shaped(part, n, ""), {
          limit: Math.floor((budget.limit * 3) / 5)
        })
        const headText = head.value.head!
        // no more than a budget's worth of code points can fit in the tail
        const rest = [...Utf8.takeLastCodePoints(text.slice(headText.length), budget.limit)]
        const fitted = yield* Envelope.fitCount(0, rest.length, (k) => shaped(headText, head.count, rest.slice(rest.length - k).join("")), budget)
        return fitted.value
      })

    /** The page of an evidence body that starts at a cursor, fitted to the budget, with the cursor for the next. */
    const getToolOutput = (cursor: string, reader: string): Effect.Effect<Page | SearchResults, ReadError> =>
      Effect.gen(function*() {
        const position = yield* withKey(Cursor.decode(cursor, { tool: TOOL, unit: "code_point" }))
        const m = yield* manifests.get(position.evidence).pipe(Effect.mapError((e) => new RetentionFailed({ reason: e.message })))
        if (m === undefined) return yield* new EvidenceNotFound()
        const now = yield* Clock.currentTimeMillis
        if (now >= m.expiresAt) return yield* new EvidenceExpired({ expiresAt: iso(m.expiresAt) })
        if (!(yield* authorizer.canRead(reader, m))) return yield* new AccessDenied()
        if (isSearch(m.id)) {
          const whole = yield* readFrom(m, 0, m.codePoints)
          const snapshot = yield* parseSnapshot(whole)
          const from = { match: Math.floor(position.offset / SEARCH_SPAN), offset: position.offset % SEARCH_SPAN }
          return yield* searchPage(m, snapshot, from)
        }
        const text = yield* readFrom(m, position.offset)
        const total = m.codePoints
        const page = (part: string, n: number): Page => {
          const end = position.offset + n
          return {
            tool: m.tool,
            status: m.status,
            content: part,
            offset: position.offset,
            offset_unit: "code_point",
            total_bytes: m.bytes,
            total_code_points: total,
            ...(end < total ? { next_cursor: Effect.runSync(cursorAt(m.id, end)) } : {}),
            truncated: end < total,
            expires_at: iso(m.expiresAt)
          }
        }
        return (yield* Envelope.fitText(text, page, budget)).value
      })

    /** Up to a budget's worth of the body from a code-point offset, found through the nearest checkpoint. */
    const readFrom = (m: Manifest, offset: number, limit: number = budget.limit): Effect.Effect<string, RetentionFailed> =>
      Effect.scoped(Effect.gen(function*() {
        const at = Math.min(offset, m.codePoints)
        let k = m.checkpoints.length - 1
        while (k > 0 && m.checkpoints[k]!.codePoint > at) k--
        const cp = m.checkpoints[k]!
        const skip = at - cp.codePoint
        const want = (skip + limit) * 4
        const file = yield* store.open(m.id)
        const bytes = yield* file.read(cp.byte, Math.min(want, m.bytes - cp.byte))
        // never decode a sequence the read cut short
        const usable = cp.byte + bytes.length < m.bytes ? bytes.subarray(0, Utf8.byteBoundary(bytes, bytes.length)) : bytes
        const text = Utf8.decodeLossy(usable)
        const start = Utf8.takeCodePoints(text, skip).length
        return Utf8.takeCodePoints(text.slice(start), limit)
      })).pipe(Effect.mapError((e) => new RetentionFailed({ reason: e.message })))

    /** Removes evidence that has expired; returns how many were removed. */
    const sweep: Effect.Effect<number, RetentionFailed> = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const expired = yield* manifests.takeExpired(now).pipe(Effect.mapError((e) => new RetentionFailed({ reason: e.message })))
      for (const m of expired) yield* Effect.ignore(store.remove(m.id))
      return expired.length
    })

    return { retain, retainSearch, getToolOutput, sweep }
  })

/** The evidence capability. */
export type Service = Effect.Effect.Success<ReturnType<typeof make>>

/** The evidence profile as a service. */
export class Evidence extends Context.Tag("@spillway/core/Evidence")<Evidence, Service>() {}

/** The evidence profile as a layer. */
export const layer = (options: Options = {}) => Layer.effect(Evidence, make(options))

/**
 * A spill policy for one reader that applies the evidence authorizer to
 * `readSpill`/`grepSpill` too: a file that is kept evidence may be read by
 * name only by a reader the authorizer lets read it. Files that are not
 * evidence are left to the spill profile's rules. Provide it per reader
 * where both profiles share a directory.
 */
export const spillPolicyFor = (
  reader: string
): Layer.Layer<SpillPolicy.SpillPolicy, never, ManifestStore | EvidenceAuthorizer> =>
  Layer.effect(
    SpillPolicy.SpillPolicy,
    Effect.gen(function*() {
      const manifests = yield* ManifestStore
      const authorizer = yield* EvidenceAuthorizer
      const refuse = (filename: string, reason: string) =>
        new SpillPolicy.SpillPolicyRefused({ operation: "spill/read", filename, reason })
      return {
        check: (operation) =>
          operation._tag !== "spill/read"
            ? Effect.void
            : Effect.gen(function*() {
              const m = yield* manifests.get(operation.filename).pipe(
                Effect.mapError((e) => refuse(operation.filename, e.message))
              )
              if (m !== undefined && !(yield* authorizer.canRead(reader, m))) {
                return yield* refuse(operation.filename, "this kept output belongs to another reader")
              }
            })
      }
    })
  )

/** Keeps a tool's output and returns the first result for the model. */
export const retain = (output: Output) => Effect.flatMap(Evidence, (e) => e.retain(output))

/** Keeps a search tool's matches as a ranked snapshot and returns their first page. */
export const retainSearch = (output: SearchOutput) => Effect.flatMap(Evidence, (e) => e.retainSearch(output))

/** Reads the page a cursor points at; the reader is checked on every call. */
export const getToolOutput = (cursor: string, reader: string) => Effect.flatMap(Evidence, (e) => e.getToolOutput(cursor, reader))

/** Removes expired evidence. */
export const sweep = Effect.flatMap(Evidence, (e) => e.sweep)
