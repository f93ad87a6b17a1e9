import { describe, expect, it } from "@effect/vitest"
import { Projection, ScratchStore, Secrets, ToolOutput, Utf8 } from "@spillway/core"
import { NodeScratchStore } from "@spillway/node"
import { Effect, FastCheck as fc, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-scratch-")
const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
const owner = { conversationId: "conv-1", runId: "run-1" }

/** The profile over a scratch root in a fresh directory. */
const profile = (quotas?: Partial<ScratchStore.Quotas>, options: ToolOutput.Options = {}) =>
  Effect.gen(function*() {
    const directory = tempDir()
    const context = yield* Layer.build(Layer.merge(NodeScratchStore.layer({ directory, quotas }), Secrets.layer({})).pipe(Layer.orDie))
    const p = yield* ToolOutput.make(options).pipe(Effect.provide(context))
    const store = yield* ScratchStore.ScratchStore.pipe(Effect.provide(context))
    return { p, store, directory }
  })

const numbered = (n: number, width = 0) => Array.from({ length: n }, (_, i) => `line ${i + 1}${"x".repeat(width)}`).join("\n") + "\n"
const size = (d: ToolOutput.Delivered) => Utf8.byteLength(JSON.stringify(d.response))

describe("ToolOutput policies", () => {
  it("wrappers keep the wrapped tool's strategy, unknown tools are outbound MCP tools, secrets bypass", () => {
    const table = {
      ...ToolOutput.defaultPolicies,
      plan_run: { strategy: "head" as const, capture: "none" as const, wraps: "run_command" },
      plan_plan: { strategy: "head" as const, capture: "snapshot" as const, wraps: "plan_run" }
    }
    expect(ToolOutput.policyFor("plan_run", table)).toEqual({ strategy: "tail", capture: "none" })
    expect(ToolOutput.policyFor("plan_plan", table)).toEqual({ strategy: "tail", capture: "snapshot" })
    expect(ToolOutput.policyFor("some_mcp_tool", table)).toEqual({ strategy: "middle", capture: "received" })
    expect(ToolOutput.policyFor("request_user_secret")).toEqual({ strategy: "none", capture: "never" })
  })
})

describe("ToolOutput.deliver", () => {
  it.scoped("passes a result that fits untouched and writes nothing: capture is lazy", () =>
    Effect.gen(function*() {
      const { p, store } = yield* profile()
      const d = yield* p.deliver({ tool: "fetch", output: "short page\n", owner })
      expect(d).toMatchObject({ body: "short page\n", truncated: false, response: { output: "short page\n" } })
      expect(d.capture).toBeUndefined()
      expect((yield* store.usage).entries).toBe(0)
    }))

  it.scoped("cuts a command's output to its tail within 65,536 bytes of escaped JSON and 2,000 lines, and saves it whole", () =>
    Effect.gen(function*() {
      const { p, directory } = yield* profile()
      // quotes, backslashes and a control character cost more once escaped
      const output = Array.from({ length: 5_000 }, (_, i) => `step ${i + 1}: "quoted" \\path\\ \u0001`).join("\n") + `\ntoken=${TOKEN}\n`
      const collector = p.collector()
      const d = yield* p.deliver({ tool: "run_command", output, owner, collector, final: true })
      expect(d.truncated).toBe(true)
      expect(size(d)).toBeLessThanOrEqual(65_536)
      expect(d.body.split("\n").length).toBeLessThanOrEqual(2_000)
      expect(d.capture).toMatchObject({ complete: true })
      expect(d.capture!.path).toMatch(/^conv-1\/outputs\/run-command-[0-9a-f-]{36}\.txt$/)
      const [range] = d.ranges
      expect(range.to).toBe(5_001)
      expect(d.body.startsWith(`[Showing lines ${range.from}-5001 of 5001. Full output: ${d.capture!.path}]\n`)).toBe(true)
      expect(d.body).not.toContain(TOKEN.slice(4))
      const saved = Fs.readFileSync(Path.join(directory, d.capture!.path), "utf8")
      expect(saved.length).toBe(output.length)
      expect(saved).not.toContain(TOKEN.slice(4))
      expect(saved.replace(/token=\*+/, `token=${TOKEN}`)).toBe(output)
      expect(Fs.statSync(Path.join(directory, d.capture!.path)).mode & 0o777).toBe(0o600)
    }))

  it.scoped("a tool outside the table keeps both ends with the marker between, and its file is named for it", () =>
    Effect.gen(function*() {
      const { p } = yield* profile()
      const d = yield* p.deliver({ tool: "remote_search_docs", output: numbered(3_000), owner: { runId: "run-9" } })
      expect(d.ranges.length).toBe(2)
      expect(d.capture!.path).toMatch(/^run-9\/outputs\/remote-search-docs-/)
      expect(d.body).toContain(`]\nline ${d.ranges[1]!.from}\n`)
      expect(d.body).toContain(`\n[Showing lines 1-${d.ranges[0]!.to}, ${d.ranges[1]!.from}-3000 of 3000. Full output: `)
    }))

  it.scoped("a line that does not fit after whole lines is left out; a first line longer than the ceiling shows its start and its end", () =>
    Effect.gen(function*() {
      const { p } = yield* profile()
      const after = yield* p.deliver({ tool: "fetch", output: "short\n" + "x".repeat(100_000) + "\n", owner })
      expect(after.body).toBe(`short\n[Showing lines 1-1 of 2. Full output: ${after.capture!.path}]`)
      const bundle = "!function(){" + "var a=1;".repeat(20_000) + "}();"
      for (const [tool, output] of [["fetch", bundle + "\nshort\n"], ["run_command", bundle + "\n"], ["remote_tool", bundle]] as const) {
        const d = yield* p.deliver({ tool, output, owner })
        expect(size(d)).toBeLessThanOrEqual(65_536)
        const line = d.body.split("\n").find((l) => l.startsWith("!function"))
        const gap = /\[…(\d+) bytes omitted…\]/.exec(line!)!
        const start = line!.slice(0, gap.index)
        const end = line!.slice(gap.index + gap[0].length)
        expect(bundle.startsWith(start)).toBe(true)
        expect(end.endsWith("}();")).toBe(true)
        expect(bundle.endsWith(end)).toBe(true)
        expect(Number(gap[1])).toBe(bundle.length - start.length - end.length)
        expect(d.body).toContain(`line 1 cut to ${start.length + end.length} of ${bundle.length} bytes`)
      }
    }))

  it.scoped("secret results and external clients bypass projection and capture", () =>
    Effect.gen(function*() {
      const { p, store } = yield* profile()
      const big = numbered(10_000)
      const secret = yield* p.deliver({ tool: "request_user_secret", output: big, owner })
      expect(secret).toMatchObject({ body: big, truncated: false })
      const external = yield* p.deliver({ tool: "fetch", output: big, owner, external: true })
      expect(external).toMatchObject({ body: big, truncated: false })
      expect((yield* store.usage).entries).toBe(0)
    }))

  it.scoped("tools that page their own source capture nothing, and their marker claims no copy", () =>
    Effect.gen(function*() {
      const { p, store } = yield* profile()
      const d = yield* p.deliver({ tool: "read_spill", output: numbered(3_000), owner })
      expect(d.truncated).toBe(true)
      expect(d.capture).toBeUndefined()
      expect(d.body).not.toContain("Full output")
      expect(d.body.endsWith(`\n[Showing lines 1-${d.ranges[0]!.to} of 3000]`)).toBe(true)
      expect((yield* store.usage).entries).toBe(0)
    }))

  it.scoped("a spent quota never claims a saved copy", () =>
    Effect.gen(function*() {
      const { p } = yield* profile({ maxFileBytes: 10_000 })
      const d = yield* p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(d.truncated).toBe(true)
      expect(d.body).not.toContain("Full output")
      expect(d.captureError).toContain("no complete copy was saved")
      expect(d.captureError).toContain("10000-byte limit per file")
      const few = yield* profile({ maxEntries: 1 })
      yield* few.p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      const second = yield* few.p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(second.captureError).toContain("1 files, its limit")
      const total = yield* profile({ maxTotalBytes: 40_000 })
      yield* total.p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      const over = yield* total.p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(over.captureError).toContain("quota is used up")
    }))

  it.scoped("a command's collector appends to one file; it is complete only after the last delivery", () =>
    Effect.gen(function*() {
      const { p, store } = yield* profile()
      const collector = p.collector()
      const first = numbered(3_000) + `key=${TOKEN.slice(0, 20)}`
      const d1 = yield* p.deliver({ tool: "run_command", output: first, owner, collector })
      expect(d1.capture).toMatchObject({ complete: false })
      expect(d1.body).not.toContain("Full output")
      const whole = first + `${TOKEN.slice(20)} end\n` + numbered(10)
      const d2 = yield* p.deliver({ tool: "run_command", output: whole, owner, collector, final: true })
      expect(d2.capture).toEqual({ path: d1.capture!.path, complete: true })
      expect(d2.body).toContain(`Full output: ${d1.capture!.path}]`)
      const saved = Utf8.decodeLossy(yield* store.read(d1.capture!.path))
      expect(saved.length).toBe(whole.length)
      expect(saved).not.toContain(TOKEN.slice(4, 20))
      expect((yield* store.usage).entries).toBe(1)
      // a snapshot tool captures a file of its own at each call
      const s1 = yield* p.deliver({ tool: "command_output", output: first, owner })
      const s2 = yield* p.deliver({ tool: "command_output", output: whole, owner })
      expect(s1.capture!.path).not.toBe(s2.capture!.path)
      expect(Utf8.decodeLossy(yield* store.read(s1.capture!.path)).length).toBe(first.length)
    }))

  it.effect.prop("every delivery fits the ceiling and shows whole lines of the output", [
    fc.array(fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom("\"\\\u0002", "é😀", "")), { minLength: 0, maxLength: 400 }),
    fc.constantFrom("fetch", "run_command", "other_tool", "read_spill"),
    fc.integer({ min: 2_000, max: 20_000 }),
    fc.integer({ min: 5, max: 300 })
  ], ([lines, tool, maxBytes, maxLines]) =>
    Effect.gen(function*() {
      const { p } = yield* profile(undefined, { ceiling: { maxBytes, maxLines } })
      const output = lines.join("\n")
      const d = yield* p.deliver({ tool, output, owner, envelope: (body) => ({ tool, result: body, meta: { lines: lines.length } }) })
      if (!d.truncated) {
        expect(d.body).toBe(output)
        return
      }
      expect(size(d)).toBeLessThanOrEqual(maxBytes)
      const shown = d.body.split("\n").filter((l) => !l.startsWith("[Showing "))
      expect(shown.length).toBeLessThanOrEqual(maxLines - 1)
      const source = Projection.splitLines(output)
      let k = 0
      for (const range of d.ranges) {
        for (let n = range.from; n <= range.to; n++) {
          const line = shown[k++]!
          if (line === source[n - 1]) continue
          // a line longer than the whole ceiling: its real start and its real end around the bytes left out
          const gap = /\[…(\d+) bytes omitted…\]/.exec(line)!
          const [start, end] = [line.slice(0, gap.index), line.slice(gap.index + gap[0].length)]
          expect(source[n - 1]!.startsWith(start) && source[n - 1]!.endsWith(end)).toBe(true)
          expect(Number(gap[1])).toBe(Utf8.byteLength(source[n - 1]!) - Utf8.byteLength(start) - Utf8.byteLength(end))
        }
      }
      expect(k).toBe(shown.length)
    }).pipe(Effect.scoped), { fastCheck: { numRuns: 40 } })
})

