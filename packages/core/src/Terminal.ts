/**
 * Terminal output read without a terminal. Test runners, package managers
 * and most command-line tools colour their output and redraw progress bars
 * with carriage returns; a model reads those bytes as noise, and a page
 * shows them as garbage. `plain` removes every escape sequence (SGR colours
 * and styles, cursor movement, OSC titles and hyperlinks, and the like) and
 * shows a line redrawn with carriage returns in its final state, as a
 * terminal would, keeping other control characters as data; `render` draws
 * one line for a page, keeping its SGR styles as runs of classes and
 * dropping every control character. Only what is shown changes: a kept
 * body stays exact.
 * Platform-free, pure.
 *
 * @since 0.1.0
 */

/** `[start, end, classes]`: the classes of the plain text's code units from `start` to `end`. */
export type Run = readonly [number, number, string]

/** A line as a page shows it: the text without escapes, and its styled runs. */
export interface Rendered {
  readonly text: string
  readonly runs: ReadonlyArray<Run>
}

interface Style {
  fg: number | undefined
  bg: number | undefined
  bold: boolean
  dim: boolean
  italic: boolean
  underline: boolean
}

const unstyled = (): Style => ({ fg: undefined, bg: undefined, bold: false, dim: false, italic: false, underline: false })

const classOf = (s: Style): string => {
  const out: Array<string> = []
  if (s.bold) out.push("a-b")
  if (s.dim) out.push("a-d")
  if (s.italic) out.push("a-i")
  if (s.underline) out.push("a-u")
  if (s.fg !== undefined) out.push(`a-f${s.fg}`)
  if (s.bg !== undefined) out.push(`a-g${s.bg}`)
  return out.join(" ")
}

/** A control character other than a tab or a line break. */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/

/** What a terminal acts on rather than shows: an escape, a carriage return, a backspace, the bell. */
const NOISE = /[\x07\x08\x0d\x1b]/

const LEVELS = [0, 95, 135, 175, 215, 255]

const nearestLevel = (v: number) => {
  let best = 0
  for (let k = 1; k < 6; k++) if (Math.abs(LEVELS[k]! - v) < Math.abs(LEVELS[best]! - v)) best = k
  return best
}

/** The palette index nearest to a truecolour: from the 6×6×6 cube or the grey ramp. */
export const nearest256 = (r: number, g: number, b: number): number => {
  const [ri, gi, bi] = [nearestLevel(r), nearestLevel(g), nearestLevel(b)]
  const cube = 16 + 36 * ri + 6 * gi + bi
  const cubeDistance = (LEVELS[ri]! - r) ** 2 + (LEVELS[gi]! - g) ** 2 + (LEVELS[bi]! - b) ** 2
  const grey = Math.max(0, Math.min(23, Math.round(((r + g + b) / 3 - 8) / 10)))
  const level = 8 + grey * 10
  const greyDistance = (level - r) ** 2 + (level - g) ** 2 + (level - b) ** 2
  return greyDistance < cubeDistance ? 232 + grey : cube
}

const byte = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? 0 : Math.max(0, Math.min(255, n)))

/** Applies one SGR sequence's parameters (`1;38;5;208` or `38:2::10:20:30`) to a style. */
const applySgr = (style: Style, params: string): void => {
  const groups = params === "" ? [[0]] : params.split(";").map((p) => p.split(":").map((n) => (n === "" ? 0 : Number(n))))
  for (let k = 0; k < groups.length; k++) {
    const group = groups[k]!
    const code = group[0]!
    if (code === 38 || code === 48) {
      // the extended colour: sub-parameters after colons, or the next parameters after semicolons
      const rest = group.length > 1 ? group.slice(1) : groups.slice(k + 1).map((g) => g[0]!)
      let used = 0
      let colour: number | undefined
      if (rest[0] === 5) {
        colour = byte(rest[1])
        used = 2
      } else if (rest[0] === 2) {
        // with colons a colour-space id may come first: 38:2::r:g:b
        const rgb = group.length > 5 ? rest.slice(2, 5) : rest.slice(1, 4)
        colour = nearest256(byte(rgb[0]), byte(rgb[1]), byte(rgb[2]))
        used = group.length > 5 ? 5 : 4
      }
      if (group.length === 1) k += used
      if (code === 38) style.fg = colour
      else style.bg = colour
      continue
    }
    if (code === 0) Object.assign(style, unstyled())
    else if (code === 1) style.bold = true
    else if (code === 2) style.dim = true
    else if (code === 3) style.italic = true
    else if (code === 4) style.underline = true
    else if (code === 21 || code === 22) style.bold = style.dim = false
    else if (code === 23) style.italic = false
    else if (code === 24) style.underline = false
    else if (code >= 30 && code <= 37) style.fg = code - 30
    else if (code === 39) style.fg = undefined
    else if (code >= 40 && code <= 47) style.bg = code - 40
    else if (code === 49) style.bg = undefined
    else if (code >= 90 && code <= 97) style.fg = code - 90 + 8
    else if (code >= 100 && code <= 107) style.bg = code - 100 + 8
  }
}

/** The index after a string sequence (OSC, DCS, ...) that starts at `from`: after its BEL or ESC `\`, or the end. */
const endOfString = (line: string, from: number): number => {
  for (let k = from; k < line.length; k++) {
    const c = line.charCodeAt(k)
    if (c === 7) return k + 1
    if (c === 27 && line[k + 1] === "\\") return k + 2
  }
  return line.length
}

/** A line of terminal output as a page shows it. */
export const render = (line: string): Rendered => draw(line, false)

