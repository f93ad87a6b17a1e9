/**
 * Spillway for programs without Effect: `open` holds one `ManagedRuntime`
 * over the Node layers of one directory, and every method is one call of a
 * service it holds, run to a Promise. It adds no behaviour of its own: what
 * a method returns is what the service returns, and what it rejects with is
 * the service's typed error.
 *
 * Telling errors apart: every rejection from a service is one of the
 * library's tagged errors (an `Error` with a `_tag` and a `message` that says
 * what to do next), such as `NotFound`, `AccessDenied`, `Expired`,
 * `InvalidRequest`, `SpillPolicyRefused`, `GrepPatternError`, `CursorError`,
 * `QuotaExceeded`, `StoreFailed`, `SpawnFailed`, or, from `tool`,
 * `ToolFailure` (its `reason` is the tag of the error behind it). Switch on
 * `error._tag`, or use `isError`. A method called after `close` rejects with
 * `InvalidRequest` (argument `request`).
 *
 * @since 0.1.0
 */
import {
  Access,
  Child,
  Errors,
  type Evidence,
  Evidence as EvidenceModule,
  Process,
  ProcessView,
  type Projection,
  Spill,
  ToolOutput,
  Utf8
} from "@spillway/core"
import { Tools } from "@spillway/tools"
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import { Cause, Duration, Effect, Exit, type JSONSchema, type Layer, ManagedRuntime, Option } from "effect"
import * as NodeBodies from "./NodeBodies.js"
import * as SpillwayLayer from "./internal/spillwayLayer.js"
import type * as host from "./internal/toolHost.js"

/** Where output is kept, whom it belongs to, and the limits. */
export interface OpenOptions {
  /** The directory; `SPILLWAY_OUTPUT_DIR` or `~/.spillway/tool-output` by default. */
  readonly dir?: string | undefined
  /** Whom kept output and jobs belong to; `SPILLWAY_OWNER` (the user's name) on `SPILLWAY_CHANNEL` (`tools`) by default. */
  readonly owner?: Access.Caller | undefined
  /** Cap on the preview `keepOutput` and `run` return, in characters; 2,000 by default. */
  readonly maxChars?: number | undefined
  /** The budget of what a tool returns (`tool`, `getToolOutput`, job views), in characters; `tools.tool_output_max_chars` or 12,000 by default, at least 2,000. */
  readonly budgetChars?: number | undefined
  /** Where manifests live: a `postgres://` URL or a SQLite file; `.manifests.sqlite` in the directory by default. */
  readonly manifests?: string | undefined
  /** Limits per retention pool (`spill`, `scratch`, `spool`, `evidence`). */
  readonly pools?: NodeBodies.Options["pools"]
  /** Sees each save and read of a saved file and may refuse it; everything is allowed by default. */
  readonly policy?: host.PolicyLayer | undefined
  /** The host's say in every access check, after the owner matches. */
  readonly authorizer?: host.AuthorizerLayer | undefined
}

/** Every error a method rejects with: the library's tagged errors. */
export type Error =
  | Errors.NotFound
  | Errors.AccessDenied
  | Errors.Expired
  | Errors.InvalidRequest
  | Errors.QuotaExceeded
  | Errors.StoreFailed
  | Child.SpawnFailed
  | Tools.ToolFailure
  | Spill.ReadError
  | Evidence.ReadError

const TAGS = new Set([
  "NotFound", "AccessDenied", "Expired", "InvalidRequest", "QuotaExceeded", "StoreFailed", "SpawnFailed", "ToolFailure",
  "SpillPolicyRefused", "GrepPatternError", "CursorError", "EnvelopeTooSmall"
])

/** True for an error a method rejects with as a service's failure (rather than a defect). */
export const isError = (u: unknown): u is Error =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && TAGS.has(u._tag)

/** What `keepOutput` keeps an output as. */
export interface KeepOptions {
  /** The exit status the preview reports; 0 by default. */
  readonly exitCode?: number | undefined
  /** The tool (or label) it came from, so that the rules for that tool apply. */
  readonly label?: string | undefined
  /** This preview's size in characters, 1 to 1,000,000, in place of `OpenOptions.maxChars`; output this long or shorter comes back whole. */
  readonly maxChars?: number | undefined
}

