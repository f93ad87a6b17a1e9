import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { FastCheck as fc } from "effect"

// Private keys as logs show them: every line carries a prefix (a timestamp,
// a service column, a build step and its time, a tag), whose numbers change
// from line to line. The body lines are masked after their prefix; the
// prefixes and the markers stay. Key material is generated: this file holds
// no literal key.

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(40)
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const base64Line = (length: number) => Array.from({ length }, (_, i) => (i % 7 === 3 ? "7" : B64[Math.floor(random() * 64)])).join("")
const keyBody = (lines: number, width = 64) => [...Array.from({ length: lines - 1 }, () => base64Line(width)), base64Line(22) + "=="]

const masker = Secrets.unsafeMakeMasker()
const encoder = new TextEncoder()
const decoder = new TextDecoder()

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** Log prefixes, each for line `i` of the output: the numbers in them change from line to line. */
const prefixes: ReadonlyArray<readonly [name: string, prefix: (i: number) => string]> = [
  ["an ISO timestamp and a name", (i) => `2026-01-01T00:00:${pad(i % 60)}.${pad(i * 7 % 1000, 3)}Z app: `],
  ["a Compose service column", () => "web-1  | "],
  ["a bracketed tag", () => "[app] "],
  ["git's remote: lines", () => "remote: "],
  ["a BuildKit step and its time", (i) => `#5 ${(0.3 + i * 0.011).toFixed(3)} `],
  ["a GitHub Actions timestamp", (i) => `2026-01-01T00:00:${pad(i % 60)}.${String(1234567 + i * 31).padStart(7, "0")}Z `],
  ["kubectl's pod prefix", () => "pod/api-7d4b9c5f-x2x "],
  ["a syslog line", (i) => `Jan  1 00:00:${pad(i % 60)} host app[123]: `],
  ["a Python logging line", (i) => `2026-01-01 00:00:${pad(i % 60)},${pad(i * 13 % 1000, 3)} INFO worker: `],
  ["grep -rn of a key file", (i) => `secrets/deploy.pem:${i + 1}:`]
]

/** Key blocks as a tool prints them: markers, headers a key may carry, body lines. */
const keys: ReadonlyArray<readonly [name: string, lines: ReadonlyArray<string>, secret: ReadonlyArray<boolean>]> = [
  (() => {
    const body = keyBody(26)
    return ["an RSA key", ["-----BEGIN RSA PRIVATE KEY-----", ...body, "-----END RSA PRIVATE KEY-----"], [false, ...body.map(() => true), false]] as const
  })(),
  (() => {
    const body = keyBody(7, 70)
    return ["an OpenSSH key", ["-----BEGIN OPENSSH PRIVATE KEY-----", ...body, "-----END OPENSSH PRIVATE KEY-----"], [false, ...body.map(() => true), false]] as const
  })(),
  (() => {
    const body = keyBody(4)
    const lines = ["-----BEGIN RSA PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,3F17F5316E2BAC89", "", ...body, "-----END RSA PRIVATE KEY-----"]
    return ["an encrypted PEM key", lines, [false, true, true, false, ...body.map(() => true), false]] as const
  })(),
  (() => {
    const body = keyBody(3)
    const lines = ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "Version: GnuPG v2", "", ...body, "=" + base64Line(4), "-----END PGP PRIVATE KEY BLOCK-----"]
    return ["a PGP key", lines, [false, true, false, ...body.map(() => true), true, false]] as const
  })()
]

/** The output: a line before, the key's lines, lines after; each with the prefix for its line number. */
const logOf = (prefix: (i: number) => string, lines: ReadonlyArray<string>) => {
  const all = ["starting", ...lines, "key loaded", "listening on :8080"]
  return all.map((line, i) => prefix(i) + line)
}

/** Masks `text` in a stream cut at `cuts`, with a small hold so long lines are cut too. */
const streamed = (m: Secrets.Masker, bytes: Uint8Array, cuts: ReadonlyArray<number>): string => {
  const stream = m.stream()
  const parts: Array<Uint8Array> = []
  let previous = 0
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    parts.push(stream.push(bytes.subarray(previous, cut)))
    previous = cut
  }
  parts.push(stream.push(bytes.subarray(previous)), stream.end())
  return decoder.decode(Buffer.concat(parts))
}

/** Checks a masked log line by line: a secret line is its prefix and stars, every other line is as it was. */
const expectMasked = (logged: ReadonlyArray<string>, masked: string, secretAt: (i: number) => boolean, prefixAt: (i: number) => string) => {
  const out = masked.split("\n")
  expect(out).toHaveLength(logged.length)
  logged.forEach((line, i) => {
    if (!secretAt(i)) return expect(out[i]).toBe(line)
    const prefix = prefixAt(i)
    expect(out[i]!.startsWith(prefix)).toBe(true)
    expect(out[i]!.slice(prefix.length)).toMatch(/^\*+$/)
  })
}

