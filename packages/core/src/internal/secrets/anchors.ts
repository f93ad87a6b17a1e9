// Finds every position where one of a set of literal anchors occurs, in one
// pass over the bytes. An anchor is keyed by two adjacent three-byte windows
// of it (its rarest such pair, a guess from letter frequencies); since one
// of the two starts at an even offset from wherever the anchor sits, the
// pass only looks at every other position. It reads four bytes at a time,
// tests the two windows that start in them against a table of hashed
// windows small enough to stay in cache, and compares the anchors keyed by a
// window that is set. A three-byte anchor has one window, so it is also keyed
// by its last two bytes; a two-byte anchor is keyed by itself at the even
// positions, and by every pair that ends with its first byte at the odd ones
// (cheap for the UTF-8 lead bytes of non-ASCII literals, rare in output).

import * as Kernel from "../kernel/kernel.js"
import { englishPairs } from "./lookalike.js"

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

/** Frequencies and pair scores by byte and by pair, computed at their first use: keying a stream's anchors looks them up often. */
const frequencies = new Float64Array(256)
let pairScores: Float64Array | undefined

const frequency = (code: number): number => frequencies[code] || (frequencies[code] = frequencyOf(code))

const frequencyOf = (code: number): number => {
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
const commonPairs = new Set([
  ...englishPairs,
  ...(
    "-- // :/ s/ /s /c /l /p /a /m /n /r /t /u /w e/ t/ c/ n/ _m e_ _s s_ _t t_ _c _p _i _d .j .t .c .p .m .o .g .s " +
    "v1 v2 -s -t -p -c -m -d -b -r s- e- t- n- r- d- :0 :1 :2 :3 :4 :5 0: 1: 2: 3: 4: 5: ,0 .0 .1 .2 0. 1. 2. 3. " +
    "00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 30 40 50 60 70 80 90 99 " +
    "-0 -1 -2 0- 1- 2- 3- 4- 5- 6- 7- 8- 9- 0x x0 .. ./ /. \"\" ': \": =\" =' =="
  ).split(" ").filter((pair) => pair.length === 2)
])

// Pairs far more frequent in build and test output than letter frequencies
// suggest: `ok` on every passing test line, `ck` in check, stack, lock, pack.
const outputPairs = new Set(["ok", "ck"])

const isDigit = (code: number): boolean => code >= 48 && code <= 57
const isWordByte = (code: number): boolean => isDigit(code) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
// punctuation that joins the words of identifiers, paths and key=value pairs
const joiners = new Set([95, 61, 46, 45, 47, 58])

const pairScore = (first: number, second: number): number => {
  pairScores ??= new Float64Array(65536)
  const key = first | (second << 8)
  return pairScores[key] || (pairScores[key] = scorePair(first, second))
}

const scorePair = (first: number, second: number): number => {
  const pair = String.fromCharCode(first, second).toLowerCase()
  if (outputPairs.has(pair)) return frequency(first) * frequency(second) * 1000
  // a space next to almost anything is common in output, whatever the letter; so are digits together,
  // and a letter or digit next to `_ = . - / :` (identifiers, paths, logfmt)
  const common = first === 32 || second === 32 || commonPairs.has(pair) || (isDigit(first) && isDigit(second))
  const joined = (isWordByte(first) && joiners.has(second)) || (joiners.has(first) && isWordByte(second))
  return frequency(first) * frequency(second) * (common ? 50 : joined ? 20 : 1)
}

const isLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122)

// Three-byte windows common in English, code and log output: an anchor is
// better found by any other window of it, and by one whose hash differs
// from theirs (the table of windows is hashed to 16 bits).
const commonWindows = (
  "the and ing ion tio ent ati for her ter hat tha ere ate his con res ver all ons nce men ith ted ers pro thi wit " +
  "are ess not ive was ect rea com eve per int est sta cti ica ist ear ain one our iti rat ell ant sti tur ons ers " +
  "api use tes met pat ath ata req que ues tat atu tus err rro ror ime tim get set ost htt ttp tps :// www org net " +
  "jso son nfi fig log lev vel inf nfo war arn deb bug dur ura byt yte src pac ack kag age ges fil ile nod ode mod " +
  "odu dul ule cac ach che hin ok. ms) ed. ock ild bui uil lin ine nes ase tra ran ans str tri rin ype typ val alu lue " +
  "arg rgs ret urn tur def fun unc nct ctio cla las ass imp mpo por ort exp xpo sel elf thi his new ull nul und ndef " +
  "ser erv rve ver cli lie ien sch hem ema key ken tok oke pas sec ecr cre red cod ode dat ate upd pda ile sys yst " +
  "pro roc oce ces sse han and ndl dle mes ess ssa sag tex ext cal all pla lat rm ar ap ip ep at= us= id="
).split(" ").filter((w) => w.length === 3)

