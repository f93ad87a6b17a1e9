import type * as Retention from "../../Retention.js"
import * as Ring from "../ring.js"
import { newlines as countNewlines } from "../kernel/kernel.js"

/**
 * The rolling window of a job's newest output past its head: every masked
 * byte the spool's masker lets out past the head's limit goes through it, so
 * the window's secret context is the stream's own, and it is served as a
 * tail. It keeps at most `windowBytes` (the room the retention quota gives
 * it), from a line start, and counts the output's lines as it goes.
 *
 * @internal
 */
export interface TailWindow {
  /** Masked output, in order, with the offset of its first byte and the line breaks it holds. */
  readonly push: (bytes: Uint8Array, at: number, newlines: number) => void
  /** The window from its first whole line, where it starts in the output (byte and 1-based line); undefined while it is empty. */
  readonly view: () => Window | undefined
  /** Lines of the output so far (a last line without a break counts). */
  readonly lines: () => number
  /** Line breaks before the head's limit: as many as the head's lines when it ends at a break. */
  readonly headNewlines: () => number
  /** Gives back the quota room the window held. */
  readonly release: () => void
}

/** A window as views read it. */
export interface Window {
  readonly bytes: Uint8Array
  /** Output offset of `bytes[0]`, a line start. */
  readonly fromByte: number
  /** Line number of the line `fromByte` is in. */
  readonly fromLine: number
  /** Whether `fromByte` starts its line (else the window starts where the head's limit cut it). */
  readonly lineStart: boolean
}

const newlinesIn = (bytes: Uint8Array, from = 0, to = bytes.length): number =>
  countNewlines(from === 0 && to === bytes.length ? bytes : bytes.subarray(from, to))

/** @internal */
export const make = (
  headLimit: number,
  windowBytes: number,
  reservation: Retention.Reservation | undefined,
  /** Bytes the pool has free, the head's room for the bytes pushed already taken. */
  free: () => number
): TailWindow => {
  // The newest bytes past the head, in a ring one byte longer than the
  // window (so the byte before the window's first is still there): masked
  // output is lent for the call only, so the window keeps copies, in memory
  // it allocates once.
  let ring = Ring.make(windowBytes + 1)
  let size = 0 // of the bytes pushed into the ring, the newest ones kept
  let end = 0 // output offset after the last byte pushed
  let newlines = 0 // in the whole output
  let lastByte = -1
  let headNewlines = -1 // newlines before the head's limit, once it is passed
  let beforeLimit = -1 // the byte just before the head's limit
  let room = 0 // bytes of quota the window may use
  const grow = () => {
    if (reservation === undefined || room >= windowBytes) return
    room += reservation.grow(Math.min(windowBytes - room, Math.max(0, free())))
  }
  /** The byte the window let go of last (-1 when it let go of none). */
  const beforeStart = (): number => (ring.written() === size ? -1 : ring.byteBack(size + 1))
  return {
    push: (bytes, at, breaks) => {
      if (bytes.length === 0) return
      const past = Math.max(0, headLimit - at)
      if (headNewlines === -1 && at + bytes.length > headLimit) headNewlines = newlines + newlinesIn(bytes, 0, past)
      if (past > 0 && past <= bytes.length) beforeLimit = bytes[past - 1]!
      newlines += breaks
      lastByte = bytes[bytes.length - 1]!
      end = at + bytes.length
      if (past >= bytes.length || windowBytes === 0) return
      // the body's writer took the room for the head's part of these bytes before showing them: what is free is the window's to take
      grow()
      ring.push(bytes.subarray(past))
      size = Math.min(room, ring.written())
    },
    view: () => {
      if (size === 0) return undefined
      const bytes = ring.last(size)
      const start = end - bytes.length
      // from the first whole line, unless the window reaches back to the head's end,
      // where it starts at the first whole code point the head's limit left out
      let from = 0
      let lineStart: boolean
      if (start > headLimit && beforeStart() === 10) {
        lineStart = true
      } else if (start > headLimit) {
        const nl = bytes.indexOf(10)
        if (nl === -1 || nl + 1 >= bytes.length) return undefined
        from = nl + 1
        lineStart = true
      } else {
        while (from < 3 && from < bytes.length && (bytes[from]! & 0xc0) === 0x80) from++
        if (from === bytes.length) return undefined
        lineStart = from === 0 && beforeLimit === 10
      }
      const shown = bytes.subarray(from)
      return { bytes: shown, fromByte: start + from, fromLine: newlines - newlinesIn(shown) + 1, lineStart }
    },
    lines: () => (end === 0 ? 0 : newlines + (lastByte === 10 ? 0 : 1)),
    headNewlines: () => (headNewlines === -1 ? newlines : headNewlines),
    release: () => {
      reservation?.settle(0)
      room = 0
      size = 0
      ring = Ring.make(0)
    }
  }
}
