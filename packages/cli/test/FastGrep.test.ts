import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Scan from "@spillway/core/BlockScan"
import * as LineIndex from "@spillway/core/LineIndex"
import * as Utf8 from "@spillway/core/Utf8"
import { FastCheck as fc } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Found, parseArgs, search, type SearchOptions } from "../src/fastGrep.js"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))

const made: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-grep-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

const checked = (pattern: string, ignoreCase: boolean): Scan.Checked => {
  const c = Scan.check(pattern, ignoreCase)
  if (Scan.isRefusal(c)) throw new Error(`${pattern} was refused: ${c.reason}`)
  return c
}

/** Searches `body` from a file, as the grep program does. */
const searchBody = (body: Uint8Array, pattern: string, o: Partial<SearchOptions> & { readonly every?: number } = {}): Found | undefined => {
  const file = Path.join(tempDir(), "body.log")
  Fs.writeFileSync(file, body)
  const fd = Fs.openSync(file, "r")
  try {
    const index = LineIndex.fromBytes(body, o.every ?? 4)
    const fromLine = o.fromLine ?? 1
    return search(fd, body.length, index, checked(pattern, o.ignoreCase ?? false), {
      ignoreCase: false,
      maxResults: 100,
      fromLine,
      fromByte: lineStarts(body)[fromLine - 1] ?? body.length,
      deadline: Number.MAX_SAFE_INTEGER,
      ...o
    })
  } finally {
    Fs.closeSync(fd)
  }
}

/** Byte offsets where each line starts (a final line break starts no line). */
const lineStarts = (body: Uint8Array): Array<number> => {
  const starts: Array<number> = body.length > 0 ? [0] : []
  for (let i = 0; i < body.length; i++) if (body[i] === 10 && i + 1 < body.length) starts.push(i + 1)
  return starts
}

/**
 * What a search must find, line by line with RE2 on each line's decoded
 * text: a line tested on its first `maxLineChars` characters, and a line
 * that fills a whole block (with more of the body after it) on the start
 * of that block only, as the whole command tests it.
 */
const reference = (body: Uint8Array, pattern: string, o: { ignoreCase: boolean; fromLine: number; maxResults: number; block: number; maxLineChars: number; maxMatchChars: number }) => {
  const line = checked(pattern, o.ignoreCase).compiled.line
  const starts = lineStarts(body)
  const matches: Array<{ line: number; text: string }> = []
  for (let k = o.fromLine - 1; k < starts.length; k++) {
    const s = starts[k]!
    const br = body.indexOf(10, s)
    const e = br === -1 ? body.length : br
    const long = e - s >= o.block && body.length - s > o.block
    const text = long
      ? Utf8.decodeLossy(body.subarray(s, s + Math.min(o.block, o.maxLineChars * 4))).slice(0, o.maxLineChars)
      : Utf8.decodeLossy(body.subarray(s, e))
    if (line.test(text.slice(0, o.maxLineChars))) {
      if (matches.length === o.maxResults) return { matches, more: true }
      matches.push({ line: k + 1, text: Utf8.takeCodePoints(text, o.maxMatchChars) })
    }
  }
  return { matches, more: false }
}

/** Line pieces: words the patterns look for in either case, CRLF, bytes that are not UTF-8, characters outside ASCII. */
const piece = fc.constantFrom<ReadonlyArray<number> | string>(
  "error: unit 12 failed", "ERROR: Unit 7 FAILED", "error: unit x failed", "warn", "WARN", "FAIL", "fail", "ok ", "é", "\u212a1x", "K1X", "\r",
  "\r\n", "\n", "\n", "\n", "x", "abc ", [0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98, 0x80]
)
const bodyArb = fc.tuple(fc.array(piece, { maxLength: 200 }), fc.nat(3), fc.nat(400)).map(([pieces, longAt, longSize]) => {
  const parts = pieces.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p)))
  // now and then a very long line, holding a word at its end
  if (longAt < parts.length && longSize > 150) parts.splice(longAt, 0, Buffer.from("y".repeat(longSize) + "error: unit 9 failed"))
  return new Uint8Array(Buffer.concat(parts))
})
const patterns = ["error: unit [0-9]+ failed", "warn|FAIL", "unit \\d", "fail(ed)?$", "FAIL\\s", "abc|k1x|FAIL", "y{3}error", "unit [0-9]+ failed", "[e]rror: [u]nit"]

