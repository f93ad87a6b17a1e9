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
import { Spill } from "@spillway/core"
import { NodePattern } from "@spillway/node"
import { Console, Effect, Layer } from "effect"
import { spillway } from "./Cli.js"
import * as Commands from "./Commands.js"
import { Exit2, processOutput } from "./Output.js"
import { maskPrinted } from "./Printed.js"
import { oneLine, runServices, start } from "./Program.js"
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
  runServices(output),
  // searches run on worker threads, so a signal ends one at once
  NodePattern.layer(),
  NodePath.layer,
  NodeTerminal.layer,
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

/** A parse error, as the one line @effect/cli's help documents hold. */
const describe = (failure: unknown): string | undefined =>
  ValidationError.isValidationError(failure) ? `${oneLine(parseErrors.join("\n")) || "invalid arguments"} (see spillway --help)` : undefined

const status = listed(process.argv[2])
if (status === undefined) start(program, output, describe)
else process.exitCode = status
