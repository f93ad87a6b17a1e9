/**
 * How a `spillway` program runs and ends, shared by the whole command and
 * the run program of its own: the services `run` needs, signals passed on to
 * the running command, and one `spillway:` line for a failure with the exit
 * status it carries.
 *
 * @since 0.1.0
 */
import { Access, SpillPolicy } from "@spillway/core"
import { NodeBodies } from "@spillway/node"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import { OutputTag, type Output } from "./Output.js"
import { maskPrinted } from "./Printed.js"
import { signalCommand } from "./RunCommand.js"

/** What `spillway run` needs besides a file system: the body store, the write policy, the caller from the environment, and where it prints. */
export const runServices = (output: Output) =>
  Layer.mergeAll(
    NodeBodies.layer(),
    SpillPolicy.allowAll,
    Access.layerCaller(NodeBodies.callerFromEnv("cli")),
    Layer.succeed(OutputTag, output)
  )

/** Text on one line, without terminal colours. */
export const oneLine = (text: string) =>
  text.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim()).filter((l) => l.length > 0).join(" ")

/**
 * Runs a program to its end: a first Ctrl-C (or SIGTERM, SIGHUP) goes to
 * the running command, which then ends and has its output kept and shown as
 * usual; a second one, or a command still running after the grace period,
 * interrupts spillway itself (which sends SIGTERM, then SIGKILL). A failure
 * is printed as one masked `spillway:` line, as `describe` words it when it
 * knows the failure, and the process exits with its status (2 by default).
 */
export const start = (
  program: Effect.Effect<unknown, unknown>,
  output: { readonly status: number },
  describe: (failure: unknown) => string | undefined = () => undefined
): void => {
  const fiber = Effect.runFork(program)
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
      const e = failure.value as { message?: string; status?: number }
      const text = describe(failure.value) ?? oneLine(e.message ?? String(e))
      process.stderr.write(maskPrinted(`spillway: ${text}\n`))
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
