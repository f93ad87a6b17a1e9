/**
 * The tools' handlers: thin compositions of the capabilities. The read
 * handlers need only the read capabilities (`SpillRead`, `Evidence` for
 * paging, `ProcessRead`); the full set adds `SpillWrite`, the process spawn
 * and control capabilities and the child runner. Every result is the text
 * a model reads and the facts a program reads, fitted together to the
 * budget in context (`Delivery.Budget`), and every cut names the call that
 * continues. Every failure becomes a `ToolFailure` whose message says what
 * to do and whose kind says what went wrong.
 *
 * @since 0.1.0
 */
import { Access, Child, Delivery, type Envelope, Errors, Evidence, Preview, Process, ProcessView, Secrets, Spill, Terminal, Utf8 } from "@spillway/core"
import { Context, Duration, Effect, Either, Layer, Option } from "effect"
import * as Views from "./internal/views.js"
import * as Replies from "./Replies.js"
import { FullToolkit, ReadToolkit, ToolFailure } from "./Tools.js"

/** Who the tools act for: kept output and jobs belong to this owner and channel (the core's `CurrentCaller`). */
export const ToolCaller = Access.CurrentCaller

/** Who the tools act for. */
export type ToolCaller = Access.CurrentCaller

/** Read-back hints in the tools' own names, for previews the tools produce. */
export const hint: Preview.ReadHint = (filename, nextLine) => ({
  read: `Read more with read_spill filename=${filename} offset=${nextLine}`,
  search: `search with grep_spill filename=${filename} pattern=PATTERN`
})

/** The search hint in the tools' own names. */
export const grepHint: Preview.GrepHint = (pattern, filename) =>
  `grep_spill filename=${filename} pattern=${JSON.stringify(pattern)}`

const failure = (e: unknown, masker: Secrets.Masker | undefined): ToolFailure => {
  const error = e as { readonly _tag?: unknown; readonly message?: unknown }
  const words = typeof error.message === "string" && error.message !== "" ? error.message : String(e)
  const reason = typeof error._tag === "string" ? Replies.cut(error._tag, 64) : "Error"
  return new ToolFailure({
    reason,
    kind: Replies.kindOf(reason),
    // the words quote what was refused: bounded and masked, whatever the argument was
    detail: Replies.safe(words, { masker })
  })
}

/** Runs a handler body, turning every failure into a ToolFailure. */
const handled = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ToolFailure, R> =>
  Effect.catchAll(effect, (e) =>
    Effect.flatMap(Effect.serviceOption(Secrets.Secrets), (masker) => Effect.fail(failure(e, Option.getOrUndefined(masker)))))

const missing = (field: string, action: string) =>
  new ToolFailure({ reason: "InvalidRequest", kind: "InvalidRequest", detail: `${action} needs ${field}` })

/**
 * A result as a tool returns it: the text, then the facts. The text a model
 * reads has its terminal escapes removed and carriage-return redraws in
 * their final state (`Terminal.plain`), after the fitting: it only shrinks,
 * so it still fits, and line numbers do not move; `content_chars` counts
 * the content as shown. `raw` keeps the text exact.
 */
const result = <F extends object>(delivered: Delivery.Delivered<F>, raw = false): { readonly text: string } & F => {
  if (raw || !Terminal.hasNoise(delivered.text)) return { text: delivered.text, ...delivered.facts }
  const text = Terminal.plain(delivered.text)
  const facts: F & { readonly content_chars?: unknown } = delivered.facts
  if (typeof facts.content_chars !== "number") return { text, ...facts }
  // the marker starts a line of its own, so the content's plain form is where the text's starts
  const content = Terminal.plain(Utf8.takeCodePoints(delivered.text, facts.content_chars))
  return { text, ...facts, content_chars: Utf8.codePointLength(content) }
}

/** Fits a result, or fails saying the budget is too small for it. */
const fitted = <A>(fit: Either.Either<A, Envelope.EnvelopeTooSmall>) => Either.isRight(fit) ? Effect.succeed(fit.right) : Effect.fail(fit.left)

