/**
 * The scan every pattern engine runs: RE2 (the `re2js` port: a lazy DFA
 * with an NFA fallback, linear in the input) over a block of lines, first
 * over the whole block at once, then line by line only where the block
 * matched. Pure and synchronous; engines decide where it runs and when to
 * stop it. Public so that an engine on another thread (`@spillway/node`'s
 * pattern worker) runs exactly this scan.
 *
 * @since 0.1.0
 */
import { RE2JS } from "re2js"
import { sequenceSearch } from "./internal/bytes.js"
import * as Syntax from "./internal/pattern.js"

/** Longest pattern accepted, in UTF-16 units. */
export const MAX_PATTERN_LENGTH = 1024

/** Largest compiled pattern accepted, in RE2 instructions (counted repetitions are expanded). */
export const MAX_PROGRAM_SIZE = 20_000

/** A pattern compiled for block scans. */
export interface Compiled {
  /** Multi-line: `^` and `$` also match at line breaks, so a block has a match when one of its lines has. */
  readonly block: RE2JS
  readonly line: RE2JS
}

/** Compiles RE2 syntax; throws re2js's exception when it refuses. */
export const compile = (source: string, ignoreCase: boolean): Compiled => {
  const flags = ignoreCase ? RE2JS.CASE_INSENSITIVE : 0
  return { block: RE2JS.compile(source, flags | RE2JS.MULTILINE), line: RE2JS.compile(source, flags) }
}

/** What a scan found. */
export interface Found {
  /** For each matching line: its index in the block, and the offsets of its start and end in the text. */
  readonly matches: Array<number>
  /** Lines tested on their first `maxLineChars` characters only. */
  clipped: number
  /** More lines matched than the limit. */
  more: boolean
}

/**
 * Scans `text`, lines separated by `\n` (a final `\n` ends the last line,
 * it does not start another), for up to `limit` matching lines; each line
 * is tested on its first `maxLineChars` characters. `matches` holds three
 * numbers per match: line index, start, end.
 */
export const scan = (compiled: Compiled, text: string, limit: number, maxLineChars: number): Found => {
  const found: Found = { matches: [], clipped: 0, more: false }
  if (text.length === 0 || !compiled.block.test(text)) return found
  let index = 0
  for (let pos = 0; pos < text.length; index++) {
    const br = text.indexOf("\n", pos)
    const end = br === -1 ? text.length : br
    const clip = end - pos > maxLineChars
    if (clip) found.clipped++
    if (compiled.line.test(text.slice(pos, clip ? pos + maxLineChars : end))) {
      if (found.matches.length / 3 >= limit) {
        found.more = true
        break
      }
      found.matches.push(index, pos, end)
    }
    pos = end + 1
  }
  return found
}

/**
 * Where a pattern matches inside one line: up to `limit` non-empty
 * `[start, end)` spans in UTF-16 offsets, left to right, for highlighting a
 * line a scan found. Linear in the line's length, like the scan.
 */
export const spans = (compiled: Compiled, line: string, limit: number): Array<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  const m = compiled.line.matcher(line)
  while (out.length < limit && m.find()) {
    const start = m.start()
    const end = m.end()
    if (end > start) out.push([start, end])
  }
  return out
}

/** A checked pattern: its RE2 form, compiled, and the texts one of which every match contains. */
export interface Checked {
  readonly source: string
  readonly compiled: Compiled
  /** ASCII texts one of which every match contains (of either case with `ignoreCase`); undefined when there are none. */
  readonly literals: ReadonlyArray<string> | undefined
  /**
   * For each top-level alternative, every ASCII text all its matches
   * contain (`literals` holds the longest of each): what `prefilter` picks
   * the rarest from. Undefined when `literals` is.
   */
  readonly literalSets: ReadonlyArray<ReadonlyArray<string>> | undefined
}

/** Why a pattern was refused, in the words `Grep.GrepPatternError` carries. */
export interface Refusal {
  readonly kind: "invalid" | "unsupported" | "too-long" | "too-large" | "empty"
  readonly reason: string
}

