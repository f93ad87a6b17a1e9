/**
 * Terminal output as a page shows it: the core's `Terminal.render` turns a
 * line's SGR colours and styles into runs of classes over its plain text
 * (every other escape removed, carriage-return redraws shown in their final
 * state); this module adds the style sheet for those classes. Classes
 * rather than inline styles, so the pages keep a style policy that forbids
 * inline styles; truecolour is shown in the nearest colour of the
 * 256-colour palette. Only the page's view changes: the kept body stays as
 * it was.
 *
 * @internal
 */
import { Terminal } from "@spillway/core"

/** `[start, end, classes]`: the classes of the plain text's code units from `start` to `end`. */
export type Run = Terminal.Run

/** A line as a page shows it: the text without escapes, and its styled runs. */
export type Rendered = Terminal.Rendered

/** A line of terminal output as a page shows it. */
export const render = Terminal.render

/** Text without escapes, carriage-return frames or any other control character, for places that show no colours. */
export const strip = (text: string): string =>
  /[\x00-\x08\x0b-\x1f\x7f]/.test(text) ? text.split("\n").map((l) => render(l).text).join("\n") : text

/** The style sheet's classes for the styles and the 256 colours, light and dark. */
export const css = (() => {
  const base16 = ["#000000", "#cd3131", "#0dbc79", "#c49a00", "#2472c8", "#bc3fbc", "#11a8cd", "#a0a0a0", "#666666", "#f14c4c", "#16c60c", "#b5a000", "#3b8eea", "#d670d6", "#29b8db", "#e5e5e5"]
  const hex = (n: number) => n.toString(16).padStart(2, "0")
  const colour = (i: number) => {
    if (i < 16) return base16[i]!
    const [r, g, b] = Terminal.paletteRgb(i)
    return `#${hex(r)}${hex(g)}${hex(b)}`
  }
  const rules: Array<string> = [".a-b{font-weight:700}.a-d{opacity:.7}.a-i{font-style:italic}.a-u{text-decoration:underline}"]
  for (let i = 0; i < 256; i++) rules.push(`.a-f${i}{color:${colour(i)}}.a-g${i}{background:${colour(i)}}`)
  return rules.join("\n")
})()
