/**
 * Byte helpers on Web APIs alone (`Uint8Array`, `TextEncoder`, `crypto`), so
 * that the core runs wherever those exist.
 *
 * @internal
 */

/**
 * A copy of `bytes[start, end)` in a fresh array. (`slice` is no copy on
 * Node's Buffer, where it shares the memory, as `subarray` does.)
 */
export const copyOf = (bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array =>
  new Uint8Array(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end))

/**
 * Bytes of room past a copy's length that let it start where copying is
 * fast (see `alignedAt`).
 */
export const ALIGN_SLACK = 15

/**
 * Where in `into` (from `at` on, within `ALIGN_SLACK` bytes) `source` is
 * best copied to: at the same offset modulo 16 as the source. A large
 * copy whose destination lies 1 to 15 bytes past its source modulo 4096
 * runs many times slower on some processors (the platform's memmove on
 * AMD EPYC copied 256 KiB in 75 µs there instead of 5 µs), and buffers'
 * memory starts 16-byte aligned, so a destination that agrees with its
 * source modulo 16 is never in that range.
 */
export const alignedAt = (source: Uint8Array, into: Uint8Array, at = 0): number =>
  at + ((source.byteOffset - into.byteOffset - at) & ALIGN_SLACK)

/** The parts joined into one array; a single part is returned as it is. */
export const concat = (parts: ReadonlyArray<Uint8Array>, total?: number): Uint8Array => {
  if (parts.length === 1) return parts[0]!
  let size = total ?? 0
  if (total === undefined) for (const p of parts) size += p.length
  const out = new Uint8Array(size)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/**
 * How many line breaks (0x0A) `bytes` holds: four bytes at a time, a word's
 * zero bytes after XOR with the break found without a branch. About twice
 * as fast as a loop of `indexOf` on short lines. @internal
 */
export const countNewlines = (bytes: Uint8Array): number => {
  let n = 0
  let i = 0
  const lead = Math.min(bytes.length, (4 - (bytes.byteOffset & 3)) & 3)
  for (; i < lead; i++) if (bytes[i] === 10) n++
  const words = (bytes.length - i) >>> 2
  if (words > 0) {
    const w = new Uint32Array(bytes.buffer, bytes.byteOffset + i, words)
    // per-byte tallies in one word, added up every 255 words before a byte can overflow
    for (let k = 0; k < words;) {
      const end = Math.min(words, k + 255)
      let tally = 0
      for (; k < end; k++) {
        const y = w[k]! ^ 0x0a0a0a0a
        // the high bit of each byte of t is set when that byte of y is not zero
        const t = ((y & 0x7f7f7f7f) + 0x7f7f7f7f) | y
        tally = (tally + ((~t >>> 7) & 0x01010101)) | 0
      }
      n += (tally & 0xff) + ((tally >>> 8) & 0xff) + ((tally >>> 16) & 0xff) + (tally >>> 24)
    }
    i += words * 4
  }
  for (; i < bytes.length; i++) if (bytes[i] === 10) n++
  return n
}

/** Node's Buffer where the platform has one: its search for a byte sequence is native. Nothing here needs it. */
const NativeBuffer = (globalThis as {
  readonly Buffer?: {
    readonly from: (buffer: ArrayBufferLike, offset: number, length: number) => Uint8Array & { toString(encoding: "latin1"): string }
  }
}).Buffer

const asciiDecoder = new TextDecoder()

/** Text of bytes that are all below 0x80: natively as Latin-1 where the platform can (the fastest decoding there is), else as UTF-8. @internal */
export const decodeAscii = (bytes: Uint8Array): string =>
  NativeBuffer !== undefined ? NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("latin1") : asciiDecoder.decode(bytes)

/**
 * A search for a byte sequence in `haystack`: the platform's native one when
 * it has one (Node's Buffer), otherwise a scan anchored on the needle's
 * rarest-looking byte (the last byte above 0x7f, else a letter or digit
 * seldom in text, else its last byte), each candidate checked whole.
 * Returns `(needle, from) => index` or -1. @internal
 */
export const sequenceSearch = (
  haystack: Uint8Array,
  native: boolean = NativeBuffer !== undefined
): (needle: Uint8Array, from?: number) => number => {
  if (native && NativeBuffer !== undefined) {
    const native = NativeBuffer.from(haystack.buffer, haystack.byteOffset, haystack.length) as Uint8Array & {
      indexOf: (needle: Uint8Array, from?: number) => number
    }
    return (needle, from = 0) => native.indexOf(needle, from)
  }
  return (needle, from = 0) => {
    if (needle.length === 0) return Math.min(from, haystack.length)
    let k = needle.length - 1
    for (let j = needle.length - 1; j >= 0; j--) {
      if (needle[j]! >= 0x80 || "qjxzkvwyQJXZKVWY0123456789".includes(String.fromCharCode(needle[j]!))) {
        k = j
        break
      }
    }
    const anchor = needle[k]!
    for (let at = haystack.indexOf(anchor, from + k); at !== -1; at = haystack.indexOf(anchor, at + 1)) {
      const start = at - k
      if (start + needle.length > haystack.length) return -1
      let j = 0
      while (j < needle.length && haystack[start + j] === needle[j]) j++
      if (j === needle.length) return start
    }
    return -1
  }
}

/** True when every byte is below 0x80; reads eight bytes at a time where it can. */
export const isAscii = (bytes: Uint8Array): boolean => {
  const n = bytes.length
  let i = 0
  const lead = Math.min(n, (8 - (bytes.byteOffset & 7)) & 7)
  for (; i < lead; i++) if (bytes[i]! & 0x80) return false
  if (n - i >= 8) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + i, (n - i) >>> 2)
    const end = words.length & ~1
    for (let w = 0; w < end; w += 2) if ((words[w]! | words[w + 1]!) & 0x80808080) return false
    i += end * 4
  }
  for (; i < n; i++) if (bytes[i]! & 0x80) return false
  return true
}

