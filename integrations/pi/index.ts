/**
 * A pi extension that runs the model's shell commands through Spillway.
 *
 * pi fires `tool_call` before a tool runs and lets an extension change the
 * call's arguments in place. For each call of the `bash` tool, this extension
 * hands the command to the shared rewrite, which turns it into the same
 * command run by `spillway run`: the model then reads Spillway's bounded
 * preview (the end of a long output, the exit status, the failure lines, the
 * saved name to page back) instead of pi's own cut. Commands the rewrite
 * passes through (`cd`, `export`, background jobs, interactive programs, or
 * everything when `SPILLWAY_HOOK=off`) run as written.
 *
 * The extension never breaks a call: any error inside it leaves the command as
 * the model wrote it, never blocks the call (pi blocks a tool whose `tool_call`
 * handler throws), and reports one line.
 *
 * @since 0.1.0
 */
import type { ExtensionAPI, ExtensionContext, ToolCallEvent } from "@mariozechner/pi-coding-agent"
import { rewrite } from "@spillway/cli/Rewrite"
import { describe, oneLine } from "../report.js"


/** Reports one line: as a notice in pi's interface when it has one, else on stderr. */
const report = (ctx: ExtensionContext | undefined, text: string): void => {
  const line = oneLine(text)
  try {
    if (ctx?.hasUI === true) {
      ctx.ui.notify(line, "warning")
      return
    }
  } catch {
    // the interface is gone or failing: fall back to stderr
  }
  try {
    console.error(line)
  } catch {
    // nowhere left to report to; the call still runs unchanged
  }
}

/**
 * Rewrites a `bash` tool call's `command` in place when the shared rewrite
 * routes it through `spillway run`; leaves every other call, and this one on
 * any error, exactly as it was.
 */
const route = (event: ToolCallEvent, ctx?: ExtensionContext): void => {
  try {
    if (event.toolName !== "bash") return
    const input: Record<string, unknown> = event.input
    const command = input.command
    if (typeof command !== "string") return
    const decision = rewrite(command)
    if (decision._tag === "Rewrite") input.command = decision.command
  } catch (error) {
    report(ctx, `spillway: left a bash command unchanged after an error: ${describe(error)}`)
  }
}

/** The extension: pi calls it once with its API when it loads the file. */
export default function spillway(pi: ExtensionAPI): void {
  pi.on("tool_call", (event, ctx) => {
    route(event, ctx)
  })
}