/** A 16-bit hash of a three-byte window given as a 24-bit number, by one of `MULTIPLIERS`. */
const hashWindow = (window: number, multiplier: number): number => Math.imul(window, multiplier) >>> 16

/** Odd constants a table may hash its windows by: the one whose hashes of the anchors' windows collide least with common windows. */
const MULTIPLIERS = [
  0x9e3779b1, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f, 0x165667b1, 0xd3a2646d, 0xfd7046c5, 0xb55a4f09,
  0x7feb352d, 0x846ca68b, 0x2c1b3c6d, 0x297a2d39, 0x68e31da5, 0x1b873593, 0xcc9e2d51, 0xe6546b65
]

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** A table from 16-bit keys to lists of (anchor, offset), or of (window, anchor, offset) for hashed windows. */
interface Keyed {
  readonly flags: Uint8Array
  readonly table: Uint16Array | Uint32Array
  readonly groups: ReadonlyArray<Int32Array>
}

const keyed = (entries: Map<number, Array<number>>): Keyed => {
  const table = entries.size < 65535 ? new Uint16Array(65536) : new Uint32Array(65536)
  const flags = new Uint8Array(65536)
  const groups: Array<Int32Array> = []
  for (const [key, list] of entries) {
    groups.push(Int32Array.from(list))
    table[key] = groups.length
    flags[key] = 1
  }
  return { flags, table, groups }
}

/**
 * Writes to `into` the index of every word whose two windows (the one it
 * starts and the one starting two bytes in) or two pairs are set; returns how
 * many. A function of its own, so the engine optimizes this loop alone.
 */
const collect = (words: Uint32Array, windowFlags: Uint8Array, multiplier: number, pairFlags: Uint8Array, into: Int32Array): number => {
  const count = words.length
  let found = 0
  for (let k = 0; k + 1 < count; k++) {
    const word = words[k]
    const next = words[k + 1]
    const set =
      windowFlags[Math.imul(word & 0xffffff, multiplier) >>> 16] |
      windowFlags[Math.imul((word >>> 16) | ((next & 0xff) << 16), multiplier) >>> 16] |
      pairFlags[word & 0xffff] |
      pairFlags[word >>> 16]
    if (set !== 0) into[found++] = k
  }
  return found
}

const add = (entries: Map<number, Array<number>>, key: number, anchor: number, offset: number): void => {
  const list = entries.get(key) ?? []
  list.push(anchor, offset)
  entries.set(key, list)
}

const variantsOf = (spec: AnchorSpec, code: number): Array<number> => (spec.ignoreCase && isLetter(code) ? [code, code ^ 0x20] : [code])

const windowValue = (a: number, b: number, c: number): number => a | (b << 8) | (c << 16)

// The common windows in lower, upper and title case, and their hashes.
const commonValues = new Set<number>()
for (const word of commonWindows) {
  for (const text of [word, word.toUpperCase(), word[0].toUpperCase() + word.slice(1)]) {
    commonValues.add(windowValue(text.charCodeAt(0), text.charCodeAt(1), text.charCodeAt(2)))
  }
}

/**
 * Windows frequent in output, with a weight for how frequent: runs of
 * blanks (indentation), digits (counters, times, sizes) and the common words
 * above. A table's hash is chosen so that no anchor's window shares a hash
 * with the heaviest of them: one that did (`SKB` with three spaces) woke a
 * check at every indented line.
 */
const frequentWindows = (): Map<number, number> => {
  const weights = new Map<number, number>()
  const blanks = [32, 9, 10]
  for (const a of blanks) for (const b of blanks) for (const c of blanks) weights.set(windowValue(a, b, c), a === 32 && b === 32 && c === 32 ? 1000 : 50)
  for (let n = 0; n < 1000; n++) {
    const d = String(n).padStart(3, "0")
    weights.set(windowValue(d.charCodeAt(0), d.charCodeAt(1), d.charCodeAt(2)), 20)
  }
  for (const value of commonValues) weights.set(value, 20)
  return weights
}
let frequent: { readonly values: Int32Array; readonly weights: Float64Array } | undefined

/**
 * The multiplier whose hashes of `values` (the anchors' windows) collide least with frequent windows that are not anchor windows themselves.
 * Hashes are 16 bits: one array of stamps marks a multiplier's hashes, so each try costs two passes over plain arrays, not sets
 * (it runs once per masker, at start-up, before the code is optimized).
 */
