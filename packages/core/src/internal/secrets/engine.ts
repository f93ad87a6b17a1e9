import type { SecretRule } from "../../Secrets.js"
import { type AnchorScan, type AnchorSpec, extendAnchorScan, makeAnchorScan } from "./anchors.js"
import { dumpForms, type DumpLine, parseDumpLine, runAt as dumpRunAt } from "./hexDump.js"
import { MAX_PREFIX_BYTES, type PrefixShape, shapeOf } from "./linePrefix.js"
import { shannonEntropy } from "./lookalike.js"
import { addRepeats, emptyRepeats, isRepeatable, keyOf, type Learned, MAX_REPEATED_VALUES, type RepeatSet } from "./repeated.js"

/** A block (a private key) still open at the end of a scan, to carry into the next window of a stream. */
export interface OpenBlock {
  /** The block rule, by its index in the engine's rules. */
  readonly rule: number
  /** Body lines masked so far. */
  readonly lines: number
  /** The text before the opening marker on its line, when it is a log prefix the body lines carry too (see `linePrefix`). */
  readonly prefix?: string | undefined
  /** Lines of the same log passed over since the last body line. */
  readonly skipped?: number | undefined
}

/** A block found in a scan: where its opening marker starts (-1 for one carried in) and where it closed (-1 when it runs on past the last whole line). */
export interface BlockRun extends OpenBlock {
  readonly openedAt: number
  readonly closedAt: number
}

/** What a scan found: ranges to mask (flat start/end pairs), where watched literals begin, and the blocks it walked. */
export interface Findings {
  readonly ranges: ReadonlyArray<number>
  readonly marks: ReadonlyArray<number>
  readonly blocks: ReadonlyArray<BlockRun>
  /** Values rules masked in this scan that are worth looking for again (see `repeated`), for a stream to remember. */
  readonly learned?: ReadonlyArray<Learned>
}

/** Where a scan starts: blocks open before it, where they resume, whether byte 0 starts a line, and whether the text ends here. */
export interface ScanState {
  readonly carried?: ReadonlyArray<OpenBlock>
  readonly resumeAt?: number
  readonly startsLine?: boolean
  readonly final?: boolean
  /** Values masked earlier in the stream: every copy of them in these bytes is masked too. */
  readonly repeats?: RepeatSet
}

/** A compiled set of rules and known values that finds what to mask in bytes. */
export interface Engine {
  readonly scan: (bytes: Uint8Array, state?: ScanState) => Findings
}

/**
 * A literal to mask wherever it occurs; or (`wrapped`) wherever its parts
 * are the lines of a wrapped encoding: a line that ends with its start, a
 * line that starts with its end, a whole line inside it; or (`dump`, the
 * text being a value's bytes) wherever four of its bytes or more in a row
 * sit in a hex dump line, with their ASCII column.
 */
export interface Literal {
  readonly text: string
  readonly at: "anywhere" | "wrapped" | "dump"
  /** For a wrapped literal of hex digits: found in either case. */
  readonly ignoreCase?: boolean | undefined
}

/** A rule compiled for scanning: its patterns with the flags a scan needs, and its checks. */
interface Compiled {
  readonly re: RegExp
  readonly group: number
  readonly minEntropy: number
  readonly allow: ((value: string) => boolean) | undefined
  readonly locate: ((line: string, at: number) => readonly [number, number] | undefined) | undefined
  readonly end: RegExp | undefined
  /** With indices when the rule masks a group of each body line. */
  readonly body: RegExp | undefined
  readonly maxLines: number
  readonly maxLineBytes: number
}

const NEWLINE = 0x0a
const RETURN = 0x0d
/** How far a rule's match may reach from where it starts, and how much of a line a rule sees either side. */
const REACH = 8192
/** Longer lines are never part of a key block's body, unless its rule says otherwise. */
const MAX_BODY_LINE = 512

/** The latin1 view of `bytes[start, end)`: one character per byte, which the rule patterns are written for. */
export const latin1 = (bytes: Uint8Array, start = 0, end = bytes.length): string => {
  let out = ""
  for (let i = start; i < end; i += 8192) {
    out += String.fromCharCode.apply(null, bytes.subarray(i, Math.min(end, i + 8192)) as unknown as Array<number>)
  }
  return out
}

const flagsOf = (pattern: RegExp, extra: string): string => pattern.flags.replace(/[dgy]/g, "") + extra

const EMPTY_FINDINGS: Findings = { ranges: [], marks: [], blocks: [] }

// What an anchor belongs to.
const RULE = 0
const ANYWHERE = 1
const WATCHED = 2
const WRAPPED = 3
const DUMP = 4

/** A part of a wrapped literal that one anchor stands for: the literal's bytes, and where in it the anchor starts. */
interface Piece {
  readonly text: Uint8Array
  readonly offset: number
  /** Compared ignoring the case of ASCII letters. */
  readonly fold: boolean
  /** The literal's last part grown, shared by its pieces (see `wrappedAt`). */
  readonly last: Grown
}

