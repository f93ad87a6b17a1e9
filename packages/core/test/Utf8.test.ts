import { describe, expect, it } from "@effect/vitest"
import * as Utf8 from "@spillway/core/Utf8"
import { FastCheck as fc } from "effect"

const enc = new TextEncoder()

describe("Utf8", () => {
  it("counts UTF-8 bytes like TextEncoder, lone surrogates included", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      expect(Utf8.byteLength(s)).toBe(enc.encode(s).length)
    }))
    expect(Utf8.byteLength("a\u00e9\u20ac\u{1F600}")).toBe(1 + 2 + 3 + 4)
    expect(Utf8.byteLength("\ud800")).toBe(3)
  })

  it("counts JSON-escaped bytes like JSON.stringify", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      expect(Utf8.jsonByteLength(s)).toBe(enc.encode(JSON.stringify(s)).length - 2)
    }))
    expect(Utf8.jsonByteLength("a\"b\\c\n\u0001")).toBe(1 + 2 + 1 + 2 + 1 + 2 + 6)
  })

  it("counts code points", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      expect(Utf8.codePointLength(s)).toBe([...s].length)
    }))
  })

  it("cuts strings on code points within a byte budget", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), fc.nat(64), (s, n) => {
      const head = Utf8.takeBytes(s, n)
      const tail = Utf8.takeLastBytes(s, n)
      expect(s.startsWith(head)).toBe(true)
      expect(s.endsWith(tail)).toBe(true)
      expect(Utf8.byteLength(head)).toBeLessThanOrEqual(n)
      expect(Utf8.byteLength(tail)).toBeLessThanOrEqual(n)
      // maximal: the next code point would not fit
      const rest = [...s.slice(head.length)]
      if (rest.length > 0) expect(Utf8.byteLength(head + rest[0])).toBeGreaterThan(n)
      // never half of a surrogate pair at the cut
      if (head.length > 0 && head.length < s.length) {
        const a = s.charCodeAt(head.length - 1)
        const b = s.charCodeAt(head.length)
        expect(a >= 0xd800 && a <= 0xdbff && b >= 0xdc00 && b <= 0xdfff).toBe(false)
      }
    }))
  })

  it("takes code points from either end", () => {
    expect(Utf8.takeCodePoints("a\u{1F600}b", 2)).toBe("a\u{1F600}")
    expect(Utf8.takeLastCodePoints("a\u{1F600}b", 2)).toBe("\u{1F600}b")
  })

  it("finds byte boundaries that never split a code point", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(70), (bytes, i) => {
      const b = Utf8.byteBoundary(bytes, i)
      expect(b).toBeLessThanOrEqual(Math.min(i, bytes.length))
      expect(Utf8.isByteBoundary(bytes, b)).toBe(true)
    }))
    const euro = enc.encode("x\u20acy") // 78 e2 82 ac 79
    expect([0, 1, 2, 3, 4, 5].map((i) => Utf8.byteBoundary(euro, i))).toEqual([0, 1, 1, 1, 4, 5])
  })

  it("decodes lossily like TextDecoder and keeps source byte offsets", () => {
    const dec = new TextDecoder()
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      const d = Utf8.decodeWithOffsets(bytes)
      expect(d.text).toBe(dec.decode(bytes))
      expect(d.offsets.length).toBe(d.text.length + 1)
      expect(d.offsets[d.text.length]).toBe(bytes.length)
      for (let i = 1; i < d.offsets.length; i++) expect(d.offsets[i]!).toBeGreaterThanOrEqual(d.offsets[i - 1]!)
    }))
    // an invalid byte between valid characters keeps coordinates in source bytes
    const d = Utf8.decodeWithOffsets(new Uint8Array([0x61, 0xff, 0xe2, 0x82, 0xac, 0x62]))
    expect(d.text).toBe("a\ufffd\u20acb")
    expect(Array.from(d.offsets)).toEqual([0, 1, 2, 5, 6])
  })
})
