import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Errors, Projection, Retention, Secrets, ToolOutput, Utf8 } from "@spillway/core"
import { NodeBodyFiles, SqlManifests } from "@spillway/node"
import { Effect, Exit, FastCheck as fc, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-scratch-")
const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
const owner = { conversationId: "conv-1", runId: "run-1" }
const me: Access.Caller = { owner: "alice", channel: "conv-1" }

interface Setup {
  readonly pools?: Record<string, Retention.Pool>
  readonly options?: ToolOutput.Options
  /** Changes the real file store (a disk that fills up). */
  readonly files?: (real: BodyFiles.Service) => BodyFiles.Service
}

/** The profile over the one body store in a fresh directory (bytes on disk, manifests in SQLite), acting for `me`. */
const profile = (setup: Setup = {}) =>
  Effect.gen(function*() {
    const directory = tempDir()
    const context = yield* Layer.build(
      ToolOutput.layer(setup.options).pipe(
        Layer.provideMerge(Body.layer),
        Layer.provideMerge(Layer.mergeAll(
          Layer.sync(BodyFiles.BodyFiles, () => (setup.files ?? ((f) => f))(NodeBodyFiles.make(directory))),
          SqlManifests.layerFor(Path.join(directory, ".manifests.sqlite")),
          Retention.layer(setup.pools),
          Secrets.layer({}),
          Access.allowOwners
        )),
        Layer.merge(Access.layerCaller(me)),
        Layer.orDie
      )
    )
    const p = yield* ToolOutput.ToolOutput.pipe(Effect.provide(context))
    const bodies = yield* Body.Bodies.pipe(Effect.provide(context))
    const retention = yield* Retention.Retention.pipe(Effect.provide(context))
    const as = <A, E>(effect: Effect.Effect<A, E, Access.CurrentCaller>, caller: Access.Caller = me) =>
      Effect.provideService(effect, Access.CurrentCaller, caller)
    return {
      deliver: (input: ToolOutput.DeliverInput) => as(p.deliver(input)),
      read: (path: string, options?: ToolOutput.ReadOptions, caller?: Access.Caller) => as(p.read(path, options), caller),
      collector: p.collector,
      bodies,
      retention,
      directory,
      onDisk: (path: string) => Fs.readFileSync(Path.join(directory, path), "utf8"),
      captures: () => Effect.map(bodies.list(me, "scratch"), (ms) => ms.map((m) => m.id))
    }
  })

const numbered = (n: number, width = 0) => Array.from({ length: n }, (_, i) => `line ${i + 1}${"x".repeat(width)}`).join("\n") + "\n"
const size = (d: ToolOutput.Delivered) => Utf8.byteLength(JSON.stringify(d.response))
const masked = (text: string) => Secrets.unsafeMakeMasker({}).maskText(text)

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

  it("paths: the conversation's folder or the run's, tool underscores as hyphens, checked like every body name", () => {
    expect(ToolOutput.pathFor("ssh_exec_output", owner, "u-1")).toBe("conv-1/outputs/ssh-exec-output-u-1.txt")
    expect(ToolOutput.pathFor("fetch", { runId: "run-9" }, "u-2")).toBe("run-9/outputs/fetch-u-2.txt")
    expect(ToolOutput.pathProblem("conv-1/outputs/fetch-u.txt")).toBeUndefined()
    for (const bad of ["", "/etc/passwd", "../x.txt", "conv/../../x.txt", "conv//x.txt", "conv/./x.txt", "a\\b.txt", ".hidden/x.txt", "conv 1/x.txt"]) {
      expect(ToolOutput.pathProblem(bad)).toBeDefined()
    }
  })
})

