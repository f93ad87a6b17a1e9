/**
 * Buffers used over and over for bytes in transit (a pipe's reads, masked
 * output on its way to the disk): a region is lent out as a view into a
 * slab, and a slab is used again once every region of it was given back and
 * it is full. A flood of output then allocates nothing per chunk, so the
 * garbage collector has nothing to free and memory stays flat.
 *
 * @since 0.1.0
 */

/** A buffer regions are lent from. */
export interface Slab {
  readonly bytes: Uint8Array
  /** Bytes lent from it since it was last (re)used. */
  filled: number
  /** Regions lent and not yet given back. */
  lent: number
}

/** Bytes lent from a slab (`slab` set), or in a buffer of their own. */
export interface Region {
  readonly slab: Slab | undefined
  readonly bytes: Uint8Array
}

/** A pool of slabs for one writer or one reader at a time. */
export interface Pool {
  /** The current slab's free part, at least `min` bytes: a full slab makes way for another. For reads of unknown length; `claim` then lends what was used. */
  readonly free: (min: number) => Uint8Array
  /** Lends the next `n` bytes of the current slab (what `free` gave, filled by then). */
  readonly claim: (n: number) => Region
  /** Lends `n` bytes to copy into: from a slab, or a buffer of its own when `n` is more than a slab holds. */
  readonly take: (n: number) => Region
  /**
   * Lends `view`, filled in place, when it lies in the current slab's free
   * part (as `free` gave it): the slab counts as filled up to its end, and
   * what lies before it in the free part is skipped. Undefined when it lies
   * elsewhere (the caller then copies it).
   */
  readonly lend: (view: Uint8Array) => Region | undefined
  /**
   * Done with the pool: every slab no region is lent from any more goes to
   * `recycle`, and the pool forgets it (a later use starts afresh). A slab
   * still lent is let go, never recycled.
   */
  readonly release: () => void
}

/** How a pool sizes its slabs. */
export interface PoolOptions {
  /** The first slab's size: most streams are short. Later slabs are `large`. */
  readonly first: number
  readonly large: number
  /** Free slabs kept for later; more are let go. 2 by default. */
  readonly spares?: number
  /** How a slab is made (`new Uint8Array` by default). */
  readonly allocate?: (size: number) => Uint8Array
  /** Where `release` hands the slabs nothing borrows any more (by default they are let go). */
  readonly recycle?: (bytes: Uint8Array) => void
}

/**
 * Buffers kept from one user to the next, process-wide: a buffer first
 * touched costs page faults and the collections its memory brings on,
 * which for short-lived writers and windows was most of what their memory
 * cost. What is kept is not cleared; a user reads only bytes it wrote.
 */
export interface Spares {
  /** A kept buffer of `min` to `max` bytes (the smallest such), or a new one of `min` bytes. */
  readonly take: (min: number, max?: number) => Uint8Array
  /** Keeps a buffer for a later `take`, unless as many as the limit are kept already. */
  readonly keep: (bytes: Uint8Array) => void
  /** Lets go of every kept buffer. */
  readonly clear: () => void
}

/** Spare buffers, at most `max` of them kept. */
export const spares = (max: number): Spares => {
  const kept: Array<Uint8Array> = []
  return {
    take: (min, most = min) => {
      let best = -1
      for (let i = 0; i < kept.length; i++) {
        const n = kept[i]!.length
        if (n >= min && n <= most && (best === -1 || n < kept[best]!.length)) best = i
      }
      return best === -1 ? new Uint8Array(min) : kept.splice(best, 1)[0]!
    },
    keep: (bytes) => {
      if (kept.length < max) kept.push(bytes)
    },
    clear: () => {
      kept.length = 0
    }
  }
}