const readSpill = (params: {
  readonly filename: string
  readonly offset?: number | undefined
  readonly limit?: number | undefined
  readonly raw?: boolean | undefined
}) =>
  handled(Effect.gen(function*() {
    const budget = yield* Delivery.Budget
    // no more than four bytes a character can fit the result
    const page = yield* Spill.readSpill(params.filename, { offset: params.offset, limit: params.limit, maxBytes: budget.limit * 4 + 4 })
    const lines = Views.linesOf(page.text)
    if (page.cutLine === undefined && lines.length > 0) {
      const whole = Delivery.fitResult(1, lines.length, (k) => Views.whole(page, lines, k), budget)
      if (Either.isRight(whole)) return result(whole.right.value, params.raw)
    } else if (lines.length === 0) return result(Views.whole(page, lines, 0), params.raw)
    // its first line does not fit: its start, and a cursor to the rest of it
    const caller = yield* ToolCaller
    const evidence = yield* Evidence.Evidence
    const lineStart = yield* evidence.offsetAtByte(page.filename, page.startByte, caller)
    const line = lines[0]!
    // a line shown whole is not cut: at least its last character (before its break) is left for the cursor
    const most = Math.max(1, Utf8.codePointLength(line) - (page.cutLine !== undefined ? 0 : line.endsWith("\n") ? 2 : 1))
    const part = yield* fitted(Delivery.fitResult(1, most, (n) =>
      Views.cut(page, Utf8.takeCodePoints(line, n), evidence.cursorFor(page.filename, lineStart + n)), budget))
    return result(part.value, params.raw)
  }))

const grepSpill = (params: {
  readonly pattern: string
  readonly filename?: string | undefined
  readonly cursor?: string | undefined
  readonly offset?: number | undefined
  readonly max_results?: number | undefined
  readonly ignore_case?: boolean | undefined
  readonly raw?: boolean | undefined
}) =>
  handled(Effect.gen(function*() {
    const budget = yield* Delivery.Budget
    if ((params.filename === undefined) === (params.cursor === undefined)) {
      return yield* new Errors.InvalidRequest({
        argument: "request",
        reason: "grep_spill needs filename (a saved file's name) or cursor (a get_tool_output cursor), not both"
      })
    }
    const options = { maxResults: params.max_results, ignoreCase: params.ignore_case, fromLine: params.offset }
    // by cursor: the whole kept output the cursor pages, asked for as get_tool_output reads it; its name goes on by filename
    const r = params.cursor !== undefined
      ? yield* Evidence.grep(params.cursor, params.pattern, yield* ToolCaller, options)
      : yield* Spill.grepSpill(params.pattern, params.filename!, options)
    const from = params.offset ?? 1
    const whole = Delivery.fitResult(0, r.matches.length, (k) => Views.shown(r, from, k), budget)
    if (Either.isRight(whole) && (whole.right.count > 0 || r.matches.length === 0)) return result(whole.right.value, params.raw)
    // not even one matching line fits whole: the start of the first
    const first = r.matches[0]!
    const part = yield* fitted(Delivery.fitResult(0, Utf8.codePointLength(first.text), (n) =>
      Views.shown({ ...r, matches: [{ line: first.line, text: Utf8.takeCodePoints(first.text, n), cut: true }], more: r.more || r.matches.length > 1 }, from, 1), budget))
    return result(part.value, params.raw)
  }))

const getToolOutput = (params: { readonly cursor: string; readonly raw?: boolean | undefined }) =>
  handled(Effect.gen(function*() {
    const caller = yield* ToolCaller
    return result(Evidence.delivered(yield* Evidence.getToolOutput(params.cursor, caller)), params.raw)
  }))

const viewResult = (view: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines | ProcessView.Matches, raw?: boolean | undefined) =>
  result(ProcessView.delivered(view), raw)

type ProcessParams = {
  readonly action: string
  readonly pid?: number | undefined
  readonly command?: string | undefined
  readonly cwd?: string | undefined
  readonly cursor?: string | null | undefined
  readonly offset?: number | string | null | undefined
  readonly limit?: number | undefined
  readonly timeout_ms?: number | undefined
  readonly pattern?: string | undefined
  readonly data?: string | undefined
  readonly close?: boolean | undefined
  readonly signal?: string | undefined
  readonly stdin?: boolean | undefined
  readonly line?: number | undefined
  readonly lines?: number | undefined
  readonly keep_whole?: boolean | undefined
  readonly ignore_case?: boolean | undefined
  readonly max_results?: number | undefined
  readonly from_line?: number | undefined
  readonly raw?: boolean | undefined
}

const pidOf = (params: ProcessParams) =>
  params.pid === undefined ? Effect.fail(missing("pid", params.action)) : Effect.succeed(params.pid)

