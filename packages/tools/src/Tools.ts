/**
 * Every model-facing operation as an @effect/ai `Tool`: Schema parameters,
 * success and failure, with the read-only annotation on tools that only
 * read. Toolkits are grouped by capability: `ReadToolkit` holds no tool that
 * writes, spawns or signals, so a host that grants reading alone builds it
 * and nothing else. Every success carries `text`, what a model reads; the
 * other fields are the same facts for programs.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { Agents } from "@spillway/agents"
import { Process, ProcessView } from "@spillway/core"
import { Schema } from "effect"

/** Why a tool call failed, in words a model can act on. */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  /** The error's tag, such as `SpillNotFound` or `CursorError`. */
  reason: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

const Pid = Schema.Int.pipe(Schema.positive(), Schema.annotations({ description: "the job's pid, as start or list gave it" }))

/** `read_spill`: lines of a saved output by file name. */
export const ReadSpill = Tool.make("read_spill", {
  description:
    "Read lines of a saved command output by its file name (from a preview's `Full output:` or `filename`). Pages are whole lines; continue from next_offset.",
  parameters: {
    filename: Schema.String.annotations({ description: "the saved file's name, e.g. 2026-11-30T04-44-54-123Z-ab12cd.log" }),
    offset: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))).annotations({ description: "first line, 1-indexed; 1 by default" }),
    limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 2_000))).annotations({ description: "most lines; 2,000 by default" })
  },
  success: Schema.Struct({
    text: Schema.String,
    filename: Schema.String,
    offset: Schema.Number,
    lines: Schema.Number,
    total_lines: Schema.Number,
    total_bytes: Schema.Number,
    next_offset: Schema.optional(Schema.Number)
  }),
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Readonly, true)

/** `grep_spill`: matching lines of a saved output, named by its file name or by a `get_tool_output` cursor. */
export const GrepSpill = Tool.make("grep_spill", {
  description:
    "Search a saved command output (by filename) or a tool's kept output (by any of its get_tool_output cursors; the whole output is searched) for lines matching a pattern (JavaScript regular expression syntax without backreferences or lookaround, run in linear time; a search ends within 10 seconds and says where it stopped). Give filename or cursor, not both.",
  parameters: {
    pattern: Schema.String,
    filename: Schema.optional(Schema.String).annotations({ description: "the saved file's name, from a preview or a result's filename" }),
    cursor: Schema.optional(Schema.String).annotations({ description: "instead of filename: a cursor get_tool_output takes, naming the kept output to search" }),
    max_results: Schema.optional(Schema.Int.pipe(Schema.between(1, 1_000))).annotations({ description: "most matching lines; 100 by default" }),
    ignore_case: Schema.optional(Schema.Boolean)
  },
  success: Schema.Struct({
    text: Schema.String,
    matches: Schema.Array(Schema.Struct({ line: Schema.Number, text: Schema.String, cut: Schema.Boolean })),
    more: Schema.Boolean,
    total_lines: Schema.Number,
    /** Set when the search reached its deadline first: the line it had got to. */
    stopped_at_line: Schema.optional(Schema.Number)
  }),
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Readonly, true)

/** `get_tool_output`: the next page of retained output. */
export const GetToolOutput = Tool.make("get_tool_output", {
  description:
    "Read the next page of a tool's retained output with the cursor a result gave; follow each page's cursor until truncated is false. Reads the kept output; it never runs anything again.",
  parameters: { cursor: Schema.String },
  success: Schema.Struct({
    text: Schema.String,
    truncated: Schema.Boolean,
    cursor: Schema.optional(Schema.String),
    offset: Schema.optional(Schema.Number),
    offset_unit: Schema.Literal("code_point"),
    total_bytes: Schema.optional(Schema.Number),
    status: Schema.String,
    expires_at: Schema.String
  }),
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Readonly, true)

const processDescription = (actions: string) =>
  `Background jobs whose output is kept in a spool. poll never consumes output: without cursor or offset it shows the newest lines, the lines that report errors or failures (with their line numbers) and an [output retention] record; pass that record's cursor to page the whole output, following next_cursor until truncated is false, or pass line (and lines) to read by line number. Long output keeps its first 4 MiB and its newest 1 MiB; the record's kept field names the ranges that can be read. wait returns when the job exits, a line matches pattern, or timeout_ms passes, with the same view. grep lists the kept lines matching pattern (max_results per page, 100 by default; follow next_cursor with the same pattern while more is true). Actions: ${actions}.`

const pollFields = {
  pid: Schema.optional(Pid),
  cursor: Schema.optional(Schema.NullOr(Schema.String)),
  offset: Schema.optional(Schema.NullOr(Schema.Union(Schema.Int, Schema.String))).annotations({
    description: "0, blank or absent: the status view; 1 or more: the page from that byte"
  }),
  limit: Schema.optional(Schema.Int).annotations({ description: "bytes per page, 4 to 8,000; 4,000 by default" }),
  line: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))).annotations({
    description: "for poll: read by line number (1-based) instead of by byte, in the head or the newest output"
  }),
  lines: Schema.optional(Schema.Int.pipe(Schema.between(1, 2_000))).annotations({ description: "with line: how many lines; 200 by default" }),
  timeout_ms: Schema.optional(Schema.Int.pipe(Schema.between(0, 600_000))),
  pattern: Schema.optional(Schema.String).annotations({ description: "for wait and grep: a regular expression, matched line by line" }),
  ignore_case: Schema.optional(Schema.Boolean).annotations({ description: "for wait and grep" }),
  max_results: Schema.optional(Schema.Int.pipe(Schema.between(1, Process.MAX_SEARCH_RESULTS))).annotations({
    description: "for grep: most matching lines per page; 100 by default"
  })
}