/** Bytes as Latin-1 text: one character per byte, for byte-exact scans with string methods. */
export const latin1 = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as Array<number>)
  }
  return out
}

/** Latin-1 text back to its bytes (each character below 256 is one byte). */
export const fromLatin1 = (text: string): Uint8Array => {
  const out = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i)
  return out
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const encode64 = (bytes: Uint8Array, alphabet: string, pad: boolean): string => {
  let out = ""
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += alphabet[n >>> 18]! + alphabet[(n >>> 12) & 63]! + alphabet[(n >>> 6) & 63]! + alphabet[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += alphabet[n >>> 18]! + alphabet[(n >>> 12) & 63]! + (pad ? "==" : "")
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += alphabet[n >>> 18]! + alphabet[(n >>> 12) & 63]! + alphabet[(n >>> 6) & 63]! + (pad ? "=" : "")
  }
  return out
}

/** Standard base64 with padding. */
export const toBase64 = (bytes: Uint8Array): string => encode64(bytes, B64, true)

/** base64url without padding. */
export const toBase64url = (bytes: Uint8Array): string => encode64(bytes, B64URL, false)

const decodeTable = (alphabet: string) => {
  const t = new Int16Array(128).fill(-1)
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i
  return t
}
const B64URL_TABLE = decodeTable(B64URL)
const B64_TABLE = decodeTable(B64)

const decode64 = (text: string, table: Int16Array): Uint8Array | undefined => {
  if (text.length % 4 === 1) return undefined
  const out = new Uint8Array(Math.floor((text.length * 3) / 4))
  let bits = 0
  let value = 0
  let at = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const v = c < 128 ? table[c]! : -1
    if (v < 0) return undefined
    value = (value << 6) | v
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[at++] = (value >>> bits) & 0xff
    }
  }
  return out.subarray(0, at)
}

/**
 * Strict base64url: only the alphabet, no padding, and only the one
 * spelling `toBase64url` gives the bytes it decodes to.
 */
export const fromBase64url = (text: string): Uint8Array | undefined => {
  const bytes = decode64(text, B64URL_TABLE)
  return bytes !== undefined && toBase64url(bytes) === text ? bytes : undefined
}

/** Lenient standard base64 (padding optional); undefined for anything else. */
export const fromBase64 = (text: string): Uint8Array | undefined => decode64(text.replace(/=+$/, ""), B64_TABLE)

/** `n` bytes from the platform's cryptographic random source. */
export const randomBytes = (n: number): Uint8Array => {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i += 65536) globalThis.crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)))
  return out
}

/** A random identifier: `bytes` random bytes in base64url. */
export const randomId = (bytes: number): string => toBase64url(randomBytes(bytes))

/** Compares two arrays in time that depends only on their lengths. */
export const equalConstantTime = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}
