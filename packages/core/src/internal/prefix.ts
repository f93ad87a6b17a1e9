/**
 * Prefixes learned from an output itself: the leading columns a program
 * (a CI runner, docker compose, kubectl, a logger) puts before every line it
 * passes on, such as a timestamp, `web-1  | `, `[pod/api-7d9f/api] `, a
 * step counter or a log level. A line is then judged on what follows them.
 *
 * Nothing here names a tool. A line's leading fields (split on blanks) are
 * reduced to shapes (runs of digits, of lower-case and of upper-case letters
 * each stand for themselves as one class), and the fields whose shapes
 * repeat on most of the lines just before it are its prefix. Only fields
 * that look like columns qualify: ones holding a digit, bracketed ones,
 * separators (`|`), paths (`pod/x`), upper-case words (levels), and words
 * the lines before repeat exactly. @internal
 */

/** Most leading fields looked at, and most characters a prefix spans. */
const FIELDS = 6
const SPAN = 96

/** Lines before a line that a prefix is learned from, and how many of them must share it. */
export const WINDOW = 8
const QUORUM = 0.6

/** One leading field: where it ends, where the text after its blanks starts, and its shape. */
interface Field {
  readonly text: string
  /** Offset of the character after the field and the one blank that follows it. */
  readonly next: number
  readonly shape: string
}

/** A field's shape: each run of digits, lower-case or upper-case letters stands for itself as one class. */
const shapeOf = (field: string): string =>
  field.replace(/[0-9]+/g, "0").replace(/[a-z]+/g, "a").replace(/[A-Z]+/g, "A")

/**
 * The leading fields of a line, up to `FIELDS` of them within `SPAN`
 * characters, each with where the text after it and one blank begins (any
 * further blanks are the message's own indentation); none when the line
 * starts with a blank. The last field of a line is its message, never a column.
 */
const fieldsOf = (line: string): Array<Field> => {
  const out: Array<Field> = []
  if (line.length === 0 || line[0] === " " || line[0] === "\t") return out
  let at = 0
  while (out.length < FIELDS && at < SPAN) {
    let end = at
    while (end < line.length && line[end] !== " " && line[end] !== "\t") end++
    if (end >= line.length) break
    const text = line.slice(at, end)
    out.push({ text, next: end + 1, shape: shapeOf(text) })
    at = end
    while (at < line.length && (line[at] === " " || line[at] === "\t")) at++
  }
  return out
}

/** The words a timestamp may start with (syslog's `Mar  2 10:15:09`, `Mon, 02 Mar 2026`). */
const MONTH_OR_DAY = /^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Mon|Tue|Wed|Thu|Fri|Sat|Sun),?$/

/** A field that can be a column of a prefix on its own, whatever the lines around it say. */
const columnLike = (f: Field): boolean =>
  /[0-9]/.test(f.text) || MONTH_OR_DAY.test(f.text) || /^[[(<].*[\])>]:?$/.test(f.text) || /^[|>#:=*-]+$/.test(f.text) || /\//.test(f.text) ||
  /^[A-Z]{3,8}:?$/.test(f.text) || /^[\w.-]+\[\d+\]:$/.test(f.text)

/** A learned prefix: the shapes of its columns, and for word columns the word they repeat. */
export interface Prefix {
  readonly shapes: ReadonlyArray<string>
  /** For each column, the exact text when the column is a repeated word, else undefined. */
  readonly exact: ReadonlyArray<string | undefined>
}

/**
 * Learns the prefix a line shares with most of the lines before it (nearest
 * first, at most `WINDOW` of them, blank ones left out): undefined when
 * there is none, or when there are too few lines to tell.
 */
export const learn = (line: string, before: ReadonlyArray<string>): Prefix | undefined => {
  const own = fieldsOf(line)
  if (own.length === 0) return undefined
  const others = before.filter((l) => l.trim().length > 0).slice(0, WINDOW).map(fieldsOf)
  if (others.length < 3) return undefined
  const need = Math.ceil(others.length * QUORUM)
  const shapes: Array<string> = []
  const exact: Array<string | undefined> = []
  // the lines that share every column so far
  let sharing = others
  for (let k = 0; k < own.length; k++) {
    const f = own[k]!
    const same = sharing.filter((o) => o[k] !== undefined && o[k]!.shape === f.shape)
    if (same.length < need) break
    if (columnLike(f)) {
      shapes.push(f.shape)
      exact.push(undefined)
      sharing = same
      continue
    }
    // a word column (a host, a service, a pod) repeats exactly, after a column of another kind
    const word = same.filter((o) => o[k]!.text === f.text)
    if (k === 0 || word.length < need) break
    shapes.push(f.shape)
    exact.push(f.text)
    sharing = word
  }
  return shapes.length === 0 ? undefined : { shapes, exact }
}

/**
 * The offsets where what follows a prefix's columns begins in a line, the
 * nearest column first (after the first column, after the second, …); empty
 * when the line does not start with the prefix's first column.
 */
export const cuts = (prefix: Prefix, line: string): Array<number> => {
  const fields = fieldsOf(line)
  const out: Array<number> = []
  for (let k = 0; k < prefix.shapes.length && k < fields.length; k++) {
    const f = fields[k]!
    if (f.shape !== prefix.shapes[k] || (prefix.exact[k] !== undefined && prefix.exact[k] !== f.text)) break
    out.push(f.next)
  }
  return out
}

/** The shape of a line's first field when it can be a column of a prefix; undefined when it cannot. */
export const firstShape = (line: string): string | undefined => {
  const f = fieldsOf(line)[0]
  return f !== undefined && columnLike(f) ? f.shape : undefined
}