const chooseMultiplier = (values: ReadonlySet<number>): number => {
  if (frequent === undefined) {
    const weights = frequentWindows()
    frequent = { values: Int32Array.from(weights.keys()), weights: Float64Array.from(weights.values()) }
  }
  const own = Int32Array.from(values)
  // frequent windows that are anchor windows themselves cost nothing
  const counted = frequent.values.map((value, i) => (values.has(value) ? -1 : i)).filter((i) => i >= 0)
  const stamps = new Uint8Array(65536)
  let best = MULTIPLIERS[0]
  let bestCost = Infinity
  for (let m = 0; m < MULTIPLIERS.length; m++) {
    const multiplier = MULTIPLIERS[m]
    const stamp = m + 1
    for (let i = 0; i < own.length; i++) stamps[hashWindow(own[i], multiplier)] = stamp
    let cost = 0
    for (let i = 0; i < counted.length && cost < bestCost; i++) {
      const k = counted[i]
      if (stamps[hashWindow(frequent.values[k], multiplier)] === stamp) cost += frequent.weights[k]
    }
    if (cost < bestCost) {
      bestCost = cost
      best = multiplier
    }
    if (cost === 0) break
  }
  return best
}

/** How often the window at `offset` is likely to occur in output (higher is worse for a key). */
const windowScore = (bytes: Uint8Array, offset: number): number => {
  const base = (pairScore(bytes[offset], bytes[offset + 1]) * pairScore(bytes[offset + 1], bytes[offset + 2])) / frequency(bytes[offset + 1])
  // a window with a space joins the end of one word to the start of the next (`ng p` in `compiling
  // packages`): in prose and logs far more frequent than its letters suggest
  const spaced = bytes[offset] === 32 || bytes[offset + 1] === 32 || bytes[offset + 2] === 32 ? 20 : 1
  return base * spaced * (isFrequent(bytes, offset) ? 1000 : 1)
}

/** Whether the window at `offset` is a common word's or a number's (see `isNumeric`). */
const isFrequent = (bytes: Uint8Array, offset: number): boolean =>
  commonValues.has(windowValue(bytes[offset], bytes[offset + 1], bytes[offset + 2])) || isNumeric(bytes, offset)

/**
 * Whether a window is three digits, or two and a space (`033`, `49 `, ` 12`): counters, times
 * and sizes put these in nearly every line of a log, and a hex digest or dump is made of them.
 */
const isNumeric = (bytes: Uint8Array, offset: number): boolean => {
  const a = bytes[offset]
  const b = bytes[offset + 1]
  const c = bytes[offset + 2]
  return isDigit(b) && ((isDigit(a) && (isDigit(c) || c === 32)) || (a === 32 && isDigit(c)))
}

/**
 * A window other anchors are keyed by costs this much of its score, unless
 * it is frequent: the scan looks at it anyway, and each window the tables
 * hold wakes the scan wherever output shares its hash (the known values'
 * forms share many). A frequent one (`api`, `pat`) still counts whole: the
 * four bytes of an anchor keyed there would be in output too.
 */
const SHARED = 0.001

/** The offset of the rarest pair of adjacent windows in an anchor of four bytes or more, windows in `used` counted as shared. */
const rarestWindows = (bytes: Uint8Array, used?: ReadonlySet<number>): number => {
  const cost = (offset: number): number => {
    const own = windowScore(bytes, offset)
    const shared = used !== undefined && used.has(windowValue(bytes[offset], bytes[offset + 1], bytes[offset + 2]))
    return shared && !isFrequent(bytes, offset) ? own * SHARED : own
  }
  let best = 0
  let bestScore = Infinity
  for (let offset = 0; offset + 3 < bytes.length; offset++) {
    const score = cost(offset) + cost(offset + 1)
    if (score < bestScore) {
      bestScore = score
      best = offset
    }
  }
  return best
}

/** The two windows an anchor of four bytes or more is keyed by (exported for tests). */
export const keyWindowsOf = (text: string): [string, string] => {
  const best = rarestWindows(Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff))
  return [text.slice(best, best + 3), text.slice(best + 1, best + 4)]
}

/** The keys of all anchors, by kind, while they are being built. */
interface Keys {
  /** (window, anchor, offset) triples, hashed once the multiplier is chosen. */
  readonly windows: Array<number>
  readonly byPair: Map<number, Array<number>>
  readonly byShort: Map<number, Array<number>>
  /** The first bytes of two-byte anchors. */
  readonly firstFlags: Uint8Array
  /** The four bytes of each anchor of four bytes or more that its two windows cover, in every case it matches. */
  readonly quads: Array<number>
  /** The windows keyed so far, which a later anchor is keyed by when it has them (see `SHARED`). */
  readonly used: Set<number>
}

/** Keys an anchor by the pair at `offset` (every case of it, when it ignores case). */
const keyPair = (into: Map<number, Array<number>>, spec: AnchorSpec, bytes: Uint8Array, anchor: number, offset: number): void => {
  for (const first of variantsOf(spec, bytes[offset])) {
    for (const second of variantsOf(spec, bytes[offset + 1])) add(into, first | (second << 8), anchor, offset)
  }
}

/**
 * Keys an anchor by the window at `offset` (every case of it, when it
 * ignores case), hashed once the table's multiplier is chosen. The entry
 * holds the window itself too, so a window that only shares the hash (or a
 * group's other windows) costs one compare, not a look at each anchor.
 */
