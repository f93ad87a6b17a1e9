/**
 * The spill profile: what a model gets back for a command's output
 * (`keepOutput`), and two tools that read saved output back by file name
 * (`readSpill`, `grepSpill`). Writing and reading are separate capabilities,
 * `SpillWrite` and `SpillRead`, so a host can grant reading alone.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { CurrentCaller } from "./Access.js"
import { Bodies, type OpenError } from "./Body.js"
import { InvalidRequest, quote } from "./Errors.js"
import * as Grep from "./Grep.js"
import * as Capture from "./internal/capture.js"
import * as Read from "./internal/read.js"
import * as Preview from "./Preview.js"
import * as Salience from "./Salience.js"
import { checkFilename } from "./SpillName.js"
import { SpillPolicy, type SpillPolicyRefused } from "./SpillPolicy.js"
import * as Utf8 from "./Utf8.js"

/** Output up to this many characters (code points) is returned exactly as printed. */
export const MAX_STDOUT_LEN = Preview.MAX_STDOUT_LEN

/** What the model gets back for a command's output, with the facts behind it. */
export interface KeptOutput {
  /** The output itself when it fits the cap, otherwise a preview no longer than the cap. */
  readonly text: string
  readonly exitCode: number
  /** True when `text` is a preview rather than the whole output. */
  readonly truncated: boolean
  readonly totalLines: number
  /** UTF-8 bytes of the scrubbed output. */
  readonly totalBytes: number
  /** Line ranges the text shows. */
  readonly shown: ReadonlyArray<{ readonly from: number; readonly to: number }>
  /** The saved copy's file name, present when a copy was saved. */
  readonly filename?: string
  /** Present when the copy holds only the start of the output (the per-file limit): its lines and bytes. */
  readonly savedInPart?: { readonly lines: number; readonly bytes: number }
  /** Why no copy was saved, present when the output was cut and not saved. */
  readonly notSaved?: string
  /** Lines that report errors or failures (the first ones), and how many there were; present when the output was cut and had some. */
  readonly salient?: Salience.Found
}

/** Output fed in chunks (a running command's), kept like `keepOutput` without holding it in memory. */
export interface OutputCapture {
  /**
   * Adds raw output bytes of one of the output's streams (a child's stdout
   * and stderr, 1 and 2; 0 by default); secrets are masked before anything
   * is kept, each stream on its own, so what one writes cannot cut a secret
   * in the other.
   */
  readonly write: (chunk: Uint8Array, stream?: number) => Effect.Effect<void>
  /** Ends the output and returns what the model gets. */
  readonly finish: (exitCode: number) => Effect.Effect<KeptOutput>
}

/** Which tool produced an output, so that the host's rules for that tool apply. */
export interface KeepOptions {
  readonly tool?: string | undefined
  /** The command or the tool's arguments, recorded beside the output (masked) so people can tell outputs apart. */
  readonly command?: string | undefined
  /**
   * Cap on this output's preview, in characters, in place of the profile's
   * `maxChars`: output this long or shorter comes back whole. A whole number
   * of at least 1; the head, the failure lines and the tail scale with it.
   */
  readonly maxChars?: number | undefined
}

/** The write capability: saving long output and previewing it, for the caller in context. */
export interface SpillWriteService {
  readonly keepOutput: (text: string, exitCode: number, options?: KeepOptions) => Effect.Effect<KeptOutput, never, CurrentCaller>
  /** A capture for streamed output; closing the scope before `finish` discards any partial file. */
  readonly capture: (options?: KeepOptions) => Effect.Effect<OutputCapture, never, Scope.Scope | CurrentCaller>
}

/** The capability to save output (the seed's `std::spill::write`). */
export class SpillWrite extends Context.Tag("@spillway/core/SpillWrite")<SpillWrite, SpillWriteService>() {}

/** Everything reading saved output can fail with. */
export type ReadError = OpenError | SpillPolicyRefused | InvalidRequest

/** Where to read from: a 1-indexed first line (0 is the start) and a line count (0 reads to the end). */
export interface ReadOptions {
  readonly offset?: number | undefined
  readonly limit?: number | undefined
  /** Most bytes of this page, within the profile's `maxPageBytes`; a page that would hold more stops at a whole line, or inside its only line. */
  readonly maxBytes?: number | undefined
}

/** Which lines a read selects and where to continue. */
export interface PageInfo {
  readonly filename: string
  /** First line of the page (1-indexed). */
  readonly offset: number
  /** The byte the page's first line starts at. */
  readonly startByte: number
  /** Lines in the page. */
  readonly lines: number
  readonly totalLines: number
  readonly totalBytes: number
  /** The line to continue from, when lines remain after the page. */
  readonly nextOffset?: number
}