describe("the grep program's search", () => {
  it("reads its common forms and leaves everything else to the whole command", () => {
    expect(parseArgs(["grep", "-i", "--offset", "5", "x+y", "NAME.log"])).toEqual({ pattern: "x+y", name: "NAME.log", ignoreCase: true, offset: 5, maxResults: 100 })
    expect(parseArgs(["grep", "--max-results=2", "--", "-x", "NAME.log"])).toMatchObject({ pattern: "-x", maxResults: 2 })
    for (const args of [["grep", "--json", "x", "N"], ["grep", "x"], ["grep", "-x", "N"], ["grep", "--max-results", "0", "x", "N"], ["grep", "-i", "-i", "x", "N"], ["grep", "--offset", "-1", "x", "N"], ["grep", "--help"]]) {
      expect(parseArgs(args)).toBeUndefined()
    }
  })

  it.prop("finds what RE2 finds line by line, across blocks, on CRLF, malformed UTF-8 and long lines", [
    bodyArb,
    fc.constantFrom(...patterns),
    fc.boolean(),
    fc.integer({ min: 16, max: 160 }),
    fc.integer({ min: 1, max: 6 }),
    fc.oneof(fc.constant(100), fc.integer({ min: 1, max: 8 })),
    fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 60 }))
  ], ([body, pattern, ignoreCase, block, every, maxResults, fromLine]) => {
    const lines = lineStarts(body).length
    const from = Math.min(fromLine, Math.max(lines, 1))
    const limits = { block, maxLineChars: 40, maxMatchChars: 25, maxResults, ignoreCase, fromLine: from }
    const found = searchBody(body, pattern, { ...limits, every })
    expect(found).toBeDefined()
    const expected = reference(body, pattern, limits)
    expect(found!.matches).toEqual(expected.matches)
    expect(found!.more).toBe(expected.more)
    expect(found!.stoppedAt).toBeUndefined()
  }, { fastCheck: { numRuns: 400 } })

  it("stops at its deadline: before the first block, and inside a block giving that block up whole", () => {
    const body = new Uint8Array(Buffer.from(Array.from({ length: 40 }, (_, i) => (i % 10 === 3 ? `error: unit ${i} failed` : `ok ${i}`)).join("\n") + "\n"))
    expect(searchBody(body, "error: unit", { deadline: -1 })).toEqual({ matches: [], more: false, stoppedAt: 1 })
    // the clock passes the deadline after the first block's two candidates were tested
    let ticks = 0
    const found = searchBody(body, "error: unit", { block: 120, deadline: 3, now: () => ticks++ })!
    const whole = searchBody(body, "error: unit", { block: 120 })!
    // it stopped at the first line holding the literal in the block it gave up, and kept what came before it
    expect(whole.matches.map((m) => m.line)).toContain(found.stoppedAt)
    expect(found.stoppedAt).toBeGreaterThan(4)
    expect(found.matches).toEqual(whole.matches.filter((m) => m.line < found.stoppedAt!))
    expect(found.matches.length).toBeLessThan(whole.matches.length)
  })

  it("hands a pattern without a literal back to the whole command", () => {
    expect(searchBody(new Uint8Array(Buffer.from("a\nb\n")), "^.$")).toBeUndefined()
    expect(searchBody(new Uint8Array(Buffer.from("sk\n")), "sks", { ignoreCase: true })).toBeUndefined()
  })
})

// --- the program against the whole command -------------------------------------------------------------------------

interface Result {
  readonly status: number | null
  readonly stdout: Buffer
  readonly stderr: string
}

const spillway = (dir: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): Result => {
  const r = spawnSync(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir, ...env },
    maxBuffer: 256 * 1024 * 1024
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString("utf8") }
}

/** Saves `body` as a command's output and returns its name. */
const save = (dir: string, body: Uint8Array): string => {
  const file = Path.join(tempDir(), "out.txt")
  Fs.writeFileSync(file, body)
  const r = spillway(dir, ["run", "--json", "--", "cat", file])
  const name = JSON.parse(r.stdout.toString("utf8")).filename as string | undefined
  if (name === undefined) throw new Error(`not saved: ${r.stdout.toString("utf8")}`)
  return name
}

/** Runs `node` with a module that records, in `marker`, whether the whole command was loaded. */
const preload = (marker: string) => {
  const file = Path.join(tempDir(), "watch.cjs")
  Fs.writeFileSync(file, `const fs = require("node:fs"); const read = fs.readFileSync;
fs.readFileSync = function (p, ...rest) { if (String(p).endsWith("dist/spillway.cjs")) fs.writeFileSync(${JSON.stringify(marker)}, "whole"); return read.call(this, p, ...rest) }\n`)
  return file
}

const bigBody = () => {
  const lines: Array<string> = []
  for (let i = 0; i < 60_000; i++) {
    lines.push(i % 9_973 === 17 ? `src/m_${i}.c:1:7: error: unit ${i} failed to compile\r` : `[${i}] compiling packages/pkg-${i % 31}/file.ts ok (${i % 1000} ms)`)
  }
  // a line longer than a block, with the literal past its start, and one past the longest line tested
  lines.splice(30_000, 0, "error: unit 1 failed " + "z".repeat(1_200_000), "x".repeat(70_000) + " error: unit 2 failed")
  return new Uint8Array(Buffer.concat([Buffer.from(lines.join("\n") + "\n"), Buffer.from([0xff, 0xfe]), Buffer.from(" error: unit 3 failed é\n")]))
}

