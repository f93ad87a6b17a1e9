// Finds every position where one of a set of literal anchors occurs, in one
// pass over the bytes. Each anchor is keyed by its rarest two-byte pair (a
// guess from letter frequencies), and the pass reads four bytes at a time
// and looks the four pairs they start up in one table; only positions whose
// pair is a key are compared with the anchors keyed by it.

/** A literal to find; `ignoreCase` compares ASCII letters without case. */
export interface AnchorSpec {
  readonly text: string
  readonly ignoreCase: boolean
}

/** Calls `visit(anchor, position)` for every anchor occurrence in `bytes` (in no particular order). */
export type AnchorScan = (bytes: Uint8Array, visit: (anchor: number, position: number) => void) => void

const letterFrequency: Record<string, number> = {
  e: 12.7, t: 9.1, a: 8.2, o: 7.5, i: 7.0, n: 6.7, s: 6.3, h: 6.1, r: 6.0, d: 4.3, l: 4.0, c: 2.8, u: 2.8,
  m: 2.4, w: 2.4, f: 2.2, g: 2.0, y: 2.0, p: 1.9, b: 1.5, v: 1.0, k: 0.8, j: 0.15, x: 0.15, q: 0.1, z: 0.07
}

const frequency = (code: number): number => {
  const char = String.fromCharCode(code)
  if (code >= 97 && code <= 122) return letterFrequency[char]
  if (code >= 65 && code <= 90) return letterFrequency[char.toLowerCase()] / 5
  if (code >= 48 && code <= 57) return 3
  if (code === 32) return 15
  if (code === 10 || code === 9) return 4
  if ("-./:_".includes(char)) return 3
  if (",()[]'\"=".includes(char)) return 1.5
  return 0.5
}

// Pairs common in English and in build output, whatever their letters' frequencies.
const commonPairs = new Set(
  (
    "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro " +
    "ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so " +
    "rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl " +
    "ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt " +
    "oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck " +
    "ew mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft wn nu af " +
    "hu nn eo vo rv nf xp gn sm fl iz ok nl my gl aw ju oa eq sy sl ps jo lf nv je nk kn gs dy hy ze ks xt bs ik dd " +
    "cy rp sk pm js db " +
    "-- // :/ s/ /s /c /l /p /a /m /n /r /t /u /w e/ t/ c/ n/ _m e_ _s s_ _t t_ _c _p _i _d .j .t .c .p .m .o .g .s " +
    "v1 v2 -s -t -p -c -m -d -b -r s- e- t- n- r- d- :0 :1 :2 :3 :4 :5 0: 1: 2: 3: 4: 5: ,0 .0 .1 .2 0. 1. 2. 3. " +
    "00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 30 40 50 60 70 80 90 99 " +
    "-0 -1 -2 0- 1- 2- 3- 4- 5- 6- 7- 8- 9- 0x x0 .. ./ /. \"\" ': \": =\" =' =="
  ).split(" ").filter((pair) => pair.length === 2)
)

// Pairs far more frequent in build and test output than letter frequencies
// suggest: `ok` on every passing test line, `ck` in check, stack, lock, pack.
const outputPairs = new Set(["ok", "ck"])

const pairScore = (first: number, second: number): number => {
  const pair = String.fromCharCode(first, second).toLowerCase()
  if (outputPairs.has(pair)) return frequency(first) * frequency(second) * 1000
  // a space next to almost anything is common in output, whatever the letter
  const common = first === 32 || second === 32 || commonPairs.has(String.fromCharCode(first, second).toLowerCase())
  return frequency(first) * frequency(second) * (common ? 50 : 1)
}

const isLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122)

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** Builds a scan for the given anchors; anchors shorter than two bytes are not supported and are never found. */
export const makeAnchorScan = (specs: ReadonlyArray<AnchorSpec>): AnchorScan => {
  const patterns: Array<Uint8Array> = []
  const folded: Array<boolean> = []
  const byPair = new Map<number, Array<number>>()

  specs.forEach((spec, index) => {
    const text = spec.ignoreCase ? spec.text.toLowerCase() : spec.text
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff)
    patterns.push(bytes)
    folded.push(spec.ignoreCase)
    if (bytes.length < 2) return
    let best = 0
    let bestScore = Infinity
    for (let offset = 0; offset + 1 < bytes.length; offset++) {
      const score = pairScore(bytes[offset], bytes[offset + 1])
      if (score < bestScore) {
        bestScore = score
        best = offset
      }
    }
    const variants = (code: number) => (spec.ignoreCase && isLetter(code) ? [code, code ^ 0x20] : [code])
    for (const first of variants(bytes[best])) {
      for (const second of variants(bytes[best + 1])) {
        const key = first | (second << 8)
        const list = byPair.get(key) ?? []
        list.push(index, best)
        byPair.set(key, list)
      }
    }
  })

  const table = byPair.size < 65535 ? new Uint16Array(65536) : new Uint32Array(65536)
  const groups: Array<Int32Array> = []
  for (const [key, list] of byPair) {
    groups.push(Int32Array.from(list))
    table[key] = groups.length
  }

  const matches = (bytes: Uint8Array, anchor: number, position: number): boolean => {
    const pattern = patterns[anchor]
    const length = pattern.length
    if (position < 0 || position + length > bytes.length) return false
    if (folded[anchor]) {
      for (let i = 0; i < length; i++) {
        const want = pattern[i]
        const got = bytes[position + i]
        if (got !== want && !(want >= 97 && want <= 122 && (got | 0x20) === want)) return false
      }
    } else {
      for (let i = 0; i < length; i++) if (bytes[position + i] !== pattern[i]) return false
    }
    return true
  }

  return (bytes, visit) => {
    const n = bytes.length
    if (groups.length === 0 || n < 2) return

    const at = (i: number): void => {
      const group = table[bytes[i] | (bytes[i + 1] << 8)]
      if (group === 0) return
      const list = groups[group - 1]
      for (let k = 0; k < list.length; k += 2) {
        const anchor = list[k]
        const position = i - list[k + 1]
        if (matches(bytes, anchor, position)) visit(anchor, position)
      }
    }

    const start = (4 - (bytes.byteOffset & 3)) & 3
    if (!littleEndian || n < start + 16) {
      for (let i = 0; i + 1 < n; i++) at(i)
      return
    }
    for (let i = 0; i < start; i++) at(i)
    const count = (n - start) >>> 2
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + start, count)
    let word = words[0]
    for (let k = 0; k + 1 < count; k++) {
      const next = words[k + 1]
      if ((table[word & 0xffff] | table[(word >>> 8) & 0xffff] | table[word >>> 16] | table[(word >>> 24) | ((next & 0xff) << 8)]) !== 0) {
        const base = start + 4 * k
        at(base)
        at(base + 1)
        at(base + 2)
        at(base + 3)
      }
      word = next
    }
    for (let i = start + 4 * (count - 1); i + 1 < n; i++) at(i)
  }
}
