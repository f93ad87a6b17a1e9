import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { ALIGN_SLACK, alignedAt, countNewlines, isAscii as isAsciiJs } from "../src/internal/bytes.js"
import * as Kernel from "../src/internal/kernel/kernel.js"
import { makeAnchorScan } from "../src/internal/secrets/anchors.js"
import * as LineIndex from "../src/LineIndex.js"

// The byte kernel gives exactly what the JavaScript loops give, for inputs
// past the size where it takes over (1 KiB), across its 1 MiB segments, at
// any offset in memory; and the build that carries it is the one its
// source assembles to.

const root = fileURLToPath(new URL("../../..", import.meta.url))

/** Bytes drawn from a few values, breaks and high bytes among them, at `shift` bytes into their buffer. */
const bytesOf = (raw: Uint8Array, shift: number, values: ReadonlyArray<number>) => {
  const backing = new Uint8Array(raw.length + shift)
  for (let i = 0; i < raw.length; i++) backing[shift + i] = values[raw[i]! % values.length]!
  return backing.subarray(shift)
}

const naiveStarts = (bytes: Uint8Array, want: number, every: number) => {
  const out: Array<number> = []
  let seen = 0
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 10) continue
    seen++
    if (want > 0 && seen >= want && (every <= 0 ? seen === want : (seen - want) % every === 0)) out.push(i + 1)
  }
  return out
}

