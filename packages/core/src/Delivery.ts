/**
 * What one tool call delivers, and the one way it is counted against a
 * budget. A result is the text a model reads (a preview or a page, the
 * marker that says what it shows, and the exact call that continues) and the
 * facts a program reads (counts, offsets, cursors, statuses), never a second
 * copy of the text. A tool protocol carries the two as one text block and the
 * structured content; the budget counts that whole serialization, so every
 * view fits what a client receives, not a part of it. Pure functions.
 *
 * @since 0.1.0
 */
import { Context, Either } from "effect"
import * as Envelope from "./Envelope.js"
import * as Split from "./internal/split.js"
import * as Utf8 from "./Utf8.js"

/** The delivery budget of one whole result, in characters (code points): 12,000, the source design's. */
export const DEFAULT_BUDGET_CHARS = 12_000

/** The budget results are fitted to; `DEFAULT_BUDGET_CHARS` unless a host provides another. */
export class Budget extends Context.Reference<Budget>()("@spillway/core/Delivery/Budget", {
  defaultValue: (): Envelope.Budget => ({ limit: DEFAULT_BUDGET_CHARS })
}) {}

/** One result: the text a model reads and the facts for programs. */
export interface Delivered<F extends object = Record<string, unknown>> {
  readonly text: string
  readonly facts: F
}

/** A result as a tool protocol carries it: one text block and the structured content. */
export const wire = (delivered: Delivered<object>) => ({
  content: [{ type: "text" as const, text: delivered.text }],
  structuredContent: delivered.facts
})

/** The serialization a budget counts: `wire` as JSON. */
export const serialize = (delivered: Delivered<object>): string => JSON.stringify(wire(delivered))

/** The size of a result as delivered, in a budget's measure. */
export const sizeOf = (delivered: Delivered<object>, measure?: Envelope.Measure): number =>
  Envelope.sizeOf(serialize(delivered), measure)

/**
 * The largest `n` in `[min, max]` whose view `build(n)`, delivered by
 * `deliver`, fits the budget whole: `Envelope.fitCount` counting the
 * delivered form.
 */
export const fitCount = <A>(
  min: number,
  max: number,
  build: (n: number) => A,
  budget: Envelope.Budget,
  deliver: (value: A) => Delivered<object>
): Either.Either<Envelope.Fitted<A>, Envelope.EnvelopeTooSmall> =>
  Envelope.fitCount(min, max, build, budget, (value) => serialize(deliver(value)))

/** `fitCount` for a `build` that makes results themselves. */
export const fitResult = <D extends Delivered<object>>(
  min: number,
  max: number,
  build: (n: number) => D,
  budget: Envelope.Budget
): Either.Either<Envelope.Fitted<D>, Envelope.EnvelopeTooSmall> => fitCount(min, max, build, budget, (d) => d)

/** An argument of a call as a model types it: `key=value`. */
export type Argument = readonly [key: string, value: string | number]

/** The exact call a model makes to continue, such as `get_tool_output cursor=spw1.…`. */
export const call = (tool: string, args: ReadonlyArray<Argument>): string =>
  [tool, ...args.map(([key, value]) => `${key}=${value}`)].join(" ")

/** The longest pattern a continuing call repeats; a longer one is named as the same pattern. */
const PATTERN_CHARS = 200

/** A search pattern as a continuing call repeats it: quoted, or `<the same pattern>` when it is long. */
export const patternArgument = (pattern: string): string => {
  const quoted = JSON.stringify(pattern)
  return Utf8.codePointLength(quoted) <= PATTERN_CHARS ? quoted : "<the same pattern>"
}

/** Content and, on a line of its own after it, the marker that says what it shows; the content alone when there is none. */
export const withMarker = (content: string, marker: string | undefined): string =>
  marker === undefined ? content : `${content}${content === "" || content.endsWith("\n") ? "" : "\n"}${marker}`

/** How many code points of a result's text are the content, before its marker. */
export const contentChars = (content: string): number => Utf8.codePointLength(content)

/** Whether a page that is cut ends inside a line: it has content and its last character is not a line break. */
export const endsMidLine = (content: string): boolean => content !== "" && !content.endsWith("\n")

/** The note that takes the place of what `squeeze` leaves out. */
export const squeezed = (left: number, budget: number): string =>
  `\n[… ${left} characters left out here to fit the ${budget}-character result …]\n`

/**
 * The result for `text` when it fits; otherwise for its start and its end,
 * with a note between them saying how many characters were left out, as
 * long as fits. For texts that are themselves a view of kept output (a
 * preview, a listing), whose whole stays readable another way that the
 * result names.
 */
export const squeeze = <F extends object>(
  text: string,
  deliver: (text: string) => Delivered<F>,
  budget: Envelope.Budget
): Either.Either<Delivered<F>, Envelope.EnvelopeTooSmall> => {
  const whole = deliver(text)
  if (sizeOf(whole, budget.measure) <= budget.limit) return Either.right(whole)
  const points = Utf8.codePointLength(text)
  const cut = (kept: number) =>
    deliver(
      Split.text(text, { keep: kept, headShare: 0.7, codePoints: points, marker: (left) => squeezed(left, budget.limit) }).text
    )
  return Either.map(Envelope.fitCount(0, points - 1, cut, budget, serialize), (f) => f.value)
}
