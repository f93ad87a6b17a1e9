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
}

/** A ring of `capacity` bytes, allocated at the first push. */
export const make = (capacity: number): Ring => {
  let ring: Uint8Array | undefined
  let written = 0
  const kept = () => Math.min(written, capacity)
  return {
    push: (bytes) => {
      if (bytes.length === 0 || capacity === 0) {
        written += bytes.length
        return
      }
      ring ??= new Uint8Array(capacity)
      const skip = Math.max(0, bytes.length - capacity)
      written += skip
      for (let from = skip; from < bytes.length;) {
        const at = written % capacity
        const n = Math.min(bytes.length - from, capacity - at)
        ring.set(bytes.subarray(from, from + n), at)
        from += n
        written += n
      }
    },
    written: () => written,
    last: (n) => {
      const size = Math.min(Math.max(0, n), kept())
      const out = new Uint8Array(size)
      if (ring === undefined || size === 0) return out
      const start = (written - size) % capacity
      const first = Math.min(size, capacity - start)
      out.set(ring.subarray(start, start + first), 0)
      if (first < size) out.set(ring.subarray(0, size - first), first)
      return out
    },
    byteBack: (back) => (ring === undefined || back < 1 || back > kept() ? -1 : ring[(written - back) % capacity]!)
  }
}
