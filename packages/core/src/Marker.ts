/**
 * The bracketed markers that tell a model which lines it is looking at:
 * `[Showing lines 101-2100 of 2100. Full output: NAME]` and
 * `[Showing lines 1-2000 of 2100]`, and the gap inside a line too long to
 * show whole: `[…98304 bytes omitted…]` between its start and its end.
 *
 * @since 0.1.0
 */

/** What a marker states. */
export interface MarkerInput {
  /** The 1-indexed inclusive line ranges shown; two for a middle cut, none when nothing was shown. */
  readonly ranges: ReadonlyArray<{ readonly from: number; readonly to: number }>
  /** Total lines of the source, or undefined when the source's length is unknown (the total is then left out). */
  readonly totalLines?: number | undefined
  /** Name of a saved copy of the whole output; give it only when the copy was really saved. */
  readonly fullOutput?: string | undefined
  /** A single line shown in part. */
  readonly cutLine?: { readonly line: number; readonly shownBytes: number; readonly totalBytes: number } | undefined
}

/** Formats a marker. */
export const format = (input: MarkerInput): string => {
  const total = input.totalLines !== undefined ? ` of ${input.totalLines}` : ""
  const shown = input.ranges.length === 0
    ? `Showing 0 lines${total}`
    : `Showing lines ${input.ranges.map((r) => `${r.from}-${r.to}`).join(", ")}${total}`
  const cut = input.cutLine
    ? `, line ${input.cutLine.line} cut to ${input.cutLine.shownBytes} of ${input.cutLine.totalBytes} bytes`
    : ""
  const full = input.fullOutput !== undefined ? `. Full output: ${input.fullOutput}` : ""
  return `[${shown}${cut}${full}]`
}

/**
 * The gap inside a line shown by its start and its end: how many UTF-8
 * bytes of the line are left out between the two.
 */
export const omitted = (bytes: number): string => `[…${bytes} bytes omitted…]`