describe("byte kernel", () => {
  it("runs here: Node has WebAssembly with SIMD, so capture never takes the slower path unseen", () => {
    expect(Kernel.available()).toBe(true)
  })

  it("carries the module its source assembles to (scripts/kernel.mjs --check)", () => {
    expect(() => execFileSync(process.execPath, ["scripts/kernel.mjs", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow()
  })

  it.prop("counts line breaks and tells ASCII as the JavaScript loops do", [
    fc.uint8Array({ minLength: 1000, maxLength: 5000 }),
    fc.nat(15),
    fc.boolean()
  ], ([raw, shift, high]) => {
    const bytes = bytesOf(raw, shift, high ? [97, 10, 32, 0xc3, 0xa9, 61] : [97, 10, 32, 61, 0x7f])
    expect(Kernel.newlines(bytes)).toBe(countNewlines(bytes))
    expect(Kernel.isAscii(bytes)).toBe(isAsciiJs(bytes))
  }, { fastCheck: { numRuns: 300 } })

  it.prop("finds the starts of every `every`-th line from the `want`-th break", [
    fc.uint8Array({ minLength: 1000, maxLength: 6000 }),
    fc.nat(7),
    fc.integer({ min: 0, max: 40 }),
    fc.integer({ min: 0, max: 9 })
  ], ([raw, shift, want, every]) => {
    const bytes = bytesOf(raw, shift, [97, 98, 10, 32])
    const starts: Array<number> = []
    const count = Kernel.lineStarts(bytes, want, every, (s) => starts.push(s))
    expect(count).toBe(countNewlines(bytes))
    expect(starts).toEqual(naiveStarts(bytes, want, every))
  }, { fastCheck: { numRuns: 300 } })

  it("copies input to where it lies in its own buffer modulo 16, within 15 bytes past the place asked for", () => {
    // a large copy whose destination lies 1 to 15 bytes past its source modulo 4096 is many times slower on some processors
    const into = new Uint8Array(256).subarray(7)
    for (let offset = 0; offset < 40; offset++) {
      const source = new Uint8Array(64).subarray(offset)
      for (const at of [0, 1, 9, 64]) {
        const p = alignedAt(source, into, at)
        expect(p).toBeGreaterThanOrEqual(at)
        expect(p).toBeLessThanOrEqual(at + ALIGN_SLACK)
        expect((into.byteOffset + p - source.byteOffset) & 15).toBe(0)
      }
    }
  })

  it("keeps its counts and line starts exact across segments, for inputs larger than one", () => {
    // 2.5 segments of lines of every length up to 200, a high byte now and then
    const size = Math.floor(Kernel.SEGMENT * 2.5)
    const bytes = new Uint8Array(size)
    let x = 12345
    for (let i = 0; i < size; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0
      bytes[i] = x % 97 === 0 ? 10 : x % 5003 === 0 ? 0xe2 : 97 + (x % 26)
    }
    const starts: Array<number> = []
    expect(Kernel.lineStarts(bytes, 7, 1024, (s) => starts.push(s))).toBe(countNewlines(bytes))
    expect(starts).toEqual(naiveStarts(bytes, 7, 1024))
    // the same from every offset of a buffer, each segment's copy placed to match it
    for (const offset of [1, 5, 15, 17]) {
      const shifted = new Uint8Array(offset + size)
      shifted.set(bytes, offset)
      const view = shifted.subarray(offset)
      const found: Array<number> = []
      expect(Kernel.lineStarts(view, 7, 1024, (s) => found.push(s))).toBe(countNewlines(bytes))
      expect(found).toEqual(starts)
      expect(Kernel.newlines(view)).toBe(countNewlines(bytes))
    }
    expect(Kernel.isAscii(bytes)).toBe(false)
    expect(Kernel.isAscii(bytes.map((b) => (b === 0xe2 ? 98 : b)))).toBe(true)
    // the line index built chunk by chunk over the kernel is the one built from the whole
    const b = LineIndex.builder(1000)
    for (let at = 0; at < size; at += 300_001) b.push(bytes.subarray(at, Math.min(size, at + 300_001)))
    const whole = LineIndex.fromBytes(bytes, 1000)
    expect(b.result()).toEqual(whole)
    // the same pass tells whether every byte is ASCII, from the first one that is not
    expect(b.ascii()).toBe(false)
    const plain = LineIndex.builder(1000)
    const ascii = bytes.map((x) => (x === 0xe2 ? 98 : x))
    plain.push(ascii.subarray(0, 500_000))
    expect(plain.ascii()).toBe(true)
    plain.push(Uint8Array.of(0x41, 0xc3, 0xa9))
    expect(plain.ascii()).toBe(false)
    plain.push(ascii.subarray(500_000))
    expect(plain.ascii()).toBe(false)
    expect(whole.checkpoints.length).toBe(Math.floor(countNewlines(bytes) / 1000) + 1)
    for (const offset of whole.checkpoints.slice(1)) expect(bytes[offset - 1]).toBe(10)
  })

  it("finds anchors across the kernel's 1 MiB segments, whose four-byte keys start in the segment before", () => {
    const anchors = [
      { text: "ghp_", ignoreCase: false },
      { text: "SeCrEt", ignoreCase: true },
      { text: "xyz", ignoreCase: false },
      { text: "AKIAQ", ignoreCase: false }
    ]
    const scan = makeAnchorScan(anchors)
    // each anchor from 7 bytes before the first segment's end to 3 past it, in an input of its own,
    // the input at offsets of its buffer that put each segment's copy at each of its places in the kernel
    for (const offset of [0, 1, 3, 4, 15, 16, 17, 30]) {
      const backing = new Uint8Array(offset + Kernel.SEGMENT + 64)
      const text = backing.subarray(offset)
      for (const [index, anchor] of anchors.entries()) {
        for (let shift = -7; shift <= 3; shift++) {
          text.fill(0x2e)
          const shown = anchor.ignoreCase ? anchor.text.toUpperCase() : anchor.text
          text.set(Uint8Array.from(shown, (c) => c.charCodeAt(0)), Kernel.SEGMENT + shift)
          const found: Array<string> = []
          scan(text, (a, position) => found.push(`${a}@${position}`))
          expect(found, `${anchor.text} at ${shift}, ${offset} bytes into its buffer`).toEqual([`${index}@${Kernel.SEGMENT + shift}`])
        }
      }
    }
  })

  it("gives the same results without WebAssembly (node --jitless), from the JavaScript loops", () => {
    const script = [
      `import * as Kernel from ${JSON.stringify(new URL("../dist/internal/kernel/kernel.js", import.meta.url).href)}`,
      "const bytes = new TextEncoder().encode('a line\\nand é another\\n'.repeat(5000))",
      "const starts = []",
      "const count = Kernel.lineStarts(bytes, 3, 1000, (s) => starts.push(s))",
      "console.log(JSON.stringify({ available: Kernel.available(), count, starts, ascii: Kernel.isAscii(bytes), newlines: Kernel.newlines(bytes) }))"
    ].join("\n")
    const run = (flags: Array<string>) =>
      JSON.parse(execFileSync(process.execPath, [...flags, "--input-type=module", "-e", script], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as Record<string, unknown>
    const without = run(["--jitless"])
    const withKernel = run([])
    expect(without.available).toBe(false)
    expect(withKernel.available).toBe(true)
    expect({ ...without, available: true }).toEqual(withKernel)
    expect(withKernel.count).toBe(10000)
  })
})
