import { describe, expect, it } from "@effect/vitest"
import { keyWindowsOf, makeAnchorScan, multiplierOf } from "../src/internal/secrets/anchors.js"
import { FastCheck as fc } from "effect"

// The anchor scan finds every occurrence of every anchor exactly once, at
// any alignment of the bytes in memory, with and without case folding, and
// whether or not the set has two-byte anchors (scanned at every position).

const naive = (bytes: Uint8Array, anchors: ReadonlyArray<{ text: string; ignoreCase: boolean }>) => {
  const out: Array<string> = []
  const text = Array.from(bytes, (b) => String.fromCharCode(b)).join("")
  anchors.forEach((anchor, index) => {
    if (anchor.text.length < 2) return
    const hay = anchor.ignoreCase ? text.replace(/[A-Z]/g, (c) => c.toLowerCase()) : text
    const needle = anchor.ignoreCase ? anchor.text.toLowerCase() : anchor.text
    for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + 1)) out.push(`${index}@${i}`)
  })
  return out.sort()
}

const alphabet = "abcKEYkey=_-:0123456789 \n"

/**
 * What a scan finds, both ways it can run: a new scan looks at a short input
 * byte by byte, and one whose tables are built (as after a long input)
 * through the tables, in JavaScript or the byte kernel; the two must agree.
 */
const bothWays = (anchors: ReadonlyArray<{ text: string; ignoreCase: boolean }>, bytes: Uint8Array) => {
  const small: Array<string> = []
  makeAnchorScan(anchors)(bytes, (anchor, position) => small.push(`${anchor}@${position}`))
  const tabled = makeAnchorScan(anchors)
  // asking for its multiplier builds its tables
  multiplierOf(tabled)
  const found: Array<string> = []
  tabled(bytes, (anchor, position) => found.push(`${anchor}@${position}`))
  return { small: small.sort(), tabled: found.sort() }
}

