/**
 * The byte kernel: the passes over every byte of captured output (line
 * breaks, line starts for the line index, the ASCII check, the anchor
 * scan's first pass) run in WebAssembly with SIMD, several times faster
 * than the same loops in JavaScript. Bytes are copied into the kernel's
 * memory a segment at a time, so its memory stays bounded whatever the
 * input's size. Where WebAssembly (or its SIMD) is missing, every function
 * here gives the same result from plain JavaScript; `kernel.test.ts`
 * checks the two against each other.
 *
 * @internal
 */
import { alignedAt, countNewlines as countNewlinesJs, fromBase64, isAscii as isAsciiJs } from "../bytes.js"
import { KERNEL_BASE64 } from "./kernelBytes.js"

/** What this module needs of the WebAssembly API (a Web API; absent, for example, under `node --jitless`). */
interface WasmApi {
  readonly Module: new(bytes: Uint8Array) => object
  readonly Instance: new(module: object, imports: object) => { readonly exports: Record<string, unknown> }
}

interface Exports {
  readonly memory: { readonly buffer: ArrayBuffer; grow: (pages: number) => number }
  readonly nonAscii: { value: number }
  readonly collect: (data: number, count: number, multiplier: number, hits: number) => number
  readonly lines: (p: number, n: number, want: number, every: number, out: number) => number
}

const PAGE = 65536
/**
 * Bytes copied into the kernel per call: each instance's memory holds one
 * segment or two, so this is most of what the kernel adds to a run's peak
 * memory (1 MiB segments measured no faster).
 */
export const SEGMENT = 256 * 1024
/** Inputs shorter than this are cheaper in JavaScript than copied. */
const SMALL = 1024

let compiled: object | null | undefined

/** The compiled module, once; null where WebAssembly or its SIMD is missing (or the environment refuses to compile). */
const wasmModule = (): object | null => {
  if (compiled !== undefined) return compiled
  compiled = null
  const api = (globalThis as { readonly WebAssembly?: WasmApi }).WebAssembly
  const bytes = fromBase64(KERNEL_BASE64)
  if (api !== undefined && bytes !== undefined) {
    try {
      compiled = new api.Module(bytes)
    } catch {
      compiled = null
    }
  }
  return compiled
}

/** A kernel instance with at least `bytes` of memory; undefined where there is no kernel. */
const instantiate = (bytes: number): Exports | undefined => {
  const module = wasmModule()
  const api = (globalThis as { readonly WebAssembly?: WasmApi }).WebAssembly
  if (module === null || api === undefined) return undefined
  try {
    const exports = new api.Instance(module, {}).exports as unknown as Exports
    const have = exports.memory.buffer.byteLength
    if (bytes > have) exports.memory.grow(Math.ceil((bytes - have) / PAGE))
    return exports
  } catch {
    return undefined
  }
}

/** Whether the kernel runs here (the functions below fall back to JavaScript when it does not). */
export const available = (): boolean => wasmModule() !== null

/** The one instance the line passes share, and its memory's views, replaced when it grows. */
interface Shared {
  readonly exports: Exports
  bytes: Uint8Array
  words: Int32Array
}
let shared: Shared | null | undefined

const sharedKernel = (need: number): Shared | undefined => {
  if (shared === undefined) {
    const exports = instantiate(SEGMENT + PAGE)
    shared = exports === undefined ? null : { exports, bytes: new Uint8Array(exports.memory.buffer), words: new Int32Array(exports.memory.buffer) }
  }
  if (shared === null) return undefined
  if (need > shared.bytes.length) {
    shared.exports.memory.grow(Math.ceil((need - shared.bytes.length) / PAGE))
    shared.bytes = new Uint8Array(shared.exports.memory.buffer)
    shared.words = new Int32Array(shared.exports.memory.buffer)
  }
  return shared
}

/** Where the line pass writes the line starts it finds: after a segment (placed up to 15 bytes in, see `alignedAt`), aligned. */
const OUT = SEGMENT + 64

/** Copies a segment into the kernel's memory where copying it is fast; where it starts. */
const load = (k: Shared, part: Uint8Array): number => {
  const p = alignedAt(part, k.bytes)
  k.bytes.set(part, p)
  return p
}

/** How many line breaks (0x0A) `bytes` holds. */
export const newlines = (bytes: Uint8Array): number => {
  if (bytes.length < SMALL) return countNewlinesJs(bytes)
  const k = sharedKernel(OUT)
  if (k === undefined) return countNewlinesJs(bytes)
  let count = 0
  for (let at = 0; at < bytes.length; at += SEGMENT) {
    const part = bytes.subarray(at, Math.min(bytes.length, at + SEGMENT))
    const p = load(k, part)
    count += k.exports.lines(p, part.length, 0, 0, OUT)
  }
  return count
}

