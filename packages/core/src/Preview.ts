/**
 * The preview a model gets in place of a long command output: the exit code,
 * the first and the last lines, a marker naming the saved file, and how to
 * read the rest back, all within a character cap. Pure functions.
 *
 * @since 0.1.0
 */
import * as Split from "./internal/split.js"
import * as Marker from "./Marker.js"
import * as Salience from "./Salience.js"
import { elide, type LineRange, splitLines } from "./Projection.js"
import * as Utf8 from "./Utf8.js"

/** Output up to this many characters (code points) is returned exactly as printed (`Spill.MAX_STDOUT_LEN`). */
export const MAX_STDOUT_LEN = 2000

/**
 * How a preview tells the reader to continue, given the saved file's name and
 * the first line not shown: how to read on, and how to search (left out when
 * the cap is too tight for both).
 */
export type ReadHint = (filename: string, nextLine: number) => { readonly read: string; readonly search: string }

/** The read-back instructions for the library's `readSpill` and `grepSpill`. */
export const toolHint: ReadHint = (filename, nextLine) => ({
  read: `Read more with readSpill("${filename}", { offset: ${nextLine}, limit: 200 })`,
  search: `search with grepSpill("PATTERN", "${filename}")`
})

const hintText = (hint: ReturnType<ReadHint>, withSearch: boolean) =>
  withSearch ? `${hint.read}; ${hint.search}.` : `${hint.read}.`

/** How a preview tells the reader to search the saved file for a pattern. */
export type GrepHint = (pattern: string, filename: string) => string

/** The search instruction for the library's `grepSpill`. */
export const toolGrepHint: GrepHint = (pattern, filename) => `grepSpill(${JSON.stringify(pattern)}, "${filename}")`

/** Longest salient line a preview shows, in code points (`Salience.SHOWN_CHARS`). */
export const SALIENT_CHARS = Salience.SHOWN_CHARS

/** What a preview is built from: the start and the end of the (scrubbed) output, and its totals. */
export interface PreviewInput {
  readonly exitCode: number
  /** The start of the output; may end inside a line unless it holds the whole output. */
  readonly head: string
  /** True when `head` is the whole output. */
  readonly headIsWhole: boolean
  /** The end of the output; may begin inside a line. */
  readonly tail: string
  /** True when `tail` begins at the start of a line. */
  readonly tailAtLineStart: boolean
  readonly totalLines: number
  readonly totalBytes: number
  /** UTF-8 bytes of the first line, which `head` may hold only the start of. */
  readonly firstLineBytes?: number | undefined
  /**
   * The end of the first line (it may begin inside it), needed only when
   * `head` holds just the line's start and the output has more lines: a
   * first line too long for the preview is shown by its start and its end.
   */
  readonly firstLineEnd?: string | undefined
  /** Name of the saved copy, when it was saved. */
  readonly saved?: string | undefined
  /** Set when the saved copy holds only the start of the output (a per-file limit): its lines and bytes. */
  readonly savedInPart?: { readonly lines: number; readonly bytes: number } | undefined
  /** Why no copy was saved, when it was not. */
  readonly notSaved?: string | undefined
  /** The cap, in code points. */
  readonly maxChars: number
  readonly hint?: ReadHint | undefined
  /** Lines that explain a failure, found anywhere in the output; shown in a section of their own. */
  readonly salient?: {
    readonly lines: ReadonlyArray<Salience.SalientLine>
    readonly total: number
    /** A pattern that finds them all, offered with `grepHint`. */
    readonly grep?: string | undefined
  } | undefined
  readonly grepHint?: GrepHint | undefined
}

/** A preview and the ranges it shows. */
export interface Preview {
  readonly text: string
  readonly ranges: ReadonlyArray<LineRange>
  /** The lines its section of failure lines shows, by number (picked by `Salience.pick`). */
  readonly salient: ReadonlyArray<number>
}

const cp = Utf8.codePointLength

/** A line's cost in a preview: its code points and its line break. */
const lineCost = (line: string): number => cp(line) + 1

/** The lines a preview picks from: the head's and the tail's whole lines, and how many the output has. */
interface Lines {
  readonly head: ReadonlyArray<string>
  readonly tail: ReadonlyArray<string>
  /** True when the tail is one piece of a line, so it shows no whole line. */
  readonly tailPartial: boolean
  readonly total: number
}