/** A pool of slabs. */
export const pool = (options: PoolOptions): Pool => {
  const allocate = options.allocate ?? ((size: number) => new Uint8Array(size))
  const keep = options.spares ?? 2
  const retired: Array<Slab> = []
  // made at the first use: a pool that lends nothing allocates nothing
  let current: Slab | undefined

  /** The current slab is full (or there is none yet): the next is a large one nothing borrows any more, or a new one. */
  const rotate = (min: number): Slab => {
    if (current === undefined && min <= options.first) return (current = { bytes: allocate(options.first), filled: 0, lent: 0 })
    if (current !== undefined) retired.push(current)
    const free = retired.findIndex((s) => s.lent === 0 && s.bytes.length === options.large)
    const next = free === -1 ? { bytes: allocate(options.large), filled: 0, lent: 0 } : retired.splice(free, 1)[0]!
    next.filled = 0
    let spare = 0
    for (let i = retired.length - 1; i >= 0; i--) {
      const s = retired[i]!
      if (s.lent > 0) continue
      if (s.bytes.length !== options.large || ++spare > keep) retired.splice(i, 1)
    }
    return (current = next)
  }

  const free = (min: number): Uint8Array => {
    const slab = current !== undefined && current.bytes.length - current.filled >= min ? current : rotate(min)
    return slab.bytes.subarray(slab.filled)
  }

  const claim = (n: number): Region => {
    const slab = current ?? rotate(n)
    const at = slab.filled
    slab.filled += n
    slab.lent++
    return { slab, bytes: slab.bytes.subarray(at, at + n) }
  }

  const take = (n: number): Region => {
    if (n > options.large) return { slab: undefined, bytes: new Uint8Array(n) }
    free(n)
    return claim(n)
  }

  const lend = (view: Uint8Array): Region | undefined => {
    const slab = current
    if (slab === undefined || view.buffer !== slab.bytes.buffer) return undefined
    const from = view.byteOffset - slab.bytes.byteOffset
    const to = from + view.length
    if (from < slab.filled || to > slab.bytes.length) return undefined
    slab.filled = to
    slab.lent++
    return { slab, bytes: view }
  }

  const release = (): void => {
    if (current !== undefined) retired.push(current)
    current = undefined
    const slabs = retired.splice(0)
    if (options.recycle !== undefined) for (const s of slabs) if (s.lent === 0) options.recycle(s.bytes)
  }

  return { free, claim, take, lend, release }
}

/** Gives a region back to its slab. */
export const giveBack = (region: Region): void => {
  if (region.slab !== undefined) region.slab.lent--
}

/** The rest of `region` past its first `at` bytes, lent on its own: both parts are given back. */
export const split = (region: Region, at: number): Region => {
  if (region.slab !== undefined) region.slab.lent++
  return { slab: region.slab, bytes: region.bytes.subarray(at) }
}

/**
 * The regions as few views as they make: regions that follow each other in
 * one slab are one view of it (no copy); regions of their own next to each
 * other are joined into one copy.
 */
export const views = (regions: ReadonlyArray<Region>): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  let own: Array<Uint8Array> = []
  const join = () => {
    if (own.length === 1) out.push(own[0]!)
    else if (own.length > 1) {
      const joined = new Uint8Array(own.reduce((n, b) => n + b.length, 0))
      let at = 0
      for (const b of own) {
        joined.set(b, at)
        at += b.length
      }
      out.push(joined)
    }
    own = []
  }
  let last: Region | undefined
  for (const region of regions) {
    if (region.slab === undefined) {
      own.push(region.bytes)
      last = undefined
      continue
    }
    join()
    const previous = out[out.length - 1]
    if (last !== undefined && previous !== undefined && adjoins(last, region)) {
      out[out.length - 1] = new Uint8Array(previous.buffer, previous.byteOffset, previous.length + region.bytes.length)
    } else {
      out.push(region.bytes)
    }
    last = region
  }
  join()
  return out
}

/** Whether `b` follows `a` in the same slab, so the two are one view. */
export const adjoins = (a: Region, b: Region): boolean =>
  a.slab !== undefined && a.slab === b.slab && a.bytes.byteOffset + a.bytes.length === b.bytes.byteOffset