const keyWindow = (keys: Keys, spec: AnchorSpec, bytes: Uint8Array, anchor: number, offset: number): void => {
  for (const a of variantsOf(spec, bytes[offset])) {
    for (const b of variantsOf(spec, bytes[offset + 1])) {
      for (const c of variantsOf(spec, bytes[offset + 2])) {
        keys.windows.push(windowValue(a, b, c), anchor, offset)
        keys.used.add(windowValue(a, b, c))
      }
    }
  }
}

/** The windows' entries grouped by their hash under `multiplier`. */
const byHash = (entries: ReadonlyArray<number>, multiplier: number): Map<number, Array<number>> => {
  const groups = new Map<number, Array<number>>()
  for (let k = 0; k < entries.length; k += 3) {
    const key = hashWindow(entries[k], multiplier)
    const list = groups.get(key) ?? []
    list.push(entries[k], entries[k + 1], entries[k + 2])
    groups.set(key, list)
  }
  return groups
}

/** Keys an anchor (of `bytes`, already lowercased when it ignores case) as its length allows: see the comment at the top. */
const keyAnchor = (keys: Keys, spec: AnchorSpec, bytes: Uint8Array, anchor: number): void => {
  const length = bytes.length
  if (length < 2) return
  if (length === 2) {
    keyPair(keys.byShort, spec, bytes, anchor, 0)
    for (const first of variantsOf(spec, bytes[0])) keys.firstFlags[first] = 1
  } else if (length === 3) {
    keyWindow(keys, spec, bytes, anchor, 0)
    keyPair(keys.byPair, spec, bytes, anchor, 1)
  } else {
    const best = rarestWindows(bytes, keys.used)
    keyWindow(keys, spec, bytes, anchor, best)
    keyWindow(keys, spec, bytes, anchor, best + 1)
    for (const a of variantsOf(spec, bytes[best])) {
      for (const b of variantsOf(spec, bytes[best + 1])) {
        for (const c of variantsOf(spec, bytes[best + 2])) {
          for (const d of variantsOf(spec, bytes[best + 3])) keys.quads.push((a | (b << 8) | (c << 16) | (d << 24)) >>> 0)
        }
      }
    }
  }
}

/** A 16-bit hash of four bytes given as a 32-bit number (the kernel's second look, see kernel.wat). */
export const QUAD_MULTIPLIER = 0x9e3779b1
const hashQuad = (quad: number): number => Math.imul(quad, QUAD_MULTIPLIER) >>> 16

/** One flag per hash of the anchors' four-byte keys. */
const quadFlagsOf = (quads: ReadonlyArray<number>): Uint8Array => {
  const flags = new Uint8Array(65536)
  for (const quad of quads) flags[hashQuad(quad)] = 1
  return flags
}

/**
 * The window flags as the kernel reads them: 1 where a window of a
 * three-byte anchor hashes (a hit there is looked at as it is), 2 where
 * only windows of longer anchors do (a hit there is first checked against
 * their four-byte keys), 0 elsewhere.
 */
const windowKindsOf = (windows: Keyed, patterns: ReadonlyArray<Uint8Array>): Uint8Array => {
  const kinds = new Uint8Array(65536)
  for (let key = 0; key < 65536; key++) {
    if (windows.flags[key] === 0) continue
    const list = windows.groups[windows.table[key] - 1]
    let kind = 2
    for (let k = 0; k < list.length; k += 3) if (patterns[list[k + 1]].length < 4) kind = 1
    kinds[key] = kind
  }
  return kinds
}

/**
 * The pairs the first pass looks for at even positions: three-byte anchors' last two, two-byte
 * anchors, and, for a two-byte anchor at an odd position, every pair that ends with its first byte.
 */
const pairFlagsOf = (keys: Keys): Uint8Array => {
  const pairFlags = new Uint8Array(65536)
  for (const key of [...keys.byPair.keys(), ...keys.byShort.keys()]) pairFlags[key] = 1
  for (let first = 0; first < 256; first++) {
    if (keys.firstFlags[first] === 0) continue
    for (let before = 0; before < 256; before++) pairFlags[before | (first << 8)] = 1
  }
  return pairFlags
}

