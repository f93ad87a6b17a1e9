/**
 * What `spill` and the middleware share: a tool result as text, its
 * delivery through the Promise face (the scratch profile's projection,
 * masking and capture), and a bounded memo, so that a result the AI SDK
 * converts again (every step, every request of a chat) is kept once.
 */
import { type ToolOutput, Terminal } from "@spillway/core"
import type * as Spillway from "@spillway/node/Spillway"

/** How a result is projected for the model: the scratch profile's policy and ceiling. */
export interface Policy extends Partial<ToolOutput.ToolPolicy> {
  /** The ceiling of what the model receives of one result; 65,536 UTF-8 bytes and 2,000 lines by default. */
  readonly ceiling?: Partial<ToolOutput.Ceiling> | undefined
}

/** A tool result as the text a projection cuts: a string as it is, anything else as indented JSON. */
export const textOf = (output: unknown): string => {
  if (typeof output === "string") return output
  try {
    return JSON.stringify(output, null, 2) ?? String(output)
  } catch {
    return String(output)
  }
}

/** What the model is sent in place of a result: a text part, which the ceiling counts. */
export const envelope = (body: string) => ({ type: "text" as const, value: body })

/**
 * Delivers a result under a tool's name with a policy, as the scratch
 * profile does. A projection's body is what a model reads: plain, without
 * terminal escapes or carriage-return redraws (`Terminal.plain`); the copy
 * kept stays exact. A result that fits whole is as the tool gave it.
 */
export const deliver = async (sw: Pick<Spillway.Spillway, "deliver">, tool: string, text: string, policy: Policy = {}): Promise<ToolOutput.Delivered> => {
  const d = await delivered(sw, tool, text, policy)
  return !d.truncated && d.body === text ? d : { ...d, body: Terminal.plain(d.body) }
}

const delivered = (sw: Pick<Spillway.Spillway, "deliver">, tool: string, text: string, policy: Policy) =>
  sw.deliver(tool, text, {
    policy: {
      ...(policy.strategy !== undefined ? { strategy: policy.strategy } : {}),
      ...(policy.capture !== undefined ? { capture: policy.capture } : {})
    },
    ...(policy.ceiling !== undefined ? { ceiling: policy.ceiling } : {}),
    envelope
  })

/** Most results a memo remembers; the oldest is forgotten first. */
export const MEMO_SIZE = 1024

/** A memo of promises by key, holding at most `size`; a rejected promise is forgotten, so the next call tries again. */
export const memo = <A>(size: number = MEMO_SIZE) => {
  const entries = new Map<string, Promise<A>>()
  return (key: string, make: () => Promise<A>): Promise<A> => {
    const known = entries.get(key)
    if (known !== undefined) return known
    const made = make()
    entries.set(key, made)
    made.catch(() => entries.delete(key))
    while (entries.size > size) entries.delete(entries.keys().next().value!)
    return made
  }
}