/** How `deliver` projects a result: the scratch profile's strategy, capture and ceiling. */
export interface DeliverOptions {
  /** The tool's policy; the profile's row for the tool's name, or `middle` and `received` for a tool it does not know. */
  readonly policy?: Partial<ToolOutput.ToolPolicy> | undefined
  /** The ceiling of the whole serialized response; 65,536 bytes and 2,000 lines by default. */
  readonly ceiling?: Partial<ToolOutput.Ceiling> | undefined
  /** Wraps the delivered body into the response the ceiling counts; `{ output }` by default. */
  readonly envelope?: ((body: string) => unknown) | undefined
}

/** What `run` runs and how long it may take. */
export interface RunOptions {
  readonly cwd?: string | undefined
  /** Variables added to this process's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Stops the command (SIGTERM, then SIGKILL) after this many milliseconds; no limit by default. */
  readonly timeoutMs?: number | undefined
  /** The label its output is kept under, for per-tool rules; `command` by default. */
  readonly label?: string | undefined
  /** This preview's size in characters, 1 to 1,000,000, in place of `OpenOptions.maxChars`; output this long or shorter comes back whole. */
  readonly maxChars?: number | undefined
}

/** What `run` returns: what the model reads (`text`), the facts, and how the command ended. */
export interface RunResult extends Spill.KeptOutput {
  /** The signal that ended the command, or null. */
  readonly signal: string | null
  /** True when the command was stopped at `timeoutMs`. */
  readonly timedOut: boolean
}

/** How a job starts. */
export interface StartOptions {
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Keeps stdin open for `writeStdin`; closed by default. */
  readonly stdin?: boolean | undefined
  /** Keeps the whole output (up to the per-file limit), not its head and newest window. */
  readonly keepWhole?: boolean | undefined
}

/** A command: a shell line (`/bin/sh -c`), or a program and its arguments. */
export type Command = string | readonly [string, ...Array<string>]

type FullTools = Toolkit.Tools<typeof Tools.FullToolkit>

/** The tools a model calls, by name. */
export type ToolName = keyof FullTools & string

/** What a tool takes. */
export type ToolParams<N extends ToolName> = Tool.Parameters<FullTools[N]>

/** What a tool returns: `text`, what a model reads, and the facts. */
export type ToolResult<N extends ToolName> = Tool.Success<FullTools[N]>

/** The tools that only read kept output. */
export const READ_TOOLS = ["read_spill", "grep_spill", "get_tool_output"] as const

/** A tool that only reads kept output. */
export type ReadToolName = typeof READ_TOOLS[number]

/** A tool as a model is told of it: its name, what it is for, and its parameters as JSON Schema. */
export interface ToolDefinition {
  readonly name: ReadToolName
  readonly description: string
  readonly parameters: JSONSchema.JsonSchema7
}

/** The read tools as a model is told of them, from the same definitions the MCP server serves. */
export const readToolDefinitions = (): ReadonlyArray<ToolDefinition> =>
  READ_TOOLS.map((name) => {
    const tool = Tools.FullToolkit.tools[name]
    return { name, description: Tool.getDescription(tool as never) ?? name, parameters: Tool.getJsonSchema(tool as never) }
  })

/**
 * Reading alone: a new object holding only the read methods, for code that
 * must not run, keep, signal or feed anything (the read tools of a model).
 */
export interface ReadOnly {
  /** Whom this Spillway acts for. */
  readonly owner: Access.Caller
  /** A page of a saved file, by line. */
  readonly read: (filename: string, options?: Spill.ReadOptions) => Promise<Spill.SpillPage>
  /** The lines of a saved file that match a pattern (linear-time; ends at its deadline and says where). */
  readonly grep: (pattern: string, filename: string, options?: Spill.GrepOptions) => Promise<Spill.GrepResult>
  /** The page of kept output a cursor names. */
  readonly getToolOutput: (cursor: string) => Promise<Evidence.Page | Evidence.SearchResults>
  /** Calls a read tool as a model would; a refusal (or any other tool's name) rejects with `ToolFailure`. */
  readonly readTool: <N extends ReadToolName>(name: N, params: ToolParams<N>) => Promise<ToolResult<N>>
}

