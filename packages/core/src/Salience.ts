/**
 * Salient lines: the lines of a long output that explain a failure (a
 * compiler error, a test's assertion, a traceback's last line, a command's
 * complaint, a fatal signal), wherever they are, so a preview can show them
 * with their line numbers instead of hiding them between its head and tail.
 *
 * Rules are data, grouped by the tool families whose output they read. Each
 * names literals that every line it matches contains; the capture finds
 * those literals in the pass that masks secrets, and only the lines holding
 * one are tested against the rules' patterns.
 *
 * A rule either *explains* (names what went wrong: `undefined reference to
 * 'x'`, `E   assert 1.0 == 2.0`) or *reports* (says that something failed:
 * `ld returned 1 exit status`, `--- FAIL: TestX`, `make: *** … Error 1`). A
 * rule may take the lines around its match that belong with it: the
 * `In function` line above an undefined reference, the frame above a
 * traceback's last line, the first stack frame under an exception, the
 * assertion message a reporting line points back to. A preview shows the
 * explaining lines first, then what reports point to, then the reports.
 *
 * A line is a claim, not a mention: lines of a diff's hunks, of a fenced
 * block, and of a `grep -n` listing quote text rather than report it, and
 * are never salient, nor are passing tests whose names mention an error.
 *
 * @since 0.1.0
 */
import { concat, copyOf, latin1 } from "./internal/bytes.js"
import { newlines as countNewlines } from "./internal/kernel/kernel.js"
import * as Prefix from "./internal/prefix.js"
import * as Ring from "./internal/ring.js"
import { type AnchorScan, makeAnchorScan } from "./internal/secrets/anchors.js"
import * as Terminal from "./Terminal.js"
import * as Utf8 from "./Utf8.js"

/** Lines near a rule's match that belong with it, walked from the nearest outwards. */
export interface SalienceContext {
  /** Most lines taken. */
  readonly take: number
  /** Most lines looked at (blank and skipped ones included); `take` plus 2 by default. */
  readonly within?: number
  /** A line taken matches this; any line that is not blank by default. */
  readonly match?: RegExp
  /** Lines passed over without being taken; blank lines always are. */
  readonly skip?: RegExp
  /** When true, a line that neither matches nor is skipped is passed over; by default it ends the walk. */
  readonly seek?: boolean
  /** The walk ends after a taken line that matches this. */
  readonly last?: RegExp
  /**
   * A taken line that matches this takes the next line that is not blank
   * too, whatever it holds: the first line of a YAML block under a key
   * (TAP's `error: |-`, whose next line is the assertion's own message).
   */
  readonly follow?: RegExp
  /**
   * The lines taken list causes, outermost first (anyhow's `Caused by:`
   * list): the last one taken is the deepest cause, and explains.
   */
  readonly deepest?: boolean
}

/**
 * What a matched line is: it `explains` a failure, it `reports` one (and
 * may point back to what explains it), or it `opens` a block of output named
 * by the pattern's first group (an npm script's `> name@1.0.0 build`), whose
 * last lines a later report can name with `recall`.
 */
export type SalienceRole = "explains" | "reports" | "opens"

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
  /** `explains` by default. */
  readonly role?: SalienceRole
  /** The tool family the rule reads, for people: `c`, `node`, `go`. */
  readonly family?: string
  /** Lines just before the match that belong with it. */
  readonly before?: SalienceContext
  /** Lines just after the match that belong with it. */
  readonly after?: SalienceContext
  /** For a report far from its cause: the first group of this pattern names a block (see `opens`) whose last lines explain it. */
  readonly recall?: RegExp
  /**
   * Where a matched line stands in a chain of causes: the `top` of one (an
   * exception, an error), or a `cause` of the chain it follows (Java's
   * `Caused by:`, Node's `[cause]:`). A cause makes the lines of its chain
   * before it report rather than explain: the deepest cause says what went wrong.
   */
  readonly chain?: "top" | "cause"
}

/** A salient line and the rule that picked it. */
export interface SalientLine {
  /** 1-indexed line number in the whole output. */
  readonly line: number
  /** The line without terminal colour codes, cut in the middle to the tracker's `maxChars` when longer. */
  readonly text: string
  readonly cut: boolean
  readonly rule: string
  /** `explains` or `reports` for a match, `context` for a line taken with one; `explains` when absent. */
  readonly role?: "explains" | "reports" | "context"
  /** For a context line: the line number of the match it was taken for. */
  readonly of?: number
}