/**
 * How many head lines (`h`) and tail lines (`t`) fit in `budget` code points.
 * The tail says how the command ended, so it gets the larger share (three
 * fifths); the head then takes what is left, and the tail grows into any
 * remainder. A tail that is one piece of a line shows nothing.
 */
const fitLines = (lines: Lines, budget: number): { h: number; t: number } => {
  const split = Split.byCost({
    total: lines.total,
    head: { count: lines.head.length, cost: (i) => lineCost(lines.head[i]!) },
    tail: { count: lines.tailPartial ? 0 : lines.tail.length, cost: (i) => lineCost(lines.tail[lines.tail.length - 1 - i]!) },
    first: "tail",
    share: { budget: Math.floor((budget * 3) / 5) },
    budget
  })
  return { h: split.head, t: split.tail }
}

/** "1 line", "2 lines". */
const countLines = (n: number): string => `${n} ${n === 1 ? "line" : "lines"}`

/**
 * The salient section for `lines` within `limit` code points: a title, then
 * the rows picked in rank order and shown in line order; empty when none fit.
 */
const salientSection = (
  input: PreviewInput,
  limit: number,
  lines: ReadonlyArray<Salience.SalientLine>
): { rows: Array<string>; shown: ReadonlyArray<number> } => {
  const none = { rows: [], shown: [] }
  const salient = input.salient
  if (salient === undefined || lines.length === 0) return none
  const failed = input.exitCode !== 0
  const find = salient.total > 0 && input.saved !== undefined && salient.grep !== undefined
    ? `Find all: ${(input.grepHint ?? toolGrepHint)(salient.grep, input.saved)}`
    : ""
  const title = (matches: number, around: number, withFind: boolean) =>
    (matches > 0
      ? `[Lines that report errors or failures${failed ? "" : ", though the command exited 0"}: ${matches} of ${salient.total}` +
        (around > 0 ? `, and ${countLines(around)} around them` : "")
      : `[Lines that explain the ${countLines(salient.total)} reporting errors or failures${failed ? "" : " (the command exited 0)"}: ${around}`) +
    (withFind && find !== "" ? `. ${find}` : "") + "]"
  // the search hint is offered only when it takes no more than a third of the share
  const withFind = cp(find) <= limit / 3
  const rowOf = (row: { readonly line: number; readonly text: string }) => `${row.line}: ${row.text}`
  // the title's longest form, whatever is picked
  const titleCost = Math.max(
    cp(title(salient.total, lines.length, withFind)),
    cp(title(0, lines.length, withFind))
  ) + 1
  const picked = Salience.pick(lines, { limit, base: titleCost, cost: (row) => lineCost(rowOf(row)) })
  if (picked.length === 0) return none
  const matches = picked.filter((p) => p.match).length
  const around = picked.length - matches
  return {
    rows: [title(matches, around, withFind && matches < salient.total), ...picked.map(rowOf)],
    shown: picked.map((p) => p.line)
  }
}

