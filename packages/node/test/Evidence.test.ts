import { describe, expect, it } from "@effect/vitest"
import { Access, Body, Cursor, Delivery, Evidence, Manifests, Retention, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { NodeBodyFiles, NodeEvidence, NodePattern, Spillway } from "@spillway/node"
import { Cause, ConfigProvider, Effect, Exit, FastCheck as fc, Layer, Option, TestClock } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-evidence-")

const KEY = new Uint8Array(32).fill(7)

/** Reads whether the reader named "revoked" is still allowed, so a test can take access away. */
let revoked = false
const authorizer = Access.fromFunction((caller) => !(revoked && caller.owner === "revoked"))

/** A reader, from its name. */
const as = (owner: string): Access.Caller => ({ owner, channel: "conversation" })

/** The body store of a directory, with manifests in memory. */
const bodies = (directory: string, pools: Record<string, Retention.Pool> = {}) =>
  Body.layer.pipe(
    Layer.provide(Layer.mergeAll(
      NodeBodyFiles.layer({ directory }),
      Manifests.layerMemory,
      Retention.layer(pools),
      Secrets.layer({ knownValues: ["hunter2-hunter2"] }),
      authorizer
    )),
    Layer.orDie
  )

const layer = (directory: string, options: Evidence.Options = {}, pools: Record<string, Retention.Pool> = {}) =>
  Layer.provideMerge(Evidence.layer(options), Layer.merge(bodies(directory, pools), Cursor.layerKey(KEY)))

/** A text page (not a search page). */
const textPage = <E, R>(effect: Effect.Effect<Evidence.Page | Evidence.SearchResults, E, R>) =>
  Effect.map(effect, (page) => {
    if (!("content" in page)) throw new Error("expected a text page")
    return page
  })

/** Reads every page after the first result. */
const readAll = (first: Evidence.First, reader: string) =>
  Effect.gen(function*() {
    let out = first.head ?? first.content ?? ""
    let cursor = first.next_cursor
    const sizes: Array<number> = []
    while (cursor !== undefined) {
      const page = yield* textPage(Evidence.getToolOutput(cursor, as(reader)))
      sizes.push([...JSON.stringify(page)].length)
      if (page.truncated) expect(page.content.length).toBeGreaterThan(0)
      out += page.content
      cursor = page.next_cursor
    }
    return { out, sizes }
  })

const lines = (n: number) => Array.from({ length: n }, (_, i) => `step ${i + 1}: ok ✓ ${"é".repeat(i % 5)}`).join("\n") + "\n"

describe("Evidence", () => {
  it.effect("returns small output whole, with no cursor", () =>
    Effect.gen(function*() {
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "exit 0", body: "all good\n" })
      expect(r.first).toMatchObject({ content: "all good\n", truncated: false, status: "exit 0", total_bytes: 9 })
      expect(r.first.next_cursor).toBeUndefined()
    }).pipe(Effect.provide(layer(tempDir()))))

  it.effect("previews large output with a labelled head and tail, and pages on from right after the head", () =>
    Effect.gen(function*() {
      const body = lines(3000)
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "failed", body })
      const first = r.first
      expect(first.truncated).toBe(true)
      expect([...JSON.stringify(first)].length).toBeLessThanOrEqual(12_000)
      expect(body.startsWith(first.head!)).toBe(true)
      expect(body.endsWith(first.tail!)).toBe(true)
      expect(first.tail!.length).toBeGreaterThan(0)
      expect(first.instructions).toContain("get_tool_output")
      const { out, sizes } = yield* readAll(first, "alice")
      expect(out).toBe(body)
      for (const size of sizes) expect(size).toBeLessThanOrEqual(12_000)
    }).pipe(Effect.provide(layer(tempDir()))))

  it.effect("shows the lines that explain a failure in the first result", () =>
    Effect.gen(function*() {
      const body = lines(1500) + "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n" + lines(1500)
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "exit 2", body })
      expect(r.first.failure_lines).toEqual([{ line: 1501, text: "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'." }])
      expect(r.first.failure_lines_total).toBe(1)
      expect([...JSON.stringify(r.first)].length).toBeLessThanOrEqual(12_000)
      const quiet = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: lines(3000) })
      expect(quiet.first.failure_lines).toBeUndefined()
    }).pipe(Effect.provide(layer(tempDir()))))

  it.effect.prop("pages give the body back for any text and budget, each page within its budget", [
    fc.oneof(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 6000 }),
      fc.string({ unit: "binary", minLength: 1, maxLength: 6000 }),
      fc.array(fc.constantFrom("a", "é", "😀", "\"", "\\", "\n", "\u0001"), { minLength: 1, maxLength: 6000 }).map((a) => a.join("")),
      // raw bytes, malformed UTF-8 included
      fc.uint8Array({ minLength: 1, maxLength: 6000 })
    ),
    fc.integer({ min: Evidence.MIN_BUDGET_CHARS, max: 4000 })
  ], ([text, budgetChars]) =>
    Effect.gen(function*() {
      const body = typeof text === "string" ? Buffer.from(text) : text
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body })
      const expected = new TextDecoder().decode(body)
      expect([...JSON.stringify(r.first)].length).toBeLessThanOrEqual(budgetChars)
      const { out, sizes } = yield* readAll(r.first, "alice")
      expect(out).toBe(expected)
      for (const size of sizes) expect(size).toBeLessThanOrEqual(budgetChars)
    }).pipe(Effect.provide(layer(tempDir(), { budgetChars, checkpointEvery: 97 }))), { fastCheck: { numRuns: 40 } })

  it.effect("keeps malformed bytes as U+FFFD in pages, and masks secrets before keeping", () =>
    Effect.gen(function*() {
      const body = Buffer.concat([Buffer.from(lines(600)), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from(" token hunter2-hunter2\n"), Buffer.from(lines(600))])
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body })
      const { out } = yield* readAll(r.first, "alice")
      expect(out).toContain("\ufffd\ufffdA token ***************\n")
      expect(out).not.toContain("hunter2")
    }).pipe(Effect.provide(layer(tempDir()))))

  it.effect("expires exactly 24 hours after retention; reads in between do not extend it; sweeps remove it", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      return yield* Effect.gen(function*() {
        const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: lines(3000) })
        const cursor = r.first.next_cursor!
        yield* TestClock.adjust("23 hours")
        yield* Evidence.getToolOutput(cursor, as("alice"))
        yield* TestClock.adjust("59 minutes")
        yield* TestClock.adjust("59999 millis")
        yield* Evidence.getToolOutput(cursor, as("alice"))
        yield* TestClock.adjust("1 millis")
        const expired = yield* Effect.flip(Evidence.getToolOutput(cursor, as("alice")))
        expect(expired._tag).toBe("Expired")
        expect(r.first.expires_at).toBe(new Date(24 * 60 * 60 * 1000).toISOString())
        expect(Fs.readdirSync(directory).filter((f) => !f.startsWith("."))).toEqual([r.evidence])
        expect(yield* Evidence.sweep).toBe(1)
        expect(Fs.readdirSync(directory)).toEqual([])
        const gone = yield* Effect.flip(Evidence.getToolOutput(cursor, as("alice")))
        expect(gone._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer(directory)))
    }))

  it.effect("keeps the start of a result over its quota, says so, and refuses past the aggregate quota", () =>
    Effect.gen(function*() {
      const big = "x".repeat(3000) + "\n"
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: big.repeat(3) })
      expect(r.first.kept_in_part).toBe("only the first 6000 of 9003 bytes were kept (the per-result limit); the rest is not retained")
      expect(r.first.total_bytes).toBe(6000)
      yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: big })
      const refused = yield* Effect.flip(Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: big }))
      expect(refused._tag).toBe("QuotaExceeded")
      expect(refused.message).toContain("10000-byte evidence quota")
    }).pipe(Effect.provide(layer(tempDir(), { maxResultBytes: 6000 }, { evidence: { bytes: 10_000, ttlMillis: 24 * 3600_000 } }))))

  it.effect("never keeps more than the quota, however many retentions run at once", () =>
    Effect.gen(function*() {
      const body = "y".repeat(4 * 1024 - 1) + "\n"
      const results = yield* Effect.all(
        Array.from({ length: 20 }, () => Effect.either(Evidence.retain({ owner: "alice", tool: "run", status: "ok", body }))),
        { concurrency: "unbounded" }
      )
      const kept = results.filter((r) => r._tag === "Right")
      expect(kept.length).toBe(16)
      for (const r of results) if (r._tag === "Left") expect(r.left._tag).toBe("QuotaExceeded")
    }).pipe(Effect.provide(layer(tempDir(), {}, { evidence: { bytes: 64 * 1024 } }))))

  it.effect("checks the reader on every read: another principal, or one whose access was revoked, is refused", () =>
    Effect.gen(function*() {
      revoked = false
      const r = yield* Evidence.retain({ owner: "revoked", tool: "run", status: "ok", body: lines(3000) })
      const page = yield* textPage(Evidence.getToolOutput(r.first.next_cursor!, as("revoked")))
      expect(page.content.length).toBeGreaterThan(0)
      const other = yield* Effect.flip(Evidence.getToolOutput(r.first.next_cursor!, as("mallory")))
      expect(other._tag).toBe("AccessDenied")
      revoked = true
      const later = yield* Effect.flip(Evidence.getToolOutput(page.next_cursor!, as("revoked")))
      expect(later._tag).toBe("AccessDenied")
      revoked = false
    }).pipe(Effect.provide(layer(tempDir()))))

  it.effect("refuses tampered, foreign and unknown cursors with typed errors", () =>
    Effect.gen(function*() {
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: lines(3000) })
      const cursor = r.first.next_cursor!
      // change one character in the middle of the signature
      const at = cursor.length - 10
      const tampered = yield* Effect.flip(
        Evidence.getToolOutput(cursor.slice(0, at) + (cursor[at] === "A" ? "B" : "A") + cursor.slice(at + 1), as("alice"))
      )
      expect(tampered).toMatchObject({ _tag: "CursorError", reason: "tampered" })
      const truncated = yield* Effect.flip(Evidence.getToolOutput(cursor.slice(0, 20), as("alice")))
      expect(truncated._tag).toBe("CursorError")
      const foreign = yield* Cursor.encode({ tool: "manage_process", evidence: r.evidence, offset: 0, unit: "byte" }).pipe(
        Effect.provide(Cursor.layerKey(KEY))
      )
      expect(yield* Effect.flip(Evidence.getToolOutput(foreign, as("alice")))).toMatchObject({ reason: "foreign-tool" })
      const unknown = yield* Cursor.encode({ tool: Evidence.TOOL, evidence: "2026-01-01T00-00-00-000Z-000000.log", offset: 0, unit: "code_point" })
        .pipe(Effect.provide(Cursor.layerKey(KEY)))
      expect((yield* Effect.flip(Evidence.getToolOutput(unknown, as("alice"))))._tag).toBe("NotFound")
    }).pipe(Effect.provide(layer(tempDir()))))

  it("survives a restart: a new layer over the same directory serves the same evidence from the same cursor", async () => {
    const directory = tempDir()
    const first = await Effect.runPromise(
      Evidence.retain({ owner: "alice", tool: "run", status: "exit 2", body: lines(3000) }).pipe(
        Effect.provide(NodeEvidence.layer({ directory }))
      )
    )
    const before = await Effect.runPromise(
      Evidence.getToolOutput(first.first.next_cursor!, as("alice")).pipe(Effect.provide(NodeEvidence.layer({ directory })))
    )
    // a new process would build the layer again: same manifests file, same key file
    const after = await Effect.runPromise(
      Evidence.getToolOutput(first.first.next_cursor!, as("alice")).pipe(Effect.provide(NodeEvidence.layer({ directory })))
    )
    expect(after).toEqual(before)
    expect(after.status).toBe("exit 2")
    expect(Fs.statSync(Path.join(directory, ".cursor.key")).mode & 0o777).toBe(0o600)
    // readSpill reaches the same body by its file name
    expect(Fs.existsSync(Path.join(directory, first.evidence))).toBe(true)
  })

  it("refuses a budget too small to carry a page when the layer is built, and delivers every page of a large output at the smallest it takes", async () => {
    // 700 characters cannot hold a result's facts, cursor and instructions beside any content: refused before anything is kept
    for (const budgetChars of [700, Evidence.MIN_BUDGET_CHARS - 1, 2_000.5, Number.NaN]) {
      for (const built of [NodeEvidence.layer({ directory: tempDir(), budgetChars }), layer(tempDir(), { budgetChars })]) {
        const exit = await Effect.runPromiseExit(Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: "hi\n" }).pipe(Effect.provide(built)))
        expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toEqual(Option.some(expect.objectContaining({
          _tag: "InvalidRequest",
          argument: "budgetChars",
          message: expect.stringContaining(`must be a whole number of at least ${Evidence.MIN_BUDGET_CHARS} characters`)
        })))
      }
    }
    // the Promise face refuses it when it opens, with the same error
    const opened = await Spillway.open({ dir: tempDir(), budgetChars: 700 }).then(() => undefined, (e: unknown) => e)
    expect(opened).toMatchObject({ _tag: "InvalidRequest", argument: "budgetChars" })
    // the smallest budget accepted carries a 4 MiB output with failure lines, from a long tool name, page by page
    const body = Array.from({ length: 200_000 }, (_, i) => (i % 5000 === 7 ? `Error: step ${i} failed ${"x".repeat(300)}` : `step ${i}: ok`)).join("\n")
    const budgetChars = Evidence.MIN_BUDGET_CHARS
    const { first, sizes, pages } = await Effect.runPromise(Effect.gen(function*() {
      const r = yield* Evidence.retain({ owner: "alice", tool: "mcp__build_server__run_the_whole_test_suite", status: "exit 1", body })
      const evidence = yield* Evidence.Evidence
      const sizes: Array<number> = []
      let pages = 0
      // the first pages, and pages from deep offsets where every figure has its most digits
      for (const cursor of [r.first.next_cursor!, evidence.cursorFor(r.evidence, 2_000_000), evidence.cursorFor(r.evidence, r.first.total_code_points - 3_000)]) {
        let next: string | undefined = cursor
        for (let k = 0; k < 3 && next !== undefined; k++) {
          const page: Evidence.Page = yield* textPage(Evidence.getToolOutput(next, as("alice")))
          expect(page.content.length).toBeGreaterThan(0)
          sizes.push([...Delivery.serialize(Evidence.delivered(page))].length)
          pages++
          next = page.next_cursor
        }
      }
      return { first: r.first, sizes, pages }
    }).pipe(Effect.provide(layer(tempDir(), { budgetChars }, { evidence: { bytes: 64 * 1024 * 1024 } }))))
    expect([...JSON.stringify(first)].length).toBeLessThanOrEqual(budgetChars)
    expect(first.head!.length).toBeGreaterThan(0)
    expect(first.failure_lines!.length).toBeGreaterThan(0)
    expect(pages).toBe(9)
    for (const size of sizes) expect(size).toBeLessThanOrEqual(budgetChars)
  })

  it("reads the delivery budget from tools.tool_output_max_chars at start-up", async () => {
    const directory = tempDir()
    const first = await Effect.runPromise(
      Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: lines(3000) }).pipe(
        Effect.provide(NodeEvidence.layer({ directory })),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["tools.tool_output_max_chars", "3000"]])))
      )
    )
    const size = [...JSON.stringify(first.first)].length
    expect(size).toBeLessThanOrEqual(3000)
    expect(size).toBeGreaterThan(2900)
  })

  it.effect("searches the whole kept output a cursor names, any page's cursor, with the same checks as a read", () =>
    Effect.gen(function*() {
      revoked = false
      const body = lines(3000).replace("step 1501: ok", "step 1501: error TS2322: bad") + "deploy token hunter2-hunter2\n"
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "exit 2", body })
      const first = r.first.next_cursor!
      const page = yield* textPage(Evidence.getToolOutput(first, as("alice")))
      for (const cursor of [first, page.next_cursor!]) {
        const found = yield* Evidence.grep(cursor, "error TS\\d+", as("alice"))
        expect(found).toMatchObject({ filename: r.evidence, matches: [{ line: 1501, text: "step 1501: error TS2322: bad ✓ ", cut: false }], more: false, totalLines: 3001 })
      }
      // the kept body is masked: a search for the secret finds its mask, never the secret
      const secret = yield* Evidence.grep(first, "token", as("alice"))
      expect(secret.matches[0]!.text).not.toContain("hunter2")
      expect((yield* Evidence.grep(first, "hunter2", as("alice"))).matches).toEqual([])
      // pages of a bounded size, and a flag saying more match
      const some = yield* Evidence.grep(first, "^step", as("alice"), { maxResults: 5 })
      expect(some.matches.map((m) => m.line)).toEqual([1, 2, 3, 4, 5])
      expect(some.more).toBe(true)
      // holding a cursor is no permission; bad arguments are refused before anything is read
      expect((yield* Effect.flip(Evidence.grep(first, "step", as("mallory"))))._tag).toBe("AccessDenied")
      expect((yield* Effect.flip(Evidence.grep(first, "(a)\\1", as("alice"))))._tag).toBe("GrepPatternError")
      expect((yield* Effect.flip(Evidence.grep(first, "x".repeat(5_000), as("alice"))))._tag).toBe("GrepPatternError")
      expect((yield* Effect.flip(Evidence.grep(first, "x", as("alice"), { maxResults: 10_001 })))._tag).toBe("InvalidRequest")
      expect((yield* Effect.flip(Evidence.grep(first.slice(0, -3), "x", as("alice"))))._tag).toBe("CursorError")
      const snapshot = yield* Evidence.retainSearch({ owner: "alice", tool: "web_search", status: "ok", matches: [{ text: "a".repeat(20_000) }, { text: "b" }] })
      const refused = yield* Effect.flip(Evidence.grep(snapshot.first.next_cursor!, "a", as("alice")))
      expect(refused.message).toContain("read them with get_tool_output")
    }).pipe(Effect.provide(layer(tempDir()))))

  it.effect("a search of kept output that cannot finish ends at its deadline and says where", () =>
    Effect.gen(function*() {
      const heavy = Array.from({ length: 6 }, () => Array.from({ length: 65_000 }, () => (Math.random() < 0.5 ? "a" : "b")).join("")).join("\n") + "\n"
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: heavy })
      const started = Date.now()
      const found = yield* Evidence.grep(r.first.next_cursor!, "(?:a|b)*a[ab]{999}[^ab]", as("alice")).pipe(Effect.provide(NodePattern.layer()))
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(found.stoppedAtLine).toBe(1)
      expect(found.matches).toEqual([])
    }).pipe(Effect.provide(layer(tempDir(), { grepDeadlineMs: 400 }))))

  it.effect("pages a kept search snapshot in its ranking, large matches in fragments, without searching again", () =>
    Effect.gen(function*() {
      const matches = Array.from({ length: 40 }, (_, i) => ({
        title: `result ${i + 1}`,
        url: `https://example.com/${i + 1}`,
        text: i === 7 ? "long ".repeat(6000) : `snippet ${i + 1} with "quotes" and é`
      }))
      const r = yield* Evidence.retainSearch({ owner: "alice", tool: "web_search", status: "ok", matches })
      expect(r.evidence.endsWith(".json")).toBe(true)
      const seen: Array<number> = []
      const fragments: Array<string> = []
      let page = r.first
      for (;;) {
        expect([...JSON.stringify(page)].length).toBeLessThanOrEqual(12_000)
        expect(page.summary).toMatch(/^showing \d+ of 40 returned matches; \d+ deferred$/)
        for (const m of page.matches) {
          if (m.fragment) fragments.push(m.text)
          if (!m.fragment || m.fragment.to === m.fragment.of) seen.push(m.rank)
        }
        if (page.next_cursor === undefined) break
        const next = yield* Evidence.getToolOutput(page.next_cursor, as("alice"))
        if (!("summary" in next)) throw new Error("expected a search page")
        page = next
      }
      expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
      expect(fragments.join("")).toBe("long ".repeat(6000))
    }).pipe(Effect.provide(layer(tempDir()))))

  it.effect("reads by file name ask the same access check as reads by cursor: another owner and expired output are refused", () =>
    Effect.gen(function*() {
      const r = yield* Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: lines(3000) })
      const readAs = (reader: string) =>
        Spill.readSpill(r.evidence, { limit: 1 }).pipe(Effect.provide(Access.layerCaller(as(reader))))
      expect((yield* readAs("alice")).text).toBe("step 1: ok ✓ \n")
      // the owner's name is in the cursor's payload for anyone to read, and still grants nothing
      const refused = yield* Effect.flip(readAs("mallory"))
      expect(refused._tag).toBe("AccessDenied")
      yield* TestClock.adjust("25 hours")
      expect((yield* Effect.flip(readAs("alice")))._tag).toBe("Expired")
      expect((yield* Effect.flip(Evidence.getToolOutput(r.first.next_cursor!, as("alice"))))._tag).toBe("Expired")
    }).pipe(
      Effect.provide(Layer.provideMerge(Spill.layerRead(), SpillPolicy.allowAll)),
      Effect.provide(layer(tempDir()))
    ))

  it("says a failed save failed, and hands out no cursor", async () => {
    const base = tempDir()
    Fs.writeFileSync(Path.join(base, "file"), "")
    const exit = await Effect.runPromiseExit(
      Evidence.retain({ owner: "alice", tool: "run", status: "ok", body: lines(3000) }).pipe(
        Effect.provide(layer(Path.join(base, "file", "sub")))
      )
    )
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("StoreFailed")
  })
})
