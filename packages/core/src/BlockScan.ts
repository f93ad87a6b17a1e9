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
