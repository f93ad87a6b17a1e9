/**
 * What every `spillway` command takes and says about itself, as data: its
 * arguments and flags (with their types and ranges), the environment
 * variables it reads, its exit statuses and examples. The parser (`Parse`),
 * the help pages (`Help`) and the command's reference page are all made
 * from it, so they cannot disagree.
 *
 * @since 0.1.0
 */

/** A flag's value: none (a switch), a whole number within a range, free text, or one of a list. */
export type Value =
  | { readonly _tag: "switch" }
  | { readonly _tag: "count"; readonly min: number; readonly max?: number | undefined }
  | { readonly _tag: "text" }

/** One flag of a command. */
export interface Flag {
  /** Its long name without the dashes, or a one-letter name (`c` is `-c`). */
  readonly name: string
  /** A one-letter alias (`i` for `-i`). */
  readonly alias?: string | undefined
  readonly value: Value
  /** What its value stands for in the help (`N`, `DIR`). */
  readonly placeholder?: string | undefined
  readonly description: string
  /** The value it has when not given, as the help prints it. */
  readonly default?: string | undefined
}

/** A positional argument. */
export interface Positional {
  readonly name: string
  readonly description: string
  readonly optional?: boolean | undefined
  /** The words it may be, when it is one of a list. */
  readonly choices?: ReadonlyArray<string> | undefined
}

/** A command as its help page and the parser see it. */
export interface Spec {
  readonly name: string
  /** One line: what it does (the top-level list). */
  readonly summary: string
  /** How to call it, one form a line, each starting `spillway NAME`. */
  readonly usage: ReadonlyArray<string>
  /** What it does, in a few sentences. */
  readonly description: string
  readonly positionals: ReadonlyArray<Positional>
  readonly flags: ReadonlyArray<Flag>
  /** True when everything after `--` (or after its first argument) is a command to run. */
  readonly takesCommand?: boolean | undefined
  readonly environment: ReadonlyArray<readonly [name: string, meaning: string]>
  readonly exits: ReadonlyArray<readonly [status: string, meaning: string]>
  readonly examples: ReadonlyArray<readonly [line: string, what: string]>
}

/** The `--json` flag of `run`, `read` and `grep`. */
const json: Flag = {
  name: "json",
  value: { _tag: "switch" },
  description: "print exactly one JSON object on stdout, errors included ({\"error\":{\"tag\":...,\"message\":...}})"
}

const outputDir: readonly [string, string] = [
  "SPILLWAY_OUTPUT_DIR",
  "the directory saved output is kept in (~/.spillway/tool-output by default); it must be a directory"
]
const owner: readonly [string, string] = ["SPILLWAY_OWNER", "whose output this is and who may read it (your user name by default)"]
const channel: readonly [string, string] = [
  "SPILLWAY_CHANNEL",
  "the conversation this command acts for; unset, the command reads your output of every channel (the MCP server's jobs too)"
]
const manifests: readonly [string, string] = [
  "SPILLWAY_MANIFESTS_URL",
  "where saved outputs' records are kept: a postgres:// URL (the output directory's SQLite file by default)"
]
const noColor: readonly [string, string] = ["NO_COLOR", "honoured: the command never prints terminal colours or other escape codes, set or not"]
const quick: readonly [string, string] = ["SPILLWAY_QUICK", "0 starts the whole command even for the forms a small, faster program serves"]

const usageError: readonly [string, string] = ["2", "a usage error: an unknown flag, a bad value, a missing argument (one line on stderr)"]