/** An open Spillway: one runtime over the services of one directory. */
export interface Spillway extends AsyncDisposable {
  /** Whom this Spillway acts for. */
  readonly owner: Access.Caller
  /** The read methods alone, as a new object. */
  readonly readOnly: () => ReadOnly
  /** The preview of an output a model should read (`text`), with the saved copy's name when it was cut. */
  readonly keepOutput: (output: string | Uint8Array, options?: KeepOptions) => Promise<Spill.KeptOutput>
  /** A tool result projected onto the model ceiling with the scratch profile's strategy; a cut result is kept and named in the marker. */
  readonly deliver: (tool: string, output: string, options?: DeliverOptions) => Promise<ToolOutput.Delivered>
  /** A page of a saved file, by line. */
  readonly read: (filename: string, options?: Spill.ReadOptions) => Promise<Spill.SpillPage>
  /** The lines of a saved file that match a pattern (linear-time; ends at its deadline and says where). */
  readonly grep: (pattern: string, filename: string, options?: Spill.GrepOptions) => Promise<Spill.GrepResult>
  /** The page of kept output a cursor names. */
  readonly getToolOutput: (cursor: string) => Promise<Evidence.Page | Evidence.SearchResults>
  /** The cursor of the first page of a saved file, for `getToolOutput` and the `get_tool_output` tool. */
  readonly cursorFor: (filename: string) => Promise<string>
  /** Runs a command to its end (stdout and stderr merged, stdin closed) and keeps its output, as `spillway run` does. */
  readonly run: (command: Command, options?: RunOptions) => Promise<RunResult>
  /** Starts a job in the background; its output is kept as it comes. */
  readonly start: (command: Command, options?: StartOptions) => Promise<Process.Started>
  /** The status view of a job, or a page of its output by cursor, byte offset or line. */
  readonly poll: (pid: number, request?: Omit<Process.PollRequest, "pid">) => Promise<ProcessView.StatusView | ProcessView.Page | ProcessView.Lines>
  /** Waits until a job exits, a line matches `pattern`, or `timeoutMs` passes. */
  readonly wait: (
    pid: number,
    options: {
      readonly timeoutMs: number
      /** Ends the wait on a matching line printed after the call (or from `fromLine` on). */
      readonly pattern?: string | undefined
      readonly ignoreCase?: boolean | undefined
      /** With a pattern: the line it is first tried on (1 counts every kept line; a wait's `next_line` goes on). */
      readonly fromLine?: number | undefined
    }
  ) => Promise<ProcessView.StatusView>
  /** A page of the lines of a job's kept output that match a pattern. */
  readonly search: (pid: number, request: Omit<Process.SearchRequest, "pid">) => Promise<ProcessView.Matches>
  /** This owner's jobs. */
  readonly jobs: () => Promise<ReadonlyArray<Process.JobSummary>>
  readonly writeStdin: (pid: number, data: string | Uint8Array) => Promise<void>
  readonly closeStdin: (pid: number) => Promise<void>
  /** Sends a signal (one of `Process.SIGNALS`) to a job's process group. */
  readonly signal: (pid: number, signal: string) => Promise<void>
  /** SIGTERM to a job's process group, SIGKILL after the grace period; resolves once it has exited. */
  readonly kill: (pid: number) => Promise<void>
  /** Calls a model-facing tool (`read_spill`, `grep_spill`, `get_tool_output`, `manage_process`, `run_command`) as a model would; a refusal rejects with `ToolFailure`. */
  readonly tool: <N extends ToolName>(name: N, params: ToolParams<N>) => Promise<ToolResult<N>>
  /** Ends the runtime: running jobs are stopped (SIGTERM, then SIGKILL) and every resource is released. */
  readonly close: () => Promise<void>
}

/**
 * How a job's views tell a program using this face to read on: by this
 * face's own methods, `poll(pid, { cursor: "…" })` and
 * `search(pid, { pattern: "…", cursor: "…" })`. What `tool` returns speaks
 * the tool's words instead, as a model calls it.
 */
export const jobHints: ProcessView.Hints = ProcessView.methodHints({ poll: "poll", search: "search", wait: "wait", timeout: "timeoutMs" }, "argument")

/** Runs a job's view with this face's words for reading on. */
const inFaceWords = <A, E, R>(view: Effect.Effect<A, E, R>) => Effect.provideService(view, ProcessView.CurrentHints, jobHints)

/** A bare saved-file name for a capture: the tool's name (letters, digits, `.`, `_`, `-`) and a random id. */
const capturePath = (tool: string): string => {
  const safe = tool.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 48)
  return `${safe === "" ? "output" : safe}-${globalThis.crypto.randomUUID()}.txt`
}

const closed = () => new Errors.InvalidRequest({ argument: "request", reason: "this Spillway was closed; open a new one" })

