// The shape of a log line's prefix, learned from the line a key block
// opens on: a timestamp, a service column (`web-1  | `), a step and its time
// (`#5 0.312 `), a bracketed tag, a word and a colon. Later lines of the
// same log carry a prefix of the same shape with other numbers or names; a
// block judges what comes after it.

/** Longest prefix learned, in bytes: a longer text before a marker is a line of something else. */
export const MAX_PREFIX_BYTES = 200

/** A prefix of this kind needs no learning: indentation and the diff, quote or comment mark a key body line may carry anyway. */
const PLAIN = /^[ \t]{0,40}(?:[+>#|-][ \t]{0,2}|\/\/[ \t]?)?$/

/** What a learned prefix looks like, compiled. */
export interface PrefixShape {
  /** Matches a whole prefix of this shape at the start of a line: its letters, digits and blanks may differ, its punctuation may not. */
  readonly full: RegExp
  /**
   * Matches the prefix's first field and the blank after it (a timestamp,
   * `web-1`, `#5`), when that field holds a digit or punctuation: a line
   * that starts so is another line of the same log (another service,
   * another step), which a block passes over.
   */
  readonly head: RegExp | undefined
}

const WORD = "[A-Za-z0-9_]{1,64}"
const BLANK = "[ \\t]{1,64}"

const isWord = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
const isBlank = (c: number): boolean => c === 32 || c === 9

/** The pattern source of a prefix: each run of letters, digits and `_` any such run, each run of blanks any run, other bytes themselves. */
const sourceOf = (prefix: string): { readonly full: string; readonly head: string | undefined } => {
  let full = ""
  let head: string | undefined
  // whether the first field (up to the first blank) holds a digit or punctuation
  let marked = false
  let first = true
  for (let i = 0; i < prefix.length;) {
    const c = prefix.charCodeAt(i)
    let j = i + 1
    if (isWord(c)) {
      while (j < prefix.length && isWord(prefix.charCodeAt(j))) j++
      if (/[0-9]/.test(prefix.slice(i, j))) marked ||= first
      full += WORD
    } else if (isBlank(c)) {
      while (j < prefix.length && isBlank(prefix.charCodeAt(j))) j++
      if (first && full !== "" && marked) head = full + "[ \\t]"
      if (full !== "") first = false
      full += BLANK
    } else {
      marked ||= first
      full += `\\x${c.toString(16).padStart(2, "0")}`
    }
    i = j
  }
  return { full, head }
}

/** Most shapes kept compiled: a stream carries a block's prefix from window to window as text. */
const MAX_CACHED = 32
const cache = new Map<string, PrefixShape | undefined>()

/**
 * The shape of `prefix` (latin1, the text before a BEGIN marker on its
 * line), or undefined when there is nothing to learn: empty, plain
 * indentation or marks, or too long to be a log prefix.
 */
export const shapeOf = (prefix: string): PrefixShape | undefined => {
  if (prefix.length === 0 || prefix.length > MAX_PREFIX_BYTES || PLAIN.test(prefix)) return undefined
  if (cache.has(prefix)) return cache.get(prefix)
  const source = sourceOf(prefix)
  const shape: PrefixShape = {
    full: new RegExp(`^${source.full}`),
    head: source.head === undefined ? undefined : new RegExp(`^${source.head}`)
  }
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!)
  cache.set(prefix, shape)
  return shape
}