/** A part of a literal grown in a scan: the scan, where the literal would start in its bytes (for a dump, where the line starts), and the part's start and end. */
interface Grown {
  scan: number
  shift: number
  start: number
  end: number
}

const grown = (): Grown => ({ scan: -1, shift: 0, start: 0, end: -1 })
/** Numbers the scans, so that what a literal's pieces share from one scan is not taken for another's. */
let scans = 0

/** Anchors of a wrapped literal are its parts of this many bytes, every this many bytes (and its end): a line ending with its start, or starting with its end, is masked from this length on. */
const PIECE_BYTES = 8
/** A whole line inside a wrapped literal is masked from this length on. */
const MIN_INSIDE_LINE = 16
/** Bytes of a value in a row that a hex dump line must show for them to be found. */
const DUMP_RUN = 4

/** What the one anchor pass looks for, and, by anchor index, what each anchor belongs to (a kind above, and a rule index or a length). */
interface AnchorPlan {
  readonly specs: Array<AnchorSpec>
  readonly ownerKind: Array<number>
  readonly ownerValue: Array<number>
  /** Parts of wrapped literals and of values in dumps, which their anchors' values index. */
  readonly pieces: Array<Piece>
}

const addAnchor = (plan: AnchorPlan, text: string, ignoreCase: boolean, kind: number, value: number): void => {
  plan.specs.push({ text, ignoreCase })
  plan.ownerKind.push(kind)
  plan.ownerValue.push(value)
}

/** Compiles a rule: sticky when it is run only at its anchors, global when over the whole text, with indices when it masks a group. */
const compile = (rule: SecretRule, anchored: boolean): Compiled => {
  const group = rule.group ?? 0
  return {
    re: new RegExp(rule.pattern.source, flagsOf(rule.pattern, (anchored ? "y" : "g") + (group > 0 ? "d" : ""))),
    group,
    minEntropy: rule.minEntropy ?? 0,
    allow: rule.allow,
    locate: rule.locate,
    end: rule.end === undefined ? undefined : new RegExp(rule.end.source, flagsOf(rule.end, "g")),
    body: rule.end === undefined || rule.body === undefined ? undefined : new RegExp(rule.body.source, flagsOf(rule.body, group > 0 ? "d" : "")),
    maxLines: rule.maxLines ?? 4096,
    maxLineBytes: Math.min(REACH, Math.max(1, rule.maxLineBytes ?? MAX_BODY_LINE))
  }
}

/**
 * Compiles every rule into `compiled`, and adds the anchors of those that
 * have only anchors of two bytes or more to the plan; returns the indexes of
 * the others, which scan the whole text.
 */
const planRules = (plan: AnchorPlan, rules: ReadonlyArray<SecretRule>, compiled: Array<Compiled>): Array<number> => {
  const unanchored: Array<number> = []
  rules.forEach((rule, index) => {
    const anchors = (rule.anchors ?? []).filter((anchor) => anchor.length >= 2)
    const anchored = anchors.length > 0 && anchors.length === (rule.anchors ?? []).length
    compiled.push(compile(rule, anchored))
    if (!anchored) {
      unanchored.push(index)
      return
    }
    const ignoreCase = rule.pattern.flags.includes("i")
    for (const text of anchors) addAnchor(plan, text, ignoreCase, RULE, index)
  })
  return unanchored
}

/** Bytes of a latin1 string. */
const bytesOf = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0))

/** A wrapped literal's anchors: its parts of `PIECE_BYTES` every `PIECE_BYTES`, and its last ones. */
const planWrapped = (plan: AnchorPlan, text: string, fold: boolean): void => {
  if (text.length < PIECE_BYTES) return
  const bytes = bytesOf(fold ? text.toLowerCase() : text)
  const last = text.length - PIECE_BYTES
  const shared = grown()
  for (let offset = 0; ; offset = Math.min(last, offset + PIECE_BYTES)) {
    plan.pieces.push({ text: bytes, offset, fold, last: shared })
    addAnchor(plan, text.slice(offset, offset + PIECE_BYTES), fold, WRAPPED, plan.pieces.length - 1)
    if (offset === last) break
  }
}

/**
 * A value's anchors in hex dumps: its runs of `DUMP_RUN` bytes every
 * `DUMP_RUN` bytes, and its last ones, as the dump tools space them. A line
 * shows the value's first bytes, or its last, or a whole line of it: a run
 * from its start or to its end holds the first or the last anchor, and a
 * whole line one of the others.
 */
const planDump = (plan: AnchorPlan, text: string): void => {
  const bytes = bytesOf(text)
  const last = bytes.length - DUMP_RUN
  if (last < 0) return
  const shared = grown()
  for (let offset = 0; ; offset = Math.min(last, offset + DUMP_RUN)) {
    plan.pieces.push({ text: bytes, offset, fold: false, last: shared })
    for (const form of dumpForms(bytes.subarray(offset))) addAnchor(plan, form, true, DUMP, plan.pieces.length - 1)
    if (offset === last) break
  }
}

