import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { FastCheck as fc } from "effect"

const occurrences = (text: Buffer, literals: ReadonlyArray<string>) => {
  const at = new Set<number>()
  for (const l of literals) {
    const needle = Buffer.from(l, "latin1")
    for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) at.add(i)
  }
  return [...at].sort((a, b) => a - b)
}

describe("Masker.stream watch", () => {
  const masker = Secrets.unsafeMakeMasker({ knownValues: ["hunter2-hunter2"] })
  const literals = ["error", "FAIL", Buffer.from("\u2717").toString("latin1")]

  it.prop("reports every watched literal once, in output coordinates, whatever the chunking", [
    fc.array(fc.constantFrom("error", "FAIL", "ok", "\u2717", " ", "\n", "x".repeat(70_000), "hunter2-hunter2", "err", "or"), { maxLength: 40 }),
    fc.array(fc.nat(), { maxLength: 8 })
  ], ([parts, cuts]) => {
    const input = Buffer.from(parts.join(""))
    const marks: Array<number> = []
    const stream = masker.stream({ literals, onMark: (p) => marks.push(p) })
    const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b)
    const out: Array<Uint8Array> = []
    let from = 0
    for (const p of points) {
      out.push(stream.push(input.subarray(from, p)))
      from = p
    }
    out.push(stream.push(input.subarray(from)))
    out.push(stream.end())
    const output = Buffer.concat(out)
    expect(output.length).toBe(input.length)
    expect(marks).toEqual(occurrences(output, literals))
  }, { fastCheck: { numRuns: 200 } })
})

describe("maskers sharing engines", () => {
  const samples = [
    "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB in a log line",
    "AWS key AKIAIOSFODNN7EXAMPLE and secret=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "error: FAIL at step 3",
    "password: correct-horse-battery-staple",
    "plain words, nothing to hide",
    "\n"
  ]
  // a new array of the same rules: maskers over it share nothing with the ones over the default array
  const apart = [...Secrets.defaultRules]

  it.prop("maskers of the same known values, sharing engines, mask exactly as one built apart, watched or not", [
    fc.array(fc.constantFrom(...samples, "KNOWN"), { minLength: 1, maxLength: 20 }),
    fc.string({ minLength: 12, maxLength: 24, unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789") })
  ], ([parts, known]) => {
    const value = `k-${known}`
    const text = parts.join(" ").replaceAll("KNOWN", value)
    // the first masker of these known values builds the engine that reports watched literals, ...
    const first = Secrets.unsafeMakeMasker({ knownValues: [value] })
    const watched = first.stream({ literals: ["error", "FAIL"], onMark: () => undefined })
    const streamed = Buffer.concat([watched.push(Buffer.from(text)), watched.end()]).toString()
    // ... and the next one shares the first one's engines
    const next = Secrets.unsafeMakeMasker({ knownValues: [value] })
    const alone = Secrets.unsafeMakeMasker({ knownValues: [value], rules: apart })
    const expected = alone.maskText(text)
    expect(next.maskText(text)).toBe(expected)
    expect(first.maskText(text)).toBe(expected)
    expect(streamed).toBe(expected)
    expect(expected.includes(value)).toBe(false)
  }, { fastCheck: { numRuns: 40 } })
})
