/**
 * Salient lines: the lines of a long output that explain a failure (a
 * compiler error, a failing test, a traceback's last line, a panic, a fatal
 * signal), wherever they are, so a preview can show them with their line
 * numbers instead of hiding them between its head and its tail.
 *
 * Rules are data. Each names literals that every line it matches contains;
 * the capture finds those literals in the pass that masks secrets, and only
 * the lines holding one are tested against the rules' patterns.
 *
 * @since 0.1.0
 */
import { latin1 } from "./internal/bytes.js"
import * as Utf8 from "./Utf8.js"

/** What makes a line salient. */
export interface SalienceRule {
  /** A stable id, such as `compiler-diagnostic`. */
  readonly id: string
  /** What the rule finds, for people. */
  readonly description: string
  /** Literals (two bytes or more, case-sensitive) one of which every line the rule matches contains. */
  readonly anchors: ReadonlyArray<string>
  /**
   * Matches a salient line, tested on the whole line without its break. Use
   * JavaScript syntax without backreferences or lookaround, so that a
   * preview can offer the pattern to `grepSpill`.
   */
  readonly pattern: RegExp
  /** A line that also matches this is not salient: a count of zero, a passing test whose name says "error". */
  readonly unless?: RegExp
}

/** A salient line and the rule that picked it. */
export interface SalientLine {
  /** 1-indexed line number in the whole output. */
  readonly line: number
  /** The line, cut to the tracker's `maxChars` when longer. */
  readonly text: string
  readonly cut: boolean
  readonly rule: string
}

/** What a tracker found: the first salient lines, how many there were in all, and the rules that matched. */
export interface Found {
  readonly lines: ReadonlyArray<SalientLine>
  readonly total: number
  readonly rules: ReadonlyArray<string>
}

// Passing-test marks that start lines naming a case (`✓ handles error: ...`, TAP `ok 3 - ...`).
const PASSING = /^\s*(?:[✓✔√]|ok \d|PASS\b|\[PASS\]|passed\b)/

const ZERO_COUNT = /\b(?:0|no|zero) (?:errors?|failures?|failed|failing)\b|\b(?:errors?|failures?|failed|fail)[:=] ?0\b/i

/** The built-in rules for the failure shapes of common tools. */
export const defaultRules: ReadonlyArray<SalienceRule> = [
  {
    id: "compiler-diagnostic",
    description: "a compiler's `file:line:col: error` (gcc, clang, rustc's `-->` lines aside), tsc's `file(line,col): error TS…` and `file:line:col - error TS…`",
    anchors: ["error"],
    pattern: /\S(?::\d+(?::\d+)?|\(\d+,\d+\)):? ?(?:-|:) ?(?:fatal )?error\b/
  },
  {
    id: "typescript",
    description: "tsc's `error TS1234:` diagnostics",
    anchors: ["error"],
    pattern: /\berror TS\d+:/
  },
  {
    id: "rust-error",
    description: "rustc and cargo `error[E0308]: …` and `error: could not compile`",
    anchors: ["error"],
    pattern: /^error(?:\[E\d+\])?: /
  },
  {
    id: "tap-not-ok",
    description: "a failing test in TAP output (`not ok 12 - name`, node --test)",
    anchors: ["not ok"],
    pattern: /^\s*not ok \d+/,
    unless: /# (?:SKIP|TODO)\b/i
  },
  {
    id: "test-fail-label",
    description: "a test runner's FAIL/FAILED label (vitest, jest, pytest, go test, cargo test's `... FAILED`)",
    anchors: ["FAIL"],
    pattern: /^\s*(?:-{3} )?FAIL(?:ED)?\b|\bFAILED\b.*::|\.\.\. FAILED\b/,
    unless: ZERO_COUNT
  },
  {
    id: "test-cross",
    description: "a failing test marked with ✗, × or ✖ (vitest, node --test's spec reporter, mocha)",
    anchors: ["✗", "×", "✖"],
    pattern: /^\s*[✗×✖] /,
    unless: ZERO_COUNT
  },
  {
    id: "assertion",
    description: "an assertion failure message",
    anchors: ["Assertion", "assertion", "expected"],
    pattern: /\bAssertionError\b|\b[Aa]ssertion (?:failed|error)\b|\b[Aa]ssertion [`'].*[`'] failed|^\s*(?:→ |Error: )?expected .+ to (?:be|equal|deeply equal|strictly equal|have|include|match|contain|throw)\b/,
    unless: PASSING
  },
  {
    id: "traceback",
    description: "the start of a Python traceback",
    anchors: ["Traceback"],
    pattern: /^Traceback \(most recent call last\):/
  },
  {
    id: "exception-line",
    description: "an exception's own line: Python's last traceback line, Node's `TypeError: …`, Java's `Exception in thread`",
    anchors: ["Error", "Exception"],
    pattern: /^(?:Uncaught )?(?:[A-Za-z_$][\w$]*\.)*(?:[A-Z][\w$]*)?(?:Error|Exception)(?: \[[\w-]+\])?(?::|$)|^Exception in thread "/,
    unless: ZERO_COUNT
  },
  {
    id: "panic",
    description: "a Rust panic (`thread 'main' panicked at`) or a Go `panic:`",
    anchors: ["panicked at", "panic: "],
    pattern: /thread '[^']*'(?: \(\d+\))? panicked at|^panic: /
  },
  {
    id: "fatal-signal",
    description: "a process killed by a fatal signal: segmentation fault, abort, kill, bus error, or any crash that dumped core",
    anchors: ["Segmentation", "(core dumped)", "Aborted", "Killed", "error"],
    pattern: /Segmentation fault|\(core dumped\)|\bAborted\b|(?:^|\s)Killed(?:\s|$)|Bus error/
  },
  {
    id: "npm-error",
    description: "npm's `npm error` (npm 10+) and `npm ERR!` lines",
    anchors: ["error", "ERR!"],
    pattern: /^npm (?:error|ERR!)/
  },
  {
    id: "make-error",
    description: "make's `make: *** … Error 1` and `not remade because of errors`",
    anchors: ["***", "not remade"],
    pattern: /^g?make(?:\[\d+\])?: \*\*\* |not remade because of errors/
  },
  {
    id: "fatal",
    description: "a `fatal:` line (git and others)",
    anchors: ["fatal", "FATAL"],
    pattern: /^(?:fatal|FATAL)(?: error)?:/
  },
  {
    id: "error-line",
    description: "a line that says error in a way that is not a count of zero: `error: …`, `ERROR …`, `[error]`",
    anchors: ["error", "Error", "ERROR"],
    pattern: /^\s*(?:(?:ERROR|Error|error):|ERROR\b)|\[(?:ERROR|Error|error)\]|\s(?:ERROR|Error|error): /,
    unless: new RegExp(`${ZERO_COUNT.source}|${PASSING.source}`, "i")
  }
]

