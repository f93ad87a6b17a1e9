import type { SecretRule } from "../../Secrets.js"
import { type AnchorScan, type AnchorSpec, makeAnchorScan } from "./anchors.js"
import { shannonEntropy } from "./lookalike.js"

/** A multi-line block (a private key) found in a text: the body runs from `markerEnd` to `bodyEnd`. */
export interface Block {
  /** The text of the opening marker, used to reopen the block in a later stream window. */
  readonly marker: string
  readonly markerStart: number
  readonly markerEnd: number
  /** Where the closing marker starts, or -1 when the block runs to the end of the text. */
  readonly closeStart: number
  readonly bodyEnd: number
}

/**
 * What a scan found: ranges to mask (flat start/end pairs), blocks whose
 * bodies are masked except line breaks, and where watched literals begin.
 */
export interface Findings {
  readonly ranges: ReadonlyArray<number>
  readonly blocks: ReadonlyArray<Block>
  readonly marks: ReadonlyArray<number>
}

/** A compiled set of rules and known values that finds what to mask in bytes. */
export interface Engine {
  readonly scan: (bytes: Uint8Array) => Findings
}

interface Compiled {
  readonly re: RegExp
  readonly group: number
  readonly minEntropy: number
  readonly allow: ((value: string) => boolean) | undefined
  readonly end: RegExp | undefined
}

/** The latin1 view of bytes: one character per byte, which the rule patterns are written for. */
export const latin1 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")

const flagsOf = (pattern: RegExp, extra: string): string => pattern.flags.replace(/[dgy]/g, "") + extra

const EMPTY_FINDINGS: Findings = { ranges: [], blocks: [], marks: [] }

// Owner codes of anchors that are not rules: known value forms are -1 - length, watched literals this.
const WATCHED = Number.MIN_SAFE_INTEGER

/**
 * Builds an engine from pattern rules and the latin1 forms of known values.
 * Rules with anchors (of two bytes or more) run only where an anchor occurs,
 * found in one pass with the known values; other rules scan the whole text.
 * A rule is tried at every position it can start at, so what a scan finds
 * in a line never depends on the text before that line.
 */
export const makeEngine = (
  rules: ReadonlyArray<SecretRule>,
  literals: ReadonlyArray<string>,
  watched: ReadonlyArray<string> = []
): Engine => {
  const compiled: Array<Compiled> = []
  const unanchored: Array<number> = []
  const specs: Array<AnchorSpec> = []
  // For each anchor: the rule it belongs to, or -1 - length for a known value form.
  const owners: Array<number> = []

  rules.forEach((rule, index) => {
    const anchors = (rule.anchors ?? []).filter((anchor) => anchor.length >= 2)
    const anchored = anchors.length > 0 && anchors.length === (rule.anchors ?? []).length
    const group = rule.group ?? 0
    compiled.push({
      re: new RegExp(rule.pattern.source, flagsOf(rule.pattern, (anchored ? "y" : "g") + (group > 0 ? "d" : ""))),
      group,
      minEntropy: rule.minEntropy ?? 0,
      allow: rule.allow,
      end: rule.end === undefined ? undefined : new RegExp(rule.end.source, flagsOf(rule.end, "g"))
    })
    if (!anchored) {
      unanchored.push(index)
      return
    }
    const ignoreCase = rule.pattern.flags.includes("i")
    for (const text of anchors) {
      specs.push({ text, ignoreCase })
      owners.push(index)
    }
  })
  for (const literal of new Set(literals)) {
    specs.push({ text: literal, ignoreCase: false })
    owners.push(-1 - literal.length)
  }
  // Literals a caller wants to know the positions of, found in the same pass.
  for (const literal of new Set(watched)) {
    if (literal.length < 2) continue
    specs.push({ text: literal, ignoreCase: false })
    owners.push(WATCHED)
  }

  const anchorScan: AnchorScan | undefined = specs.length === 0 ? undefined : makeAnchorScan(specs)
  const tried = new Float64Array(compiled.length)

  const scan = (bytes: Uint8Array): Findings => {
    let latin: string | undefined
    const text = (): string => (latin ??= latin1(bytes))
    const ranges: Array<number> = []
    const marks: Array<number> = []
    const openers: Array<{ rule: number; start: number; end: number }> = []

    const accept = (rule: Compiled, match: RegExpExecArray): void => {
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
        const value = text().slice(start, end)
        if (rule.minEntropy > 0 && shannonEntropy(value) < rule.minEntropy) return
        if (rule.allow !== undefined && rule.allow(value)) return
      }
      ranges.push(start, end)
    }

    const run = (index: number, position: number): void => {
      const rule = compiled[index]
      rule.re.lastIndex = position
      const match = rule.re.exec(text())
      if (match === null || match.index !== position) return
      if (rule.end !== undefined) openers.push({ rule: index, start: position, end: position + match[0].length })
      else accept(rule, match)
    }

    if (anchorScan !== undefined) {
      tried.fill(-1)
      anchorScan(bytes, (anchor, position) => {
        const owner = owners[anchor]
        if (owner === WATCHED) {
          marks.push(position)
        } else if (owner < 0) {
          ranges.push(position, position - 1 - owner)
        } else if (tried[owner] !== position) {
          tried[owner] = position
          run(owner, position)
        }
      })
    }

    for (const index of unanchored) {
      const rule = compiled[index]
      const source = text()
      rule.re.lastIndex = 0
      let match: RegExpExecArray | null
      while ((match = rule.re.exec(source)) !== null) {
        rule.re.lastIndex = match.index + 1
        if (rule.end === undefined) accept(rule, match)
        else if (match[0].length > 0) openers.push({ rule: index, start: match.index, end: match.index + match[0].length })
      }
    }

    if (ranges.length === 0 && openers.length === 0) return marks.length === 0 ? EMPTY_FINDINGS : { ranges, blocks: [], marks }

    const blocks: Array<Block> = []
    if (openers.length > 0) {
      const source = text()
      openers.sort((a, b) => a.rule - b.rule || a.start - b.start)
      let currentRule = -1
      let resume = 0
      for (const opener of openers) {
        if (opener.rule !== currentRule) {
          currentRule = opener.rule
          resume = 0
        }
        if (opener.start < resume) continue
        const end = compiled[opener.rule].end!
        end.lastIndex = opener.end
        const close = end.exec(source)
        blocks.push({
          marker: source.slice(opener.start, opener.end),
          markerStart: opener.start,
          markerEnd: opener.end,
          closeStart: close === null ? -1 : close.index,
          bodyEnd: close === null ? source.length : close.index
        })
        resume = close === null ? source.length : close.index + Math.max(1, close[0].length)
      }
      blocks.sort((a, b) => a.markerStart - b.markerStart)
    }

    return { ranges, blocks, marks }
  }

  return { scan }
}

const STAR = 0x2a

/**
 * Copies `source[from, to)` with the findings masked: every range (widened
 * so it never splits a UTF-8 sequence) and every block body except its line
 * breaks become `*`.
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
  for (const block of findings.blocks) {
    const start = Math.max(block.markerEnd, from)
    const end = Math.min(block.bodyEnd, to)
    for (let i = start; i < end; i++) {
      const byte = source[i]
      if (byte !== 0x0a && byte !== 0x0d) target[i + shift] = STAR
    }
  }
}
