import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Cursor, Errors, Manifests, Process, type ProcessView, Retention, Secrets } from "@spillway/core"
import { NodeBodyFiles, NodeChild, NodePattern, SqlManifests } from "@spillway/node"
import { Effect, Either, Layer } from "effect"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-process-search-")

const KEY = new Uint8Array(32).fill(7)
const me: Process.Caller = { owner: "alice", channel: "chat-1" }
const KiB = 1024

/** A manager over a real child runner and a store in `directory`, its manifests in SQLite there (so a restart finds its jobs). */
const manager = (options: Process.Options = {}, directory = tempDir()) =>
  Effect.flatMap(
    Layer.build(Layer.mergeAll(
      NodeChild.layer(),
      Cursor.layerKey(KEY),
      Body.layer.pipe(Layer.provideMerge(Layer.mergeAll(
        Layer.sync(BodyFiles.BodyFiles, () => NodeBodyFiles.make(directory)),
        SqlManifests.layerFor(Path.join(directory, ".manifests.sqlite")),
        Retention.layer(),
        Secrets.layer({ knownValues: ["hunter2-hunter2"] }),
        Access.allowOwners
      )))
    ).pipe(Layer.orDie)),
    (context) => Process.make({ spool: "durable", ...options }).pipe(Effect.provide(context))
  )

const view = (r: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) => {
  if (r._tag !== "StatusView") throw new Error("expected the status view")
  return r
}

const done = (m: Process.Manager, pid: number) => m.wait(me, { pid, timeoutMillis: 60_000 })

const TS_ERROR = "src/app.ts(1501,7): error TS2322: Type 'string' is not assignable to type 'number'."

/** A shell line printing `n` numbered lines, with `special` lines (1-based) replaced by the given text. */
const lines = (n: number, special: Record<number, string>) => {
  const cases = Object.entries(special).map(([k, v]) => `if (i === ${k}) { out.push(${JSON.stringify(v)}); continue }`).join(" ")
  const script = `const out = []; for (let i = 1; i <= ${n}; i++) { ${cases} out.push('step ' + i + ' of the build, nothing to see') } process.stdout.write(out.join('\\n') + '\\n')`
  // the script travels in base64, so no shell reads what the lines say
  return `node -e "eval(Buffer.from('${Buffer.from(script).toString("base64")}', 'base64').toString())"`
}

