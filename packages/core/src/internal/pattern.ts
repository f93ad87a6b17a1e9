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

/** The character a class of one character stands for (`[.]`, `[$]`, `[\]]`), or undefined. */
const singleOf = (p: string, i: number, end: number): string | undefined => {
  const inner = p.slice(i + 1, end - 1)
  if (p[end - 1] !== "]") return undefined
  if (inner.length === 1 && inner !== "^" && inner !== "\\" && PRINTABLE.test(inner)) return inner
  if (inner.length === 2 && inner[0] === "\\" && PRINTABLE.test(inner[1]!) && !/[0-9A-Za-z]/.test(inner[1]!)) return inner[1]
  return undefined
}

/**
 * Every run of ASCII characters that every match contains, taken from the
 * pattern's top level (outside groups, with no top-level `|`), of at least
 * `minLength` characters, longest first (the first of equal ones first);
 * undefined when there is none. At most `maxLength` characters of a run
 * are kept, a part of it that is just as required. A class of one
 * character (`[.]`) counts as that character.
 */
export const requiredRuns = (p: string, minLength = 3, maxLength = 64): Array<string> | undefined => {
  const runs: Array<string> = []
  let run = ""
  const end = () => {
    if (run.length >= minLength && !runs.includes(run.slice(0, maxLength))) runs.push(run.slice(0, maxLength))
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
      literal = singleOf(p, i, i + width)
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
  if (runs.length === 0) return undefined
  return runs.sort((a, b) => b.length - a.length)
}

/** The longest of `requiredRuns`: undefined when there is none of at least `minLength` characters. */
export const requiredLiteral = (p: string, minLength = 3, maxLength = 64): string | undefined =>
  requiredRuns(p, minLength, maxLength)?.[0]

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
  const sets = requiredSets(p)
  return sets === undefined ? undefined : [...new Set(sets.map((runs) => runs[0]!))]
}

/**
 * For each top-level alternative, every ASCII text all its matches contain
 * (its `requiredRuns`): a search may look for whichever is rarest in what
 * it searches. Undefined as for `requiredLiterals`; alternatives with the
 * same texts count once.
 */
export const requiredSets = (p: string): ReadonlyArray<ReadonlyArray<string>> | undefined => {
  const parts = alternatives(p)
  if (parts.length > MAX_ALTERNATIVES) return undefined
  const out: Array<Array<string>> = []
  for (const part of parts) {
    const runs = requiredRuns(part)
    if (runs === undefined) return undefined
    if (!out.some((seen) => seen.length === runs.length && seen.every((run, i) => run === runs[i]))) out.push(runs)
  }
  return out
}
