/**
 * The preview a model gets in place of a long command output: the exit code,
 * the first and the last lines, a marker naming the saved file, and how to
 * read the rest back, all within a character cap. Pure functions.
 *
 * @since 0.1.0
 */
import * as Marker from "./Marker.js"
import { type LineRange, splitLines } from "./Projection.js"
import * as Utf8 from "./Utf8.js"

/** How a preview tells the reader to continue; receives the saved file's name and the first line not shown. */
export type ReadHint = (filename: string, nextLine: number) => string

/** The read-back instructions for the library's `readSpill` and `grepSpill`. */
export const toolHint: ReadHint = (filename, nextLine) =>
  `Read more with readSpill("${filename}", { offset: ${nextLine}, limit: 200 }); search with grepSpill("PATTERN", "${filename}").`

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
  /** Name of the saved copy, when it was saved. */
  readonly saved?: string | undefined
  /** Why no copy was saved, when it was not. */
  readonly notSaved?: string | undefined
  /** The cap, in code points. */
  readonly maxChars: number
  readonly hint?: ReadHint | undefined
}

/** A preview and the ranges it shows. */
export interface Preview {
  readonly text: string
  readonly ranges: ReadonlyArray<LineRange>
}

const cp = Utf8.codePointLength

/** Builds a preview no longer than `maxChars` code points. */
export const make = (input: PreviewInput): Preview => {
  const headLines = splitLines(input.head)
  if (!input.headIsWhole && !input.head.endsWith("\n")) headLines.pop()
  const tailLines = splitLines(input.tail)
  if (!input.tailAtLineStart && tailLines.length > 1) tailLines.shift()
  const tailPartial = !input.tailAtLineStart && tailLines.length === 1

  const header = `exit code ${input.exitCode} · ${input.totalLines} lines · ${input.totalBytes} bytes`
  const footer = (next: number) =>
    input.saved !== undefined
      ? (input.hint ?? toolHint)(input.saved, next)
      : `[No copy was saved: ${input.notSaved ?? "unknown reason"}. Lines not shown are lost.]`
  const widest = String(input.totalLines).replace(/./g, "9")
  const worstMarker = Marker.format({
    ranges: [{ from: Number(widest), to: Number(widest) }, { from: Number(widest), to: Number(widest) }],
    totalLines: input.totalLines,
    fullOutput: input.saved,
    cutLine: { line: Number(widest), shownBytes: input.totalBytes, totalBytes: input.totalBytes }
  })
  // header, marker and footer each take a line; four line breaks join the five parts
  const reserve = cp(header) + cp(worstMarker) + cp(footer(Number(widest))) + 4
  const room = Math.max(0, input.maxChars - reserve)

  // The tail says how the command ended, so it gets the larger share; the
  // head then takes what is left, and the tail grows into any remainder.
  const cost = (line: string) => cp(line) + 1
  let spent = 0
  let t = 0
  let h = 0
  const tailShare = Math.floor((room * 3) / 5)
  const tailFits = (limit: number) => {
    while (t < tailLines.length && !tailPartial && input.totalLines - t > h) {
      const c = cost(tailLines[tailLines.length - 1 - t]!)
      if (spent + c > limit) break
      spent += c
      t++
    }
  }
  tailFits(tailShare)
  while (h < headLines.length && h + 1 <= input.totalLines - t) {
    const c = cost(headLines[h]!)
    if (spent + c > room) break
    spent += c
    h++
  }
  tailFits(room)

  const head = headLines.slice(0, h)
  const tail = tailLines.slice(tailLines.length - t)
  const ranges: Array<LineRange> = []
  let cutLine: { line: number; shownBytes: number; totalBytes: number } | undefined
  if (h === 0 && t === 0 && room > 1) {
    // nothing fits whole: show the start of the first line, cut on a code point
    const first = headLines[0] ?? input.head
    const part = Utf8.takeCodePoints(first, room - 1)
    head.push(part)
    ranges.push({ from: 1, to: 1 })
    cutLine = { line: 1, shownBytes: Utf8.byteLength(part), totalBytes: Utf8.byteLength(first) }
  }
  if (h > 0) ranges.push({ from: 1, to: h })
  if (t > 0) {
    const from = input.totalLines - t + 1
    const last = ranges[ranges.length - 1]
    if (last && last.to + 1 === from) ranges[ranges.length - 1] = { from: last.from, to: input.totalLines }
    else ranges.push({ from, to: input.totalLines })
  }
  const marker = Marker.format({ ranges, totalLines: input.totalLines, fullOutput: input.saved, cutLine })
  const next = (ranges[0]?.to ?? 0) + (cutLine ? 0 : 1)
  const parts = [header, ...head, marker, ...tail, footer(Math.max(1, next))]
  return { text: parts.join("\n"), ranges }
}
