import type { SecretRule } from "../../Secrets.js"
import { type AnchorScan, type AnchorSpec, makeAnchorScan } from "./anchors.js"
import { shannonEntropy } from "./lookalike.js"

/** A block (a private key) still open at the end of a scan, to carry into the next window of a stream. */
export interface OpenBlock {
  /** The block rule, by its index in the engine's rules. */
  readonly rule: number
  /** Body lines masked so far. */
  readonly lines: number
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
}

/** Where a scan starts: blocks open before it, where they resume, whether byte 0 starts a line, and whether the text ends here. */
export interface ScanState {
  readonly carried?: ReadonlyArray<OpenBlock>
  readonly resumeAt?: number
  readonly startsLine?: boolean
  readonly final?: boolean
}

/** A compiled set of rules and known values that finds what to mask in bytes. */
export interface Engine {
  readonly scan: (bytes: Uint8Array, state?: ScanState) => Findings
}

/** A literal to mask wherever it occurs, or only at the end or the start of a line (a part of wrapped base64). */
export interface Literal {
  readonly text: string
  readonly at: "anywhere" | "lineEnd" | "lineStart"
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
const LINE_END = 2
const LINE_START = 3
const WATCHED = 4

/** What the one anchor pass looks for, and, by anchor index, what each anchor belongs to (a kind above, and a rule index or a length). */
interface AnchorPlan {
  readonly specs: Array<AnchorSpec>
  readonly ownerKind: Array<number>
  readonly ownerValue: Array<number>
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

/** Adds the literal forms of known values to the plan, each once; a literal is found by itself, so it needs two bytes or more. */
const planLiterals = (plan: AnchorPlan, literals: ReadonlyArray<Literal>): void => {
  const seen = new Set<string>()
  for (const literal of literals) {
    const key = `${literal.at}:${literal.text}`
    if (literal.text.length < 2 || seen.has(key)) continue
    seen.add(key)
    const kind = literal.at === "anywhere" ? ANYWHERE : literal.at === "lineEnd" ? LINE_END : LINE_START
    addAnchor(plan, literal.text, false, kind, literal.text.length)
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
  readonly anchorScan: AnchorScan | undefined
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
  /** `bytes[windowStart, windowEnd)` as latin1: a line, clipped to REACH either side of where a rule runs. */
  windowStart: number
  windowEnd: number
  windowText: string
  /** Whether the window's start and end are the line's own (not clipped). */
  startIsLine: boolean
  endIsLine: boolean
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
  const plan: AnchorPlan = { specs: [], ownerKind: [], ownerValue: [] }
  const compiled: Array<Compiled> = []
  const unanchored = planRules(plan, rules, compiled)
  planLiterals(plan, literals)
  planWatched(plan, watched)
  const tables: Tables = {
    compiled,
    unanchored,
    ownerKind: plan.ownerKind,
    ownerValue: plan.ownerValue,
    anchorScan: plan.specs.length === 0 ? undefined : makeAnchorScan(plan.specs),
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
    windowStart: -1,
    windowEnd: -1,
    windowText: "",
    startIsLine: false,
    endIsLine: false
  }
  if (tables.anchorScan !== undefined) scanAnchors(s, tables.anchorScan)
  if (tables.unanchored.length > 0) {
    const source = latin1(bytes)
    for (const index of tables.unanchored) scanWhole(s, index, source)
  }
  const carried = state.carried ?? []
  if (s.ranges.length === 0 && s.openers.length === 0 && carried.length === 0) {
    return s.marks.length === 0 ? EMPTY_FINDINGS : { ranges: s.ranges, marks: s.marks, blocks: [] }
  }
  const blocks = s.openers.length > 0 || carried.length > 0 ? walkBlocks(s, carried, state.resumeAt ?? 0) : []
  return { ranges: s.ranges, marks: s.marks, blocks }
}

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
  const back = bytes.subarray(low, p).lastIndexOf(NEWLINE)
  s.startIsLine = back !== -1 || low === 0
  const high = Math.min(n, p + REACH)
  const ahead = bytes.subarray(p, high).indexOf(NEWLINE)
  s.endIsLine = ahead !== -1 || high === n
  s.windowStart = back === -1 ? low : low + back + 1
  s.windowEnd = ahead === -1 ? high : p + ahead
  s.windowText = latin1(bytes, s.windowStart, s.windowEnd)
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
}

/** Masks what `locate` finds in `line` (which starts at `base`) for a match at `at` in it. */
const located = (s: Scan, rule: Compiled, line: string, base: number, at: number): void => {
  const found = rule.locate!(line, at)
  if (found !== undefined && found[1] > found[0]) s.ranges.push(base + found[0], base + found[1])
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

/** What an anchor found at `position` means: a rule to run there, a watched literal's mark, or a literal to mask where it stands. */
const onAnchor = (s: Scan, anchor: number, position: number): void => {
  const tables = s.tables
  const kind = tables.ownerKind[anchor]
  const value = tables.ownerValue[anchor]
  if (kind === RULE) {
    if (tables.tried[value] !== position) {
      tables.tried[value] = position
      runAt(s, value, position)
    }
  } else if (kind === WATCHED) {
    s.marks.push(position)
  } else if (kind === ANYWHERE || (kind === LINE_END ? atLineEnd(s, position + value) : atLineStart(s, position))) {
    s.ranges.push(position, position + value)
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
    const previous = carried.find((c) => c.rule === index)
    if (previous !== undefined) {
      const run = walk(s, rule, index, -1, resumeAt, previous.lines)
      blocks.push(run)
      from = run.closedAt === -1 ? s.n : run.closedAt
    }
    for (const opener of s.openers) {
      if (opener.rule !== index || opener.start < from) continue
      const run = walk(s, rule, index, opener.start, opener.end, 0)
      blocks.push(run)
      from = run.closedAt === -1 ? s.n : run.closedAt
    }
  }
  return blocks
}

/**
 * Walks a block from `start` (right after its opening marker, or where a
 * carried block resumes), masking its body; returns where it closed.
 */
const walk = (s: Scan, rule: Compiled, index: number, openedAt: number, start: number, lines: number): BlockRun => {
  if (rule.body === undefined) {
    return { rule: index, lines, openedAt, closedAt: walkToEnd(s, rule.end!, start) }
  }
  let pos = start
  if (openedAt !== -1) {
    // the body starts on the line after the marker's; a marker line longer than REACH has none
    const next = s.bytes.subarray(start, Math.min(s.n, start + REACH)).indexOf(NEWLINE)
    if (next === -1) return { rule: index, lines, openedAt, closedAt: s.n - start >= REACH || s.final ? start : -1 }
    pos = start + next + 1
  }
  return walkBody(s, rule, index, openedAt, pos, lines)
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

/** Base64 at the end of a line's text, after an optional indent and quote or comment prefix. */
const BASE64_BEFORE_END = /^[ \t]{0,40}(?:[+>#|-][ \t]{0,2}|\/\/[ \t]?)?([A-Za-z0-9+/]{4,}={0,3})$/
/** A body line: its indent and prefix, then its content, then trailing blanks. */
const BODY_LINE = /^([ \t]{0,40}(?:[+>#|-][ \t]{0,2}|\/\/[ \t]?)?)(.*?)[ \t]*\r?$/

/**
 * Masks a block's body line by line from `pos` (a line start): it ends at
 * the line holding the end marker (masking base64 before it), before a line
 * that is too long or not a body line, or after `maxLines` lines; it is
 * still open (-1) when the bytes end first, unless the text ends there.
 */
const walkBody = (s: Scan, rule: Compiled, index: number, openedAt: number, pos: number, lines: number): BlockRun => {
  const { bytes, n, ranges } = s
  const end = rule.end!
  const body = rule.body!
  const result = (closedAt: number): BlockRun => ({ rule: index, lines, openedAt, closedAt })
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
      const before = BASE64_BEFORE_END.exec(line.slice(0, close.index))
      if (before !== null) ranges.push(pos + close.index - before[1].length, pos + close.index)
      return result(pos)
    }
    const match = lines < rule.maxLines ? body.exec(line) : null
    if (match === null) return result(pos)
    if (rule.group > 0) maskBodyGroup(s, rule, match, pos)
    else {
      const content = BODY_LINE.exec(line)!
      if (content[2].length > 0) ranges.push(pos + content[1].length, pos + content[1].length + content[2].length)
    }
    lines++
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
