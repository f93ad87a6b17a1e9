/**
 * The entry point of the `spillway` bin.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Access, Spill, SpillPolicy } from "@spillway/core"
import { NodeBodies, NodePattern } from "@spillway/node"
import { Cause, Console, Effect, Exit, Fiber, Layer } from "effect"
import { signalCommand, spillway } from "./Cli.js"
import * as Commands from "./Commands.js"
import { Exit2, OutputTag, processOutput } from "./Output.js"
import { maskPrinted } from "./Printed.js"
import * as ServeCommand from "./ServeCommand.js"

const output = processOutput()
const parseErrors: Array<string> = []

// @effect/cli prints parse errors as help documents; keep them to print one `spillway:` line instead.
const keepErrors = (base: Console.Console): Console.Console => ({
  ...base,
  error: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void parseErrors.push(args.map(String).join(" "))),
  unsafe: { ...base.unsafe, error: (...args: ReadonlyArray<unknown>) => void parseErrors.push(args.map(String).join(" ")) }
})

const services = Layer.mergeAll(
  NodeBodies.layer(),
  SpillPolicy.allowAll,
  Access.layerCaller(NodeBodies.callerFromEnv("cli")),
  // searches run on worker threads, so a signal ends one at once
  NodePattern.layer(),
  NodePath.layer,
  NodeTerminal.layer,
  Layer.succeed(OutputTag, output),
  // the bin starts `serve` as a program of its own (serve.ts); this one only shows its help
  Layer.succeed(ServeCommand.Serve, () => new Exit2({ message: "serve runs as a program of its own; start it with the spillway bin" }))
).pipe(Layer.provideMerge(NodeFileSystem.layer))
const layer = Layer.provideMerge(Spill.layerRead(), services)

const program = Console.consoleWith((base) =>
  Command.run(spillway, { name: "spillway", version: "0.1.0" })(process.argv).pipe(
    Effect.withConsole(keepErrors(base)),
    Effect.provide(layer)
  )
)

const oneLine = (text: string) =>
  text.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim()).filter((l) => l.length > 0).join(" ")

/**
 * `spillway`, `spillway --help` and `-h` print the list of commands; an
 * unknown command prints it on stderr and exits 2. The command tree knows
 * only the commands that run in this program, not those the bin starts as
 * programs of their own (mcp, host, serve), so the list comes from `Commands`.
 */
const listed = (first: string | undefined): number | undefined => {
  if (first === undefined || first === "--help" || first === "-h") {
    process.stdout.write(Commands.help())
    return 0
  }
  if (first.startsWith("-") || Commands.isCommand(first)) return undefined
  process.stderr.write(maskPrinted(`spillway: unknown command ${JSON.stringify(first)}\n\n`) + Commands.help())
  return 2
}

/** Runs the command tree, passing signals on to a command `run` is running. */
const start = () => {
  const fiber = Effect.runFork(program)
  // A first Ctrl-C (or SIGTERM, SIGHUP) goes to the running command, which
  // then ends and has its output kept and shown as usual; a second one, or a
  // command still running after the grace period, interrupts spillway itself
  // (which sends SIGTERM, then SIGKILL).
  let signalled = false
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (!signalled && signalCommand(signal)) {
        signalled = true
        setTimeout(() => Effect.runFork(Fiber.interrupt(fiber)), 3000).unref()
        return
      }
      Effect.runFork(Fiber.interrupt(fiber))
    })
  }
  fiber.addObserver((exit) => {
    if (Exit.isSuccess(exit)) {
      process.exitCode = output.status
      return
    }
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "Some") {
      const e = failure.value as { _tag?: string; message?: string; status?: number }
      const text = ValidationError.isValidationError(failure.value)
        ? oneLine(parseErrors.join("\n")) || "invalid arguments"
        : oneLine(e.message ?? String(e))
      const hint = ValidationError.isValidationError(failure.value) ? " (see spillway --help)" : ""
      process.stderr.write(maskPrinted(`spillway: ${text}${hint}\n`))
      process.exitCode = e.status ?? 2
      return
    }
    if (Cause.isInterruptedOnly(exit.cause)) {
      process.exitCode = 130
      return
    }
    process.stderr.write(maskPrinted(`spillway: internal error: ${oneLine(Cause.pretty(exit.cause))}\n`))
    process.exitCode = 70
  })
}

const status = listed(process.argv[2])
if (status === undefined) start()
else process.exitCode = status
