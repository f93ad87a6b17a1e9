/**
 * UTF-8 accounting: byte lengths of strings (plain and JSON-escaped), cut
 * points that never split a code point, and a lossy decoder that keeps every
 * character's source byte coordinates.
 *
 * @since 0.1.0
 */
import * as internal from "./internal/utf8.js"

/** UTF-8 byte length of a string; a lone surrogate counts as U+FFFD (3 bytes), as `TextEncoder` writes it. */
export const byteLength: (text: string) => number = internal.byteLength

/** UTF-8 byte length of a string once escaped for the inside of a JSON string literal (quotes not included). */
export const jsonByteLength: (text: string) => number = internal.jsonByteLength

/** Number of Unicode code points in a string (a surrogate pair is one, a lone surrogate is one). */
export const codePointLength: (text: string) => number = internal.codePointLength

/** Largest index `<= index` in `bytes` that does not fall inside a UTF-8 multi-byte sequence. */
export const byteBoundary: (bytes: Uint8Array, index: number) => number = internal.byteBoundary

/** True when `index` is a code-point boundary of `bytes` (not a continuation byte of a valid sequence). */
export const isByteBoundary: (bytes: Uint8Array, index: number) => boolean = internal.isByteBoundary

/**
 * How many bytes at the end of `bytes` begin a multi-byte sequence that
 * more bytes could still complete (0 to 3): the part of a growing stream
 * that cannot be decoded yet.
 */
export const incompleteSuffix: (bytes: Uint8Array) => number = internal.incompleteSuffix

/** The longest prefix of `text` whose UTF-8 length is at most `maxBytes`, never splitting a code point. */
export const takeBytes: (text: string, maxBytes: number) => string = internal.takeBytes

/** The longest suffix of `text` whose UTF-8 length is at most `maxBytes`, never splitting a code point. */
export const takeLastBytes: (text: string, maxBytes: number) => string = internal.takeLastBytes

/** The first `count` code points of `text`. */
export const takeCodePoints: (text: string, count: number) => string = internal.takeCodePoints

/** The last `count` code points of `text`. */
export const takeLastCodePoints: (text: string, count: number) => string = internal.takeLastCodePoints

/** Text decoded from bytes, with the source byte offset of every UTF-16 unit. */
export interface Decoded {
  /** The decoded text; malformed sequences become U+FFFD exactly as `TextDecoder` replaces them. */
  readonly text: string
  /** `offsets[i]` is the source byte offset where UTF-16 unit `i` of `text` came from; `offsets[text.length]` is the byte length. */
  readonly offsets: Uint32Array
}

/** Decodes bytes lossily (U+FFFD for malformed input) and keeps each character's source byte coordinates. */
export const decodeWithOffsets: (bytes: Uint8Array) => Decoded = internal.decodeWithOffsets

/** Decodes bytes lossily: malformed sequences become U+FFFD; the result matches `TextDecoder` without `fatal`. */
export const decodeLossy = (bytes: Uint8Array): string => internal.decoder.decode(bytes)

/** Encodes a string as UTF-8 (lone surrogates become U+FFFD). */
export const encode = (text: string): Uint8Array => internal.encoder.encode(text)
