/**
 * Reads a command's arguments against its `Usage.Spec`, before anything is
 * run: every flag is checked, and a mistake is one line that names the flag
 * as it was typed (`unknown flag --jsn`, `--max-results expects a whole
 * number, got 'abc'`). Pure: no Effect, no process.
 *
 * @since 0.1.0
 */
import type * as Usage from "./Usage.js"
import { typed } from "./Usage.js"

/** The arguments as read: flag values by flag name, positionals in order, and the command to run. */
export interface Parsed {
  readonly help: boolean
  readonly flags: Readonly<Record<string, string | number | true>>
  readonly positionals: ReadonlyArray<string>
  /** For a command that runs one: what came after `--` or from its first argument on. */
  readonly command: ReadonlyArray<string>
}

/** A usage error: what was wrong, in one line. */
export interface Mistake {
  readonly mistake: string
}

/** True for a `Mistake`. */
export const isMistake = (r: unknown): r is Mistake => typeof r === "object" && r !== null && "mistake" in r

/** Longest part of an argument a message quotes. */
const QUOTE = 60

/** An argument as a message quotes it: in single quotes, cut to 60 characters with the cut said. */
export const quoted = (value: string): string =>
  value.length <= QUOTE ? `'${value}'` : `'${value.slice(0, QUOTE)}…' (${value.length} characters)`

/** How a range is worded, one way for every value out of it. */
export const range = (min: number, max: number | undefined): string => max === undefined ? `${min} or more` : `from ${min} to ${max}`

/** A whole number as a flag takes it, or the one-line reason it is not one. */
export const count = (flag: string, raw: string, min: number, max?: number): number | Mistake => {
  if (!/^[+-]?\d+$/.test(raw.trim())) return { mistake: `${flag} expects a whole number, got ${quoted(raw)}` }
  const n = Number(raw.trim())
  if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
    return { mistake: `${flag} must be ${range(min, max)}, got ${quoted(raw)}` }
  }
  return n
}

const isFlagLike = (arg: string) => arg.length > 1 && arg.startsWith("-") && arg !== "--"

/** Reads `args` (what follows the command's name) against `spec`. */
export const parse = (spec: Usage.Spec, args: ReadonlyArray<string>): Parsed | Mistake => {
  const flags: Record<string, string | number | true> = {}
  const positionals: Array<string> = []
  let help = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      const rest = args.slice(i + 1)
      if (spec.takesCommand) return { help, flags, positionals, command: rest }
      positionals.push(...rest)
      break
    }
    if (!isFlagLike(arg)) {
      // a command to run starts at its first argument; what follows is the command's
      if (spec.takesCommand) return { help, flags, positionals, command: args.slice(i) }
      positionals.push(arg)
      continue
    }
    if (arg === "--help" || arg === "-h") {
      help = true
      continue
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
    const name = eq === -1 ? arg : arg.slice(0, eq)
    const flag = spec.flags.find((f) => typed(f) === name || (f.alias !== undefined && `-${f.alias}` === name))
    if (flag === undefined) return { mistake: `unknown flag ${quotedFlag(name)}` }
    const shown = typed(flag)
    if (flag.name in flags) return { mistake: `${shown} is given twice` }
    if (flag.value._tag === "switch") {
      if (eq !== -1) return { mistake: `${shown} takes no value, got ${quoted(arg.slice(eq + 1))}` }
      flags[flag.name] = true
      continue
    }
    const raw = eq !== -1 ? arg.slice(eq + 1) : args[++i]
    if (raw === undefined) return { mistake: `${shown} expects ${flag.value._tag === "count" ? "a whole number" : `a value (${flag.placeholder ?? "TEXT"})`}` }
    if (flag.value._tag === "count") {
      const n = count(shown, raw, flag.value.min, flag.value.max)
      if (typeof n !== "number") return n
      flags[flag.name] = n
    } else flags[flag.name] = raw
  }
  return { help, flags, positionals, command: [] }
}

/** A flag name as typed, cut when it is long. */
const quotedFlag = (name: string) => name.length <= QUOTE ? name : `${name.slice(0, QUOTE)}… (${name.length} characters)`

/** The positionals a command takes, checked for their number and their choices. */
export const positionals = (spec: Usage.Spec, given: ReadonlyArray<string>): ReadonlyArray<string> | Mistake => {
  const wanted = spec.positionals
  const required = wanted.filter((p) => !p.optional).length
  if (given.length < required) {
    const missing = wanted.slice(given.length).filter((p) => !p.optional).map((p) => p.name)
    return { mistake: `missing ${missing.join(" and ")}; usage: ${spec.usage[0]}` }
  }
  if (given.length > wanted.length) return { mistake: `unexpected argument ${quoted(given[wanted.length]!)}; usage: ${spec.usage[0]}` }
  for (let k = 0; k < given.length; k++) {
    const choices = wanted[k]!.choices
    if (choices !== undefined && !choices.includes(given[k]!)) {
      return { mistake: `${wanted[k]!.name} must be one of ${choices.join(", ")}, got ${quoted(given[k]!)}` }
    }
  }
  return given
}