/** What a scan looks for, built once from the specs. */
interface Tables {
  /** Each anchor's bytes, lowercased when it ignores case. */
  readonly patterns: ReadonlyArray<Uint8Array>
  readonly folded: ReadonlyArray<boolean>
  /** The anchors' keys, to build a scan for more anchors from (see `extendAnchorScan`). */
  readonly keys: Keys
  windows: Keyed
  /** The windows' flags for the kernel (see `windowKindsOf`), and the flags of the longer anchors' four-byte keys. */
  windowKinds: Uint8Array
  readonly quadFlags: Uint8Array
  /** What the windows are hashed by: chosen against frequent windows, then again against the output itself (see `rethink`). */
  multiplier: number
  /** (window, anchor, offset) triples, to hash again by another multiplier. */
  readonly entries: ReadonlyArray<number>
  /** The anchors' windows, and their flags by each multiplier tried. */
  readonly values: ReadonlySet<number>
  readonly flagsBy: Map<number, Uint8Array>
  /** Words scanned, and words with a window or pair set, since the multiplier was last looked at; words between looks. */
  scanned: number
  flagged: number
  interval: number
  readonly pairs: Keyed
  readonly shorts: Keyed
  readonly firstFlags: Uint8Array
  readonly pairFlags: Uint8Array
  readonly hasShort: boolean
  readonly empty: boolean
  /** Word indexes where a window or pair is set, kept between scans. */
  hits: Int32Array
  /** The byte kernel's first pass over these tables: made at the first scan long enough to want it; null where there is no kernel. */
  collector: Kernel.Collector | null | undefined
}

/** An anchor's bytes, lowercased when it ignores case. */
const patternOf = (spec: AnchorSpec): Uint8Array =>
  Uint8Array.from(spec.ignoreCase ? spec.text.toLowerCase() : spec.text, (c) => c.charCodeAt(0) & 0xff)

/** Keys `specs` into `keys`, their bytes into `patterns` and `folded`, numbered from `first`. */
const keySpecs = (
  keys: Keys,
  patterns: Array<Uint8Array>,
  folded: Array<boolean>,
  specs: ReadonlyArray<AnchorSpec>,
  first: number
): void => {
  specs.forEach((spec, index) => {
    const bytes = patternOf(spec)
    patterns.push(bytes)
    folded.push(spec.ignoreCase)
    keyAnchor(keys, spec, bytes, first + index)
  })
}

/** The tables for anchors already keyed. */
const tablesOf = (patterns: ReadonlyArray<Uint8Array>, folded: ReadonlyArray<boolean>, keys: Keys): Tables => {
  const values = new Set<number>()
  for (let k = 0; k < keys.windows.length; k += 3) values.add(keys.windows[k])
  const multiplier = chooseMultiplier(values)
  const windows = keyed(byHash(keys.windows, multiplier))
  const flagsBy = new Map([[multiplier, windows.flags]])
  const pairs = keyed(keys.byPair)
  const shorts = keyed(keys.byShort)
  return {
    patterns,
    folded,
    keys,
    windows,
    windowKinds: windowKindsOf(windows, patterns),
    quadFlags: quadFlagsOf(keys.quads),
    multiplier,
    entries: keys.windows,
    values,
    flagsBy,
    scanned: 0,
    flagged: 0,
    interval: RETHINK_WORDS,
    pairs,
    shorts,
    firstFlags: keys.firstFlags,
    pairFlags: pairFlagsOf(keys),
    hasShort: keys.byShort.size > 0,
    empty: windows.groups.length === 0 && pairs.groups.length === 0 && shorts.groups.length === 0,
    hits: new Int32Array(0),
    collector: undefined
  }
}

const makeTables = (specs: ReadonlyArray<AnchorSpec>): Tables => {
  const patterns: Array<Uint8Array> = []
  const folded: Array<boolean> = []
  const keys: Keys = { windows: [], byPair: new Map(), byShort: new Map(), firstFlags: new Uint8Array(256), quads: [], used: new Set() }
  keySpecs(keys, patterns, folded, specs, 0)
  return tablesOf(patterns, folded, keys)
}

/** A scan over `tables`. */
const scanOver = (tables: Tables): AnchorScan => {
  const run: AnchorScan = (bytes, visit) => {
    if (bytes.length < 2 || tables.empty) return
    scan(tables, {
      bytes,
      n: bytes.length,
      visit,
      patterns: tables.patterns,
      folded: tables.folded,
      pairs: tables.pairs,
      shorts: tables.shorts,
      windows: tables.windows,
      multiplier: tables.multiplier,
      firstFlags: tables.firstFlags
    })
  }
  return Object.assign(run, { tables })
}

const tablesOfScan = (scan: AnchorScan): Tables => (scan as AnchorScan & { readonly tables: Tables }).tables

/**
 * Inputs up to this many bytes are scanned without the tables while they
 * are not built, and until this many bytes were scanned so: building the
 * tables costs 10-20 ms at start-up (before their code is optimized), a
 * scan without them some 10 microseconds a KiB where one through them
 * takes 2 or 3. So a program that masks only short outputs never builds
 * them, and one that masks many builds them once that would have paid.
 */
const SMALL_SCAN_BYTES = 16 * 1024
const SMALL_SCAN_BUDGET = 1024 * 1024