/** Adds the literal forms of known values to the plan, each once; a literal is found by itself, so it needs two bytes or more. */
const planLiterals = (plan: AnchorPlan, literals: ReadonlyArray<Literal>): void => {
  const seen = new Set<string>()
  for (const literal of literals) {
    const key = `${literal.at}:${literal.text}`
    if (literal.text.length < 2 || seen.has(key)) continue
    seen.add(key)
    if (literal.at === "wrapped") planWrapped(plan, literal.text, literal.ignoreCase === true)
    else if (literal.at === "dump") planDump(plan, literal.text)
    else addAnchor(plan, literal.text, false, ANYWHERE, literal.text.length)
  }
}

/** Adds the literals a caller wants to know the positions of, found in the same pass. */
const planWatched = (plan: AnchorPlan, watched: ReadonlyArray<string>): void => {
  for (const literal of new Set(watched)) {
    if (literal.length >= 2) addAnchor(plan, literal, false, WATCHED, 0)
  }
}

/** What an engine is made of, shared by all its scans. */
interface Tables {
  readonly compiled: ReadonlyArray<Compiled>
  /** Rules that scan the whole text. */
  readonly unanchored: ReadonlyArray<number>
  readonly ownerKind: ReadonlyArray<number>
  readonly ownerValue: ReadonlyArray<number>
  readonly pieces: ReadonlyArray<Piece>
  readonly anchorScan: AnchorScan | undefined
  /** By the set of values a stream carries, the anchor scan that finds them too (their anchors numbered after the engine's). */
  readonly repeatScans: WeakMap<RepeatSet, AnchorScan>
  /** Per rule, the position it was last run at in this scan: two anchors of one rule at one place run it once. */
  readonly tried: Float64Array
  readonly blockRules: ReadonlyArray<number>
}

/** An opening marker of a block rule, found in a scan. */
interface Opener {
  readonly rule: number
  readonly start: number
  readonly end: number
}

/** One scan: its input, what it found so far, and the text the rules see at the current anchor. */
interface Scan {
  readonly tables: Tables
  readonly bytes: Uint8Array
  readonly n: number
  readonly final: boolean
  readonly startsLine: boolean
  readonly ranges: Array<number>
  readonly marks: Array<number>
  readonly openers: Array<Opener>
  /** Start and end pairs of what single-line rules masked: the values that may be repeated. */
  readonly values: Array<number>
  /** Where the values a stream carries occur: pairs of the value's index in the set and where it starts. */
  readonly repeated: Array<number>
  /** `bytes[windowStart, windowEnd)` as latin1: a line, clipped to REACH either side of where a rule runs. */
  windowStart: number
  windowEnd: number
  windowText: string
  /** Whether the window's start and end are the line's own (not clipped). */
  startIsLine: boolean
  endIsLine: boolean
  /** Bytes known to hold no line break (inside a long line), searched once. */
  unbrokenStart: number
  unbrokenEnd: number
  /** A long line's text from `regionStart`, which the windows clipped out of it are cut from. */
  region: string
  regionStart: number
  /** The last hex dump line read, and where it starts. */
  dumpStart: number
  dumpLine: DumpLine | undefined
  /** This scan's number (see `Grown`). */
  readonly id: number
}

/**
 * Builds an engine from pattern rules and literal forms of known values.
 * Rules with anchors (of two bytes or more) run only where an anchor occurs,
 * found in one pass with the literals; other rules scan the whole text.
 * Each rule sees the line its match is in, so what a scan finds in a line
 * depends on nothing before that line, key blocks aside.
 */
export const makeEngine = (
  rules: ReadonlyArray<SecretRule>,
  literals: ReadonlyArray<Literal>,
  watched: ReadonlyArray<string> = []
): Engine => {
  const plan: AnchorPlan = { specs: [], ownerKind: [], ownerValue: [], pieces: [] }
  const compiled: Array<Compiled> = []
  const unanchored = planRules(plan, rules, compiled)
  planLiterals(plan, literals)
  planWatched(plan, watched)
  const tables: Tables = {
    compiled,
    unanchored,
    ownerKind: plan.ownerKind,
    ownerValue: plan.ownerValue,
    pieces: plan.pieces,
    anchorScan: plan.specs.length === 0 ? undefined : makeAnchorScan(plan.specs),
    repeatScans: new WeakMap(),
    tried: new Float64Array(compiled.length),
    blockRules: compiled.flatMap((rule, index) => (rule.end === undefined ? [] : [index]))
  }
  return { scan: (bytes, state = {}) => scan(tables, bytes, state) }
}