describe("private keys behind log prefixes", () => {
  for (const [prefixName, prefix] of prefixes) {
    it(`masks the key lines behind ${prefixName}, and only the key material`, () => {
      for (const [, lines, secret] of keys) {
        const logged = logOf(prefix, lines)
        expectMasked(logged, masker.maskText(logged.join("\n") + "\n").replace(/\n$/, ""), (i) => secret[i - 1] === true && lines[i - 1] !== "", prefix)
      }
    })
  }

  it("masks the same at every split offset of the output, for every prefix", () => {
    const [, lines] = keys[2]!
    for (const [, prefix] of prefixes) {
      const text = logOf(prefix, lines).join("\n") + "\n"
      const bytes = encoder.encode(text)
      const whole = masker.maskText(text)
      for (let at = 0; at <= bytes.length; at++) expect(streamed(masker, bytes, [at])).toBe(whole)
    }
  })

  it("masks the same however a long output is cut into chunks, with any hold", () => {
    const documents = prefixes.map(([, prefix], k) => logOf(prefix, keys[k % keys.length]![1]).join(k % 2 === 0 ? "\n" : "\r\n"))
    fc.assert(
      fc.property(fc.constantFrom(...documents), fc.array(fc.nat(), { maxLength: 40 }), fc.integer({ min: 0, max: 300 }), (text, cuts, held) => {
        const small = Secrets.unsafeMakeMasker({ maxHeldBytes: held })
        const bytes = encoder.encode(text)
        expect(streamed(small, bytes, cuts.map((c) => c % (bytes.length + 1)))).toBe(small.maskText(text))
      }),
      { numRuns: 400 }
    )
  })

  it("passes over lines of other services and steps between the key's lines, and masks none of them", () => {
    const [, lines, secret] = keys[0]!
    const compose: Array<string> = []
    const build: Array<string> = []
    const secretLines: Array<number> = []
    lines.forEach((line, i) => {
      compose.push(`web-1  | ${line}`)
      build.push(`#5 0.${300 + i} ${line}`)
      if (secret[i]) secretLines.push(compose.length - 1)
      if (i % 3 === 1) {
        compose.push(`db-1   | LOG:  checkpoint complete: wrote ${i} buffers`)
        build.push(`#6 0.${400 + i} npm warn deprecated glob@7.2.3`)
      }
    })
    for (const [logged, prefix] of [[compose, "web-1  | "], [build, "#5 0.000 "]] as const) {
      const masked = masker.maskText(logged.join("\n")).split("\n")
      logged.forEach((line, i) => {
        if (!secretLines.includes(i)) return expect(masked[i]).toBe(line)
        expect(masked[i]!.slice(0, prefix.length - 4)).toBe(line.slice(0, prefix.length - 4))
        expect(masked[i]!.slice(prefix.length)).toMatch(/^\*+$/)
      })
    }
  })

  it("masks a key whose lines after the first carry no prefix (a logger writing one multi-line message)", () => {
    const [, lines, secret] = keys[0]!
    const logged = [`2026-01-01T00:00:00.123Z app: loaded ${lines[0]}`, ...lines.slice(1), "2026-01-01T00:00:00.124Z app: ready"]
    expectMasked(logged, masker.maskText(logged.join("\n")), (i) => secret[i] === true, () => "")
  })

  it("without an END line, ends after a few lines of the same log that are not the key's, and masks nothing after", () => {
    const body = keyBody(5)
    const prefix = (i: number) => `2026-01-01T00:00:${pad(i)}.000Z app: `
    const ordinary = Array.from({ length: 20 }, (_, i) => `request ${i} served in ${i + 3}ms`)
    const logged = ["-----BEGIN PRIVATE KEY-----", ...body, ...ordinary, "Xk9qLmZ3vR8tY2wP"].map((line, i) => prefix(i) + line)
    // a word-like line 16 lines of the same log after the key is past the block: it stays
    expectMasked(logged, masker.maskText(logged.join("\n")), (i) => i >= 1 && i <= body.length, prefix)
  })

  it("masks a flood of markers behind prefixes, and prefixes of 200 bytes of punctuation, in bounded time", () => {
    const flood = Array.from({ length: 40_000 }, (_, i) =>
      i % 2 === 0 ? `2026-01-01T00:00:${pad(i % 60)}.000Z app: -----BEGIN PRIVATE KEY-----` : `2026-01-01T00:00:${pad(i % 60)}.000Z app: ${base64Line(64)}`
    ).join("\n")
    const odd = Array.from({ length: 2_000 }, (_, i) => `${"-|[:".repeat(50)} ${i % 2 === 0 ? "-----BEGIN PRIVATE KEY-----" : base64Line(40)}`).join("\n")
    for (const text of [flood, odd]) {
      const started = performance.now()
      const masked = masker.maskText(text)
      expect(performance.now() - started).toBeLessThan(5_000)
      expect(masked.length).toBe(text.length)
    }
    // every base64 line of the flood follows a marker: all are masked (a leading `+` or `//` reads as a diff's or a comment's mark)
    const bad = masker.maskText(flood).split("\n").flatMap((l, i) => (i % 2 === 1 && !/app: (?:\+|\/\/)?\*{62,64}$/.test(l) ? [i] : []))
    expect(bad).toEqual([])
  })

  it("keeps grep output and diffs of code that name the markers as they are", () => {
    const grep = [
      "src/pem.ts:3:const BEGIN = \"-----BEGIN RSA PRIVATE KEY-----\"",
      "src/pem.ts:4:const END = \"-----END RSA PRIVATE KEY-----\"",
      "src/pem.ts:5:export const isKey = (text: string) => text.startsWith(BEGIN)",
      "src/pem.ts:6:Xk9qLmZ3vR8tY2wPq4Hn"
    ]
    expect(masker.maskText(grep.join("\n"))).toBe(grep.join("\n"))
    const diff = ["+  const pem = \"-----BEGIN RSA PRIVATE KEY-----\\n\" +", "+    \"line one of the fixture\\n\" +", "+    \"-----END RSA PRIVATE KEY-----\"", " export {}"]
    expect(masker.maskText(diff.join("\n"))).toBe(diff.join("\n"))
  })
})