/** The anchors by their first two bytes (every case of them, for one that ignores case), for scans of short inputs. */
interface Small {
  readonly patterns: ReadonlyArray<Uint8Array>
  readonly folded: ReadonlyArray<boolean>
  /** 1 where some anchor starts with the pair (first byte low), so most positions cost one load. */
  readonly pairFlags: Uint8Array
  readonly byPair: Map<number, Array<number>>
}

const smallOf = (specs: ReadonlyArray<AnchorSpec>): Small => {
  const patterns: Array<Uint8Array> = []
  const folded: Array<boolean> = []
  const pairFlags = new Uint8Array(65536)
  const byPair = new Map<number, Array<number>>()
  specs.forEach((spec, anchor) => {
    const bytes = patternOf(spec)
    patterns.push(bytes)
    folded.push(spec.ignoreCase)
    // an anchor of one byte is never keyed, so never found (see `keyAnchor`)
    if (bytes.length < 2) return
    for (const first of variantsOf(spec, bytes[0])) {
      for (const second of variantsOf(spec, bytes[1])) {
        const pair = first | (second << 8)
        pairFlags[pair] = 1
        const list = byPair.get(pair)
        if (list === undefined) byPair.set(pair, [anchor])
        else list.push(anchor)
      }
    }
  })
  return { patterns, folded, pairFlags, byPair }
}

/** Every anchor occurrence in `bytes`, found by trying at each position the anchors that start with its pair. */
const scanSmall = (small: Small, bytes: Uint8Array, visit: (anchor: number, position: number) => void): void => {
  const pass = { bytes, patterns: small.patterns, folded: small.folded }
  const flags = small.pairFlags
  for (let i = 0; i + 1 < bytes.length; i++) {
    const pair = bytes[i] | (bytes[i + 1] << 8)
    if (flags[pair] === 0) continue
    for (const anchor of small.byPair.get(pair)!) if (matches(pass, anchor, i)) visit(anchor, i)
  }
}

/**
 * Builds a scan for the anchors in `specs`; an anchor's index in `specs` is
 * the one `visit` gets. Its tables are built at the first scan of more than
 * `SMALL_SCAN_BYTES`, past `SMALL_SCAN_BUDGET` bytes scanned without them,
 * or when another scan is made from them; until then inputs are scanned by
 * the anchors their byte pairs start, with the same findings.
 */
export const makeAnchorScan = (specs: ReadonlyArray<AnchorSpec>): AnchorScan => {
  let over: AnchorScan | undefined
  let small: Small | undefined
  let scannedSmall = 0
  const built = (): AnchorScan => {
    if (over === undefined) {
      over = scanOver(makeTables(specs))
      // scans go through the tables from now on
      small = undefined
    }
    return over
  }
  const run: AnchorScan = (bytes, visit) => {
    if (over === undefined && bytes.length <= SMALL_SCAN_BYTES && scannedSmall + bytes.length <= SMALL_SCAN_BUDGET) {
      scannedSmall += bytes.length
      return scanSmall(small ??= smallOf(specs), bytes, visit)
    }
    built()(bytes, visit)
  }
  return Object.defineProperty(run, "tables", { get: () => tablesOfScan(built()) })
}

/** How many anchors a scan looks for. */
export const anchorCount = (scan: AnchorScan): number => tablesOfScan(scan).patterns.length

/**
 * A scan for the anchors of `base` and those of `more` (numbered after
 * them, each four bytes or more), in the same one pass. Made from the keys `base` holds, with the
 * multiplier it hashes by now, so it costs a few table copies, not a
 * build: for anchors a stream learns while it runs (see `repeated`).
 */
export const extendAnchorScan = (base: AnchorScan | undefined, more: ReadonlyArray<AnchorSpec>): AnchorScan => {
  if (base === undefined) return makeAnchorScan(more)
  const from = tablesOfScan(base)
  // the pairs' tables are the base's: an anchor added is keyed by its windows alone
  if (more.some((spec) => spec.text.length < 4)) throw new RangeError("an anchor added to a scan must be four bytes or more")
  const added: Keys = { windows: [], byPair: new Map(), byShort: new Map(), firstFlags: from.firstFlags, quads: [], used: new Set() }
  const patterns = [...from.patterns]
  const folded = [...from.folded]
  keySpecs(added, patterns, folded, more, from.patterns.length)
  const keys: Keys = {
    windows: [...from.keys.windows, ...added.windows],
    byPair: from.keys.byPair,
    byShort: from.keys.byShort,
    firstFlags: from.firstFlags,
    quads: [...from.keys.quads, ...added.quads],
    used: from.keys.used
  }
  // the base's tables as they are now (its multiplier may have changed since it was built), with the added windows
  const multiplier = from.multiplier
  const windows = withEntries(from.windows, byHash(added.windows, multiplier))
  const windowKinds = new Uint8Array(from.windowKinds)
  const quadFlags = new Uint8Array(from.quadFlags)
  const values = new Set(from.values)
  for (let k = 0; k < added.windows.length; k += 3) {
    values.add(added.windows[k])
    const key = hashWindow(added.windows[k], multiplier)
    if (windowKinds[key] === 0) windowKinds[key] = 2
  }
  for (const quad of added.quads) quadFlags[hashQuad(quad)] = 1
  return scanOver({
    ...from,
    patterns,
    folded,
    keys,
    windows,
    windowKinds,
    quadFlags,
    entries: keys.windows,
    values,
    flagsBy: new Map([[multiplier, windows.flags]]),
    scanned: 0,
    flagged: 0,
    empty: from.empty && more.length === 0,
    hits: new Int32Array(0),
    collector: undefined
  })
}