/** Finds what to mask in `bytes`: rules at their anchors, literals, rules over the whole text, then key blocks. */
const scan = (tables: Tables, bytes: Uint8Array, state: ScanState): Findings => {
  const s: Scan = {
    tables,
    bytes,
    n: bytes.length,
    final: state.final ?? true,
    startsLine: state.startsLine ?? true,
    ranges: [],
    marks: [],
    openers: [],
    values: [],
    repeated: [],
    windowStart: -1,
    windowEnd: -1,
    windowText: "",
    startIsLine: false,
    endIsLine: false,
    unbrokenStart: 0,
    unbrokenEnd: -1,
    region: "",
    regionStart: 0,
    dumpStart: -1,
    dumpLine: undefined,
    id: scans++
  }
  const repeats = state.repeats ?? emptyRepeats()
  const anchorScan = repeats.values.length === 0 ? tables.anchorScan : repeatScan(tables, repeats)
  if (anchorScan !== undefined) scanAnchors(s, anchorScan)
  if (tables.unanchored.length > 0) {
    const source = latin1(bytes)
    for (const index of tables.unanchored) scanWhole(s, index, source)
  }
  const learned = s.values.length > 0 || repeats.values.length > 0 ? maskRepeats(s, repeats) : undefined
  const carried = state.carried ?? []
  if (s.ranges.length === 0 && s.openers.length === 0 && carried.length === 0) {
    return s.marks.length === 0 ? EMPTY_FINDINGS : { ranges: s.ranges, marks: s.marks, blocks: [] }
  }
  const blocks = s.openers.length > 0 || carried.length > 0 ? walkBlocks(s, carried, state.resumeAt ?? 0) : []
  return learned === undefined ? { ranges: s.ranges, marks: s.marks, blocks } : { ranges: s.ranges, marks: s.marks, blocks, learned }
}

/**
 * The engine's anchor scan with the values of `repeats` as anchors too:
 * one per set, made from the engine's keys when a scan first carries the
 * set (a stream's set changes only when it learns values).
 */
const repeatScan = (tables: Tables, repeats: RepeatSet): AnchorScan => {
  let found = tables.repeatScans.get(repeats)
  if (found === undefined) {
    found = extendAnchorScan(tables.anchorScan, repeats.values.map((value) => ({ text: keyOf(value), ignoreCase: false })))
    tables.repeatScans.set(repeats, found)
  }
  return found
}

/**
 * Masks every copy, in the scan's bytes, of the values masked earlier in
 * the stream (found in the anchor pass), and every copy after the first
 * masked one of those rules masked in this scan that are worth looking for
 * again (see `repeated`); returns the latter with where each was first
 * masked (undefined when there are none).
 */
const maskRepeats = (s: Scan, repeats: RepeatSet): ReadonlyArray<Learned> | undefined => {
  for (let i = 0; i < s.repeated.length; i += 2) {
    const start = s.repeated[i + 1]!
    s.ranges.push(start, start + repeats.values[s.repeated[i]!]!.length)
  }
  const fresh: Array<Learned> = []
  // by value, where it is first masked in this scan
  const seen = new Map<string, number>()
  if (repeats.values.length < MAX_REPEATED_VALUES) {
    // in the order they occur, as a stream meets them, as long as the set has room
    const order: Array<number> = []
    for (let i = 0; i < s.values.length; i += 2) order.push(i)
    order.sort((a, b) => s.values[a]! - s.values[b]!)
    const known = repeats.keys
    for (const i of order) {
      if (repeats.values.length + seen.size >= MAX_REPEATED_VALUES) break
      const start = s.values[i]!
      const end = s.values[i + 1]!
      if (!isRepeatable(s.bytes, start, end)) continue
      const value = s.bytes.slice(start, end)
      const key = latin1(value)
      if (known.has(key)) continue
      fresh.push({ value, start })
      if (!seen.has(key)) seen.set(key, start)
    }
  }
  if (fresh.length === 0) return undefined
  // a value first masked in this scan is masked again after its first place, found in a search
  // of their own: only scans that learn values make one, at most `MAX_REPEATED_VALUES` a stream
  const set = addRepeats(emptyRepeats(), fresh.map((learned) => learned.value))
  const first = set.values.map((value) => seen.get(keyOf(value))!)
  set.find(s.bytes, (index, start, end) => {
    if (start > first[index]!) s.ranges.push(start, end)
  })
  return fresh
}

/** How much of a long line is made into one string at a time, for the windows clipped out of it. */
const REGION = 32 * REACH