describe("ToolOutput.deliver", () => {
  it.scoped("passes a result that fits untouched and keeps nothing: capture is lazy", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      const d = yield* p.deliver({ tool: "fetch", output: "short page\n", owner })
      expect(d).toMatchObject({ body: "short page\n", truncated: false, response: { output: "short page\n" } })
      expect(d.capture).toBeUndefined()
      expect(yield* p.captures()).toEqual([])
    }))

  it.scoped("cuts a command's output to its tail within 65,536 bytes of escaped JSON and 2,000 lines, and keeps it whole as a scratch body", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      // quotes, backslashes and a control character cost more once escaped
      const output = Array.from({ length: 5_000 }, (_, i) => `step ${i + 1}: "quoted" \\path\\ \u0001`).join("\n") + `\ntoken=${TOKEN}\n`
      const d = yield* Effect.flatMap(p.collector(), (collector) => p.deliver({ tool: "run_command", output, owner, collector, final: true }))
      expect(d.truncated).toBe(true)
      expect(size(d)).toBeLessThanOrEqual(65_536)
      expect(d.body.split("\n").length).toBeLessThanOrEqual(2_000)
      expect(d.capture).toMatchObject({ complete: true })
      expect(d.captureError).toBeUndefined()
      const path = d.capture!.path
      expect(path).toMatch(/^conv-1\/outputs\/run-command-[0-9a-f-]{36}\.txt$/)
      const [range] = d.ranges
      expect(range.to).toBe(5_001)
      expect(d.body.startsWith(`[Showing lines ${range.from}-5001 of 5001. Full output: ${path}]\n`)).toBe(true)
      expect(d.body).not.toContain(TOKEN.slice(4))
      // one body of the one store: its bytes in the store's directory, its manifest in the store's manifests
      const saved = p.onDisk(path)
      expect(saved).toBe(masked(output))
      expect(saved).not.toContain(TOKEN.slice(4))
      expect(Fs.statSync(Path.join(p.directory, path)).mode & 0o777).toBe(0o600)
      expect(yield* p.bodies.manifest(path)).toMatchObject({ profile: "scratch", owner: "alice", channel: "conv-1", tool: "run_command", kept: "whole" })
      expect(p.retention.usage("scratch")).toMatchObject({ used: Utf8.byteLength(output), entries: 1 })
      // and its owner pages it back
      const page = yield* p.read(path, { offset: 4_999 })
      expect(page).toMatchObject({ offset: 4_999, lines: 3, totalLines: 5_001, complete: true })
      expect(page.text).toBe(masked(output).split("\n").slice(4_998).join("\n"))
    }))

  it.scoped("a tool outside the table keeps both ends with the marker between, and its capture is named for it", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      const d = yield* p.deliver({ tool: "remote_search_docs", output: numbered(3_000), owner: { runId: "run-9" } })
      expect(d.ranges.length).toBe(2)
      expect(d.capture!.path).toMatch(/^run-9\/outputs\/remote-search-docs-/)
      expect(d.body).toContain(`]\nline ${d.ranges[1]!.from}\n`)
      expect(d.body).toContain(`\n[Showing lines 1-${d.ranges[0]!.to}, ${d.ranges[1]!.from}-3000 of 3000. Full output: `)
      // without an owner, the caller's channel is the conversation
      const mine = yield* p.deliver({ tool: "fetch", output: numbered(3_000) })
      expect(mine.capture!.path).toMatch(/^conv-1\/outputs\/fetch-/)
    }))

  it.scoped("a line that does not fit after whole lines is left out; a first line longer than the ceiling shows its start and its end", () =>
    Effect.gen(function*() {
      const p = yield* profile()
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
        expect(p.onDisk(d.capture!.path)).toBe(output)
      }
    }))

  it.scoped("secret results and external clients bypass projection and capture", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      const big = numbered(10_000)
      const secret = yield* p.deliver({ tool: "request_user_secret", output: big, owner })
      expect(secret).toMatchObject({ body: big, truncated: false })
      const external = yield* p.deliver({ tool: "fetch", output: big, owner, external: true })
      expect(external).toMatchObject({ body: big, truncated: false })
      expect(yield* p.captures()).toEqual([])
    }))

  it.scoped("tools that page their own source capture nothing, and their marker claims no copy", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      const d = yield* p.deliver({ tool: "read_spill", output: numbered(3_000), owner })
      expect(d.truncated).toBe(true)
      expect(d.capture).toBeUndefined()
      expect(d.body).not.toContain("Full output")
      expect(d.body.endsWith(`\n[Showing lines 1-${d.ranges[0]!.to} of 3000]`)).toBe(true)
      expect(yield* p.captures()).toEqual([])
    }))
})