/** A line drawn as a terminal would; `keepOthers` keeps the control characters a terminal ignores, as data. */
const draw = (line: string, keepOthers: boolean): Rendered => {
  // fast path: nothing to do for most lines
  if (!(keepOthers ? NOISE : CONTROLS).test(line)) return { text: line, runs: [] }
  const chars: Array<string> = []
  const classes: Array<string> = []
  let col = 0
  const style = unstyled()
  let cls = ""
  const put = (ch: string) => {
    chars[col] = ch
    classes[col] = cls
    col++
  }
  for (let k = 0; k < line.length; k++) {
    const c = line.charCodeAt(k)
    if (c === 27) {
      const next = line[k + 1]
      if (next === "[") {
        let j = k + 2
        while (j < line.length && line.charCodeAt(j) >= 0x20 && line.charCodeAt(j) <= 0x3f) j++
        const final = line[j]
        const params = line.slice(k + 2, j)
        if (final === "m" && /^[\d;:]*$/.test(params)) {
          applySgr(style, params)
          cls = classOf(style)
        } else if (final === "K") {
          // erase in line: to its end, to the cursor, or all of it
          if (params === "" || params === "0") chars.length = Math.min(chars.length, col)
          else if (params === "1") for (let j = 0; j < col && j < chars.length; j++) chars[j] = " "
          else if (params === "2") chars.length = 0
          classes.length = chars.length
        }
        k = Math.min(j, line.length)
      } else if (next === "]" || next === "P" || next === "_" || next === "^" || next === "X") {
        k = endOfString(line, k + 2) - 1
      } else {
        // ESC, any intermediates, one final character
        let j = k + 1
        while (j < line.length && line.charCodeAt(j) >= 0x20 && line.charCodeAt(j) <= 0x2f) j++
        k = Math.min(j, line.length)
      }
    } else if (c === 13) col = 0
    else if (c === 8) col = Math.max(0, col - 1)
    else if (c === 9) put("\t")
    else if (c === 7 || (!keepOthers && (c < 32 || c === 127))) continue
    else if (c >= 0xd800 && c <= 0xdbff && k + 1 < line.length) {
      // a surrogate pair is one cell
      put(line.slice(k, k + 2))
      k++
    } else put(line[k]!)
  }
  let text = ""
  const runs: Array<Run> = []
  for (let k = 0; k < chars.length; k++) {
    const ch = chars[k] ?? " "
    const start = text.length
    text += ch
    const cl = classes[k] ?? ""
    if (cl === "") continue
    const last = runs[runs.length - 1]
    if (last !== undefined && last[1] === start && last[2] === cl) runs[runs.length - 1] = [last[0], text.length, cl]
    else runs.push([start, text.length, cl])
  }
  return { text, runs }
}

/** True when a text holds what a terminal acts on rather than shows: an escape, a carriage return, a backspace, the bell. */
export const hasNoise = (text: string): boolean => NOISE.test(text)

/** A line number in front of a line's text, as search results and failure lines show it: `12: `. */
const LABEL = /^\d{1,15}: /

/** One line as `plain` shows it: a leading line number stays in front of the text it labels. */
const plainLine = (line: string): string => {
  if (!NOISE.test(line)) return line
  const label = LABEL.exec(line)?.[0] ?? ""
  return label + draw(line.slice(label.length), true).text
}

/**
 * A text as a reader without a terminal should see it: every escape
 * sequence removed (SGR colours, cursor movement, OSC titles and
 * hyperlinks, and the like), and each line redrawn with carriage returns or
 * backspaces shown in its final state. Other control characters are data,
 * not drawing, and stay. A line that starts with a line
 * number (`12: `, as search results and failure lines show one) keeps it in
 * front: a carriage return redraws the text it labels. Line breaks are
 * kept, one for one, so line numbers agree with the kept body; the text
 * never grows. A text with nothing to remove is returned as it is, at the
 * cost of one scan.
 */
export const plain = (text: string): string => {
  if (!NOISE.test(text)) return text
  const lines = text.split("\n")
  for (let k = 0; k < lines.length; k++) lines[k] = plainLine(lines[k]!)
  return lines.join("\n")
}

/** The red, green and blue of a colour of the 256-colour palette from 16 on (the cube and the grey ramp). */
export const paletteRgb = (index: number): readonly [number, number, number] => {
  if (index < 232) {
    const v = Math.max(16, index) - 16
    return [LEVELS[Math.floor(v / 36)]!, LEVELS[Math.floor(v / 6) % 6]!, LEVELS[v % 6]!]
  }
  const g = 8 + (Math.min(255, index) - 232) * 10
  return [g, g, g]
}

/** How far back `openSequenceAt` looks for the escape that starts a sequence: an OSC hyperlink's address fits. */
const SEQUENCE_REACH = 4096

/**
 * Where an escape sequence left open at the end of a text starts (a page
 * cut inside `ESC [ 3 2`), so that a cut can be moved back before it and
 * the next page starts with the whole sequence; the text's length when it
 * ends with no sequence open. Looks back at most 4,096 code units.
 */
export const openSequenceAt = (text: string): number => {
  const at = text.lastIndexOf("\x1b")
  if (at === -1 || at < text.length - SEQUENCE_REACH) return text.length
  const next = text[at + 1]
  if (next === undefined) return at
  if (next === "[") {
    let j = at + 2
    while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x3f) j++
    return j < text.length ? text.length : at
  }
  // a string sequence ends with BEL (an ESC \\ ending it is the last escape, complete)
  if (next === "]" || next === "P" || next === "_" || next === "^" || next === "X") return text.indexOf("\x07", at) === -1 ? at : text.length
  let j = at + 1
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++
  return j < text.length ? text.length : at
}
