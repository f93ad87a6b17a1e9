/**
 * Edits of JSON and JSON-with-comments configuration files that change only
 * Spillway's part: every other byte (comments, key order, indentation) stays
 * where it was. Pure functions over the file's text.
 *
 * @since 0.1.0
 */
import * as JsoncParser from "jsonc-parser"
import { type Edit, refused, text } from "./Agent.js"

/** A path into a JSON document: object keys and array indexes. */
export type JsonPath = ReadonlyArray<string | number>

type Json = unknown

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const lineAndColumn = (source: string, offset: number): string => {
  const before = source.slice(0, offset).split("\n")
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}`
}

/** The document's value, or why it is not JSON (with comments and trailing commas allowed) with an object at its top. */
export const parse = (source: string): { readonly value: Record<string, Json> } | { readonly error: string } => {
  if (source.trim() === "") return { value: {} }
  const errors: Array<JsoncParser.ParseError> = []
  const value: Json = JsoncParser.parse(source, errors, { allowTrailingComma: true, disallowComments: false })
  if (errors.length > 0) {
    const first = errors[0]!
    return { error: `${JsoncParser.printParseErrorCode(first.error)} at ${lineAndColumn(source, first.offset)}` }
  }
  if (!isObject(value)) return { error: "its top level is not a JSON object" }
  return { value }
}

/** The value at `path`, if every step of it is there. */
export const at = (value: Json, path: JsonPath): Json => {
  let here = value
  for (const step of path) {
    if (typeof step === "number" ? !Array.isArray(here) : !isObject(here)) return undefined
    here = (here as Record<string | number, Json>)[step]
  }
  return here
}

/** Deep equality of JSON values (key order ignored). */
export const same = (a: Json, b: Json): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]))
  }
  return false
}

/** The file's own line ending and indentation, so an insertion looks like its neighbours. */
const formatting = (source: string): JsoncParser.FormattingOptions => {
  const eol = source.includes("\r\n") ? "\r\n" : "\n"
  const indent = /^([ \t]+)\S/m.exec(source)?.[1]
  if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 1, eol }
  return { insertSpaces: true, tabSize: indent === undefined ? 2 : indent.length, eol }
}

const apply = (source: string, path: JsonPath, value: Json, insert = false): string => {
  const format = formatting(source)
  const edited = JsoncParser.applyEdits(source, JsoncParser.modify(source, [...path], value, { formattingOptions: format, isArrayInsertion: insert }))
  // a new file ends with a line ending, like the files the agents write
  return source.trim() === "" && !edited.endsWith(format.eol!) ? edited + format.eol : edited
}

/** Checks that each step before the last of `path` is an object where there is one. */
const blocked = (value: Json, path: JsonPath): string | undefined => {
  for (let i = 0; i < path.length - 1; i++) {
    const here = at(value, path.slice(0, i + 1))
    const expectArray = typeof path[i + 1] === "number"
    if (here !== undefined && (expectArray ? !Array.isArray(here) : !isObject(here))) {
      return `${path.slice(0, i + 1).join(".")} is not ${expectArray ? "an array" : "an object"}`
    }
  }
  return undefined
}

/** Sets `path` to `value` (unchanged text when it already holds it). */
export const setKey = (source: string, path: JsonPath, value: Json): Edit => {
  const parsed = parse(source)
  if ("error" in parsed) return refused(parsed.error)
  if (same(at(parsed.value, path), value)) return text(source)
  const stop = blocked(parsed.value, path)
  return stop === undefined ? text(apply(source, path, value)) : refused(stop)
}

/** Removes the key at `path`, and the object that held it when nothing else is left there. */
export const removeKey = (source: string, path: JsonPath): Edit => {
  const parsed = parse(source)
  if ("error" in parsed) return refused(parsed.error)
  if (at(parsed.value, path) === undefined) return text(source)
  return text(pruneEmpty(apply(source, path, undefined), path.slice(0, -1)))
}

/** Removes the containers along `path`, innermost first, while each is empty. */
const pruneEmpty = (source: string, path: JsonPath): string => {
  let out = source
  for (let n = path.length; n > 0; n--) {
    const parsed = parse(out)
    if ("error" in parsed) return out
    const here = at(parsed.value, path.slice(0, n))
    const empty = Array.isArray(here) ? here.length === 0 : isObject(here) && Object.keys(here).length === 0
    if (!empty) break
    out = apply(out, path.slice(0, n), undefined)
  }
  return out
}

/** A hook group: a matcher and the commands it runs, as Claude Code, Codex and Gemini CLI share them. */
export interface HookGroup {
  readonly matcher: string
  readonly hooks: ReadonlyArray<Record<string, Json>>
}

/**
 * Puts `group` in the array of hook groups at `path`: in place of the group
 * that already runs Spillway's hook (`ours` tells its command), else at the
 * end. Another tool's hooks are never touched.
 */
export const upsertHook = (source: string, path: JsonPath, group: HookGroup, ours: (command: Json) => boolean): Edit => {
  const parsed = parse(source)
  if ("error" in parsed) return refused(parsed.error)
  const groups = at(parsed.value, path)
  if (groups === undefined) {
    const stop = blocked(parsed.value, [...path, 0])
    return stop === undefined ? text(apply(source, path, [group])) : refused(stop)
  }
  if (!Array.isArray(groups)) return refused(`${path.join(".")} is not an array`)
  for (let i = 0; i < groups.length; i++) {
    const hooks = at(groups[i], ["hooks"])
    if (!Array.isArray(hooks)) continue
    const j = hooks.findIndex((h) => ours(at(h, ["command"])))
    if (j < 0) continue
    if (same(groups[i], group)) return text(source)
    // a group holding other hooks besides Spillway's keeps them: only Spillway's hook is replaced
    return text(hooks.length === 1 ? apply(source, [...path, i], group) : apply(source, [...path, i, "hooks", j], group.hooks[0]))
  }
  return text(apply(source, [...path, groups.length], group, true))
}

/** Removes Spillway's hooks from the hook groups at `path` (a group left with no hooks goes too), then empty containers. */
export const removeHook = (source: string, path: JsonPath, ours: (command: Json) => boolean): Edit => {
  const parsed = parse(source)
  if ("error" in parsed) return refused(parsed.error)
  const groups = at(parsed.value, path)
  if (!Array.isArray(groups)) return text(source)
  let out = source
  let removed = false
  for (let i = groups.length - 1; i >= 0; i--) {
    const hooks = at(groups[i], ["hooks"])
    if (!Array.isArray(hooks)) continue
    const mine = hooks.map((h, j) => (ours(at(h, ["command"])) ? j : -1)).filter((j) => j >= 0)
    if (mine.length === 0) continue
    removed = true
    if (mine.length === hooks.length) out = apply(out, [...path, i], undefined)
    else for (const j of mine.reverse()) out = apply(out, [...path, i, "hooks", j], undefined)
  }
  return text(removed ? pruneEmpty(out, path) : out)
}

/** True when the document holds nothing (an empty object, or no text). */
export const isEmpty = (source: string): boolean => {
  const parsed = parse(source)
  return "value" in parsed && Object.keys(parsed.value).length === 0
}
