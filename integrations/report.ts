/**
 * What the plugins report when something goes wrong inside them: one line,
 * bounded, whatever was thrown. Bundled into each plugin file.
 *
 * @since 0.1.0
 */

/** The most characters a report line carries. */
export const LINE_MAX = 400

/** `text` on one line, cut to `LINE_MAX` characters. */
export const oneLine = (text: string): string => {
  const line = text.slice(0, LINE_MAX * 2).replace(/\s+/g, " ").trim()
  return line.length > LINE_MAX ? `${line.slice(0, LINE_MAX)}...` : line
}

/** An error's message, or a word for one that cannot be printed. */
export const describe = (error: unknown): string => {
  try {
    return error instanceof Error ? error.message : String(error)
  } catch {
    return "an error that cannot be printed"
  }
}
