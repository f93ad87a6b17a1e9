import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { FastCheck as fc } from "effect"
import { execFileSync } from "node:child_process"

// A known value (an environment secret) in the encodings tools print it
// in: base64 wrapped over many lines, JSON as PHP, Python and Go escape it,
// hex and hex dumps with their ASCII column. The dumps and the PHP and
// Python forms come from the real tools where they are installed.

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(3)
const PRINTABLE = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!#%+,-.:=@^_~"
const randomText = (length: number) => Array.from({ length }, () => PRINTABLE[Math.floor(random() * PRINTABLE.length)]).join("")

/** An environment secret with what JSON encoders escape: a slash, quotes, `<>&'`, non-ASCII, an astral character. */
const tricky = `${randomText(12)}/ä"<&>'€${randomText(6)}😀${randomText(4)}`
const stars = (s: string) => "*".repeat(Buffer.byteLength(s))

const has = (tool: string): boolean => {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}
const run = (file: string, args: ReadonlyArray<string>, input?: Uint8Array): string =>
  execFileSync(file, args, { input, maxBuffer: 1 << 24 }).toString("utf8")

/** The base64 characters fixed by `bytes` alone when they sit `shift` bytes past a multiple of three. */
const core = (bytes: Buffer, shift: number) =>
  Buffer.concat([Buffer.alloc(shift), bytes]).toString("base64").slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6))

describe("a known value in base64 wrapped over many lines", () => {
  it("masks every line of it, whatever its length, the wrap width and where it starts", () => {
    for (const length of [24, 47, 100, 300]) {
      const value = randomText(length)
      const masker = Secrets.unsafeMakeMasker({ knownValues: [value] })
      const bytes = Buffer.from(value)
      // every run of 8 characters of its base64, at each alignment
      const runs = new Set([0, 1, 2].flatMap((shift) => {
        const form = core(bytes, shift)
        return Array.from({ length: form.length - 7 }, (_, k) => form.slice(k, k + 8))
      }))
      for (const width of [60, 64, 76]) {
        for (let before = 0; before < 24; before += 5) {
          const blob = Buffer.concat([Buffer.from("#".repeat(before) + "TOKEN="), bytes, Buffer.from("\nend of the env file\n")])
          const wrapped = blob.toString("base64").match(new RegExp(`.{1,${width}}`, "g"))!
          const masked = masker.maskText(wrapped.join("\n")).split("\n")
          expect(masked.map((l) => l.length)).toEqual(wrapped.map((l) => l.length))
          // the value's base64 starts after the prefix's and ends before the suffix's: every line wholly inside it is all stars
          const first = Math.ceil(((before + 6) * 8) / 6)
          const last = Math.floor(((before + 6 + length) * 8) / 6)
          masked.forEach((line, i) => {
            if (i * width >= first && (i + 1) * width <= last) expect(line).toMatch(/^\*+$/)
            for (let k = 0; k + 8 <= line.length; k++) expect(runs.has(line.slice(k, k + 8)), line).toBe(false)
          })
          const inside = wrapped.filter((_, i) => i * width >= first && (i + 1) * width <= last).length
          if (length >= 300) expect(inside).toBeGreaterThanOrEqual(3)
        }
      }
    }
  })

  it.skipIf(!has("base64") || !has("openssl"))("masks what base64 and openssl print, wrapped at their widths", () => {
    const value = randomText(200)
    const masker = Secrets.unsafeMakeMasker({ knownValues: [value] })
    for (const [file, args] of [["base64", []], ["base64", ["-w", "40"]], ["openssl", ["base64"]]] as const) {
      const out = run(file, args, Buffer.from(value))
      const lines = out.trimEnd().split("\n")
      expect(lines.length).toBeGreaterThanOrEqual(3)
      const masked = masker.maskText(out).trimEnd().split("\n")
      // every line but the last (which ends in the value's last characters and padding) is the value's alone
      masked.slice(0, -1).forEach((line) => expect(line).toMatch(/^\*+$/))
      expect(masked.at(-1)).toMatch(/^\*+=*$/)
    }
  })
})