/** Makes the scan's window the text a rule sees at `p`, unless it is already: one string per line. */
const windowAt = (s: Scan, p: number): void => {
  if (
    p >= s.windowStart && p < s.windowEnd && (s.startIsLine || p - s.windowStart >= REACH) && (s.endIsLine || s.windowEnd - p >= REACH)
  ) {
    return
  }
  const bytes = s.bytes
  const n = s.n
  const low = Math.max(0, p - REACH)
  const high = Math.min(n, p + REACH)
  // inside a long line, the bytes around `p` were searched for a line break already
  const known = low >= s.unbrokenStart && high <= s.unbrokenEnd
  const back = known ? -1 : bytes.subarray(low, p).lastIndexOf(NEWLINE)
  const ahead = known ? -1 : bytes.subarray(p, high).indexOf(NEWLINE)
  s.startIsLine = back !== -1 || low === 0
  s.endIsLine = ahead !== -1 || high === n
  s.windowStart = back === -1 ? low : low + back + 1
  s.windowEnd = ahead === -1 ? high : p + ahead
  if (s.startIsLine && s.endIsLine) {
    s.windowText = latin1(bytes, s.windowStart, s.windowEnd)
    return
  }
  // A window clipped out of a long line: every anchor further on needs one of its own, cut from a
  // longer text made once (a slice shares that text's memory), so a long line costs no more than short ones.
  if (back === -1 && ahead === -1) {
    const joins = low <= s.unbrokenEnd && s.unbrokenStart <= high
    s.unbrokenStart = joins ? Math.min(s.unbrokenStart, low) : low
    s.unbrokenEnd = joins ? Math.max(s.unbrokenEnd, high) : high
  }
  if (s.windowStart < s.regionStart || s.windowEnd > s.regionStart + s.region.length) {
    s.regionStart = s.windowStart
    s.region = latin1(bytes, s.windowStart, Math.min(n, s.windowStart + REGION))
  }
  s.windowText = s.region.slice(s.windowStart - s.regionStart, s.windowEnd - s.regionStart)
}

/** Masks what a rule's match (in `text`, which starts at `base`) says to, unless its value is too plain or allowed. */
const accept = (s: Scan, rule: Compiled, match: RegExpExecArray, base: number, text: string): void => {
  let start = match.index
  let end = start + match[0].length
  if (rule.group > 0) {
    const span = match.indices?.[rule.group]
    if (span === undefined) return
    start = span[0]
    end = span[1]
  }
  if (end <= start) return
  if (rule.minEntropy > 0 || rule.allow !== undefined) {
    const value = text.slice(start, end)
    if (rule.minEntropy > 0 && shannonEntropy(value) < rule.minEntropy) return
    if (rule.allow !== undefined && rule.allow(value)) return
  }
  s.ranges.push(base + start, base + end)
  s.values.push(base + start, base + end)
}

/** Masks what `locate` finds in `line` (which starts at `base`) for a match at `at` in it. */
const located = (s: Scan, rule: Compiled, line: string, base: number, at: number): void => {
  const found = rule.locate!(line, at)
  if (found !== undefined && found[1] > found[0]) {
    s.ranges.push(base + found[0], base + found[1])
    s.values.push(base + found[0], base + found[1])
  }
}

/** Runs an anchored rule where one of its anchors is, in the window around it: a match must start there. */
const runAt = (s: Scan, index: number, position: number): void => {
  const rule = s.tables.compiled[index]
  windowAt(s, position)
  const at = position - s.windowStart
  rule.re.lastIndex = at
  const match = rule.re.exec(s.windowText)
  if (match === null || match.index !== at) return
  if (rule.end !== undefined) s.openers.push({ rule: index, start: position, end: position + match[0].length })
  else if (rule.locate !== undefined) located(s, rule, s.windowText, s.windowStart, at)
  else accept(s, rule, match, s.windowStart, s.windowText)
}

/** Whether `end` ends a line; the end of the bytes does only when the text ends there. */
const atLineEnd = (s: Scan, end: number): boolean => {
  const bytes = s.bytes
  const n = s.n
  return end === n ? s.final : bytes[end] === NEWLINE || (bytes[end] === RETURN && (end + 1 === n ? s.final : bytes[end + 1] === NEWLINE))
}

/** Whether `start` starts a line. */
const atLineStart = (s: Scan, start: number): boolean => (start === 0 ? s.startsLine : s.bytes[start - 1] === NEWLINE)

/** What an anchor found at `position` means: a rule to run there, a watched literal's mark, or a literal to mask where it stands or as far as it goes. */
const onAnchor = (s: Scan, anchor: number, position: number): void => {
  const tables = s.tables
  if (anchor >= tables.ownerKind.length) {
    // a value the stream carries (see `repeatScan`)
    s.repeated.push(anchor - tables.ownerKind.length, position)
    return
  }
  const kind = tables.ownerKind[anchor]
  const value = tables.ownerValue[anchor]
  if (kind === RULE) {
    if (tables.tried[value] !== position) {
      tables.tried[value] = position
      runAt(s, value, position)
    }
  } else if (kind === WATCHED) {
    s.marks.push(position)
  } else if (kind === WRAPPED) {
    wrappedAt(s, tables.pieces[value]!, position)
  } else if (kind === DUMP) {
    dumpAt(s, tables.pieces[value]!, position)
  } else if (kind === ANYWHERE) {
    s.ranges.push(position, position + value)
  }
}

const exactAt = (bytes: Uint8Array, i: number): number => bytes[i]!
const lowerAt = (bytes: Uint8Array, i: number): number => {
  const byte = bytes[i]!
  return byte >= 65 && byte <= 90 ? byte | 0x20 : byte
}