const errorText = (e: unknown): string =>
  (e instanceof Error ? e.message : String(e)).replace(/^Invalid regular expression: /, "")

/**
 * Checks a pattern in JavaScript syntax and compiles it, without Effect:
 * what `Grep.compile` runs, for programs that load nothing else.
 */
export const check = (pattern: string, ignoreCase: boolean): Checked | Refusal => {
  if (typeof pattern !== "string" || pattern.length === 0) return { kind: "empty", reason: "empty pattern" }
  if (pattern.length > MAX_PATTERN_LENGTH) return { kind: "too-long", reason: `longer than ${MAX_PATTERN_LENGTH} characters` }
  // the syntax is JavaScript's: what JavaScript refuses is invalid (compiling does not run it)
  try {
    new RegExp(pattern)
  } catch (e) {
    return { kind: "invalid", reason: errorText(e) }
  }
  const refused = Syntax.refused(pattern)
  if (refused !== undefined) {
    const what = refused.construct === "backreference"
      ? "a backreference"
      : refused.construct === "lookahead" ? "a lookahead" : "a lookbehind"
    return { kind: "unsupported", reason: `it uses ${what} (${refused.text} at ${refused.index})` }
  }
  let source: string
  let compiled: Compiled
  try {
    source = RE2JS.translateRegExp(pattern)
    compiled = compile(source, ignoreCase)
  } catch (e) {
    const reason = errorText(e)
    if (/invalid repeat count/.test(reason)) {
      return {
        kind: "too-large",
        reason: `${reason.replace(/^error parsing regexp: /, "")}: a count may be at most 1000, nested counts multiplied together too`
      }
    }
    return { kind: "unsupported", reason: reason.replace(/^error parsing regexp: /, "") }
  }
  const size = compiled.block.programSize()
  if (size > MAX_PROGRAM_SIZE) return { kind: "too-large", reason: `it compiles to ${size} instructions; the limit is ${MAX_PROGRAM_SIZE}` }
  const literalSets = Syntax.requiredSets(pattern)
  return { source, compiled, literals: Syntax.requiredLiterals(pattern), literalSets }
}

/** True for a refusal from `check`. */
export const isRefusal = (c: Checked | Refusal): c is Refusal => "kind" in c

/**
 * Byte strings one of which every line that may match holds, chosen to be
 * found fast: each starts at the byte of its literal that is rarest in a
 * sample of the body, where a native search (which looks for the first
 * byte, then compares the rest) stops least often.
 */
export interface Prefilter {
  readonly needles: ReadonlyArray<Uint8Array>
}

/** Most byte strings a prefilter looks for (the case variants of its literals count one each). */
export const MAX_NEEDLES = 16

/** Bytes of the sample counted to rank bytes by how common they are. */
const SAMPLE_BYTES = 16 * 1024

/** Letters whose other case is also a character outside ASCII (K: U+212A, S: U+017F): a byte search misses those. */
const FOLDS_OUTSIDE_ASCII = "kKsS"

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/** Every spelling of `text` with its letters in either case. */
const caseVariants = (text: string): Array<string> => {
  let out = [""]
  for (const ch of text) {
    const lower = ch.toLowerCase()
    const upper = ch.toUpperCase()
    out = lower === upper ? out.map((s) => s + ch) : out.flatMap((s) => [s + lower, s + upper])
  }
  return out
}

/** A needle keeps at least this many bytes of its literal (all of a shorter one): a shorter one stops a search too often. */
const MIN_NEEDLE = 3

/** A needle for one literal: where it starts, and how common that byte is in the sample (lower is better). */
interface Start {
  readonly literal: string
  readonly at: number
  readonly weight: number
}

/**
 * The needles for `literals` (ASCII), ranked against `sample`, a part of
 * the body to be searched; undefined when no set of at most `MAX_NEEDLES`
 * is sure to find every line that matches (see also `inVain`). Each entry
 * stands for one alternative of the pattern: its literal, or every literal
 * all its matches contain (`Checked.literalSets`), of which the one whose
 * needle starts at the rarest byte is taken. A needle starts at the rarest
 * byte of its literal that leaves `MIN_NEEDLE` bytes after it. With
 * `ignoreCase` each needle is a short part of its literal (at most three
 * letters, fewer when the spellings would be too many; none of `k` or
 * `s`) in each spelling of its letters.
 */
