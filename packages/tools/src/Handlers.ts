/**
 * The tools' handlers: thin compositions of the capabilities. The read
 * handlers need only the read capabilities (`SpillRead`, `Evidence` for
 * paging, `ProcessRead`); the full set adds `SpillWrite`, the process spawn
 * and control capabilities and the platform's `CommandExecutor`. Every
 * failure becomes a `ToolFailure` whose message says what to do.
 *
 * @since 0.1.0
 */
import { Access, Child, Errors, Evidence, Marker, Preview, Process, ProcessView, Secrets, Spill, ToolOutput } from "@spillway/core"
import { Duration, Effect, Layer, Option } from "effect"
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
  readonly filename?: string | undefined
  readonly cursor?: string | undefined
  readonly max_results?: number | undefined
  readonly ignore_case?: boolean | undefined
}) =>
  handled(Effect.gen(function*() {
    const output = yield* ToolOutput.ToolOutput
    const options = { maxResults: params.max_results, ignoreCase: params.ignore_case }
    if ((params.filename === undefined) === (params.cursor === undefined)) {
      return yield* new Errors.InvalidRequest({ argument: "request", reason: "grep_spill needs filename (a saved file's name) or cursor (a get_tool_output cursor), not both" })
    }
    // by cursor: the whole kept output the cursor pages, asked for as get_tool_output reads it
    const r = params.cursor !== undefined
      ? yield* Evidence.grep(params.cursor, params.pattern, yield* ToolCaller, options)
      : yield* Spill.grepSpill(params.pattern, params.filename!, options)
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
  readonly ignore_case?: boolean | undefined
  readonly max_results?: number | undefined
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
        const view = yield* handled(read.wait(caller, { pid, timeoutMillis: params.timeout_ms ?? 30_000, pattern: params.pattern, ignoreCase: params.ignore_case }))
        return viewResult(view)
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
        const { _tag, text, ...search } = found
        return { text, pid, search }
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

/** Handlers of the read toolkit, over the read capabilities in context. */
export const readLayer = ReadToolkit.toLayer(Effect.map(Effect.context<ReadNeeds>(), (context) => ReadToolkit.of({
  read_spill: (params) => Effect.provide(readSpill(params), context),
  grep_spill: (params) => Effect.provide(grepSpill(params), context),
  get_tool_output: (params) => Effect.provide(getToolOutput(params), context),
  manage_process: (params) => Effect.provide(readProcess(params), context)
})))

/** Handlers of the full toolkit, over every capability in context. */
export const fullLayer = FullToolkit.toLayer(Effect.map(Effect.context<FullNeeds>(), (context) => FullToolkit.of({
  run_command: (params) => Effect.provide(runCommand(params), context),
  read_spill: (params) => Effect.provide(readSpill(params), context),
  grep_spill: (params) => Effect.provide(grepSpill(params), context),
  get_tool_output: (params) => Effect.provide(getToolOutput(params), context),
  manage_process: (params) => Effect.provide(manageProcess(params), context)
})))

/** The handlers of the read toolkit, as a service set. */
export type ReadHandlers = Layer.Layer.Success<typeof readLayer>

/** The handlers of the full toolkit, as a service set. */
export type FullHandlers = Layer.Layer.Success<typeof fullLayer>

/** A fixed caller, for a server that acts for one principal. */
export const layerCaller = (caller: Access.Caller): Layer.Layer<ToolCaller> => Access.layerCaller(caller)
