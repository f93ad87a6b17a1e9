/**
 * What `spillway init` knows of every coding agent: where it looks for its
 * configuration (after its own environment overrides), how `spillway` is
 * started from there, and the shape of one configuration file's change.
 * Each agent's module describes only its own files, in these terms.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** The agents `spillway init` configures, in the order it reports them. */
export const names = ["claude", "codex", "gemini", "opencode", "pi", "cursor"] as const

/** One agent's name, as typed after `spillway init`. */
export type Name = (typeof names)[number]

/** True for the name of an agent `spillway init` configures. */
export const isName = (text: string): text is Name => (names as ReadonlyArray<string>).includes(text)

/** Where `spillway init` runs: the environment it reads overrides from, the home directory, and how `spillway` is started. */
export interface Environment {
  readonly env: Readonly<Record<string, string | undefined>>
  /** `HOME`, or the account's home directory when it is unset. */
  readonly home: string
  /** The words that start `spillway`: `["spillway"]` when that name on PATH is this command, else node and the bin's absolute path. */
  readonly launcher: ReadonlyArray<string>
  /** The folder of the command's bundles, where the pi and opencode plugin bundles are (`integrations/pi.js`, `integrations/opencode.js`). */
  readonly bundles: string
}

/** The first executable named `name` on the environment's PATH, if any. */
export const onPath = (env: Environment["env"], name: string): string | undefined => {
  for (const dir of (env.PATH ?? "").split(Path.delimiter)) {
    if (dir === "") continue
    const candidate = Path.join(dir, name)
    try {
      Fs.accessSync(candidate, Fs.constants.X_OK)
      if (Fs.statSync(candidate).isFile()) return candidate
    } catch {
      // not there, or not executable
    }
  }
  return undefined
}

const realpath = (file: string): string => {
  try {
    return Fs.realpathSync(file)
  } catch {
    return Path.resolve(file)
  }
}

/**
 * How an agent starts `spillway`: by name when `spillway` on PATH is the
 * running bin (an agent started from a terminal finds it there), else by the
 * absolute paths of node and the bin, so an agent started from a desktop,
 * with a shorter PATH, still finds both.
 */
export const launcherFor = (env: Environment["env"], bin: string, node: string): ReadonlyArray<string> => {
  const found = onPath(env, "spillway")
  return found !== undefined && realpath(found) === realpath(bin) ? ["spillway"] : [node, realpath(bin)]
}

/** A word quoted for a POSIX shell when it needs quoting. */
export const shellWord = (word: string): string =>
  /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/** The command line that runs `spillway` with `args`, for a hook's `command` string. */
export const commandLine = (launcher: ReadonlyArray<string>, args: ReadonlyArray<string>): string =>
  [...launcher, ...args].map(shellWord).join(" ")

/**
 * True for a hook command `spillway init` wrote for `agent`, however
 * `spillway` was started then (by name, or by a path that has since moved).
 */
export const isSpillwayHook = (command: unknown, agent: string): boolean =>
  typeof command === "string" && new RegExp(`(^|[\\s/'"])spillway(\\.cjs)?'?\\s+hook\\s+${agent}\\s*$`).test(command)

/**
 * One configuration file and Spillway's part of it. `add` returns the text
 * with Spillway's entries in place (the same text when they already are),
 * `remove` the text without them; both refuse, with the reason, a text they
 * cannot read or edit safely. `owned` tells `add` that an earlier run wrote
 * this file's entry, so a different one there is Spillway's to replace.
 */
export interface Target {
  readonly agent: Name
  readonly file: string
  /** What Spillway adds to the file, in a few words. */
  readonly what: string
  readonly add: (current: string | undefined, owned: boolean) => Edit
  readonly remove: (current: string) => Edit
  /** True when what is left after `remove` holds nothing (so a file Spillway created can go). */
  readonly empty: (text: string) => boolean
}

/** The outcome of editing a file's text: the new text, or why it was left alone. */
export type Edit = { readonly _tag: "Text"; readonly text: string } | { readonly _tag: "Refused"; readonly reason: string }

/** The new text of a file. */
export const text = (value: string): Edit => ({ _tag: "Text", text: value })

/** A refusal to edit a file, saying why. */
export const refused = (reason: string): Edit => ({ _tag: "Refused", reason })

/** What one agent contributes: how to tell it is installed, its files, and what to do after `init`. */
export interface Agent {
  readonly name: Name
  /** The agent's name as its makers write it. */
  readonly title: string
  /** Folders whose presence means the agent is installed. */
  readonly folders: (environment: Environment) => ReadonlyArray<string>
  /** Programs on PATH whose presence means the agent is installed. */
  readonly binaries: ReadonlyArray<string>
  readonly targets: (environment: Environment) => ReadonlyArray<Target>
  /** What to do once its files are written. */
  readonly next: string
  /** Something worth saying about what `init` does not write for this agent, if anything. */
  readonly note?: string
}

/** An override from the environment, when it is set and not empty. */
export const envDir = (environment: Environment, name: string): string | undefined => {
  const value = environment.env[name]
  return value === undefined || value === "" ? undefined : value
}
