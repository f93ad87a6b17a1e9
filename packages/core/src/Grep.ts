/**
 * Line matching for patterns a model or a remote caller writes: JavaScript
 * regular expression syntax without the constructs that need backtracking
 * (backreferences, lookahead, lookbehind), run on RE2's linear-time engine
 * (the `re2js` port), never on the backtracking native engine.
 *
 * Where a scan runs is a service, `PatternEngine`: `inline` (the default,
 * platform-free) scans on the calling thread in slices of whole lines and
 * yields between them; `@spillway/node` provides an engine that scans on
 * worker threads and ends a scan at its deadline, so no pattern holds up
 * anything else the process does.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import * as Syntax from "./internal/pattern.js"
import * as Scan from "./BlockScan.js"

/** Longest pattern accepted, in UTF-16 units. */
export const MAX_PATTERN_LENGTH = Scan.MAX_PATTERN_LENGTH

/** Largest compiled pattern accepted, in RE2 instructions (counted repetitions are expanded). */
export const MAX_PROGRAM_SIZE = Scan.MAX_PROGRAM_SIZE

/** Why a pattern was refused. */
export class GrepPatternError extends Schema.TaggedError<GrepPatternError>()("GrepPatternError", {
  pattern: Schema.String,
  kind: Schema.Literal("invalid", "unsupported", "too-long", "too-large", "empty"),
  reason: Schema.String
}) {
  override get message() {
    const quoted = JSON.stringify(this.pattern.length > 80 ? `${this.pattern.slice(0, 80)}…` : this.pattern)
    switch (this.kind) {
      case "unsupported":
        return `unsupported pattern ${quoted}: ${this.reason}. Searches run in linear time, without backtracking; rewrite the pattern without it.`
      case "too-long":
        return `pattern is ${this.pattern.length} characters long; the limit is ${MAX_PATTERN_LENGTH}. Use a shorter pattern.`
      case "too-large":
        return `pattern ${quoted} is too large: ${this.reason}. Use smaller counted repetitions ({n} up to 1000 in all).`
      case "empty":
        return "the pattern is empty; give a regular expression to search for."
      default:
        return `invalid regular expression ${quoted}: ${this.reason}`
    }
  }
}

/** A checked pattern: what engines compile and run. */
export interface Matcher {
  /** The pattern as given, in JavaScript syntax. */
  readonly pattern: string
  readonly ignoreCase: boolean
  /** The pattern in RE2 syntax. */
  readonly source: string
  /**
   * ASCII text every match contains (case-sensitive patterns only): a block
   * without it has no match, which a plain substring search tells first.
   */
  readonly literal: string | undefined
  /**
   * ASCII texts one of which every match contains, of either case when
   * `ignoreCase` (one per top-level alternative); undefined when there are none.
   */
  readonly literals: ReadonlyArray<string> | undefined
  /**
   * For each top-level alternative, every ASCII text all its matches
   * contain (`literals` holds the longest of each): a search looks for the
   * one rarest in the body. Undefined when `literals` is.
   */
  readonly literalSets: ReadonlyArray<ReadonlyArray<string>> | undefined
  /** True when the line (without its line break) has a match; runs on the calling thread. */
  readonly test: (line: string) => boolean
}

/** Checks and compiles a pattern (JavaScript syntax; `ignoreCase` for case-insensitive matching). */
export const compile = (
  pattern: string,
  options: { readonly ignoreCase?: boolean | undefined } = {}
): Either.Either<Matcher, GrepPatternError> => {
  const ignoreCase = options.ignoreCase === true
  const checked = Scan.check(pattern, ignoreCase)
  if (Scan.isRefusal(checked)) return Either.left(new GrepPatternError({ pattern, kind: checked.kind, reason: checked.reason }))
  const line = checked.compiled
  return Either.right({
    pattern,
    ignoreCase,
    source: checked.source,
    literal: ignoreCase ? undefined : Syntax.requiredLiteral(pattern),
    literals: checked.literals,
    literalSets: checked.literalSets,
    test: (s) => line.line.test(s)
  })
}

/** How one scan of a block of lines runs. */
export interface ScanOptions {
  /** Most matching lines to return; one more is looked for, to say whether there are more. */
  readonly limit: number
  /** Each line is tested on its first this many characters. */
  readonly maxLineChars: number
  /** Time the scan may take; past it, the scan ends unfinished. */
  readonly timeoutMillis: number
}

/** What a scan of a block of lines found. */
export interface BlockScan {
  /** Matching lines, in order: index in the block (from 0), start and end offsets in the text. */
  readonly matches: ReadonlyArray<readonly [line: number, start: number, end: number]>
  /** Lines tested on their first `maxLineChars` characters only. */
  readonly clipped: number
  /** More lines matched than the limit. */
  readonly more: boolean
  /** False when the deadline came first: then `matches` are those found before it, and `lines` the lines looked at. */
  readonly complete: boolean
  /** Lines looked at from the start of the block (all of them when complete). */
  readonly lines: number
}

/** How one highlighting of lines runs. */
export interface HighlightOptions {
  /** Most spans marked in one line. */
  readonly limit: number
  /** Each line is highlighted on its first this many characters. */
  readonly maxLineChars: number
  /** Time the highlighting may take; past it, it ends with the lines done so far. */
  readonly timeoutMillis: number
}

