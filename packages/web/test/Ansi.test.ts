import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as Ansi from "../src/internal/ansi.js"

const ESC = "\x1b"

/** Terminal output: text, SGR and other escapes, carriage returns and control bytes, in any order. */
const pieces = FastCheck.array(
  FastCheck.oneof(
    FastCheck.string({ maxLength: 12 }),
    FastCheck.constantFrom(`${ESC}[0m`, `${ESC}[1;31m`, `${ESC}[38;5;208m`, `${ESC}[48;2;1;2;3m`, `${ESC}[38:2::9:9:9m`, `${ESC}[2K`, `${ESC}[?25l`),
    FastCheck.constantFrom(`${ESC}]8;;https://x.test\x07`, `${ESC}]0;title${ESC}\\`, `${ESC}(B`, "\r", "\b", "\x07", "\x00", `${ESC}[`, ESC)
  ),
  { maxLength: 40 }
).map((p) => p.join(""))

describe("terminal output as a page shows it", () => {
  it("turns SGR colours and styles into runs of classes over the plain text", () => {
    expect(Ansi.render(`${ESC}[32mINFO${ESC}[0m ok`)).toEqual({ text: "INFO ok", runs: [[0, 4, "a-f2"]] })
    expect(Ansi.render(`${ESC}[1;4;91mbad${ESC}[22m!`)).toEqual({ text: "bad!", runs: [[0, 3, "a-b a-u a-f9"], [3, 4, "a-u a-f9"]] })
    expect(Ansi.render(`${ESC}[38;5;208ma${ESC}[48;2;255;0;0mb`).runs).toEqual([[0, 1, "a-f208"], [1, 2, "a-f208 a-g196"]])
    expect(Ansi.render(`${ESC}[38:2::0:0:0mc`).runs).toEqual([[0, 1, "a-f16"]])
  })

  it("shows the last frame of a line redrawn with carriage returns, and drops other escapes", () => {
    expect(Ansi.render("10%\r50%\r100%").text).toBe("100%")
    expect(Ansi.render("downloading... 10%\rdone").text).toBe("doneloading... 10%")
    expect(Ansi.render(`waiting${ESC}[2K\rready`).text).toBe("ready")
    expect(Ansi.render(`${ESC}]8;;https://x.test\x07link${ESC}]8;;\x07 ${ESC}(Bend\x07`).text).toBe("link end")
    expect(Ansi.render("tab\tstays").text).toBe("tab\tstays")
  })

  it("leaves no escape or control character in any line, and every run lies within its text", () => {
    FastCheck.assert(FastCheck.property(pieces, (line) => {
      const r = Ansi.render(line)
      expect(r.text).not.toMatch(/[\x00-\x08\x0a-\x1f\x7f]/)
      expect(r.text.length).toBeLessThanOrEqual(line.length)
      let at = 0
      for (const [s, e, cls] of r.runs) {
        expect(s).toBeGreaterThanOrEqual(at)
        expect(e).toBeGreaterThan(s)
        expect(e).toBeLessThanOrEqual(r.text.length)
        expect(cls).toMatch(/^(a-[bdiu]|a-[fg]\d{1,3})( (a-[bdiu]|a-[fg]\d{1,3}))*$/)
        at = e
      }
    }), { numRuns: 500 })
  })

  it("renders a long line in time proportional to its length", () => {
    const line = `${ESC}[31mx${ESC}[0m\r`.repeat(20_000) + "y".repeat(100_000)
    const started = performance.now()
    const r = Ansi.render(line)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(r.text.length).toBe(100_000)
  })
})