/** `table` with more entries, grouped by their keys, added to its groups: a new table, `table` unchanged. */
const withEntries = (table: Keyed, more: Map<number, Array<number>>): Keyed => {
  const flags = new Uint8Array(table.flags)
  const groups = [...table.groups]
  let index: Uint16Array | Uint32Array = table.table.slice()
  if (groups.length + more.size >= 65535 && index instanceof Uint16Array) index = Uint32Array.from(index)
  for (const [key, list] of more) {
    const at = index[key]
    if (at === 0) {
      groups.push(Int32Array.from(list))
      index[key] = groups.length
      flags[key] = 1
    } else {
      const group = new Int32Array(groups[at - 1].length + list.length)
      group.set(groups[at - 1])
      group.set(list, groups[at - 1].length)
      groups[at - 1] = group
    }
  }
  return { flags, table: index, groups }
}

/** One scan: the bytes, where it reports what it finds, and the tables it reads at every candidate, each one load away. */
interface Pass {
  readonly bytes: Uint8Array
  readonly n: number
  readonly visit: (anchor: number, position: number) => void
  readonly patterns: ReadonlyArray<Uint8Array>
  readonly folded: ReadonlyArray<boolean>
  readonly pairs: Keyed
  readonly shorts: Keyed
  readonly windows: Keyed
  readonly multiplier: number
  readonly firstFlags: Uint8Array
}

