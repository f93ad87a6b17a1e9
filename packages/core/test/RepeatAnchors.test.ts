import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { anchorCount, extendAnchorScan, makeAnchorScan } from "../src/internal/secrets/anchors.js"

// The values a stream remembers are found in the same one pass as the
// rules' anchors: a scan made from the engine's scan with the values added
// as anchors. These tests hold that scan to a plain search, and the values
// a scan first masks twice to the same bytes whatever the chunks.

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(29)
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const randomValue = (length: number) => Array.from({ length }, () => ALNUM[Math.floor(random() * 62)]).join("")
const stars = (s: string) => "*".repeat(s.length)
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Every (anchor, position) where `anchors[anchor]` occurs in `text`, by a plain search. */
const plainSearch = (anchors: ReadonlyArray<string>, text: string): Array<string> => {
  const found: Array<string> = []
  anchors.forEach((anchor, index) => {
    for (let at = text.indexOf(anchor); at !== -1; at = text.indexOf(anchor, at + 1)) found.push(`${index}@${at}`)
  })
  return found.sort()
}

const scanned = (scan: ReturnType<typeof makeAnchorScan>, text: string): Array<string> => {
  const found: Array<string> = []
  scan(Uint8Array.from(text, (c) => c.charCodeAt(0)), (anchor, position) => found.push(`${anchor}@${position}`))
  return found.sort()
}

describe("a scan with anchors added", () => {
  const base = ["token", "ghp_", "AKIA", "-----BEGIN", "password="]
  const values = Array.from({ length: 60 }, (_, i) => randomValue(16 + (i % 5) * 20))
  // log lines with the anchors and the values planted, long enough for the byte kernel's pass
  const lines: Array<string> = []
  for (let i = 0; i < 4000; i++) {
    const planted = i % 7 === 0 ? ` ${values[i % values.length]}` : i % 11 === 0 ? ` ${base[i % base.length]}=${randomValue(20)}` : ""
    lines.push(`[${String(i).padStart(9, "0")}] compiling packages/pkg-${i % 313}/src/file.ts ok (${i % 1000} ms)${planted}`)
  }
  // a value cut short, and two values overlapping, are found as a plain search finds them
  lines.push(values[0]!.slice(0, 15), `${values[1]}${values[1]}`, values[2]!.slice(1))
  const text = lines.join("\n")

  it("finds every place of every anchor, the base's and the added ones, as a plain search does", () => {
    const scan = extendAnchorScan(makeAnchorScan(base.map((text) => ({ text, ignoreCase: false }))), values.map((text) => ({ text, ignoreCase: false })))
    expect(anchorCount(scan)).toBe(base.length + values.length)
    const found = scanned(scan, text)
    expect(found).toEqual(plainSearch([...base, ...values], text))
    expect(found.filter((f) => Number(f.split("@")[0]) >= base.length).length).toBeGreaterThan(500)
  })

  it("leaves the scan it was made from as it was", () => {
    const scan = makeAnchorScan(base.map((text) => ({ text, ignoreCase: false })))
    const before = scanned(scan, text)
    extendAnchorScan(scan, values.map((text) => ({ text, ignoreCase: false })))
    expect(scanned(scan, text)).toEqual(before)
    expect(before).toEqual(plainSearch(base, text))
  })

  it("refuses an added anchor shorter than four bytes, which it could not key", () => {
    expect(() => extendAnchorScan(makeAnchorScan([{ text: "token", ignoreCase: false }]), [{ text: "abc", ignoreCase: false }])).toThrow(RangeError)
  })
})

describe("a value masked twice in one window", () => {
  const masker = Secrets.unsafeMakeMasker()

  it("stays before its first masked place and is masked after it, among many other values, at every chunk size", () => {
    const value = randomValue(22)
    const others = Array.from({ length: 40 }, () => randomValue(24))
    // the value masked twice before the others are first masked: each keeps its own first place
    const text = [
      `echo ${value}`,
      `token: ${value}`,
      `token: ${value}`,
      `echo ${others[0]}`,
      ...others.map((other, i) => `SERVICE_${i}_TOKEN=${other}`),
      `copy ${value}`,
      `again ${value} and ${others[3]}`
    ].join("\n") + "\n"
    const whole = masker.maskText(text)
    expect(whole.startsWith(`echo ${value}\n`)).toBe(true)
    expect(whole).toContain(`echo ${others[0]}\n`)
    expect(whole).toContain(`SERVICE_0_TOKEN=${stars(others[0]!)}\n`)
    expect(whole).toContain(`copy ${stars(value)}\n`)
    expect(whole).toContain(`again ${stars(value)} and ${stars(others[3]!)}\n`)
    const bytes = encoder.encode(text)
    for (const size of [1, 7, 64, 333, 4096, bytes.length]) {
      const stream = masker.stream()
      const parts: Array<Uint8Array> = []
      for (let at = 0; at < bytes.length; at += size) parts.push(stream.push(bytes.subarray(at, at + size)))
      parts.push(stream.end())
      expect(decoder.decode(Buffer.concat(parts)), `chunks of ${size}`).toBe(whole)
    }
  })
})
