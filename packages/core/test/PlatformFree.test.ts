import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { decodeAscii, sequenceSearch } from "../src/internal/bytes.js"

const src = fileURLToPath(new URL("../src", import.meta.url))
const sources = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(Path.join(dir, e.name)) : e.name.endsWith(".ts") ? [Path.join(dir, e.name)] : []
  )

const naive = (hay: Uint8Array, needle: Uint8Array, from: number) => {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer
    return i
  }
  return -1
}

describe("@spillway/core runs on any platform with Web APIs", () => {
  it("imports no node: module and reaches Node's Buffer only through the feature check in internal/bytes", () => {
    const files = sources(src)
    expect(files.length).toBeGreaterThan(40)
    for (const file of files) {
      const code = Fs.readFileSync(file, "utf8").split("\n").filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join("\n")
      expect(code, file).not.toMatch(/from\s+"node:|require\("node:|import\("node:/)
      if (!file.endsWith(Path.join("internal", "bytes.ts"))) expect(code, file).not.toMatch(/\bBuffer\b/)
    }
  })

  it("finds a byte sequence as a naive search does, natively and without the platform's Buffer", () =>
    fc.assert(fc.property(
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ minLength: 1, maxLength: 6 }),
      fc.nat(300),
      (raw, needle, from) => {
        // a small alphabet so that needles do occur, some of them above 0x7f
        const hay = raw.map((b) => [97, 98, 10, 0xc3, 0xa9, 113][b % 6]!)
        const n = needle.map((b) => [97, 98, 10, 0xc3, 0xa9, 113][b % 6]!)
        const start = Math.min(from, hay.length)
        const want = naive(hay, n, start)
        expect(sequenceSearch(hay, false)(n, start)).toBe(want)
        expect(sequenceSearch(hay, true)(n, start)).toBe(want)
      }
    ), { numRuns: 1000 }))

  it("decodes ASCII bytes the same with or without the native decoder", () => {
    const bytes = new TextEncoder().encode("plain ascii text, 0123\n".repeat(100))
    expect(decodeAscii(bytes)).toBe(new TextDecoder().decode(bytes))
  })
})
