import { describe, expect, it } from "@effect/vitest"
import { Grep } from "@spillway/core"
import { Either } from "effect"
import * as fc from "effect/FastCheck"

const matcher = (pattern: string, ignoreCase = false) => Either.getOrThrow(Grep.compile(pattern, { ignoreCase }))

describe("Grep.spans", () => {
  it("marks every non-empty match of a line, left to right, in UTF-16 offsets", () => {
    expect(Grep.spans(matcher("error|fail"), "é error then fail ✓ error")).toEqual([[2, 7], [13, 17], [20, 25]])
    expect(Grep.spans(matcher("ERROR", true), "an Error")).toEqual([[3, 8]])
    expect(Grep.spans(matcher("x*"), "abc")).toEqual([])
    expect(Grep.spans(matcher("a"), "aaaa", 2)).toEqual([[0, 1], [1, 2]])
  })

  it("finds what JavaScript's own engine finds, for patterns both accept", () =>
    fc.assert(fc.property(fc.constantFrom("ab+", "[0-9]{2}", "x|yz", "^a", "c$", "\\bword\\b"), fc.string({ maxLength: 40 }), (pattern, line) => {
      const ours = Grep.spans(matcher(pattern), line, 1000)
      const theirs = [...line.matchAll(new RegExp(pattern, "g"))].filter((m) => m[0].length > 0).map((m) => [m.index!, m.index! + m[0].length])
      expect(ours).toEqual(theirs)
    })))
})
