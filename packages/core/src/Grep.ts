/**
 * Line matching for patterns a model writes: JavaScript regular expression
 * syntax without the features that need backtracking (backreferences,
 * lookaround), run so that no pattern can hang the process.
 *
 * On V8 the pattern is checked with the linear-time engine (the `l` flag) and
 * run by the native engine with V8's fallback to the linear engine after
 * excessive backtracking; elsewhere it runs on `re2js`, a pure JavaScript port
 * of RE2. Either way matching time is linear in the input.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import * as v8 from "node:v8"
import { RE2JS } from "re2js"

/** Longest pattern accepted, in UTF-16 units. */
export const MAX_PATTERN_LENGTH = 1024

/** Why a pattern was refused. */
export class GrepPatternError extends Schema.TaggedError<GrepPatternError>()("GrepPatternError", {
  pattern: Schema.String,
  kind: Schema.Literal("invalid", "unsupported", "too-long", "empty"),
  reason: Schema.String
}) {
  override get message() {
    switch (this.kind) {
      case "unsupported":
        return `unsupported pattern ${JSON.stringify(this.pattern)}: ${this.reason}. Backreferences and lookaround are not supported; rewrite the pattern without them.`
      case "too-long":
        return `pattern is ${this.pattern.length} characters long; the limit is ${MAX_PATTERN_LENGTH}. Use a shorter pattern.`
      case "empty":
        return "the pattern is empty; give a regular expression to search for."
      default:
        return `invalid regular expression ${JSON.stringify(this.pattern)}: ${this.reason}`
    }
  }
}

/** A compiled pattern that tests one line at a time, or scans many lines at once. */
export interface Matcher {
  readonly pattern: string
  readonly engine: "v8" | "re2js"
  /** True when the line (without its line break) has a match. */
  readonly test: (line: string) => boolean
  /**
   * Start offsets (in `text`) of matches found by scanning a block of whole
   * lines at once; every line that matches on its own contains or overlaps
   * one of them, so it is a complete prefilter for `test`.
   */
  readonly candidates: ((text: string) => Iterable<readonly [start: number, end: number]>) | undefined
}

let v8Linear: boolean | undefined
/** Turns on V8's linear-time engine and its fallback after excessive backtracking; false where that is not possible. */
const enableV8Linear = (): boolean => {
  if (v8Linear !== undefined) return v8Linear
  try {
    v8.setFlagsFromString("--enable-experimental-regexp-engine")
    v8.setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks")
    new RegExp("a", "l" as string)
    v8Linear = true
  } catch {
    v8Linear = false
  }
  return v8Linear
}

const unsupportedByRe2 = /invalid or unsupported Perl syntax|invalid escape sequence: `?\\[1-9k]/

/** Compiles a pattern (JavaScript syntax; `ignoreCase` for case-insensitive matching). */
export const compile = (
  pattern: string,
  options: { readonly ignoreCase?: boolean | undefined; readonly engine?: "v8" | "re2js" | undefined } = {}
): Either.Either<Matcher, GrepPatternError> => {
  const fail = (kind: GrepPatternError["kind"], reason: string) =>
    Either.left(new GrepPatternError({ pattern, kind, reason }))
  if (pattern.length === 0) return fail("empty", "empty pattern")
  if (pattern.length > MAX_PATTERN_LENGTH) return fail("too-long", `longer than ${MAX_PATTERN_LENGTH} characters`)
  const flags = options.ignoreCase ? "i" : ""
  try {
    new RegExp(pattern, flags)
  } catch (e) {
    return fail("invalid", errorText(e))
  }
  // V8 falls back to its linear engine only for patterns without the `i`
  // flag, so case-insensitive searches run on re2js.
  const useV8 = options.engine !== "re2js" && enableV8Linear()
  if (useV8) {
    try {
      new RegExp(pattern, "l")
    } catch (e) {
      return fail("unsupported", errorText(e).includes("linear") ? "it needs backtracking" : errorText(e))
    }
  }
  if (useV8 && !options.ignoreCase) {
    const line = new RegExp(pattern, flags)
    const block = new RegExp(pattern, flags + "gm")
    return Either.right({
      pattern,
      engine: "v8",
      test: (s) => line.test(s),
      candidates: function*(text) {
        block.lastIndex = 0
        for (let m = block.exec(text); m !== null; m = block.exec(text)) {
          const end = m.index + m[0].length
          yield [m.index, end] as const
          if (m[0].length === 0) block.lastIndex = end + 1
        }
      }
    })
  }
  try {
    const re = RE2JS.compile(pattern, options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0)
    return Either.right({ pattern, engine: "re2js", test: (s) => re.matcher(s).find(), candidates: undefined })
  } catch (e) {
    const reason = errorText(e)
    return unsupportedByRe2.test(reason) || /\\[1-9]|\(\?<?[=!]/.test(pattern)
      ? fail("unsupported", reason)
      : fail("invalid", reason)
  }
}

const errorText = (e: unknown): string =>
  (e instanceof Error ? e.message : String(e)).replace(/^Invalid regular expression: /, "")