describe("spillway grep, the program and the whole command", () => {
  const dir = tempDir()
  const big = save(dir, bigBody())
  const small = save(dir, new Uint8Array(Buffer.from(Array.from({ length: 500 }, (_, i) => `line ${i}: ${i % 7 === 0 ? "WARN disk" : "ok"}${i % 50 === 0 ? " FAIL" : ""}`).join("\r\n"))))

  it("print the same bytes and exit with the same status, and the program does not load the whole command", () => {
    const cases: Array<ReadonlyArray<string>> = [
      ["error: unit [0-9]+ failed", big],
      ["-i", "ERROR: UNIT [0-9]+", big],
      ["--max-results", "3", "error: unit", big],
      ["--offset", "30001", "error: unit [0-9]+ failed", big],
      // two runs every match holds, the rarer looked for; a class of one character as a literal
      ["unit [0-9]+ failed to", big],
      ["file[.]ts ok [(]9", big],
      ["warn|FAIL", small],
      ["-i", "warn|fail", small],
      ["--max-results=2", "--offset", "100", "WARN", small],
      ["no such words", small],
      ["--", "-x-|disk", small]
    ]
    for (const args of cases) {
      const marker = Path.join(tempDir(), "loaded")
      const fast = spillway(dir, ["grep", ...args], { NODE_OPTIONS: `--require ${preload(marker)}` })
      expect(Fs.existsSync(marker), `${args.join(" ")} was searched by the whole command`).toBe(false)
      const whole = spillway(dir, ["grep", ...args], { SPILLWAY_QUICK: "0" })
      expect({ args, status: fast.status, stdout: fast.stdout.toString("latin1"), stderr: fast.stderr })
        .toEqual({ args, status: whole.status, stdout: whole.stdout.toString("latin1"), stderr: whole.stderr })
    }
    const found = spillway(dir, ["grep", "error: unit [0-9]+ failed", big]).stdout.toString("utf8").split("\n")
    expect(found.length).toBeGreaterThan(6)
    expect(found.some((l) => l.startsWith("30001:error: unit 1 failed zzz"))).toBe(true)
  })

  it("leaves JSON, patterns without a literal and refusals to the whole command, and masks an environment's secret-looking values as it does", () => {
    const cases: Array<[ReadonlyArray<string>, Record<string, string>]> = [
      [["--json", "WARN", small], {}],
      [["^line 1\\d:", small], {}],
      // a literal on every line that no line matches: whole blocks are tested at once
      [["[0-9]{5}[.]ts", big], {}],
      [["(a)\\1", small], {}],
      [["WARN", "no-such-output.log"], {}],
      [["--offset", "9999", "WARN", small], {}],
      [["WARN", small], { SERVICE_TOKEN: "line 7: WARN" }]
    ]
    for (const [args, env] of cases) {
      const fast = spillway(dir, ["grep", ...args], env)
      const whole = spillway(dir, ["grep", ...args], { ...env, SPILLWAY_QUICK: "0" })
      expect({ args, status: fast.status, stdout: fast.stdout.toString("latin1"), stderr: fast.stderr })
        .toEqual({ args, status: whole.status, stdout: whole.stdout.toString("latin1"), stderr: whole.stderr })
    }
    // the value the environment holds is masked in what is printed
    expect(spillway(dir, ["grep", "WARN", small], { SERVICE_TOKEN: "line 7: WARN" }).stdout.toString("utf8")).not.toContain("line 7: WARN")
  })

  it("stops quietly, printing nothing twice, when its reader goes away", () => {
    const r = spawnSync("bash", ["-c", `"$0" "$1" grep --max-results 10000 compiling "$2" | head -c 5; echo " $\{PIPESTATUS[0]}"`, process.execPath, bin, big], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir }
    })
    expect(r.stdout.toString("utf8")).toBe("1:[0] 0\n")
    expect(r.stderr.toString("utf8")).toBe("")
  })

  it("keeps its memory to a block on a body of one line of 64 MiB", () => {
    const d = tempDir()
    const name = save(d, new Uint8Array(Buffer.concat([Buffer.from("error: unit 5 failed "), Buffer.alloc(64 * 1024 * 1024, 0x61), Buffer.from("\nerror: unit 6 failed\n")])))
    const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, bin, "grep", "error: unit [0-9]+ failed", name], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: d },
      maxBuffer: 16 * 1024 * 1024
    })
    const out = r.stdout.toString("utf8")
    expect(out).toBe(`1:error: unit 5 failed ${"a".repeat(1979)}\n2:error: unit 6 failed\n`)
    const kib = Number(r.stderr.toString("utf8").trim().split("\n").pop())
    expect(kib / 1024).toBeLessThan(100)
  }, 60_000)
})
