/**
 * `spillway serve [--port N] [--bind ADDR] [--dir DIR] [--channel NAME]
 * [--token-file FILE]`: serves a read-only web view of kept output and
 * prints its URL on stdout. Its own entry point, like `mcp` and `host`, so
 * the rest of the command never loads the HTTP server.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { NodeWeb } from "@spillway/node"
import { Handlers } from "@spillway/tools"
import { Cause, Effect, Exit, Fiber, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as V8 from "node:v8"
import { cliGrepHint, cliHint } from "./Hints.js"
import { Exit2, OutputTag, processOutput } from "./Output.js"
import * as ServeCommand from "./ServeCommand.js"

// Paging a large body leaves short-lived garbage for which V8 would grow its young generation
// to 16 MiB semispaces and keep them; a long-lived server keeps them at their first size.
V8.setFlagsFromString("--semi-space-growth-factor=1")

const readToken = (file: string) =>
  Effect.try({
    try: () => Fs.readFileSync(file, "utf8").trim(),
    catch: () => new Exit2({ message: `cannot read the token file ${file}` })
  }).pipe(Effect.filterOrFail(
    (t) => /^[A-Za-z0-9._~+/=-]{16,}$/.test(t),
    () => new Exit2({ message: `the token in ${file} must be 16 or more letters, digits or . _ ~ + / = -` })
  ))

const reason = (e: unknown): string => {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (e as { message?: string }).message ?? String(e)
}

/** Serving on Node, for the `serve` command. */
export const serve = (options: ServeCommand.ServeOptions) =>
  Effect.gen(function*() {
    const out = yield* OutputTag
    if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
      return yield* new Exit2({ message: `--port needs a port from 0 to 65535, got ${options.port}` })
    }
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
      }).pipe(Effect.mapError((e) => new Exit2({ message: `cannot serve on ${options.bind} port ${options.port}: ${reason(e)}` })))
      // the address carries the token this command made for whoever started it: printed whole, not masked
      yield* out.stdoutOwn(`${started.url}\n`)
      yield* out.stderr("spillway: serving a read-only view of kept output; Ctrl-C stops it\n")
      return yield* Effect.never
    }))
  })

const output = processOutput()
const layer = Layer.mergeAll(
  Layer.succeed(ServeCommand.Serve, (o: ServeCommand.ServeOptions) => Effect.provideService(serve(o), OutputTag, output)),
  NodePath.layer,
  NodeTerminal.layer
).pipe(Layer.provideMerge(NodeFileSystem.layer))

const program = Command.run(Command.make("spillway").pipe(Command.withSubcommands([ServeCommand.command])), {
  name: "spillway",
  version: "0.1.0"
})(process.argv).pipe(Effect.provide(layer))

const fiber = Effect.runFork(program)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, () => void Effect.runFork(Fiber.interrupt(fiber)))
fiber.addObserver((exit) => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return
  const failure = Cause.failureOption(exit.cause)
  const message = failure._tag === "Some" ? (failure.value as { message?: string }).message ?? String(failure.value) : Cause.pretty(exit.cause).split("\n")[0]
  process.stderr.write(`spillway: ${message}\n`)
  process.exitCode = failure._tag === "Some" ? ((failure.value as { status?: number }).status ?? 2) : 70
})