/**
 * Masks the part of a wrapped literal found at `position` (where the
 * piece's anchor is), grown both ways as far as the literal and the line
 * go: when it starts the line or the literal, and ends the line or the
 * literal (a whole line inside it from `MIN_INSIDE_LINE` bytes).
 */
const wrappedAt = (s: Scan, piece: Piece, position: number): void => {
  const { bytes, n } = s
  const text = piece.text
  // the other anchors of a part grown find the same part: it is grown once
  const shift = position - piece.offset
  const seen = piece.last
  if (seen.scan === s.id && seen.shift === shift && position >= seen.start && position < seen.end) return
  // hex in either case: its letters compared in lower case
  const at = piece.fold ? lowerAt : exactAt
  let a = position
  let ja = piece.offset
  while (ja > 0 && a > 0 && at(bytes, a - 1) === text[ja - 1]) {
    a--
    ja--
  }
  let b = position + PIECE_BYTES
  let jb = piece.offset + PIECE_BYTES
  while (jb < text.length && b < n && at(bytes, b) === text[jb]) {
    b++
    jb++
  }
  seen.scan = s.id
  seen.shift = shift
  seen.start = a
  seen.end = b
  const starts = ja === 0 || atLineStart(s, a)
  const ends = jb === text.length || atLineEnd(s, b)
  if (!starts || !ends || (ja > 0 && jb < text.length && b - a < MIN_INSIDE_LINE)) return
  s.ranges.push(a, b)
}

/**
 * Masks a known value's bytes in a hex dump line, found by four of them
 * at `position`: the digits of every byte of the run they are part of in
 * the line's hex area, and the run's characters in its ASCII column.
 */
const dumpAt = (s: Scan, piece: Piece, position: number): void => {
  windowAt(s, position)
  if (!s.startIsLine || !s.endIsLine) return
  // the anchors of one run find the same line: it is read once
  if (s.dumpStart !== s.windowStart) {
    s.dumpStart = s.windowStart
    s.dumpLine = parseDumpLine(s.windowText)
  }
  const line = s.dumpLine
  if (line === undefined) return
  const entry = line.at.indexOf(position - s.windowStart)
  if (entry === -1) return
  const run = dumpRunAt(line, entry, piece.text, piece.offset)
  if (run === undefined) return
  // the other anchors of the run find it again: it is masked once
  const seen = piece.last
  if (seen.scan === s.id && seen.shift === s.windowStart && seen.start === run[0] && seen.end === run[1]) return
  seen.scan = s.id
  seen.shift = s.windowStart
  seen.start = run[0]
  seen.end = run[1]
  const base = s.windowStart
  const text = s.windowText
  for (let e = run[0]; e < run[1]; e++) {
    s.ranges.push(base + line.at[e]!, base + line.at[e]! + 2)
    if (line.ascii === -1) continue
    const at = line.ascii + e
    const c = text.charCodeAt(at)
    const shown = line.values[e]! >= 0x20 && line.values[e]! < 0x7f ? line.values[e]! : 0x2e
    if (at < text.length && c === shown) s.ranges.push(base + at, base + at + 1)
  }
}

/** The one pass over the bytes for every anchor: anchored rules, literals and watched literals. */
const scanAnchors = (s: Scan, anchorScan: AnchorScan): void => {
  s.tables.tried.fill(-1)
  anchorScan(s.bytes, (anchor, position) => onAnchor(s, anchor, position))
}

/** Runs a rule without anchors over the whole text (`source`, the bytes as latin1), trying a match at every place one starts. */
const scanWhole = (s: Scan, index: number, source: string): void => {
  const rule = s.tables.compiled[index]
  rule.re.lastIndex = 0
  let match: RegExpExecArray | null
  while ((match = rule.re.exec(source)) !== null) {
    rule.re.lastIndex = match.index + 1
    if (rule.end !== undefined) {
      if (match[0].length > 0) s.openers.push({ rule: index, start: match.index, end: match.index + match[0].length })
    } else if (rule.locate !== undefined) {
      const lineStart = source.lastIndexOf("\n", match.index - 1) + 1
      const lineEnd = source.indexOf("\n", match.index)
      located(s, rule, source.slice(lineStart, lineEnd === -1 ? source.length : lineEnd), lineStart, match.index - lineStart)
    } else {
      accept(s, rule, match, 0, source)
    }
  }
}

/**
 * Walks the key blocks of each block rule in order: first one carried in
 * from an earlier window (resuming at `resumeAt`), then each opener found
 * after the previous block closed; returns them all.
 */