describe("Process: failure lines", () => {
  it.scopedLive("a TypeScript error at line 1,501 of 4,002 shows with its number in the status view and the wait result; quotes are not claimed", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, {
        command: lines(4002, {
          1501: TS_ERROR,
          // a grep -n listing, a diff's hunk and a passing test quote errors without reporting one
          200: "src/errors.ts:12:    throw new Error(`error TS2322: ${x}`)",
          300: "@@ -1,2 +1,2 @@",
          301: "-error: old message",
          302: "+error: new message",
          400: "  ✓ handles error: retries once (3 ms)"
        }),
        shell: true
      })
      const waited = yield* done(m, pid)
      for (const v of [waited, view(yield* m.poll(me, { pid }))]) {
        expect(v.retention.failure_lines).toEqual([{ line: 1501, text: TS_ERROR }])
        expect(v.retention.failure_lines_total).toBe(1)
        expect(v.text).toContain(`\n1501: ${TS_ERROR}\n`)
        expect(v.text).toContain("[Lines that report errors or failures, by line number: 1 of 1]")
        // the newest lines and the record are still there, and the record in the text leaves the lines to the section
        expect(v.output.endsWith("step 4002 of the build, nothing to see\n")).toBe(true)
        expect(v.text.match(new RegExp(TS_ERROR.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g"))).toHaveLength(1)
        expect(v.text.length).toBeLessThanOrEqual(12_000)
      }
      // a clean job has no section at all
      const clean = yield* m.start(me, { command: lines(100, { 50: "src/errors.ts:12:    throw new Error('x')" }), shell: true })
      const v = yield* done(m, clean.pid)
      expect(v.retention.failure_lines).toBeUndefined()
      expect(v.retention.failure_lines_total).toBeUndefined()
      expect(v.text).not.toContain("[Lines that report")
    }))

  it.scopedLive("covers the head and the window of newest output past it, never the dropped middle, with exact line numbers", () =>
    Effect.gen(function*() {
      // every line is 40 bytes: a head of 40 KiB holds 1,024 lines, a window of 8 KiB about 200
      const m = yield* manager({ captureLimitBytes: 40 * KiB, tailBytes: 8 * KiB })
      const pad = (s: string) => s.padEnd(39, ".")
      const n = 5_000
      const { pid } = yield* m.start(me, {
        command: lines(n, { 10: pad("error: in the head"), 3000: pad("error: in the middle"), 4990: pad("error: in the window") }),
        shell: true
      })
      const v = yield* done(m, pid)
      const kept = v.retention.kept!
      expect(kept.dropped!.from_line).toBeLessThan(3000)
      expect(kept.dropped!.to_line).toBeGreaterThan(3000)
      expect(v.retention.failure_lines!.map((l) => l.line)).toEqual([10, 4990])
      expect(v.retention.failure_lines_total).toBe(2)
      expect(v.text).toContain(`; lines ${kept.dropped!.from_line}-${kept.dropped!.to_line} were not kept, so not looked at]`)
      // the numbers are those poll reads the lines by
      for (const l of v.retention.failure_lines!) {
        const read = yield* m.poll(me, { pid, line: l.line, lines: 1 })
        expect(read._tag === "Lines" && read.content).toBe(`${l.text}\n`)
      }
    }))

  it.scopedLive("a running job shows the failure lines found so far, and the window keeps its newest ones", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 16 * KiB, tailBytes: 4 * KiB })
      const { pid } = yield* m.start(me, {
        command: `echo 'error: first'; seq 1 5000; for i in $(seq 1 30); do echo "error: late $i"; done; sleep 30`,
        shell: true
      })
      yield* m.wait(me, { pid, timeoutMillis: 20_000, pattern: "late 30$", fromLine: 1 })
      const v = view(yield* m.poll(me, { pid }))
      expect(v.retention.status).toBe("running")
      const shown = v.retention.failure_lines!.map((l) => l.text)
      expect(shown[0]).toBe("error: first")
      // the window kept its newest 20 matches, not its first
      expect(shown).toContain("error: late 30")
      expect(shown).not.toContain("error: late 10")
      expect(v.retention.failure_lines_total).toBe(31)
      yield* m.cancel(me, pid)
    }))

  it.scopedLive("the section keeps to its share of the budget: the newest lines and the record still fit", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, {
        command: `for i in $(seq 1 300); do echo "src/f$i.ts:$i:3 - error TS2304: Cannot find name 'thing$i' $(printf 'x%.0s' $(seq 1 150))"; done; seq 1 60; exit 2`,
        shell: true
      })
      const v = yield* done(m, pid)
      expect(v.retention.failure_lines_total).toBe(300)
      const rows = v.retention.failure_lines!
      expect(rows.length).toBeGreaterThan(3)
      expect(JSON.stringify(rows).length).toBeLessThanOrEqual(12_000 / 4)
      expect(v.text.length).toBeLessThanOrEqual(12_000)
      expect(JSON.stringify(v.retention).length).toBeLessThanOrEqual(12_000)
      expect(v.output.split("\n").filter((l) => l !== "")).toEqual(Array.from({ length: 50 }, (_, i) => String(11 + i)))
      // the first errors are the ones shown, cut to 200 characters
      expect(rows[0]!.line).toBe(1)
      for (const r of rows) expect([...r.text].length).toBeLessThanOrEqual(200)
    }))

  it.scopedLive("a job restored after a restart shows its failure lines, found once in its kept output", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      const pid = yield* Effect.scoped(Effect.gen(function*() {
        const m = yield* manager({ captureLimitBytes: 40 * KiB, tailBytes: 8 * KiB }, directory)
        const { pid } = yield* m.start(me, {
          command: lines(5_000, { 10: "error: in the head", 4990: "Segmentation fault (core dumped)" }),
          shell: true
        })
        yield* done(m, pid)
        return pid
      }))
      const again = yield* manager({ captureLimitBytes: 40 * KiB, tailBytes: 8 * KiB }, directory)
      const v = view(yield* again.poll(me, { pid }))
      expect(v.retention.failure_lines!.map((l) => [l.line, l.text])).toEqual([[10, "error: in the head"], [4990, "Segmentation fault (core dumped)"]])
      expect(v.retention.failure_lines_searched).toBeUndefined()
    }))
})

const matches = (r: ProcessView.Matches) => r.matches.map((m) => m.line)

