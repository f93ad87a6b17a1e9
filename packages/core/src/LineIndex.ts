/**
 * A sparse line index kept beside a saved body: the byte offset of every
 * `every`-th line start, so a page deep in a large file is found by reading
 * at most `every` lines instead of scanning from the start.
 *
 * @since 0.1.0
 */
import * as Kernel from "./internal/kernel/kernel.js"

/** Default spacing of checkpoints, in lines. */
export const DEFAULT_EVERY = 1024

/** A body's line count and checkpoints. */
export interface LineIndex {
  /** Byte length of the body the index describes; a mismatch means the index is stale. */
  readonly bytes: number
  /** Lines of the body (a final line break does not start another line). */
  readonly lines: number
  /** Spacing of checkpoints, in lines. */
  readonly every: number
  /** `checkpoints[k]` is the byte offset where line `k * every + 1` starts. */
  readonly checkpoints: ReadonlyArray<number>
}

/** Builds an index from a body's bytes as they are written, chunk by chunk. */
export interface Builder {
  /** Takes the next bytes; returns how many line breaks they hold. */
  readonly push: (chunk: Uint8Array) => number
  /** Line breaks pushed so far. */
  readonly newlines: () => number
  /** Bytes of the first line (without its break): the offset of the first break, or all bytes so far. */
  readonly firstLineBytes: () => number
  /** True while every byte pushed is below 0x80 (told in the same pass that counts the breaks). */
  readonly ascii: () => boolean
  readonly result: () => LineIndex
}

/**
 * A builder for bytes pushed in order. The byte kernel counts each chunk's
 * breaks and finds the checkpoints in the same pass.
 */
export const builder = (every: number = DEFAULT_EVERY): Builder => {
  let bytes = 0
  let newlines = 0
  let lastByte = -1
  let firstBreak = -1
  const checkpoints: Array<number> = [0]
  const seen = { ascii: true }
  return {
    push: (chunk) => {
      if (firstBreak === -1) {
        const at = chunk.indexOf(10)
        if (at !== -1) firstBreak = bytes + at
      }
      // the break that starts the next checkpoint's line, counted from this chunk's first
      const toNext = every - (newlines % every)
      const offset = bytes
      const count = Kernel.lineStarts(chunk, toNext, every, (start) => checkpoints.push(offset + start), seen)
      newlines += count
      if (chunk.length > 0) lastByte = chunk[chunk.length - 1]!
      bytes += chunk.length
      return count
    },
    newlines: () => newlines,
    firstLineBytes: () => (firstBreak === -1 ? bytes : firstBreak),
    ascii: () => seen.ascii,
    result: () => {
      const lines = bytes === 0 ? 0 : newlines + (lastByte === 10 ? 0 : 1)
      // a checkpoint at the very end starts no line
      const cps = checkpoints.filter((offset, k) => k === 0 || offset < bytes)
      return { bytes, lines, every, checkpoints: cps }
    }
  }
}

/** Builds the index of a whole body. */
export const fromBytes = (body: Uint8Array, every: number = DEFAULT_EVERY): LineIndex => {
  const b = builder(every)
  b.push(body)
  return b.result()
}

const MAGIC = "SPWIDX01"

/** Serializes an index to bytes (a magic tag, then little-endian float64 values). */
export const encode = (index: LineIndex): Uint8Array => {
  const values = new Float64Array(3 + index.checkpoints.length)
  values[0] = index.bytes
  values[1] = index.lines
  values[2] = index.every
  values.set(index.checkpoints, 3)
  const out = new Uint8Array(8 + values.byteLength)
  for (let i = 0; i < 8; i++) out[i] = MAGIC.charCodeAt(i)
  out.set(new Uint8Array(values.buffer), 8)
  return out
}

/** Reads an index written by `encode`; undefined when the bytes are not one. */
export const decode = (bytes: Uint8Array): LineIndex | undefined => {
  if (bytes.length < 8 + 24 || (bytes.length - 8) % 8 !== 0) return undefined
  for (let i = 0; i < 8; i++) if (bytes[i] !== MAGIC.charCodeAt(i)) return undefined
  const copy = new Uint8Array(bytes.subarray(8))
  const values = new Float64Array(copy.buffer)
  const [size, lines, every] = [values[0]!, values[1]!, values[2]!]
  if (!Number.isSafeInteger(size) || !Number.isSafeInteger(lines) || !Number.isSafeInteger(every) || every < 1) {
    return undefined
  }
  return { bytes: size, lines, every, checkpoints: Array.from(values.subarray(3)) }
}