describe("ToolOutput captures: limits and failures never claim a copy", () => {
  it.scoped("the 8 MiB limit per capture keeps whole lines and says the copy holds only them", () =>
    Effect.gen(function*() {
      expect(ToolOutput.MAX_CAPTURE_BYTES).toBe(8 * 1024 * 1024)
      const p = yield* profile({ options: { maxCaptureBytes: 10_000 } })
      const output = numbered(3_000)
      const d = yield* p.deliver({ tool: "fetch", output, owner })
      expect(d.truncated).toBe(true)
      expect(d.body).not.toContain("Full output")
      expect(d.capture).toMatchObject({ complete: false })
      expect(d.captureError).toContain("the output passed the 10000-byte limit per capture")
      const saved = p.onDisk(d.capture!.path)
      expect(saved.length).toBeLessThanOrEqual(10_000)
      expect(saved.endsWith("\n") && output.startsWith(saved)).toBe(true)
      expect(d.captureError).toContain(`holds only lines 1-${saved.split("\n").length - 1} (${saved.length} of ${output.length} bytes)`)
      expect((yield* p.read(d.capture!.path)).complete).toBe(false)
    }))

  it.scoped("the scratch pool's entries: past them, no copy and the reason", () =>
    Effect.gen(function*() {
      expect(Retention.defaultPools.scratch).toEqual({ bytes: 64 * 1024 * 1024, entries: 512 })
      const p = yield* profile({ pools: { scratch: { entries: 2 } } })
      for (let i = 0; i < 2; i++) expect((yield* p.deliver({ tool: "fetch", output: numbered(3_000), owner })).capture!.complete).toBe(true)
      const third = yield* p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(third.capture).toBeUndefined()
      expect(third.body).not.toContain("Full output")
      expect(third.captureError).toContain("no complete copy was saved: the scratch store holds 2 entries, its limit")
      expect((yield* p.captures()).length).toBe(2)
      // a command's collector refused alike
      const c = yield* p.collector()
      const cut = yield* p.deliver({ tool: "run_command", output: numbered(3_000), owner, collector: c, final: true })
      expect(cut.captureError).toContain("2 entries, its limit")
      // other profiles' pools are not this one's: a spill body is still kept
      const spill = yield* Effect.scoped(Effect.flatMap(
        p.bodies.create({ profile: "spill", owner: me.owner, channel: me.channel, tool: "t" }),
        (w) => Effect.zipRight(w.write(Utf8.encode("kept\n")), w.seal())
      ))
      expect(spill.bytes).toBe(5)
    }))

  it.scoped("the scratch pool's bytes: concurrent captures never pass them, and a part is never claimed whole", () =>
    Effect.gen(function*() {
      const p = yield* profile({ pools: { scratch: { bytes: 40_000 } } })
      const output = numbered(3_000) // 28,893 bytes
      const all = yield* Effect.all(Array.from({ length: 4 }, () => p.deliver({ tool: "fetch", output, owner })), { concurrency: "unbounded" })
      const whole = all.filter((d) => d.capture?.complete === true)
      expect(whole.length).toBe(1)
      let used = 0
      for (const d of all) {
        if (d.capture === undefined) {
          expect(d.captureError).toContain("no complete copy was saved")
          continue
        }
        const saved = p.onDisk(d.capture.path)
        used += Utf8.byteLength(saved)
        expect(output.startsWith(saved)).toBe(true)
        if (!d.capture.complete) {
          expect(d.body).not.toContain("Full output")
          expect(d.captureError).toMatch(new RegExp(`holds only its first \\d+ of ${output.length} bytes: .*40000-byte scratch retention quota`))
        }
      }
      expect(used).toBeLessThanOrEqual(40_000)
      expect(p.retention.usage("scratch").used).toBe(used)
    }))

  it.scoped("a disk that fails mid-write leaves no claimed copy", () =>
    Effect.gen(function*() {
      const p = yield* profile({
        files: (real) => ({
          ...real,
          create: (name, visibility) =>
            Effect.map(real.create(name, visibility), (sink) => {
              let written = 0
              return {
                ...sink,
                write: (bytes: Uint8Array) => {
                  written += bytes.length
                  return written > 5_000 ? Effect.fail(new Errors.StoreFailed({ operation: `write ${name}`, reason: "ENOSPC: no space left on device" })) : sink.write(bytes)
                }
              }
            })
        })
      })
      const d = yield* p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(d.body).not.toContain("Full output")
      expect(d.capture?.complete ?? false).toBe(false)
      expect(d.captureError).toContain("ENOSPC")
      const c = yield* p.collector()
      const cmd = yield* p.deliver({ tool: "run_command", output: numbered(3_000), owner, collector: c, final: true })
      expect(cmd.body).not.toContain("Full output")
      expect(cmd.captureError).toContain("ENOSPC")
    }))

  it.scoped("a generated path that is taken is never overwritten", () =>
    Effect.gen(function*() {
      const fixed = yield* profile({ options: { paths: () => "conv-1/outputs/fetch-fixed.txt" } })
      const first = yield* fixed.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(first.capture).toEqual({ path: "conv-1/outputs/fetch-fixed.txt", complete: true })
      for (const tool of ["fetch", "command_output"]) {
        const second = yield* fixed.deliver({ tool, output: numbered(4_000), owner })
        expect(second.capture).toBeUndefined()
        expect(second.captureError).toContain("no complete copy was saved")
        expect(second.body).not.toContain("Full output")
      }
      const c = yield* fixed.collector()
      expect((yield* fixed.deliver({ tool: "run_command", output: numbered(4_000), owner, collector: c })).captureError).toContain("no complete copy")
      expect(fixed.onDisk("conv-1/outputs/fetch-fixed.txt")).toBe(numbered(3_000))
      // a file left at a generated path by someone else: a fresh path is not checked against it, and the store refuses to replace it
      let n = 0
      const counting = yield* profile({ options: { paths: () => `conv-1/outputs/fetch-${n++ < 1 ? "a" : "b"}.txt` } })
      Fs.mkdirSync(Path.join(counting.directory, "conv-1", "outputs"), { recursive: true })
      Fs.writeFileSync(Path.join(counting.directory, "conv-1", "outputs", "fetch-a.txt"), "someone else's\n")
      const refused = yield* counting.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(refused.captureError).toContain("never replaced")
      expect(counting.onDisk("conv-1/outputs/fetch-a.txt")).toBe("someone else's\n")
      expect(yield* counting.bodies.manifest("conv-1/outputs/fetch-a.txt")).toBeUndefined()
      // a path taken by a kept body: the factory is asked again
      let m = 0
      const retried = yield* profile({ options: { paths: () => `conv-1/outputs/fetch-${m++ < 2 ? "x" : "y"}.txt` } })
      const a = yield* retried.deliver({ tool: "fetch", output: numbered(3_000), owner })
      const b = yield* retried.deliver({ tool: "fetch", output: numbered(3_000), owner })
      expect(a.capture!.complete && b.capture!.complete).toBe(true)
      expect([a.capture!.path, b.capture!.path]).toEqual(["conv-1/outputs/fetch-x.txt", "conv-1/outputs/fetch-y.txt"])
    }))

  it.scoped("refused paths and symbolic links on the way write nothing anywhere", () =>
    Effect.gen(function*() {
      for (const path of ["../escape.txt", "/tmp/abs.txt", "conv//x.txt", "conv/../../x.txt", "conv 1/outputs/x.txt"]) {
        const p = yield* profile({ options: { paths: () => path } })
        const d = yield* p.deliver({ tool: "fetch", output: numbered(3_000), owner })
        expect(d.capture).toBeUndefined()
        expect(d.captureError).toContain("is refused")
        expect(Fs.readdirSync(p.directory).filter((f) => !f.startsWith(".manifests"))).toEqual([])
      }
      const outside = tempDir()
      for (const link of ["conv-1", "conv-1/outputs"]) {
        const p = yield* profile()
        Fs.mkdirSync(Path.dirname(Path.join(p.directory, link)), { recursive: true })
        Fs.symlinkSync(outside, Path.join(p.directory, link))
        const d = yield* p.deliver({ tool: "fetch", output: numbered(3_000), owner })
        expect(d.capture).toBeUndefined()
        expect(d.captureError).toContain("is a symbolic link or not a folder")
        const c = yield* p.collector()
        const cmd = yield* p.deliver({ tool: "run_command", output: numbered(3_000), owner, collector: c })
        expect(cmd.captureError).toContain("is a symbolic link or not a folder")
        expect(Fs.readdirSync(outside)).toEqual([])
      }
    }))
})