/** poll, wait and list: what a reader may do. */
const readProcess = (params: ProcessParams) =>
  Effect.gen(function*() {
    const caller = yield* ToolCaller
    const read = yield* Process.ProcessRead
    switch (params.action) {
      case "poll": {
        const pid = yield* pidOf(params)
        return viewResult(yield* handled(read.poll(caller, { pid, cursor: params.cursor, offset: params.offset, limit: params.limit, line: params.line, lines: params.lines })), params.raw)
      }
      case "wait": {
        const pid = yield* pidOf(params)
        const view = yield* handled(read.wait(caller, {
          pid,
          timeoutMillis: params.timeout_ms ?? 30_000,
          pattern: params.pattern,
          ignoreCase: params.ignore_case,
          fromLine: params.from_line
        }))
        return viewResult(view, params.raw)
      }
      case "grep": {
        const pid = yield* pidOf(params)
        if (params.pattern === undefined) return yield* missing("pattern", "grep")
        const found = yield* handled(read.search(caller, {
          pid,
          pattern: params.pattern,
          ignoreCase: params.ignore_case,
          maxResults: params.max_results,
          cursor: params.cursor
        }))
        return viewResult(found, params.raw)
      }
      default: {
        const budget = yield* Delivery.Budget
        const skip = yield* skipOf(params.offset)
        const jobs = yield* read.list(caller)
        const rest = Math.max(0, jobs.length - skip)
        return result((yield* handled(fitted(Delivery.fitResult(0, rest, (k) => Views.jobs(jobs, skip, k), budget)))).value)
      }
    }
  })

/** How many jobs a listing skips: its `offset`, a whole number. */
const skipOf = (offset: number | string | null | undefined) => {
  const n = typeof offset === "string" ? (/^\s*\d{1,9}\s*$/.test(offset) ? Number(offset) : NaN) : offset ?? 0
  return Number.isSafeInteger(n) && n >= 0
    ? Effect.succeed(n)
    : Effect.fail(new ToolFailure({ reason: "InvalidRequest", kind: "InvalidRequest", detail: "offset: for list, how many jobs to skip: a whole number, 0 or more" }))
}

/** Every action, reading ones included. */
const manageProcess = (params: ProcessParams) =>
  Effect.gen(function*() {
    const caller = yield* ToolCaller
    switch (params.action) {
      case "start": {
        if (params.command === undefined || params.command.trim() === "") return yield* missing("command", "start")
        const spawn = yield* Process.ProcessSpawn
        const started = yield* handled(
          spawn.start(caller, {
            command: params.command,
            shell: true,
            cwd: params.cwd,
            stdin: params.stdin === true ? "pipe" : "closed",
            keep: params.keep_whole === true ? "whole" : "head-and-tail"
          })
        )
        const read = yield* Process.ProcessRead
        const first = yield* handled(read.poll(caller, { pid: started.pid }))
        return viewResult(first._tag === "StatusView" ? ProcessView.asStarted(first, yield* Delivery.Budget) : first)
      }
      case "write_stdin": {
        const pid = yield* pidOf(params)
        const control = yield* Process.ProcessControl
        if (params.data === undefined && params.close !== true) return yield* missing("data or close", "write_stdin")
        if (params.data !== undefined) yield* handled(control.writeStdin(caller, pid, params.data))
        if (params.close === true) yield* handled(control.closeStdin(caller, pid))
        const written = params.data === undefined ? 0 : Utf8.byteLength(params.data)
        const closed = params.close === true
        return {
          text: `wrote ${written} bytes to job ${pid}${closed ? " and closed its stdin" : ""}`,
          view: "stdin" as const,
          pid,
          bytes_written: written,
          stdin_closed: closed
        }
      }
      case "signal": {
        const pid = yield* pidOf(params)
        if (params.signal === undefined) return yield* missing("signal", "signal")
        const control = yield* Process.ProcessControl
        yield* handled(control.signal(caller, pid, params.signal))
        return { text: `sent ${params.signal} to job ${pid}; poll or wait to see it end`, view: "signal" as const, pid, signal: params.signal }
      }
      default:
        return yield* readProcess(params)
    }
  })

/** The note after a preview a call asked to have whole, when the output did not fit. */
const TOO_LONG = "[Asked for whole, the output is longer than this result's budget: the preview above is as large as fits]\n"