/** Where a pattern matches in each of some lines, for as many lines as the deadline allowed. */
export interface Highlighted {
  /** One entry per line, from the first: `[start, end)` spans in UTF-16 offsets. */
  readonly spans: ReadonlyArray<ReadonlyArray<readonly [number, number]>>
  /** False when the deadline came first: then `spans` holds the first lines only. */
  readonly complete: boolean
}

/**
 * Where pattern scans run. A scan gets a block of whole lines (separated by
 * `\n`; a final `\n` ends the last line) and must end by its deadline; so
 * must a highlighting of lines.
 */
export class PatternEngine extends Context.Tag("@spillway/core/Grep/PatternEngine")<PatternEngine, {
  readonly scan: (matcher: Matcher, text: string, options: ScanOptions) => Effect.Effect<BlockScan>
  /** Where the pattern matches inside each line, for highlighting lines a search or a page shows. */
  readonly highlight: (matcher: Matcher, lines: ReadonlyArray<string>, options: HighlightOptions) => Effect.Effect<Highlighted>
  /** Says that scans of this pattern follow, so the engine may get ready for them meanwhile. */
  readonly prepare: (matcher: Matcher) => Effect.Effect<void>
}>() {}

/** Characters scanned between two checks of the deadline by the inline engine. */
const SLICE = 64 * 1024

const compiledCache = new Map<string, Scan.Compiled>()
/** The compiled form of a checked pattern, from a small cache. */
const compiled = (matcher: Pick<Matcher, "source" | "ignoreCase">): Scan.Compiled => {
  const key = `${matcher.ignoreCase ? "i" : "-"}${matcher.source}`
  let c = compiledCache.get(key)
  if (c === undefined) {
    c = Scan.compile(matcher.source, matcher.ignoreCase)
    if (compiledCache.size >= 16) compiledCache.delete(compiledCache.keys().next().value!)
    compiledCache.set(key, c)
  }
  return c
}

/**
 * Where a checked pattern matches inside one line (a line a search
 * returned): up to `limit` non-empty `[start, end)` spans in UTF-16
 * offsets, found by the same linear-time engine, for highlighting.
 */
export const spans = (matcher: Matcher, line: string, limit = 64): ReadonlyArray<readonly [number, number]> =>
  Scan.spans(compiled(matcher), line, limit)

/**
 * Scans on the calling thread, in slices of whole lines of about 64 KiB,
 * checking the deadline and yielding to other fibers between slices. A
 * slice is not interrupted once started: RE2 bounds it by its length times
 * the pattern's size. Highlighting runs the same way, a line at a time.
 */
export const inline: PatternEngine["Type"] = {
  prepare: () => Effect.void,
  highlight: (matcher, lines, options) =>
    Effect.gen(function*() {
      const deadline = Date.now() + Math.max(0, options.timeoutMillis)
      const c = compiled(matcher)
      const out: Array<ReadonlyArray<readonly [number, number]>> = []
      let since = 0
      for (const line of lines) {
        if (Date.now() >= deadline) return { spans: out, complete: false }
        const part = line.length > options.maxLineChars ? line.slice(0, options.maxLineChars) : line
        out.push(Scan.spans(c, part, options.limit))
        since += part.length
        if (since >= SLICE) {
          since = 0
          yield* Effect.yieldNow()
        }
      }
      return { spans: out, complete: true }
    }),
  scan: (matcher, text, options) =>
    Effect.gen(function*() {
      const deadline = Date.now() + Math.max(0, options.timeoutMillis)
      const c = compiled(matcher)
      const matches: Array<readonly [number, number, number]> = []
      let clipped = 0
      let lines = 0
      for (let pos = 0; pos < text.length;) {
        if (Date.now() >= deadline) return { matches, clipped, more: false, complete: false, lines }
        // a slice ends at a line break (or the end of the text); one long line is a slice of its own
        let end = pos + SLICE >= text.length ? text.length : text.lastIndexOf("\n", pos + SLICE)
        if (end < pos) end = text.indexOf("\n", pos + SLICE)
        end = end === -1 ? text.length : Math.min(text.length, end + 1)
        const slice = text.slice(pos, end)
        const found = Scan.scan(c, slice, options.limit - matches.length, options.maxLineChars)
        for (let k = 0; k < found.matches.length; k += 3) {
          matches.push([lines + found.matches[k]!, pos + found.matches[k + 1]!, pos + found.matches[k + 2]!])
        }
        clipped += found.clipped
        if (found.more) return { matches, clipped, more: true, complete: true, lines }
        lines += countLines(slice)
        pos = end
        yield* Effect.yieldNow()
      }
      return { matches, clipped, more: false, complete: true, lines }
    })
}

/** Lines in a text whose last line may or may not end in `\n`. */
const countLines = (text: string): number => {
  let n = 0
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) n++
  return text.length > 0 && !text.endsWith("\n") ? n + 1 : n
}

/** The engine in context, or `inline`. */
export const engine: Effect.Effect<PatternEngine["Type"]> = Effect.map(
  Effect.serviceOption(PatternEngine),
  (o) => (o._tag === "Some" ? o.value : inline)
)

/** Provides the inline engine. */
export const layerInline: Layer.Layer<PatternEngine> = Layer.succeed(PatternEngine, inline)
