import { describe, expect, it } from "@effect/vitest"
import { keyWindowsOf, makeAnchorScan } from "../src/internal/secrets/anchors.js"
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

describe("anchor scan", () => {
  it.prop("finds every anchor occurrence once, at any offset in memory", [
    fc.array(
      fc.record({ text: fc.string({ unit: fc.constantFrom(...alphabet), minLength: 2, maxLength: 6 }), ignoreCase: fc.boolean() }),
      { minLength: 1, maxLength: 12 }
    ),
    fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 300 }),
    fc.nat(7)
  ], ([anchors, text, shift]) => {
    const backing = new Uint8Array(text.length + shift)
    for (let i = 0; i < text.length; i++) backing[shift + i] = text.charCodeAt(i)
    const bytes = backing.subarray(shift)
    const found: Array<string> = []
    makeAnchorScan(anchors)(bytes, (anchor, position) => found.push(`${anchor}@${position}`))
    expect(found.sort()).toEqual(naive(bytes, anchors))
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
    const found: Array<string> = []
    makeAnchorScan(anchors)(bytes, (anchor, position) => found.push(`${anchor}@${position}`))
    expect(found.sort()).toEqual(naive(bytes, anchors))
  }, { fastCheck: { numRuns: 1000 } })

  it("keys an anchor by windows without a space when it has them: a space joins common words (`compiling packages` holds `ng p`)", () => {
    for (const anchor of ["Floating point", "Segmentation fault", "Permission denied", "multiple definition", "undefined symbol", "No space left"]) {
      const windows = keyWindowsOf(anchor)
      expect(windows.join("")).not.toContain(" ")
      expect(anchor).toContain(windows[0] + windows[1].slice(2))
    }
  })
})
