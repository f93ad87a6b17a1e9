/**
 * `spillway run` as a program of its own, for the forms its arguments
 * nearly always take (see `runArgs`). It runs the same `runCommand` with
 * the same services as the whole command, without loading the command tree
 * and the other commands (the searches' worker, the web view), so a command
 * starts sooner. Anything else (help, other flags, a flag given twice, a
 * missing command) is handed over to the whole command, so errors are worded
 * in one place. The bin skips it when `SPILLWAY_QUICK=0`.
 *
 * @since 0.1.0
 */
import { Spill } from "@spillway/core"
import type * as ChildPipes from "@spillway/node/ChildPipes"
import { Effect, Option } from "effect"
import { processOutput } from "./Output.js"
import { runServices, start } from "./Program.js"
import { runCommand, type RunOptions } from "./RunCommand.js"
import { parseRun } from "./runArgs.js"

/** The run's options, when the arguments take one of the common forms (see `runArgs`); undefined hands them over. */
export const parse = (args: ReadonlyArray<string>, defaultMaxChars: number = Spill.MAX_STDOUT_LEN): RunOptions | undefined => {
  const read = parseRun(args, defaultMaxChars)
  return read === undefined ? undefined : { ...read, shell: Option.fromNullable(read.shell) }
}

/** Runs `spillway run` when its arguments take a common form; false hands them over to the whole command. */
export const tryQuickRun = (args: ReadonlyArray<string>): boolean => continueRun(args, undefined)

/**
 * Goes on with a command the short run started (see `shortRun`), or starts
 * it when `started` is undefined; false hands the arguments over to the
 * whole command.
 */
export const continueRun = (args: ReadonlyArray<string>, started: ChildPipes.Started | undefined): boolean => {
  const options = parse(args)
  if (options === undefined) return false
  const output = processOutput()
  start(runCommand(options, started).pipe(Effect.provide(runServices(output))), output, {
    prefix: "spillway run",
    json: options.json
  })
  return true
}
