// Values a rule masked, looked for again: a secret masked once under its
// key (`TOKEN='...'`) is masked where it is repeated bare after it (`... |
// '...'`, an `echo` of it, a log line that prints it), on the same line or
// later in the text. A stream remembers the values for the rest of the
// stream. What a stream has already emitted cannot be taken back, so only
// copies after the first masked one are masked, in a stream and in a whole
// text alike (the two give the same bytes): a bare copy that comes before
// the value is first masked under its key stays as it was.
//
// Only values long and random enough are remembered, and only the first
// `MAX_REPEATED_VALUES` of a stream (a fixed set, whatever the chunks, so a
// stream and a whole text still give the same bytes): a short or plain
// value found under a key (`password=changeme1`) would mask ordinary words
// wherever they occur.

import { shannonEntropy } from "./lookalike.js"

/** Shortest value remembered, in bytes: shorter ones recur by chance. */
export const MIN_REPEATED_BYTES = 16
/** Longest value remembered, in bytes; longer ones are remembered by their first bytes as far as this. */
export const MAX_REPEATED_BYTES = 256
/** Most values a stream remembers: the first ones it masks; later ones are masked where a rule finds them, not looked for again. */
export const MAX_REPEATED_VALUES = 256

// the search reads the text in blocks of three bytes (hashed to 16 bits), through a window of the values' first bytes
const WINDOW = MIN_REPEATED_BYTES
const LAST = WINDOW - 3

/** The 16-bit hash of the three bytes at `i`: their five low bits and more, mixed. */
const blockAt = (bytes: Uint8Array, i: number): number => ((bytes[i]! << 10) ^ (bytes[i + 1]! << 5) ^ bytes[i + 2]!) & 0xffff

/** Whether `bytes[start, end)`, masked by a rule, is worth looking for again: printable, without blanks, long and random enough. */
export const isRepeatable = (bytes: Uint8Array, start: number, end: number): boolean => {
  const length = end - start
  if (length < MIN_REPEATED_BYTES || length > MAX_REPEATED_BYTES) return false
  let text = ""
  for (let i = start; i < end; i++) {
    const c = bytes[i]!
    if (c <= 0x20 || c >= 0x7f) return false
    text += String.fromCharCode(c)
  }
  return shannonEntropy(text) >= 3 && new Set(text).size >= 8
}

/**
 * A set of values. A scan finds those a stream carries in its one pass over
 * the bytes, as anchors added to the engine's (see `extendAnchorScan`);
 * `find` is for values first masked in a scan, after that pass.
 */
export interface RepeatSet {
  readonly values: ReadonlyArray<Uint8Array>
  /** The values as latin1 strings, to tell a value the set holds. */
  readonly keys: ReadonlySet<string>
  /** Calls `visit` with every occurrence of every value in `bytes`: the value's index in `values`, where it starts and ends. */
  readonly find: (bytes: Uint8Array, visit: (value: number, start: number, end: number) => void) => void
}

/** A value a scan masked by a rule, and where it starts in the scan's bytes. */
export interface Learned {
  readonly value: Uint8Array
  readonly start: number
}

const EMPTY_SET: RepeatSet = { values: [], keys: new Set(), find: () => {} }

/** The empty set. */
export const emptyRepeats = (): RepeatSet => EMPTY_SET

/** A value as a latin1 string, to compare values by. */
export const keyOf = (value: Uint8Array): string => String.fromCharCode.apply(null, value as unknown as Array<number>)

/**
 * The set of `values` (each `MIN_REPEATED_BYTES` long or more); `find` is a
 * multi-value Horspool search over three-byte blocks of their first
 * `MIN_REPEATED_BYTES` bytes (where no value's window can end, it moves 14
 * bytes at a time, whatever the number of values), its table made at its
 * first use.
 */
const makeSet = (values: ReadonlyArray<Uint8Array>, keys: ReadonlySet<string>): RepeatSet => {
  if (values.length === 0) return EMPTY_SET
  let search: RepeatSet["find"] | undefined
  const find: RepeatSet["find"] = (bytes, visit) => (search ??= makeFind(values))(bytes, visit)
  return { values, keys, find }
}

/** The search `makeSet` describes, over `values`. */
const makeFind = (values: ReadonlyArray<Uint8Array>): RepeatSet["find"] => {
  const shift = new Uint8Array(65536).fill(LAST + 1)
  // by the block a window ends with, the values whose window ends with it
  const ending = new Map<number, Array<number>>()
  values.forEach((value, index) => {
    for (let q = 0; q <= LAST; q++) {
      const block = blockAt(value, q)
      shift[block] = Math.min(shift[block]!, LAST - q)
    }
    const last = blockAt(value, LAST)
    const list = ending.get(last)
    if (list === undefined) ending.set(last, [index])
    else list.push(index)
  })
  const find = (bytes: Uint8Array, visit: (value: number, start: number, end: number) => void): void => {
    const n = bytes.length
    let pos = LAST
    while (pos + 2 < n) {
      let step = shift[blockAt(bytes, pos)]!
      // two windows a turn where neither can end a value: most of the text
      if (step > LAST && pos + LAST + 3 < n) {
        pos += step
        step = shift[blockAt(bytes, pos)]!
      }
      if (step > 0) {
        pos += step
        continue
      }
      const block = blockAt(bytes, pos)
      const start = pos - LAST
      for (const index of ending.get(block)!) {
        const value = values[index]!
        const end = start + value.length
        if (end > n) continue
        let i = 0
        while (i < value.length && bytes[start + i] === value[i]) i++
        if (i === value.length) visit(index, start, end)
      }
      pos++
    }
  }
  return find
}

/**
 * The set with `fresh` values added in order (those it does not hold yet),
 * as long as it holds fewer than `MAX_REPEATED_VALUES`; the same set when
 * nothing is added.
 */
export const addRepeats = (set: RepeatSet, fresh: ReadonlyArray<Uint8Array>): RepeatSet => {
  const known = new Set(set.keys)
  const added: Array<Uint8Array> = []
  for (const value of fresh) {
    if (set.values.length + added.length >= MAX_REPEATED_VALUES) break
    const key = keyOf(value)
    if (known.has(key)) continue
    known.add(key)
    added.push(value)
  }
  if (added.length === 0) return set
  return makeSet([...set.values, ...added], known)
}