/** True when every byte is below 0x80. */
export const isAscii = (bytes: Uint8Array): boolean => {
  if (bytes.length < SMALL) return isAsciiJs(bytes)
  const k = sharedKernel(OUT)
  if (k === undefined) return isAsciiJs(bytes)
  for (let at = 0; at < bytes.length; at += SEGMENT) {
    const part = bytes.subarray(at, Math.min(bytes.length, at + SEGMENT))
    const p = load(k, part)
    k.exports.nonAscii.value = 0
    k.exports.lines(p, part.length, 0, 0, OUT)
    if (k.exports.nonAscii.value !== 0) return false
  }
  return true
}

/**
 * Counts the line breaks in `bytes` and calls `start(offset)` with the
 * offset just past the `want`-th of them, the `(want + every)`-th, and so
 * on (`want` counts from 1; 0 asks for none). Returns the count. With
 * `seen`, also clears `seen.ascii` when a byte is 0x80 or more, in the same
 * pass.
 */
export const lineStarts = (
  bytes: Uint8Array,
  want: number,
  every: number,
  start: (offset: number) => void,
  seen?: { ascii: boolean }
): number => {
  const k = bytes.length < SMALL ? undefined : sharedKernel(OUT + 4 * (Math.floor(Math.min(bytes.length, SEGMENT) / Math.max(1, every)) + 2))
  let count = 0
  let next = want
  for (let at = 0; at < bytes.length; at += SEGMENT) {
    const part = bytes.subarray(at, Math.min(bytes.length, at + SEGMENT))
    let found: number
    if (k === undefined) {
      if (seen !== undefined && seen.ascii) seen.ascii = isAsciiJs(part)
      found = countNewlinesJs(part)
      let from = -1
      for (let w = next, seen = 0; next > 0 && w <= found; w += every) {
        for (; seen < w; seen++) from = part.indexOf(10, from + 1)
        start(at + from + 1)
        if (every <= 0) break
      }
    } else {
      const p = load(k, part)
      k.exports.nonAscii.value = 0
      found = k.exports.lines(p, part.length, next, Math.max(0, every), OUT)
      if (seen !== undefined && k.exports.nonAscii.value !== 0) seen.ascii = false
      if (next > 0 && next <= found) {
        const written = every > 0 ? Math.floor((found - next) / every) + 1 : 1
        for (let i = 0; i < written; i++) start(at + k.words[OUT / 4 + i]!)
      }
    }
    if (next > 0) {
      if (next <= found) next = every > 0 ? next + (Math.floor((found - next) / every) + 1) * every - found : 0
      else next -= found
    }
    count += found
  }
  return count
}

/**
 * Where an anchor collector keeps its tables, the words it scans (after the
 * bytes before them, placed up to 15 bytes in, see `alignedAt`), and the
 * hits it writes.
 */
const DATA = 3 * 65536 + 64
const HITS = DATA + SEGMENT + 64

/** The anchor scan's first pass over one set of flag tables (see ../secrets/anchors.ts). */
export interface Collector {
  /**
   * Looks at words `[0, count)` of `bytes` from `start` (4-byte words; the
   * word after the last must exist) and calls `hit(k)` with the index of
   * each word whose windows or pairs are set in the tables (`windowFlags`
   * with the kinds kernel.wat reads), a window of a longer anchor only when
   * one of its four-byte keys is there too.
   */
  readonly collect: (
    bytes: Uint8Array,
    start: number,
    count: number,
    windowFlags: Uint8Array,
    multiplier: number,
    hit: (word: number) => void
  ) => void
}

/** A collector for these pair and key flags (the window flags may change between calls); undefined where there is no kernel. */
export const collector = (pairFlags: Uint8Array, quadFlags: Uint8Array): Collector | undefined => {
  const exports = instantiate(HITS + SEGMENT)
  if (exports === undefined) return undefined
  const memory = new Uint8Array(exports.memory.buffer)
  const hits = new Int32Array(exports.memory.buffer)
  memory.set(pairFlags, 65536)
  memory.set(quadFlags, 2 * 65536)
  let windows: Uint8Array | undefined
  const words = SEGMENT / 4
  return {
    collect: (bytes, start, count, windowFlags, multiplier, hit) => {
      if (windows !== windowFlags) {
        memory.set(windowFlags, 0)
        windows = windowFlags
      }
      for (let first = 0; first < count; first += words) {
        const n = Math.min(words, count - first)
        const from = start + 4 * first
        const span = bytes.subarray(from, from + 4 * n + 4)
        const at = alignedAt(span, memory, DATA)
        // the byte before the words too, where the input has one: a key may start there
        if (from > 0) memory[at - 1] = bytes[from - 1]!
        memory.set(span, at)
        const found = exports.collect(at, n, multiplier, HITS)
        for (let h = 0; h < found; h++) hit(first + hits[HITS / 4 + h]!)
      }
    }
  }
}