/** A page of a job's output, as the tool gives it: the page's fields, its content as `text`. */
const JobPage = Schema.extend(
  Schema.Struct(ProcessView.Page.fields).pipe(Schema.omit("_tag", "content")),
  Schema.Struct({ text: Schema.String })
)

/** Lines of a job's output read by number, as the tool gives them. */
const JobLines = Schema.extend(
  Schema.Struct(ProcessView.Lines.fields).pipe(Schema.omit("_tag", "content")),
  Schema.Struct({ text: Schema.String })
)

/** A page of a search of a job's output, as the tool gives it: the page's fields; its text is the result's. */
const JobMatches = Schema.Struct(ProcessView.Matches.fields).pipe(Schema.omit("_tag", "text"))

const ProcessResult = Schema.Struct({
  text: Schema.String,
  pid: Schema.optional(Schema.Number),
  retention: Schema.optional(ProcessView.RetentionRecord),
  page: Schema.optional(JobPage),
  lines: Schema.optional(JobLines),
  search: Schema.optional(JobMatches),
  jobs: Schema.optional(Schema.Array(Process.JobSummary))
})

/** `manage_process` with every action: start, poll, wait, grep, write_stdin, signal, list. */
export const ManageProcess = Tool.make("manage_process", {
  description: processDescription("start (command, cwd?), poll, wait, grep (pattern), write_stdin (data, close?), signal (signal), list"),
  parameters: {
    action: Schema.Literal("start", "poll", "wait", "grep", "write_stdin", "signal", "list"),
    command: Schema.optional(Schema.String).annotations({ description: "for start: a shell line" }),
    cwd: Schema.optional(Schema.String),
    ...pollFields,
    stdin: Schema.optional(Schema.Boolean).annotations({ description: "for start: keep stdin open for write_stdin" }),
    keep_whole: Schema.optional(Schema.Boolean).annotations({
      description: "for start: keep all the output (up to 1 GiB) rather than its first 4 MiB and newest 1 MiB"
    }),
    data: Schema.optional(Schema.String),
    close: Schema.optional(Schema.Boolean),
    signal: Schema.optional(Schema.String)
  },
  success: ProcessResult,
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Destructive, false)

/** `manage_process` for readers: poll, wait, grep and list only. */
export const ManageProcessRead = Tool.make("manage_process", {
  description: processDescription("poll, wait, grep (pattern), list"),
  parameters: { action: Schema.Literal("poll", "wait", "grep", "list"), ...pollFields },
  success: ProcessResult,
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Readonly, true)

/** `run_command`: runs a shell line and returns its preview, keeping the whole output. */
export const RunCommand = Tool.make("run_command", {
  description:
    "Run a shell line and get its output, or, when it is long, a preview (head, tail and the lines that report failures) with the saved file's name for read_spill and grep_spill and a cursor for get_tool_output.",
  parameters: {
    command: Schema.String,
    cwd: Schema.optional(Schema.String),
    timeout_ms: Schema.optional(Schema.Int.pipe(Schema.between(1, 3_600_000))).annotations({
      description: "stop the command after this long (SIGTERM, then SIGKILL); 600,000 by default"
    })
  },
  success: Schema.Struct({
    text: Schema.String,
    exit_code: Schema.NullOr(Schema.Number),
    timed_out: Schema.Boolean,
    truncated: Schema.Boolean,
    filename: Schema.NullOr(Schema.String),
    cursor: Schema.NullOr(Schema.String)
  }),
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Destructive, false)

/** The tools a reader gets: nothing that writes, spawns or signals. */
export const ReadToolkit = Toolkit.make(ReadSpill, GrepSpill, GetToolOutput, ManageProcessRead)

/** Every tool: the read tools, plus running commands and driving jobs. */
export const FullToolkit = Toolkit.make(RunCommand, ReadSpill, GrepSpill, GetToolOutput, ManageProcess)

/** `spawn_agent`: starts an agent from the catalog on a task; the description is the live catalog. */
export const SpawnAgent = Tool.make("spawn_agent", {
  description: "Start an agent from the catalog on a task; it runs in the background. Wait for it with wait_for_agents.",
  parameters: {
    agent: Schema.String.annotations({ description: "the agent's name in the catalog" }),
    task: Schema.String
  },
  success: Schema.Struct({ text: Schema.String, agent_id: Schema.String, max_lifetime_seconds: Schema.Number }),
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Destructive, false)

/** `wait_for_agents`: a snapshot of agents once they finish or the timeout passes. */
export const WaitForAgents = Tool.make("wait_for_agents", {
  description:
    "Wait until the agents finish or timeout_ms passes; returns each agent's status, iterations and a preview, and how to fetch its complete output with get_agent_results.",
  parameters: {
    agent_ids: Schema.Array(Schema.String).pipe(Schema.minItems(1)),
    timeout_ms: Schema.optional(Schema.Int.pipe(Schema.between(0, 3_600_000)))
  },
  // the roster a model reads, and the same facts for programs
  success: Schema.Struct({ text: Schema.String, result: Agents.WaitResult.pipe(Schema.omit("text")) }),
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Readonly, true)

/** `get_agent_results`: pages of one agent's complete result or error body. */
export const GetAgentResults = Tool.make("get_agent_results", {
  description:
    "Read an agent's complete result (or error) page by page: pass the cursor of each page until truncated is false. Pages are 4,000 bytes unless limit asks for up to 8,000.",
  parameters: {
    agent_id: Schema.String,
    cursor: Schema.optional(Schema.String),
    limit: Schema.optional(Schema.Int)
  },
  success: Schema.Struct({ text: Schema.String, page: Agents.ResultPage }),
  failure: ToolFailure,
  failureMode: "return"
}).annotate(Tool.Readonly, true)

/** The agent tools. */
export const AgentToolkit = Toolkit.make(SpawnAgent, WaitForAgents, GetAgentResults)

/** The agent tools a reader gets: waiting and reading results, no spawning. */
export const AgentReadToolkit = Toolkit.make(WaitForAgents, GetAgentResults)
