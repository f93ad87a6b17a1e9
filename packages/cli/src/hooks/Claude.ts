/**
 * `spillway hook claude`: Claude Code's `PreToolUse` hook for the `Bash`
 * tool. The answer is `hookSpecificOutput` with `updatedInput` (the whole
 * `tool_input`, only `command` changed) and a `permissionDecision`. Claude
 * Code checks its deny and ask rules against the rewritten line, which no
 * longer names the command, so the hook checks them against the original:
 * a command any deny or ask rule may cover is left untouched. Otherwise it
 * answers "allow" only where Claude Code would have allowed the original
 * (an allow rule for every part of it, or `bypassPermissions` mode); other
 * commands are left untouched (`keep`, the default), shown rewritten at
 * Claude Code's prompt (`ask`), or allowed (`allow`), as
 * `SPILLWAY_HOOK_PERMISSION` says.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import { rewrite } from "../Rewrite.js"
import * as Settings from "./ClaudeSettings.js"
import type { Context, Reply } from "./Reply.js"

/** Decides the reply to one `PreToolUse` call. */
export const reply = (input: Record<string, unknown>, context: Context): Reply => {
  if (input.hook_event_name !== undefined && input.hook_event_name !== "PreToolUse") return { note: `not a PreToolUse call (${String(input.hook_event_name)})` }
  if (input.tool_name !== "Bash") return { note: `${JSON.stringify(input.tool_name)} is not the Bash tool` }
  const toolInput = input.tool_input
  if (typeof toolInput !== "object" || toolInput === null || Array.isArray(toolInput)) return { note: "tool_input is not an object" }
  const fields = toolInput as Record<string, unknown>
  const command = fields.command
  if (typeof command !== "string") return { note: "tool_input.command is not a string" }
  if (fields.run_in_background === true) return { passed: "it runs in the background" }
  const decision = rewrite(command, { env: context.env, spillway: context.spillway })
  if (decision._tag === "PassThrough") return { passed: decision.reason }
  const projectDir = context.env.CLAUDE_PROJECT_DIR || (typeof input.cwd === "string" ? input.cwd : process.cwd())
  const rules = Settings.readBashRules(Settings.settingsFiles(context.home, Path.resolve(projectDir)))
  if (rules.unreadable.length > 0) return { passed: `cannot read the permissions in ${rules.unreadable.join(", ")}` }
  const guard = Settings.guarded(command, rules)
  if (guard !== undefined) return { passed: `a deny or ask rule may apply: Bash(${guard})` }
  const hostAllows = input.permission_mode === "bypassPermissions" || Settings.allowed(command, rules)
  const permissionDecision = hostAllows ? "allow" : context.permission === "keep" ? undefined : context.permission
  if (permissionDecision === undefined) return { passed: "Claude Code would ask before running it (SPILLWAY_HOOK_PERMISSION=keep)" }
  return {
    output: {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision,
        permissionDecisionReason: "spillway run keeps the output and shows a bounded preview",
        updatedInput: { ...fields, command: decision.command }
      }
    }
  }
}