describe("Process: searching a job's output", () => {
  it.scopedLive("finds lines past the first page and in the window past the head, says what was searched, and never the dropped middle", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 40 * KiB, tailBytes: 8 * KiB })
      const { pid } = yield* m.start(me, {
        command: lines(5_000, { 150: "needle in the head", 3000: "needle in the middle", 4990: "needle in the window" }),
        shell: true
      })
      const v = yield* done(m, pid)
      const kept = v.retention.kept!
      const r = yield* m.search(me, { pid, pattern: "^needle" })
      expect(r.matches).toEqual([{ line: 150, text: "needle in the head", cut: false }, { line: 4990, text: "needle in the window", cut: false }])
      expect(r.ranges).toEqual(kept.ranges)
      expect(r.dropped).toEqual(kept.dropped)
      expect(r.searched).toEqual([{ from_line: 1, to_line: kept.ranges[0]!.to_line }, { from_line: kept.ranges[1]!.from_line, to_line: 5000 }])
      expect(r.more).toBe(false)
      expect(r.next_cursor).toBeUndefined()
      expect(r.text).toContain(`150: needle in the head\n4990: needle in the window\n`)
      expect(r.text).toContain(`were not kept, so not searched`)
      // ignore_case, and a pattern with no match
      expect(matches(yield* m.search(me, { pid, pattern: "NEEDLE IN THE WINDOW", ignoreCase: true }))).toEqual([4990])
      const none = yield* m.search(me, { pid, pattern: "haystack" })
      expect(none.matches).toEqual([])
      expect(none.text).toContain(`no line matches "haystack"`)
    }))

  it.scopedLive("pages matches with a cursor, without gaps or repeats, across the head and the window", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 40 * KiB, tailBytes: 8 * KiB })
      const { pid } = yield* m.start(me, { command: lines(5_000, {}), shell: true })
      yield* done(m, pid)
      const all = matches(yield* m.search(me, { pid, pattern: "^step \\d*7 ", maxResults: 1_000 }))
      expect(all.length).toBeGreaterThan(100)
      const paged: Array<number> = []
      let cursor: string | undefined
      let pages = 0
      do {
        const r: ProcessView.Matches = yield* m.search(me, { pid, pattern: "^step \\d*7 ", maxResults: 7, cursor })
        expect(r.matches.length).toBeLessThanOrEqual(7)
        paged.push(...matches(r))
        cursor = r.more ? r.next_cursor : undefined
        if (r.more) expect(r.next_line).toBe(r.matches[r.matches.length - 1]!.line + 1)
        pages++
      } while (cursor !== undefined && pages < 1_000)
      expect(paged).toEqual(all)
      expect(pages).toBe(Math.ceil(all.length / 7) + (all.length % 7 === 0 ? 1 : 0))
    }))

  it.scopedLive("a page fits the budget: long matching lines are cut, and the next page goes on from the first left out", () =>
    Effect.gen(function*() {
      const m = yield* manager({ budgetChars: 4_000 })
      const { pid } = yield* m.start(me, { command: `for i in $(seq 1 40); do echo "hit $i $(head -c 3000 /dev/zero | tr '\\0' y)"; done`, shell: true })
      yield* done(m, pid)
      const seen: Array<number> = []
      let cursor: string | undefined
      do {
        const r: ProcessView.Matches = yield* m.search(me, { pid, pattern: "^hit", cursor })
        expect(r.text.length).toBeLessThanOrEqual(4_000)
        const { text: _t, ...rest } = r
        expect(JSON.stringify(rest).length).toBeLessThanOrEqual(4_000)
        for (const x of r.matches) {
          expect(x.cut).toBe(true)
          expect(x.text.length).toBe(1_000)
        }
        expect(r.matches.length).toBeGreaterThan(0)
        seen.push(...matches(r))
        cursor = r.more ? r.next_cursor : undefined
      } while (cursor !== undefined)
      expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
    }))

  it.scopedLive("a running job's search goes on later from where it got", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, { command: "echo 'hit 1'; echo 'partial'; sleep 1; echo 'hit 2'; sleep 30", shell: true, stdin: "closed" })
      yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "partial", fromLine: 1 })
      const first = yield* m.search(me, { pid, pattern: "^hit" })
      expect(matches(first)).toEqual([1])
      expect(first.more).toBe(false)
      expect(first.next_line).toBe(3)
      expect(first.text).toContain("The job is still running")
      yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "hit 2", fromLine: 1 })
      const later = yield* m.search(me, { pid, pattern: "^hit", cursor: first.next_cursor })
      expect(later.matches).toEqual([{ line: 3, text: "hit 2", cut: false }])
      expect(later.searched).toEqual([{ from_line: 3, to_line: 3 }])
      yield* m.cancel(me, pid)
    }))

  it.scopedLive("a hostile pattern ends at the deadline with a clear result and a cursor to go on", () =>
    Effect.gen(function*() {
      const m = yield* manager({ searchDeadlineMillis: 500 })
      // lines of random a and b: RE2's DFA gives up on this pattern, and its NFA takes about a second a line
      const { pid } = yield* m.start(me, {
        command: `node -e "for (let i = 0; i < 8; i++) { let s = ''; for (let k = 0; k < 65000; k++) s += Math.random() < 0.5 ? 'a' : 'b'; console.log(s) }"`,
        shell: true
      })
      yield* done(m, pid)
      const started = Date.now()
      const r = yield* m.search(me, { pid, pattern: "(?:a|b)*a[ab]{999}[^ab]" }).pipe(Effect.provide(NodePattern.layer()))
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(r.stopped_at_line).toBe(1)
      expect(r.more).toBe(true)
      expect(r.next_line).toBe(1)
      expect(r.searched).toEqual([])
      expect(r.text).toContain("the search stopped at its deadline at line 1")
      // the manager serves other calls meanwhile and after
      expect(view(yield* m.poll(me, { pid })).retention.status).toBe("exited")
    }))

  it.scopedLive("every argument is bounded: the pattern, the page size, the cursor", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const a = yield* m.start(me, { command: "seq 1 10", shell: true })
      const b = yield* m.start(me, { command: "seq 1 10", shell: true })
      yield* done(m, a.pid)
      yield* done(m, b.pid)
      const refused = (request: Omit<Process.SearchRequest, "pid">, pid = a.pid) =>
        Effect.map(Effect.either(m.search(me, { pid, ...request })), (e) => {
          if (Either.isRight(e)) throw new Error("expected a refusal")
          return e.left
        })
      const long = yield* refused({ pattern: "x".repeat(2_000_000) })
      expect(long._tag).toBe("InvalidRequest")
      expect(long.message.length).toBeLessThan(400)
      expect((yield* refused({ pattern: "(a)\\1" })).message).toContain("backreference")
      expect((yield* refused({ pattern: "(?:a{1000}){1000}" })).message).toContain("too large")
      for (const maxResults of [0, 1_001, 1.5, Number.NaN, -1]) {
        expect((yield* refused({ pattern: "1", maxResults }))._tag).toBe("InvalidRequest")
      }
      expect((yield* refused({ pattern: "1", cursor: "x".repeat(100_000) }))._tag).toBe("CursorError")
      // a poll cursor is not a search cursor, nor is one job's search cursor another's
      const status = view(yield* m.poll(me, { pid: a.pid }))
      expect((yield* refused({ pattern: "1", cursor: status.retention.cursor })).message).toContain("not issued by manage_process.grep")
      const paged = yield* m.search(me, { pid: a.pid, pattern: "\\d", maxResults: 2 })
      expect((yield* refused({ pattern: "1", cursor: paged.next_cursor }, b.pid)).message).toContain("does not belong to a search of the current job")
      const tampered = paged.next_cursor!.slice(0, -2) + (paged.next_cursor!.endsWith("AA") ? "BB" : "AA")
      expect((yield* refused({ pattern: "1", cursor: tampered }))._tag).toBe("CursorError")
    }))

  it.scopedLive("another owner or another channel cannot search, and the check is made again at every call", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, { command: "echo secret-plan", shell: true })
      yield* done(m, pid)
      for (const who of [{ owner: "mallory", channel: "chat-1" }, { owner: "alice", channel: "chat-2" }]) {
        const e = yield* Effect.flip(m.search(who, { pid, pattern: "secret" }))
        expect(e).toBeInstanceOf(Errors.AccessDenied)
        expect(e.message).not.toContain("secret-plan")
      }
      expect(matches(yield* m.search(me, { pid, pattern: "secret" }))).toEqual([1])
      const missing = yield* Effect.flip(m.search(me, { pid: 999_999_999, pattern: "x" }))
      expect(missing).toBeInstanceOf(Errors.NotFound)
    }))

  it.scopedLive("reading alone grants searching", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      const full = Process.layer({ spool: "durable" }).pipe(Layer.provideMerge(Layer.mergeAll(
        NodeChild.layer(),
        Cursor.layerKey(KEY),
        Body.layer.pipe(Layer.provideMerge(Layer.mergeAll(
          Layer.sync(BodyFiles.BodyFiles, () => NodeBodyFiles.make(directory)),
          Manifests.layerMemory,
          Retention.layer(),
          Secrets.layer({}),
          Access.allowOwners
        )))
      )))
      const context = yield* Layer.build(full)
      const { pid } = yield* Process.start(me, { command: "echo found-it", shell: true }).pipe(Effect.provide(context))
      yield* Process.wait(me, { pid, timeoutMillis: 10_000 }).pipe(Effect.provide(context))
      const r = yield* Process.search(me, { pid, pattern: "found" }).pipe(Effect.provide(Process.readOnly(Layer.succeedContext(context))))
      expect(matches(r)).toEqual([1])
    }))
})