/** Builds a preview no longer than `maxChars` code points. */
export const make = (input: PreviewInput): Preview => {
  const headLines = splitLines(input.head)
  if (!input.headIsWhole && !input.head.endsWith("\n")) headLines.pop()
  const tailLines = splitLines(input.tail)
  // a tail that starts inside a line begins with a piece of it; one that is a single piece shows no whole line
  const tailPartial = !input.tailAtLineStart && tailLines.length === 1
  if (!input.tailAtLineStart && tailLines.length > 1) tailLines.shift()

  const header = `exit code ${input.exitCode} · ${input.totalLines} lines · ${input.totalBytes} bytes`
  // The search instruction goes first when the cap is tight: reading on matters more.
  const withSearch = input.maxChars >= 600
  const footer = (next: number) =>
    input.saved !== undefined
      ? hintText((input.hint ?? toolHint)(input.saved, next), withSearch) + (input.savedInPart
        ? ` [${input.saved} holds only lines 1-${input.savedInPart.lines} (${input.savedInPart.bytes} bytes): the output passed the per-file limit, and the rest was not kept.]`
        : "")
      : `[No copy was saved: ${input.notSaved ?? "unknown reason"}. Lines not shown are lost.]`
  const widest = String(input.totalLines).replace(/./g, "9")
  const worstMarker = Marker.format({
    ranges: [{ from: Number(widest), to: Number(widest) }, { from: Number(widest), to: Number(widest) }],
    totalLines: input.totalLines,
    fullOutput: input.savedInPart ? undefined : input.saved,
    cutLine: { line: Number(widest), shownBytes: input.totalBytes, totalBytes: input.totalBytes }
  })
  // header, marker and footer each take a line; four line breaks join the five parts
  const reserve = cp(header) + cp(worstMarker) + cp(footer(Number(widest))) + 4
  const room = Math.max(0, input.maxChars - reserve)

  const lines: Lines = { head: headLines, tail: tailLines, tailPartial, total: input.totalLines }
  const fill = (budget: number) => fitLines(lines, budget)

  // Salient lines come before the middle of the head and the tail, within a
  // fair share of the room: half when the command failed, a quarter when it
  // exited 0 (then they come after the tail, as less sure). The explaining
  // lines are taken first, then the lines reports point back to, then the
  // reports; those the head or tail would show anyway are left out.
  const salient = input.salient
  const failed = input.exitCode !== 0
  const limit = Math.floor(room * (failed ? 1 / 2 : 1 / 4))
  const section = (picked: ReadonlyArray<Salience.SalientLine>) => salientSection(input, limit, picked)
  const sectionCost = (rows: ReadonlyArray<string>) => rows.reduce((n, r) => n + lineCost(r), 0)
  let picked = section(salient?.lines ?? [])
  let { h, t } = fill(room - sectionCost(picked.rows))
  const hidden = (salient?.lines ?? []).filter((l) => l.line > h && l.line <= input.totalLines - t)
  if (hidden.length !== (salient?.lines ?? []).length) {
    picked = section(hidden)
    ;({ h, t } = fill(room - sectionCost(picked.rows)))
  }
  const rows = picked.rows

  const head = headLines.slice(0, h)
  const tail = tailLines.slice(tailLines.length - t)
  const ranges: Array<LineRange> = []
  let cutLine: { line: number; shownBytes: number; totalBytes: number } | undefined
  // A first line longer than the whole room shows its start and its end, with the bytes between
  // counted, in whatever the section and the tail left; its start alone when its end is not known.
  const left = room - sectionCost(rows) - tail.reduce((n, l) => n + lineCost(l), 0)
  if (h === 0 && left > 1 && input.totalLines - t >= 1) {
    const first = headLines[0] ?? input.head
    const totalBytes = input.firstLineBytes ?? Utf8.byteLength(first)
    const end = headLines.length > 0
      ? first
      : input.totalLines === 1
      ? (tailLines[tailLines.length - 1] ?? input.tail)
      : input.firstLineEnd
    const both = end !== undefined ? elide(first, end, totalBytes, left - 1, "code-points") : undefined
    const part = both?.text ?? Utf8.takeCodePoints(first, left - 1)
    head.push(part)
    ranges.push({ from: 1, to: 1 })
    cutLine = { line: 1, shownBytes: both !== undefined ? both.startBytes + both.endBytes : Utf8.byteLength(part), totalBytes }
  }
  if (h > 0) ranges.push({ from: 1, to: h })
  if (t > 0) {
    const from = input.totalLines - t + 1
    const last = ranges[ranges.length - 1]
    if (last && last.to + 1 === from) ranges[ranges.length - 1] = { from: last.from, to: input.totalLines }
    else ranges.push({ from, to: input.totalLines })
  }
  // the marker names a saved copy only when it holds the whole output
  const marker = Marker.format({
    ranges,
    totalLines: input.totalLines,
    fullOutput: input.savedInPart ? undefined : input.saved,
    cutLine
  })
  // reading on starts after the whole lines of the head
  const next = h + 1
  const parts = failed
    ? [header, ...rows, ...head, marker, ...tail, footer(next)]
    : [header, ...head, marker, ...tail, ...rows, footer(next)]
  return { text: parts.join("\n"), ranges, salient: picked.shown }
}
