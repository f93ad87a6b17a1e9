/**
 * The tools' handlers: thin compositions of the capabilities. The read
 * handlers need only the read capabilities (`SpillRead`, `Evidence` for
 * paging, `ProcessRead`); the full set adds `SpillWrite`, the process spawn
 * and control capabilities and the platform's `CommandExecutor`. Every
 * failure becomes a `ToolFailure` whose message says what to do.
 *
 * @since 0.1.0
 */
import { Access, Child, Evidence, Marker, Preview, Process, ProcessView, Secrets, Spill, ToolOutput } from "@spillway/core"
import { Context, Duration, Effect, Layer, Option } from "effect"
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
  return new ToolFailure({
    reason: typeof error._tag === "string" ? Replies.cut(error._tag, 64) : "Error",
    // the words quote what was refused: bounded and masked, whatever the argument was
    detail: Replies.safe(words, { masker })
  })
}

/** Runs a handler body, turning every failure into a ToolFailure. */
const handled = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ToolFailure, R> =>
  Effect.catchAll(effect, (e) =>
    Effect.flatMap(Effect.serviceOption(Secrets.Secrets), (masker) => Effect.fail(failure(e, Option.getOrUndefined(masker)))))

const missing = (field: string, action: string) =>
  new ToolFailure({ reason: "InvalidRequest", detail: `${action} needs ${field}` })

const readSpill = (params: { readonly filename: string; readonly offset?: number | undefined; readonly limit?: number | undefined }) =>
  handled(Effect.gen(function*() {
    const page = yield* Spill.readSpill(params.filename, { offset: params.offset, limit: params.limit })
    // a marker when the page is not the whole file; where to go on is in next_offset
    const partial = page.nextOffset !== undefined || page.offset > 1
    const marker = Marker.format({
      ranges: page.lines === 0 ? [] : [{ from: page.offset, to: page.offset + page.lines - 1 }],
      totalLines: page.totalLines,
      cutLine: page.cutLine
    })
    return {
      text: partial ? `${page.text}${page.text === "" || page.text.endsWith("\n") ? "" : "\n"}${marker}` : page.text,
      filename: page.filename,
      offset: page.offset,
      lines: page.lines,
      total_lines: page.totalLines,
      total_bytes: page.totalBytes,
      ...(page.nextOffset !== undefined ? { next_offset: page.nextOffset } : {})
    }
  }))

const grepSpill = (params: {
  readonly pattern: string
  readonly filename: string
  readonly max_results?: number | undefined
  readonly ignore_case?: boolean | undefined
}) =>
  handled(Effect.gen(function*() {
    const output = yield* ToolOutput.ToolOutput
    const r = yield* Spill.grepSpill(params.pattern, params.filename, { maxResults: params.max_results, ignoreCase: params.ignore_case })
    const lines = r.matches.map((m) => `${m.line}: ${m.text}${m.cut ? " [line cut]" : ""}`)
    const summary = r.stoppedAtLine !== undefined
      ? `[the search stopped at its deadline at line ${r.stoppedAtLine} of ${r.totalLines}: ${r.matches.length === 0 ? "no" : r.matches.length} matching lines before it; narrow the pattern]`
      : r.matches.length === 0
      ? `no line of ${r.filename} matches ${JSON.stringify(r.pattern)}`
      : r.more
      ? `[${r.matches.length} matching lines shown; more match: narrow the pattern or raise max_results]`
      : ""
    // many long matching lines could pass the model ceiling: the text keeps its head within it
    const delivered = yield* output.deliver({
      tool: "grep_spill",
      output: [...lines, summary].filter((l) => l !== "").join("\n")
    })
    return {
      text: delivered.body,
      matches: r.matches.map((m) => ({ line: m.line, text: m.text, cut: m.cut })),
      more: r.more,
      total_lines: r.totalLines,
      ...(r.stoppedAtLine !== undefined ? { stopped_at_line: r.stoppedAtLine } : {})
    }
  }))

const getToolOutput = (params: { readonly cursor: string }) =>
  handled(Effect.gen(function*() {
    const caller = yield* ToolCaller
    const page = yield* Evidence.getToolOutput(params.cursor, caller)
    if ("content" in page) {
      return {
        text: page.content,
        truncated: page.truncated,
        ...(page.next_cursor !== undefined ? { cursor: page.next_cursor } : {}),
        offset: page.offset,
        offset_unit: page.offset_unit,
        total_bytes: page.total_bytes,
        status: page.status,
        expires_at: page.expires_at
      }
    }
    return {
      text: [...page.matches.map((m) => [m.title, m.url, m.text].filter((x) => x !== undefined).join("\n")), page.summary].join("\n\n"),
      truncated: page.truncated,
      ...(page.next_cursor !== undefined ? { cursor: page.next_cursor } : {}),
      offset_unit: "code_point" as const,
      status: page.status,
      expires_at: page.expires_at
    }
  }))

