import * as Slabs from "../../Slabs.js"
import type * as Retention from "../../Retention.js"
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
  /**
   * Memory for the masker to build its next output in (see
   * `Secrets.StreamOptions.into`): output built there and pushed is kept
   * where it lies, not copied. Undefined for a small window, which copies
   * what it keeps.
   */
  readonly into: ((length: number) => Uint8Array) | undefined
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

/** Room past the kept bytes the arena grows to at most: what the masker builds in it at most (it builds bigger outputs itself). */
const SLACK = 4 * 1024 * 1024
/**
 * Windows from this size on lend the masker their arena. A smaller one
 * copies at most its size of each output, which costs less than building
 * every output in memory that cycles through megabytes.
 */
const LEND_FROM = 256 * 1024
const MIN_ARENA = 64 * 1024
/**
 * The least room past the kept bytes a window's ring goes round. The ring
 * is twice the largest output when bytes are first kept, so that the window
 * and the masker's buffers stay in the processor's cache together: on
 * 256 MiB jobs a 1 MiB window cost 7% to 13% more processor time than none
 * with 256 KiB outputs in a ring of 512 KiB, against 15% to 24% with 1 MiB
 * outputs going round all 4 MiB of the slack.
 */
const MIN_RING = 512 * 1024

/**
 * Arenas of released windows, for the next jobs' windows: for a job a few
 * MiB past its head, first touching a new arena (page faults, and the
 * collections its memory brings on) was most of what the window cost. At
 * most two are kept. They are not cleared (that cost a few ms a job): what
 * they hold is masked output, and an arena's bytes are only ever read after
 * the window using it wrote them.
 */
const spares = Slabs.spares(2)

/** A spare of `min` to `max` bytes (the smallest), else a new array of `min`. */
const takeArena = (min: number, max: number): Uint8Array => spares.take(min, max)

/** Lets go of the spare arenas (tests start from none). @internal */
export const dropSpares = (): void => spares.clear()

const giveBack = (buf: Uint8Array): void => {
  if (buf.length >= LEND_FROM) spares.keep(buf)
}

/**
 * The newest bytes of a stream kept in one arena: the masker builds each
 * output in a free run of it, and what is pushed from there stays where it
 * was built; bytes from elsewhere are copied in. Runs go round the arena as
 * in a ring, so keeping costs no copy at all while the gaps between kept
 * outputs (the context each window starts with) leave room; when they do
 * not, the kept bytes move to the front, one copy of the window per
 * ring's worth of runs at most. The ring is the kept bytes and twice the
 * largest output so far (at least `MIN_RING`), or all of the slack once an
 * output did not fit that; a bigger spare arena is used up to the ring only.
 */
interface Arena {
  readonly into: (length: number) => Uint8Array
  readonly push: (bytes: Uint8Array) => void
  /** Bytes pushed so far. */
  readonly written: () => number
  /** The newest `n` bytes (at most what is kept), as a fresh array. */
  readonly last: (n: number) => Uint8Array
  /** The byte `back` bytes before the end (1: the last byte), or -1 when it is not kept. */
  readonly byteBack: (back: number) => number
  readonly clear: () => void
}