const walkBlocks = (s: Scan, carried: ReadonlyArray<OpenBlock>, resumeAt: number): Array<BlockRun> => {
  const blocks: Array<BlockRun> = []
  for (const index of s.tables.blockRules) {
    const rule = s.tables.compiled[index]
    let from = 0
    // where this rule's blocks open: a line of the log that opens another ends the one before
    const starts = s.openers.flatMap((o) => (o.rule === index ? [o.start] : [])).sort((a, b) => a - b)
    const previous = carried.find((c) => c.rule === index)
    if (previous !== undefined) {
      const run = walk(s, rule, index, -1, resumeAt, previous, starts)
      blocks.push(run)
      from = run.closedAt === -1 ? s.n : run.closedAt
    }
    for (const opener of s.openers) {
      if (opener.rule !== index || opener.start < from) continue
      const run = walk(s, rule, index, opener.start, opener.end, { rule: index, lines: 0, prefix: prefixBefore(s, opener.start) }, starts)
      blocks.push(run)
      from = run.closedAt === -1 ? s.n : run.closedAt
    }
  }
  return blocks
}

/**
 * The text before an opening marker at `start` on its line, when the line
 * starts in the bytes (or the bytes start a line) within a prefix's reach;
 * undefined otherwise, or when it is empty.
 */
const prefixBefore = (s: Scan, start: number): string | undefined => {
  if (start === 0) return undefined
  const low = Math.max(0, start - MAX_PREFIX_BYTES - 1)
  const br = s.bytes.subarray(low, start).lastIndexOf(NEWLINE)
  if (br === -1 && (low > 0 || !s.startsLine)) return undefined
  const lineStart = br === -1 ? 0 : low + br + 1
  return lineStart < start ? latin1(s.bytes, lineStart, start) : undefined
}

/**
 * Walks a block from `start` (right after its opening marker, or where a
 * carried block resumes), masking its body; returns where it closed.
 */
const walk = (
  s: Scan,
  rule: Compiled,
  index: number,
  openedAt: number,
  start: number,
  from: OpenBlock,
  starts: ReadonlyArray<number>
): BlockRun => {
  if (rule.body === undefined) {
    return { rule: index, lines: from.lines, openedAt, closedAt: walkToEnd(s, rule.end!, start) }
  }
  let pos = start
  if (openedAt !== -1) {
    // the body starts on the line after the marker's; a marker line longer than REACH has none
    const next = s.bytes.subarray(start, Math.min(s.n, start + REACH)).indexOf(NEWLINE)
    if (next === -1) return { ...from, openedAt, closedAt: s.n - start >= REACH || s.final ? start : -1 }
    pos = start + next + 1
  }
  return walkBody(s, rule, openedAt, pos, from, starts)
}

/** A block whose lines may hold anything: masked up to its end marker; returns where that is (-1 for none). */
const walkToEnd = (s: Scan, end: RegExp, start: number): number => {
  const text = latin1(s.bytes, start, s.n)
  end.lastIndex = 0
  const close = end.exec(text)
  const stop = close === null ? s.n : start + close.index
  maskLines(s, start, stop)
  return close === null ? -1 : stop
}

/**
 * Base64 at the end of a line's text, after an optional indent and quote or
 * comment prefix. A `+` directly before the base64 is taken as part of it: it
 * is a base64 character, and a diff's mark masked with it hides one byte of
 * the diff, where a key's `+` left visible would show one of the key.
 */
