/**
 * The forms `spillway run`'s arguments nearly always take, read without
 * Effect: `run [--json] [--stdin] [--max-chars N] -- CMD [ARGS...]` and
 * `run [--json] [--stdin] [--max-chars N] -c LINE` (an agent's hook rewrites
 * every command to `run --stdin -- bash -c LINE`). The run program
 * (`quickRun`) and the short run (`shortRun`) both read them here; anything
 * else (help, other flags, a flag given twice, a missing command) is left to
 * the whole command, so errors are worded in one place.
 *
 * @since 0.1.0
 */
import { MAX_STDOUT_LEN } from "@spillway/core/Preview"

/**
 * The range `--max-chars` takes: a preview's head and tail are held in
 * memory at four bytes a character each, and a preview past a million
 * characters serves no reader better than `spillway read`.
 */
export const MAX_CHARS = { min: 400, max: 1_000_000 } as const

/** A run's arguments in one of the common forms. */
export interface RunArgs {
  /** The command and its arguments, given after `--` (empty with `shell`). */
  readonly argv: ReadonlyArray<string>
  readonly json: boolean
  readonly maxChars: number
  /** A line for `/bin/sh -c`, given with `-c`. */
  readonly shell: string | undefined
  readonly stdin: boolean
}

/** `--max-chars`' value as the command tree reads an integer, when it is a plain one. */
const count = (raw: string | undefined): number | undefined => raw !== undefined && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined

/** The run's arguments, when they take one of the common forms; undefined leaves them to the whole command. */
export const parseRun = (args: ReadonlyArray<string>, defaultMaxChars: number = MAX_STDOUT_LEN): RunArgs | undefined => {
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
        ? { argv, json: json ?? false, maxChars: maxChars ?? defaultMaxChars, shell: undefined, stdin: stdin ?? false }
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
    ? { argv: [], json: json ?? false, maxChars: maxChars ?? defaultMaxChars, shell, stdin: stdin ?? false }
    : undefined
}