describe("anchor scan", () => {
  it.prop("finds every anchor occurrence once, at any offset in memory", [
    fc.array(
      fc.record({ text: fc.string({ unit: fc.constantFrom(...alphabet), minLength: 2, maxLength: 6 }), ignoreCase: fc.boolean() }),
      { minLength: 1, maxLength: 12 }
    ),
    // short scans (JavaScript) and ones long enough for the byte kernel's first pass
    fc.oneof(
      fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 300 }),
      fc.string({ unit: fc.constantFrom(...alphabet), minLength: 1100, maxLength: 4000 })
    ),
    fc.nat(7)
  ], ([anchors, text, shift]) => {
    const backing = new Uint8Array(text.length + shift)
    for (let i = 0; i < text.length; i++) backing[shift + i] = text.charCodeAt(i)
    const bytes = backing.subarray(shift)
    const { small, tabled } = bothWays(anchors, bytes)
    expect(tabled).toEqual(naive(bytes, anchors))
    expect(small).toEqual(tabled)
  }, { fastCheck: { numRuns: 500 } })

  it.prop("finds anchors planted at the start, the end and every alignment", [
    fc.array(fc.string({ unit: fc.constantFrom(...alphabet), minLength: 2, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
    fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 80 }),
    fc.nat(5),
    fc.nat(7),
    fc.boolean()
  ], ([texts, filler, tail, shift, ignoreCase]) => {
    const anchors = texts.map((text) => ({ text, ignoreCase }))
    const text = texts[0] + filler + texts[texts.length - 1] + "=".repeat(tail)
    const backing = new Uint8Array(text.length + shift)
    for (let i = 0; i < text.length; i++) backing[shift + i] = text.charCodeAt(i)
    const bytes = backing.subarray(shift)
    const { small, tabled } = bothWays(anchors, bytes)
    expect(tabled).toEqual(naive(bytes, anchors))
    expect(small).toEqual(tabled)
  }, { fastCheck: { numRuns: 1000 } })

  it("finds the same in a short input before and after its tables are built, by a long input or by many short ones", () => {
    const anchors = [{ text: "key=", ignoreCase: true }, { text: "ab", ignoreCase: false }]
    const finder = () => {
      const scan = makeAnchorScan(anchors)
      return (bytes: Uint8Array) => {
        const out: Array<string> = []
        scan(bytes, (anchor, position) => out.push(`${anchor}@${position}`))
        return out.sort()
      }
    }
    const short = new TextEncoder().encode("x KEY=1 ab ".repeat(100))
    const long = new TextEncoder().encode("x KEY=1 ab ".repeat(2000))
    // a scan of more than 16 KiB builds the tables; a short input is then scanned through them
    const byLong = finder()
    expect(byLong(short)).toEqual(naive(short, anchors))
    expect(byLong(long)).toEqual(naive(long, anchors))
    expect(byLong(short)).toEqual(naive(short, anchors))
    // so do short inputs past 1 MiB in all
    const byMany = finder()
    for (let i = 0; i < 1000; i++) expect(byMany(short)).toEqual(naive(short, anchors))
  })

  it("keys an anchor by windows without a space when it has them: a space joins common words (`compiling packages` holds `ng p`)", () => {
    for (const anchor of ["Floating point", "Segmentation fault", "Permission denied", "multiple definition", "undefined symbol", "No space left"]) {
      const windows = keyWindowsOf(anchor)
      expect(windows.join("")).not.toContain(" ")
      expect(anchor).toContain(windows[0] + windows[1].slice(2))
    }
  })

  it("hashes by another multiplier when the output keeps waking checks with a window that only shares an anchor's hash", () => {
    const anchors = [{ text: "zqxv", ignoreCase: false }, { text: "jqk", ignoreCase: false }]
    const scan = makeAnchorScan(anchors)
    const first = multiplierOf(scan)
    const hash = (a: string) => Math.imul(a.charCodeAt(0) | (a.charCodeAt(1) << 8) | (a.charCodeAt(2) << 16), first) >>> 16
    // a window of ordinary letters with the same hash as the three-byte anchor's key under the first
    // multiplier (a longer anchor's twin is turned away by the kernel's look at its four-byte key, below)
    const keys = new Set(["jqk"].map(hash))
    const letters = "abcdefghijklmnopqrstuvwxyz"
    let twin = ""
    for (const a of letters) {
      for (const b of letters) for (const c of letters) if (twin === "" && a + b + c !== "jqk" && keys.has(hash(a + b + c))) twin = a + b + c
    }
    expect(twin).not.toBe("")
    // lines of it at every alignment, with the anchors planted now and then, in 1 MiB chunks as a stream masks them
    const line = `${twin} ${twin}a ${twin}bb ${twin}ccc\n`
    const text = Array.from({ length: 6 * 1024 * 1024 / line.length }, (_, i) => (i % 5000 === 0 ? `zqxv jqk ${line}` : line)).join("")
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0))
    const found: Array<string> = []
    for (let at = 0; at < bytes.length; at += 1024 * 1024) {
      const chunk = bytes.subarray(at, at + 1024 * 1024)
      scan(chunk, (anchor, position) => found.push(`${anchor}@${at + position}`))
    }
    expect(multiplierOf(scan)).not.toBe(first)
    // what it finds does not change with the multiplier: every occurrence, once
    const expected: Array<string> = []
    for (let at = 0; at < bytes.length; at += 1024 * 1024) {
      const chunk = text.slice(at, at + 1024 * 1024)
      for (const [index, a] of anchors.entries()) {
        for (let i = chunk.indexOf(a.text); i !== -1; i = chunk.indexOf(a.text, i + 1)) expected.push(`${index}@${at + i}`)
      }
    }
    expect(found.sort()).toEqual(expected.sort())
    expect(found.length).toBeGreaterThan(0)
  })

  it("wakes no check for a window that only shares a longer anchor's hash: the kernel looks at its four-byte key first", () => {
    const anchors = [{ text: "zqxv", ignoreCase: false }, { text: "Wmjq", ignoreCase: true }]
    const scan = makeAnchorScan(anchors)
    const first = multiplierOf(scan)
    const hash = (a: string) => Math.imul(a.charCodeAt(0) | (a.charCodeAt(1) << 8) | (a.charCodeAt(2) << 16), first) >>> 16
    const keys = new Set([...keyWindowsOf("zqxv"), ...keyWindowsOf("wmjq")].map(hash))
    const letters = "abcdefghijklmnopqrstuvwxyz"
    let twin = ""
    for (const a of letters) for (const b of letters) for (const c of letters) if (twin === "" && keys.has(hash(a + b + c))) twin = a + b + c
    expect(twin).not.toBe("")
    const line = `${twin} ${twin}a ${twin}bb ${twin}ccc\n`
    const text = Array.from({ length: 6 * 1024 * 1024 / line.length }, (_, i) => (i % 5000 === 0 ? `zqxv WMJQ wmjq ${line}` : line)).join("")
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0))
    const found: Array<string> = []
    for (let at = 0; at < bytes.length; at += 1024 * 1024) {
      scan(bytes.subarray(at, at + 1024 * 1024), (anchor, position) => found.push(`${anchor}@${at + position}`))
    }
    // so the hash never needed changing, and every occurrence is still found
    expect(multiplierOf(scan)).toBe(first)
    const expected: Array<string> = []
    for (let at = 0; at < bytes.length; at += 1024 * 1024) {
      const chunk = text.slice(at, at + 1024 * 1024)
      for (const [index, needle] of [[0, "zqxv"], [1, "wmjq"], [1, "WMJQ"]] as const) {
        for (let i = chunk.indexOf(needle); i !== -1; i = chunk.indexOf(needle, i + 1)) expected.push(`${index}@${at + i}`)
      }
    }
    expect(found.sort()).toEqual(expected.sort())
    expect(found.length).toBe(3 * Math.ceil(text.length / line.length / 5000))
  })
})