const BASE64_BEFORE_END = /^[ \t]{0,40}(?:[>#|-][ \t]{0,2}|\+[ \t]{1,2}|\/\/[ \t]?)?([A-Za-z0-9+/]{4,}={0,3})$/
/** A body line: its indent and prefix (a `+` only when a blank follows it, as above), then its content, then trailing blanks. */
const BODY_LINE = /^([ \t]{0,40}(?:[>#|-][ \t]{0,2}|\+[ \t]{1,2}|\/\/[ \t]?)?)(.*?)[ \t]*\r?$/

/** Most lines of the same log in a row a prefixed block passes over (another service's, another step's) before it ends. */
const MAX_SKIPPED = 16

/**
 * Where the content of `line` starts after a prefix of the block's shape
 * (0 without one), or -1 when the line only starts like one: a line of
 * the same log that is not the block's.
 */
const contentStart = (shape: PrefixShape | undefined, line: string): number => {
  if (shape === undefined) return 0
  const full = shape.full.exec(line)
  if (full !== null) return full[0].length
  return shape.head !== undefined && shape.head.test(line) ? -1 : 0
}

/** Whether one of `starts` (in order) lies in `[from, to)`. */
const opensIn = (starts: ReadonlyArray<number>, from: number, to: number): boolean => {
  let low = 0
  let high = starts.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (starts[middle]! < from) low = middle + 1
    else high = middle
  }
  return low < starts.length && starts[low]! < to
}

/**
 * Masks a block's body line by line from `pos` (a line start): it ends at
 * the line holding the end marker (masking base64 before it), before a line
 * that is too long or not a body line, or after `maxLines` lines; it is
 * still open (-1) when the bytes end first, unless the text ends there.
 * When the opening marker came after a log prefix, a line is judged on
 * what follows its own prefix of that shape; a line of the same log whose
 * content is not a body line is passed over, up to `MAX_SKIPPED` in a row.
 */
const walkBody = (s: Scan, rule: Compiled, openedAt: number, pos: number, from: OpenBlock, starts: ReadonlyArray<number>): BlockRun => {
  const { bytes, n, ranges } = s
  const end = rule.end!
  const body = rule.body!
  const prefix = from.prefix
  const shape = prefix === undefined ? undefined : shapeOf(prefix)
  let lines = from.lines
  let skipped = from.skipped ?? 0
  const result = (closedAt: number): BlockRun => ({ rule: from.rule, lines, prefix, skipped, openedAt, closedAt })
  while (pos < n) {
    const ahead = bytes.subarray(pos, Math.min(n, pos + rule.maxLineBytes + 1)).indexOf(NEWLINE)
    const complete = ahead !== -1 || s.final
    const lineEnd = ahead === -1 ? n : pos + ahead
    // too long for a body line, and for an end marker that matters: the block ends before it
    if (lineEnd - pos > rule.maxLineBytes) return result(pos)
    if (!complete) return result(-1)
    const line = latin1(bytes, pos, lineEnd)
    end.lastIndex = 0
    const close = end.exec(line)
    if (close !== null) {
      const before = BASE64_BEFORE_END.exec(line.slice(Math.max(0, contentStart(shape, line)), close.index))
      if (before !== null) ranges.push(pos + close.index - before[1].length, pos + close.index)
      return result(pos)
    }
    let at = contentStart(shape, line)
    let match = at === -1 || lines >= rule.maxLines ? null : body.exec(at === 0 ? line : line.slice(at))
    // a line that only looks prefixed may be a body line as it stands
    if (match === null && at > 0 && lines < rule.maxLines && (match = body.exec(line)) !== null) at = 0
    if (match === null) {
      // a line of the same log, not of the key: passed over, a few in a row, unless it opens another block
      if (at !== 0 && lines < rule.maxLines && !opensIn(starts, pos, lineEnd) && ++skipped <= MAX_SKIPPED) {
        pos = lineEnd + 1
        continue
      }
      return result(pos)
    }
    const base = pos + Math.max(0, at)
    if (rule.group > 0) maskBodyGroup(s, rule, match, base)
    else {
      const content = BODY_LINE.exec(at === 0 ? line : line.slice(at))!
      if (content[2].length > 0) ranges.push(base + content[1].length, base + content[1].length + content[2].length)
    }
    lines++
    skipped = 0
    pos = lineEnd + 1
  }
  return result(-1)
}

/** Masks the rule's group of a body line's match (the line starts at `pos`), unless `allow` keeps the value. */
const maskBodyGroup = (s: Scan, rule: Compiled, match: RegExpExecArray, pos: number): void => {
  const span = match.indices?.[rule.group]
  if (span === undefined || span[1] <= span[0]) return
  if (rule.allow?.(match[rule.group]!) === true) return
  s.ranges.push(pos + span[0], pos + span[1])
}

/** Masks `[start, stop)` except line breaks, as ranges that each stay within a line. */
const maskLines = (s: Scan, start: number, stop: number): void => {
  const bytes = s.bytes
  let from = start
  for (let i = start; i < stop; i++) {
    const byte = bytes[i]
    if (byte === NEWLINE || byte === RETURN) {
      if (i > from) s.ranges.push(from, i)
      from = i + 1
    }
  }
  if (stop > from) s.ranges.push(from, stop)
}

const STAR = 0x2a

/**
 * Copies `source[from, to)` with the findings masked: every range (widened
 * so it never splits a UTF-8 sequence, but never over a line break) becomes `*`.
 */
export const applyFindings = (source: Uint8Array, findings: Findings, from: number, to: number): Uint8Array => {
  const out = new Uint8Array(to - from)
  out.set(source.subarray(from, to))
  maskInto(out, -from, source, findings, from, to)
  return out
}

/** Masks `source[from, to)` in place and returns that part of it; for buffers the caller owns. */
export const applyFindingsInPlace = (source: Uint8Array, findings: Findings, from: number, to: number): Uint8Array => {
  maskInto(source, 0, source, findings, from, to)
  return source.subarray(from, to)
}

// Writes the stars for `source[from, to)` into `target` at `i + shift`; reads only `source`.
const maskInto = (
  target: Uint8Array,
  shift: number,
  source: Uint8Array,
  findings: Findings,
  from: number,
  to: number
): void => {
  const ranges = findings.ranges
  const length = source.length
  for (let i = 0; i < ranges.length; i += 2) {
    let start = ranges[i]
    let end = ranges[i + 1]
    let lead = start
    for (let n = 0; n < 3 && lead > 0 && (source[lead] & 0xc0) === 0x80; n++) lead--
    if (source[lead] >= 0xc0) start = lead
    for (let n = 0; n < 3 && end < length && (source[end] & 0xc0) === 0x80; n++) end++
    if (start < from) start = from
    if (end > to) end = to
    if (end > start) target.fill(STAR, start + shift, end + shift)
  }
}
