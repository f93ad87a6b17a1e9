/**
 * `spillway grep [-i] [--offset N] [--max-results N] PATTERN NAME` without
 * loading the rest of the command: a small program for the common search,
 * a pattern with a literal every match holds (`error: unit [0-9]+ failed`,
 * `error|FAIL`). It reads the body in large blocks with blocking reads,
 * finds the lines holding a literal with a native byte search, decodes and
 * tests only those lines, and counts lines only where a match is (from the
 * body's saved line index). Its output is the whole command's, byte for
 * byte: the same blocks, the same tests, the same words, masked by the same
 * rules. It hands over to the whole command, before it prints anything, for
 * everything else: other flags, `--json`, a pattern the command refuses or
 * one without a literal, a refused name or file, a body that is not the
 * caller's or has expired, manifests kept elsewhere, or an offset past the
 * end. What it prints is masked as the whole command masks it: the built-in
 * rules and the environment's secret-looking values. The bin skips it when
 * `SPILLWAY_QUICK=0`.
 *
 * @since 0.1.0
 */
import * as Scan from "@spillway/core/BlockScan"
import type * as LineIndex from "@spillway/core/LineIndex"
import { buildMasker, knownValuesFromEnv } from "@spillway/core/MaskEngine"
import { checkFilename } from "@spillway/core/SpillName"
import * as Utf8 from "@spillway/core/Utf8"
import { directoryFrom } from "@spillway/node/FileChecks"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { allowedIndex, locate, openChecked, readFully, write } from "./fastRead.js"
import { shellWord } from "./Hints.js"

/** What the whole command's search uses (the spill profile's defaults): kept equal by the tests that compare the two. */
const LIMITS = {
  maxResultsLimit: 10_000,
  maxLineChars: 65_536,
  maxMatchChars: 2000,
  deadlineMs: 10_000
}

/** Bytes read at once; the whole command's block, so that a line too long for it is cut at the same place. */
const BLOCK = 1 << 20

/**
 * Largest compiled pattern searched here: testing one line costs up to its
 * length times this, and this program checks its deadline between lines.
 */
const MAX_FAST_PROGRAM = 2000

/** The command's arguments, when they are the common form. */
interface Args {
  readonly pattern: string
  readonly name: string
  readonly ignoreCase: boolean
  readonly offset: number
  readonly maxResults: number
}

/** `grep [-i|--ignore-case] [--offset N] [--max-results N] [--] PATTERN NAME`, each flag once; undefined for anything else. */
export const parseArgs = (args: ReadonlyArray<string>): Args | undefined => {
  if (args[0] !== "grep") return undefined
  const positionals: Array<string> = []
  const numbers: Record<string, number> = {}
  let ignoreCase = false
  let flagsOver = false
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!
    if (flagsOver || !a.startsWith("-") || a === "-") {
      positionals.push(a)
      continue
    }
    if (a === "--") {
      flagsOver = true
      continue
    }
    const flag = /^--(offset|max-results)(?:=(.*))?$/.exec(a)
    if (flag) {
      const raw = flag[2] ?? args[++i]
      if (raw === undefined || !/^\d{1,15}$/.test(raw) || flag[1]! in numbers) return undefined
      numbers[flag[1]!] = Number(raw)
    } else if ((a === "-i" || a === "--ignore-case") && !ignoreCase) ignoreCase = true
    else return undefined
  }
  const maxResults = numbers["max-results"] ?? 100
  if (positionals.length !== 2 || maxResults < 1 || maxResults > LIMITS.maxResultsLimit) return undefined
  return { pattern: positionals[0]!, name: positionals[1]!, ignoreCase, offset: numbers.offset ?? 0, maxResults }
}

/** One matching line as the command prints it. */
interface Match {
  readonly line: number
  readonly text: string
}

/** How one search runs: where it starts, what it returns, and until when. */
export interface SearchOptions {
  readonly ignoreCase: boolean
  readonly maxResults: number
  readonly fromLine: number
  /** Where line `fromLine` starts. */
  readonly fromByte: number
  /** The time (as `now` tells it) past which the search stops. */
  readonly deadline: number
  /** The whole command's values by default: bytes read at once, characters of a line tested, characters of a match returned. */
  readonly block?: number | undefined
  readonly maxLineChars?: number | undefined
  readonly maxMatchChars?: number | undefined
  /** The clock; `Date.now` by default. */
  readonly now?: (() => number) | undefined
}

