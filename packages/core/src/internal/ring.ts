/**
 * The newest bytes of a stream, copied into memory allocated once: for
 * whoever keeps the end of output it is only lent (a preview's tail, the
 * lines before a failure), so that a flood of output allocates nothing per
 * chunk.
 *
 * @internal
 */
export interface Ring {
  /** Copies the bytes in; only the newest `capacity` of all pushed stay. */
  readonly push: (bytes: Uint8Array) => void
  /** Bytes pushed so far. */
  readonly written: () => number
  /** The newest `n` bytes (at most what is kept), as a fresh array. */
  readonly last: (n: number) => Uint8Array
  /** The byte `back` bytes before the end (1: the last byte), or -1 when it is not kept. */
  readonly byteBack: (back: number) => number
  /** The memory it holds, in bytes. */
  readonly held: () => number
}

/** The first memory a ring takes: most streams are short, and a ring grows (doubling) to its capacity as they go on. */
const FIRST_SIZE = 4096

/**
 * A ring of `capacity` bytes, allocated at the first push: as much as the
 * bytes need (4 KiB at least), doubled as more come, up to `capacity`. A
 * short output then never pays for the whole capacity.
 */
export const make = (capacity: number): Ring => {
  let ring: Uint8Array | undefined
  let written = 0
  const kept = () => Math.min(written, capacity)
  /** Room for `more` bytes after those written, up to the capacity; until it is reached, nothing has wrapped. */
  const grow = (more: number): Uint8Array => {
    const size = ring?.length ?? 0
    if (size === capacity || written + more <= size) return ring!
    const next = new Uint8Array(Math.min(capacity, Math.max(FIRST_SIZE, size * 2, written + more)))
    if (ring !== undefined) next.set(ring.subarray(0, written))
    return (ring = next)
  }
  return {
    push: (bytes) => {
      if (bytes.length === 0 || capacity === 0) {
        written += bytes.length
        return
      }
      const skip = Math.max(0, bytes.length - capacity)
      // below its capacity the ring holds every byte from the first, at its own place: the skipped ones too
      const buffer = grow(bytes.length)
      const size = buffer.length
      written += skip
      for (let from = skip; from < bytes.length;) {
        const at = written % size
        const n = Math.min(bytes.length - from, size - at)
        buffer.set(bytes.subarray(from, from + n), at)
        from += n
        written += n
      }
    },
    written: () => written,
    last: (n) => {
      const size = Math.min(Math.max(0, n), kept())
      const out = new Uint8Array(size)
      if (ring === undefined || size === 0) return out
      const start = (written - size) % ring.length
      const first = Math.min(size, ring.length - start)
      out.set(ring.subarray(start, start + first), 0)
      if (first < size) out.set(ring.subarray(0, size - first), first)
      return out
    },
    byteBack: (back) => (ring === undefined || back < 1 || back > kept() ? -1 : ring[(written - back) % ring.length]!),
    held: () => ring?.length ?? 0
  }
}