const checkTimeout = (ms: number | undefined) =>
  ms === undefined || (Number.isSafeInteger(ms) && ms > 0)
    ? Effect.void
    : Effect.fail(new Errors.InvalidRequest({ argument: "timeoutMs", reason: `must be a whole number of milliseconds above 0, got ${ms}` }))

const specOf = (command: Command): Effect.Effect<{ readonly command: string; readonly args?: ReadonlyArray<string>; readonly shell?: boolean }, Errors.InvalidRequest> => {
  if (typeof command === "string") {
    return command.trim() === ""
      ? Effect.fail(new Errors.InvalidRequest({ argument: "command", reason: "is empty; give a shell line or a program and its arguments" }))
      : Effect.succeed({ command, shell: true })
  }
  return Array.isArray(command) && typeof command[0] === "string" && command[0] !== ""
    ? Effect.succeed({ command: command[0], args: command.slice(1) })
    : Effect.fail(new Errors.InvalidRequest({ argument: "command", reason: "give a shell line or a non-empty [program, ...args]" }))
}

/** Most characters a call's own preview size may be: its head and tail are held in memory, four bytes a character each. */
const MAX_PREVIEW_CHARS = 1_000_000

/** A call's own preview size, when it gave one: a whole number from 1 to `MAX_PREVIEW_CHARS`. */
const checkMaxChars = (maxChars: number | undefined) =>
  maxChars === undefined || (Number.isSafeInteger(maxChars) && maxChars >= 1 && maxChars <= MAX_PREVIEW_CHARS)
    ? Effect.succeed(maxChars)
    : Effect.fail(new Errors.InvalidRequest({ argument: "maxChars", reason: `must be a whole number from 1 to ${MAX_PREVIEW_CHARS}, got ${maxChars}` }))

/** Runs a command with both pipes merged into one capture, as `spillway run` does. */
const runKept = (command: Command, options: RunOptions) =>
  Effect.scoped(Effect.gen(function*() {
    yield* checkTimeout(options.timeoutMs)
    const maxChars = yield* checkMaxChars(options.maxChars)
    const spec = yield* specOf(command)
    const write = yield* Spill.SpillWrite
    const runner = yield* Child.ChildRunner
    const capture = yield* write.capture({ tool: options.label, maxChars })
    const child = yield* runner.start({ ...spec, cwd: options.cwd, env: options.env, mergeStderr: true }, capture.write)
    const ended = options.timeoutMs === undefined
      ? Option.some(yield* child.exit)
      : yield* child.exit.pipe(Effect.timeoutOption(Duration.millis(options.timeoutMs)))
    const status = Option.isSome(ended) ? ended.value : yield* child.terminate
    const kept = yield* capture.finish(status.status)
    return { ...kept, signal: status.signal, timedOut: Option.isNone(ended) } satisfies RunResult
  }))

/** Keeps an output whole, text or bytes, through the write capability's capture. */
const keep = (output: string | Uint8Array, options: KeepOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const exitCode = options.exitCode ?? 0
    if (!Number.isSafeInteger(exitCode)) {
      return yield* new Errors.InvalidRequest({ argument: "exitCode", reason: `must be a whole number, got ${exitCode}` })
    }
    const maxChars = yield* checkMaxChars(options.maxChars)
    const capture = yield* (yield* Spill.SpillWrite).capture({ tool: options.label, maxChars })
    yield* capture.write(typeof output === "string" ? Utf8.encode(output) : output)
    return yield* capture.finish(exitCode)
  }))

/** The scratch profile for one call: the tool's policy over the profile's row, and bare names the read tools accept. */
const delivered = (tool: string, output: string, options: DeliverOptions) =>
  Effect.gen(function*() {
    const own = ToolOutput.policyFor(tool)
    const policy: ToolOutput.ToolPolicy = {
      strategy: options.policy?.strategy ?? own.strategy,
      capture: options.policy?.capture ?? own.capture
    }
    const ceiling = { ...ToolOutput.defaultCeiling, ...options.ceiling }
    for (const [name, value] of [["ceiling.maxBytes", ceiling.maxBytes], ["ceiling.maxLines", ceiling.maxLines]] as const) {
      if (!Number.isSafeInteger(value) || value < 1) {
        return yield* new Errors.InvalidRequest({ argument: name, reason: `must be a whole number above 0, got ${value}` })
      }
    }
    const profile = yield* ToolOutput.make({ policies: { [tool]: policy }, ceiling, paths: capturePath })
    return yield* profile.deliver({ tool, output, ...(options.envelope !== undefined ? { envelope: options.envelope } : {}) })
  })

