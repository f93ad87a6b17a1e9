import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { LineIndex, Secrets, Spill, SpillPolicy, SpillStore } from "@spillway/core"
import { NodeSpillStore } from "@spillway/node"
import { Clock, Effect, Exit, FastCheck as fc, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const TOKEN = "correct-horse-battery-staple-42"

/** A fresh spill directory per test, removed afterwards. */
const tempDir = tempDirs("spillway-test-")

const spillLayer = (
  directory: string,
  options: { policy?: Layer.Layer<SpillPolicy.SpillPolicy>; fs?: Layer.Layer<FileSystem.FileSystem>; spill?: Spill.Options } = {}
) =>
  Spill.layer(options.spill).pipe(
    Layer.provide(NodeSpillStore.layer({ directory })),
    Layer.provide(options.fs ?? NodeFileSystem.layer),
    Layer.provide(options.policy ?? SpillPolicy.allowAll),
    Layer.provide(Secrets.layer({ knownValues: [TOKEN] }))
  )

const run = <A, E>(directory: string, effect: Effect.Effect<A, E, Spill.SpillWrite | Spill.SpillRead>, options = {}) =>
  Effect.runPromise(Effect.provide(effect, spillLayer(directory, options)))

const runExit = <A, E>(directory: string, effect: Effect.Effect<A, E, Spill.SpillWrite | Spill.SpillRead>, options = {}) =>
  Effect.runPromiseExit(Effect.provide(effect, spillLayer(directory, options)))

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1} of the build`).join("\n") + "\n"

const visible = (dir: string) => Fs.readdirSync(dir).filter((f) => !f.startsWith("."))
const everything = (dir: string) => Fs.readdirSync(dir)

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
    // nothing but the body and its index remain
    expect(everything(dir).sort()).toEqual([`.${kept.filename}.idx`, kept.filename].sort())
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

  it("shows the start of a line longer than the cap, and says how long it was", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput("é".repeat(500_000) + "\n" + "short tail line\n", 0))
    expect([...kept.text].length).toBeLessThanOrEqual(2000)
    expect(kept.text).toMatch(/\[Showing lines 1-2 of 2, line 1 cut to \d+ of 1000000 bytes\. Full output: /)
    expect(kept.text).toContain("\nshort tail line\n")
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
    // the real file system, except that writes fail once 64 KiB have been written to a file
    const failing = Layer.effect(
      FileSystem.FileSystem,
      Effect.map(FileSystem.FileSystem, (fs) => ({
        ...fs,
        open: (path: string, options?: FileSystem.OpenFileOptions) =>
          Effect.map(fs.open(path, options), (file) => {
            let written = 0
            return {
              ...file,
              writeAll: (bytes: Uint8Array) => {
                written += bytes.length
                return written > 65_536
                  ? Effect.fail(new (class extends Error {
                    readonly _tag = "SystemError"
                    readonly reason = "Unknown"
                    readonly description = "injected write failure"
                  })()) as never
                  : file.writeAll(bytes)
              }
            }
          })
      }))
    ).pipe(Layer.provide(NodeFileSystem.layer))
    const kept = await run(dir, Spill.keepOutput(numbered(20_000), 1), { fs: failing })
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

  it("reads right without the index beside the file, or with a stale one", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput(numbered(5000), 0))
    const index = Path.join(dir, `.${kept.filename}.idx`)
    Fs.rmSync(index)
    const page = await run(dir, Spill.readSpill(kept.filename!, { offset: 4321, limit: 2 }))
    expect(page.text).toBe("line 4321 of the build\nline 4322 of the build\n")
    // an index for other bytes is not trusted
    Fs.writeFileSync(index, LineIndex.encode({ bytes: 7, lines: 1, every: 1024, checkpoints: [0] }), { mode: 0o600 })
    const again = await run(dir, Spill.readSpill(kept.filename!, { offset: 4999 }))
    expect(again).toMatchObject({ totalLines: 5000, text: "line 4999 of the build\nline 5000 of the build\n" })
  })

  it("finds a deep page through the index without scanning the file", async () => {
    const dir = tempDir()
    const lines = 200_000
    const kept = await run(dir, Spill.keepOutput(numbered(lines), 0))
    // count the bytes the store reads
    let read = 0
    const counting = Layer.effect(
      SpillStore.SpillStore,
      Effect.map(NodeSpillStore.make(dir), (store) => ({
        ...store,
        open: (name: string) =>
          Effect.map(store.open(name), (file) => ({
            ...file,
            read: (position: number, length: number, into?: Uint8Array) =>
              Effect.tap(file.read(position, length, into), (b) => Effect.sync(() => (read += b.length)))
          }))
      }))
    ).pipe(Layer.provide(NodeFileSystem.layer))
    const page = await Effect.runPromise(
      Spill.readSpill(kept.filename!, { offset: 199_000, limit: 10 }).pipe(
        Effect.provide(Spill.layerRead().pipe(Layer.provide(counting), Layer.provide(SpillPolicy.allowAll)))
      )
    )
    expect(page.text.split("\n")[0]).toBe("line 199000 of the build")
    expect(Fs.statSync(Path.join(dir, kept.filename!)).size).toBeGreaterThan(4_000_000)
    expect(read).toBeLessThan(200_000)
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

  it("refuses every name off the allowlist before touching the file system", async () => {
    // a store whose open would die: the refusal has to come first
    const store = Layer.succeed(SpillStore.SpillStore, {
      directory: "/nonexistent",
      create: () => Effect.die("create must not be called"),
      open: () => Effect.die("open must not be called"),
      remove: () => Effect.die("remove must not be called")
    })
    for (const name of refusedNames) {
      const exit = await Effect.runPromiseExit(
        Spill.readSpill(name).pipe(
          Effect.provide(Spill.layerRead().pipe(Layer.provide(store), Layer.provide(SpillPolicy.allowAll)))
        )
      )
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause), name).toContain("SpillNameRefused")
    }
  })

  it("refuses a symlink, a hard link, a FIFO and a directory planted in the directory, without blocking", async () => {
    const dir = tempDir()
    const kept = await run(dir, Spill.keepOutput(numbered(2100), 0))
    const outside = Path.join(tempDir(), "secret.txt")
    Fs.writeFileSync(outside, "outside the spill directory\n")
    Fs.symlinkSync(outside, Path.join(dir, "link.log"))
    Fs.linkSync(Path.join(dir, kept.filename!), Path.join(dir, "hard.log"))
    execFileSync("mkfifo", [Path.join(dir, "fifo.log")])
    Fs.mkdirSync(Path.join(dir, "sub.log"))
    const cases = [["link.log", "symbolic link"], ["hard.log", "2 hard links"], ["fifo.log", "FIFO"], ["sub.log", "directory"]]
    for (const [name, reason] of cases) {
      const exit = await runExit(dir, Spill.readSpill(name!))
      const text = Exit.isFailure(exit) ? JSON.stringify(exit.cause) : "succeeded"
      expect(text, name).toContain("SpillFileRefused")
      expect(text, name).toContain(reason)
    }
  })

  it("reports a missing file as not found", async () => {
    const dir = tempDir()
    const exit = await runExit(dir, Spill.readSpill("2026-01-01T00-00-00-000Z-abcdef.log"))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("SpillNotFound")
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
    const readOnly = Spill.layerRead().pipe(
      Layer.provide(NodeSpillStore.layer({ directory: dir })),
      Layer.provide(NodeFileSystem.layer),
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