describe("NodeScratchStore", () => {
  it.scoped("never overwrites, stays inside its root, and refuses symbolic links on the way", () =>
    Effect.gen(function*() {
      const { store, directory } = yield* profile()
      const file = yield* store.create("conv/outputs/a.txt")
      yield* file.append(new TextEncoder().encode("one"))
      expect((yield* Effect.flip(store.create("conv/outputs/a.txt"))).reason).toBe("exists")
      for (const bad of ["../escape.txt", "/etc/passwd", "conv/../../x.txt", "conv//x.txt", ""]) {
        expect((yield* Effect.flip(store.create(bad))).reason).toBe("path")
      }
      const outside = tempDir()
      Fs.symlinkSync(outside, Path.join(directory, "linked"))
      expect((yield* Effect.flip(store.create("linked/outputs/x.txt"))).reason).toBe("path")
      expect(Fs.readdirSync(outside)).toEqual([])
      Fs.symlinkSync(Path.join(outside, "target.txt"), Path.join(directory, "conv", "outputs", "b.txt"))
      expect((yield* Effect.flip(store.read("conv/outputs/b.txt"))).reason).toBe("io")
      expect(Utf8.decodeLossy(yield* store.read("conv/outputs/a.txt"))).toBe("one")
    }))
})

describe("ToolOutput.fold", () => {
  it("folds for display without markers or files, keeping the full content", () => {
    const text = numbered(500)
    const command = ToolOutput.fold(text, "command")
    expect(command).toEqual({ compact: "line 496\nline 497\nline 498\nline 499\nline 500", folded: true, full: text })
    const other = ToolOutput.fold(text, "other")
    const shown = other.compact.split("\n")
    expect(shown.length).toBe(120)
    expect(shown[0]).toBe("line 1")
    expect(shown[119]).toBe("line 500")
    expect(other.compact).not.toContain("[Showing")
    expect(ToolOutput.fold("a\nb\n", "command")).toEqual({ compact: "a\nb", folded: false, full: "a\nb\n" })
    const wide = ToolOutput.fold(numbered(10, 20_000), "command")
    expect(Utf8.byteLength(wide.compact)).toBeLessThanOrEqual(64 * 1024)
  })
})
