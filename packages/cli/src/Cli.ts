/**
 * The `spillway` command: what `run`, `read`, `grep` and `init` do with the
 * arguments `Parse` read against their `Usage` specs. `mcp`, `host`, `hook`
 * and `serve` are programs of their own (the bin starts them).
 *
 * @since 0.1.0
 */
import { Spill } from "@spillway/core"
import { Effect, Option } from "effect"
import { READ_LIMIT, readHint, shellWord } from "./Hints.js"
import * as Init from "./Init.js"
import * as OutputDir from "./OutputDir.js"
import { Exit2, exitCode, type Output, OutputTag } from "./Output.js"
import * as Parse from "./Parse.js"
import { runCommand } from "./RunCommand.js"
import * as Usage from "./Usage.js"

/** Passes a signal on to the command `spillway run` is running (see `RunCommand`). */
export { signalCommand } from "./RunCommand.js"

/** Where the command writes; a tag so tests and the entry point can supply it. */
export { OutputTag } from "./Output.js"
export type { Output }

const usage = (mistake: string) => new Exit2({ message: mistake })

/** The positionals of a parsed command, or the usage error. */
const positionalsOf = (name: string, parsed: Parse.Parsed) => {
  const r = Parse.positionals(Usage.spec(name)!, parsed.positionals)
  return Parse.isMistake(r) ? Effect.fail(usage(r.mistake)) : Effect.succeed(r)
}

const outputDirChecked = Effect.suspend(() => {
  const problem = OutputDir.fromEnv(process.env)
  return problem === undefined ? Effect.void : Effect.fail(new Exit2({ message: problem, tag: "OutputDirectory" }))
})

const num = (parsed: Parse.Parsed, flag: string): number | undefined => {
  const v = parsed.flags[flag]
  return typeof v === "number" ? v : undefined
}

/** `spillway run`: the options the parser read, handed to `runCommand`. */
const run = (parsed: Parse.Parsed) =>
  runCommand({
    argv: parsed.command,
    json: parsed.flags.json === true,
    maxChars: num(parsed, "max-chars") ?? Spill.MAX_STDOUT_LEN,
    shell: typeof parsed.flags.c === "string" ? Option.some(parsed.flags.c) : Option.none(),
    stdin: parsed.flags.stdin === true
  })

/** `spillway read`: a page of 200 lines by default, with a marker on stderr that says how to go on. */
const read = (parsed: Parse.Parsed) =>
  Effect.gen(function*() {
    const [name] = yield* positionalsOf("read", parsed)
    const given = num(parsed, "limit")
    if (parsed.flags.all === true && given !== undefined && given !== 0) {
      return yield* usage(`--all prints every line; leave out --limit ${given}, or --all`)
    }
    const limit = parsed.flags.all === true ? 0 : given ?? READ_LIMIT
    const offset = num(parsed, "offset") ?? 0
    yield* outputDirChecked
    const out = yield* OutputTag
    const spill = yield* Spill.SpillRead
    if (parsed.flags.json === true) {
      const page = yield* spill.readSpill(name!, { offset, limit })
      return yield* out.stdout(JSON.stringify(page) + "\n")
    }
    const info = yield* spill.copySpill(name!, { offset, limit }, out.stdoutBytes)
    yield* out.stderr(readHint(name!, info, limit))
  })

/** `spillway grep`: matching lines from `--offset` on, with the `--offset` that goes on when more match. */
const grep = (parsed: Parse.Parsed) =>
  Effect.gen(function*() {
    const [pattern, name] = yield* positionalsOf("grep", parsed)
    const maxResults = num(parsed, "max-results") ?? 100
    const offset = num(parsed, "offset") ?? 0
    const ignoreCase = parsed.flags["ignore-case"] === true
    yield* outputDirChecked
    const out = yield* OutputTag
    const spill = yield* Spill.SpillRead
    const result = yield* spill.grepSpill(pattern!, name!, { maxResults, ignoreCase, fromLine: Math.max(1, offset) })
    const last = result.matches[result.matches.length - 1]
    const nextOffset = result.more && last !== undefined ? last.line + 1 : undefined
    if (parsed.flags.json === true) yield* out.stdout(JSON.stringify(nextOffset === undefined ? result : { ...result, nextOffset }) + "\n")
    else {
      yield* out.stdout(result.matches.map((m) => `${m.line}:${m.text}\n`).join(""))
      if (nextOffset !== undefined) {
        const flags = [ignoreCase ? " -i" : "", maxResults !== 100 ? ` --max-results ${maxResults}` : ""].join("")
        const words = pattern!.startsWith("-") ? `-- ${shellWord(pattern!)}` : shellWord(pattern!)
        yield* out.stderr(
          `[more lines match past line ${last!.line}; continue with: spillway grep${flags} --offset ${nextOffset} ${words} ${name}]\n`
        )
      }
      if (result.stoppedAtLine !== undefined) {
        yield* out.stderr(
          `[search stopped at its deadline at line ${result.stoppedAtLine} of ${result.totalLines}; go on with --offset ${result.stoppedAtLine}]\n`
        )
      }
    }
    return yield* exitCode(result.matches.length > 0 ? 0 : 1)
  })

/** `spillway init`: connects agents, or takes them out. */
const init = (parsed: Parse.Parsed) =>
  Effect.gen(function*() {
    const [agent] = yield* positionalsOf("init", parsed)
    yield* Init.handler({
      agent: agent ?? "all",
      dryRun: parsed.flags["dry-run"] === true,
      uninstall: parsed.flags.uninstall === true
    })
  })

/** What each command that runs in this program does with its parsed arguments. */
export const handlers = { run, read, grep, init } as const

/** True for a command this program runs (the others are programs of their own). */
export const isHandled = (name: string): name is keyof typeof handlers => Object.hasOwn(handlers, name)
