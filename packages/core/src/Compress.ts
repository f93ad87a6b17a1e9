/**
 * Emergency context compression: when the results already in a model's
 * context no longer fit the context budget, they are shrunk in a fixed order
 * of sacrifice without losing the way back to the kept evidence. Previews go
 * first, oldest results first; then instructions are shortened to the bare
 * pointer, oldest first. Texts are only ever dropped whole, never cut, and
 * nothing is added back. Pure functions.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import * as Utf8 from "./Utf8.js"

/** A result in context: a preview (droppable) and the retrieval instruction that leads back to the kept evidence. */
export interface Held {
  readonly id: string
  /** The head/tail text, or any other preview; may be dropped whole. */
  readonly preview: string
  /** How to read the evidence back, e.g. "call get_tool_output with cursor=..."; shortened to the pointer only if needed. */
  readonly instructions: string
  /** The minimal pointer to the first unread byte, e.g. "get_tool_output cursor=spw1...."; always kept verbatim. */
  readonly pointer: string
}

/** How much of a held result a rendering keeps. */
export type Keep = "all" | "instructions" | "pointer"

/** A held result as it stays in context, and what was given up of it. */
export interface Compressed {
  readonly id: string
  readonly text: string
  readonly dropped: "nothing" | "preview" | "preview-and-instructions"
}

/** Even the bare pointers of the held results do not fit the context budget. */
export class ContextOverflow extends Schema.TaggedError<ContextOverflow>()("ContextOverflow", {
  needed: Schema.Number,
  limit: Schema.Number
}) {
  override get message() {
    return `even the bare retrieval pointers of the results in context need ${this.needed} characters, over the context budget of ${this.limit}; nothing more can be shortened without losing the way back to the evidence. Raise the budget, or let go of the oldest results on purpose (their evidence is then out of reach)`
  }
}

/** The default rendering: the preview over the instructions, the instructions alone, or the pointer alone. */
export const render = (h: Held, keep: Keep): string => {
  switch (keep) {
    case "all":
      return h.preview === "" ? h.instructions : h.instructions === "" ? h.preview : `${h.preview}\n${h.instructions}`
    case "instructions":
      return h.instructions
    case "pointer":
      return h.pointer
  }
}

const dropped = { all: "nothing", instructions: "preview", pointer: "preview-and-instructions" } as const

/** A rendering that carries its pointer: the pointer goes on its own line after a text that lacks it. */
const withPointer = (text: string, pointer: string): string =>
  pointer === "" || text.includes(pointer) ? text : text === "" ? pointer : `${text}\n${pointer}`

/**
 * Shrinks held results (oldest first) until their texts, joined by "\n",
 * fit `limit` code points: previews are dropped first, oldest results first
 * and only as many as needed, then instructions are shortened to the bare
 * pointer, oldest first. A step that would not make a result smaller is
 * skipped. Every text keeps its pointer verbatim (it is appended on its own
 * line to a rendering that lacks it); nothing is ever cut inside. Fails with
 * `ContextOverflow` when even the smallest renderings do not fit.
 */
export const compress = (
  held: ReadonlyArray<Held>,
  limit: number,
  renderWith: (h: Held, keep: Keep) => string = render
): Either.Either<ReadonlyArray<Compressed>, ContextOverflow> => {
  const texts = new Map<Keep, Array<string>>()
  const textOf = (i: number, keep: Keep): string => {
    let row = texts.get(keep)
    if (row === undefined) texts.set(keep, row = [])
    return row[i] ??= withPointer(renderWith(held[i]!, keep), held[i]!.pointer)
  }
  const keeps: Array<Keep> = held.map(() => "all")
  const sizes = held.map((_, i) => Utf8.codePointLength(textOf(i, "all")))
  let total = sizes.reduce((a, b) => a + b, Math.max(0, held.length - 1))
  for (const keep of ["instructions", "pointer"] as const) {
    for (let i = 0; i < held.length && total > limit; i++) {
      const size = Utf8.codePointLength(textOf(i, keep))
      if (size >= sizes[i]!) continue
      total -= sizes[i]! - size
      sizes[i] = size
      keeps[i] = keep
    }
  }
  if (total > limit) return Either.left(new ContextOverflow({ needed: total, limit }))
  return Either.right(held.map((h, i) => ({ id: h.id, text: textOf(i, keeps[i]!), dropped: dropped[keeps[i]!] })))
}