/** What a tracker found: the first salient lines, how many there were in all, and the rules that matched. */
export interface Found {
  /** Matches and the lines taken with them, in line order. */
  readonly lines: ReadonlyArray<SalientLine>
  /** Matched lines in the whole output, context lines not counted. */
  readonly total: number
  readonly rules: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------
// Shapes shared by several rules.

// Passing-test marks that start lines naming a case (`✓ handles error: ...`,
// TAP `ok 3 - ...`), and pytest's and unittest's verbose results.
const PASSING = /^\s*(?:[✓✔√]|ok \d|PASS\b|\[PASS\]|passed\b)|\sPASSED\b|\.\.\. ok$/

const ZERO_COUNT = /\b(?:0|no|zero) (?:errors?|failures?|failed|failing)\b|\b(?:errors?|failures?|failed|fail)[:=] ?0\b/i

const QUIET = new RegExp(`${ZERO_COUNT.source}|${PASSING.source}`, "i")

// Maven's `[ERROR]` lines that carry no failure of their own: blank ones, the
// headers over the lines that do, and its advice after a failed build.
const MAVEN_ADVICE =
  /^\[ERROR\]\s*(?:$|-> \[Help|\[Help \d+\]|To see the full stack trace|Re-run Maven|For more information about the errors|After correcting the problems|Please refer to|mvn <args>|Failures:\s*$|Errors:\s*$|COMPILATION ERROR\s*:?\s*$)/

// A stack frame: Node's `    at f (file:1:2)`, Java's `\tat a.B.c(B.java:3)`, vitest's ` ❯ file:1:2`.
const STACK_FRAME = /^\s+at \S|^\s+❯ \S/

// A stack frame of a runtime, a standard library or a dependency rather than
// the project's own code: a trace's first frame that is not one is where its
// code went wrong.
const LIBRARY_FRAME =
  /^\s+at (?:(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|org\.junit|org\.opentest4j|org\.apache|org\.gradle|junit|System|Microsoft|Mono)\.|[\w.]+\/(?:java|jdk|sun)\.|node:|new Promise|process\.processTicksAndRejections|.*[( ](?:node:|internal\/)|.*\/node_modules\/|.*\/rustc\/|.*\/(?:site|dist)-packages\/)|^\s+File "(?:<frozen|\/usr\/lib\/python|.*\/(?:site|dist)-packages\/)|^\s*(?:runtime|testing|reflect)\.\S+\(|^\s+\/usr\/(?:local\/)?(?:lib\/)?go\//

// Words of a complaint in a program's own output (a test's message under a
// runner's failure line): what a failure's first lines say when they say why.
const COMPLAINT = /\b(?:error|fail(?:ed|ure)?|expected|assert(?:ion)?|mismatch|differs?|wrong|invalid|cannot|can't|unable|missing|not found|denied|refused|timed? ?out|panic|abort(?:ed)?)\b/i

// A compiler's code frame under a diagnostic (`   14 |   return x;`, `      |   ^~~`) and caret lines.
const CODE_FRAME = /^\s*\d*\s+\|(?:\s|$)|^\s*[\^~]+\s*$/

// What reports point back to when nothing more precise is known: the last
// lines before them that are not blank, a code frame, a warning or a note.
// (A walk back from a report also ends at a line that is salient itself.)
const QUIET_WORDS = /(?:^|: )(?:warning|note)(?::|\[)/
const lastWords = (skip?: RegExp, stop?: RegExp): SalienceContext => ({
  take: 2,
  within: 8,
  skip: new RegExp(`${CODE_FRAME.source}|${QUIET_WORDS.source}${skip === undefined ? "" : `|${skip.source}`}`),
  ...(stop === undefined ? {} : { match: new RegExp(`^(?!${stop.source})`) })
})

/** The built-in rules for the failure shapes of common tools. */
export const defaultRules: ReadonlyArray<SalienceRule> = [
  // --- C and C++ compilers, linkers ---------------------------------------
  {
    id: "undefined-reference",
    family: "c",
    description: "a linker's `undefined reference to`, `multiple definition of`, `undefined symbol` or `cannot find -l`, with the `In function` line above",
    anchors: ["reference to", "multiple definition", "undefined symbol", "cannot find -l"],
    pattern: /^(?:\S+: )+(?:error: )?(?:undefined reference to|multiple definition of|undefined symbol:|cannot find -l)/,
    before: { take: 1, within: 6, match: /[Ii]n function [`'‘]|: in function /, skip: /undefined reference to|multiple definition of/ }
  },
  {
    id: "linker-exit",
    family: "c",
    role: "reports",
    description: "`collect2: error: ld returned 1 exit status`, clang's `linker command failed`",
    anchors: ["error"],
    pattern: /ld returned \d+ exit status|linker command failed with exit code/,
    before: lastWords()
  },
  {
    id: "compiler-diagnostic",
    family: "c",
    description: "a compiler's `file:line:col: error:` (gcc, clang, javac), tsc's `file(line,col): error TS…` and `file:line:col - error TS…`, with the `In function` line above and javac's `symbol:` line below",
    anchors: ["error"],
    pattern: /^\s*[^\s:]+(?::\d+(?::\d+)?:|\(\d+,\d+\):) (?:fatal )?error\b|^\s*[^\s:]+:\d+:\d+ - error\b/,
    before: { take: 1, within: 1, match: /: In (?:member |static )?function |: In (?:constructor|destructor) |^In file included from / },
    after: { take: 1, within: 4, seek: true, match: /^\s+symbol:\s/ }
  },
  {
    id: "typescript",
    family: "typescript",
    description: "tsc's `error TS1234:` diagnostics without a file",
    anchors: ["error TS"],
    pattern: /^error TS\d+:|: error TS\d+:/
  },
  // --- make, CMake, Ninja -------------------------------------------------
  {
    id: "make-explains",
    family: "make",
    description: "make's own failures: `No rule to make target`, `missing separator`",
    anchors: ["***"],
    pattern: /\*\*\* (?:No rule to make target|missing separator|No targets specified|commands commence before first target|recipe commences before first target)/
  },
  {
    id: "make-error",
    family: "make",
    role: "reports",
    description: "make's `make: *** [target] Error 1`, pointing back to the recipe's last words (not past make's own lines)",
    anchors: ["***"],
    pattern: /^g?make(?:\[\d+\])?: \*\*\* /,
    before: lastWords(undefined, /g?make(?:\[\d+\])?: /)
  },
  {
    id: "make-not-remade",
    family: "make",
    role: "reports",
    description: "make -k's `Target 'all' not remade because of errors`",
    anchors: ["not remade"],
    pattern: /^g?make(?:\[\d+\])?: Target .* not remade because of errors/
  },
  {
    id: "cmake-error",
    family: "cmake",
    description: "CMake's `CMake Error at CMakeLists.txt:5 (find_package):` with the indented lines that say what",
    anchors: ["CMake Error"],
    pattern: /^CMake Error\b/,
    after: { take: 2, within: 4, match: /^\s+\S/ }
  },
  {
    id: "ninja",
    family: "cmake",
    role: "reports",
    description: "Ninja's `FAILED: target` and `ninja: build stopped`",
    anchors: ["FAILED: ", "ninja: "],
    pattern: /^FAILED: |^ninja: (?:build stopped|error):/
  },
  // --- eslint, prettier ---------------------------------------------------
  {
    id: "eslint",
    family: "eslint",
    description: "an eslint error (not a warning): stylish `  98:16  error  …` under its file's name, compact `file: line 98, col 16, Error - …`, unix `file:98:16: … [Error/rule]`",
    anchors: ["error", "Error"],
    pattern: /^\s+\d+:\d+\s+error\s+\S|: line \d+, col \d+, Error - |\[Error\/[\w@/-]+\]$/,
    before: { take: 1, within: 60, seek: true, match: /^(?:\/|[A-Za-z]:\\)\S*$/ }
  },
  {
    id: "eslint-summary",
    family: "eslint",
    role: "reports",
    description: "eslint's `✖ 12 problems (1 error, 11 warnings)` when there are errors",
    anchors: ["problem"],
    pattern: /^✖ \d+ problems? \(\d+ errors?/,
    unless: /\(0 errors/
  },
  {
    id: "prettier",
    family: "prettier",
    role: "reports",
    description: "prettier's `[warn] Code style issues found`, pointing back to the `[warn] file` lines above it",
    anchors: ["Code style issues"],
    pattern: /^\[warn\] Code style issues/,
    before: { take: 6, within: 12, match: /^\[warn\] \S+$/ }
  },
  // --- test runners ---------------------------------------------------------
  {
    id: "go-test-fail",
    family: "go",
    role: "reports",
    description: "go test's `--- FAIL: TestX`, with the `x_test.go:33: message` lines printed before it (-v) or after it",
    anchors: ["--- FAIL"],
    pattern: /^\s*--- FAIL: /,
    before: { take: 3, within: 10, match: /^\s+\S+\.go:\d+: /, skip: /^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)|--- FAIL)/ },
    after: { take: 3, within: 4, match: /^\s+\S+\.go:\d+: / }
  },
  {
    id: "jest-block",
    family: "jest",
    role: "reports",
    description: "a jest failure block's `● suite › test` header, with the error lines under it",
    anchors: ["●"],
    pattern: /^\s*● \S/,
    unless: /^\s*● Console$/,
    after: { take: 3, within: 6, match: /^ {4}[^\s>]/ }
  },
  {
    id: "jest-expect",
    family: "jest",
    description: "jest's `expect(received).toBe(expected)` with its Expected and Received lines",
    anchors: ["expect(received)"],
    pattern: /^\s+expect\(received\)/,
    after: { take: 2, within: 4, match: /^\s+(?:Expected|Received)(?: [\w ]+)?: / }
  },
  {
    id: "pytest-e",
    family: "python",
    description: "pytest's `E   ` lines: the assertion or exception inside a failing test",
    anchors: ["E  "],
    pattern: /^E {2,}\S/
  },
  {
    id: "tap-not-ok",
    family: "node",
    role: "reports",
    description: "a failing test in TAP output (`not ok 12 - name`, node --test), with its `error:` line and the assertion message under it",
    anchors: ["not ok"],
    pattern: /^\s*not ok \d+/,
    unless: /# (?:SKIP|TODO)\b/i,
    after: { take: 4, within: 9, seek: true, match: /^\s+error: |^\s+(?:Expected|expected)\b|!==|^\s+actual: /, follow: /^\s+error: [|>]-?\s*$/ }
  },
  {
    id: "test-fail-label",
    family: "tests",
    role: "reports",
    description: "a test runner's FAIL/FAILED label (vitest, jest, pytest, unittest, cargo test's `... FAILED`)",
    anchors: ["FAIL", "ERROR"],
    pattern: /^\s*FAIL(?:ED)?\b|\bFAILED\b.*::|::\S+ (?:FAILED|ERROR)\b|\.\.\. (?:FAIL|FAILED|ERROR)$|^(?:FAIL|ERROR): \w/,
    unless: ZERO_COUNT
  },
  {
    id: "test-cross",
    family: "tests",
    role: "reports",
    description: "a failing test marked with ✗, ×, ✖ or ✕ (vitest, jest, node --test's spec reporter, mocha), with vitest's `→` line",
    anchors: ["✗", "×", "✖", "✕"],
    pattern: /^\s*[✗×✖✕] /,
    unless: ZERO_COUNT,
    after: { take: 1, within: 1, match: /^\s+→ / }
  },
  {
    id: "assertion",
    family: "tests",
    description: "an assertion failure, with the values under it (`1240 !== 1250`, `left: 1`)",
    anchors: ["Assertion", "assertion", "expected"],
    pattern: /^\s*(?:Uncaught )?AssertionError\b(?: \[\w+\])?:|^(?:[^\s:]+: )+(?:[^\s:]+:\d+: )?(?:[^:]*: )?Assertion [`'].*[`'] failed|^\s*assertion [`'].*[`'] failed|^(?:[^\s:]+: )*[Aa]ssertion (?:failed|error)\b|^\s*(?:→ |Error: )?expected .+ to (?:be|equal|deeply equal|strictly equal|have|include|match|contain|throw)\b/,
    unless: PASSING,
    after: { take: 2, within: 3, match: /\S\s*!==?\s*\S|\S\s+==\s+\S|^\s*(?:left|right|expected|actual)\s*:/ }
  },
  // --- Python, Node, Java: exceptions -------------------------------------
  {
    id: "traceback",
    family: "python",
    role: "reports",
    description: "the start of a Python traceback (its last line explains it)",
    anchors: ["Traceback"],
    pattern: /^\s*Traceback \(most recent call last\):/
  },
  {
    id: "unhandled-rejection",
    family: "node",
    description: "Node's unhandled promise rejection with a reason that is not an Error",
    anchors: ["UnhandledPromiseRejection"],
    pattern: /^\[?UnhandledPromiseRejection: /
  },
  {
    id: "exception-line",
    family: "exceptions",
    description: "an exception's own line (Python's last traceback line, Node's `TypeError: …`, Java's `Exception in thread`), with the frame above it (Python) or the first frame under it",
    anchors: ["Error", "Exception"],
    chain: "top",
    pattern: /^\s*(?:Uncaught )?(?:[A-Za-z_$][\w$]*\.)*(?:[A-Z][\w$]*)?(?:Error|Exception)(?: \[[\w-]+\])?: \S|^(?:[A-Za-z_$][\w$]*\.)*(?:[A-Z][\w$]*)?(?:Error|Exception)$|^Exception in thread "|^Unhandled [Ee]xception[.:] \S/,
    // a docstring's `Raises:` entry says when, where a raised exception says what
    unless: new RegExp(`${QUIET.source}|^\\s+[\\w.]*(?:Error|Exception): (?:if|when|raised|in case)\\b`, "i"),
    before: { take: 2, within: 5, match: /^ {2}File "|^ {4}\S/, skip: /^\s*[\^~]+\s*$/, last: /^\s+File "/ },
    after: { take: 1, within: 12, seek: true, match: /^\s+at \S|^\s+❯ \S/, skip: LIBRARY_FRAME, last: STACK_FRAME }
  },
  {
    id: "cause",
    family: "exceptions",
    chain: "cause",
    description: "a cause in a chain (Java's `Caused by: X: …`, Node's `[cause]: Error: …`, .NET's ` ---> X: …`): the deepest explains, with the first frame of the project's own code under it",
    anchors: ["Caused by: ", "[cause]: ", "---> "],
    pattern: /^\s*Caused by: \S|^\s*\[cause\]: \S|^\s*---> [\w.]+(?:Error|Exception)\b/,
    after: { take: 1, within: 16, seek: true, match: /^\s+at \S/, skip: LIBRARY_FRAME }
  },
  {
    id: "cause-list",
    family: "exceptions",
    chain: "cause",
    role: "reports",
    description: "a list of causes under `Caused by:` (Rust's anyhow, eyre): its last entry is the deepest cause, and explains",
    anchors: ["Caused by:"],
    pattern: /^\s*Caused by:$/,
    after: { take: 8, within: 10, match: /^\s+(?:\d+: )?\S/, deepest: true }
  },
  {
    id: "panic",
    family: "rust",
    description: "a Rust panic (`thread 'main' panicked at`) with its message, or a Go `panic:`",
    anchors: ["panicked at", "panic: "],
    pattern: /thread '[^']*'(?: \(\d+\))? panicked at|^panic: /,
    after: { take: 3, within: 8, match: /^(?!note: )\S|^\s+(?:left|right):/, skip: new RegExp(`${LIBRARY_FRAME.source}|^goroutine \\d+ \\[|^panic\\(|^\\[signal `) }
  },
  // --- Go ------------------------------------------------------------------
  {
    id: "go-diagnostic",
    family: "go",
    description: "go build's and go vet's `file.go:12:5: message`, with the `# package` line above",
    anchors: [".go:"],
    pattern: /^(?:vet: )?(?:\.{1,2}\/)?[\w./-]+\.go:\d+:\d+: \S/,
    before: { take: 1, within: 6, seek: true, match: /^# [\w./-]+$/ }
  },
  // --- Rust, cargo ---------------------------------------------------------
  {
    id: "tool-report",
    family: "tools",
    role: "reports",
    description: "`error:` lines that only say a step failed (cargo's `could not compile`, git's `failed to push`, `could not apply`)",
    anchors: ["error"],
    pattern: /^error: (?:could not compile|test failed|\d+ targets? failed|failed to push some refs|could not apply|aborting due to|Recipe \S+ failed|linking with|build failed)/,
    before: lastWords(/^\s*[=-]+> |^\s*= |^For more information/)
  },
  {
    id: "rust-error",
    family: "rust",
    description: "rustc's `error[E0308]: …` and `error: …`, with the `--> file:line:col` line under it",
    anchors: ["error"],
    pattern: /^error(?:\[E\d+\])?: /,
    after: { take: 1, within: 2, match: /^\s*--> / }
  },
  // --- npm, pnpm, yarn ------------------------------------------------------
  {
    id: "script-header",
    family: "npm",
    role: "opens",
    description: "an npm, pnpm or yarn script's `> name@1.0.0 build` header, which opens the block a later report may name",
    anchors: ["> "],
    pattern: /^> (\S+@\d\S*) \S/,
    before: lastWords(/^\s*WARN\s/)
  },
  {
    id: "npm-report",
    family: "npm",
    role: "reports",
    description: "npm's, pnpm's and yarn's lines that say a script just failed, pointing back to its last words",
    anchors: ["Lifecycle script", "ELIFECYCLE", "error Command failed", "Failed"],
    pattern: /^npm (?:error|ERR!) Lifecycle script|^\s*ELIFECYCLE\b|^error Command failed with exit code|^[@\w.-]+\/[\w./-]+ [\w:-]+: Failed$/,
    before: lastWords(/^npm (?:error|ERR!) |^Node\.js v\d|^\s+at |^info |^\$ /)
  },
  {
    id: "npm-summary",
    family: "npm",
    role: "reports",
    description: "npm's and pnpm's summaries of failed scripts (`npm error code 1`, `ERR_PNPM_…`, pnpm's `ERROR  name@1.0.0 build:`), naming the block whose last lines explain it",
    anchors: ["error", "ERR!", "ERR_PNPM", "ERROR"],
    pattern: /^npm (?:error|ERR!) (?:code|path|workspace|location|command|errno|A complete log)\b|^\s*ERR_PNPM_\w+|^\s*ERROR\s+\S+@\S+ \S+: /,
    recall: /^\s*ERROR\s+(\S+@\S+) |^npm (?:error|ERR!) workspace (\S+@\S+)/
  },
  {
    id: "npm-error",
    family: "npm",
    description: "npm's other `npm error` / `npm ERR!` lines (a missing script, a failed install), yarn's `error An unexpected error`",
    anchors: ["error", "ERR!"],
    pattern: /^npm (?:error|ERR!) |^error [A-Z]/
  },
  // --- shells ---------------------------------------------------------------
  {
    id: "command-complaint",
    family: "sh",
    description: "a command's own complaint (`cp: cannot stat 'x': No such file or directory`, `sh: 1: foo: not found`, `Permission denied`), with the `set -x` trace above it",
    anchors: ["No such file", "Permission denied", "not found", "Is a directory", "Not a directory", "not permitted", "No space left", "Read-only file"],
    pattern: /^[\w./[\]+-]+: (?:line \d+: |\d+: )?(?:[^:]*: )*(?:No such file or directory|Permission denied|command not found|not found|Is a directory|Not a directory|Operation not permitted|No space left on device|Read-only file system)$/,
    before: { take: 1, within: 2, match: /^\++ \S/ }
  },
  // --- git ------------------------------------------------------------------
  {
    id: "git",
    family: "git",
    description: "git's `CONFLICT (content): Merge conflict in …` and `! [rejected]` pushes",
    anchors: ["CONFLICT (", "rejected]"],
    pattern: /^CONFLICT \([\w/ -]+\): |^\s*! \[(?:remote )?rejected\]/
  },
  // --- signals, memory --------------------------------------------------------
  {
    id: "fatal-signal",
    family: "signals",
    description: "a process killed by a fatal signal (segmentation fault, abort, kill, bus error, illegal instruction) or by the OOM killer",
    anchors: ["Segmentation", "Aborted", "Killed", "Bus error", "Illegal instruction", "Floating point", "OOMKilled", "Out of memory"],
    pattern: /^(?:[^\s"'`]+: )*(?:line \d+: +)?(?:\d+ +)?(?:Segmentation fault|Bus error|Aborted|Killed|Illegal instruction|Floating point exception)(?:\s|$)|\bOOMKilled\b|^Out of memory: Kill/,
    unless: PASSING
  },
  {
    id: "fatal",
    family: "tools",
    description: "a `fatal:` line (git and others), `FATAL ERROR:` (Node's heap exhaustion), `Fatal Python error:`",
    anchors: ["fatal", "FATAL", "Fatal"],
    pattern: /^(?:fatal|FATAL)(?: error| ERROR)?:|^(?:PHP )?(?:Fatal|Parse) (?:error|Python error)\b|JavaScript heap out of memory/
  },
  // --- Gradle ------------------------------------------------------------------
  {
    id: "gradle-test-failed",
    family: "jvm",
    role: "reports",
    description: "Gradle's `Class > test() FAILED` with the exception and place under it (`AssertionFailedError at TotalsTest.java:8`), and its `> Task :app:test FAILED`",
    anchors: [" FAILED"],
    pattern: /^[\w.$]+ > .+ FAILED$|^> Task :\S+ FAILED$/,
    after: { take: 1, within: 2, match: /^\s+[\w.$]+(?:Error|Exception|Failure)\b/ }
  },
  {
    id: "gradle-failure",
    family: "jvm",
    role: "reports",
    description: "Gradle's `FAILURE: Build failed with an exception.` with what its `* What went wrong:` says",
    anchors: ["FAILURE: Build"],
    pattern: /^FAILURE: Build (?:failed with an exception|completed with \d+ failures?)\.$/,
    after: { take: 2, within: 5, skip: /^\* What went wrong:$|^\d+: Task failed with an exception\.$|^-{5,}$/, last: /^> / }
  },
  // --- docker build ------------------------------------------------------------
  {
    id: "docker-step-failed",
    family: "docker",
    role: "reports",
    description: "a failed `docker build` step: BuildKit's `executor failed running [/bin/sh -c …]: exit code: 1` and `process \"…\" did not complete successfully`, the classic builder's `The command '…' returned a non-zero code: 1`, pointing back to the step's last words",
    anchors: ["executor failed running", "did not complete successfully", "returned a non-zero code"],
    pattern: /^(?:#\d+ )?(?:ERROR: )?(?:failed to solve: )?(?:executor failed running \[.*\]|process ".*" did not complete successfully): exit code: \d+$|^The command '.*' returned a non-zero code: \d+$/,
    before: lastWords(/^#\d+ (?:sha256:|DONE |CACHED$)|^-{6}$|^ > \[.*\]|^ ---> |^Removing intermediate container /)
  },
  // --- Maven -------------------------------------------------------------------
  {
    id: "maven-diagnostic",
    family: "jvm",
    description: "a compiler's diagnostic as Maven prints it (`[ERROR] /src/App.java:[12,9] cannot find symbol`), with javac's `symbol:` and `location:` lines under it",
    anchors: ["[ERROR]"],
    pattern: /^\[ERROR\] \S+\.(?:java|kt|scala|groovy):\[\d+(?:,\d+)?\] \S/,
    after: { take: 2, within: 2, match: /^(?:\[ERROR\] )?\s+(?:symbol|location|required|found|reason):\s/ }
  },
  {
    id: "maven-failure",
    family: "jvm",
    role: "reports",
    description: "Maven's `<<< FAILURE!` and `<<< ERROR!` test lines and its `Failed to execute goal` summary, whose explanation is the exception under the first or the diagnostics above the second",
    anchors: ["<<< FAILURE!", "<<< ERROR!", "Failed to execute goal"],
    pattern: /<<< (?:FAILURE|ERROR)!(?: -- in \S+)?$|^\[ERROR\] Failed to execute goal /
  },
  // --- families: assertions, test summaries, processes ended from outside -----
  {
    id: "assertion-block",
    family: "assertions",
    description: "a test framework's failed expectation with the values under it: RSpec's `Failure/Error:` with `expected:`/`got:`, ExUnit's `Assertion with == failed` with `code:`/`left:`/`right:`",
    anchors: ["Failure/Error:", "Assertion with", "Expected truthy", "match (=) failed"],
    pattern: /^\s*Failure\/Error: \S|^\s*(?:Assertion with \S+ failed|Expected truthy, got \S|match \(=\) failed)/,
    after: { take: 4, within: 7, seek: true, match: /^\s+(?:expected|got|code|left|right|lhs|rhs|arguments|Diff):/ }
  },
  {
    id: "expected-got",
    family: "assertions",
    description: "a check that says what it wanted and what it got (`expected 1250, got 1240`, `got 3, want 4`, `expected: <6> but was: <7>`)",
    anchors: ["expected", "Expected", "want"],
    pattern: /^\s*(?:[\w./-]+(?::\d+)*: )*(?:[Ee]xpected:? [^,;]{1,80}[,;]? (?:but )?(?:got|was|found|received|actual):? \S|got:? [^,;]{1,80}[,;] want:? \S)/,
    unless: new RegExp(`${PASSING.source}|^\\s*(?:it|test|describe|def|fn|func)\\b`)
  },
  {
    id: "failure-header",
    family: "assertions",
    role: "reports",
    description: "a numbered failure's header (ExUnit's `  1) test name (Module)`)",
    anchors: [") test "],
    pattern: /^\s+\d+\) test .+ \([\w.]+\)$/
  },
  {
    id: "test-summary",
    family: "assertions",
    role: "reports",
    description: "a test run's summary when something failed (`31 examples, 1 failure`, `26 tests, 1 failure`, CTest's `1 tests failed out of 120` and `The following tests FAILED:`)",
    anchors: ["failure", "tests failed", "FAILED:"],
    pattern: /^\s*\d+ (?:examples?|tests?|specs?|properties|doctests?)(?:, \d+ \w+)*, [1-9]\d* failures?\b|^\s*Executed \d+ tests?, with [1-9]\d* failures?\b|\btests passed, [1-9]\d* tests? failed out of \d+|^The following tests FAILED:$/,
    after: { take: 3, within: 3, match: /^\s+\d+ - \S/ }
  },
  {
    id: "test-failed-status",
    family: "assertions",
    role: "reports",
    description: "a runner's line for a test that failed with its status after it (CTest's `Test #61: name ...***Failed`), with the complaint in the output under it",
    anchors: ["***"],
    pattern: /^\s*(?:\d+\/\d+ )?Test +#\d+: .*\*\*\*(?:Failed|Exception|Timeout)\b/,
    after: { take: 2, within: 8, seek: true, match: COMPLAINT }
  },
  {
    id: "located-error",
    family: "diagnostics",
    description: "a tool's diagnostic with its place (`psql:migrate.sql:16: ERROR:  duplicate key …`), with the `DETAIL:`/`HINT:` lines under it",
    anchors: ["ERROR", "FATAL", "PANIC"],
    pattern: /^[\w.-]+:(?:[^\s:]+:)?\d+: (?:ERROR|FATAL|PANIC):\s/,
    after: { take: 2, within: 3, match: /^(?:DETAIL|HINT|CONTEXT|LINE \d+):\s/ }
  },
  {
    id: "ci-annotation",
    family: "ci",
    description: "a CI runner's error annotation (`##[error]…`, `::error file=…::…`)",
    anchors: ["##[error]", "::error"],
    pattern: /^##\[error\]|^::error(?: [^:]*)?::/
  },
  {
    id: "process-end",
    family: "signals",
    description: "a process ended from outside: a fatal signal named (`signal: killed`, `SIGKILL`, `SIGSEGV`) or an exit code the shell gives a signal's death (134, 137, 139), Kubernetes' `OOMKilled`",
    anchors: ["SIG", "signal", "exit code", "exit status", "Exit Code"],
    pattern: /\bsignal:? (?:killed|segmentation fault|aborted|SIGKILL|SIGSEGV|SIGABRT|9|11)\b|\b(?:terminated|killed|died) by (?:signal )?SIG(?:KILL|SEGV|ABRT|BUS|ILL|FPE)\b|\b(?:exit(?:ed)? (?:with )?(?:code|status)|Exit Code):?\s+(?:134|137|139)\b/,
    unless: PASSING
  },
  {
    id: "k8s-warning-event",
    family: "kubernetes",
    description: "a Kubernetes event of type Warning (`Warning   BackOff   pod/api-x   Back-off restarting failed container`)",
    anchors: ["Warning"],
    pattern: /^\s*(?:\S+\s+)?Warning\s+[A-Z]\w+\s+(?:\S+\/\S+\s+)?\S/
  },
  // --- the rest ----------------------------------------------------------------
  {
    id: "error-line",
    chain: "top",
    family: "tools",
    description: "a line that begins by saying error: `error: …`, `ERROR …`, `[ERROR] …`, `tool: error: …`, or a log record at level error",
    anchors: ["error", "Error", "ERROR", "FATAL", "CRITICAL"],
    pattern: /^(?:ERROR|Error|error)(?:\[\w+\])?:\s|^ERROR\b|^\[(?:ERROR|error)\]\s|^(?:[\w./-]+: )+(?:fatal )?error: |^\[?\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\]?\s+\[?(?:ERROR|FATAL|CRITICAL)\b|\blevel=(?:error|fatal)\b/,
    unless: new RegExp(`${QUIET.source}|${MAVEN_ADVICE.source}`, "i")
  }
]

// ---------------------------------------------------------------------------
// Lines that quote rather than report.

// git log's commit header, whose message lines (indented by four spaces) quote.
const AUTHOR = /^Author: .*<.*>$/
const DIFF_GIT = /^diff --git /
const HUNK = /^@@@? -\d+(?:,(\d+))? (?:-\d+(?:,(\d+))? )?\+\d+(?:,(\d+))? @@/
const FENCE = /^ {0,3}(?:```|~~~)/
// How long a fence that never closes goes on quoting.
const FENCE_LINES = 400

// `path:12:` or `path-12-` at the start of a line, as grep -n prints, where the
// path has a slash or a dot; what follows a diagnostic's location is a column
// or one space and a word, what follows a listing's is the listed line.
const LISTED = /^(?:\.{0,2}\/)?[\w@+-]*[./][\w@.+/-]*[:-]\d+[:-](?:\d+:)?/
const DIAGNOSTIC_REST = /^ [^\s*]|^\d+ - /

/** True when a line is a `grep -n`-style listing of another file's line, not a diagnostic with a location. */
const isListing = (line: string): boolean => {
  const m = LISTED.exec(line)
  if (m === null) return false
  return !DIAGNOSTIC_REST.test(line.slice(m[0].length))
}

// The prefix pnpm puts before every line of scripts it runs side by side
// (`packages/emails build: `), and the step and time BuildKit's plain
// progress puts before every line a `docker build` step prints (`#10 0.105 `).
const PREFIX = /^[@\w.-]+\/[\w./-]+ [\w:-]+: |^#\d+ \d+\.\d+ /

// Terminal colours and styles (`\x1b[91m`), which forced-colour output puts around words.
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g

/**
 * A line cut to `max` code points, keeping its start and its end (where a
 * message often ends with what it is about) around an ellipsis. A line to
 * cut is first shown plain (`Terminal.plain`), so no cut falls inside an
 * escape sequence; of a very long line, only its two ends are.
 */
export const cutMiddle = (raw: string, max: number): string => {
  const length = Utf8.codePointLength(raw)
  if (length <= max) return raw
  const end = Math.floor((max - 1) * 2 / 5)
  // each end shown plain from a reach of the line that holds enough of it once its escapes are gone: the work
  // grows with what is shown and the escapes around it, not with the line
  const plainEnd = (take: (reach: number) => string, wanted: number): string => {
    for (let reach = 8 * max;; reach *= 4) {
      if (reach >= length) return Terminal.plain(raw)
      const part = Terminal.plain(take(reach))
      if (Utf8.codePointLength(part) > wanted) return part
    }
  }
  const head = plainEnd((reach) => Utf8.takeCodePoints(raw, reach), max)
  if (Utf8.codePointLength(head) <= max) return head
  const tail = plainEnd((reach) => Utf8.takeLastCodePoints(raw, reach), end)
  return Utf8.takeCodePoints(head, max - 1 - end) + "…" + Utf8.takeLastCodePoints(tail, end)
}

/** Rules ready for a tracker: the literals to watch for, and a test for one line. */
export interface Compiled {
  /** The anchors as latin1 views of their UTF-8 bytes, as a masker's watch list wants them. */
  readonly literals: ReadonlyArray<string>
  /**
   * The first rule a line is salient by, or undefined; a listing line
   * (`grep -n`) is never salient. With `after`, offsets where a learned
   * prefix's columns end in the line, the text after each is judged too.
   */
  readonly test: (line: string, after?: ReadonlyArray<number>) => SalienceRule | undefined
  /** A pattern that finds the lines the given rules match, for `grepSpill`; short enough to offer in a preview. */
  readonly grepPattern: (ruleIds: ReadonlyArray<string>) => string
  /** The rules, in the order they are tried. */
  readonly rules: ReadonlyArray<SalienceRule>
}

/** Longest pattern `grepPattern` returns; past it, the matched rules' anchors stand in for their patterns. */
export const GREP_PATTERN_CHARS = 160

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const compiledRules = new WeakMap<ReadonlyArray<SalienceRule>, Compiled>()

/** Compiles rules once for any number of trackers (a list compiled before is not compiled again). */
export const compile = (rules: ReadonlyArray<SalienceRule> = defaultRules): Compiled => {
  let compiled = compiledRules.get(rules)
  if (compiled === undefined) {
    compiled = compileRules(rules)
    compiledRules.set(rules, compiled)
  }
  return compiled
}

const compileRules = (rules: ReadonlyArray<SalienceRule>): Compiled => {
  const salient = rules.filter((r) => r.role !== "opens")
  const literals = [...new Set([...rules.flatMap((r) => r.anchors), "@@ -", "@@@ -", "```", "~~~", "Author: ", "diff --git", "above exception"])]
    .map((a) => latin1(Utf8.encode(a)))
    .filter((a) => a.length >= 2)
  const first = (line: string) => salient.find((r) => r.pattern.test(line) && !(r.unless?.test(line) ?? false))
  const test = (raw: string, after?: ReadonlyArray<number>): SalienceRule | undefined => {
    const line = raw.includes("\x1b[") ? raw.replace(ANSI, "") : raw
    if (isListing(line)) return undefined
    const rule = first(line)
    if (rule !== undefined) return rule
    const prefix = PREFIX.exec(line)
    const known = prefix === null ? undefined : first(line.slice(prefix[0].length))
    if (known !== undefined || after === undefined) return known
    // what follows the learned columns, the message itself (after all of them) first
    for (let k = after.length - 1; k >= 0; k--) {
      const rest = line.slice(after[k]!)
      if (isListing(rest)) return undefined
      const r = first(rest)
      if (r !== undefined) return r
    }
    return undefined
  }
  return {
    literals,
    test,
    rules,
    grepPattern: (ids) => {
      const picked = rules.filter((r) => ids.includes(r.id))
      const whole = picked.map((r) => r.pattern.source).join("|")
      if (whole.length <= GREP_PATTERN_CHARS) return whole
      return [...new Set(picked.flatMap((r) => r.anchors))].map(escape).join("|")
    }
  }
}

/** Finds salient lines in output fed in order, given where watched literals begin. */
export interface Tracker {
  /** A watched literal begins at this output offset (as a masker's watch reports). */
  readonly mark: (position: number) => void
  /**
   * The next output bytes, starting at output offset `start` and at line
   * `line` (1-indexed), with the line breaks they hold when the caller
   * counted them already. The tracker copies what it keeps, so the bytes
   * may change once it returns.
   */
  readonly accept: (chunk: Uint8Array, start: number, line: number, breaks?: number) => void
  /** What the whole lines so far hold, leaving the tracker as it is (the incomplete last line is not judged yet). */
  readonly peek: () => Found
  /** What the output holds, its last line judged too: call once, at its end. */
  readonly result: () => Found
}

/** Options of a tracker. */
export interface TrackerOptions {
  /** Matches kept of each role, the first ones (with the lines taken with them); 20 by default. */
  readonly keep?: number
  /** Keep the newest `keep` matches of each role instead of the first ones (for a window of the newest output). */
  readonly newest?: boolean
  /** Longest line kept whole, in code points; longer ones are cut. 300 by default. */
  readonly maxChars?: number
}

// Bytes of output kept for looking back from a match, and most bytes of one line read.
const RECENT_BYTES = 32 * 1024
const LINE_BYTES = 64 * 1024
// Blocks remembered by name for reports that recall them.
const BLOCKS = 512

const isBlank = (s: string) => s.trim().length === 0

interface Walk {
  readonly spec: SalienceContext
  looked: number
  taken: number
  done: boolean
  /** The last line taken matched `follow`: the next line that is not blank is taken. */
  following: boolean
}

const newWalk = (spec: SalienceContext): Walk => ({ spec, looked: 0, taken: 0, done: false, following: false })

/** Feeds one line to a context walk; true when the line is taken. */
const step = (w: Walk, text: string): boolean => {
  const { spec } = w
  if (w.done) return false
  if (w.looked >= (spec.within ?? spec.take + 2)) {
    w.done = true
    return false
  }
  w.looked++
  if (isBlank(text) || (!w.following && (spec.skip?.test(text) ?? false))) return false
  if (w.following || spec.match === undefined || spec.match.test(text)) {
    w.following = spec.follow?.test(text) ?? false
    w.taken++
    if (w.taken >= spec.take || (spec.last?.test(text) ?? false)) w.done = true
    return true
  }
  if (!spec.seek) w.done = true
  return false
}

/** A line's bytes as text, without the carriage return of a CRLF break. */
const decodeLine = (bytes: Uint8Array) =>
  Utf8.decodeLossy(bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, bytes.length - 1) : bytes)

/** A line as a section shows it: without colour codes, cut in the middle past `maxChars`. */
const shownText = (raw: string, maxChars: number) => {
  const text = raw.includes("\x1b[") ? raw.replace(ANSI, "") : raw
  return Utf8.codePointLength(text) <= maxChars ? { text, cut: raw !== text } : { text: cutMiddle(text, maxChars), cut: true }
}

/** The whole lines just before a line, nearest first, given the bytes that end right before it. */
function* linesBefore(buffer: Uint8Array, fromZero: boolean, line: number) {
  let end = buffer.length // exclusive end of the line below, its break at end - 1
  let n = line
  while (end > 0) {
    const start = buffer.lastIndexOf(10, end - 2) + 1
    if (start === 0 && !fromZero) return
    n--
    yield { line: n, text: decodeLine(buffer.subarray(start, end - 1)) }
    end = start
  }
}

/** The lines a context walks back over from a line, nearest first; a report's walk ends at a line that explains by itself. */
const walkBack = (
  compiled: Compiled,
  spec: SalienceContext,
  before: () => { bytes: Uint8Array; fromZero: boolean },
  line: number,
  toExplanation: boolean,
  inner: (text: string) => string
) => {
  const { bytes, fromZero } = before()
  const w = newWalk(spec)
  const out: Array<{ line: number; text: string }> = []
  for (const l of linesBefore(bytes, fromZero, line)) {
    if (step(w, inner(l.text))) {
      out.push(l)
      if (toExplanation && compiled.test(l.text)?.role !== "reports" && compiled.test(l.text) !== undefined) break
    }
    if (w.done) break
  }
  return out
}

/**
 * Tells, line by line in order, whether a line quotes rather than reports: a
 * diff's hunk line, a fenced block's line, a commit message in git log, or a
 * hunk header, diff header or fence itself.
 */
const quoter = () => {
  let hunkUntil = 0
  let fenceUntil = 0
  let inMessage = false
  return (line: number, text: string): boolean => {
    if (line <= hunkUntil && /^[ +\-\\]/.test(text)) return true
    // a commit message, from git log's Author line to the diff or the next line not indented
    if (AUTHOR.test(text)) {
      inMessage = true
      return true
    }
    if (inMessage) {
      if (text.startsWith("    ")) return true
      if (!/^(?:Date|Merge|Commit|AuthorDate|CommitDate):/.test(text)) inMessage = false
    }
    if (DIFF_GIT.test(text)) return true
    const hunk = HUNK.exec(text)
    if (hunk !== null) {
      // a hunk spans at most its old and new line counts
      const span = (hunk[1] === undefined ? 1 : Number(hunk[1])) + (hunk[2] === undefined ? 0 : Number(hunk[2])) +
        (hunk[3] === undefined ? 1 : Number(hunk[3]))
      hunkUntil = Math.max(hunkUntil, line + span)
      return true
    }
    if (FENCE.test(text)) {
      fenceUntil = line <= fenceUntil ? line : line + FENCE_LINES
      return true
    }
    return line <= fenceUntil
  }
}

/** A line without terminal colour codes. */
const plainText = (raw: string) => raw.includes("\x1b[") ? raw.replace(ANSI, "") : raw

// Python's line between the exceptions of a chain; the one after it wraps the one before.
const CHAIN_MARK = /^\s*(?:The above exception was the direct cause of the following exception:|During handling of the above exception, another exception occurred:)\s*$/
// Most lines between the matches of one chain of causes.
const CHAIN_GAP = 200
// Lines after a failed learning during which a line whose first column has the same shape does not learn again.
const NO_PREFIX_LINES = 64

/** What a line is looked back over with: the bytes that end right before it, and whether they start the output. */
type Before = () => { bytes: Uint8Array; fromZero: boolean }

/**
 * The judging half of a tracker: sees whole lines in order (every line while
 * a context is still taking lines after a match, and the lines that hold a
 * rule's literal), decides which are salient, and keeps them with the lines
 * that go with them.
 */
const judge = (compiled: Compiled, options: TrackerOptions) => {
  const keep = options.keep ?? 20
  const maxChars = options.maxChars ?? 300
  const openers = compiled.rules.filter((r) => r.role === "opens")
  const kept = new Map<number, SalientLine>()
  const counts = { explains: 0, reports: 0 }
  const rules = new Set<string>()
  let total = 0
  // after-contexts still taking lines
  let pending: Array<{ walk: Walk; of: number; rule: string; deepest?: number }> = []
  // blocks opened by `opens` rules: the open one, and the last lines of closed ones
  let openBlock: string | undefined
  const blocks = new Map<string, Array<{ line: number; text: string }>>()
  const quoting = quoter()

  // matches kept, by role, oldest first: what `newest` lets go of
  const newest = options.newest === true
  const order = { explains: [] as Array<number>, reports: [] as Array<number> }
  /** Lets go of a kept match and the lines taken with it. */
  const forget = (line: number) => {
    const had = kept.get(line)
    if (had !== undefined && had.role !== "context") kept.delete(line)
    for (const [n, l] of kept) if (l.role === "context" && l.of === line) kept.delete(n)
    pending = pending.filter((p) => p.of !== line)
  }
  const shown = (raw: string) => shownText(raw, maxChars)
  const add = (l: SalientLine) => {
    const had = kept.get(l.line)
    if (had === undefined || (had.role === "context" && l.role !== "context")) kept.set(l.line, l)
  }
  const lookBack = (spec: SalienceContext, before: Before, line: number, toExplanation: boolean) =>
    walkBack(compiled, spec, before, line, toExplanation, inner)

  // The prefix learned from the lines before the last line that needed one,
  // and where a line's first column had no prefix to learn (not learned
  // again for lines of that shape until `NO_PREFIX_LINES` later).
  let prefix: Prefix.Prefix | undefined
  let noPrefix: { shape: string; until: number } | undefined
  /** Offsets where the columns of the learned prefix end in a line (learned from the lines before it when needed). */
  const columns = (line: number, plain: string, before: Before): ReadonlyArray<number> => {
    if (prefix !== undefined) {
      const at = Prefix.cuts(prefix, plain)
      if (at.length === prefix.shapes.length) return at
    }
    const shape = Prefix.firstShape(plain)
    if (shape === undefined || (noPrefix !== undefined && noPrefix.shape === shape && line <= noPrefix.until)) return []
    const { bytes, fromZero } = before()
    const lines: Array<string> = []
    for (const l of linesBefore(bytes, fromZero, line)) {
      if (!isBlank(l.text)) lines.push(plainText(l.text))
      if (lines.length >= Prefix.WINDOW) break
    }
    const learned = Prefix.learn(plain, lines)
    if (learned === undefined) {
      // too few lines before it tell nothing yet; a full window that shares no columns does
      if (lines.length >= Prefix.WINDOW) noPrefix = { shape, until: line + NO_PREFIX_LINES }
      return []
    }
    prefix = learned
    return Prefix.cuts(learned, plain)
  }
  /** A line without the learned prefix's columns, for the walks that take lines around a match. */
  const inner = (text: string): string => {
    if (prefix === undefined) return text
    const plain = plainText(text)
    const at = Prefix.cuts(prefix, plain)
    return at.length === 0 ? text : plain.slice(at[at.length - 1]!)
  }

  // Chains of causes: the matches of the chain being written (its top first), and a
  // Python chain's marker (`The above exception was the direct cause …`), after which
  // the next exception wraps the one before it.
  let chain: Array<number> = []
  let wrapsFrom = 0
  /** A match now reports rather than explains: a cause below it says what went wrong. */
  const demote = (n: number) => {
    const had = kept.get(n)
    if (had === undefined || had.role !== "explains") return
    kept.set(n, { ...had, role: "reports" })
    counts.explains--
    counts.reports++
    order.explains = order.explains.filter((x) => x !== n)
    order.reports.push(n)
  }

  /** A line that holds a rule's literal: an opener, a salient line (with its context), or neither. */
  const visit = (line: number, text: string, before: Before) => {
    const plain = plainText(text)
    if (CHAIN_MARK.test(plain)) {
      wrapsFrom = line
      return
    }
    // a quoted line (a diff's, a fence's) is quoted whatever its columns; a prefixed one is judged after them
    if (quoting(line, plain)) return
    const after = columns(line, plain, before)
    if (after.length > 0 && quoting(line, plain.slice(after[after.length - 1]!))) return
    for (const o of openers) {
      const m = o.pattern.exec(text)
      if (m === null || m[1] === undefined) continue
      if (openBlock !== undefined && o.before !== undefined) {
        if (blocks.size >= BLOCKS) blocks.delete(blocks.keys().next().value!)
        blocks.set(openBlock, lookBack(o.before, before, line, false))
      }
      openBlock = m[1]
      return
    }
    const rule = compiled.test(plain, after)
    if (rule === undefined) return
    total++
    rules.add(rule.id)
    const role = rule.role === "reports" ? "reports" : "explains"
    if (counts[role] >= keep) {
      if (!newest || keep <= 0) return
      forget(order[role].shift()!)
    } else counts[role]++
    order[role].push(line)
    add({ line, ...shown(text), rule: rule.id, role })
    if (rule.chain === "cause") {
      // the chain it belongs to: the last one written, when it is near
      if (chain.length > 0 && line - chain[chain.length - 1]! <= CHAIN_GAP) chain.forEach(demote)
      chain = [line]
    } else if (rule.chain === "top") {
      // an exception raised while handling, or from, the one above it in a Python traceback
      if (wrapsFrom > 0 && line - wrapsFrom <= CHAIN_GAP && role === "explains") demote(line)
      else chain = [line]
      wrapsFrom = 0
    }
    const context = (l: { line: number; text: string }) =>
      add({ line: l.line, ...shown(l.text), rule: rule.id, role: "context", of: line })
    if (rule.before !== undefined) lookBack(rule.before, before, line, role === "reports").forEach(context)
    if (rule.recall !== undefined) {
      const m = rule.recall.exec(text)
      const name = m?.slice(1).find((g) => g !== undefined)
      const block = name === undefined ? undefined : blocks.get(name) ??
        [...blocks.entries()].find(([k]) => k.startsWith(name) || name.startsWith(k))?.[1]
      block?.forEach(context)
    }
    if (rule.after !== undefined) pending.push({ walk: newWalk(rule.after), of: line, rule: rule.id })
  }

  /** Any line, to the contexts still taking lines after a match. */
  const feedPending = (line: number, text: string) => {
    const judged = inner(text)
    for (const p of pending) {
      if (!step(p.walk, judged)) continue
      add({ line, ...shown(text), rule: p.rule, role: "context", of: p.of })
      if (p.walk.spec.deepest === true) {
        // the deepest cause so far explains; the one before it was not the deepest
        if (p.deepest !== undefined) kept.set(p.deepest, { ...kept.get(p.deepest)!, role: "context", of: p.of })
        kept.set(line, { ...kept.get(line)!, role: "explains" })
        p.deepest = line
      }
    }
    pending = pending.filter((p) => !p.walk.done)
  }

  return {
    visit,
    feedPending,
    hasPending: () => pending.length > 0,
    found: (): Found => ({ lines: [...kept.values()].sort((a, b) => a.line - b.line), total, rules: [...rules] })
  }
}

/** A tracker over compiled rules: the line mechanics over chunks, the judging in `judge`. */
export const tracker = (compiled: Compiled, options: TrackerOptions = {}): Tracker => {
  const j = judge(compiled, options)
  let marks: Array<number> = []
  // the incomplete last line so far, and where it starts
  let carry: Uint8Array = new Uint8Array(0)
  let carryStart = 0
  // For looking back from a match, `RECENT_BYTES` of what comes before its
  // line, as copies (the caller's bytes may change): the output before the
  // current chunk, and the output before the line carried into it, kept when
  // that line began (it may have begun chunks ago). Each starts the output
  // when the line starts within `RECENT_BYTES` of its start.
  const recent = Ring.make(RECENT_BYTES)
  let beforeCarry: Uint8Array = new Uint8Array(0)
  /** What a look back from a line starting at output offset `lineStart` sees. */
  const before = (bytes: Uint8Array, lineStart: number) => ({
    bytes: bytes.subarray(Math.max(0, bytes.length - RECENT_BYTES)),
    fromZero: lineStart <= RECENT_BYTES
  })

  const accept = (bytes: Uint8Array, start: number, firstLine: number, breaks?: number) => {
    if (bytes.length === 0) return
    // a method call throughout, so that an array with faster searches of its own (Node's Buffer) uses them
    const chunk = bytes
    const end = start + chunk.length
    if (marks.length > 0 || j.hasPending()) {
      // line number of the line holding chunk offset 0 (it may have begun in an earlier chunk)
      let line = firstLine
      let pos = 0 // chunk offset where the current line's part in this chunk begins
      let mi = 0
      while (true) {
        if (!j.hasPending()) {
          // go straight to the next marked line
          while (mi < marks.length && marks[mi]! < carryStart) mi++
          if (mi >= marks.length || marks[mi]! >= end) break
          const at = marks[mi]! - start
          for (let nl = chunk.indexOf(10, pos); nl !== -1 && nl < at; nl = chunk.indexOf(10, pos)) {
            pos = nl + 1
            line++
          }
        }
        const nl = chunk.indexOf(10, pos)
        if (nl === -1) break // the line goes on in the next chunk
        const lineStartOffset = pos === 0 && carry.length > 0 ? carryStart : start + pos
        const lineEndOffset = start + nl
        let marked = false
        while (mi < marks.length && marks[mi]! <= lineEndOffset) {
          if (marks[mi]! >= lineStartOffset) marked = true
          mi++
        }
        const own = chunk.subarray(pos, nl)
        const whole = pos === 0 && carry.length > 0 ? concat([carry, own]) : own
        const text = decodeLine(whole.length > LINE_BYTES ? whole.subarray(0, LINE_BYTES) : whole)
        if (j.hasPending()) j.feedPending(line, text)
        if (marked) {
          const at = pos
          const carried = pos === 0 && carry.length > 0
          j.visit(line, text, () =>
            carried
              ? before(beforeCarry, carryStart)
              : before(concat([recent.last(RECENT_BYTES), chunk.subarray(Math.max(0, at - RECENT_BYTES), at)]), start + at))
        }
        pos = nl + 1
        line++
      }
      marks = marks.slice(mi).filter((m) => m >= start + pos || (pos === 0 && m >= carryStart))
    }
    // keep the incomplete last line (a copy: the caller's bytes may change), its number, and what came before it
    const lastBreak = chunk.lastIndexOf(10)
    if (lastBreak === -1) {
      if (carry.length === 0) {
        carryStart = start
        carryLine = firstLine
        beforeCarry = recent.last(RECENT_BYTES)
      }
      if (carry.length < LINE_BYTES) carry = concat([carry, chunk.subarray(0, LINE_BYTES - carry.length)])
    } else {
      carry = copyOf(chunk, lastBreak + 1)
      carryStart = start + lastBreak + 1
      carryLine = firstLine + (breaks ?? countNewlines(chunk))
      // a line that goes on in the next chunk: what comes before it (output chunks mostly end at a break)
      if (carry.length > 0) {
        beforeCarry = concat([recent.last(RECENT_BYTES), chunk.subarray(Math.max(0, lastBreak + 1 - RECENT_BYTES), lastBreak + 1)])
      }
    }
    recent.push(chunk.subarray(Math.max(0, chunk.length - RECENT_BYTES)))
  }

  // The carried line's number: the line after the last break of the chunk it began in.
  let carryLine = 1
  const lineOfCarry = () => carryLine

  const result = (): Found => {
    // a last line without a break
    if (carry.length > 0 && (marks.length > 0 || j.hasPending())) {
      const text = decodeLine(carry)
      const line = lineOfCarry()
      if (j.hasPending()) j.feedPending(line, text)
      if (marks.some((m) => m >= carryStart)) j.visit(line, text, () => before(beforeCarry, carryStart))
      marks = []
      carry = new Uint8Array(0)
    }
    return j.found()
  }

  return { mark: (position) => void marks.push(position), accept, peek: () => j.found(), result }
}

const literalScans = new WeakMap<Compiled, AnchorScan>()

/** One pass over bytes for all of the rules' literals (what a masker's watch finds as it masks), made once per set of rules. */
const literalScanOf = (compiled: Compiled): AnchorScan => {
  let scan = literalScans.get(compiled)
  if (scan === undefined) {
    scan = makeAnchorScan(compiled.literals.map((text) => ({ text, ignoreCase: false })))
    literalScans.set(compiled, scan)
  }
  return scan
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

/** Finds salient lines in output read in order, chunk by chunk (a kept body), in bounded memory. */
export interface Scanner {
  /** The next bytes of the output. */
  readonly push: (chunk: Uint8Array) => void
  /** What the whole lines so far hold, leaving the scanner as it is. */
  readonly peek: () => Found
  /** What the output holds, its last line judged too: call once, at its end. */
  readonly result: () => Found
}

/**
 * A scanner over compiled rules: what `find` does for a whole text, for
 * output of any size. Each chunk is searched for the rules' literals (with
 * the bytes before it that a literal may begin in), and the tracker tests
 * only the lines holding one.
 */
export const scanner = (compiled: Compiled = compile(), options: TrackerOptions = {}): Scanner => {
  const t = tracker(compiled, options)
  const carryBytes = Math.max(1, ...compiled.literals.map((l) => l.length)) - 1
  const find = literalScanOf(compiled)
  const lengths = compiled.literals.map((l) => l.length)
  let offset = 0
  let line = 1
  let carry: Uint8Array = new Uint8Array(0)
  return {
    push: (chunk) => {
      if (chunk.length === 0) return
      // the end of the chunk before, so that a literal across the two is found
      const bytes = carry.length === 0 ? chunk : concat([carry, chunk])
      const base = offset - carry.length
      const positions: Array<number> = []
      find(bytes, (literal, at) => {
        // one wholly inside the carried bytes was found with the chunk before
        if (at + lengths[literal]! > carry.length) positions.push(base + at)
      })
      positions.sort((a, b) => a - b)
      for (let i = 0; i < positions.length; i++) if (i === 0 || positions[i] !== positions[i - 1]) t.mark(positions[i]!)
      const breaks = countNewlines(chunk)
      t.accept(chunk, offset, line, breaks)
      line += breaks
      offset += chunk.length
      carry = copyOf(bytes, Math.max(0, bytes.length - carryBytes))
    },
    peek: () => t.peek(),
    result: () => t.result()
  }
}

/**
 * The lines of a find in the order a bounded view should take them: the
 * explaining matches, the lines taken with them, the lines reports point
 * back to, then the reports themselves; within each, by line.
 */
export const ranked = (found: Found): ReadonlyArray<SalientLine> => {
  const roleOf = new Map(found.lines.filter((l) => l.role !== "context").map((l) => [l.line, l.role ?? "explains"]))
  const rank = (l: SalientLine) =>
    l.role === "reports" ? 3 : l.role === "context" ? (roleOf.get(l.of ?? 0) === "reports" ? 2 : 1) : 0
  return [...found.lines].sort((a, b) => rank(a) - rank(b) || a.line - b.line)
}

/** Longest failure line a view shows, in code points: longer ones are cut in the middle. */
export const SHOWN_CHARS = 200

/** A failure line as every view shows it: its number, its text cut to `SHOWN_CHARS`, and whether it is a match (not a line taken with one). */
export interface Shown {
  readonly line: number
  readonly text: string
  readonly match: boolean
}

/** How a view counts the room its failure lines take. */
export interface PickBudget {
  /** Most room the lines may take, `base` included. */
  readonly limit: number
  /** Room spent before any line (a title, a JSON array's brackets). */
  readonly base?: number | undefined
  /** Room one line takes, as the view writes it. */
  readonly cost: (row: { readonly line: number; readonly text: string }) => number
  /** Room between two lines (a JSON comma). */
  readonly separator?: number | undefined
}

/**
 * The one failure-line picker every view asks (the preview, a job's status,
 * a kept result's first page, the web view): the explaining lines first,
 * then the lines taken with them, then what reports point back to, then
 * the reports (`ranked`), each taken when it still fits; shown in line order.
 */
export const pick = (lines: ReadonlyArray<SalientLine>, budget: PickBudget): ReadonlyArray<Shown> => {
  const picked: Array<Shown> = []
  let used = budget.base ?? 0
  for (const l of ranked({ lines, total: 0, rules: [] })) {
    const row = { line: l.line, text: cutMiddle(l.text, SHOWN_CHARS) }
    const cost = budget.cost(row) + (picked.length > 0 ? budget.separator ?? 0 : 0)
    if (used + cost > budget.limit) continue
    used += cost
    picked.push({ ...row, match: l.role !== "context" })
  }
  return picked.sort((a, b) => a.line - b.line)
}
