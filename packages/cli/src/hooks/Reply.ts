/**
 * What an agent's hook module is given and gives back: the environment and
 * the permission choice in, the JSON to print (or none) and a note out.
 *
 * @since 0.1.0
 */
import type { Permission } from "./Rules.js"

/** What a hook decides with. */
export interface Context {
  readonly env: Readonly<Record<string, string | undefined>>
  /** The home folder the agent's user settings live in. */
  readonly home: string
  readonly permission: Permission
  /** How the rewritten line invokes spillway. */
  readonly spillway: string
}

/** A hook's answer: JSON for the host (none leaves the call as it is), why it was left, and a note for stderr on bad input. */
export interface Reply {
  readonly output?: Record<string, unknown>
  /** Why the command was left as it is (for `SPILLWAY_HOOK_DEBUG`). */
  readonly passed?: string
  /** A problem with the input, printed on stderr. */
  readonly note?: string
}
