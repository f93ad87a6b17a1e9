import { describe, expect, it } from "@effect/vitest"
import { Salience, Utf8 } from "@spillway/core"
import * as fc from "effect/FastCheck"

const log = [
  "make -C lib",
  "cc -c a.c",
  "a.c:3:5: error: 'x' undeclared (first use in this function)",
  "    3 |   x = 1;",
  "      |   ^",
  "make[1]: *** [Makefile:2: a.o] Error 1",
  "ok line",
  "collect2: error: ld returned 1 exit status",
  "Traceback (most recent call last):",
  "  File \"t.py\", line 1, in <module>",
  "ValueError: bad value ✓ é",
  "make: *** [Makefile:6: all] Error 2"
].join("\n") + "\n"

describe("Salience.scanner", () => {
  it("finds in chunks what find finds in the whole text, however the output is cut", () =>
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 30 }), (sizes) => {
      const bytes = Utf8.encode(log.repeat(3))
      const s = Salience.scanner()
      // each chunk in one Node Buffer, spoiled once the scanner has it: it keeps copies
      const lent = Buffer.alloc(40)
      let at = 0
      for (let i = 0; at < bytes.length; i++) {
        const part = bytes.subarray(at, at + sizes[i % sizes.length]!)
        lent.set(part)
        s.push(lent.subarray(0, part.length))
        lent.fill(0x23)
        at += part.length
      }
      expect(s.result()).toEqual(Salience.find(log.repeat(3)))
    })))
})
