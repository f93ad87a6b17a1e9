import type { Checkpoint } from "../../Manifests.js"
import { isAscii } from "../kernel/kernel.js"

/**
 * Counts the code points of a byte stream as a lossy UTF-8 decoder sees them
 * (each malformed sequence one U+FFFD, by the WHATWG decoder's rules), chunk
 * by chunk, and records a checkpoint every `every` code points at the byte
 * where that code point starts, so that decoding from a checkpoint gives
 * exactly the code points decoding from the start gives there.
 *
 * @internal
 */
export interface CodePointCounter {
  /** Takes the next bytes; `ascii` says they are all below 0x80 when the caller knows. */
  readonly push: (chunk: Uint8Array, ascii?: boolean) => void
  /** Ends the stream (a sequence left open counts as one U+FFFD) and returns the count and checkpoints. */
  readonly end: () => { readonly codePoints: number; readonly checkpoints: ReadonlyArray<Checkpoint> }
  /** Code points counted so far (an open sequence not included). */
  readonly count: () => number
}

/** @internal */
export const counter = (every: number): CodePointCounter => {
  let count = 0
  let offset = 0 // bytes pushed before the current chunk
  let needed = 0
  let seen = 0
  let lower = 0x80
  let upper = 0xbf
  let unitStart = 0 // byte offset where the open sequence began
  const checkpoints: Array<Checkpoint> = [{ codePoint: 0, byte: 0 }]
  // a unit (code point or U+FFFD) starting at `at` is counted
  const unit = (at: number) => {
    if (count > 0 && count % every === 0) checkpoints.push({ codePoint: count, byte: at })
    count++
  }
  const reset = () => {
    needed = 0
    seen = 0
    lower = 0x80
    upper = 0xbf
  }
  const push = (chunk: Uint8Array, ascii?: boolean) => {
    if (needed === 0 && (ascii ?? isAscii(chunk))) {
      // every byte is a code point: the checkpoints fall at computable offsets
      const end = count + chunk.length
      let next = Math.ceil(Math.max(count, 1) / every) * every
      for (; next < end; next += every) checkpoints.push({ codePoint: next, byte: offset + (next - count) })
      count = end
      offset += chunk.length
      return
    }
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!
      const at = offset + i
      if (needed === 0) {
        if (b <= 0x7f) unit(at)
        else if (b >= 0xc2 && b <= 0xdf) {
          needed = 1
          unitStart = at
        } else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) lower = 0xa0
          if (b === 0xed) upper = 0x9f
          needed = 2
          unitStart = at
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) lower = 0x90
          if (b === 0xf4) upper = 0x8f
          needed = 3
          unitStart = at
        } else unit(at)
        continue
      }
      if (b < lower || b > upper) {
        // the open sequence is one U+FFFD; this byte starts afresh
        unit(unitStart)
        reset()
        i--
        continue
      }
      lower = 0x80
      upper = 0xbf
      seen++
      if (seen === needed) {
        unit(unitStart)
        reset()
      }
    }
    offset += chunk.length
  }
  return {
    push,
    count: () => count,
    end: () => {
      if (needed !== 0) {
        unit(unitStart)
        reset()
      }
      return { codePoints: count, checkpoints: [...checkpoints] }
    }
  }
}
