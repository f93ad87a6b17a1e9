/**
 * The entry point of the `spillway` bin for everything but the programs of
 * their own: the help (`spillway`, `--help`, `spillway help [COMMAND]`,
 * `COMMAND --help`), `--version`, and `run`, `read`, `grep` and `init`. A
 * command's arguments are read against its `Usage` spec before anything
 * runs, so a mistyped flag is an error that names it, never the command.
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Spill } from "@spillway/core"
import { NodePattern } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Cli from "./Cli.js"
import * as Help from "./Help.js"
import { processOutput } from "./Output.js"
import * as Parse from "./Parse.js"
import { maskPrinted } from "./Printed.js"
import { report, runServices, start } from "./Program.js"
import * as Usage from "./Usage.js"

/** What the command prints and the status it leaves with, when it is decided without running anything. */
interface Answer {
  readonly stdout?: string
  readonly stderr?: string
  readonly status: number
}

const unknownCommand = (name: string): Answer => ({
  stderr: maskPrinted(`spillway: unknown command ${Parse.quoted(name)}\n\n`) + Help.top(),
  status: 2
})

/** The help, the version and unknown commands: answered here, or undefined when a command is to run. */
const answer = (args: ReadonlyArray<string>): Answer | undefined => {
  const [first, ...rest] = args
  // spillway alone is a mistake: the help goes where mistakes go
  if (first === undefined) return { stderr: Help.top(), status: 2 }
  if (first === "--help" || first === "-h" || first === "help") {
    if (first !== "help" || rest.length === 0) return { stdout: Help.top(), status: 0 }
    const spec = Usage.spec(rest[0]!)
    if (spec === undefined || rest.length > 1) return rest.length > 1 ? { stderr: "spillway help: give one COMMAND\n", status: 2 } : unknownCommand(rest[0]!)
    return { stdout: Help.page(spec), status: 0 }
  }
  if (first === "--version") return { stdout: `spillway ${Help.VERSION}\n`, status: 0 }
  if (first.startsWith("-")) return { stderr: maskPrinted(`spillway: unknown flag ${Parse.quoted(first)}; put a COMMAND first\n\n`) + Help.top(), status: 2 }
  return Usage.spec(first) === undefined ? unknownCommand(first) : undefined
}

/** True when `--json` is among a command's flags (before any `--`), so even a usage error is one JSON object. */
const wantsJson = (spec: Usage.Spec, args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  return spec.flags.some((f) => f.name === "json") && (end === -1 ? args : args.slice(0, end)).includes("--json")
}

const output = processOutput()

const services = Layer.mergeAll(
  runServices(output),
  // searches run on worker threads, so a signal ends one at once
  NodePattern.layer()
).pipe(Layer.provideMerge(NodeFileSystem.layer))
const layer = Layer.provideMerge(Spill.layerRead(), services)

const main = (args: ReadonlyArray<string>): void => {
  const answered = answer(args)
  if (answered !== undefined) {
    if (answered.stdout !== undefined) process.stdout.write(answered.stdout)
    if (answered.stderr !== undefined) process.stderr.write(answered.stderr)
    process.exitCode = answered.status
    return
  }
  const spec = Usage.spec(args[0]!)!
  const reporting = { prefix: `spillway ${spec.name}`, json: wantsJson(spec, args.slice(1)) }
  const parsed = Parse.parse(spec, args.slice(1))
  if (Parse.isMistake(parsed)) return report({ tag: "UsageError", message: parsed.mistake, status: 2 }, reporting)
  if (parsed.help) {
    process.stdout.write(Help.page(spec))
    return
  }
  if (!Cli.isHandled(spec.name)) {
    // the bin starts these as programs of their own; here only when started some other way
    return report({ tag: "UsageError", message: "runs as a program of its own; start it with the spillway bin", status: 2 }, reporting)
  }
  const handler: (parsed: Parse.Parsed) => Effect.Effect<void, unknown, Layer.Layer.Success<typeof layer>> = Cli.handlers[spec.name]
  const program = handler(parsed).pipe(Effect.provide(layer))
  start(program, output, reporting)
}

main(process.argv.slice(2))