/** The note after a cut preview that says how to page the whole output. */
const wholeNote = (cursor: string, filename: string) =>
  `[The whole output is kept: ${Delivery.call("get_tool_output", [["cursor", cursor]])} pages it from the start; read_spill and grep_spill read it by line with filename=${filename}]\n`

/**
 * The preview size a `run_command` call asked for (`max_chars`, or the whole
 * budget for `whole`), lowered to what the result's budget leaves once the
 * notes and facts around the preview are counted; none when it asked for none.
 */
const previewSize = (
  params: { readonly max_chars?: number | undefined; readonly whole?: boolean | undefined },
  budget: Envelope.Budget,
  cursorFor: (id: string) => string
): number | undefined => {
  const asked = params.whole === true ? budget.limit : params.max_chars
  if (asked === undefined) return undefined
  // the longest a saved name, a cursor and an ending can be, counted as delivered
  const name = "x".repeat(64)
  const cursor = cursorFor(name)
  const around = Delivery.sizeOf({
    text: Delivery.withMarker("", `${TOO_LONG}${wholeNote(cursor, name)}[exit code none: stopped after 3600000 ms, its timeout; the command did not finish]`),
    facts: { exit_code: null, timed_out: false, truncated: true, filename: name, cursor }
  }, budget.measure)
  // a preview's line breaks and quotes take two characters each as delivered: a tenth is left for them
  return Math.max(400, Math.min(asked, Math.floor((budget.limit - around) * 0.9)))
}

const runCommand = (params: {
  readonly command: string
  readonly cwd?: string | undefined
  readonly timeout_ms?: number | undefined
  readonly max_chars?: number | undefined
  readonly whole?: boolean | undefined
  readonly raw?: boolean | undefined
}) =>
  handled(Effect.scoped(Effect.gen(function*() {
    const write = yield* Spill.SpillWrite
    const runner = yield* Child.ChildRunner
    const evidence = yield* Evidence.Evidence
    const timeout = params.timeout_ms ?? 600_000
    const maxChars = previewSize(params, yield* Delivery.Budget, (id) => evidence.cursorFor(id))
    // one body, masked as it is written: read_spill reads it by name, get_tool_output by cursor
    const capture = yield* write.capture({ tool: "run_command", command: params.command, maxChars })
    const child = yield* runner.start({ command: params.command, shell: true, cwd: params.cwd }, capture.write)
    const exit = yield* child.exit.pipe(Effect.timeoutOption(Duration.millis(timeout)))
    const timedOut = Option.isNone(exit)
    const status = Option.isSome(exit) ? exit.value : yield* child.terminate
    const code = timedOut ? null : status.status
    const kept = yield* capture.finish(code ?? 124)
    const cursor = kept.filename !== undefined ? evidence.cursorFor(kept.filename) : null
    // after the preview, how to page the whole output when it was cut, then the exit status, always last
    const tooLong = params.whole === true && kept.truncated ? TOO_LONG : ""
    const whole = tooLong + (kept.truncated && kept.filename !== undefined && cursor !== null ? wholeNote(cursor, kept.filename) : "")
    const ending = timedOut
      ? `[exit code none: stopped after ${timeout} ms, its timeout; the command did not finish]`
      : status.signal !== null
      ? `[exit code ${status.status}: ended by ${status.signal}]`
      : `[exit code ${status.status}]`
    const facts = {
      exit_code: code,
      timed_out: timedOut,
      truncated: kept.truncated,
      filename: kept.filename ?? null,
      cursor
    }
    const budget = yield* Delivery.Budget
    // a preview of characters that escape long (control characters, quotes) can pass the budget: its middle gives way
    const delivered = yield* fitted(Delivery.squeeze(kept.text, (preview) => ({ text: Delivery.withMarker(preview, `${whole}${ending}`), facts }), budget))
    return result(delivered, params.raw)
  })))

/**
 * What a first `run_command` call runs, but its child: a short output
 * through the capture (the masker's rules, the failure-line rules, the
 * preview) and the delivery, kept nowhere (an output shown whole is never
 * stored). A server runs it in the background once its client is connected,
 * so that the first call costs what the next ones do; it fails never.
 */
export const warm: Effect.Effect<void, never, Spill.SpillWrite | Delivery.Budget | ToolCaller> = Effect.gen(function*() {
  const write = yield* Spill.SpillWrite
  const budget = yield* Delivery.Budget
  const kept = yield* write.keepOutput("warm: no error\n", 0, { tool: "run_command", command: "true" })
  const facts = { exit_code: 0, timed_out: false, truncated: kept.truncated, filename: null, cursor: null }
  yield* Effect.ignore(fitted(Delivery.squeeze(kept.text, (preview) => ({ text: Delivery.withMarker(preview, "[exit code 0]"), facts }), budget)))
})

