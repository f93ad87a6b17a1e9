import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as Salience from "../src/Salience.js"
import * as Terminal from "../src/Terminal.js"

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

describe("terminal output as a page shows it (render)", () => {
  it("turns SGR colours and styles into runs of classes over the plain text", () => {
    expect(Terminal.render(`${ESC}[32mINFO${ESC}[0m ok`)).toEqual({ text: "INFO ok", runs: [[0, 4, "a-f2"]] })
    expect(Terminal.render(`${ESC}[1;4;91mbad${ESC}[22m!`)).toEqual({ text: "bad!", runs: [[0, 3, "a-b a-u a-f9"], [3, 4, "a-u a-f9"]] })
    expect(Terminal.render(`${ESC}[38;5;208ma${ESC}[48;2;255;0;0mb`).runs).toEqual([[0, 1, "a-f208"], [1, 2, "a-f208 a-g196"]])
    expect(Terminal.render(`${ESC}[38:2::0:0:0mc`).runs).toEqual([[0, 1, "a-f16"]])
  })

  it("shows the last frame of a line redrawn with carriage returns, and drops other escapes", () => {
    expect(Terminal.render("10%\r50%\r100%").text).toBe("100%")
    expect(Terminal.render("downloading... 10%\rdone").text).toBe("doneloading... 10%")
    expect(Terminal.render(`waiting${ESC}[2K\rready`).text).toBe("ready")
    expect(Terminal.render(`${ESC}]8;;https://x.test\x07link${ESC}]8;;\x07 ${ESC}(Bend\x07`).text).toBe("link end")
    expect(Terminal.render("tab\tstays").text).toBe("tab\tstays")
  })

  it("leaves no escape or control character in any line, and every run lies within its text", () => {
    FastCheck.assert(FastCheck.property(pieces, (line) => {
      const r = Terminal.render(line)
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
    const r = Terminal.render(line)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(r.text.length).toBe(100_000)
  })
})

describe("terminal output as a model reads it (plain)", () => {
  it("removes colours, cursor movement, titles and hyperlinks, and keeps each redrawn line's final state", () => {
    const log = `${ESC}[32mINFO${ESC}[0m ready\r\n${ESC}]0;build${ESC}\\step 1\n 10% [#   ]\r 50% [##  ]\r100% [####]\n${ESC}[1A${ESC}[2Kdone ${ESC}]8;;https://x.test\x07link${ESC}]8;;\x07`
    expect(Terminal.plain(log)).toBe("INFO ready\nstep 1\n100% [####]\ndone link")
  })

  it("keeps a line number in front of the text it labels, as search results show lines", () => {
    expect(Terminal.plain(`301:  10% [#   ]\r 50% [##  ]\r100% [####]\n302: ${ESC}[31mERROR${ESC}[0m`)).toBe("301: 100% [####]\n302: ERROR")
    expect(Terminal.plain("10%\r100%\n")).toBe("100%\n")
  })

  it("returns a text with nothing to remove as it is", () => {
    const text = "line 1\n\tline 2 \u00e9\u{1F600}\n"
    expect(Terminal.plain(text)).toBe(text)
    expect(Terminal.hasNoise(text)).toBe(false)
    expect(Terminal.hasNoise(`a${ESC}[0m`)).toBe(true)
    expect(Terminal.hasNoise("a\rb")).toBe(true)
  })

  it("keeps every line break, so line numbers agree with the kept body, and never grows a text", () => {
    const texts = FastCheck.array(FastCheck.oneof(pieces, FastCheck.constant("\n"), FastCheck.constant("\r\n")), { maxLength: 20 }).map((p) => p.join(""))
    FastCheck.assert(FastCheck.property(texts, (text) => {
      const out = Terminal.plain(text)
      expect(out.split("\n").length).toBe(text.split("\n").length)
      expect(out).not.toMatch(/[\x07\x08\x0d\x1b]/)
      expect(out.length).toBeLessThanOrEqual(text.length)
      expect(Terminal.plain(out)).toBe(out)
    }), { numRuns: 500 })
  })

  it("keeps control characters a terminal ignores, as data", () => {
    expect(Terminal.plain(`\x01\x02${ESC}[1mbold${ESC}[0m\x03\x7f`)).toBe("\x01\x02bold\x03\x7f")
    expect(Terminal.plain("\x00\x01\x02")).toBe("\x00\x01\x02")
  })

  it("drops a sequence cut off at the end of a text, as a cut page may end", () => {
    expect(Terminal.plain(`ok${ESC}[3`)).toBe("ok")
    expect(Terminal.plain(`ok${ESC}]8;;https://x.test/very/long`)).toBe("ok")
    expect(Terminal.plain(`ok${ESC}`)).toBe("ok")
  })

  it("cleans a large text in time proportional to its length", () => {
    const text = `${ESC}[32mINFO${ESC}[0m compiled module\r\n`.repeat(50_000)
    const started = performance.now()
    const out = Terminal.plain(text)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(out).toBe("INFO compiled module\n".repeat(50_000))
  })
})

describe("a failure line cut in its middle", () => {
  it("is cut in its plain form, so no cut falls inside an escape sequence", () => {
    const line = `${ESC}[1;31merror${ESC}[0m: ` + `${ESC}[38;5;208mx${ESC}[0m`.repeat(300) + ` ${ESC}]8;;https://x.test\x07at main.ts:3${ESC}]8;;\x07`
    const cut = Salience.cutMiddle(line, 200)
    expect(cut).not.toMatch(/[\x07\x1b]/)
    expect([...cut].length).toBe(200)
    expect(cut.startsWith("error: xxx")).toBe(true)
    expect(cut.endsWith("xxx at main.ts:3")).toBe(true)
    // a line short enough once plain is shown whole
    expect(Salience.cutMiddle(`${ESC}[31m${"y".repeat(150)}${ESC}[0m`.repeat(1), 152)).toBe("y".repeat(150))
  })

  it("takes time in proportion to the cut, not to the line", () => {
    const line = `${ESC}[32mok${ESC}[0m `.repeat(2_000_000)
    const started = performance.now()
    const cut = Salience.cutMiddle(line, 200)
    expect(performance.now() - started).toBeLessThan(1500)
    expect(cut).not.toMatch(/\x1b/)
    expect([...cut].length).toBe(200)
  })
})

describe("the 256-colour palette", () => {
  it("gives the cube's and the grey ramp's colours, and the nearest index of a truecolour", () => {
    expect(Terminal.paletteRgb(16)).toEqual([0, 0, 0])
    expect(Terminal.paletteRgb(208)).toEqual([255, 135, 0])
    expect(Terminal.paletteRgb(231)).toEqual([255, 255, 255])
    expect(Terminal.paletteRgb(232)).toEqual([8, 8, 8])
    expect(Terminal.paletteRgb(255)).toEqual([238, 238, 238])
    for (const i of [16, 100, 208, 231, 240]) expect(Terminal.nearest256(...Terminal.paletteRgb(i))).toBe(i)
  })
})

describe("a cut inside an escape sequence", () => {
  it("is found, so a page can end before it", () => {
    expect(Terminal.openSequenceAt(`ok ${ESC}[3`)).toBe(3)
    expect(Terminal.openSequenceAt(`ok ${ESC}`)).toBe(3)
    expect(Terminal.openSequenceAt(`ok ${ESC}]8;;https://x.test/a`)).toBe(3)
    expect(Terminal.openSequenceAt(`ok ${ESC}(`)).toBe(3)
    for (const whole of [`ok ${ESC}[32m`, "ok", `${ESC}]8;;https://x.test\x07a`, `${ESC}]0;t${ESC}\\`, `${ESC}(B`, `${ESC}[32mok`]) {
      expect(Terminal.openSequenceAt(whole), JSON.stringify(whole)).toBe(whole.length)
    }
  })

  it("is looked for only near the end", () => {
    const text = `${ESC}]8;;${"a".repeat(10_000)}`
    expect(Terminal.openSequenceAt(text)).toBe(text.length)
  })
})