export const prefilter = (
  literals: ReadonlyArray<string | ReadonlyArray<string>> | undefined,
  ignoreCase: boolean,
  sample: Uint8Array
): Prefilter | undefined => {
  if (literals === undefined || literals.length === 0) return undefined
  const counts = new Uint32Array(256)
  const counted = Math.min(sample.length, SAMPLE_BYTES)
  for (let i = 0; i < counted; i++) counts[sample[i]!]!++
  return needlesFor(literals, ignoreCase, counts, 3)
}

const needlesFor = (
  literals: ReadonlyArray<string | ReadonlyArray<string>>,
  ignoreCase: boolean,
  counts: Uint32Array,
  maxLetters: number
): Prefilter | undefined => {
  const weight = (c: number) =>
    ignoreCase && isLetter(c) ? counts[c | 0x20]! + counts[c & ~0x20]! : counts[c]!
  const allowed = (literal: string, i: number) => !(ignoreCase && FOLDS_OUTSIDE_ASCII.includes(literal[i]!))
  // where no byte that leaves `MIN_NEEDLE` may start one (`k1x` of either case), the first that may
  const startOf = (literal: string): Start | undefined => {
    let best = -1
    const last = Math.max(0, literal.length - MIN_NEEDLE)
    for (let i = 0; i <= last; i++) {
      if (allowed(literal, i) && (best === -1 || weight(literal.charCodeAt(i)) < weight(literal.charCodeAt(best)))) best = i
    }
    for (let i = last + 1; best === -1 && i < literal.length; i++) if (allowed(literal, i)) best = i
    return best === -1 ? undefined : { literal, at: best, weight: weight(literal.charCodeAt(best)) }
  }
  const needles: Array<string> = []
  for (const entry of literals) {
    let chosen: Start | undefined
    for (const literal of typeof entry === "string" ? [entry] : entry) {
      const start = startOf(literal)
      if (start === undefined) continue
      if (
        chosen === undefined || start.weight < chosen.weight ||
        (start.weight === chosen.weight && literal.length - start.at > chosen.literal.length - chosen.at)
      ) chosen = start
    }
    if (chosen === undefined) return undefined
    const { at, literal } = chosen
    if (!ignoreCase) {
      needles.push(literal.slice(at))
      continue
    }
    let end = at
    for (let letters = 0; end < literal.length && !FOLDS_OUTSIDE_ASCII.includes(literal[end]!); end++) {
      if (isLetter(literal.charCodeAt(end)) && ++letters > maxLetters) break
    }
    needles.push(...caseVariants(literal.slice(at, end)))
  }
  if (needles.length > MAX_NEEDLES) {
    return ignoreCase && maxLetters > 1 ? needlesFor(literals, ignoreCase, counts, maxLetters - 1) : undefined
  }
  return { needles: [...new Set(needles)].map((n) => Uint8Array.from(n, (ch) => ch.charCodeAt(0))) }
}

/** Lines a sample needs for `inVain` to judge by it, and the most it looks at. */
const SAMPLE_LINES = 16
const MAX_SAMPLE_LINES = 32
/** Characters of each sampled line a test looks at: judging costs a search little, whatever the pattern. */
export const SAMPLE_LINE_CHARS = 128

/** The first lines of a sample, and those of them that hold a needle (see `sampled`). */
export interface Sampled {
  readonly lines: number
  /** The lines holding a needle, each cut to its first `SAMPLE_LINE_CHARS` characters, to test against the pattern. */
  readonly candidates: ReadonlyArray<string>
}

/**
 * The sample's first lines (up to `MAX_SAMPLE_LINES`) and those among them
 * that hold a needle; undefined when it has fewer than `SAMPLE_LINES`.
 * A search tests the candidates as it tests lines (on its pattern engine,
 * with its deadline) and asks `inVain` whether to keep the needles.
 */
