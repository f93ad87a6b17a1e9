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