/** What a search found: the matches, whether more match, and the first line not searched when the deadline came. */
export interface Found {
  readonly matches: Array<Match>
  more: boolean
  stoppedAt: number | undefined
}


/**
 * Searches the body open at `fd` from line `fromLine` (at byte `fromByte`)
 * as the whole command does (`Spill.grepSpill`): the same blocks, the lines
 * holding a literal tested on their first `maxLineChars` characters, a line
 * too long for a block tested on its start, and at the deadline the block
 * being searched given up and named.
 */
export const search = (
  fd: number,
  size: number,
  index: LineIndex.LineIndex,
  checked: Scan.Checked,
  o: SearchOptions
): Found | undefined => {
  const found: Found = { matches: [], more: false, stoppedAt: undefined }
  const buf = Buffer.allocUnsafe(Math.min(o.block ?? BLOCK, Math.max(size, 1)))
  const line = checked.compiled.line
  const maxLineChars = o.maxLineChars ?? LIMITS.maxLineChars
  const maxMatchChars = o.maxMatchChars ?? LIMITS.maxMatchChars
  const now = o.now ?? Date.now
  let prefilter: Scan.Prefilter | undefined
  let filled = 0
  let pos = o.fromByte
  let blockStart = pos
  let lineNo = o.fromLine
  let skipping = false

  /** Adds a line that matches; false once one more than asked for was found. */
  const add = (n: number, text: string): boolean => {
    if (found.matches.length >= o.maxResults) {
      found.more = true
      return false
    }
    found.matches.push({ line: n, text: Utf8.takeCodePoints(text, maxMatchChars) })
    return true
  }
  const test = (text: string) => line.test(text.length > maxLineChars ? text.slice(0, maxLineChars) : text)

  while (true) {
    if (now() > o.deadline) {
      found.stoppedAt = lineNo
      break
    }
    if (pos < size && filled < buf.length) {
      const got = readFully(fd, buf.subarray(filled, Math.min(buf.length, filled + size - pos)), pos)
      pos += got
      filled += got
    }
    if (filled === 0) break
    const atEnd = pos >= size
    if (prefilter === undefined) {
      prefilter = Scan.prefilter(checked.literalSets, o.ignoreCase, buf.subarray(0, filled))
      // a pattern without literals, or with literals on most lines in vain (see `Scan.inVain`), is the whole command's to
      // search; the sample's lines are tested here as every line is (a program of at most `MAX_FAST_PROGRAM`)
      const sampled = prefilter === undefined ? undefined : Scan.sampled(prefilter, buf.subarray(0, filled))
      if (sampled !== undefined && Scan.inVain(sampled, sampled.candidates.filter((line) => test(line)).length)) return undefined
      if (prefilter === undefined) return undefined
    }
    if (skipping) {
      // the rest of a line longer than a block, already tested on its start
      const br = buf.indexOf(10)
      if (br === -1 || br >= filled) {
        blockStart += filled
        filled = 0
        if (atEnd) break
        continue
      }
      skipping = false
      buf.copyWithin(0, br + 1, filled)
      blockStart += br + 1
      filled -= br + 1
      lineNo++
      continue
    }
    const cut = atEnd ? filled : buf.lastIndexOf(10, filled - 1) + 1
    if (cut === 0) {
      // one line fills the whole block: tested on its start, the rest skipped
      const start = Utf8.decodeLossy(buf.subarray(0, Math.min(filled, maxLineChars * 4))).slice(0, maxLineChars)
      if (line.test(start) && !add(lineNo, start)) break
      skipping = true
      continue
    }
    const block = buf.subarray(0, cut)
    const before = found.matches.length
    let go = true
    let first = -1
    let late = false
    Scan.eachCandidate(prefilter, block, lineNo, (n, start, end) => {
      if (first === -1) first = n
      if (now() > o.deadline) {
        late = true
        return false
      }
      const text = Utf8.decodeLossy(block.subarray(start, end))
      go = !test(text) || add(n, text)
      return go
    })
    if (late) {
      // as the whole command: the block being searched at the deadline is given up whole
      found.matches.length = before
      found.stoppedAt = first
      return found
    }
    if (!go) break
    lineNo += atEnd ? index.lines - lineNo + 1 : Scan.linesBefore(index, buf, blockStart, lineNo, cut)
    buf.copyWithin(0, cut, filled)
    blockStart += cut
    filled -= cut
    if (atEnd && filled === 0) break
  }
  return found
}

