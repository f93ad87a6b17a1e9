/**
 * Edits of a TOML configuration file that add, replace or remove one table
 * of Spillway's as text, leaving every other line as it was, and check the
 * result by parsing it back. Pure functions over the file's text.
 *
 * @since 0.1.0
 */
import * as SmolToml from "smol-toml"
import { type Edit, refused, text } from "./Agent.js"
import { same } from "./Jsonc.js"

/** A table's dotted name (`["mcp_servers", "spillway"]`) and its keys, in the order they are written. */
export interface Table {
  readonly name: ReadonlyArray<string>
  readonly keys: ReadonlyArray<readonly [string, string | number | ReadonlyArray<string>]>
}

const bare = (key: string) => (/^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key))

// JSON's string escapes are all TOML basic-string escapes
const value = (v: string | number | ReadonlyArray<string>): string =>
  typeof v === "string" ? JSON.stringify(v) : typeof v === "number" ? String(v) : `[${v.map((s) => JSON.stringify(s)).join(", ")}]`

/** The table as TOML text, one key a line. */
export const render = (table: Table, eol = "\n"): string =>
  [`[${table.name.map(bare).join(".")}]`, ...table.keys.map(([k, v]) => `${bare(k)} = ${value(v)}`)].join(eol) + eol

/** The document's value, or the parser's message for why it is not TOML. */
export const parse = (source: string): { readonly value: Record<string, unknown> } | { readonly error: string } => {
  try {
    return { value: SmolToml.parse(source) as Record<string, unknown> }
  } catch (e) {
    return { error: String((e as Error).message ?? e).split("\n")[0]! }
  }
}

const lookup = (doc: unknown, name: ReadonlyArray<string>): unknown =>
  name.reduce<unknown>((here, key) => (typeof here === "object" && here !== null ? (here as Record<string, unknown>)[key] : undefined), doc)

const header = /^\s*\[\s*([^\][]+?)\s*\]\s*(#.*)?$/

const headerName = (line: string): ReadonlyArray<string> | undefined => {
  const m = header.exec(line)
  if (m === null) return undefined
  return m[1]!.split(".").map((part) => part.trim().replace(/^"(.*)"$/, "$1"))
}

const within = (name: ReadonlyArray<string>, table: ReadonlyArray<string>) =>
  name.length >= table.length && table.every((part, i) => name[i] === part)

/** The line range [start, end) of the table and its sub-tables, or undefined when no `[table]` header names it. */
const span = (lines: ReadonlyArray<string>, table: ReadonlyArray<string>): readonly [number, number] | undefined => {
  const start = lines.findIndex((line) => {
    const name = headerName(line)
    return name !== undefined && name.length === table.length && within(name, table)
  })
  if (start < 0) return undefined
  let end = start + 1
  for (; end < lines.length; end++) {
    const line = lines[end]!
    if (/^\s*\[/.test(line)) {
      const name = headerName(line.replace(/^\s*\[\[/, "[").replace(/\]\]/, "]"))
      if (name === undefined || !within(name, table)) break
    }
  }
  // blank lines before the next table belong to the file, not the table
  while (end > start + 1 && lines[end - 1]!.trim() === "") end--
  return [start, end]
}

const expected = (table: Table) => Object.fromEntries(table.keys.map(([k, v]) => [k, v]))

const holds = (doc: Record<string, unknown>, table: Table) => {
  const found = lookup(doc, table.name)
  if (typeof found !== "object" || found === null) return false
  return table.keys.every(([k, v]) => same((found as Record<string, unknown>)[k], v))
}

/**
 * Puts `table` in the document: unchanged when it already holds those keys,
 * the table's own lines replaced when `owned` (an earlier run wrote it), else
 * appended at the end. A table of that name written some other way (inline,
 * dotted keys, or by someone else) is refused rather than guessed at.
 */
export const upsertTable = (source: string, table: Table, owned: boolean): Edit => {
  const parsed = parse(source)
  if ("error" in parsed) return refused(parsed.error)
  if (holds(parsed.value, table)) return text(source)
  const eol = source.includes("\r\n") ? "\r\n" : "\n"
  const lines = source.split(/\r?\n/)
  const where = span(lines, table.name)
  let out: string
  if (lookup(parsed.value, table.name) !== undefined) {
    if (where === undefined || !owned) {
      return refused(`it already has a [${table.name.join(".")}] entry of its own; remove it, or edit it by hand (see docs/agents.md)`)
    }
    out = [...lines.slice(0, where[0]), render(table, eol).slice(0, -eol.length), ...lines.slice(where[1])].join(eol)
  } else {
    const body = source.length === 0 || /\n$/.test(source) ? source : source + eol
    out = body + (body.trim() === "" ? "" : eol) + render(table, eol)
  }
  const check = parse(out)
  if ("error" in check) return refused(`adding [${table.name.join(".")}] would not parse (${check.error}); add it by hand`)
  if (!same(lookup(check.value, table.name), { ...(lookup(check.value, table.name) as object), ...expected(table) })) {
    return refused(`adding [${table.name.join(".")}] did not read back as written; add it by hand`)
  }
  return text(out)
}

/** Removes the table (and its sub-tables) with the blank line that set it apart; unchanged when it is not there. */
export const removeTable = (source: string, name: ReadonlyArray<string>): Edit => {
  const parsed = parse(source)
  if ("error" in parsed) return refused(parsed.error)
  if (lookup(parsed.value, name) === undefined) return text(source)
  const eol = source.includes("\r\n") ? "\r\n" : "\n"
  const lines = source.split(/\r?\n/)
  const where = span(lines, name)
  if (where === undefined) return refused(`its [${name.join(".")}] entry is not a table of its own; remove it by hand`)
  let [start, end] = where
  // the blank line that set the table apart goes with it
  if (start > 0 && lines[start - 1]!.trim() === "") start--
  else if (end < lines.length - 1 && lines[end]!.trim() === "") end++
  const out = [...lines.slice(0, start), ...lines.slice(end)].join(eol)
  const check = parse(out)
  if ("error" in check || lookup(check.value, name) !== undefined) return refused(`removing [${name.join(".")}] did not read back cleanly; remove it by hand`)
  return text(out)
}

/** True when the document holds no keys. */
export const isEmpty = (source: string): boolean => {
  const parsed = parse(source)
  return "value" in parsed && Object.keys(parsed.value).length === 0
}
