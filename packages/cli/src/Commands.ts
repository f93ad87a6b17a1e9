/**
 * Every `spillway` command, with what it does in one line: the list
 * `spillway --help` prints and an unknown command repeats. Some commands are
 * programs of their own that the bin starts (`mcp`, `host`, `hook`, `serve`); this
 * is the one place that names them all.
 *
 * @since 0.1.0
 */

/** A command's name and what it does. */
export interface Entry {
  readonly name: string
  readonly summary: string
}

/** Every command, in the order the help lists them. */
export const all: ReadonlyArray<Entry> = [
  { name: "run", summary: "run a command; print its output, or a preview and the name of the file that keeps it all" },
  { name: "read", summary: "print lines of a saved output file" },
  { name: "grep", summary: "search a saved output file; prints LINE:TEXT per match" },
  { name: "mcp", summary: "serve the tools to an MCP client on stdin and stdout" },
  { name: "host", summary: "run commands for remote controllers and keep their output on this machine" },
  { name: "hook", summary: "answer a coding agent's hook (claude, codex, gemini): route its shell commands through spillway run" },
  { name: "init", summary: "connect coding agents (Claude Code, Codex, Gemini CLI, opencode, pi, Cursor) to spillway; --uninstall takes it out" },
  { name: "serve", summary: "serve a read-only web view of jobs, saved outputs and evidence on 127.0.0.1; prints its URL" }
]

/** What a command does, by name. */
export const summary = (name: string): string => all.find((c) => c.name === name)?.summary ?? ""

/** True for the name of a command. */
export const isCommand = (name: string): boolean => all.some((c) => c.name === name)

/** The list of commands, one line each, with how to learn a command's arguments. */
export const help = (): string => {
  const width = Math.max(...all.map((c) => c.name.length))
  return [
    "usage: spillway COMMAND [ARGUMENTS]",
    "",
    "Keeps long command output out of a model's context, and reads it back.",
    "",
    "commands:",
    ...all.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "spillway COMMAND --help shows a command's arguments; spillway --version its version."
  ].join("\n") + "\n"
}