/** A page of a saved file. */
export interface SpillPage extends PageInfo {
  /** The lines as text (malformed UTF-8 shown as U+FFFD), each with the line break that ends it in the file. */
  readonly text: string
  /** Present when the page stopped at `maxPageBytes` inside its first line: that line is shown in part. */
  readonly cutLine?: { readonly line: number; readonly shownBytes: number; readonly totalBytes: number }
}

/** One matching line. */
export interface GrepMatch {
  readonly line: number
  readonly text: string
  /** True when `text` is only the start of the line. */
  readonly cut: boolean
}

/** The result of a search. */
export interface GrepResult {
  readonly filename: string
  readonly pattern: string
  readonly matches: ReadonlyArray<GrepMatch>
  /** True when more lines match than `maxResults`. */
  readonly more: boolean
  readonly totalLines: number
  /** Lines looked at only on their first `maxLineChars` characters. */
  readonly clippedLines: number
  /** Present when the search stopped early: the first line not searched. */
  readonly stoppedAtLine?: number
  /** With `stoppedAtLine`: what stopped it, its deadline or its `maxScanBytes`. */
  readonly stoppedBy?: "deadline" | "bytes"
}

/** Search options. */
export interface GrepOptions {
  /** Most matches to return; 100 by default. */
  readonly maxResults?: number | undefined
  readonly ignoreCase?: boolean | undefined
  /** The first line searched (1-indexed); 1 by default. A search goes on from the line after its last match. */
  readonly fromLine?: number | undefined
  /** Time this search may take, within the profile's `grepDeadlineMs`. */
  readonly deadlineMs?: number | undefined
  /** Bytes this search reads before it stops (at the next block of about 1 MiB) and says where; no limit by default. */
  readonly maxScanBytes?: number | undefined
}

/** The read capability: paging and searching saved output, for the caller in context. */
export interface SpillReadService {
  readonly readSpill: (filename: string, options?: ReadOptions) => Effect.Effect<SpillPage, ReadError, CurrentCaller>
  readonly grepSpill: (
    pattern: string,
    filename: string,
    options?: GrepOptions
  ) => Effect.Effect<GrepResult, ReadError | Grep.GrepPatternError, CurrentCaller>
  /** Writes the selected lines' exact bytes to `emit` chunk by chunk, for pages of any size. */
  readonly copySpill: <E>(
    filename: string,
    options: ReadOptions,
    emit: (bytes: Uint8Array) => Effect.Effect<void, E>
  ) => Effect.Effect<PageInfo, ReadError | E, CurrentCaller>
}

/** The capability to read saved output (the seed's `std::spill::read`). */
export class SpillRead extends Context.Tag("@spillway/core/SpillRead")<SpillRead, SpillReadService>() {}

/** Limits of the spill profile; every field has a default. */
export interface Options {
  /** Cap on what `keepOutput` returns, in characters; 2,000 by default. */
  readonly maxChars?: number
  /**
   * Most bytes saved to one file. The spill profile's source design sets no
   * limit, so whole outputs are kept up to this generous default: 1 GiB.
   * Past it the rest is counted, not saved, and the preview says so.
   */
  readonly maxFileBytes?: number
  /** How previews say to read the rest; the library's tool names by default. */
  readonly hint?: Preview.ReadHint
  /** How previews say to search the saved file; the library's `grepSpill` by default. */
  readonly grepHint?: Preview.GrepHint
  /** Rules for salient lines in previews; `Salience.defaultRules` by default, `false` for none. */
  readonly salience?: ReadonlyArray<Salience.SalienceRule> | false
  /** Rules a host adds for particular tools, on top of `salience`, picked by `KeepOptions.tool`. */
  readonly salienceByTool?: Readonly<Record<string, ReadonlyArray<Salience.SalienceRule>>>
  /** Most bytes `readSpill` returns in one page; 8 MiB by default. Larger selections continue with `nextOffset`. */
  readonly maxPageBytes?: number
  /** Lines longer than this are searched and shown on their start only; 65,536 by default. */
  readonly maxLineChars?: number
  /** Most characters of a matching line returned; 2,000 by default. */
  readonly maxMatchChars?: number
  /** Most matches `grepSpill` may be asked for; 10,000 by default. */
  readonly maxResultsLimit?: number
  /** A search stops after this long and says where; 10 seconds by default. */
  readonly grepDeadlineMs?: number
}

