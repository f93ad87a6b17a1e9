/**
 * `spillway hook gemini`: Gemini CLI's `BeforeTool` hook for
 * `run_shell_command`. The answer's `hookSpecificOutput.tool_input` is merged
 * over the model's arguments, and Gemini CLI then checks its policy against
 * the rewritten line, which no longer names the command: a command that a
 * `deny` or `ask_user` policy rule or a `tools.exclude` entry may cover is
 * left untouched. `SPILLWAY_HOOK_PERMISSION=ask` adds `decision: "ask"`, so
 * every rewritten command is confirmed; "allow" grants nothing here.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { rewrite } from "../Rewrite.js"
import type { Context, Reply } from "./Reply.js"
import { filesIn, mentions, readText } from "./Rules.js"

/** JSON with `//` and `/* *\/` comments removed (Gemini CLI's settings allow them). */
const stripComments = (text: string): string => text.replace(/"(?:\\.|[^"\\])*"|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m) => m.startsWith("\"") ? m : "")

/** Why `command` may be covered by a deny or ask rule in the policy files' text, or undefined. */
export const policyGuard = (command: string, text: string): string | undefined => {
  for (const block of text.split(/^\s*\[\[\s*rule\s*\]\]\s*$/m).slice(1)) {
    const decision = /^\s*decision\s*=\s*["']([a-z_]+)["']/m.exec(block)?.[1]
    if (decision !== "deny" && decision !== "ask_user") continue
    const tool = /^\s*toolName\s*=\s*(.+)$/m.exec(block)?.[1]
    if (tool !== undefined && !/run_shell_command|\*/.test(tool)) continue
    const prefixes = /^\s*commandPrefix\s*=\s*(.+)$/m.exec(block)?.[1]
    const regex = /^\s*(?:commandRegex|argsPattern)\s*=\s*(.+)$/m.exec(block)?.[1]
    if (prefixes === undefined && regex === undefined) return `a ${decision} rule covers the shell tool`
    for (const m of (prefixes ?? "").matchAll(/"((?:\\.|[^"\\])*)"|'([^']*)'/g)) {
      const prefix = m[1] ?? m[2] ?? ""
      if (mentions(command, prefix)) return `a ${decision} rule may apply (${prefix})`
    }
    if (regex !== undefined) {
      const source = /^\s*(?:"((?:\\.|[^"\\])*)"|'([^']*)')/.exec(regex)
      try {
        const pattern = new RegExp(source?.[2] ?? JSON.parse(`"${source?.[1] ?? ""}"`) as string)
        if (source === null || pattern.test(command) || pattern.test(JSON.stringify({ command }))) return `a ${decision} rule may apply (${regex.trim()})`
      } catch {
        return `a ${decision} rule's pattern cannot be read`
      }
    }
  }
  return undefined
}

/** Why `command` may be covered by a `tools.exclude` entry of a settings file's text, or undefined. */
export const excludeGuard = (command: string, text: string): string | undefined => {
  let settings: unknown
  try {
    settings = JSON.parse(stripComments(text))
  } catch {
    return "a settings file cannot be read"
  }
  const exclude = (settings as { tools?: { exclude?: unknown } } | null)?.tools?.exclude
  if (!Array.isArray(exclude)) return undefined
  for (const entry of exclude) {
    if (typeof entry !== "string") continue
    const m = /^\s*(run_shell_command|ShellTool)\s*(?:\(([\s\S]*)\))?\s*$/.exec(entry)
    if (m !== null && (m[2] === undefined || mentions(command, m[2]))) return `tools.exclude has ${entry}`
  }
  return undefined
}

const guard = (command: string, home: string, cwd: string): string | undefined => {
  const settings = ["/etc/gemini-cli/settings.json", Path.join(home, ".gemini", "settings.json"), Path.join(cwd, ".gemini", "settings.json")]
  for (const file of settings) {
    const text = readText(file)
    if (text === "missing") continue
    const why = text === "unreadable" ? "it cannot be read" : excludeGuard(command, text)
    if (why !== undefined) return `${file}: ${why}`
  }
  const policies = ["/etc/gemini-cli/policies", Path.join(home, ".gemini", "policies"), Path.join(cwd, ".gemini", "policies")]
  for (const file of policies.flatMap((dir) => filesIn(dir, ".toml"))) {
    const text = readText(file)
    if (text === "missing") continue
    const why = text === "unreadable" ? "it cannot be read" : policyGuard(command, text)
    if (why !== undefined) return `${file}: ${why}`
  }
  return undefined
}

/** Decides the reply to one `BeforeTool` call; a neutral reply is `{}`, so Gemini CLI never reads stderr as the answer. */
export const reply = (input: Record<string, unknown>, context: Context): Reply => {
  if (input.hook_event_name !== undefined && input.hook_event_name !== "BeforeTool") return { output: {}, note: `not a BeforeTool call (${String(input.hook_event_name)})` }
  if (input.tool_name !== "run_shell_command") return { output: {}, note: `${JSON.stringify(input.tool_name)} is not run_shell_command` }
  const toolInput = input.tool_input
  if (typeof toolInput !== "object" || toolInput === null || Array.isArray(toolInput)) return { output: {}, note: "tool_input is not an object" }
  const fields = toolInput as Record<string, unknown>
  if (typeof fields.command !== "string") return { output: {}, note: "tool_input.command is not a string" }
  if (fields.is_background === true) return { output: {}, passed: "it runs in the background" }
  const decision = rewrite(fields.command, { env: context.env, spillway: context.spillway })
  if (decision._tag === "PassThrough") return { output: {}, passed: decision.reason }
  const cwd = context.env.GEMINI_PROJECT_DIR || (typeof input.cwd === "string" ? input.cwd : process.cwd())
  const ruled = guard(fields.command, context.home, cwd)
  if (ruled !== undefined) return { output: {}, passed: ruled }
  return {
    output: {
      ...(context.permission === "ask" ? { decision: "ask" } : {}),
      hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: decision.command } }
    }
  }
}
