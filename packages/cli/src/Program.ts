/**
 * How a `spillway` program runs and ends, shared by the whole command and
 * the run program of its own: the services `run` needs, signals passed on to
 * the running command, and one `spillway:` line for a failure with the exit
 * status it carries.
 *
 * @since 0.1.0
 */
import { Access, Errors, SpillPolicy } from "@spillway/core"
import { NodeBodies } from "@spillway/node"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import { OutputTag, type Output } from "./Output.js"
import { causeText, errorText, maskPrinted } from "./Printed.js"
import { signalCommand } from "./RunCommand.js"

/**
 * The caller the command acts for: `SPILLWAY_OWNER` on channel `cli`. A
 * person at their terminal reads their own output of every channel (the MCP
 * server's jobs too); with `SPILLWAY_CHANNEL` set, it acts for that channel
 * alone.
 */
export const cliCaller = (): Access.Caller => {
  const caller = NodeBodies.callerFromEnv("cli")
  const pinned = process.env.SPILLWAY_CHANNEL !== undefined && process.env.SPILLWAY_CHANNEL !== ""
  return pinned ? caller : { ...caller, readsEveryChannel: true }
}

/** What `spillway run` needs besides a file system: the body store, the write policy, the caller from the environment, and where it prints. */
export const runServices = (output: Output) =>
  Layer.mergeAll(
    NodeBodies.layer(),
    SpillPolicy.allowAll,
    Access.layerCaller(cliCaller()),
    Layer.succeed(OutputTag, output)
  )

/** Text on one line, without terminal colours. */
export const oneLine = (text: string) =>
  text.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim()).filter((l) => l.length > 0).join(" ")

/** How a failure is reported: its kind (for `--json`), its one-line message and the exit status. */
export interface Described {
  readonly tag: string
  readonly message: string
  readonly status: number
}

/** The flag a library argument stands for, as a user types it. */
const flagOf: Readonly<Record<string, string>> = {
  offset: "--offset",
  limit: "--limit",
  maxResults: "--max-results",
  fromLine: "--offset",
  pattern: "PATTERN",
  filename: "NAME"
}

/**
 * A failure in the command's own words: a library argument named as the
 * flag a user typed, a missing output named without the cursor a command
 * never shows, and anything else by its own message.
 */
export const describe = (failure: unknown): Described => {
  const e = failure as { _tag?: string; message?: string; status?: number; tag?: string; argument?: string; reason?: string; resource?: string; id?: string }
  const tag = e._tag === "Exit2" ? e.tag ?? "UsageError" : e._tag ?? "Error"
  if (e._tag === "InvalidRequest" && e.argument !== undefined && e.reason !== undefined) {
    const message = e.argument === "request" ? e.reason : `${flagOf[e.argument] ?? e.argument}: ${e.reason}`
    return { tag, message: oneLine(message), status: 2 }
  }
  if (e._tag === "NotFound" && (e.resource === "output" || e.resource === "job") && e.id !== undefined) {
    return {
      tag,
      message: `no saved output ${Errors.quote(e.id)}: check the name a preview printed after "Full output:"; saved output is removed when it expires`,
      status: 2
    }
  }
  const pinned = process.env.SPILLWAY_CHANNEL
  if (e._tag === "AccessDenied" && e.resource === "job" && pinned !== undefined && pinned !== "") {
    return {
      tag,
      message: `you may not read job output ${Errors.quote(e.id ?? "")}: SPILLWAY_CHANNEL=${pinned} limits this command to that channel's jobs; unset it to read every channel of yours`,
      status: 2
    }
  }
  if (e._tag === "AccessDenied" && (e.resource === "job" || e.resource === "output")) {
    const what = e.resource === "job" ? "job output" : "saved output"
    return {
      tag,
      message: `you may not read ${what} ${Errors.quote(e.id ?? "")}: it is not yours (this command reads as SPILLWAY_OWNER, your user name by default)`,
      status: 2
    }
  }
  return { tag, message: oneLine(e.message ?? String(failure)), status: e.status ?? 2 }
}

/** How `start` reports a failure: after which prefix (`spillway run`), and as JSON on stdout when `--json` was asked for. */
export interface Reporting {
  readonly prefix: string
  readonly json: boolean
}

/** Reports a failure: one JSON object on stdout with `--json`, one masked line on stderr otherwise; sets the exit status. */
export const report = (failure: Described, reporting: Reporting): void => {
  // the words through the one error-to-text path every wire uses: bounded and masked
  const message = errorText(failure)
  if (reporting.json) process.stdout.write(maskPrinted(JSON.stringify({ error: { tag: failure.tag, message } }) + "\n"))
  else process.stderr.write(maskPrinted(`${reporting.prefix}: ${message}\n`))
  process.exitCode = failure.status
}

/**
 * Runs a program to its end: a first Ctrl-C (or SIGTERM, SIGHUP) goes to
 * the running command, which then ends and has its output kept and shown as
 * usual; a second one, or a command still running after the grace period,
 * interrupts spillway itself (which sends SIGTERM, then SIGKILL). A failure
 * is reported as `describe` words it (see `report`), and the process exits
 * with its status (2 by default).
 */
export const start = (
  program: Effect.Effect<unknown, unknown>,
  output: { readonly status: number },
  reporting: Reporting
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
    if (failure._tag === "Some") return report(describe(failure.value), reporting)
    if (Cause.isInterruptedOnly(exit.cause)) {
      process.exitCode = 130
      return
    }
    report({ tag: "InternalError", message: `internal error: ${oneLine(causeText(exit.cause))}`, status: 70 }, reporting)
  })
}
