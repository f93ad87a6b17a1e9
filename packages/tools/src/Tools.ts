/**
 * Every model-facing operation as an @effect/ai `Tool`: Schema parameters,
 * success and failure, with annotations that say what a tool may do (read
 * only, destructive, idempotent, reaching outside the kept output). Toolkits
 * are grouped by capability: `ReadToolkit` holds no tool that writes, spawns
 * or signals, so a host that grants reading alone builds it and nothing
 * else. Every success is `text`, what a model reads (a preview or a page,
 * its marker and the exact call that continues), and facts for programs
 * (`Facts`, the tool's output schema over MCP), which never repeat the text;
 * the two together fit the delivery budget.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { Agents } from "@spillway/agents"
import { Evidence, Process, ProcessView } from "@spillway/core"
import { Context, Schema } from "effect"
import * as Replies from "./Replies.js"

/** Why a tool call failed, in words a model can act on, and of what kind, for programs. */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  /** The error's tag, such as `NotFound` or `CursorError`. */
  reason: Schema.String,
  /** The kind of failure, from a small stable set (`Replies.ErrorKind`). */
  kind: Replies.ErrorKind,
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/** The schema of a tool's facts: its success without `text`, declared over MCP as the tool's output schema. */
export class Facts extends Context.Tag("@spillway/tools/Facts")<Facts, Schema.Schema.Any>() {}

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const described = <S extends Schema.Schema.Any>(schema: S, description: string): S => schema.annotations({ description }) as S

/** A success: what a model reads, then the facts. */
const withText = <F extends Schema.Schema.Any>(facts: F) =>
  Schema.extend(Schema.Struct({ text: described(Schema.String, "what a model reads") }), facts)

/** What a tool may do, as its annotations say. */
interface Hints {
  readonly title: string
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
}

/** A tool with its title, hints and facts schema annotated. */
const annotated = <T extends Tool.Any>(tool: T, facts: Schema.Schema.Any, hints: Hints): T =>
  (tool as unknown as Tool.Tool<string, {
    readonly parameters: Tool.AnyParametersSchema
    readonly success: Schema.Schema.Any
    readonly failure: Schema.Schema.All
    readonly failureMode: Tool.FailureMode
  }>)
    .annotate(Tool.Title, hints.title)
    .annotate(Tool.Readonly, hints.readOnly)
    .annotate(Tool.Destructive, hints.destructive)
    .annotate(Tool.Idempotent, hints.idempotent)
    .annotate(Tool.OpenWorld, hints.openWorld)
    .annotate(Facts, facts) as unknown as T

const reads = (title: string): Hints => ({ title, readOnly: true, destructive: false, idempotent: true, openWorld: false })

const Pid = described(Schema.Int.pipe(Schema.positive()), "the job's pid, as start or list gave it")

const Filename = described(Schema.String, "the saved file's name, as a preview's `Full output:` or a result's `filename` gives it")

/** Continuing: how every cut says to go on. */
const CONTINUE = "Whenever a result is cut, its text ends with a marker and the exact call that continues."

/** What a program reads of `read_spill`. */
export const ReadSpillFacts = Schema.Struct({
  filename: Schema.String,
  /** The first line shown (1-based). */
  offset: Schema.Number,
  lines: Schema.Number,
  total_lines: Schema.Number,
  total_bytes: Schema.Number,
  /** The line to read on from, when lines follow. */
  next_offset: optional(Schema.Number),
  /** Code points at the start of the text that are the lines; what follows them is the marker. */
  content_chars: Schema.Number,
  /** Set when the page shows only the start of its one line: the line, and how many of its characters are shown. */
  cut_line: optional(Schema.Struct({ line: Schema.Number, shown_chars: Schema.Number })),
  /** With `cut_line`: a get_tool_output cursor to the rest of that line. */
  cursor: optional(Schema.String)
})

