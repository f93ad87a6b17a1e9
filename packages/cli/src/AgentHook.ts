/**
 * `spillway hook <agent>`: reads one hook call of a coding agent (Claude
 * Code, Codex, Gemini CLI) as JSON, and answers in that agent's own JSON
 * with the shell command routed through `spillway run` (see `Rewrite`), or
 * with the neutral answer that leaves the call as it is. Bad input is
 * never a broken call: the answer is neutral, the exit status 0, and one
 * line on stderr says what was wrong.
 *
 * @since 0.1.0
 */
import * as Os from "node:os"
import * as Claude from "./hooks/Claude.js"
import * as Codex from "./hooks/Codex.js"
import * as Gemini from "./hooks/Gemini.js"
import type { Context, Reply } from "./hooks/Reply.js"
import { permissionFrom } from "./hooks/Rules.js"

/** The agents `spillway hook` speaks to. */
export const agents = ["claude", "codex", "gemini"] as const

/** An agent `spillway hook` speaks to. */
export type Agent = (typeof agents)[number]

/** Most bytes of hook input read; a larger call is left as it is. */
export const MAX_INPUT_BYTES = 1024 * 1024

/** What to print, and the exit status (always 0: a hook's failure must not block the agent's call). */
export interface Answer {
  readonly stdout: string
  readonly stderr: string
}

const repliers: Record<Agent, (input: Record<string, unknown>, context: Context) => Reply> = {
  claude: Claude.reply,
  codex: Codex.reply,
  gemini: Gemini.reply
}

/** The neutral answer: nothing for Claude Code and Codex, `{}` for Gemini CLI (which reads stderr when stdout is empty). */
const neutral = (agent: Agent): string => agent === "gemini" ? "{}\n" : ""

/** True for the name of an agent. */
export const isAgent = (name: string): name is Agent => (agents as ReadonlyArray<string>).includes(name)

/** The answer to one hook call given as `text` (already bounded by the caller). */
export const answer = (agent: Agent, text: string, env: Readonly<Record<string, string | undefined>> = process.env): Answer => {
  const { note: permissionNote, permission } = permissionFrom(env)
  const notes: Array<string> = permissionNote === undefined ? [] : [permissionNote]
  const done = (stdout: string, note?: string): Answer => {
    if (note !== undefined) notes.push(note)
    return { stdout, stderr: notes.map((n) => `spillway hook ${agent}: ${n}; the call is left as it is\n`).join("") }
  }
  let input: unknown
  try {
    input = JSON.parse(text)
  } catch {
    return done(neutral(agent), "the input is not JSON")
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) return done(neutral(agent), "the input is not a JSON object")
  const context: Context = { env, home: env.HOME || Os.homedir(), permission, spillway: "spillway" }
  let reply: Reply
  try {
    reply = repliers[agent](input as Record<string, unknown>, context)
  } catch (e) {
    return done(neutral(agent), `the call could not be decided (${e instanceof Error ? e.message : String(e)})`)
  }
  if (reply.passed !== undefined && env.SPILLWAY_HOOK_DEBUG === "1") {
    process.stderr.write(`spillway hook ${agent}: left as it is: ${reply.passed}\n`)
  }
  const stdout = reply.output === undefined ? neutral(agent) : `${JSON.stringify(reply.output)}\n`
  return done(stdout, reply.note)
}