type Needs = Layer.Layer.Success<ReturnType<typeof SpillwayLayer.make>>

/** The strategies a policy may name. */
export type Strategy = Projection.Strategy

/**
 * Opens the store of a directory (made if missing) and the services over
 * it. Close it (`close`, or `await using`) to stop its jobs and release it.
 */
export const open = async (options: OpenOptions = {}): Promise<Spillway> => {
  const caller = options.owner ?? NodeBodies.callerFromEnv("tools")
  const runtime = ManagedRuntime.make(SpillwayLayer.make({
    caller,
    directory: options.dir,
    manifests: options.manifests,
    pools: options.pools,
    maxChars: options.maxChars,
    budgetChars: options.budgetChars,
    policy: options.policy,
    authorizer: options.authorizer
  }))
  let open = true
  const run = <A, E>(effect: Effect.Effect<A, E, Needs>): Promise<A> =>
    !open
      ? Promise.reject(closed())
      : runtime.runPromiseExit(effect).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        // the failure itself (tagged), never a FiberFailure wrapper; a defect or an interruption as the error behind it
        throw Option.getOrElse(Cause.failureOption(exit.cause), () => Cause.squash(exit.cause))
      })
  await run(Effect.void).catch(async (e) => {
    await runtime.dispose()
    throw e
  })
  const close = async () => {
    if (!open) return
    open = false
    await runtime.dispose()
  }
  const tool = <N extends ToolName>(name: N, params: ToolParams<N>) =>
    run(Effect.flatMap(Tools.FullToolkit, (toolkit) => toolkit.handle(name, params)).pipe(
      Effect.flatMap((r) => {
        const result: unknown = r.result
        return result instanceof Tools.ToolFailure ? Effect.fail(result) : Effect.succeed(result as ToolResult<N>)
      })
    ))
  const read: ReadOnly["read"] = (filename, o) => run(Spill.readSpill(filename, o))
  const grep: ReadOnly["grep"] = (pattern, filename, o) => run(Spill.grepSpill(pattern, filename, o))
  const getToolOutput: ReadOnly["getToolOutput"] = (cursor) => run(EvidenceModule.getToolOutput(cursor, caller))
  const readTool: ReadOnly["readTool"] = (name, params) =>
    (READ_TOOLS as ReadonlyArray<string>).includes(name)
      ? tool(name, params)
      : Promise.reject(new Tools.ToolFailure({ reason: "InvalidRequest", kind: "InvalidRequest", detail: `${String(name).slice(0, 64)} is not a read tool; the read tools are ${READ_TOOLS.join(", ")}` }))
  return {
    owner: caller,
    readOnly: () => ({ owner: caller, read, grep, getToolOutput, readTool }),
    keepOutput: (output, o = {}) => run(keep(output, o)),
    deliver: (tool, output, o = {}) => run(delivered(tool, output, o)),
    read,
    grep,
    getToolOutput,
    cursorFor: (filename) => run(Effect.map(EvidenceModule.Evidence, (e) => e.cursorFor(filename))),
    run: (command, o = {}) => run(runKept(command, o)),
    start: (command, o = {}) =>
      run(Effect.flatMap(specOf(command), (spec) =>
        Process.start(caller, { ...spec, cwd: o.cwd, env: o.env, stdin: o.stdin === true ? "pipe" : "closed", keep: o.keepWhole === true ? "whole" : "head-and-tail" }))),
    poll: (pid, request = {}) => run(inFaceWords(Process.poll(caller, { ...request, pid }))),
    wait: (pid, o) => run(inFaceWords(Process.wait(caller, { pid, timeoutMillis: o.timeoutMs, pattern: o.pattern, ignoreCase: o.ignoreCase, fromLine: o.fromLine }))),
    search: (pid, request) => run(inFaceWords(Process.search(caller, { ...request, pid }))),
    jobs: () => run(Process.list(caller)),
    writeStdin: (pid, data) => run(Effect.flatMap(Process.ProcessControl, (c) => c.writeStdin(caller, pid, data))),
    closeStdin: (pid) => run(Effect.flatMap(Process.ProcessControl, (c) => c.closeStdin(caller, pid))),
    signal: (pid, signal) => run(Effect.flatMap(Process.ProcessControl, (c) => c.signal(caller, pid, signal))),
    kill: (pid) => run(Effect.flatMap(Process.ProcessControl, (c) => c.cancel(caller, pid))),
    tool,
    close,
    [Symbol.asyncDispose]: close
  }
}