/** Asks for the kept text exactly; by default what a model reads has its terminal escapes removed. */
const Raw = optional(described(
  Schema.Boolean,
  "true for the kept text exactly (masked), terminal escapes and carriage returns included; false by default: colours and other escape sequences are removed and a line redrawn with carriage returns shows its final state, line numbers unchanged"
))

/** `read_spill`: lines of a saved output by file name. */
export const ReadSpill = annotated(
  Tool.make("read_spill", {
    description:
      `Read lines of a saved command output by its file name (from a preview's \`Full output:\` or a result's \`filename\`). Pages are whole lines within the result's 12,000-character budget; a page that is not the whole file ends with a marker and the call for the next (its line is next_offset). ${CONTINUE}`,
    parameters: {
      filename: Filename,
      offset: optional(described(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), "the first line to read, 1-based; 1 by default")),
      limit: optional(described(Schema.Int.pipe(Schema.between(1, 2_000)), "most lines to read, 1 to 2,000; 2,000 by default (fewer when they do not fit the result)")),
      raw: Raw
    },
    success: withText(ReadSpillFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  ReadSpillFacts,
  reads("Read a saved output")
)

/** What a program reads of `grep_spill`. */
export const GrepSpillFacts = Schema.Struct({
  filename: Schema.String,
  /** The matching lines the text shows, by number; `cut` when the text shows only a line's start. */
  matches: Schema.Array(Schema.Struct({ line: Schema.Number, cut: Schema.Boolean })),
  /** True when more lines may match past those shown: go on from `next_offset`. */
  more: Schema.Boolean,
  total_lines: Schema.Number,
  /** Set when the search reached its deadline first: the line it had got to. */
  stopped_at_line: optional(Schema.Number),
  /** The line to search on from, when the search did not get to the end. */
  next_offset: optional(Schema.Number)
})

/** `grep_spill`: matching lines of a saved output. */
export const GrepSpill = annotated(
  Tool.make("grep_spill", {
    description:
      `Search a saved command output (by filename) or a tool's kept output (by any of its get_tool_output cursors; the whole output is searched) for lines matching a pattern (JavaScript regular expression syntax without backreferences or lookaround, run in linear time; a search ends within 10 seconds and says where it stopped). Give filename or cursor, not both. Each match is shown as LINE: TEXT; when more lines may match, the text ends with the call that searches on from next_offset. ${CONTINUE}`,
    parameters: {
      pattern: described(Schema.String, "the regular expression a line must match, such as error|FAIL"),
      filename: optional(Filename),
      cursor: optional(described(Schema.String, "instead of filename: a cursor get_tool_output takes, naming the kept output to search")),
      offset: optional(described(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), "the first line to search, 1-based; 1 by default")),
      max_results: optional(described(Schema.Int.pipe(Schema.between(1, 1_000)), "most matching lines, 1 to 1,000; 100 by default (fewer when they do not fit the result)")),
      ignore_case: optional(described(Schema.Boolean, "match letters of either case; false by default")),
      raw: Raw
    },
    success: withText(GrepSpillFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  GrepSpillFacts,
  reads("Search a saved output")
)

/** `get_tool_output`: the next page of retained output. */
export const GetToolOutput = annotated(
  Tool.make("get_tool_output", {
    description:
      `Read a page of a tool's kept output from a cursor a result gave (run_command's cursor, or the previous page's). A page that is not the last ends with a marker and the call for the next page, whose cursor is also the result's cursor field; go on until truncated is false. Reads the kept output; it never runs anything again. ${CONTINUE}`,
    parameters: {
      cursor: described(Schema.String, "the cursor from run_command or from the previous page (its cursor field, or the call at the end of its text)"),
      raw: Raw
    },
    success: withText(Evidence.Facts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  Evidence.Facts,
  reads("Page kept output")
)

const processDescription = (actions: string) =>
  `Background jobs whose output is kept in a spool. poll never consumes output: without cursor, offset or line it shows one sentence that says what happened (started, still running after N s, exited with N, killed by a signal), the newest lines, the lines that report errors or failures not among them (with their line numbers), and a last line with the exact call that pages the whole output from its start (the record of every byte is the structured content, whose next field is that call), and every page ends with the call for the next, whose cursor is also the result's cursor field, until truncated is false. Pass line (and lines) to read by line number. Long output keeps its first 4 MiB and its newest 1 MiB; the record's kept field names the ranges that can be read. wait returns when the job exits, a line matches pattern, or timeout_ms passes, with the same view; a pattern matches only lines printed after the call (pass from_line: 1 to count the lines already printed, as right after start), and the record's wait field names the line that matched and the next_line to pass as from_line to wait for the next one. grep lists the kept lines matching pattern, a page at a time, ending with the call that searches on. The text of poll, wait and grep is plain (terminal escapes removed, a line redrawn with carriage returns in its final state) and a byte page never ends inside an escape sequence; raw: true gives the output's exact bytes. ${CONTINUE} Actions: ${actions}.`

const pollFields = {
  pid: optional(Pid),
  cursor: optional(described(Schema.NullOr(Schema.String), "for poll: the cursor from the status record or from the previous page, which takes precedence over offset; for grep: the cursor a page of matches gave, to search on")),
  offset: optional(
    described(
      Schema.NullOr(Schema.Union(described(Schema.Int, "a whole number"), described(Schema.String, "a whole number, as text"))),
      "for poll: 0, blank or absent gives the status view, 1 or more the page from that byte; for list: how many jobs to skip"
    )
  ),
  limit: optional(described(Schema.Int, "for poll: most bytes of a page, 4 to 8,000; 4,000 by default (fewer when they do not fit the result)")),
  line: optional(described(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), "for poll: read by line number (1-based) instead of by byte, in the head or the newest output")),
  lines: optional(described(Schema.Int.pipe(Schema.between(1, 2_000)), "for poll, with line: how many lines, 1 to 2,000; 200 by default")),
  timeout_ms: optional(described(Schema.Int.pipe(Schema.between(0, 600_000)), "for wait: the longest wait in milliseconds, 0 to 600,000; 30,000 by default")),
  pattern: optional(described(Schema.String, "for wait: a regular expression, the wait ends at the first line printed after the call that matches (see from_line); for grep: the lines to list")),
  from_line: optional(
    described(
      Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
      "for wait, with pattern: the line number (1-based) the pattern is first tried on, so lines already printed count: 1 for every kept line, or the next_line of an earlier wait to go on from it; absent: only lines printed after the call"
    )
  ),
  ignore_case: optional(described(Schema.Boolean, "for wait and grep: match letters of either case; false by default")),
  max_results: optional(described(Schema.Int.pipe(Schema.between(1, Process.MAX_SEARCH_RESULTS)), "for grep: most matching lines per page; 100 by default (fewer when they do not fit the result)")),
  raw: optional(described(
    Schema.Boolean,
    "for poll, wait and grep: true for the job's output exactly (masked), terminal escapes and carriage returns included; false by default: colours and other escape sequences are removed and a line redrawn with carriage returns shows its final state, line numbers and byte offsets unchanged"
  ))
}

/** What a program reads of `manage_process list`: the jobs, each command cut to a bounded length. */
export const JobsFacts = Schema.Struct({
  view: Schema.Literal("jobs"),
  jobs: Schema.Array(Process.JobSummary),
  /** Jobs the caller has in all. */
  total: Schema.Number,
  /** How many jobs to skip (`offset`) to list the next, when more follow. */
  next_offset: optional(Schema.Number)
})

/** What a program reads of `manage_process write_stdin`. */
export const StdinFacts = Schema.Struct({
  view: Schema.Literal("stdin"),
  pid: Schema.Number,
  bytes_written: Schema.Number,
  stdin_closed: Schema.Boolean
})

/** What a program reads of `manage_process signal`. */
export const SignalFacts = Schema.Struct({ view: Schema.Literal("signal"), pid: Schema.Number, signal: Schema.String })

/** What a program reads of `manage_process`, told apart by `view`. */
export const ProcessFacts = Schema.Union(ProcessView.StatusFacts, ProcessView.PageFacts, ProcessView.LinesFacts, ProcessView.MatchesFacts, JobsFacts, StdinFacts, SignalFacts)

/** What a program reads of the read-only `manage_process`. */
export const ProcessReadFacts = Schema.Union(ProcessView.StatusFacts, ProcessView.PageFacts, ProcessView.LinesFacts, ProcessView.MatchesFacts, JobsFacts)

/** `manage_process` with every action: start, poll, wait, grep, write_stdin, signal, list. */
export const ManageProcess = annotated(
  Tool.make("manage_process", {
    description: processDescription("start (command, cwd?, stdin?, keep_whole?), poll, wait, grep (pattern), write_stdin (data, close?), signal (signal), list"),
    parameters: {
      action: described(Schema.Literal("start", "poll", "wait", "grep", "write_stdin", "signal", "list"), "what to do"),
      command: optional(described(Schema.String, "for start: the shell line to run, such as npm run build")),
      cwd: optional(described(Schema.String, "for start: the directory to run it in; the server's own by default")),
      ...pollFields,
      stdin: optional(described(Schema.Boolean, "for start: keep stdin open for write_stdin; closed by default")),
      keep_whole: optional(described(Schema.Boolean, "for start: keep all the output (up to 1 GiB) rather than its first 4 MiB and newest 1 MiB")),
      data: optional(described(Schema.String, "for write_stdin: the text to write to the job's stdin")),
      close: optional(described(Schema.Boolean, "for write_stdin: close the job's stdin after writing")),
      signal: optional(described(Schema.String, "for signal: the signal to send to the job's process group, such as SIGTERM, SIGINT or SIGKILL"))
    },
    success: withText(ProcessFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  ProcessFacts,
  { title: "Run and read background jobs", readOnly: false, destructive: true, idempotent: false, openWorld: true }
)

/** `manage_process` for readers: poll, wait, grep and list only. */
export const ManageProcessRead = annotated(
  Tool.make("manage_process", {
    description: processDescription("poll, wait, grep (pattern), list"),
    parameters: { action: described(Schema.Literal("poll", "wait", "grep", "list"), "what to do"), ...pollFields },
    success: withText(ProcessReadFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  ProcessReadFacts,
  reads("Read background jobs")
)

/** What a program reads of `run_command`. */
export const RunCommandFacts = Schema.Struct({
  /** The exit status (128+N when signal N ended the command); null when it was stopped for its timeout. */
  exit_code: Schema.NullOr(Schema.Number),
  timed_out: Schema.Boolean,
  /** True when the text is a preview: the output was cut, and the whole is kept. */
  truncated: Schema.Boolean,
  /** The saved output's name for read_spill and grep_spill, when it was cut and saved. */
  filename: Schema.NullOr(Schema.String),
  /** A get_tool_output cursor to the whole output from its start, when it was cut and saved. */
  cursor: Schema.NullOr(Schema.String)
})

/** `run_command`: runs a shell line and returns its preview, keeping the whole output. */
export const RunCommand = annotated(
  Tool.make("run_command", {
    description:
      `Run a shell line and get its output, or, when it is long, a preview (head, tail and the lines that report failures) with the saved file's name for read_spill and grep_spill and a cursor for get_tool_output, named in the text and in the filename and cursor fields. The text always ends with the exit status, such as [exit code 0]. The text is plain (terminal escapes removed, a line redrawn with carriage returns in its final state); raw: true gives the output exactly. ${CONTINUE}`,
    parameters: {
      command: described(Schema.String, "the shell line to run (sh -c), such as npm test 2>&1"),
      cwd: optional(described(Schema.String, "the directory to run it in; the server's own by default")),
      timeout_ms: optional(
        described(Schema.Int.pipe(Schema.between(1, 3_600_000)), "stop the command after this many milliseconds (SIGTERM, then SIGKILL), 1 to 3,600,000; 600,000 by default")
      ),
      max_chars: optional(
        described(
          Schema.Int.pipe(Schema.between(400, 1_000_000)),
          "the preview's size in characters, 400 or more; 2,000 by default. Output this long or shorter comes back whole; a longer preview shows more of the head, the failure lines and the tail. Lowered to what fits the result's budget"
        )
      ),
      whole: optional(
        described(Schema.Boolean, "true to get the whole output when it fits the result's budget, however long; a longer one comes back as a preview as large as fits")
      ),
      raw: Raw
    },
    success: withText(RunCommandFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  RunCommandFacts,
  { title: "Run a shell command", readOnly: false, destructive: true, idempotent: false, openWorld: true }
)

/** The tools a reader gets: nothing that writes, spawns or signals. */
export const ReadToolkit = Toolkit.make(ReadSpill, GrepSpill, GetToolOutput, ManageProcessRead)

/** Every tool: the read tools, plus running commands and driving jobs. */
export const FullToolkit = Toolkit.make(RunCommand, ReadSpill, GrepSpill, GetToolOutput, ManageProcess)

/** What a program reads of `spawn_agent`. */
export const SpawnFacts = Schema.Struct({ agent_id: Schema.String, max_lifetime_seconds: Schema.Number })

/** `spawn_agent`: starts an agent from the catalog on a task; the description is the live catalog. */
export const SpawnAgent = annotated(
  Tool.make("spawn_agent", {
    description: "Start an agent from the catalog on a task; it runs in the background. Wait for it with wait_for_agents.",
    parameters: {
      agent: described(Schema.String, "the agent's name in the catalog"),
      task: described(Schema.String, "what the agent is to do, in words it is given as its task")
    },
    success: withText(SpawnFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  SpawnFacts,
  { title: "Start an agent", readOnly: false, destructive: true, idempotent: false, openWorld: true }
)

/** `wait_for_agents`: a snapshot of agents once they finish or the timeout passes. */
export const WaitForAgents = annotated(
  Tool.make("wait_for_agents", {
    description:
      "Wait until the agents finish or timeout_ms passes; returns each agent's status, iterations and a preview, and the exact get_agent_results call that fetches its complete output.",
    parameters: {
      agent_ids: described(Schema.Array(Schema.String).pipe(Schema.minItems(1)), "the agent_id of each agent to wait for, as spawn_agent gave it"),
      timeout_ms: optional(described(Schema.Int.pipe(Schema.between(0, 3_600_000)), "the longest wait in milliseconds, 0 to 3,600,000; 60,000 by default"))
    },
    success: withText(Agents.WaitFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  Agents.WaitFacts,
  reads("Wait for agents")
)

/** `get_agent_results`: pages of one agent's complete result or error body. */
export const GetAgentResults = annotated(
  Tool.make("get_agent_results", {
    description:
      `Read an agent's complete result (or error) page by page. Pages are 4,000 bytes unless limit asks for up to 8,000; a page that is not the last ends with a marker and the call for the next, whose cursor is also the result's cursor field, until truncated is false. ${CONTINUE}`,
    parameters: {
      agent_id: described(Schema.String, "the agent's id, as spawn_agent gave it"),
      cursor: optional(described(Schema.String, "the cursor of the previous page; none for the first")),
      limit: optional(described(Schema.Int, "most bytes of a page, 4 to 8,000; 4,000 by default"))
    },
    success: withText(Agents.ResultFacts),
    failure: ToolFailure,
    failureMode: "return"
  }),
  Agents.ResultFacts,
  reads("Read an agent's result")
)

/** The agent tools. */
export const AgentToolkit = Toolkit.make(SpawnAgent, WaitForAgents, GetAgentResults)

/** The agent tools a reader gets: waiting and reading results, no spawning. */
export const AgentReadToolkit = Toolkit.make(WaitForAgents, GetAgentResults)