const arena = (keep: number, room: number): Arena => {
  const slack = Math.max(room, keep)
  let buf: Uint8Array | undefined
  let cursor = 0 // where the next run starts
  // the kept bytes: ranges of `buf` in output order (going round the arena's end at most once), `kept` bytes in all
  let from: Array<number> = []
  let to: Array<number> = []
  let kept = 0
  let written = 0
  let lentFrom = -1 // the region `into` handed out last, until an output from it is kept or room is taken again
  let lentTo = -1
  let closed = false
  let largest = 0 // the largest output asked for
  let ring = 0 // the room past the kept bytes the ring has, once bytes are kept

  /** Drops the oldest kept bytes past the newest `limit`. */
  const trim = (limit: number) => {
    while (kept > limit) {
      const n = to[0]! - from[0]!
      if (kept - n >= limit) {
        from.shift()
        to.shift()
        kept -= n
      } else {
        from[0]! += kept - limit
        kept = limit
      }
    }
  }

  /** The newest `n` kept bytes (at most what is kept), as a fresh array. */
  const last = (n: number): Uint8Array => {
    const size = Math.min(Math.max(0, n), kept)
    const out = new Uint8Array(size)
    let at = size
    for (let i = to.length - 1; i >= 0 && at > 0; i--) {
      const m = Math.min(at, to[i]! - from[i]!)
      out.set(buf!.subarray(to[i]! - m, to[i]!), at - m)
      at -= m
    }
    return out
  }

  const take = (n: number): number => {
    const p = cursor
    cursor += n
    return p
  }

  /**
   * Where `n` bytes go in `buf`, clear of the kept ones; -1 when they do
   * not go in the arena. The arena is used as a ring of runs: a run goes
   * after the newest bytes or, when the arena's end is too near, at its
   * start, below the oldest kept byte. Only when neither has room (the
   * gaps a masker's context leaves add up) do the newest `keepOld` bytes
   * move to the front.
   */
  const place = (n: number, keepOld: number): number => {
    lentFrom = lentTo = -1
    if (closed || n > slack) return -1
    if (n > largest) largest = n
    // the ring's room past the kept bytes: twice the largest output so far when bytes are first
    // kept, so the ring stays small enough for the processor's cache; all of the slack after one bigger
    if (kept > 0 && n > ring) ring = ring === 0 ? Math.min(slack, Math.max(MIN_RING, 2 * largest)) : slack
    const full = keep + (kept > 0 ? ring : slack)
    if (buf !== undefined) {
      if (kept === 0) {
        cursor = 0
        if (n <= buf.length) return take(n)
      } else if (buf.length >= full) {
        const oldest = from[0]!
        // past the ring's end (a bigger spare is used up to it only) the newest bytes went on at its start: room up to the oldest
        if (cursor <= oldest) {
          if (cursor + n <= oldest) return take(n)
        } else if (cursor + n <= full) {
          return take(n)
        } else if (n <= oldest) {
          cursor = 0
          return take(n)
        }
      }
    }
    trim(keepOld)
    // once bytes are kept, the arena has its full size; before, it grows as the outputs asked for do
    const size = kept > 0 ? full : Math.min(full, Math.max(MIN_ARENA, n, 2 * (buf?.length ?? 0)))
    const moved = last(kept)
    if (buf === undefined || buf.length < size) buf = takeArena(size, full)
    buf.set(moved, 0)
    from = kept > 0 ? [0] : []
    to = kept > 0 ? [kept] : []
    cursor = kept
    return take(n)
  }

  const record = (p: number, n: number) => {
    const last = to.length - 1
    if (last >= 0 && to[last] === p) to[last] = p + n
    else {
      from.push(p)
      to.push(p + n)
    }
    kept += n
    trim(keep)
  }

  return {
    into: (length) => {
      const p = place(length, keep)
      if (p === -1) return new Uint8Array(length)
      lentFrom = p
      lentTo = p + length
      return buf!.subarray(p, p + length)
    },
    push: (bytes) => {
      written += bytes.length
      if (closed || keep === 0) return
      const p = buf !== undefined && bytes.buffer === buf.buffer ? bytes.byteOffset - buf.byteOffset : -1
      if (p !== -1 && p >= lentFrom && p + bytes.length <= lentTo) {
        // built here: kept where it lies, and what comes after it in the lent region is free again
        record(p, bytes.length)
        cursor = p + bytes.length
        lentFrom = lentTo = -1
        return
      }
      const n = Math.min(bytes.length, keep)
      // bytes of the arena outside the lent region may move as room is made: copied first
      const newest = p === -1 ? bytes.subarray(bytes.length - n) : bytes.slice(bytes.length - n)
      const q = place(n, keep - n)
      if (q === -1) return
      buf!.set(newest, q)
      record(q, n)
    },
    written: () => written,
    last,
    byteBack: (back) => {
      if (back < 1 || back > kept) return -1
      for (let i = to.length - 1; i >= 0; i--) {
        const m = to[i]! - from[i]!
        if (back <= m) return buf![to[i]! - back]!
        back -= m
      }
      return -1
    },
    clear: () => {
      closed = true
      if (buf !== undefined) giveBack(buf)
      buf = undefined
      from = []
      to = []
      kept = 0
      lentFrom = lentTo = -1
    }
  }
}

/** @internal */
export const make = (
  headLimit: number,
  windowBytes: number,
  reservation: Retention.Reservation | undefined,
  /** Bytes the pool has free, the head's room for the bytes pushed already taken. */
  free: () => number,
  /** The most room past the kept bytes the arena lends the masker (at least the window's size; the ring grows to it as outputs do), or undefined to lend none. */
  lend: number | undefined = windowBytes >= LEND_FROM ? SLACK : undefined
): TailWindow => {
  // The newest bytes past the head, one more than the window (so the byte
  // before the window's first is still there), kept where the masker built
  // them when it built them in the arena, else copied in.
  const ring = arena(windowBytes > 0 ? windowBytes + 1 : 0, lend ?? 0)
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
    into: lend !== undefined ? ring.into : undefined,
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
      ring.push(past === 0 ? bytes : bytes.subarray(past))
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
      ring.clear()
    }
  }
}