describe("ToolOutput collectors", () => {
  it.scoped("a command's collector keeps one body across deliveries, masks a secret split between them, and is complete only at the last", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      const collector = yield* p.collector()
      const first = numbered(3_000) + `key=${TOKEN.slice(0, 20)}`
      const d1 = yield* p.deliver({ tool: "run_command", output: first, owner, collector })
      expect(d1.capture).toMatchObject({ complete: false })
      expect(d1.captureError).toContain("the command has not ended")
      expect(d1.body).not.toContain("Full output")
      expect(collector.path()).toBe(d1.capture!.path)
      // readable while it grows, and never a half-settled token
      const growing = yield* p.read(d1.capture!.path, { offset: 2_999 })
      expect(growing.complete).toBe(false)
      expect(growing.text).not.toContain(TOKEN.slice(0, 20))
      const whole = first + `${TOKEN.slice(20)} end\n` + numbered(10)
      const d2 = yield* p.deliver({ tool: "run_command", output: whole, owner, collector, final: true })
      expect(d2.capture).toEqual({ path: d1.capture!.path, complete: true })
      expect(d2.captureError).toBeUndefined()
      expect(d2.body).toContain(`Full output: ${d1.capture!.path}]`)
      const saved = p.onDisk(d1.capture!.path)
      expect(saved.length).toBe(whole.length)
      expect(saved).not.toContain(TOKEN.slice(4, 20))
      expect(saved).not.toContain(TOKEN.slice(20))
      expect(saved).toBe(masked(whole))
      expect(collector.fed()).toBe(Utf8.byteLength(whole))
      expect(yield* p.captures()).toEqual([d1.capture!.path])
      expect(yield* p.bodies.manifest(d1.capture!.path)).toMatchObject({ state: "complete", status: "ended", kept: "whole" })
    }))

  it.scoped("a collector starts at the first cut delivery with everything so far, and goes on through deliveries that fit", () =>
    Effect.gen(function*() {
      const p = yield* profile({ options: { ceiling: { maxBytes: 4_000, maxLines: 2_000 } } })
      const collector = yield* p.collector()
      const early = yield* p.deliver({ tool: "run_command", output: numbered(10), owner, collector })
      expect(early.capture).toBeUndefined()
      expect(collector.path()).toBeUndefined()
      const cut = yield* p.deliver({ tool: "run_command", output: numbered(1_000), owner, collector })
      expect(cut.capture).toMatchObject({ complete: false })
      // a last delivery that fits (a host that sends only the new output) still ends the capture
      const last = yield* p.deliver({ tool: "run_command", output: numbered(1_000) + "done\n", owner, collector, final: true, envelope: () => ({}) })
      expect(last.truncated).toBe(false)
      expect(p.onDisk(cut.capture!.path)).toBe(numbered(1_000) + "done\n")
      expect((yield* p.read(cut.capture!.path)).complete).toBe(true)
    }))

  it.scoped("a collector closed before the last delivery keeps what it collected, sealed as unfinished", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      const scope = yield* Scope.make()
      const collector = yield* p.collector().pipe(Scope.extend(scope))
      const d = yield* p.deliver({ tool: "run_command", output: numbered(3_000), owner, collector })
      yield* Scope.close(scope, Exit.void)
      expect(p.onDisk(d.capture!.path)).toBe(numbered(3_000))
      expect(yield* p.bodies.manifest(d.capture!.path)).toMatchObject({ state: "complete", status: "unfinished: no last delivery" })
    }))

  it.scoped("a snapshot tool keeps a body of its own at each call, holding the output through that call", () =>
    Effect.gen(function*() {
      const p = yield* profile()
      const first = numbered(3_000)
      const s1 = yield* p.deliver({ tool: "command_output", output: first, owner })
      const s2 = yield* p.deliver({ tool: "command_output", output: first + numbered(5), owner })
      expect(s1.capture!.path).not.toBe(s2.capture!.path)
      expect(s1.capture!.path).toMatch(/^conv-1\/outputs\/command-output-/)
      expect(p.onDisk(s1.capture!.path)).toBe(first)
      expect(p.onDisk(s2.capture!.path)).toBe(first + numbered(5))
    }))
})

