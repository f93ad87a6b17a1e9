// A line of a hex dump, as `hexdump -C`, `xxd` (any grouping, either case)
// and `od -tx1` (with or without offsets) print one: an optional offset
// column, the bytes as hex digits in groups, and an optional ASCII column
// (after `|`, or after two spaces). A known value is found in dumps by
// four of its bytes in a row as these tools space them; the line is then
// read to find the whole run of its bytes and their ASCII characters.

/** The bytes of a dump line's hex area: each value, where its two digits start, and where the ASCII column starts (-1 for none). */
export interface DumpLine {
  readonly values: ReadonlyArray<number>
  readonly at: ReadonlyArray<number>
  readonly ascii: number
}

/** Most bytes a dump line holds (`xxd -c 256` is the widest); past this a line is not read as one. */
const MAX_BYTES = 256
/** An offset column: hex or octal digits, then a colon or a space. */
const OFFSET = /^[0-9A-Fa-f]{4,16}(?::|(?= ))/

const isHex = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
const hexValue = (c: number): number => (c <= 57 ? c - 48 : (c | 0x20) - 87)

/** Reads `line` (latin1, without its line break) as a dump line; undefined when its hex area holds no byte. */
export const parseDumpLine = (line: string): DumpLine | undefined => {
  const values: Array<number> = []
  const at: Array<number> = []
  let end = line.length
  if (end > 0 && line.charCodeAt(end - 1) === 13) end--
  let i = OFFSET.exec(line)?.[0].length ?? 0
  let pairDigits = 0 // digits of the groups read: 2 for `hexdump -C` and `od`, 4 for `xxd`
  let ascii = -1
  while (i < end && values.length < MAX_BYTES) {
    let sp = i
    while (sp < end && line.charCodeAt(sp) === 32) sp++
    const gap = sp - i
    if (values.length > 0) {
      // `hexdump -C` leaves two spaces after the eighth byte; elsewhere two or more end the hex area
      const middle = gap === 2 && pairDigits === 2 && values.length === 8
      if (gap === 0 || (gap >= 2 && !middle)) {
        if (sp < end && gap >= 2) ascii = line.charCodeAt(sp) === 124 ? sp + 1 : sp
        break
      }
    }
    let j = sp
    while (j < end && isHex(line.charCodeAt(j))) j++
    const digits = j - sp
    if (digits === 0 || digits % 2 !== 0 || digits > 16 || (j < end && line.charCodeAt(j) !== 32)) {
      if (values.length > 0 && line.charCodeAt(sp) === 124) ascii = sp + 1
      break
    }
    pairDigits = Math.max(pairDigits, digits)
    for (let k = sp; k < j; k += 2) {
      values.push(hexValue(line.charCodeAt(k)) * 16 + hexValue(line.charCodeAt(k + 1)))
      at.push(k)
    }
    i = j
  }
  return values.length === 0 ? undefined : { values, at, ascii }
}

const hex = (byte: number): string => byte.toString(16).padStart(2, "0")

/**
 * How four bytes in a row appear in dumps, compared ignoring case: spaced
 * (`hexdump -C`, `od`), and in `xxd`'s groups of two, starting a group or
 * inside one. Four bytes across `hexdump -C`'s wider middle gap are not
 * among them: a run of a value's bytes that a line shows has four on one
 * side of the gap, unless it is shorter than eight and inside the line.
 */
export const dumpForms = (four: ArrayLike<number>): Array<string> => {
  const [a, b, c, d] = [four[0]!, four[1]!, four[2]!, four[3]!].map(hex)
  return [`${a} ${b} ${c} ${d}`, `${a}${b} ${c}${d}`, `${a} ${b}${c} ${d}`]
}

/**
 * The run of `value`'s bytes in a dump line that has its byte `offset` at
 * entry `entry` of the line's hex area (as `parseDumpLine` read it), as
 * its first and past-the-last entries: when it starts the value or the
 * line's hex area, and ends the value or the hex area (a value goes on
 * from the end of one line to the start of the next). Undefined otherwise:
 * a few of its bytes in the middle of other bytes are not its.
 */
export const runAt = (line: DumpLine, entry: number, value: Uint8Array, offset: number): readonly [number, number] | undefined => {
  const { values } = line
  let b = entry
  let jb = offset
  while (b < values.length && jb < value.length && values[b] === value[jb]) {
    b++
    jb++
  }
  let a = entry
  let ja = offset
  while (a > 0 && ja > 0 && values[a - 1] === value[ja - 1]) {
    a--
    ja--
  }
  return (ja === 0 || a === 0) && (jb === value.length || b === values.length) && b > a ? [a, b] : undefined
}
