import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Errors, Retention, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { NodeBodyFiles, SqlManifests } from "@spillway/node"
import { Clock, Effect, Exit, FastCheck as fc, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const TOKEN = "correct-horse-battery-staple-42"

/** A fresh spill directory per test, removed afterwards. */
const tempDir = tempDirs("spillway-test-")

const me: Access.Caller = { owner: "alice", channel: "cli" }

interface LayerOptions {
  readonly policy?: Layer.Layer<SpillPolicy.SpillPolicy>
  readonly files?: (real: BodyFiles.Service) => BodyFiles.Service
  readonly spill?: Spill.Options
  readonly caller?: Access.Caller
  readonly pools?: Record<string, Retention.Pool>
}

/** The body store of a directory (its bytes, as `files` may change them, and SQLite manifests beside them). */
const bodies = (directory: string, options: LayerOptions = {}) =>
  Body.layer.pipe(
    Layer.provide(Layer.mergeAll(
      Layer.sync(BodyFiles.BodyFiles, () => (options.files ?? ((f) => f))(NodeBodyFiles.make(directory))),
      SqlManifests.layerFor(Path.join(directory, ".manifests.sqlite")),
      Retention.layer(options.pools),
      Secrets.layer({ knownValues: [TOKEN] }),
      Access.allowOwners
    )),
    Layer.orDie
  )

const spillLayer = (directory: string, options: LayerOptions = {}) =>
  Layer.merge(Spill.layer(options.spill), Access.layerCaller(options.caller ?? me)).pipe(
    Layer.provide(bodies(directory, options)),
    Layer.provide(options.policy ?? SpillPolicy.allowAll)
  )

const run = <A, E>(directory: string, effect: Effect.Effect<A, E, Spill.SpillWrite | Spill.SpillRead | Access.CurrentCaller>, options: LayerOptions = {}) =>
  Effect.runPromise(Effect.provide(effect, spillLayer(directory, options)))

const runExit = <A, E>(directory: string, effect: Effect.Effect<A, E, Spill.SpillWrite | Spill.SpillRead | Access.CurrentCaller>, options: LayerOptions = {}) =>
  Effect.runPromiseExit(Effect.provide(effect, spillLayer(directory, options)))

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1} of the build`).join("\n") + "\n"

const visible = (dir: string) => Fs.readdirSync(dir).filter((f) => !f.startsWith("."))
/** Everything in the directory but the manifest database. */
const everything = (dir: string) => Fs.readdirSync(dir).filter((f) => !f.startsWith(".manifests.sqlite"))

describe("keepOutput", () => {
  it("returns short output exactly as printed and saves nothing", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput("all good\n", 0))
    expect(kept.text).toBe("all good\n")
    expect(kept.truncated).toBe(false)
    expect(kept.filename).toBeUndefined()
    expect(Fs.existsSync(dir) ? visible(dir) : []).toEqual([])
  })

  it("returns exactly 2,000 characters whole, and previews 2,001", async () => {
    const dir = tempDir()
    const exact = "\u20ac".repeat(1999) + "\n"
    expect((await run(dir, Spill.keepOutput(exact, 0))).text).toBe(exact)
    const over = "\u20ac".repeat(2000) + "\n"
    const kept = await run(dir, Spill.keepOutput(over, 0))
    expect(kept.truncated).toBe(true)
    expect([...kept.text].length).toBeLessThanOrEqual(2000)
  })

  it("saves long output and previews it within the cap", async () => {
    const dir = tempDir()
    const text = numbered(2100)
    const kept = await run(dir, Spill.keepOutput(text, 1))
    expect(kept.truncated).toBe(true)
    expect([...kept.text].length).toBeLessThanOrEqual(Spill.MAX_STDOUT_LEN)
    expect(kept.filename).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[0-9a-f]{6}\.log$/)
    expect(kept.text).toContain("exit code 1")
    expect(kept.text).toContain("line 1 of the build\n")
    expect(kept.text).toContain("line 2100 of the build")
    expect(kept.text).toMatch(new RegExp(`\\[Showing lines 1-\\d+, \\d+-2100 of 2100\\. Full output: ${kept.filename}\\]`))
    expect(kept.text).toContain(`readSpill("${kept.filename}"`)
    expect(kept.text).toContain(`grepSpill("PATTERN", "${kept.filename}")`)
    const file = Path.join(dir, kept.filename!)
    expect(Fs.readFileSync(file, "utf8")).toBe(text)
    expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
    // nothing but the body remains beside the manifests
    expect(everything(dir)).toEqual([kept.filename])
  })

  it("shows the lines that explain a failure, with numbers readSpill opens", async () => {
    const dir = tempDir()
    const text = numbered(1200) + "src/pkg/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n" +
      numbered(1800) + "Found 0 errors in the other packages.\n"
    const kept = await run(dir, Spill.keepOutput(text, 2))
    expect(kept.text).toContain("[Lines that report errors or failures: 1 of 1]\n1201: src/pkg/a.ts(3,7): error TS2322")
    expect(kept.salient).toMatchObject({ total: 1, rules: ["compiler-diagnostic"] })
    const page = await run(dir, Spill.readSpill(kept.filename!, { offset: 1201, limit: 1 }))
    expect(page.text).toContain("error TS2322")
    // a host's own rule, for one tool
    const custom = await run(dir, Spill.keepOutput(numbered(1000) + "QUOTA EXCEEDED at step 9\n" + numbered(1000), 1, { tool: "deploy" }), {
      spill: { salienceByTool: { deploy: [{ id: "quota", description: "quota", anchors: ["QUOTA"], pattern: /QUOTA EXCEEDED/ }] } }
    })
    expect(custom.text).toContain("1001: QUOTA EXCEEDED at step 9")
    const otherTool = await run(dir, Spill.keepOutput(numbered(1000) + "QUOTA EXCEEDED at step 9\n" + numbered(1000), 1, { tool: "build" }), {
      spill: { salienceByTool: { deploy: [{ id: "quota", description: "quota", anchors: ["QUOTA"], pattern: /QUOTA EXCEEDED/ }] } }
    })
    expect(otherTool.text).not.toContain("Lines that report")
  })

  it("shows the start and the end of a line longer than the cap, with the bytes between counted", async () => {
    const dir = tempDir()
    const first = "<" + "é".repeat(500_000) + ">"
    const kept = await run(dir, Spill.keepOutput(first + "\n" + "short tail line\n", 0))
    expect([...kept.text].length).toBeLessThanOrEqual(2000)
    const marker = /\[Showing lines 1-2 of 2, line 1 cut to (\d+) of 1000002 bytes\. Full output: /.exec(kept.text)
    expect(marker).not.toBeNull()
    const shown = kept.text.split("\n").find((l) => l.startsWith("<é"))!
    expect(shown).toMatch(new RegExp(`^<é+\\[…${1_000_002 - Number(marker![1])} bytes omitted…\\]é+>$`))
    expect(kept.text).toContain("\nshort tail line\n")
    // a one-line JSON document: its opening and its closing, whatever lies between
    const doc = JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ id: i })), end: "last" })
    const one = await run(dir, Spill.keepOutput(doc, 0))
    expect([...one.text].length).toBeLessThanOrEqual(2000)
    expect(one.text).toContain("{\"items\":[{\"id\":0},")
    expect(one.text).toMatch(/\{"id":19999\}\],"end":"last"\}\n\[Showing lines 1-1 of 1, line 1 cut to/)
  })

  it("a line longer than the cap shows its real start and end, the bytes between counted exactly, within the cap", async () => {
    await fc.assert(fc.asyncProperty(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }).map((s) => s.replace(/\n/g, " ")),
    fc.integer({ min: 600, max: 6_000 }),
    fc.array(fc.string({ maxLength: 30 }).map((s) => s.replace(/\n/g, " ")), { maxLength: 3 }),
    fc.integer({ min: 200, max: 3_000 }),
    async (unit, repeat, rest, maxChars) => {
    const dir = tempDir()
    const line = `A${unit.repeat(Math.ceil(repeat / unit.length))}Z`
    const text = [line, ...rest].join("\n") + "\n"
    const kept = await run(dir, Spill.keepOutput(text, 1), { spill: { maxChars } })
    expect([...kept.text].length).toBeLessThanOrEqual(maxChars)
    const total = new TextEncoder().encode(line).length
    const marker = new RegExp(`line 1 cut to (\\d+) of ${total} bytes`).exec(kept.text)
    if (marker === null) return // the line fits, or the cap leaves no room for it
    const shown = kept.text.split("\n").find((l) => l.startsWith("A"))!
    const gap = /\[…(\d+) bytes omitted…\]/.exec(shown)
    const bytes = (s: string) => new TextEncoder().encode(s).length
    if (gap === null) {
      // no room for the gap's own marker, or the line's end not known: the start alone, counted, nothing made up
      expect(line.startsWith(shown)).toBe(true)
      expect(shown.length).toBeGreaterThan(0)
      expect(Number(marker[1])).toBe(bytes(shown))
      return
    }
    const [start, end] = [shown.slice(0, gap.index), shown.slice(gap.index + gap[0].length)]
    expect(line.startsWith(start)).toBe(true)
    expect(line.endsWith(end)).toBe(true)
    expect(end.endsWith("Z")).toBe(true)
    expect(Number(gap[1])).toBe(total - bytes(start) - bytes(end))
    expect(Number(marker[1])).toBe(bytes(start) + bytes(end))
  }), { numRuns: 25, examples: [[" ", 600, [], 241], ["  ", 600, [], 258], ["é", 600, ["x"], 3_000]] })
  })

  it("saves whole lines up to the per-file limit, and says the copy holds only them", async () => {
    const dir = tempDir()
    const text = numbered(3000)
    const kept = await run(dir, Spill.keepOutput(text, 0), { spill: { maxFileBytes: 10_000 } })
    const saved = Fs.readFileSync(Path.join(dir, kept.filename!), "utf8")
    expect(saved.length).toBeLessThanOrEqual(10_000)
    expect(saved.endsWith("\n")).toBe(true)
    expect(text.startsWith(saved)).toBe(true)
    const lines = saved.split("\n").length - 1
    expect(kept.savedInPart).toEqual({ lines, bytes: saved.length })
    expect(kept.text).not.toContain("Full output")
    expect(kept.text).toContain(`holds only lines 1-${lines} (${saved.length} bytes): the output passed the per-file limit`)
    expect(kept.text).toContain("[Showing lines 1-")
    expect(kept.totalLines).toBe(3000)
    const page = await run(dir, Spill.readSpill(kept.filename!, { offset: lines }))
    expect(page).toMatchObject({ totalLines: lines, lines: 1 })
    // no limit passed: the marker names the whole copy
    const whole = await run(dir, Spill.keepOutput(text, 0))
    expect(whole.savedInPart).toBeUndefined()
    expect(whole.text).toContain(`Full output: ${whole.filename}`)
  })

  it("masks secrets before anything is shown or saved", async () => {
    const dir = tempDir()
    const text = numbered(500) + `token in the middle: ${TOKEN}\n` + numbered(500) + `and at the end ${TOKEN}\n`
    const kept = await run(dir, Spill.keepOutput(text, 0))
    expect(kept.text).not.toContain(TOKEN)
    expect(kept.text).toContain("*".repeat(TOKEN.length))
    const saved = Fs.readFileSync(Path.join(dir, kept.filename!), "utf8")
    expect(saved).not.toContain(TOKEN)
    expect(saved.length).toBe(text.length)
    const short = await run(dir, Spill.keepOutput(`x ${TOKEN}\n`, 0))
    expect(short.text).toBe(`x ${"*".repeat(TOKEN.length)}\n`)
  })

  it("falls back to a marked cut when the policy refuses the save", async () => {
    const dir = tempDir()
    const policy = SpillPolicy.fromFunction((op) => (op._tag === "spill/write" ? "saving is off here" : undefined))
    const kept = await run(dir, Spill.keepOutput(numbered(2100), 2), { policy })
    expect(kept.filename).toBeUndefined()
    expect(kept.notSaved).toContain("saving is off here")
    expect(kept.text).toContain("[No copy was saved: spill/write of ")
    expect(kept.text).toMatch(/\[Showing lines 1-\d+, \d+-2100 of 2100\]/)
    expect(kept.text).not.toContain("Full output")
    expect([...kept.text].length).toBeLessThanOrEqual(2000)
    expect(Fs.existsSync(dir) ? visible(dir) : []).toEqual([])
  })

  it("falls back when the directory cannot be created", async () => {
    const base = tempDir()
    Fs.writeFileSync(Path.join(base, "plain-file"), "")
    const kept = await run(Path.join(base, "plain-file", "spill"), Spill.keepOutput(numbered(3000), 0))
    expect(kept.filename).toBeUndefined()
    expect(kept.text).toContain("[No copy was saved:")
    expect(kept.text).toMatch(/ENOTDIR|NotFound|BadResource|not a directory/i)
  })

  it("leaves no partial file when a write fails half-way", async () => {
    const dir = tempDir()
    // the real store, except that writes fail once 64 KiB have been written to a body
    const failing = (real: BodyFiles.Service): BodyFiles.Service => ({
      ...real,
      create: (name, visibility) =>
        Effect.map(real.create(name, visibility), (sink) => {
          let written = 0
          return {
            ...sink,
            write: (bytes: Uint8Array) => {
              written += bytes.length
              return written > 65_536
                ? Effect.fail(new Errors.StoreFailed({ operation: `write ${name}`, reason: "injected write failure" }))
                : sink.write(bytes)
            }
          }
        })
    })
    const kept = await run(dir, Spill.keepOutput(numbered(20_000), 1), { files: failing })
    expect(kept.filename).toBeUndefined()
    expect(kept.notSaved).toContain("injected write failure")
    expect(kept.text).toContain("[No copy was saved:")
    expect(kept.text).toContain("line 20000 of the build")
    expect(everything(dir)).toEqual([])
  })

  it("leaves no partial file when the disk is full (a real tmpfs)", async (ctx) => {
    const dir = tempDir()
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir], { stdio: "pipe" })
    } catch (e) {
      console.log(`skipped: cannot mount a small tmpfs here (${String((e as Error).message).split("\n")[0]})`)
      ctx.skip()
      return
    }
    try {
      const kept = await run(dir, Spill.keepOutput(numbered(40_000), 1))
      expect(kept.filename).toBeUndefined()
      expect(kept.notSaved).toMatch(/ENOSPC|no space/i)
      expect(kept.text).toContain("[No copy was saved:")
      expect(everything(dir)).toEqual([])
    } finally {
      execFileSync("umount", [dir])
    }
  })
})

describe("readSpill", () => {
  it("reads the whole file or a slice, and says where to continue", async () => {
    const dir = tempDir()
    const text = numbered(2100)
    const kept = await run(dir, Spill.keepOutput(text, 0))
    const whole = await run(dir, Spill.readSpill(kept.filename!))
    expect(whole.text).toBe(text)
    expect(whole.totalLines).toBe(2100)
    expect(whole.nextOffset).toBeUndefined()
    const page = await run(dir, Spill.readSpill(kept.filename!, { offset: 900, limit: 50 }))
    expect(page.text).toBe(text.split("\n").slice(899, 949).join("\n") + "\n")
    expect(page).toMatchObject({ offset: 900, lines: 50, totalLines: 2100, nextOffset: 950 })
    const last = await run(dir, Spill.readSpill(kept.filename!, { offset: 2100, limit: 50 }))
    expect(last).toMatchObject({ lines: 1, text: "line 2100 of the build\n" })
    expect(last.nextOffset).toBeUndefined()
  })

  it("concatenating every page gives the file back", async () => {
    const dir = tempDir()
    const text = Array.from({ length: 3000 }, (_, i) => "é".repeat(i % 7) + `row ${i}` + (i % 11 === 0 ? "" : " tail")).join("\n")
    const kept = await run(dir, Spill.keepOutput(text, 0))
    const readAll = (limit: number) =>
      Effect.gen(function*() {
        let offset = 1
        let out = ""
        for (;;) {
          const page = yield* Spill.readSpill(kept.filename!, { offset, limit })
          out += page.text
          if (page.nextOffset === undefined) return out
          offset = page.nextOffset
        }
      })
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 400 }), async (limit) => {
      expect(await run(dir, readAll(limit))).toBe(text)
    }), { numRuns: 15 })
  })

  it("refuses bad numbers and offsets past the end with typed errors", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput(numbered(2100), 0))
    for (const [options, argument] of [[{ offset: -1 }, "offset"], [{ limit: 1.5 }, "limit"], [{ offset: 2101 }, "offset"]] as const) {
      const exit = await runExit(dir, Spill.readSpill(kept.filename!, options))
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain(`"argument":"${argument}"`)
    }
  })

  it("finds a deep page through the manifest's line index without scanning the body", async () => {
    const dir = tempDir()
    const lines = 200_000
    const kept = await run(dir, Spill.keepOutput(numbered(lines), 0))
    // count the bytes the store reads
    let read = 0
    const counting = (real: BodyFiles.Service): BodyFiles.Service => ({
      ...real,
      open: (name) =>
        Effect.map(real.open(name), (file) => ({
          ...file,
          read: (position: number, length: number, into?: Uint8Array) =>
            Effect.tap(file.read(position, length, into), (b) => Effect.sync(() => (read += b.length)))
        }))
    })
    const page = await run(dir, Spill.readSpill(kept.filename!, { offset: 199_000, limit: 10 }), { files: counting })
    expect(page.text.split("\n")[0]).toBe("line 199000 of the build")
    expect(Fs.statSync(Path.join(dir, kept.filename!)).size).toBeGreaterThan(4_000_000)
    expect(read).toBeLessThan(200_000)
  })

  it("refuses another owner's output and expired output, by name as by cursor", async () => {
    const dir = tempDir()
    const pools = { spill: { ttlMillis: 3_000 } }
    const kept = await run(dir, Spill.keepOutput(numbered(2100), 0), { pools })
    const mallory = { owner: "mallory", channel: "cli" }
    for (const effect of [Effect.asVoid(Spill.readSpill(kept.filename!)), Effect.asVoid(Spill.grepSpill("line", kept.filename!))]) {
      const exit = await runExit(dir, effect, { caller: mallory, pools })
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("AccessDenied")
    }
    // the same owner from another channel reads it: saved output is the owner's, not the conversation's
    expect((await run(dir, Spill.readSpill(kept.filename!, { limit: 1 }), { caller: { owner: "alice", channel: "mcp" }, pools })).lines).toBe(1)
    await new Promise((r) => setTimeout(r, 3_100))
    for (const effect of [Effect.asVoid(Spill.readSpill(kept.filename!)), Effect.asVoid(Spill.grepSpill("line", kept.filename!))]) {
      const exit = await runExit(dir, effect, { pools })
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("Expired")
    }
  })
})

describe("grepSpill", () => {
  it("returns matching lines with their numbers and says when more exist", async () => {
    const dir = tempDir()
    const text = numbered(3000).replace("line 1500 of the build", "src/a.ts(3,1): error TS2304: Cannot find name")
    const kept = await run(dir, Spill.keepOutput(text, 2))
    const one = await run(dir, Spill.grepSpill("error TS\\d+", kept.filename!))
    expect(one.matches).toEqual([{ line: 1500, text: "src/a.ts(3,1): error TS2304: Cannot find name", cut: false }])
    expect(one.more).toBe(false)
    const many = await run(dir, Spill.grepSpill("^line \\d+0 ", kept.filename!, { maxResults: 5 }))
    expect(many.matches.map((m) => m.line)).toEqual([10, 20, 30, 40, 50])
    expect(many.more).toBe(true)
    const none = await run(dir, Spill.grepSpill("no such thing", kept.filename!))
    expect(none.matches).toEqual([])
    const ci = await run(dir, Spill.grepSpill("ERROR ts2304", kept.filename!, { ignoreCase: true }))
    expect(ci.matches.map((m) => m.line)).toEqual([1500])
  })

  it("numbers lines right across blocks, with long lines and multi-byte text", async () => {
    const dir = tempDir()
    // ~12 MiB: several 4 MiB blocks, a 5 MiB line in the middle, and non-ASCII lines
    const lines = Array.from({ length: 150_000 }, (_, i) => i % 1000 === 0 ? `é line ${i + 1} ✓` : `line ${i + 1} of the build`)
    lines[70_000] = "x".repeat(5 * 1024 * 1024) + " needle in a huge line"
    lines[70_001] = "needle after the huge line"
    const text = lines.join("\n") + "\n"
    const kept = await run(dir, Spill.keepOutput(text, 0))
    const expected = (re: RegExp) => lines.flatMap((l, i) => (re.test(l.slice(0, 65_536)) ? [i + 1] : []))
    for (const [pattern, ignoreCase] of [["^line \\d*77 of", false], ["✓$", false], ["needle", false], ["LINE 1499\\d\\d OF", true]] as const) {
      const r = await run(dir, Spill.grepSpill(pattern, kept.filename!, { maxResults: 10_000, ignoreCase }))
      expect(r.matches.map((m) => m.line), pattern).toEqual(expected(new RegExp(pattern, ignoreCase ? "i" : "")))
      expect(r.more).toBe(false)
    }
    const huge = await run(dir, Spill.grepSpill("^x+", kept.filename!))
    expect(huge.matches.map((m) => [m.line, m.cut, m.text.length])).toEqual([[70_001, true, 2000]])
  })

  it("stops at its deadline and says at which line", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput(numbered(300_000), 0))
    // a clock that moves 3 s every time it is read: the 10 s deadline passes at the fourth block
    let now = 0
    const base = Clock.make()
    const clock: Clock.Clock = Object.assign(Object.create(Object.getPrototypeOf(base)), base, {
      currentTimeMillis: Effect.sync(() => (now += 3000))
    })
    const r = await run(dir, Spill.grepSpill("^line \\d+000 of", kept.filename!, { maxResults: 10_000 }).pipe(Effect.withClock(clock)))
    expect(r.stoppedAtLine).toBeGreaterThan(1000)
    expect(r.stoppedAtLine).toBeLessThan(300_000)
    // every line before the stop was searched, none after it
    expect(r.matches.map((m) => m.line)).toEqual(
      Array.from({ length: Math.floor((r.stoppedAtLine! - 1) / 1000) }, (_, i) => (i + 1) * 1000)
    )
  })

  it("refuses invalid and unsupported patterns", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput(numbered(3000), 0))
    for (const [pattern, kind] of [["(", "invalid"], ["(a)\\1", "unsupported"], ["a(?=b)", "unsupported"]] as const) {
      const exit = await runExit(dir, Spill.grepSpill(pattern, kept.filename!))
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain(`"kind":"${kind}"`)
    }
  })
})

describe("refusals", () => {
  const refusedNames = [
    "", "../etc/passwd", "a/b.log", "a\\b.log", "..", "x..log", ".hidden.log", "a\0b", "%2e%2e%2fpasswd", "x".repeat(129),
    "name with space.log", "ünïcode.log"
  ]

  it("refuses every name off the allowlist before touching the store", async () => {
    // a store whose every call would die: the refusal has to come first
    const dying = (real: BodyFiles.Service): BodyFiles.Service => ({
      ...real,
      create: () => Effect.die("create must not be called"),
      open: () => Effect.die("open must not be called"),
      remove: () => Effect.die("remove must not be called")
    })
    for (const name of refusedNames) {
      const exit = await runExit(tempDir(), Spill.readSpill(name), { files: dying })
      const text = Exit.isFailure(exit) ? JSON.stringify(exit.cause) : "succeeded"
      expect(text, name).toContain("InvalidRequest")
      expect(text, name).toContain(`"argument":"filename"`)
    }
  })

  it("refuses a kept body replaced by a symlink, a hard link, a FIFO or a directory, without blocking", async () => {
    const dir = tempDir()
    const names = []
    for (let i = 0; i < 4; i++) names.push((await run(dir, Spill.keepOutput(numbered(2100), 0))).filename!)
    const outside = Path.join(tempDir(), "secret.txt")
    Fs.writeFileSync(outside, "outside the spill directory\n")
    const at = (name: string) => Path.join(dir, name)
    Fs.rmSync(at(names[0]!))
    Fs.symlinkSync(outside, at(names[0]!))
    Fs.linkSync(at(names[1]!), at("extra-link.log"))
    Fs.rmSync(at(names[2]!))
    execFileSync("mkfifo", [at(names[2]!)])
    Fs.rmSync(at(names[3]!))
    Fs.mkdirSync(at(names[3]!))
    const reasons = ["symbolic link", "2 hard links", "FIFO", "directory"]
    for (let i = 0; i < 4; i++) {
      const exit = await runExit(dir, Spill.readSpill(names[i]!))
      const text = Exit.isFailure(exit) ? JSON.stringify(exit.cause) : "succeeded"
      expect(text, reasons[i]).toContain("StoreFailed")
      expect(text, reasons[i]).toContain(reasons[i])
    }
    // a file planted under a name no body has is not found: nothing is opened without a manifest
    Fs.symlinkSync(outside, at("planted.log"))
    const planted = await runExit(dir, Spill.readSpill("planted.log"))
    expect(Exit.isFailure(planted) && JSON.stringify(planted.cause)).toContain("NotFound")
  })

  it("reports a missing file as not found", async () => {
    const dir = tempDir()
    const exit = await runExit(dir, Spill.readSpill("2026-01-01T00-00-00-000Z-abcdef.log"))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("NotFound")
  })

  it("lets the policy refuse a read with a typed error", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput(numbered(2100), 0))
    const policy = SpillPolicy.fromFunction((op) => (op._tag === "spill/read" ? "reading is not granted" : undefined))
    const exit = await runExit(dir, Spill.readSpill(kept.filename!), { policy })
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("reading is not granted")
  })
})

describe("capabilities", () => {
  it("a read-only layer provides SpillRead and nothing that writes", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput(numbered(2100), 0))
    const readOnly = Layer.merge(Spill.layerRead(), Access.layerCaller(me)).pipe(
      Layer.provide(bodies(dir)),
      Layer.provide(SpillPolicy.allowAll)
    )
    const page = await Effect.runPromise(Effect.provide(Spill.readSpill(kept.filename!, { limit: 1 }), readOnly))
    expect(page.text).toBe("line 1 of the build\n")
    const service = await Effect.runPromise(Effect.provide(Spill.SpillRead, readOnly))
    expect(Object.keys(service).sort()).toEqual(["copySpill", "grepSpill", "readSpill"])
    // @ts-expect-error a program that writes needs SpillWrite, which the read-only layer does not grant
    const _wontCompile: Effect.Effect<unknown> = Effect.provide(Spill.keepOutput("x", 0), readOnly)
    void _wontCompile
  })
})