const defaults = {
  maxChars: MAX_STDOUT_LEN,
  maxPageBytes: 8 * 1024 * 1024,
  maxLineChars: 65_536,
  maxMatchChars: 2000,
  maxResultsLimit: 10_000,
  grepDeadlineMs: 10_000
}

/** A call's preview cap: its own when it is a whole number of at least 1, otherwise the profile's. */
const capOf = (asked: number | undefined, profile: number): number =>
  asked !== undefined && Number.isSafeInteger(asked) && asked >= 1 ? asked : profile

/** Builds the write capability over the body store and a policy. */
export const makeWrite = (options: Options = {}) =>
  Effect.gen(function*() {
    const bodies = yield* Bodies
    const policy = yield* SpillPolicy
    const maxChars = options.maxChars ?? defaults.maxChars
    const base = options.salience === false ? [] : options.salience ?? Salience.defaultRules
    const compiled = new Map<string | undefined, Salience.Compiled | undefined>()
    const rulesFor = (tool: string | undefined) => {
      if (!compiled.has(tool)) {
        const rules = [...base, ...(tool !== undefined ? options.salienceByTool?.[tool] ?? [] : [])]
        compiled.set(tool, rules.length === 0 ? undefined : Salience.compile(rules))
      }
      return compiled.get(tool)
    }
    const capture = (keep: KeepOptions = {}) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Capture.make(bodies, policy, {
          maxChars: capOf(keep.maxChars, maxChars),
          maxFileBytes: options.maxFileBytes ?? 1024 * 1024 * 1024,
          hint: options.hint,
          grepHint: options.grepHint,
          salience: rulesFor(keep.tool),
          tool: keep.tool ?? "command",
          command: keep.command,
          caller
        }))
    return SpillWrite.of({
      capture,
      keepOutput: (text, exitCode, keep) =>
        Effect.scoped(Effect.gen(function*() {
          const c = yield* capture(keep)
          yield* c.write(Utf8.encode(text))
          return yield* c.finish(exitCode)
        }))
    })
  })

const checkCount = (argument: string, value: number | undefined) =>
  value === undefined || (Number.isSafeInteger(value) && value >= 0)
    ? Effect.succeed(value ?? 0)
    : Effect.fail(new InvalidRequest({ argument, reason: `must be a whole number of 0 or more, got ${value}` }))

