import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"

// A value a rule masked (under its key, in its format) is masked where it
// is repeated bare after it: on the same line, and later in the text or the
// stream. A stream cannot take back what it has emitted, so a copy before
// the first masked one stays, in a stream and in a whole text alike.

const masker = Secrets.unsafeMakeMasker()
const encoder = new TextEncoder()
const decoder = new TextDecoder()

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(11)
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const randomValue = (length: number) => Array.from({ length }, (_, i) => (i % 4 === 1 ? "0123456789" : ALNUM)[Math.floor(random() * (i % 4 === 1 ? 10 : 62))]).join("")
const stars = (s: string) => "*".repeat(s.length)

/** Masks `text` through a stream cut at the given offsets. */
const streamed = (text: string, cuts: ReadonlyArray<number>, options?: Secrets.MaskerOptions): string => {
  const m = options === undefined ? masker : Secrets.unsafeMakeMasker(options)
  const bytes = encoder.encode(text)
  const stream = m.stream()
  const parts: Array<Uint8Array> = []
  let at = 0
  for (const cut of [...cuts, bytes.length]) {
    parts.push(stream.push(bytes.subarray(at, cut)))
    at = cut
  }
  parts.push(stream.end())
  return decoder.decode(Buffer.concat(parts))
}

describe("a masked value repeated bare", () => {
  it("is masked after its first masked place, on the same line and on later lines", () => {
    const value = randomValue(32)
    const text = `vercel token = '${value}' | '${value}'\nlater: echo ${value}\n`
    expect(masker.maskText(text)).toBe(`vercel token = '${stars(value)}' | '${stars(value)}'\nlater: echo ${stars(value)}\n`)
  })

  it("stays visible before the place it is first masked: a stream cannot take back what it emitted", () => {
    const value = randomValue(32)
    const text = `echo ${value}\nAPI_TOKEN=${value}\n`
    expect(masker.maskText(text)).toBe(`echo ${value}\nAPI_TOKEN=${stars(value)}\n`)
  })

  it("gives the same bytes in a stream, cut at every offset", () => {
    const value = randomValue(24)
    const text = `before ${value}\nsecret_key: "${value}" then ${value}\nand again ${value} at the end\n`
    const whole = masker.maskText(text)
    expect(whole).not.toContain(`again ${value}`)
    for (let cut = 0; cut <= text.length; cut++) expect(streamed(text, [cut]), `cut at ${cut}`).toBe(whole)
  })

  it("is remembered for the rest of a stream, far past the window it was masked in", () => {
    const value = randomValue(40)
    const filler = "2026-01-01T00:00:00Z app: request served in 12 ms\n".repeat(40_000)
    const text = `GITHUB_TOKEN=ghp_${value}\n${filler}deploy used ghp_${value}\n`
    const out = streamed(text, [4096, 1 << 20, 2 << 20])
    expect(out.endsWith(`deploy used ${stars(`ghp_${value}`)}\n`)).toBe(true)
    expect(out).toBe(masker.maskText(text))
  })

  it("is not looked for when short or plain: a repeated password of a few characters stays where no rule masks it", () => {
    const text = "DB_PASSWORD=Tr0ub4dor-3\nthe hint was Tr0ub4dor-3\n"
    expect(masker.maskText(text)).toBe("DB_PASSWORD=***********\nthe hint was Tr0ub4dor-3\n")
  })

  it("remembers a bounded number of values: the first 256 a stream masks", () => {
    const values = Array.from({ length: 300 }, () => randomValue(24))
    const keyed = values.map((v, i) => `SECRET_${i}=${v}\n`).join("")
    const bare = values.map((v) => `copy ${v}\n`).join("")
    const started = performance.now()
    const out = masker.maskText(keyed + bare).split("\n").slice(300, 600)
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(out.slice(0, 256).every((line) => /^copy \*+$/.test(line))).toBe(true)
    expect(out.slice(256).every((line, i) => line === `copy ${values[256 + i]}`)).toBe(true)
    // a stream makes the same choice, whatever its chunks
    expect(streamed(keyed + bare, [777, 5000, 9001])).toBe(masker.maskText(keyed + bare))
  })
})