export const sampled = (p: Prefilter, sample: Uint8Array): Sampled | undefined => {
  let end = 0
  let lines = 0
  for (; lines < MAX_SAMPLE_LINES; lines++) {
    const br = sample.indexOf(10, end)
    if (br === -1) break
    end = br + 1
  }
  if (lines < SAMPLE_LINES) return undefined
  const decoder = new TextDecoder()
  const candidates: Array<string> = []
  eachCandidate(p, sample.subarray(0, end), 0, (_, start, stop) => {
    candidates.push(decoder.decode(sample.subarray(start, Math.min(stop, start + SAMPLE_LINE_CHARS * 4))).slice(0, SAMPLE_LINE_CHARS))
    return true
  })
  return { lines, candidates }
}

/**
 * Whether more than half of the sampled lines hold a needle and do not
 * match (`matching` of the candidates do): a search that decodes and tests
 * each such line alone then costs more than one that tests whole blocks at
 * once (`.ts` in every line of a build log, for `[0-9]{7}[.]ts`). Lines
 * that match are not in vain: a search stops once it has found enough of
 * them. A line that matches only past its first `SAMPLE_LINE_CHARS`
 * characters counts as one in vain, which costs speed, never a match.
 */
export const inVain = (s: Sampled, matching: number): boolean => 2 * (s.candidates.length - matching) > s.lines

/**
 * A search of `block` for its lines that hold a needle: `next(from)` is the
 * offset of the first needle at or past `from`, or -1. Each needle is
 * looked for again only once the search has passed where it was last found.
 */
export const finder = (p: Prefilter, block: Uint8Array): (from: number) => number => {
  const search = sequenceSearch(block)
  const found = p.needles.map(() => -2)
  return (from) => {
    let first = -1
    for (let k = 0; k < p.needles.length; k++) {
      let at = found[k]!
      if (at !== -1 && at < from) found[k] = at = search(p.needles[k]!, from)
      if (at !== -1 && (first === -1 || at < first)) first = at
    }
    return first
  }
}

/** Line breaks in `buf[from, to)`. */
export const countBreaks = (buf: Uint8Array, from: number, to: number): number => {
  let n = 0
  for (let at = buf.indexOf(10, from); at !== -1 && at < to; at = buf.indexOf(10, at + 1)) n++
  return n
}

/**
 * Lines in `buf[0, end)` (`end` a line start), where `buf` holds the body
 * from byte `blockStart` and its first line is line `firstLine`: counted
 * from the nearest checkpoint of the body's line index inside the block
 * when there is one (`checkpoints[k]` is where line `k * every + 1`
 * starts), else by counting breaks.
 */
export const linesBefore = (
  index: { readonly every: number; readonly checkpoints: ReadonlyArray<number> },
  buf: Uint8Array,
  blockStart: number,
  firstLine: number,
  end: number
): number => {
  const absolute = blockStart + end
  let lo = 0
  let hi = index.checkpoints.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (index.checkpoints[mid]! > absolute) hi = mid - 1
    else lo = mid
  }
  const cp = index.checkpoints[lo]!
  if (cp >= blockStart) return lo * index.every + 1 + countBreaks(buf, cp - blockStart, end) - firstLine
  return countBreaks(buf, 0, end)
}

/**
 * Visits each line of `block` (whole lines, its first one line `firstLine`)
 * that holds one of the prefilter's needles, in order, with its number and
 * its bounds (without the line break); `visit` returns false to stop.
 */
export const eachCandidate = (
  p: Prefilter,
  block: Uint8Array,
  firstLine: number,
  visit: (line: number, start: number, end: number) => boolean
): void => {
  const next = finder(p, block)
  let counted = 0
  let line = firstLine
  for (let at = next(0); at !== -1;) {
    const s = block.lastIndexOf(10, at) + 1
    const br = block.indexOf(10, at)
    const e = br === -1 ? block.length : br
    line += countBreaks(block, counted, s)
    counted = s
    if (!visit(line, s, e)) return
    at = e + 1 < block.length ? next(e + 1) : -1
  }
}
