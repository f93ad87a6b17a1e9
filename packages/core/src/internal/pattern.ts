/**
 * A small reader of JavaScript regular expression syntax (no `u` flag): it
 * finds the constructs no linear-time engine runs, and a literal every match
 * must contain, which a search looks for with a plain substring search first.
 *
 * @internal
 */

/** A construct that needs backtracking, where it is in the pattern. */
export interface Refused {
  readonly construct: "backreference" | "lookahead" | "lookbehind"
  /** The construct as written, such as `\1`, `\k<name>` or `(?=`. */
  readonly text: string
  readonly index: number
}

const QUANTIFIER = /^\{\d+(?:,\d*)?\}/

/** Length of the quantifier at `i` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe followed by `?`), or 0. */
const quantifierAt = (p: string, i: number): number => {
  const c = p[i]
  let n = 0
  if (c === "*" || c === "+" || c === "?") n = 1
  else if (c === "{") n = QUANTIFIER.exec(p.slice(i, i + 24))?.[0].length ?? 0
  if (n > 0 && p[i + n] === "?") n++
  return n
}

/** Index just past the character class that opens at `i` (JavaScript rules: `]` right after `[` or `[^` closes it). */
const classEnd = (p: string, i: number): number => {
  let j = i + 1
  while (j < p.length && p[j] !== "]") j += p[j] === "\\" ? 2 : 1
  return Math.min(j + 1, p.length)
}

/** The first construct that needs backtracking, outside character classes; undefined when there is none. */
export const refused = (p: string): Refused | undefined => {
  for (let i = 0; i < p.length;) {
    const c = p[i]
    if (c === "\\") {
      const next = p[i + 1] ?? ""
      if (next >= "1" && next <= "9") {
        const digits = /^\d+/.exec(p.slice(i + 1, i + 8))![0]
        return { construct: "backreference", text: `\\${digits}`, index: i }
      }
      if (next === "k" && p[i + 2] === "<") {
        const close = p.indexOf(">", i)
        return { construct: "backreference", text: p.slice(i, close === -1 ? i + 3 : close + 1), index: i }
      }
      i += 2
    } else if (c === "[") {
      i = classEnd(p, i)
    } else if (c === "(" && p[i + 1] === "?") {
      const head = p.slice(i, i + 4)
      if (head.startsWith("(?=") || head.startsWith("(?!")) return { construct: "lookahead", text: head.slice(0, 3), index: i }
      if (head === "(?<=" || head === "(?<!") return { construct: "lookbehind", text: head, index: i }
      i += 2
    } else {
      i++
    }
  }
  return undefined
}

const PRINTABLE = /^[\x20-\x7e]$/

/**
 * The longest run of ASCII characters that every match contains, taken
 * from the pattern's top level (outside groups, with no top-level `|`);
 * undefined when there is none of at least `minLength` characters. At most
 * `maxLength` characters are kept, a part of the run that is just as
 * required.
 */
export const requiredLiteral = (p: string, minLength = 3, maxLength = 64): string | undefined => {
  let best = ""
  let run = ""
  const end = () => {
    if (run.length > best.length) best = run
    run = ""
  }
  let depth = 0
  for (let i = 0; i < p.length;) {
    const c = p[i]!
    let literal: string | undefined
    let width = 1
    if (c === "\\") {
      const next = p[i + 1] ?? ""
      width = 2
      // an escaped punctuation character stands for itself; letters and digits are classes, anchors or codes
      if (next !== "" && PRINTABLE.test(next) && !/[0-9A-Za-z]/.test(next)) literal = next
    } else if (c === "[") {
      width = classEnd(p, i) - i
    } else if (c === "(") {
      depth++
    } else if (c === ")") {
      depth = Math.max(0, depth - 1)
    } else if (c === "|") {
      if (depth === 0) return undefined
    } else if (depth === 0 && PRINTABLE.test(c) && !".^$*+?{".includes(c)) {
      literal = c
    } else if (c === "{" && quantifierAt(p, i) === 0 && depth === 0) {
      literal = c
    }
    const q = quantifierAt(p, i + width)
    if (literal !== undefined && depth === 0 && q === 0) run += literal
    else end()
    i += width + q
  }
  end()
  return best.length >= minLength ? best.slice(0, maxLength) : undefined
}

/** The pattern's top-level alternatives (split at each `|` outside groups and classes); the pattern alone when it has none. */
export const alternatives = (p: string): Array<string> => {
  const out: Array<string> = []
  let depth = 0
  let from = 0
  for (let i = 0; i < p.length;) {
    const c = p[i]
    if (c === "\\") i += 2
    else if (c === "[") i = classEnd(p, i)
    else {
      if (c === "(") depth++
      else if (c === ")") depth = Math.max(0, depth - 1)
      else if (c === "|" && depth === 0) {
        out.push(p.slice(from, i))
        from = i + 1
      }
      i++
    }
  }
  out.push(p.slice(from))
  return out
}

/** Most alternatives a prefilter looks for; a pattern with more is scanned without one. */
export const MAX_ALTERNATIVES = 8

/**
 * ASCII texts one of which every match contains: the required literal of
 * each top-level alternative (`error|FAIL` gives `error` and `FAIL`).
 * Undefined when some alternative has none, or there are more than
 * `MAX_ALTERNATIVES`. With `ignoreCase` they hold for letters of either case.
 */
export const requiredLiterals = (p: string): ReadonlyArray<string> | undefined => {
  const parts = alternatives(p)
  if (parts.length > MAX_ALTERNATIVES) return undefined
  const out: Array<string> = []
  for (const part of parts) {
    const literal = requiredLiteral(part)
    if (literal === undefined) return undefined
    if (!out.includes(literal)) out.push(literal)
  }
  return out
}