/** The command's words for a search's result: stdout, then stderr's notes, each as the whole command prints them (unmasked). */
export const render = (args: Args, found: Found, totalLines: number): { readonly stdout: string; readonly notes: ReadonlyArray<string> } => {
  const notes: Array<string> = []
  const last = found.matches[found.matches.length - 1]
  if (found.more && last !== undefined) {
    const flags = [args.ignoreCase ? " -i" : "", args.maxResults !== 100 ? ` --max-results ${args.maxResults}` : ""].join("")
    const words = args.pattern.startsWith("-") ? `-- ${shellWord(args.pattern)}` : shellWord(args.pattern)
    notes.push(`[more lines match past line ${last.line}; continue with: spillway grep${flags} --offset ${last.line + 1} ${words} ${args.name}]\n`)
  }
  if (found.stoppedAt !== undefined) {
    notes.push(`[search stopped at its deadline at line ${found.stoppedAt} of ${totalLines}; go on with --offset ${found.stoppedAt}]\n`)
  }
  return { stdout: found.matches.map((m) => `${m.line}:${m.text}\n`).join(""), notes }
}

/**
 * What masks what the command prints: the built-in rules and the
 * environment's secret-looking values, as the whole command masks; undefined
 * when the masker refuses them (the whole command then says why).
 */
const maskerFor = (env: Record<string, string | undefined>): ((text: string) => string) | undefined => {
  const built = buildMasker({ knownValues: knownValuesFromEnv(env) })
  return built._tag === "Refused" ? undefined : built.masker.maskText
}

const serve = (args: ReadonlyArray<string>, env: Record<string, string | undefined>): boolean => {
  const parsed = parseArgs(args)
  if (parsed === undefined || checkFilename(parsed.name) !== undefined) return false
  const started = Date.now()
  const checked = Scan.check(parsed.pattern, parsed.ignoreCase)
  if (Scan.isRefusal(checked) || checked.literals === undefined || checked.compiled.block.programSize() > MAX_FAST_PROGRAM) return false
  const directory = Path.resolve(directoryFrom(env))
  const body = openChecked(directory, parsed.name)
  if (body === undefined) return false
  let found: Found | undefined
  let index: LineIndex.LineIndex | undefined
  try {
    index = allowedIndex(directory, parsed.name, body.size, env)
    if (index === undefined) return false
    const fromLine = Math.max(1, parsed.offset)
    if (fromLine > Math.max(index.lines, 1)) return false
    found = search(body.fd, body.size, index, checked, {
      ignoreCase: parsed.ignoreCase,
      maxResults: parsed.maxResults,
      fromLine,
      fromByte: locate(body.fd, body.size, index, fromLine),
      deadline: started + LIMITS.deadlineMs
    })
  } finally {
    Fs.closeSync(body.fd)
  }
  if (found === undefined) return false
  const out = render(parsed, found, index.lines)
  // the masker is built only when there is something to print
  const mask = out.stdout.length > 0 || out.notes.length > 0 ? maskerFor(env) : (text: string) => text
  if (mask === undefined) return false
  const stdout = mask(out.stdout)
  const notes = out.notes.map(mask)
  process.exitCode = found.matches.length > 0 ? 0 : 1
  printing = true
  write(1, stdout)
  for (const note of notes) write(2, note)
  return true
}

/** True once this program began to print: from then on it reports its own failures. */
let printing = false

/** Serves the search if it is the common form; returns false, having printed nothing, to hand over to the whole command. */
export const tryFastGrep = (args: ReadonlyArray<string>, env: Record<string, string | undefined>): boolean => {
  try {
    return serve(args, env)
  } catch (e) {
    // nothing was printed: the whole command searches again and reports what went wrong
    if (!printing) return false
    // a reader that went away (`| head -1`) has all it wanted
    if ((e as NodeJS.ErrnoException).code === "EPIPE") return true
    write(2, `spillway: grep failed: ${(e as Error).message}\n`)
    process.exitCode = 2
    return true
  }
}
