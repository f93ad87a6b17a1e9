/**
 * `spillway serve [--port N] [--bind ADDR] [--dir DIR] [--channel NAME]
 * [--token-file FILE]`: serves a read-only web view of kept output and
 * prints its URL on stdout. Its own entry point, like `mcp` and `host`, so
 * the rest of the command never loads the HTTP server.
 *
 * @since 0.1.0
 */
import { directoryFrom } from "@spillway/node/FileChecks"
import { NodeWeb } from "@spillway/node"
import { Handlers } from "@spillway/tools"
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as V8 from "node:v8"
import { cliGrepHint, cliHint } from "./Hints.js"
import * as OutputDir from "./OutputDir.js"
import { Exit2, OutputTag, processOutput } from "./Output.js"
import * as Parse from "./Parse.js"
import { describe, report } from "./Program.js"
import * as ServeCommand from "./ServeCommand.js"
import * as Usage from "./Usage.js"

// Paging a large body leaves short-lived garbage for which V8 would grow its young generation
// to 16 MiB semispaces and keep them; a long-lived server keeps them at their first size.
V8.setFlagsFromString("--semi-space-growth-factor=1")

const readToken = (file: string) =>
  Effect.try({
    try: () => Fs.readFileSync(file, "utf8").trim(),
    catch: () => new Exit2({ message: `cannot read the token file ${file}` })
  }).pipe(Effect.filterOrFail(
    (t) => t.length >= NodeWeb.MIN_TOKEN_CHARS && /^[A-Za-z0-9._~+/=-]+$/.test(t),
    () =>
      new Exit2({
        message: `the token in ${file} must be ${NodeWeb.MIN_TOKEN_CHARS} or more letters, digits or . _ ~ + / = - (make a random one with \`openssl rand -hex 16\`)`
      })
  ))

/** Why serving failed, in words: the system's code (EADDRINUSE), or the error's message or kind. */
const reason = (e: unknown): string => {
  const error = e as { cause?: { code?: unknown; message?: unknown }; message?: unknown; _tag?: unknown }
  const said = [error.cause?.code, error.cause?.message, error.message].find((r) => typeof r === "string" && r !== "")
  return typeof said === "string" ? said : typeof error._tag === "string" ? error._tag : "unknown error"
}

/** Serving on Node, for the `serve` command. */
export const serve = (options: ServeCommand.ServeOptions) =>
  Effect.gen(function*() {
    const out = yield* OutputTag
    if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
      return yield* new Exit2({ message: `--port needs a port from 0 to 65535, got ${options.port}` })
    }
    const named = Option.isSome(options.dir)
      ? { source: "--dir", directory: Path.resolve(options.dir.value) }
      : process.env.SPILLWAY_OUTPUT_DIR !== undefined && process.env.SPILLWAY_OUTPUT_DIR !== ""
      ? { source: "SPILLWAY_OUTPUT_DIR", directory: Path.resolve(directoryFrom(process.env)) }
      : undefined
    const problem = named === undefined
      ? OutputDir.fromEnv(process.env)
      : OutputDir.problem(named.source, named.directory, true)
    if (problem !== undefined) return yield* new Exit2({ message: problem, tag: "OutputDirectory" })
    const token = Option.isSome(options.tokenFile) ? yield* readToken(options.tokenFile.value) : undefined
    yield* Effect.scoped(Effect.gen(function*() {
      const started = yield* NodeWeb.serve({
        port: options.port,
        host: options.bind,
        token,
        directory: Option.getOrUndefined(options.dir),
        channel: Option.getOrUndefined(options.channel),
        hints: {
          command: { read: cliHint, grep: cliGrepHint },
          run_command: { read: Handlers.hint, grep: Handlers.grepHint }
        }
      }).pipe(Effect.mapError((e) =>
        e instanceof NodeWeb.WeakToken
          ? new Exit2({ message: `${e.message}; nothing was served` })
          : new Exit2({ message: `cannot serve on ${options.bind} port ${options.port}: ${reason(e)}` })
      ))
      // the address carries the token this command made for whoever started it: printed whole, not masked
      yield* out.stdoutOwn(`${started.url}\n`)
      yield* out.stderr("spillway: serving a read-only view of kept output; Ctrl-C stops it\n")
      return yield* Effect.never
    }))
  })

const output = processOutput()
const reporting = { prefix: "spillway serve", json: false }

/** The options `serve` was given, or the usage error. */
const optionsOf = (args: ReadonlyArray<string>): ServeCommand.ServeOptions | Parse.Mistake => {
  const parsed = Parse.parse(Usage.spec("serve")!, args)
  if (Parse.isMistake(parsed)) return parsed
  const extra = Parse.positionals(Usage.spec("serve")!, parsed.positionals)
  if (Parse.isMistake(extra)) return extra
  const text = (name: string) => typeof parsed.flags[name] === "string" ? Option.some(parsed.flags[name] as string) : Option.none()
  return {
    port: typeof parsed.flags.port === "number" ? parsed.flags.port : 0,
    bind: typeof parsed.flags.bind === "string" ? parsed.flags.bind : "127.0.0.1",
    dir: text("dir"),
    channel: text("channel"),
    tokenFile: text("token-file")
  }
}

const options = optionsOf(process.argv.slice(3))
if (Parse.isMistake(options)) report({ tag: "UsageError", message: options.mistake, status: 2 }, reporting)
else {
  const fiber = Effect.runFork(Effect.provideService(serve(options), OutputTag, output))
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, () => void Effect.runFork(Fiber.interrupt(fiber)))
  fiber.addObserver((exit) => {
    if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return
    const failure = Cause.failureOption(exit.cause)
    report(
      failure._tag === "Some" ? describe(failure.value) : { tag: "InternalError", message: Cause.pretty(exit.cause).split("\n")[0] ?? "internal error", status: 70 },
      reporting
    )
  })
}