const viewResult = (result: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) => {
  if (result._tag === "StatusView") return { text: result.text, pid: result.retention.pid, retention: result.retention }
  if (result._tag === "Lines") {
    const { _tag, content, ...lines } = result
    return { text: content, pid: result.pid, lines: { ...lines, text: content } }
  }
  const { _tag, content, ...page } = result
  return { text: content, pid: result.pid, page: { ...page, text: content } }
}

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
        return viewResult(yield* handled(read.poll(caller, { pid, cursor: params.cursor, offset: params.offset, limit: params.limit, line: params.line, lines: params.lines })))
      }
      case "wait": {
        const pid = yield* pidOf(params)
        const view = yield* handled(read.wait(caller, { pid, timeoutMillis: params.timeout_ms ?? 30_000, pattern: params.pattern }))
        return viewResult(view)
      }
      default: {
        const jobs = yield* read.list(caller)
        const text = jobs.length === 0
          ? "no jobs"
          : jobs.map((j) =>
            `pid ${j.pid}: ${j.status}${j.exit_code !== undefined ? ` (exit ${j.exit_code})` : j.signal !== undefined ? ` (${j.signal})` : ""}, ${j.emitted_bytes} bytes, ${j.command}`
          ).join("\n")
        return { text, jobs }
      }
    }
  })

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
        return viewResult(yield* handled(read.poll(caller, { pid: started.pid })))
      }
      case "write_stdin": {
        const pid = yield* pidOf(params)
        const control = yield* Process.ProcessControl
        if (params.data === undefined && params.close !== true) return yield* missing("data or close", "write_stdin")
        if (params.data !== undefined) yield* handled(control.writeStdin(caller, pid, params.data))
        if (params.close === true) yield* handled(control.closeStdin(caller, pid))
        return { text: `wrote ${params.data === undefined ? 0 : new TextEncoder().encode(params.data).length} bytes to job ${pid}${params.close === true ? " and closed its stdin" : ""}`, pid }
      }
      case "signal": {
        const pid = yield* pidOf(params)
        if (params.signal === undefined) return yield* missing("signal", "signal")
        const control = yield* Process.ProcessControl
        yield* handled(control.signal(caller, pid, params.signal))
        return { text: `sent ${params.signal} to job ${pid}; poll or wait to see it end`, pid }
      }
      default:
        return yield* readProcess(params)
    }
  })

const runCommand = (params: { readonly command: string; readonly cwd?: string | undefined; readonly timeout_ms?: number | undefined }) =>
  handled(Effect.scoped(Effect.gen(function*() {
    const write = yield* Spill.SpillWrite
    const runner = yield* Child.ChildRunner
    const evidence = yield* Evidence.Evidence
    const timeout = params.timeout_ms ?? 600_000
    // one body, masked as it is written: read_spill reads it by name, get_tool_output by cursor
    const capture = yield* write.capture({ tool: "run_command" })
    const child = yield* runner.start({ command: params.command, shell: true, cwd: params.cwd }, capture.write)
    const exit = yield* child.exit.pipe(Effect.timeoutOption(Duration.millis(timeout)))
    const timedOut = Option.isNone(exit)
    const status = Option.isSome(exit) ? exit.value : yield* child.terminate
    const code = timedOut ? null : status.status
    const kept = yield* capture.finish(code ?? 124)
    const note = timedOut ? `\n[stopped after ${timeout} ms: the command did not finish]` : ""
    return {
      text: kept.text + note,
      exit_code: code,
      timed_out: timedOut,
      truncated: kept.truncated,
      filename: kept.filename ?? null,
      cursor: kept.filename !== undefined ? evidence.cursorFor(kept.filename) : null
    }
  })))

/** What the read handlers use. */
export type ReadNeeds = ToolCaller | Spill.SpillRead | Evidence.Evidence | Process.ProcessRead | ToolOutput.ToolOutput

/** What the full set of handlers uses. */
export type FullNeeds =
  | ReadNeeds
  | Spill.SpillWrite
  | Process.ProcessSpawn
  | Process.ProcessControl
  | Child.ChildRunner

/** How a handler body gets the services it uses: all from the layer, or the caller from each call. */
type Provide<R> = <A>(effect: Effect.Effect<A, ToolFailure, R>) => Effect.Effect<A, ToolFailure>

const readHandlers = (provide: Provide<ReadNeeds>) => ReadToolkit.of({
  read_spill: (params) => provide(readSpill(params)),
  grep_spill: (params) => provide(grepSpill(params)),
  get_tool_output: (params) => provide(getToolOutput(params)),
  manage_process: (params) => provide(readProcess(params))
})

const fullHandlers = (provide: Provide<FullNeeds>) => FullToolkit.of({
  run_command: (params) => provide(runCommand(params)),
  read_spill: (params) => provide(readSpill(params)),
  grep_spill: (params) => provide(grepSpill(params)),
  get_tool_output: (params) => provide(getToolOutput(params)),
  manage_process: (params) => provide(manageProcess(params))
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
