/**
 * The `spillway` command: `run` a command and keep its output, `read` and
 * `grep` saved output back, `serve` a read-only web view of it.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Spill } from "@spillway/core"
import { Effect } from "effect"
import { readHint } from "./Hints.js"
import * as Commands from "./Commands.js"
import * as Init from "./Init.js"
import * as ServeCommand from "./ServeCommand.js"
import { exitCode, type Output } from "./Output.js"
import { runCommand } from "./RunCommand.js"

/** Passes a signal on to the command `spillway run` is running (see `RunCommand`). */
export { signalCommand } from "./RunCommand.js"

const json = Options.boolean("json").pipe(Options.withDescription("print one JSON object with the same facts"))

const run = Command.make(
  "run",
  {
    maxChars: Options.integer("max-chars").pipe(
      Options.withDefault(Spill.MAX_STDOUT_LEN),
      Options.withDescription("cap on what is printed, in characters")
    ),
    shell: Options.text("c").pipe(Options.optional, Options.withDescription("run this line with /bin/sh -c")),
    stdin: Options.boolean("stdin").pipe(Options.withDescription("pass spillway's stdin on to the command (closed otherwise)")),
    json,
    argv: Args.text({ name: "CMD" }).pipe(Args.repeated, Args.withDescription("the command and its arguments, after --"))
  },
  runCommand
).pipe(Command.withDescription(Commands.summary("run")))

const read = Command.make(
  "read",
  {
    name: Args.text({ name: "NAME" }).pipe(Args.withDescription("the saved file's name from a preview")),
    offset: Options.integer("offset").pipe(Options.withDefault(0), Options.withDescription("first line, 1-indexed (0 = start)")),
    limit: Options.integer("limit").pipe(Options.withDefault(0), Options.withDescription("lines to print (0 = to the end)")),
    json
  },
  ({ json, limit, name, offset }) =>
    Effect.gen(function*() {
      const out = yield* OutputTag
      const spill = yield* Spill.SpillRead
      if (json) {
        const page = yield* spill.readSpill(name, { offset, limit })
        return yield* out.stdout(JSON.stringify(page) + "\n")
      }
      const info = yield* spill.copySpill(name, { offset, limit }, out.stdoutBytes)
      yield* out.stderr(readHint(name, info, limit))
    })
).pipe(Command.withDescription(Commands.summary("read")))

const grep = Command.make(
  "grep",
  {
    pattern: Args.text({ name: "PATTERN" }).pipe(Args.withDescription("a JavaScript regular expression (no backreferences or lookaround)")),
    name: Args.text({ name: "NAME" }).pipe(Args.withDescription("the saved file's name from a preview")),
    maxResults: Options.integer("max-results").pipe(Options.withDefault(100), Options.withDescription("most matches to print")),
    ignoreCase: Options.boolean("ignore-case").pipe(Options.withAlias("i"), Options.withDescription("match case-insensitively")),
    json
  },
  ({ ignoreCase, json, maxResults, name, pattern }) =>
    Effect.gen(function*() {
      const out = yield* OutputTag
      const spill = yield* Spill.SpillRead
      const result = yield* spill.grepSpill(pattern, name, { maxResults, ignoreCase })
      if (json) yield* out.stdout(JSON.stringify(result) + "\n")
      else {
        yield* out.stdout(result.matches.map((m) => `${m.line}:${m.text}\n`).join(""))
        if (result.more) {
          yield* out.stderr(`[more lines match past the first ${maxResults}; raise --max-results or narrow the pattern]\n`)
        }
        if (result.stoppedAtLine !== undefined) {
          yield* out.stderr(`[search stopped at its deadline at line ${result.stoppedAtLine} of ${result.totalLines}]\n`)
        }
      }
      return yield* exitCode(result.matches.length > 0 ? 0 : 1)
    })
).pipe(Command.withDescription(Commands.summary("grep")))

/** Where the command writes; a tag so tests and the entry point can supply it. */
export { OutputTag } from "./Output.js"
import { OutputTag } from "./Output.js"
export type { Output }

/** The command tree. */
export const spillway = Command.make("spillway").pipe(
  Command.withDescription("keep long command output out of a model's context, and read it back"),
  Command.withSubcommands([run, read, grep, Init.command, ServeCommand.command])
)