/** Whether anchor `anchor` occurs at `position`. */
const matches = (pass: Pick<Pass, "bytes" | "patterns" | "folded">, anchor: number, position: number): boolean => {
  const bytes = pass.bytes
  const pattern = pass.patterns[anchor]
  const length = pattern.length
  if (position < 0 || position + length > bytes.length) return false
  if (pass.folded[anchor]) {
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

/** Visits each anchor keyed by window hash `key` whose window is `value`, found at `i`, where it occurs. */
const checkWindow = (pass: Pass, key: number, value: number, i: number): void => {
  const group = pass.windows.table[key]
  if (group === 0) return
  const list = pass.windows.groups[group - 1]
  for (let k = 0; k < list.length; k += 3) {
    if (list[k] !== value) continue
    const anchor = list[k + 1]
    const position = i - list[k + 2]
    if (matches(pass, anchor, position)) pass.visit(anchor, position)
  }
}

/** Visits each anchor keyed by `key` that occurs where the key, found at `i`, puts it. */
const check = (pass: Pass, keys: Keyed, key: number, i: number): void => {
  const group = keys.table[key]
  if (group === 0) return
  const list = keys.groups[group - 1]
  for (let k = 0; k < list.length; k += 2) {
    const anchor = list[k]
    const position = i - list[k + 1]
    if (matches(pass, anchor, position)) pass.visit(anchor, position)
  }
}

/** At a position of the scanned parity: every kind of key. */
const at = (pass: Pass, i: number): void => {
  const bytes = pass.bytes
  const pair = bytes[i] | (bytes[i + 1] << 8)
  if (pass.pairs.flags[pair] !== 0) check(pass, pass.pairs, pair, i)
  if (pass.shorts.flags[pair] !== 0) check(pass, pass.shorts, pair, i)
  if (i + 2 < pass.n) {
    const value = pair | (bytes[i + 2] << 16)
    const window = hashWindow(value, pass.multiplier)
    if (pass.windows.flags[window] !== 0) checkWindow(pass, window, value, i)
  }
}

/** At a position of the other parity: two-byte anchors only (longer ones are found at their even offset). */
const atOther = (pass: Pass, i: number): void => {
  const bytes = pass.bytes
  if (i + 1 >= pass.n || pass.firstFlags[bytes[i]] === 0) return
  const pair = bytes[i] | (bytes[i + 1] << 8)
  if (pass.shorts.flags[pair] !== 0) check(pass, pass.shorts, pair, i)
}

/** Looks at every position in `[from, to)` that has a byte after it, one at a time. */
const scanEach = (pass: Pass, hasShort: boolean, parity: number, from: number, to: number): void => {
  const end = Math.min(to, pass.n - 1)
  for (let i = from; i < end; i++) {
    if ((i & 1) === parity) at(pass, i)
    else if (hasShort) atOther(pass, i)
  }
}

/**
 * Finds every anchor in the bytes: the positions up to the first aligned
 * word one at a time, then the words whose windows or pairs are set, then
 * the last few positions one at a time.
 */
const scan = (tables: Tables, pass: Pass): void => {
  const { bytes, n } = pass
  const hasShort = tables.hasShort
  const start = (4 - (bytes.byteOffset & 3)) & 3
  // positions `start`, `start + 2`, ...: one parity throughout
  const parity = start & 1
  if (!littleEndian || n < start + 16) {
    scanEach(pass, hasShort, parity, 0, n)
    return
  }
  scanEach(pass, hasShort, parity, 0, start)
  const count = (n - start) >>> 2
  const atWord = (k: number): void => {
    const base = start + 4 * k
    at(pass, base)
    at(pass, base + 2)
    if (hasShort) {
      atOther(pass, base + 1)
      atOther(pass, base + 3)
    }
  }
  // words [0, count - 1): the last one's second window ends past it, so it is looked at one position at a time
  let found = 0
  if (tables.collector === undefined && count >= KERNEL_WORDS) tables.collector = Kernel.collector(tables.pairFlags, tables.quadFlags) ?? null
  if (tables.collector && count >= KERNEL_WORDS) {
    tables.collector.collect(bytes, start, count - 1, tables.windowKinds, tables.multiplier, (k) => {
      found++
      atWord(k)
    })
  } else {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + start, count)
    if (tables.hits.length < count) tables.hits = new Int32Array(count)
    const hits = tables.hits
    found = collect(words, tables.windows.flags, tables.multiplier, tables.pairFlags, hits)
    for (let h = 0; h < found; h++) atWord(hits[h])
  }
  scanEach(pass, hasShort, parity, start + 4 * Math.max(0, count - 1), n)
  tables.scanned += count
  tables.flagged += found
  if (tables.scanned >= tables.interval) rethink(tables, new Uint32Array(bytes.buffer, bytes.byteOffset + start, count))
}

/** Scans of at least this many words take the byte kernel's first pass, where there is one; shorter ones are cheaper in JavaScript. */
const KERNEL_WORDS = 256

/** Words scanned between looks at the multiplier (4 MiB), and at most after looks that changed nothing (64 MiB). */
const RETHINK_WORDS = 1 << 20
const MAX_RETHINK_WORDS = 1 << 24
/** Words of output each multiplier is tried on. */
const SAMPLE_WORDS = 1 << 13

/** Words of `words` (up to `limit`) where a window, hashed by `multiplier`, is set in `flags`. */
const windowHits = (words: Uint32Array, flags: Uint8Array, multiplier: number, limit: number): number => {
  let n = 0
  for (let k = 0; k + 1 < limit; k++) {
    const word = words[k]
    const next = words[k + 1]
    n += flags[Math.imul(word & 0xffffff, multiplier) >>> 16] | flags[Math.imul((word >>> 16) | ((next & 0xff) << 16), multiplier) >>> 16]
  }
  return n
}

/**
 * Every 4 MiB, when more than one word in 128 woke a check, tries every
 * multiplier on the latest output and takes one that wakes a fifth fewer or
 * better: no fixed list of frequent windows knows every output (a log whose
 * every line ends in `ms)` shared a hash with an anchor's window). A look
 * that changes nothing doubles the wait for the next, up to 64 MiB. What a
 * scan finds never depends on the multiplier, only what it costs.
 */
const rethink = (tables: Tables, words: Uint32Array): void => {
  const busy = tables.flagged * 128 > tables.scanned
  tables.scanned = 0
  tables.flagged = 0
  if (!busy) return
  tables.interval = Math.min(MAX_RETHINK_WORDS, tables.interval * 2)
  const limit = Math.min(words.length, SAMPLE_WORDS)
  let best = tables.multiplier
  let bestHits = windowHits(words, tables.windows.flags, best, limit)
  const now = bestHits
  for (const multiplier of MULTIPLIERS) {
    if (multiplier === tables.multiplier) continue
    let flags = tables.flagsBy.get(multiplier)
    if (flags === undefined) {
      flags = new Uint8Array(65536)
      for (const value of tables.values) flags[hashWindow(value, multiplier)] = 1
      tables.flagsBy.set(multiplier, flags)
    }
    const hits = windowHits(words, flags, multiplier, limit)
    if (hits < bestHits) {
      bestHits = hits
      best = multiplier
    }
  }
  if (best === tables.multiplier || bestHits * 5 > now * 4) return
  tables.multiplier = best
  tables.windows = keyed(byHash(tables.entries, best))
  tables.windowKinds = windowKindsOf(tables.windows, tables.patterns)
  tables.interval = RETHINK_WORDS
}

/** The multiplier a scan hashes windows by now (for tests). */
export const multiplierOf = (scan: AnchorScan): number => tablesOfScan(scan).multiplier