describe("ToolOutput.read", () => {
  it.scoped("pages a capture for its owner only, and reads no other profile's body", () =>
    Effect.gen(function*() {
      const p = yield* profile({ options: { maxPageBytes: 1_000 } })
      const d = yield* p.deliver({ tool: "fetch", output: numbered(3_000), owner })
      const path = d.capture!.path
      const page = yield* p.read(path, { offset: 10, limit: 5 })
      expect(page).toMatchObject({ offset: 10, lines: 5, nextOffset: 15, totalLines: 3_000, complete: true, text: "line 10\nline 11\nline 12\nline 13\nline 14\n" })
      // a page stops at whole lines within its bytes
      const big = yield* p.read(path, { offset: 1 })
      expect(Utf8.byteLength(big.text)).toBeLessThanOrEqual(1_000)
      expect(big.nextOffset).toBe(1 + big.lines)
      // another owner holding the path is refused; the same owner on another conversation is not
      expect((yield* Effect.flip(p.read(path, {}, { owner: "mallory", channel: "conv-1" })))._tag).toBe("AccessDenied")
      expect((yield* p.read(path, { limit: 1 }, { owner: "alice", channel: "conv-2" })).lines).toBe(1)
      expect((yield* Effect.flip(p.read("conv-1/outputs/nothing.txt")))._tag).toBe("NotFound")
      expect((yield* Effect.flip(p.read("../x.txt")))._tag).toBe("InvalidRequest")
      expect((yield* Effect.flip(p.read(path, { offset: 3_001 })))._tag).toBe("InvalidRequest")
      const spill = yield* Effect.scoped(Effect.flatMap(
        p.bodies.create({ profile: "spill", owner: me.owner, channel: me.channel, tool: "t" }),
        (w) => Effect.zipRight(w.write(Utf8.encode("kept\n")), w.seal())
      ))
      expect((yield* Effect.flip(p.read(spill.id)))._tag).toBe("NotFound")
    }))
})

describe("ToolOutput ceiling", () => {
  it.effect.prop("every delivery fits the ceiling and shows whole lines of the output, or a line's real start and end", [
    fc.array(fc.oneof(
      { arbitrary: fc.string({ maxLength: 200 }), weight: 10 },
      { arbitrary: fc.constantFrom("\"\\\u0002", "é😀", ""), weight: 5 },
      { arbitrary: fc.string({ minLength: 2_000, maxLength: 8_000 }), weight: 1 }
    ), { minLength: 0, maxLength: 400 }),
    fc.constantFrom("fetch", "run_command", "other_tool", "read_spill"),
    fc.integer({ min: 2_000, max: 20_000 }),
    fc.integer({ min: 5, max: 300 })
  ], ([lines, tool, maxBytes, maxLines]) =>
    Effect.gen(function*() {
      const p = yield* profile({ options: { ceiling: { maxBytes, maxLines } } })
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