describe("a known value JSON-escaped", () => {
  const masker = Secrets.unsafeMakeMasker({ knownValues: [tricky] })
  /** Checks that the string's body in a JSON document is all stars, and the rest as it was. */
  const masksString = (json: string) => {
    const body = /^\{"v":"(.*)"\}$/.exec(json.trim())?.[1]
    expect(body, json).toBeDefined()
    expect(masker.maskText(json.trim())).toBe(`{"v":"${stars(body!)}"}`)
  }

  it("masks it as JavaScript, PHP, Python, Go and .NET write it", () => {
    const json = JSON.stringify(tricky).slice(1, -1)
    const u = (c: string, upper = false) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")[upper ? "toUpperCase" : "toLowerCase"]()}`
    const ascii = (s: string, upper = false) => s.replace(/[^\x00-\x7f]/g, (c) => u(c, upper))
    const slashes = json.replace(/\//g, "\\/")
    const forms = [
      json, // JSON.stringify
      ascii(slashes), // PHP json_encode, by default
      slashes, // PHP with JSON_UNESCAPED_UNICODE
      ascii(json), // Python json.dumps, PHP with JSON_UNESCAPED_SLASHES
      ascii(json, true), // .NET and Java encoders, in upper case
      json.replace(/[<>&]/g, (c) => u(c)), // Go's json.Marshal
      ascii(slashes).replace(/\\"|[<>&']/g, (c) => u(c.length === 2 ? "\"" : c, true)) // PHP with JSON_HEX_TAG, _AMP, _APOS, _QUOT
    ]
    for (const form of forms) masksString(`{"v":"${form}"}`)
  })

  it.skipIf(!has("php"))("masks what PHP's json_encode prints, with each of its escaping flags", () => {
    for (const flags of ["0", "JSON_UNESCAPED_SLASHES", "JSON_UNESCAPED_UNICODE", "JSON_UNESCAPED_SLASHES|JSON_UNESCAPED_UNICODE", "JSON_HEX_TAG|JSON_HEX_AMP|JSON_HEX_APOS|JSON_HEX_QUOT"]) {
      masksString(run("php", ["-r", `echo json_encode(["v" => $argv[1]], ${flags});`, tricky]))
    }
  })

  it.skipIf(!has("python3"))("masks what Python's json.dumps prints, ASCII-escaped or not", () => {
    for (const ascii of ["True", "False"]) {
      const out = execFileSync("python3", ["-c", `import json, sys; print(json.dumps({"v": sys.argv[1]}, ensure_ascii=${ascii}, separators=(",", ":")))`, tricky])
      masksString(out.toString("utf8"))
    }
  })
})

/** How a dump tool lays out bytes: per line, the hex area and the ASCII column, found by a pattern. */
interface Layout {
  readonly args: ReadonlyArray<string>
  readonly file: string
  readonly perLine: number
  /** The hex area and (optionally) the ASCII column of a line. */
  readonly line: RegExp
}
const layouts: ReadonlyArray<Layout> = [
  { file: "hexdump", args: ["-C"], perLine: 16, line: /^[0-9a-f]{8} {2}(.{48}) {1,2}\|(.*)\|$/ },
  { file: "xxd", args: [], perLine: 16, line: /^[0-9a-f]{8}: (.{39}) {2}(.*)$/ },
  { file: "xxd", args: ["-u"], perLine: 16, line: /^[0-9a-f]{8}: (.{39}) {2}(.*)$/ },
  { file: "xxd", args: ["-g1"], perLine: 16, line: /^[0-9a-f]{8}: (.{47}) {2}(.*)$/ },
  { file: "od", args: ["-An", "-tx1"], perLine: 16, line: /^((?: [0-9a-f*]{2}){1,16})()$/ },
  { file: "od", args: ["-tx1"], perLine: 16, line: /^[0-7]{7}((?: [0-9a-f*]{2}){1,16})()$/ },
  { file: "xxd", args: ["-p"], perLine: 30, line: /^([0-9a-f*]{2,60})()$/ }
]

/**
 * Reads a masked dump back: per byte of the input, whether its hex digits
 * were masked, and whether its ASCII character (for dumps that have one).
 */
const readDump = (layout: Layout, masked: string, inputLength: number) => {
  const hex: Array<boolean> = []
  const ascii: Array<boolean | undefined> = []
  for (const line of masked.split("\n")) {
    const m = layout.line.exec(line)
    if (m === null) continue
    const digits = m[1]!.replace(/ /g, "")
    for (let k = 0; k < digits.length; k += 2) {
      const i = hex.length
      const pair = digits.slice(k, k + 2)
      expect(pair === "**" || /^[0-9a-fA-F]{2}$/.test(pair), `${pair} in ${line}`).toBe(true)
      hex.push(pair === "**")
      ascii.push(m[2] === "" ? undefined : m[2]![i % layout.perLine] === "*")
    }
  }
  expect(hex).toHaveLength(inputLength)
  return { hex, ascii }
}