/** Rules ready for a tracker: the literals to watch for, and a test for one line. */
export interface Compiled {
  /** The anchors as latin1 views of their UTF-8 bytes, as a masker's watch list wants them. */
  readonly literals: ReadonlyArray<string>
  /** The first rule a line is salient by, or undefined. */
  readonly test: (line: string) => SalienceRule | undefined
  /** A pattern that finds the lines the given rules match, for `grepSpill`. */
  readonly grepPattern: (ruleIds: ReadonlyArray<string>) => string
}

/** Compiles rules once for any number of trackers. */
export const compile = (rules: ReadonlyArray<SalienceRule> = defaultRules): Compiled => {
  const literals = [...new Set(rules.flatMap((r) => r.anchors))]
    .map((a) => latin1(Utf8.encode(a)))
    .filter((a) => a.length >= 2)
  return {
    literals,
    test: (line) => rules.find((r) => r.pattern.test(line) && !(r.unless?.test(line) ?? false)),
    grepPattern: (ids) =>
      rules.filter((r) => ids.includes(r.id)).map((r) => r.pattern.source).join("|")
  }
}

/** Finds salient lines in output fed in order, given where watched literals begin. */
export interface Tracker {
  /** A watched literal begins at this output offset (as a masker's watch reports). */
  readonly mark: (position: number) => void
  /** The next output bytes, starting at output offset `start` and at line `line` (1-indexed). */
  readonly accept: (chunk: Uint8Array, start: number, line: number) => void
  readonly result: () => Found
}

/** Options of a tracker. */
export interface TrackerOptions {
  /** Salient lines kept, the first ones; 20 by default. */
  readonly keep?: number
  /** Longest line kept whole, in code points; longer ones are cut. 300 by default. */
  readonly maxChars?: number
}

/** A tracker over compiled rules. */
export const tracker = (compiled: Compiled, options: TrackerOptions = {}): Tracker => {
  const keep = options.keep ?? 20
  const maxChars = options.maxChars ?? 300
  let marks: Array<number> = []
  const lines: Array<SalientLine> = []
  const rules = new Set<string>()
  let total = 0
  let lastTested = -1
  return {
    mark: (position) => void marks.push(position),
    accept: (bytes, start, firstLine) => {
      if (marks.length === 0) return
      const chunk = bytes
      const end = start + chunk.length
      const later: Array<number> = []
      let line = firstLine
      let counted = 0 // chunk offset up to which line breaks are counted into `line`
      for (const mark of marks) {
        if (mark >= end) {
          later.push(mark)
          continue
        }
        const at = Math.max(0, mark - start)
        for (let nl = chunk.indexOf(10, counted); nl !== -1 && nl < at; nl = chunk.indexOf(10, nl + 1)) line++
        counted = Math.max(counted, at)
        if (line === lastTested) continue
        lastTested = line
        const from = at === 0 ? 0 : chunk.lastIndexOf(10, at - 1) + 1
        const stop = chunk.indexOf(10, at)
        const lineEnd = stop === -1 ? chunk.length : stop
        const text = Utf8.decodeLossy(chunk.subarray(from, lineEnd > from && chunk[lineEnd - 1] === 13 ? lineEnd - 1 : lineEnd))
        const rule = compiled.test(text)
        if (rule === undefined) continue
        total++
        rules.add(rule.id)
        if (lines.length < keep) {
          const shown = Utf8.takeCodePoints(text, maxChars)
          lines.push({ line, text: shown, cut: shown.length < text.length, rule: rule.id })
        }
      }
      marks = later
    },
    result: () => ({ lines, total, rules: [...rules] })
  }
}

/** The salient lines of a whole text, for hosts that hold output in memory. */
export const find = (text: string, compiled: Compiled = compile(), options: TrackerOptions = {}): Found => {
  const bytes = Utf8.encode(text)
  const t = tracker(compiled, options)
  const latin = latin1(bytes)
  const positions = new Set<number>()
  for (const literal of compiled.literals) {
    for (let at = latin.indexOf(literal); at !== -1; at = latin.indexOf(literal, at + 1)) positions.add(at)
  }
  for (const p of [...positions].sort((a, b) => a - b)) t.mark(p)
  t.accept(bytes, 0, 1)
  return t.result()
}
