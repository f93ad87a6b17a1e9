/**
 * Claude Code's own permission rules for the Bash tool, read from its
 * settings files (managed, user, project, local), and how they judge a
 * command: `allowed` only when every part of a plain command matches an
 * allow rule exactly as written, `guarded` when any deny or ask rule may
 * apply (loosely, so a guarded command is left to Claude Code).
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { mentions, readText } from "./Rules.js"

/** The Bash rules in force, or why they could not be read. */
export interface BashRules {
  /** Rule contents: "" stands for the whole tool (`Bash`, `Bash(*)`). */
  readonly allow: ReadonlyArray<string>
  readonly deny: ReadonlyArray<string>
  readonly ask: ReadonlyArray<string>
  /** Settings files that exist but could not be read: their rules are unknown. */
  readonly unreadable: ReadonlyArray<string>
}

/** The settings files Claude Code reads, most general first. */
export const settingsFiles = (home: string, projectDir: string): ReadonlyArray<string> => [
  "/etc/claude-code/managed-settings.json",
  "/Library/Application Support/ClaudeCode/managed-settings.json",
  Path.join(home, ".claude", "settings.json"),
  Path.join(projectDir, ".claude", "settings.json"),
  Path.join(projectDir, ".claude", "settings.local.json")
]

/** The content of a `Bash` or `Bash(...)` rule, or undefined for another tool's rule. */
const bashRule = (rule: unknown): string | undefined => {
  if (typeof rule !== "string") return undefined
  const m = /^\s*Bash\s*(?:\(([\s\S]*)\))?\s*$/.exec(rule)
  if (m === null) return undefined
  const content = (m[1] ?? "").trim()
  return content === "*" ? "" : content
}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.map(bashRule).filter((r): r is string => r !== undefined) : []

/** Reads the Bash rules of every settings file. */
export const readBashRules = (files: ReadonlyArray<string>): BashRules => {
  const allow: Array<string> = []
  const deny: Array<string> = []
  const ask: Array<string> = []
  const unreadable: Array<string> = []
  for (const file of files) {
    const text = readText(file)
    if (text === "missing") continue
    let settings: unknown
    try {
      settings = text === "unreadable" ? undefined : JSON.parse(text)
    } catch {
      settings = undefined
    }
    if (typeof settings !== "object" || settings === null || Array.isArray(settings)) {
      unreadable.push(file)
      continue
    }
    const permissions = (settings as { permissions?: unknown }).permissions
    if (permissions === undefined) continue
    if (typeof permissions !== "object" || permissions === null) {
      unreadable.push(file)
      continue
    }
    const p = permissions as { allow?: unknown; deny?: unknown; ask?: unknown }
    allow.push(...strings(p.allow))
    deny.push(...strings(p.deny))
    ask.push(...strings(p.ask))
  }
  return { allow, deny, ask, unreadable }
}

/** The deny or ask rule that may apply to `command`, or undefined. */
export const guarded = (command: string, rules: BashRules): string | undefined =>
  [...rules.deny, ...rules.ask].find((rule) => mentions(command, rule))

/** The parts of a plain command split at `&&`, `||`, `;`, `|` and `&` outside quotes; undefined when it is not plain. */
const plainParts = (command: string): ReadonlyArray<string> | undefined => {
  if (/[`\n\r]|\$\(|<\(|>\(/.test(command)) return undefined
  const parts: Array<string> = []
  let current = ""
  let quote: string | undefined
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      else if (c === "\\" && quote === "\"") current += command[i++]
      current += c
    } else if (c === "'" || c === "\"") {
      quote = c
      current += c
    } else if (c === "\\") {
      current += c + (command[++i] ?? "")
    } else if (c === ";" || c === "|" || c === "&") {
      // `2>&1` and `&>` are redirections, not separators
      if (c === "&" && (command[i - 1] === ">" || command[i + 1] === ">")) {
        current += c
        continue
      }
      parts.push(current.trim())
      current = ""
      if (command[i + 1] === c) i++
    } else current += c
  }
  if (quote !== undefined) return undefined
  parts.push(current.trim())
  return parts.filter((p) => p.length > 0)
}

/** True when `part` matches the allow rule as Claude Code words it: exact, `prefix:*`, or `*` for any text. */
const matchesAllow = (part: string, rule: string): boolean => {
  if (rule === "") return true
  if (rule.endsWith(":*")) {
    const prefix = rule.slice(0, -2)
    return part === prefix || part.startsWith(`${prefix} `)
  }
  if (rule.includes("*")) {
    const source = rule.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")
    return new RegExp(`^${source}$`, "s").test(part)
  }
  return part === rule
}

/** True when every part of `command` is allowed by a rule (a command with substitutions or several lines never is). */
export const allowed = (command: string, rules: BashRules): boolean => {
  if (rules.allow.includes("")) return true
  const parts = plainParts(command)
  return parts !== undefined && parts.length > 0 && parts.every((part) => rules.allow.some((rule) => matchesAllow(part, rule)))
}