/** Every command, in the order the help lists them. */
export const specs: ReadonlyArray<Spec> = [
  {
    name: "run",
    summary: "run a command; print its output, or a preview and the name of the file that keeps it all",
    usage: ["spillway run [FLAGS] -- COMMAND [ARGUMENTS...]", "spillway run [FLAGS] -c 'SHELL LINE'"],
    description: "Runs COMMAND with its stdout and stderr merged in the order it wrote them. Short output is printed " +
      "whole, byte for byte. Long output is kept (secrets masked) in a file, and a preview of at most --max-chars " +
      "characters is printed instead: the first and last lines, the lines that report errors, the exit status, and " +
      "the saved file's name with the spillway read and spillway grep lines that page it. spillway run exits with " +
      "the command's own status. Flags go before the command: everything after -- (or from the first argument that " +
      "is not a flag) is the command, passed on untouched. A first Ctrl-C goes to the command, whose output is then " +
      "kept and shown; a second one stops spillway too. A preview printed to a pipe has its terminal escapes removed " +
      "and a line redrawn with carriage returns in its final state; the saved file keeps them.",
    positionals: [{ name: "COMMAND", description: "the command to run and its arguments, after --" }],
    takesCommand: true,
    flags: [
      { name: "c", value: { _tag: "text" }, placeholder: "LINE", description: "run LINE with /bin/sh -c instead of a COMMAND after --" },
      {
        name: "max-chars",
        value: { _tag: "count", min: 400, max: 1_000_000 },
        placeholder: "N",
        description: "most characters a preview of long output may take; output this long or shorter is printed whole",
        default: "2000"
      },
      { name: "stdin", value: { _tag: "switch" }, description: "pass spillway's stdin on to the command (the command's stdin is closed otherwise)" },
      {
        ...json,
        description: json.description + ": the preview or whole output in text, exitCode, truncated, totalLines, filename " +
          "when saved, and notMasked listing secret-looking environment values too short to mask"
      }
    ],
    environment: [outputDir, owner, channel, manifests, quick, noColor],
    exits: [
      ["the command's status", "what the command exited with (128+N when it ended on signal N, e.g. 130 for Ctrl-C)"],
      usageError,
      ["127", "the command could not be started (not found, not executable)"]
    ],
    examples: [
      ["spillway run -- npm test", "run the tests; a long log becomes a preview and a saved file"],
      ["spillway run -c 'make 2>&1 | tee build.log'", "run a shell line"],
      ["spillway run --json -- cargo build", "the same facts as one JSON object"],
      ["spillway run --max-chars 4000 -- pytest -x", "allow a longer preview"]
    ]
  },
  {
    name: "read",
    summary: "print lines of a saved output file, 200 at a time",
    usage: ["spillway read NAME [--offset N] [--limit N | --all] [--json]"],
    description: "Prints lines of the saved output NAME (the file name a preview of spillway run prints after " +
      "\"Full output:\"), 200 lines at a time: stdout holds the lines exactly as kept, and a marker on stderr says which " +
      "lines they were and the spillway read line that prints the next ones. Reads your own output of every channel: " +
      "what spillway run kept and the MCP server's jobs.",
    positionals: [{ name: "NAME", description: "the saved output's file name, as a preview printed it" }],
    flags: [
      { name: "offset", value: { _tag: "count", min: 0 }, placeholder: "N", description: "first line to print, counting from 1 (0 is the start too)", default: "1" },
      { name: "limit", value: { _tag: "count", min: 0 }, placeholder: "N", description: "most lines to print; 0 prints every line to the end", default: "200" },
      { name: "all", value: { _tag: "switch" }, description: "print every line from --offset to the end (the same as --limit 0)" },
      { ...json, description: json.description + ": the page's text, offset, lines, totalLines and nextOffset" }
    ],
    environment: [outputDir, owner, channel, manifests, quick, noColor],
    exits: [
      ["0", "the lines were printed"],
      usageError,
      ["2", "also: no saved output by that name, one that expired, or one that is not yours"]
    ],
    examples: [
      ["spillway read 2026-05-01T10-00-00-000Z-1a2b3c.log", "the first 200 lines"],
      ["spillway read 2026-05-01T10-00-00-000Z-1a2b3c.log --offset 201", "the next 200"],
      ["spillway read 2026-05-01T10-00-00-000Z-1a2b3c.log --offset 900 --limit 20", "lines 900 to 919"],
      ["spillway read 2026-05-01T10-00-00-000Z-1a2b3c.log --all > whole.log", "every line"]
    ]
  },
  {
    name: "grep",
    summary: "search a saved output file; prints LINE:TEXT per match, 100 at a time",
    usage: ["spillway grep [FLAGS] PATTERN NAME"],
    description: "Searches the saved output NAME for lines matching PATTERN, a JavaScript regular expression " +
      "(backreferences and lookaround are refused, so every search takes time linear in the file). Prints " +
      "LINE:TEXT for each matching line; when more lines match than --max-results, a marker on stderr gives the " +
      "--offset that goes on after the last one printed. A search stops at a 10-second deadline and says where. " +
      "Put -- before a PATTERN that starts with -.",
    positionals: [
      { name: "PATTERN", description: "a JavaScript regular expression" },
      { name: "NAME", description: "the saved output's file name, as a preview printed it" }
    ],
    flags: [
      { name: "max-results", value: { _tag: "count", min: 1, max: 10_000 }, placeholder: "N", description: "most matching lines to print", default: "100" },
      { name: "offset", value: { _tag: "count", min: 0 }, placeholder: "N", description: "first line to search, counting from 1: pages on past earlier matches", default: "1" },
      { name: "ignore-case", alias: "i", value: { _tag: "switch" }, description: "match letters of either case" },
      { ...json, description: json.description + ": matches (line, text, cut), more, totalLines, and stoppedAtLine when the deadline stopped it" }
    ],
    environment: [outputDir, owner, channel, manifests, quick, noColor],
    exits: [
      ["0", "at least one line matched"],
      ["1", "no line matched"],
      usageError,
      ["2", "also: a pattern that cannot be searched, or no saved output by that name"],
      ["130", "interrupted (Ctrl-C)"]
    ],
    examples: [
      ["spillway grep 'error|FAIL' 2026-05-01T10-00-00-000Z-1a2b3c.log", "every failing line, 100 at a time"],
      ["spillway grep -i warning 2026-05-01T10-00-00-000Z-1a2b3c.log --offset 5001", "go on from line 5001"],
      ["spillway grep -- '-x' 2026-05-01T10-00-00-000Z-1a2b3c.log", "a pattern that starts with -"]
    ]
  },
  {
    name: "mcp",
    summary: "serve the tools to an MCP client on stdin and stdout",
    usage: ["spillway mcp [--read-only] [--dir DIR] [--agents CATALOG.json]"],
    description: "Serves Spillway's tools over the Model Context Protocol on stdin and stdout, for an MCP client " +
      "(Claude Code, Codex, Cursor, ...) to start: run_command (a command's output as a bounded preview, the rest " +
      "kept), read_spill and grep_spill (page and search saved output), get_tool_output, and manage_process " +
      "(background jobs with their output kept). It runs until the client closes stdin. Jobs it starts are kept " +
      "under the channel mcp; spillway read reads them too.",
    positionals: [],
    flags: [
      { name: "read-only", value: { _tag: "switch" }, description: "serve only the tools that read saved output (read_spill, grep_spill, get_tool_output)" },
      { name: "dir", value: { _tag: "text" }, placeholder: "DIR", description: "the directory output is kept in", default: "SPILLWAY_OUTPUT_DIR" },
      { name: "agents", value: { _tag: "text" }, placeholder: "CATALOG.json", description: "a catalog of command agents: also serve spawn_agent, wait_for_agents and get_agent_results" }
    ],
    environment: [
      outputDir,
      owner,
      ["SPILLWAY_CHANNEL", "the channel its jobs are kept under (mcp by default)"],
      manifests
    ],
    exits: [["0", "the client closed the connection, or a signal stopped the server"], ["1", "the server failed"], usageError],
    examples: [
      ["spillway mcp", "what an MCP client's entry starts"],
      ["claude mcp add spillway -- spillway mcp", "add it to Claude Code"],
      ["spillway mcp --read-only", "only the reading tools"]
    ]
  },
  {
    name: "host",
    summary: "run commands for remote controllers and keep their output on this machine",
    usage: [
      "spillway host --stdio --dir DIR --credentials FILE [LIMITS]",
      "spillway host --listen PORT [--bind ADDR] --dir DIR --credentials FILE [LIMITS]",
      "spillway host --listen-ws PORT [--bind ADDR] --dir DIR --credentials FILE [LIMITS]"
    ],
    description: "Runs commands that controllers on other machines ask for, keeps their output in DIR, and answers " +
      "their reads, over stdin and stdout (for ssh somehost spillway host --stdio), a TCP port or a WebSocket port. " +
      "A controller proves itself with a credential from FILE, a JSON object {\"credentials\":{\"SECRET\":\"SCOPE\"}}; " +
      "a credential shorter than 16 characters stops the host from starting (make one with openssl rand -hex 16). " +
      "A listening host says host listening on ADDR:PORT on stderr once the port is bound.",
    positionals: [],
    flags: [
      { name: "stdio", value: { _tag: "switch" }, description: "answer one controller on stdin and stdout" },
      { name: "listen", value: { _tag: "count", min: 0, max: 65535 }, placeholder: "PORT", description: "listen on this TCP port (0 picks a free one)" },
      { name: "listen-ws", value: { _tag: "count", min: 0, max: 65535 }, placeholder: "PORT", description: "listen for WebSocket connections on this port" },
      { name: "bind", value: { _tag: "text" }, placeholder: "ADDR", description: "the address to listen on", default: "127.0.0.1" },
      { name: "dir", value: { _tag: "text" }, placeholder: "DIR", description: "where the host keeps output and its identity (required)" },
      { name: "credentials", value: { _tag: "text" }, placeholder: "FILE", description: "the controllers' credentials file (required)" },
      { name: "max-frame-bytes", value: { _tag: "text" }, placeholder: "N", description: "largest message a controller may send, in bytes" },
      { name: "max-unauthenticated", value: { _tag: "text" }, placeholder: "N", description: "most connections that have not yet proved themselves" },
      { name: "max-connections", value: { _tag: "text" }, placeholder: "N", description: "most connections at once" },
      { name: "handshake-timeout", value: { _tag: "text" }, placeholder: "SECONDS", description: "time a connection has to prove itself" },
      { name: "idle-timeout", value: { _tag: "text" }, placeholder: "SECONDS", description: "time an idle connection is kept" },
      { name: "lease-ttl", value: { _tag: "text" }, placeholder: "SECONDS", description: "how long a controller's lease on a job lasts without renewal" },
      { name: "max-waits", value: { _tag: "text" }, placeholder: "N", description: "most waits one scope may have running at once (64)" },
      { name: "spool-pool", value: { _tag: "text" }, placeholder: "SIZE", description: "bytes all jobs' kept output may hold, such as 512M or 2G (128M); a job started when it is full keeps nothing and says so" }
    ],
    environment: [owner],
    exits: [["0", "the controller disconnected (--stdio) or a signal stopped the host"], ["1", "the host failed"], usageError],
    examples: [
      ["ssh build1 spillway host --stdio --dir ~/.spillway/host --credentials ~/.spillway/credentials.json", "a host over ssh"],
      ["spillway host --listen 7300 --bind 0.0.0.0 --dir /var/spillway --credentials creds.json", "a host on a TCP port"]
    ]
  },
  {
    name: "hook",
    summary: "answer a coding agent's hook (claude, codex, gemini): route its shell commands through spillway run",
    usage: ["spillway hook AGENT"],
    description: "What a coding agent's pre-tool hook runs (spillway init sets it up): reads the agent's hook JSON " +
      "(at most 1 MiB) on stdin and answers with the shell command rewritten to run through spillway run, or " +
      "leaves it as it is. It never blocks a call: whatever goes wrong, the command is left as the agent gave it.",
    positionals: [{ name: "AGENT", description: "the agent whose JSON this is", choices: ["claude", "codex", "gemini"] }],
    flags: [],
    environment: [
      ["SPILLWAY_HOOK", "off (or 0, false, no) leaves every command as it is"],
      ["SPILLWAY_HOOK_PERMISSION", "keep (the default), ask or allow: what Claude Code and Gemini CLI are told about a rewritten command no allow rule covers"],
      ["SPILLWAY_HOOK_TIMEOUT_MS", "how long to wait for the whole input (5000 by default)"],
      ["SPILLWAY_HOOK_DEBUG", "1 says on stderr why a command was left as it is"]
    ],
    exits: [["0", "always, once it answered (an agent reads 2 as \"block the call\")"], ["1", "no AGENT, or one it does not know"]],
    examples: [["echo '{\"tool_input\":{\"command\":\"npm test\"}}' | spillway hook claude", "see the answer Claude Code gets"]]
  },
  {
    name: "init",
    summary: "connect coding agents (Claude Code, Codex, Gemini CLI, opencode, pi, Cursor) to spillway; --uninstall takes it out",
    usage: ["spillway init [AGENT] [--dry-run] [--uninstall]"],
    description: "Adds Spillway to coding agents' own configuration files: the hook that routes their shell commands " +
      "through spillway run, the MCP server entry, or the plugin, as each agent takes it. Every file is backed up " +
      "before its first change, and a record of what was added lets --uninstall take out exactly that. A file it " +
      "cannot read as the agent would is refused and left untouched.",
    positionals: [{
      name: "AGENT",
      description: "which agent to connect; all (the default) is every agent found installed",
      optional: true,
      choices: ["claude", "codex", "gemini", "opencode", "pi", "cursor", "all"]
    }],
    flags: [
      { name: "dry-run", value: { _tag: "switch" }, description: "print each change and write nothing" },
      { name: "uninstall", value: { _tag: "switch" }, description: "take out what spillway init added, restoring files it created or changed" }
    ],
    environment: [["HOME", "where the agents' configuration files are looked for"], ["PATH", "where the agents' programs are looked for"]],
    exits: [["0", "every file was written, or nothing needed to change"], ["1", "a file was refused and left untouched"], usageError],
    examples: [
      ["spillway init", "connect every agent found"],
      ["spillway init claude --dry-run", "show what would change for Claude Code"],
      ["spillway init --uninstall", "take it all out"]
    ]
  },
  {
    name: "serve",
    summary: "serve a read-only web view of jobs, saved outputs and evidence on 127.0.0.1; prints its URL",
    usage: ["spillway serve [--port N] [--bind ADDR] [--dir DIR] [--channel NAME] [--token-file FILE]"],
    description: "Serves a read-only web view of your kept output (jobs, saved outputs, evidence) and prints its " +
      "address on stdout; Ctrl-C stops it. On loopback it needs no token; bound to any other address, requests need " +
      "the token, which the printed address carries.",
    positionals: [],
    flags: [
      { name: "port", value: { _tag: "count", min: 0, max: 65535 }, placeholder: "N", description: "the port to listen on; 0 picks a free one", default: "0" },
      { name: "bind", value: { _tag: "text" }, placeholder: "ADDR", description: "the address to listen on; anything but loopback needs a token", default: "127.0.0.1" },
      { name: "dir", value: { _tag: "text" }, placeholder: "DIR", description: "the directory output is kept in; it must exist", default: "SPILLWAY_OUTPUT_DIR" },
      { name: "channel", value: { _tag: "text" }, placeholder: "NAME", description: "show only this channel's jobs (every channel of yours by default)" },
      { name: "token-file", value: { _tag: "text" }, placeholder: "FILE", description: "a file holding the token requests from elsewhere than loopback need" }
    ],
    environment: [outputDir, owner, ["SPILLWAY_VIEW_TOKEN", "the token, when no --token-file is given (a new one is made otherwise)"], manifests],
    exits: [["0", "stopped by Ctrl-C or a signal"], usageError, ["2", "also: the directory does not exist, or the port cannot be bound"]],
    examples: [["spillway serve", "a view on a free port of 127.0.0.1"], ["spillway serve --port 8080", "on port 8080"]]
  }
]

/** A command's spec by name. */
export const spec = (name: string): Spec | undefined => specs.find((s) => s.name === name)

/** The flag a command's argument names (`--max-results`, `-i`), when it has one. */
export const flagOf = (command: Spec, typed: string): Flag | undefined =>
  typed.startsWith("--")
    ? command.flags.find((f) => f.name.length > 1 && f.name === typed.slice(2))
    : command.flags.find((f) => (f.name.length === 1 && f.name === typed.slice(1)) || f.alias === typed.slice(1))

/** A flag as it is typed: `--max-results`, `-c`. */
export const typed = (flag: Flag): string => (flag.name.length === 1 ? `-${flag.name}` : `--${flag.name}`)

/** What the whole command says at the top of its help. */
export const about = "Keeps long command output out of a model's context, and reads it back."

/** The top-level environment: what every command reads. */
export const topEnvironment: ReadonlyArray<readonly [string, string]> = [outputDir, owner, channel, manifests, quick, noColor]
