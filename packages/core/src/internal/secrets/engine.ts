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

interface Compiled {
  readonly re: RegExp
  readonly group: number
  readonly minEntropy: number
  readonly allow: ((value: string) => boolean) | undefined
  readonly locate: ((line: string, at: number) => readonly [number, number] | undefined) | undefined
  readonly end: RegExp | undefined
  readonly body: RegExp | undefined
  readonly maxLines: number
}

const NEWLINE = 0x0a
const RETURN = 0x0d
/** How far a rule's match may reach from where it starts, and how much of a line a rule sees either side. */
const REACH = 8192
/** Longer lines are never part of a key block's body. */
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
  const compiled: Array<Compiled> = []
  const unanchored: Array<number> = []
  const specs: Array<AnchorSpec> = []
  const ownerKind: Array<number> = []
  const ownerValue: Array<number> = []

  rules.forEach((rule, index) => {
    const anchors = (rule.anchors ?? []).filter((anchor) => anchor.length >= 2)
    const anchored = anchors.length > 0 && anchors.length === (rule.anchors ?? []).length
    const group = rule.group ?? 0
    compiled.push({
      re: new RegExp(rule.pattern.source, flagsOf(rule.pattern, (anchored ? "y" : "g") + (group > 0 ? "d" : ""))),
      group,
      minEntropy: rule.minEntropy ?? 0,
      allow: rule.allow,
      locate: rule.locate,
      end: rule.end === undefined ? undefined : new RegExp(rule.end.source, flagsOf(rule.end, "g")),
      body: rule.end === undefined ? undefined : rule.body,
      maxLines: rule.maxLines ?? 4096
    })
    if (!anchored) {
      unanchored.push(index)
      return
    }
    const ignoreCase = rule.pattern.flags.includes("i")
    for (const text of anchors) {
      specs.push({ text, ignoreCase })
      ownerKind.push(RULE)
      ownerValue.push(index)
    }
  })
  const seen = new Set<string>()
  for (const literal of literals) {
    const key = `${literal.at}:${literal.text}`
    if (literal.text.length < 2 || seen.has(key)) continue
    seen.add(key)
    specs.push({ text: literal.text, ignoreCase: false })
    ownerKind.push(literal.at === "anywhere" ? ANYWHERE : literal.at === "lineEnd" ? LINE_END : LINE_START)
    ownerValue.push(literal.text.length)
  }
  // Literals a caller wants to know the positions of, found in the same pass.
  for (const literal of new Set(watched)) {
    if (literal.length < 2) continue
    specs.push({ text: literal, ignoreCase: false })
    ownerKind.push(WATCHED)
    ownerValue.push(0)
  }

  const anchorScan: AnchorScan | undefined = specs.length === 0 ? undefined : makeAnchorScan(specs)
  const tried = new Float64Array(compiled.length)
  const blockRules = compiled.flatMap((rule, index) => (rule.end === undefined ? [] : [index]))

  const scan = (bytes: Uint8Array, state: ScanState = {}): Findings => {
    const n = bytes.length
    const final = state.final ?? true
    const startsLine = state.startsLine ?? true
    const ranges: Array<number> = []
    const marks: Array<number> = []
    const openers: Array<{ rule: number; start: number; end: number }> = []

    // The text a rule sees at `p`: its line, clipped to REACH either side; one string per line.
    let windowStart = -1
    let windowEnd = -1
    let windowText = ""
    let startIsLine = false
    let endIsLine = false
    const windowAt = (p: number): void => {
      if (p >= windowStart && p < windowEnd && (startIsLine || p - windowStart >= REACH) && (endIsLine || windowEnd - p >= REACH)) {
        return
      }
      const low = Math.max(0, p - REACH)
      const back = bytes.subarray(low, p).lastIndexOf(NEWLINE)
      startIsLine = back !== -1 || low === 0
      const high = Math.min(n, p + REACH)
      const ahead = bytes.subarray(p, high).indexOf(NEWLINE)
      endIsLine = ahead !== -1 || high === n
      windowStart = back === -1 ? low : low + back + 1
      windowEnd = ahead === -1 ? high : p + ahead
      windowText = latin1(bytes, windowStart, windowEnd)
    }

    const accept = (rule: Compiled, match: RegExpExecArray, base: number, text: string): void => {
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
      ranges.push(base + start, base + end)
    }

    const run = (index: number, position: number): void => {
      const rule = compiled[index]
      windowAt(position)
      const at = position - windowStart
      rule.re.lastIndex = at
      const match = rule.re.exec(windowText)
      if (match === null || match.index !== at) return
      if (rule.end !== undefined) {
        openers.push({ rule: index, start: position, end: position + match[0].length })
      } else if (rule.locate !== undefined) {
        const found = rule.locate(windowText, at)
        if (found !== undefined && found[1] > found[0]) ranges.push(windowStart + found[0], windowStart + found[1])
      } else {
        accept(rule, match, windowStart, windowText)
      }
    }

    const atLineEnd = (end: number): boolean =>
      end === n ? final : bytes[end] === NEWLINE || (bytes[end] === RETURN && (end + 1 === n ? final : bytes[end + 1] === NEWLINE))
    const atLineStart = (start: number): boolean => (start === 0 ? startsLine : bytes[start - 1] === NEWLINE)

    if (anchorScan !== undefined) {
      tried.fill(-1)
      anchorScan(bytes, (anchor, position) => {
        const kind = ownerKind[anchor]
        const value = ownerValue[anchor]
        if (kind === RULE) {
          if (tried[value] !== position) {
            tried[value] = position
            run(value, position)
          }
        } else if (kind === WATCHED) {
          marks.push(position)
        } else if (kind === ANYWHERE || (kind === LINE_END ? atLineEnd(position + value) : atLineStart(position))) {
          ranges.push(position, position + value)
        }
      })
    }

    if (unanchored.length > 0) {
      const source = latin1(bytes)
      for (const index of unanchored) {
        const rule = compiled[index]
        rule.re.lastIndex = 0
        let match: RegExpExecArray | null
        while ((match = rule.re.exec(source)) !== null) {
          rule.re.lastIndex = match.index + 1
          if (rule.end !== undefined) {
            if (match[0].length > 0) openers.push({ rule: index, start: match.index, end: match.index + match[0].length })
          } else if (rule.locate !== undefined) {
            const lineStart = source.lastIndexOf("\n", match.index - 1) + 1
            const lineEnd = source.indexOf("\n", match.index)
            const line = source.slice(lineStart, lineEnd === -1 ? source.length : lineEnd)
            const found = rule.locate(line, match.index - lineStart)
            if (found !== undefined && found[1] > found[0]) ranges.push(lineStart + found[0], lineStart + found[1])
          } else {
            accept(rule, match, 0, source)
          }
        }
      }
    }

    const carried = state.carried ?? []
    if (ranges.length === 0 && openers.length === 0 && carried.length === 0) {
      return marks.length === 0 ? EMPTY_FINDINGS : { ranges, marks, blocks: [] }
    }

    const blocks: Array<BlockRun> = []
    if (openers.length > 0 || carried.length > 0) {
      const resumeAt = state.resumeAt ?? 0
      for (const index of blockRules) {
        const rule = compiled[index]
        let from = 0
        const previous = carried.find((c) => c.rule === index)
        if (previous !== undefined) {
          const run = walk(rule, index, -1, resumeAt, previous.lines)
          blocks.push(run)
          from = run.closedAt === -1 ? n : run.closedAt
        }
        for (const opener of openers) {
          if (opener.rule !== index || opener.start < from) continue
          const run = walk(rule, index, opener.start, opener.end, 0)
          blocks.push(run)
          from = run.closedAt === -1 ? n : run.closedAt
        }
      }
    }

    return { ranges, marks, blocks }

    // Walks a block from `start` (right after its opening marker, or where a
    // carried block resumes), masking its body; returns where it closed.
    function walk(rule: Compiled, index: number, openedAt: number, start: number, lines: number): BlockRun {
      const end = rule.end!
      const result = (closedAt: number): BlockRun => ({ rule: index, lines, openedAt, closedAt })
      if (rule.body === undefined) {
        // runs to the end marker, whatever the lines hold
        const text = latin1(bytes, start, n)
        end.lastIndex = 0
        const close = end.exec(text)
        const stop = close === null ? n : start + close.index
        maskLines(start, stop)
        return result(close === null ? -1 : stop)
      }
      let pos = start
      if (openedAt !== -1) {
        // the body starts on the line after the marker's; a marker line longer than REACH has none
        const next = bytes.subarray(start, Math.min(n, start + REACH)).indexOf(NEWLINE)
        if (next === -1) return result(n - start >= REACH || final ? start : -1)
        pos = start + next + 1
      }
      while (pos < n) {
        const ahead = bytes.subarray(pos, Math.min(n, pos + MAX_BODY_LINE + 1)).indexOf(NEWLINE)
        const complete = ahead !== -1 || final
        const lineEnd = ahead === -1 ? n : pos + ahead
        if (lineEnd - pos > MAX_BODY_LINE) {
          // too long for a body line, and for an end marker that matters: the block ends before it
          return result(pos)
        }
        if (!complete) return result(-1)
        const line = latin1(bytes, pos, lineEnd)
        end.lastIndex = 0
        const close = end.exec(line)
        if (close !== null) {
          const before = /^[ \t]{0,40}(?:[+>#|-][ \t]{0,2}|\/\/[ \t]?)?([A-Za-z0-9+/]{4,}={0,3})$/.exec(line.slice(0, close.index))
          if (before !== null) ranges.push(pos + close.index - before[1].length, pos + close.index)
          return result(pos)
        }
        if (lines >= rule.maxLines || !rule.body.test(line)) return result(pos)
        const content = /^([ \t]{0,40}(?:[+>#|-][ \t]{0,2}|\/\/[ \t]?)?)(.*?)[ \t]*\r?$/.exec(line)!
        if (content[2].length > 0) ranges.push(pos + content[1].length, pos + content[1].length + content[2].length)
        lines++
        pos = lineEnd + 1
      }
      return result(-1)
    }

    // Masks `[start, stop)` except line breaks, as ranges that each stay within a line.
    function maskLines(start: number, stop: number): void {
      let from = start
      for (let i = start; i < stop; i++) {
        const byte = bytes[i]
        if (byte === NEWLINE || byte === RETURN) {
          if (i > from) ranges.push(from, i)
          from = i + 1
        }
      }
      if (stop > from) ranges.push(from, stop)
    }
  }

  return { scan }
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