describe("a known value in hex and hex dumps", () => {
  const value = Buffer.from(randomText(21) + "é" + randomText(20))
  const masker = Secrets.unsafeMakeMasker({ knownValues: [value.toString("utf8")] })

  for (const layout of layouts) {
    it.skipIf(!has(layout.file))(`masks its bytes in ${[layout.file, ...layout.args].join(" ")}, with their ASCII column, wherever it starts`, () => {
      for (let before = 0; before < 40; before += 3) {
        // bytes the value has none of, in a cycle no dump line repeats (a repeated line is printed as `*`)
        const around = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => "l01IO"[i % 5]).join(""))
        const input = Buffer.concat([around(before), value, around(23), Buffer.from("\n")])
        const dump = run(layout.file, layout.args, input)
        const masked = masker.maskText(dump)
        expect(masked.length).toBe(dump.length)
        const { hex, ascii } = readDump(layout, masked, input.length)
        for (let i = 0; i < input.length; i++) {
          const inValue = i >= before && i < before + value.length
          // the value's bytes on this byte's line
          const line = Math.floor(i / layout.perLine)
          const from = Math.max(before, line * layout.perLine)
          const to = Math.min(before + value.length, (line + 1) * layout.perLine)
          const wholeLine = from === line * layout.perLine && to === (line + 1) * layout.perLine
          // a run of fewer than four of its bytes where a line cuts it cannot be told from other bytes
          const expected = inValue && (to - from >= 4 || wholeLine)
          expect(hex[i], `byte ${i} with ${before} before`).toBe(expected)
          if (ascii[i] !== undefined) expect(ascii[i], `ASCII of byte ${i} with ${before} before`).toBe(expected)
        }
      }
    })
  }

  it("masks its plain hex, in either case, whole or wrapped", () => {
    const hex = value.toString("hex")
    for (const form of [hex, hex.toUpperCase()]) {
      expect(masker.maskText(`digest: ${form}!`)).toBe(`digest: ${stars(form)}!`)
      const wrapped = ("00ff" + form + "ab").match(/.{1,32}/g)!.join("\n")
      const masked = masker.maskText(wrapped)
      for (let k = 0; k + 8 <= form.length; k++) expect(masked).not.toContain(form.slice(k, k + 8))
    }
  })
})

describe("hostile input", () => {
  it("masks megabytes made of a value's encodings over and over in bounded time", () => {
    const value = randomText(200)
    const masker = Secrets.unsafeMakeMasker({ knownValues: [value] })
    const bytes = Buffer.from(value)
    const base64 = bytes.toString("base64")
    const hex = bytes.toString("hex")
    const dumpLine = (i: number) => `${(i * 16).toString(16).padStart(8, "0")}  ${Array.from(bytes.subarray(i % 12, i % 12 + 16), (b) => b.toString(16).padStart(2, "0")).join(" ")}  |${value.slice(i % 12, i % 12 + 16)}|`
    const inputs = [
      base64.repeat(Math.ceil((2 << 20) / base64.length)), // one line of 2 MiB
      (base64 + "\n").repeat(Math.ceil((2 << 20) / base64.length)),
      hex.repeat(Math.ceil((1 << 20) / hex.length)),
      Array.from({ length: 20_000 }, (_, i) => dumpLine(i)).join("\n")
    ]
    for (const input of inputs) {
      const started = performance.now()
      const masked = masker.maskText(input)
      expect(performance.now() - started).toBeLessThan(5_000)
      expect(masked.length).toBe(input.length)
      expect(masked).not.toContain(base64.slice(40, 56))
    }
  })
})

describe("streaming", () => {
  const value = randomText(90) + "/ä"
  const masker = Secrets.unsafeMakeMasker({ knownValues: [value] })
  const bytes = Buffer.from(value)
  const document = [
    "starting",
    ...Buffer.concat([Buffer.from("KEY="), bytes, Buffer.from("\n")]).toString("base64").match(/.{1,64}/g)!,
    JSON.stringify({ v: value }).replace(/\//g, "\\/").replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
    ...Buffer.concat([Buffer.from("xx"), bytes]).toString("hex").match(/.{1,60}/g)!,
    ...Array.from({ length: Math.ceil((bytes.length + 5) / 16) }, (_, line) => {
      const all = Buffer.concat([Buffer.from("abcde"), bytes])
      const part = all.subarray(line * 16, line * 16 + 16)
      const hex = Array.from(part, (b) => b.toString(16).padStart(2, "0"))
      const area = (hex.slice(0, 8).join(" ") + "  " + hex.slice(8).join(" ")).padEnd(49)
      const text = Array.from(part, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("")
      return `${(line * 16).toString(16).padStart(8, "0")}  ${area} |${text}|`
    }),
    "done"
  ].join("\n") + "\n"
  const input = Buffer.from(document, "latin1")

  const streamed = (m: Secrets.Masker, cuts: ReadonlyArray<number>) => {
    const stream = m.stream()
    const parts: Array<Uint8Array> = []
    let previous = 0
    for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
      parts.push(stream.push(input.subarray(previous, cut)))
      previous = cut
    }
    parts.push(stream.push(input.subarray(previous)), stream.end())
    return Buffer.concat(parts).toString("latin1")
  }

  it("masks every encoding the same at every split offset", () => {
    const whole = Buffer.from(masker.maskBytes(input)).toString("latin1")
    expect(whole).not.toContain(bytes.toString("hex").slice(40, 48))
    for (let at = 0; at <= input.length; at++) expect(streamed(masker, [at])).toBe(whole)
  })

  it("masks every encoding the same however the output is cut, with any hold", () => {
    const holding = [0, 16, 90, 200].map((held) => Secrets.unsafeMakeMasker({ knownValues: [value], maxHeldBytes: held }))
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 30 }), fc.constantFrom(...holding), (cuts, small) => {
        expect(streamed(small, cuts.map((c) => c % (input.length + 1)))).toBe(Buffer.from(small.maskBytes(input)).toString("latin1"))
      }),
      { numRuns: 300 }
    )
  })
})