/** Builds the read capability over the body store and a policy; the object holds the read methods only. */
export const makeRead = (options: Options = {}) =>
  Effect.gen(function*() {
    const bodies = yield* Bodies
    const patterns = yield* Grep.engine
    const policy = yield* SpillPolicy
    const o = { ...defaults, ...options }
    const built: Read.IndexCache = new Map()

    /** A saved body by its bare name, after the name, the policy and `Access` have passed it. */
    const open = (filename: string) =>
      Effect.gen(function*() {
        const refused = checkFilename(filename)
        if (refused !== undefined) {
          return yield* new InvalidRequest({
            argument: "filename",
            reason: `refused ${quote(filename)}: ${refused}. Pass the bare file name from the preview, such as 2026-09-04T01-02-03-000Z-a1b2c3.log`
          })
        }
        yield* policy.check({ _tag: "spill/read", filename })
        const caller = yield* CurrentCaller
        const body = yield* bodies.open(caller, filename)
        return { filename, size: body.size, read: body.read, index: body.lineIndex } satisfies Read.SpillFile
      })

    const select = (filename: string, read: ReadOptions) =>
      Effect.gen(function*() {
        const offset = yield* checkCount("offset", read.offset)
        const limit = yield* checkCount("limit", read.limit)
        const file = yield* open(filename)
        const index = yield* Read.indexOf(file, built)
        const first = Math.max(1, offset)
        if (first > Math.max(index.lines, 1)) {
          return yield* new InvalidRequest({
            argument: "offset",
            reason: `line ${first} is past the end: ${filename} has ${index.lines} lines`
          })
        }
        const end = limit === 0 ? index.lines + 1 : Math.min(first + limit, index.lines + 1)
        const start = yield* Read.locate(file, index, first)
        const stop = yield* Read.locate(file, index, end)
        return { file, index, first, end, start, stop }
      })

    const info = (s: Effect.Effect.Success<ReturnType<typeof select>>, end: number): PageInfo => ({
      filename: s.file.filename,
      offset: s.first,
      startByte: s.start,
      lines: end - s.first,
      totalLines: s.index.lines,
      totalBytes: s.file.size,
      ...(end <= s.index.lines ? { nextOffset: end } : {})
    })

    return SpillRead.of({
      readSpill: (filename, read = {}) =>
        Effect.scoped(Effect.gen(function*() {
          const s = yield* select(filename, read)
          // the selection whole, or whole lines up to the page limit, or part of a single huge line
          const maxBytes = read.maxBytes === undefined ? o.maxPageBytes : Math.max(4, Math.min(read.maxBytes, o.maxPageBytes))
          const page = yield* Read.linePage(s.file, s.index, s, maxBytes)
          return {
            ...info(s, s.first + page.lines),
            text: Utf8.decodeLossy(page.bytes),
            ...(page.cutLine !== undefined ? { cutLine: page.cutLine } : {})
          }
        })),
      copySpill: (filename, read, emit) =>
        Effect.scoped(Effect.gen(function*() {
          const s = yield* select(filename, read)
          yield* Read.copyRange(s.file, s.start, s.stop, emit)
          return info(s, s.end)
        })),
      grepSpill: (pattern, filename, grep = {}) =>
        Effect.scoped(Effect.gen(function*() {
          const maxResults = yield* checkCount("maxResults", grep.maxResults ?? 100)
          if (maxResults < 1 || maxResults > o.maxResultsLimit) {
            return yield* new InvalidRequest({
              argument: "maxResults",
              reason: `must be between 1 and ${o.maxResultsLimit}, got ${maxResults}`
            })
          }
          const fromLine = Math.max(1, yield* checkCount("fromLine", grep.fromLine))
          const matcher = yield* Grep.compile(pattern, { ignoreCase: grep.ignoreCase })
          yield* patterns.prepare(matcher)
          const file = yield* open(filename)
          const index = yield* Read.indexOf(file, built)
          if (fromLine > Math.max(index.lines, 1)) {
            return yield* new InvalidRequest({ argument: "offset", reason: `line ${fromLine} is past the end: ${filename} has ${index.lines} lines` })
          }
          const scan = yield* Read.grep(file, index, matcher, patterns, {
            from: { byte: yield* Read.locate(file, index, fromLine), line: fromLine },
            maxResults,
            maxLineChars: o.maxLineChars,
            maxMatchChars: o.maxMatchChars,
            deadlineMs: grep.deadlineMs !== undefined && grep.deadlineMs >= 0 ? Math.min(grep.deadlineMs, o.grepDeadlineMs) : o.grepDeadlineMs,
            maxBytes: grep.maxScanBytes !== undefined && grep.maxScanBytes >= 1 ? grep.maxScanBytes : undefined
          })
          return Read.grepResult(filename, pattern, scan, index)
        }))
    })
  })

/** The write capability as a layer. */
export const layerWrite = (options: Options = {}): Layer.Layer<SpillWrite, never, Bodies | SpillPolicy> =>
  Layer.effect(SpillWrite, makeWrite(options))

/** The read capability alone, as a layer: a program that needs `SpillWrite` does not compile against it. */
export const layerRead = (options: Options = {}): Layer.Layer<SpillRead, never, Bodies | SpillPolicy> =>
  Layer.effect(SpillRead, makeRead(options))

/** Both capabilities over one store. */
export const layer = (options: Options = {}): Layer.Layer<SpillWrite | SpillRead, never, Bodies | SpillPolicy> =>
  Layer.merge(layerWrite(options), layerRead(options))

/** What the model gets back for a command's output: short output exactly, long output saved and previewed. */
export const keepOutput = (
  text: string,
  exitCode: number,
  options?: KeepOptions
): Effect.Effect<KeptOutput, never, SpillWrite | CurrentCaller> => Effect.flatMap(SpillWrite, (s) => s.keepOutput(text, exitCode, options))

/** Reads a saved file, whole or from a 1-indexed line `offset` (0 = start) for `limit` lines (0 = to the end). */
export const readSpill = (filename: string, options?: ReadOptions): Effect.Effect<SpillPage, ReadError, SpillRead | CurrentCaller> =>
  Effect.flatMap(SpillRead, (s) => s.readSpill(filename, options))

/** Searches a saved file for a regular expression; each match comes back with its line number and text. */
export const grepSpill = (
  pattern: string,
  filename: string,
  options?: GrepOptions
): Effect.Effect<GrepResult, ReadError | Grep.GrepPatternError, SpillRead | CurrentCaller> =>
  Effect.flatMap(SpillRead, (s) => s.grepSpill(pattern, filename, options))

