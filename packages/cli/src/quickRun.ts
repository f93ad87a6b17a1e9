/**
 * `spillway run` as a program of its own, for the forms its arguments
 * nearly always take: `run [--json] [--stdin] [--max-chars N] -- CMD [ARGS...]`
 * and `run [--json] [--stdin] [--max-chars N] -c LINE` (an agent's hook
 * rewrites every command to `run --stdin -- bash -c LINE`). It runs the same `runCommand` with
 * the same services as the whole command, without loading the command tree
 * and the other commands (the searches' worker, the web view), so a command
 * starts sooner. Anything else (help, other flags, a flag given twice, a
 * missing command) is handed over to the whole command, so errors are worded
 * in one place. The bin skips it when `SPILLWAY_QUICK=0`.
 *
 * @since 0.1.0
 */
import { Spill } from "@spillway/core"
import { Effect, Option } from "effect"
import { processOutput } from "./Output.js"
import { runServices, start } from "./Program.js"
import { runCommand, type RunOptions } from "./RunCommand.js"

/** `--max-chars`' value as the command tree reads an integer, when it is a plain one. */
const count = (raw: string | undefined): number | undefined => raw !== undefined && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined

/** The run's options, when the arguments take one of the common forms; undefined hands them over. */
export const parse = (args: ReadonlyArray<string>, defaultMaxChars: number = Spill.MAX_STDOUT_LEN): RunOptions | undefined => {
  if (args[0] !== "run") return undefined
  let json: boolean | undefined
  let stdin: boolean | undefined
  let maxChars: number | undefined
  let shell: string | undefined
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!
    if (a === "--") {
      const argv = args.slice(i + 1)
      return argv.length > 0 && shell === undefined
        ? { argv, json: json ?? false, maxChars: maxChars ?? defaultMaxChars, shell: Option.none(), stdin: stdin ?? false }
        : undefined
    }
    const given = a === "--max-chars" ? count(args[i + 1]) : a.startsWith("--max-chars=") ? count(a.slice(12)) : undefined
    if (a === "--json" && json === undefined) json = true
    else if (a === "--stdin" && stdin === undefined) stdin = true
    else if (given !== undefined && maxChars === undefined) {
      maxChars = given
      if (a === "--max-chars") i++
    } else if (a === "-c" && shell === undefined && args[i + 1] !== undefined && !args[i + 1]!.startsWith("-")) shell = args[++i]
    else return undefined
  }
  return shell !== undefined
    ? { argv: [], json: json ?? false, maxChars: maxChars ?? defaultMaxChars, shell: Option.some(shell), stdin: stdin ?? false }
    : undefined
}

/** Runs `spillway run` when its arguments take a common form; false hands them over to the whole command. */
export const tryQuickRun = (args: ReadonlyArray<string>): boolean => {
  const options = parse(args)
  if (options === undefined) return false
  const output = processOutput()
  start(runCommand(options).pipe(Effect.provide(runServices(output))), output, {
    prefix: "spillway run",
    json: options.json
  })
  return true
}