/** What the read handlers use. */
export type ReadNeeds = ToolCaller | Spill.SpillRead | Evidence.Evidence | Process.ProcessRead

/** What the full set of handlers uses. */
export type FullNeeds =
  | ReadNeeds
  | Spill.SpillWrite
  | Process.ProcessSpawn
  | Process.ProcessControl
  | Child.ChildRunner

/** How a handler body gets the services it uses: all from the layer, or the caller from each call. */
type Provide<R> = <A>(effect: Effect.Effect<A, ToolFailure, R>) => Effect.Effect<A, ToolFailure>

/**
 * A job's views in the tool's words (`manage_process action=poll ...`),
 * whatever wording the layers the handlers were built over provide (the
 * library's `NodeProcess.layer` speaks of `Process.poll`): a model reads them.
 */
const inToolWords = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, ProcessView.CurrentHints, ProcessView.toolHints)

const readHandlers = (provide: Provide<ReadNeeds>) => ReadToolkit.of({
  read_spill: (params) => provide(readSpill(params)),
  grep_spill: (params) => provide(grepSpill(params)),
  get_tool_output: (params) => provide(getToolOutput(params)),
  manage_process: (params) => provide(inToolWords(readProcess(params)))
})

const fullHandlers = (provide: Provide<FullNeeds>) => FullToolkit.of({
  run_command: (params) => provide(runCommand(params)),
  read_spill: (params) => provide(readSpill(params)),
  grep_spill: (params) => provide(grepSpill(params)),
  get_tool_output: (params) => provide(getToolOutput(params)),
  manage_process: (params) => provide(inToolWords(manageProcess(params)))
})

/**
 * The layer's services, with the caller the calling fiber provides (`ToolCaller`,
 * which is `Access.CurrentCaller`). A call with none is the host's mistake,
 * not the model's, so it is a defect that says what to do.
 */
const callerOfCall = <R>(context: Context.Context<Exclude<R, ToolCaller>>): Provide<R> => (effect) =>
  Effect.flatMap(Effect.serviceOption(ToolCaller), (caller) =>
    Option.isNone(caller)
      ? Effect.dieMessage(
        "this toolkit takes its caller from each tool call, and this call had none: run the call (or the model loop that makes it) with Access.CurrentCaller provided, e.g. Effect.provideService(Access.CurrentCaller, { owner, channel })"
      )
      : Effect.provide(effect, Context.add(context, ToolCaller, caller.value) as Context.Context<R>))

/** Handlers of the read toolkit, over the read capabilities in context. */
export const readLayer = ReadToolkit.toLayer(Effect.map(Effect.context<ReadNeeds>(), (context) =>
  readHandlers((effect) => Effect.provide(effect, context))))

/** Handlers of the full toolkit, over every capability in context. */
export const fullLayer = FullToolkit.toLayer(Effect.map(Effect.context<FullNeeds>(), (context) =>
  fullHandlers((effect) => Effect.provide(effect, context))))

/**
 * Handlers of the read toolkit that act for the caller of each call (the
 * `ToolCaller` in the calling fiber's context), so one layer serves many
 * conversations; every other service comes from the layer.
 */
export const readLayerPerCall = ReadToolkit.toLayer(Effect.map(Effect.context<Exclude<ReadNeeds, ToolCaller>>(), (context) =>
  readHandlers(callerOfCall<ReadNeeds>(context))))

/** Handlers of the full toolkit that act for the caller of each call, as `readLayerPerCall` does. */
export const fullLayerPerCall = FullToolkit.toLayer(Effect.map(Effect.context<Exclude<FullNeeds, ToolCaller>>(), (context) =>
  fullHandlers(callerOfCall<FullNeeds>(context))))

/** The handlers of the read toolkit, as a service set. */
export type ReadHandlers = Layer.Layer.Success<typeof readLayer>

/** The handlers of the full toolkit, as a service set. */
export type FullHandlers = Layer.Layer.Success<typeof fullLayer>

/** A fixed caller, for a server that acts for one principal. */
export const layerCaller = (caller: Access.Caller): Layer.Layer<ToolCaller> => Access.layerCaller(caller)
