/** @internal */
export const encoder = new TextEncoder()
/** @internal */
export const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true })

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff

/** UTF-8 bytes of the code point that starts at `i`, and how many UTF-16 units it spans. @internal */
const unitBytes = (text: string, i: number): number => {
  const c = text.charCodeAt(i)
  if (c < 0x80) return 1
  if (c < 0x800) return 2
  if (isHigh(c) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) return 4
  return 3
}

/** @internal */
export const byteLength = (text: string): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (isHigh(c) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** @internal */
export const jsonByteLength = (text: string): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20) {
      // \b \t \n \f \r have two-character escapes, the rest are \u00XX
      n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6
    } else if (c === 0x22 || c === 0x5c) n += 2
    else if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (isHigh(c)) {
      if (i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
        n += 4
        i++
      } else n += 6 // JSON.stringify writes a lone surrogate as \udXXX
    } else if (isLow(c)) n += 6
    else n += 3
  }
  return n
}

/** @internal */
export const codePointLength = (text: string): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    if (isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) i++
    n++
  }
  return n
}

/** Expected length of a sequence from its lead byte, 0 when the byte cannot lead. @internal */
const sequenceLength = (b: number): number =>
  b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0

/** Trailing bytes that start a multi-byte sequence more bytes could still complete. @internal */
export const incompleteSuffix = (bytes: Uint8Array): number => {
  const n = bytes.length
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = bytes[n - back]!
    if ((b & 0xc0) === 0x80) continue
    return sequenceLength(b) > back ? back : 0
  }
  return 0
}

/** @internal */
export const isByteBoundary = (bytes: Uint8Array, index: number): boolean => byteBoundary(bytes, index) === index

/** @internal */
export const byteBoundary = (bytes: Uint8Array, index: number): number => {
  if (index <= 0) return 0
  if (index >= bytes.length) return bytes.length
  // Walk back over at most three continuation bytes to the lead byte, and
  // check that the sequence it starts really covers `index`.
  let lead = index
  while (lead > 0 && index - lead < 3 && (bytes[lead]! & 0xc0) === 0x80) lead--
  if (lead === index) return index
  const len = sequenceLength(bytes[lead]!)
  if (len <= index - lead) return index
  for (let k = lead + 1; k <= index; k++) if ((bytes[k]! & 0xc0) !== 0x80) return index
  return lead
}

/** @internal */
export const takeBytes = (text: string, maxBytes: number): string => {
  let n = 0
  let i = 0
  while (i < text.length) {
    const w = unitBytes(text, i)
    if (n + w > maxBytes) break
    n += w
    i += w === 4 ? 2 : 1
  }
  return text.slice(0, i)
}

/** @internal */
export const takeLastBytes = (text: string, maxBytes: number): string => {
  let n = 0
  let i = text.length
  while (i > 0) {
    const lo = text.charCodeAt(i - 1)
    const pair = isLow(lo) && i >= 2 && isHigh(text.charCodeAt(i - 2))
    const w = pair ? 4 : unitBytes(text, i - 1)
    if (n + w > maxBytes) break
    n += w
    i -= pair ? 2 : 1
  }
  return text.slice(i)
}

/** @internal */
export const takeCodePoints = (text: string, count: number): string => {
  let i = 0
  for (let k = 0; k < count && i < text.length; k++) {
    i += isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1
  }
  return text.slice(0, i)
}

/** @internal */
export const takeLastCodePoints = (text: string, count: number): string => {
  let i = text.length
  for (let k = 0; k < count && i > 0; k++) {
    i -= isLow(text.charCodeAt(i - 1)) && i >= 2 && isHigh(text.charCodeAt(i - 2)) ? 2 : 1
  }
  return text.slice(i)
}

/**
 * WHATWG UTF-8 decoding (maximal subparts become one U+FFFD each), recording
 * the source offset of every UTF-16 unit produced.
 *
 * @internal
 */
export const decodeWithOffsets = (bytes: Uint8Array): { text: string; offsets: Uint32Array } => {
  const units = new Uint16Array(bytes.length)
  const offsets = new Uint32Array(bytes.length + 1)
  let u = 0
  let i = 0
  const push = (unit: number, at: number) => {
    units[u] = unit
    offsets[u] = at
    u++
  }
  while (i < bytes.length) {
    const b = bytes[i]!
    if (b < 0x80) {
      push(b, i)
      i++
      continue
    }
    let need = 0
    let lower = 0x80
    let upper = 0xbf
    let cp = 0
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1
      cp = b & 0x1f
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2
      cp = b & 0x0f
      if (b === 0xe0) lower = 0xa0
      if (b === 0xed) upper = 0x9f
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3
      cp = b & 0x07
      if (b === 0xf0) lower = 0x90
      if (b === 0xf4) upper = 0x8f
    } else {
      push(0xfffd, i)
      i++
      continue
    }
    const start = i
    let j = i + 1
    let ok = true
    for (let k = 0; k < need; k++, j++) {
      const c = j < bytes.length ? bytes[j]! : -1
      if (c < lower || c > upper) {
        ok = false
        break
      }
      lower = 0x80
      upper = 0xbf
      cp = (cp << 6) | (c & 0x3f)
    }
    if (!ok) {
      // the maximal subpart [start, j) becomes one replacement character
      push(0xfffd, start)
      i = j
      continue
    }
    if (cp >= 0x10000) {
      const v = cp - 0x10000
      push(0xd800 + (v >> 10), start)
      push(0xdc00 + (v & 0x3ff), start)
    } else push(cp, start)
    i = j
  }
  offsets[u] = bytes.length
  let text = ""
  for (let k = 0; k < u; k += 8192) {
    text += String.fromCharCode.apply(null, units.subarray(k, Math.min(u, k + 8192)) as unknown as Array<number>)
  }
  return { text, offsets: offsets.slice(0, u + 1) }
}
