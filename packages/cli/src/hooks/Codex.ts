/**
 * `spillway hook codex`: Codex's `PreToolUse` hook for its shell tools
 * (named `Bash` in the hook's input; older releases named them `shell`,
 * `shell_command`, `exec_command`, `local_shell`). Codex applies
 * `updatedInput` only together with `permissionDecision: "allow"`, and that
 * "allow" grants nothing more: Codex's approval policy and sandbox still
 * judge the rewritten line. Its `prefix_rule`s do not see through the
 * rewrite, so a command that a `prompt` or `forbidden` rule may cover is
 * left untouched.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { rewrite } from "../Rewrite.js"
import type { Context, Reply } from "./Reply.js"
import { filesIn, mentions, readText } from "./Rules.js"

/** The tool names Codex gives its shell tools in a hook's input. */
const SHELL_TOOLS = new Set(["Bash", "shell", "shell_command", "exec_command", "local_shell", "container.exec", "unified_exec"])

/** The first pattern tokens of every `prefix_rule` that prompts or forbids; "*" when a rule could not be read. */
export const guardedPrefixes = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const block of text.split(/prefix_rule\s*\(/).slice(1)) {
    const decision = /decision\s*=\s*["']([a-z_]+)["']/.exec(block)?.[1] ?? "allow"
    if (decision === "allow") continue
    const pattern = /pattern\s*=\s*\[\s*(\[[^\]]*\]|"[^"]*"|'[^']*')/.exec(block)?.[1]
    const tokens = pattern === undefined ? [] : [...pattern.matchAll(/"([^"]*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2] ?? "")
    found.push(...(tokens.length > 0 ? tokens : ["*"]))
  }
  return found
}

/** The rule that may cover `command` in Codex's rules files, or undefined. */
const guard = (command: string, dirs: ReadonlyArray<string>): string | undefined => {
  for (const file of dirs.flatMap((dir) => filesIn(dir, ".rules"))) {
    const text = readText(file)
    if (text === "missing") continue
    if (text === "unreadable") return `the rules in ${file} cannot be read`
    const prefix = guardedPrefixes(text).find((p) => p === "*" || mentions(command, p))
    if (prefix !== undefined) return `a prompt or forbidden rule in ${file} may apply (${prefix})`
  }
  return undefined
}

/** Decides the reply to one `PreToolUse` call. */
export const reply = (input: Record<string, unknown>, context: Context): Reply => {
  if (input.hook_event_name !== undefined && input.hook_event_name !== "PreToolUse") return { note: `not a PreToolUse call (${String(input.hook_event_name)})` }
  if (typeof input.tool_name !== "string" || !SHELL_TOOLS.has(input.tool_name)) return { note: `${JSON.stringify(input.tool_name)} is not a shell tool` }
  const toolInput = input.tool_input
  if (typeof toolInput !== "object" || toolInput === null || Array.isArray(toolInput)) return { note: "tool_input is not an object" }
  const fields = toolInput as Record<string, unknown>
  const given = fields.command
  // an argv is rewritten only in the form [shell, -c or -lc, line]
  const argv = Array.isArray(given) && given.length === 3 && given.every((a) => typeof a === "string") &&
      /^(\/\S*\/)?(ba|z)?sh$/.test(given[0] as string) && /^-l?c$/.test(given[1] as string)
    ? (given as Array<string>)
    : undefined
  const command = typeof given === "string" ? given : argv?.[2]
  if (command === undefined) return Array.isArray(given) ? { passed: "the command is an argv, not a shell line" } : { note: "tool_input.command is not a string" }
  const decision = rewrite(command, { env: context.env, spillway: context.spillway })
  if (decision._tag === "PassThrough") return { passed: decision.reason }
  const codexHome = context.env.CODEX_HOME || Path.join(context.home, ".codex")
  const cwd = typeof input.cwd === "string" ? input.cwd : process.cwd()
  const ruled = guard(command, [Path.join(codexHome, "rules"), Path.join(cwd, ".codex", "rules")])
  if (ruled !== undefined) return { passed: ruled }
  const updated = argv === undefined ? decision.command : [argv[0], argv[1], decision.command]
  return {
    output: {
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { ...fields, command: updated } }
    }
  }
}
