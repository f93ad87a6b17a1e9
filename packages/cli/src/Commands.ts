/**
 * Every `spillway` command, with what it does in one line: the list
 * `spillway --help` prints and an unknown command repeats. Some commands are
 * programs of their own that the bin starts (`mcp`, `host`, `hook`, `serve`);
 * `Usage` is the one place that names them all.
 *
 * @since 0.1.0
 */
import { top } from "./Help.js"
import * as Usage from "./Usage.js"

/** A command's name and what it does. */
export interface Entry {
  readonly name: string
  readonly summary: string
}

/** Every command, in the order the help lists them. */
export const all: ReadonlyArray<Entry> = Usage.specs.map((s) => ({ name: s.name, summary: s.summary }))

/** What a command does, by name. */
export const summary = (name: string): string => Usage.spec(name)?.summary ?? ""

/** True for the name of a command. */
export const isCommand = (name: string): boolean => Usage.spec(name) !== undefined

/** The list of commands, one line each, with how to learn a command's arguments. */
export const help = (): string => top()
