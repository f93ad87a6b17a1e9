import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Child, Cursor, Delivery, Errors, Manifests, Process, ProcessView, Retention, Secrets } from "@spillway/core"
import { NodeBodyFiles, NodeChild, NodeProcess, SqlManifests } from "@spillway/node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-process-")

const KEY = new Uint8Array(32).fill(9)
const me: Process.Caller = { owner: "alice", channel: "chat-1" }

/** Callers whose access a test has taken away. */
const revoked = new Set<string>()
const authorizer = Access.fromFunction((caller) => !revoked.has(caller.owner))

/** Where a test's manager keeps its spools: a directory (a fresh one by default), its manifests, its pools. */
interface Store {
  readonly directory?: string
  readonly manifests?: Layer.Layer<Manifests.Manifests, unknown>
  readonly pools?: Record<string, Retention.Pool>
  readonly files?: (real: BodyFiles.Service) => BodyFiles.Service
}

const deps = (store: Store = {}) => {
  const directory = store.directory ?? tempDir()
  return Layer.mergeAll(
    NodeChild.layer(),
    Cursor.layerKey(KEY),
    Body.layer.pipe(Layer.provideMerge(Layer.mergeAll(
      Layer.sync(BodyFiles.BodyFiles, () => (store.files ?? ((f) => f))(NodeBodyFiles.make(directory))),
      store.manifests ?? Manifests.layerMemory,
      Retention.layer(store.pools),
      Secrets.layer({ knownValues: ["hunter2-hunter2"] }),
      authorizer
    )))
  ).pipe(Layer.orDie)
}

/** A manager in the current scope. */
const manager = (options: Process.Options = {}, store?: Store) =>
  Effect.flatMap(
    Layer.build(deps(store)),
    (context) => Process.make({ spool: store?.directory === undefined ? "temporary" : "durable", ...options }).pipe(Effect.provide(context))
  )

const shell = (command: string, extra: Partial<Process.StartRequest> = {}): Process.StartRequest => ({
  command,
  shell: true,
  ...extra
})

const view = (result: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) => {
  if (result._tag !== "StatusView") throw new Error("expected the status view")
  return result
}
const page = (result: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) => {
  if (result._tag !== "Page") throw new Error("expected a page")
  return result
}

type Manager = Process.Manager

/**
 * Every kept byte, page by page from the status view's cursor; checks that
 * pages are contiguous but for the one step over a dropped middle, which a
 * page's note states.
 */
const readAll = (m: Manager, pid: number, limit?: number) =>
  Effect.gen(function*() {
    const status = view(yield* m.poll(me, { pid }))
    let cursor: string | undefined = status.retention.cursor
    let offset = 0
    const parts: Array<string> = []
    let pages = 0
    let skipped = 0
    while (cursor !== undefined) {
      const p = page(yield* m.poll(me, { pid, cursor, limit }))
      expect(p.offset).toBe(offset)
      if (p.next_offset !== p.offset + p.shown_bytes) {
        expect(p.next_offset).toBeGreaterThanOrEqual(p.offset + p.shown_bytes)
        expect(p.note).toContain("the newest output goes on from byte")
        skipped += p.next_offset - p.offset - p.shown_bytes
      }
      parts.push(p.content)
      offset = p.next_offset
      pages++
      cursor = p.truncated ? p.next_cursor : undefined
    }
    return { text: parts.join(""), end: offset, pages, skipped }
  })

const exited = (m: Manager, pid: number) => m.wait(me, { pid, timeoutMillis: 20_000 })

describe("Process", () => {
  it.scopedLive("shows the newest lines and an exact retention record after the exit", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("printf 'one\\ntwo\\n'; exit 3"))
      const done = yield* exited(m, pid)
      expect(done.retention.wait?.ended_by).toBe("exit")
      const v = view(yield* m.poll(me, { pid, offset: null }))
      expect(v.output).toBe("one\ntwo\n")
      // a sentence, the lines, and the call that reads on: the record is the facts, not the text
      expect(v.text.startsWith(`Job ${pid} exited with 3.\none\ntwo\n[Lines 1-2 of 2 shown, the newest; 8 bytes written. Next: manage_process action=poll pid=${pid} cursor=`)).toBe(true)
      expect(v.text.split(v.retention.cursor)).toHaveLength(2)
      expect(v.text).not.toContain("{")
      expect(v.retention).toMatchObject({
        pid,
        status: "exited",
        exit_code: 3,
        emitted_bytes: 8,
        retained_bytes: 8,
        shown_intervals: [[0, 8]],
        capture_limit_loss_bytes: 0,
        not_retained_bytes: 0,
        spool: "temporary"
      })
      expect(v.retention.tail_status).toBeUndefined()
      // blank, "0" and 0 are the status view too, never a page
      for (const offset of ["", " ", "0", 0, undefined]) expect((yield* m.poll(me, { pid, offset }))._tag).toBe("StatusView")
      expect((yield* readAll(m, pid)).text).toBe("one\ntwo\n")
    }))

  it.scopedLive("shows at most the newest 50 lines, fewer when the budget cannot hold them", () =>
    Effect.gen(function*() {
      // the record is in the facts, and the call that reads on in the text too
      const m = yield* manager({ budgetChars: 1_000 })
      const { pid } = yield* m.start(me, shell("seq 1 500"))
      yield* exited(m, pid)
      const small = view(yield* m.poll(me, { pid }))
      expect(Delivery.sizeOf(ProcessView.delivered(small))).toBeLessThanOrEqual(1_000)
      expect(small.output.endsWith("499\n500\n")).toBe(true)
      expect(small.output.split("\n").length - 1).toBeLessThan(50)
      const [[from, to]] = small.retention.shown_intervals
      expect(to).toBe(small.retention.emitted_bytes)
      expect(to - from).toBe(Buffer.byteLength(small.output))
      const m2 = yield* manager()
      const j = yield* m2.start(me, shell("seq 1 500"))
      yield* exited(m2, j.pid)
      const v = view(yield* m2.poll(me, { pid: j.pid }))
      expect(v.output.split("\n").filter((l) => l !== "")).toEqual(Array.from({ length: 50 }, (_, i) => String(451 + i)))
    }))

  it.scopedLive("polls a trickle while it runs, and wait returns on a match, then on the exit", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("for i in 1 2 3 4; do echo line$i; sleep 0.3; done"))
      const matched = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "line2", fromLine: 1 })
      expect(matched.retention.wait?.ended_by).toBe("match")
      expect(matched.retention.wait?.match).toEqual({ line: 2, text: "line2" })
      expect(matched.retention.status).toBe("running")
      // a running job's page offers a cursor to come back for more
      const first = page(yield* m.poll(me, { pid, cursor: matched.retention.cursor }))
      expect(first.content.startsWith("line1\nline2\n")).toBe(true)
      expect(first.next_cursor).toBeDefined()
      const timedOut = yield* m.wait(me, { pid, timeoutMillis: 50, pattern: "never" })
      expect(timedOut.retention.wait?.ended_by).toBe("timeout")
      const done = yield* exited(m, pid)
      expect(done.retention.wait?.ended_by).toBe("exit")
      expect(done.output).toBe("line1\nline2\nline3\nline4\n")
      // two readers: paging never moves the status view or another reader's position
      const again = page(yield* m.poll(me, { pid, cursor: matched.retention.cursor }))
      expect(again.offset).toBe(0)
      expect(view(yield* m.poll(me, { pid })).output).toBe(done.output)
      // a wait on a job that has ended returns at once
      const late = yield* m.wait(me, { pid, timeoutMillis: 60_000 })
      expect(late.retention.wait?.ended_by).toBe("exit")
      expect(late.retention.wait!.waited_ms).toBeLessThan(1_000)
    }))

  it.scopedLive("accounts a 64 MiB flood exactly, keeps its head and newest 1 MiB, and states the middle it dropped", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("yes | head -c 64M"))
      const v = yield* exited(m, pid)
      const cap = 4 * 1024 * 1024
      const total = 64 * 1024 * 1024
      const from = total - 1024 * 1024
      expect(v.retention).toMatchObject({
        status: "exited",
        exit_code: 0,
        emitted_bytes: total,
        retained_bytes: cap,
        capture_limit_loss_bytes: from - cap,
        not_retained_bytes: from - cap,
        kept: {
          ranges: [
            { from_byte: 0, to_byte: cap, from_line: 1, to_line: cap / 2 },
            { from_byte: from, to_byte: total, from_line: from / 2 + 1, to_line: total / 2 }
          ],
          dropped: { from_byte: cap, to_byte: from, from_line: cap / 2 + 1, to_line: from / 2 },
          total_lines: total / 2
        }
      })
      // the newest lines are shown: a clipped tail is not withheld when the masker saw its context
      expect(v.retention.tail_status).toBeUndefined()
      expect(v.output).toBe("y\n".repeat(50))
      expect(v.retention.shown_intervals).toEqual([[total - 100, total]])
      // the head's last page steps over the middle, saying so
      const last = page(yield* m.poll(me, { pid, offset: cap - 10, limit: 8_000 }))
      expect(last).toMatchObject({ offset: cap - 10, shown_bytes: 10, content: "y\ny\ny\ny\ny\n", truncated: true, next_offset: from })
      expect(last.note).toContain(`bytes ${cap}-${from} (lines ${cap / 2 + 1}-${from / 2}) were not kept`)
      const end = page(yield* m.poll(me, { pid, offset: total - 6 }))
      expect(end).toMatchObject({ content: "y\ny\ny\n", truncated: false })
      const refused = yield* m.poll(me, { pid, offset: cap + 1 }).pipe(Effect.flip)
      expect(refused._tag).toBe("InvalidRequest")
      expect(refused.message).toContain(`keeps bytes 0-${cap} and bytes ${from}-${total}`)
      // by line: the first, the last, and one in the middle that is not kept
      const lines = (line: number, count?: number) =>
        Effect.map(m.poll(me, { pid, line, lines: count }), (r) => {
          if (r._tag !== "Lines") throw new Error("expected lines")
          return r
        })
      expect(yield* lines(1, 2)).toMatchObject({ first_line: 1, lines: 2, content: "y\ny\n", total_lines: total / 2, next_line: 3 })
      const final = yield* lines(total / 2)
      expect(final).toMatchObject({ first_line: total / 2, lines: 1, content: "y\n" })
      expect(final.next_line).toBeUndefined()
      const headEnd = yield* lines(cap / 2)
      expect(headEnd.next_line).toBe(from / 2 + 1)
      expect(headEnd.note).toContain(`lines ${cap / 2 + 1}-${from / 2} were not kept`)
      const middle = yield* m.poll(me, { pid, line: 10_000_000 }).pipe(Effect.flip)
      expect(middle.message).toContain(`keeps lines 1-${cap / 2} and lines ${from / 2 + 1}-${total / 2}`)
      expect(middle.message).toContain("middle of the output")
      const past = yield* m.poll(me, { pid, line: total / 2 + 1 }).pipe(Effect.flip)
      expect(past.message).toContain("past the end")
    }))

  it.scopedLive("keeps every byte of interleaved stdout and stderr", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("for i in $(seq 1 300); do echo out$i; echo err$i >&2; done"))
      const v = yield* exited(m, pid)
      const { text } = yield* readAll(m, pid, 8_000)
      const lines = text.split("\n").filter((l) => l !== "")
      expect(lines.length).toBe(600)
      for (let i = 1; i <= 300; i++) {
        expect(lines).toContain(`out${i}`)
        expect(lines).toContain(`err${i}`)
        expect(lines.indexOf(`out${i}`)).toBeLessThan(lines.indexOf(`out${i + 1}`) === -1 ? Infinity : lines.indexOf(`out${i + 1}`))
      }
      expect(v.retention.emitted_bytes).toBe(Buffer.byteLength(text))
    }))

  it.scopedLive("withholds a secret printed in two writes until it is whole, then shows it masked", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const token = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
      const { pid } = yield* m.start(me, shell(`printf 'key=${token.slice(0, 12)}'; sleep 1.5; printf '${token.slice(12)} done\\n'; sleep 0.3`))
      // mid-way, the half-written token is held back, not shown and not readable
      let mid = view(yield* m.poll(me, { pid }))
      for (let i = 0; i < 100 && mid.retention.emitted_bytes === 0; i++) {
        yield* Effect.sleep("10 millis")
        mid = view(yield* m.poll(me, { pid }))
      }
      expect(mid.retention.status).toBe("running")
      expect(mid.retention.retained_bytes).toBe(0)
      // held back, not lost: pending until the masker can rule a secret out
      expect(mid.retention.not_retained_bytes).toBe(0)
      expect(mid.retention.pending_bytes).toBe(16)
      expect(mid.text).toContain("16 bytes written, 16 of them not readable yet")
      expect(mid.text).not.toContain("not kept")
      expect(mid.text).not.toContain("ghp_")
      yield* exited(m, pid)
      const { text } = yield* readAll(m, pid)
      expect(text).not.toContain(token.slice(4, 12))
      expect(text).not.toContain(token.slice(12))
      expect(text).toMatch(/^key=\*+ done\n$/)
      expect(Buffer.byteLength(text)).toBe(Buffer.byteLength(`key=${token} done\n`))
      // a registered secret is masked too
      const j = yield* m.start(me, shell("echo pass hunter2-hunter2"))
      expect((yield* exited(m, j.pid)).output).toBe("pass ***************\n")
    }))

  it.scopedLive("shows malformed bytes as U+FFFD while offsets count source bytes, and refuses offsets inside a character", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      // "ok", two malformed bytes, " €", then "é" x 20
      const { pid } = yield* m.start(me, shell("printf 'ok\\377\\376 \\342\\202\\254'; for i in $(seq 1 20); do printf '\\303\\251'; done; echo"))
      const v = yield* exited(m, pid)
      const source = Buffer.concat([Buffer.from("ok"), Buffer.from([0xff, 0xfe]), Buffer.from(" €" + "é".repeat(20) + "\n")])
      expect(v.retention.emitted_bytes).toBe(source.length)
      expect(v.retention.retained_bytes).toBe(source.length)
      expect(v.output).toBe("ok\uFFFD\uFFFD €" + "é".repeat(20) + "\n")
      expect(v.retention.shown_intervals).toEqual([[0, source.length]])
      // 5 is where the € starts; 6 and 7 are inside it
      const euro = page(yield* m.poll(me, { pid, offset: 4, limit: 4 }))
      expect(euro).toMatchObject({ offset: 4, content: " €", shown_bytes: 4, next_offset: 8 })
      for (const offset of [6, 7]) {
        const e = yield* m.poll(me, { pid, offset }).pipe(Effect.flip)
        expect(e._tag).toBe("InvalidRequest")
        expect(e.message).toContain("start at 5")
      }
      // pages of 5 bytes never divide an é (2 bytes): they take 4 and advance by whole characters
      const all = yield* readAll(m, pid, 5)
      expect(all.text).toBe(v.output)
      expect(all.end).toBe(source.length)
    }))

  it.scopedLive("cancels a job that ignores SIGTERM with SIGKILL after the grace period", () =>
    Effect.gen(function*() {
      const m = yield* manager({ killGraceMillis: 300 })
      const { pid } = yield* m.start(me, shell("trap '' TERM; echo ready; sleep 30"))
      yield* m.wait(me, { pid, timeoutMillis: 5_000, pattern: "ready", fromLine: 1 })
      const began = Date.now()
      yield* m.cancel(me, pid)
      expect(Date.now() - began).toBeGreaterThanOrEqual(250)
      const v = view(yield* m.poll(me, { pid }))
      expect(v.retention).toMatchObject({ status: "exited", signal: "SIGKILL" })
      expect(v.output).toBe("ready\n")
      expect((yield* m.cancel(me, pid).pipe(Effect.flip)).message).toContain("no longer running")
      expect((yield* m.signal(me, pid, "SIGTERM").pipe(Effect.flip)).message).toContain("no longer running")
    }))

  it.scopedLive("sends signals to the process group and takes stdin", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const cat = yield* m.start(me, { command: "cat", stdin: "pipe" })
      yield* m.writeStdin(me, cat.pid, "hello\n")
      yield* m.writeStdin(me, cat.pid, new Uint8Array([0x68, 0x69, 0x0a]))
      yield* m.closeStdin(me, cat.pid)
      const done = yield* exited(m, cat.pid)
      expect(done.output).toBe("hello\nhi\n")
      expect(done.retention.exit_code).toBe(0)
      expect((yield* m.writeStdin(me, cat.pid, "late").pipe(Effect.flip)).message).toContain("no longer running")
      // stdin is closed by default, so cat ends at once
      const closed = yield* m.start(me, { command: "cat" })
      expect((yield* exited(m, closed.pid)).retention.exit_code).toBe(0)
      const sleeper = yield* m.start(me, shell("sleep 30 & wait"))
      expect((yield* m.writeStdin(me, sleeper.pid, "x").pipe(Effect.flip)).message).toContain("stdin closed")
      expect((yield* m.signal(me, sleeper.pid, "SIGBOGUS").pipe(Effect.flip))._tag).toBe("InvalidRequest")
      yield* m.signal(me, sleeper.pid, "SIGINT")
      const v = yield* exited(m, sleeper.pid)
      expect(v.retention.status).toBe("exited")
      expect(v.retention.exit_code ?? v.retention.signal).toBeDefined()
    }))

  it.scopedLive("fails to start a command that does not exist, and keeps no job", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const e = yield* m.start(me, { command: "no-such-command-spillway" }).pipe(Effect.flip)
      expect(e._tag).toBe("SpawnFailed")
      expect((yield* m.start(me, { command: " " }).pipe(Effect.flip))._tag).toBe("InvalidRequest")
      expect(yield* m.list(me)).toEqual([])
    }))

  it.scopedLive("a cursor binds its job's generation: a later job with a reused pid is out of its reach", () =>
    Effect.gen(function*() {
      // the real runner, reporting one pid for every process, as a host sees when pids wrap around
      const real = NodeChild.make()
      const reusing = Layer.succeed(Child.ChildRunner, {
        start: (spec, onOutput, timing) => Effect.map(real.start(spec, onOutput, timing), (r) => ({ ...r, pid: 4242 }))
      })
      const m = yield* Process.make().pipe(Effect.provide(reusing), Effect.provide(yield* Layer.build(deps())))
      const a = yield* m.start(me, shell("echo first job"))
      const aView = yield* exited(m, a.pid)
      const b = yield* m.start(me, shell("echo second job"))
      expect(b.pid).toBe(a.pid)
      expect(b.generation).not.toBe(a.generation)
      yield* exited(m, b.pid)
      const e = yield* m.poll(me, { pid: a.pid, cursor: aView.retention.cursor }).pipe(Effect.flip)
      expect(e._tag).toBe("InvalidRequest")
      expect(e.message).toContain("does not belong to the current job")
      expect(view(yield* m.poll(me, { pid: b.pid })).output).toBe("second job\n")
      expect((yield* m.list(me)).map((j) => j.command)).toEqual(["echo second job"])
    }))

  it.scopedLive("refuses cursors that were altered or issued by another tool", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const { pid } = yield* m.start(me, shell("echo hi"))
      const v = yield* exited(m, pid)
      const [, payload, tag] = v.retention.cursor.split(".")
      const altered = `spw1.${payload}.${tag.startsWith("A") ? "B" : "A"}${tag.slice(1)}`
      expect((yield* m.poll(me, { pid, cursor: altered }).pipe(Effect.flip))._tag).toBe("CursorError")
      const foreign = yield* Cursor.encode({ tool: "get_tool_output", evidence: String(pid), offset: 0, unit: "byte" }).pipe(
        Effect.provide(Cursor.layerKey(KEY))
      )
      expect((yield* m.poll(me, { pid, cursor: foreign }).pipe(Effect.flip))._tag).toBe("CursorError")
      // a cursor takes precedence over an offset
      expect(page(yield* m.poll(me, { pid, cursor: v.retention.cursor, offset: 2 })).offset).toBe(0)
      for (const limit of [3, 8_001, 1.5]) {
        expect((yield* m.poll(me, { pid, offset: 1, limit }).pipe(Effect.flip))._tag).toBe("InvalidRequest")
      }
      expect((yield* m.poll(me, { pid, offset: -1 }).pipe(Effect.flip))._tag).toBe("InvalidRequest")
    }))

  it.scopedLive("checks owner, channel and the authorizer on every action, and again after a wait", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const bob = { owner: "bob", channel: "chat-1" }
      const otherChannel = { owner: "alice", channel: "chat-2" }
      const { pid } = yield* m.start(me, shell("sleep 0.5; echo secret-ish"))
      for (const who of [bob, otherChannel]) {
        expect((yield* m.poll(who, { pid }).pipe(Effect.flip))._tag).toBe("AccessDenied")
        expect((yield* m.signal(who, pid, "SIGTERM").pipe(Effect.flip))._tag).toBe("AccessDenied")
        expect(yield* m.list(who)).toEqual([])
      }
      const revocable = { owner: "carol", channel: "c" }
      const job = yield* m.start(revocable, shell("sleep 1; echo done"))
      const waiting = yield* Effect.fork(m.wait(revocable, { pid: job.pid, timeoutMillis: 10_000 }))
      yield* Effect.sleep("100 millis")
      revoked.add("carol")
      const after = yield* waiting.await
      revoked.delete("carol")
      expect(Exit.isFailure(after) && JSON.stringify(after.cause)).toContain("AccessDenied")
      expect((yield* m.poll(me, { pid: 999_999 }).pipe(Effect.flip))._tag).toBe("NotFound")
    }))

  it.scopedLive("counts output past the per-job limit without keeping it when no window is kept", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 1_000, smallStreamBytes: 100, tailBytes: 0 })
      const { pid } = yield* m.start(me, shell("seq 1 1000"))
      const v = yield* exited(m, pid)
      const whole = Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join("")
      expect(v.retention).toMatchObject({
        emitted_bytes: whole.length,
        retained_bytes: 1_000,
        capture_limit_loss_bytes: whole.length - 1_000,
        not_retained_bytes: whole.length - 1_000,
        tail_status: ProcessView.WITHHELD
      })
      expect(v.retention.kept).toBeUndefined()
      expect((yield* readAll(m, pid)).text).toBe(whole.slice(0, 1_000))
    }))

  it.scopedLive("keeps the newest output past the per-job limit in its window, from a line start, every range exact", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 1_000, tailBytes: 500 })
      const { pid } = yield* m.start(me, shell("seq 1 1000"))
      const v = yield* exited(m, pid)
      const whole = Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join("")
      const lineOf = (byte: number) => whole.slice(0, byte).split("\n").length
      const s0 = whole.length - 500
      const from = whole[s0 - 1] === "\n" ? s0 : whole.indexOf("\n", s0) + 1
      expect(v.retention).toMatchObject({
        emitted_bytes: whole.length,
        retained_bytes: 1_000,
        not_retained_bytes: from - 1_000,
        kept: {
          ranges: [
            { from_byte: 0, to_byte: 1_000, from_line: 1, to_line: 277 },
            { from_byte: from, to_byte: whole.length, from_line: lineOf(from), to_line: 1000 }
          ],
          dropped: { from_byte: 1_000, to_byte: from, from_line: 278, to_line: lineOf(from) - 1 },
          total_lines: 1000
        }
      })
      expect(v.retention.tail_status).toBeUndefined()
      expect(v.output).toBe(Array.from({ length: 50 }, (_, i) => `${951 + i}\n`).join(""))
      const all = yield* readAll(m, pid)
      expect(all.text).toBe(whole.slice(0, 1_000) + whole.slice(from))
      expect(all.skipped).toBe(from - 1_000)
      // line by line, from the head into the window
      const read = yield* m.poll(me, { pid, line: 275, lines: 10 })
      expect(read).toMatchObject({ _tag: "Lines", first_line: 275, lines: 3, content: "275\n276\n277\n", next_line: lineOf(from) })
      const win = yield* m.poll(me, { pid, line: lineOf(from), lines: 3 })
      expect(win).toMatchObject({ _tag: "Lines", lines: 3, content: whole.slice(from).split("\n").slice(0, 3).map((l) => `${l}\n`).join("") })
    }))

  it.scopedLive("a wait pattern matches a line past the head, in the window of newest output", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 1_000, tailBytes: 10_000 })
      const { pid } = yield* m.start(me, shell("seq 1 1000; sleep 0.3; echo NEEDLE-HERE; sleep 3"))
      const v = yield* m.wait(me, { pid, timeoutMillis: 10_000, pattern: "NEEDLE", fromLine: 1 })
      expect(v.retention.wait).toMatchObject({ ended_by: "match", match: { line: 1001, text: "NEEDLE-HERE" } })
      expect(v.retention.status).toBe("running")
      expect(v.output.endsWith("999\n1000\nNEEDLE-HERE\n")).toBe(true)
      yield* m.cancel(me, pid)
    }))

  it.scopedLive("the window counts in the spool quota with the head, and a spent quota keeps no window", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(deps({ pools: { spool: { bytes: 1_500 } } }))
      const quota = Context.get(context, Retention.Retention)
      const m = yield* Process.make({ captureLimitBytes: 1_000, tailBytes: 10_000 }).pipe(Effect.provide(context))
      const { pid } = yield* m.start(me, shell("seq 1 5000"))
      // while it runs, the window holds what is left of the pool beside the head
      const v = yield* exited(m, pid)
      const kept = v.retention.kept!
      const windowBytes = kept.ranges[1]!.to_byte - kept.ranges[1]!.from_byte
      expect(v.retention.retained_bytes).toBe(1_000)
      expect(windowBytes).toBeGreaterThan(0)
      expect(windowBytes).toBeLessThanOrEqual(500)
      // once kept as a body of its own, the window counts in the pool with the head, within its limit
      expect(quota.usage("spool").used).toBe(1_000 + windowBytes)
      expect(quota.usage("spool").used).toBeLessThanOrEqual(1_500)
      // the next job finds the pool spent: its head cannot grow and it keeps no window
      const next = yield* m.start(me, shell("seq 1 5000"))
      const w = yield* exited(m, next.pid)
      expect(w.retention.capture_error).toContain("quota")
      expect(w.retention.kept).toBeUndefined()
    }))

  it.scopedLive("a partial code point at the capture limit is not part of the readable prefix", () =>
    Effect.gen(function*() {
      const m = yield* manager({ captureLimitBytes: 4, tailBytes: 0 })
      const { pid } = yield* m.start(me, shell("printf 'ab\\342\\202\\254cd'"))
      const v = yield* exited(m, pid)
      expect(v.retention).toMatchObject({ emitted_bytes: 7, retained_bytes: 2, not_retained_bytes: 5, capture_limit_loss_bytes: 3 })
      expect((yield* readAll(m, pid)).text).toBe("ab")
      // with a window, it starts at the first whole code point the limit left out, and the cut line counts as dropped
      const w = yield* manager({ captureLimitBytes: 4 })
      const second = yield* w.start(me, shell("printf 'ab\\342\\202\\254cd'"))
      const kept = yield* exited(w, second.pid)
      expect(kept.retention).toMatchObject({
        retained_bytes: 2,
        not_retained_bytes: 3,
        kept: { dropped: { from_byte: 2, to_byte: 5, from_line: 1, to_line: 1 }, total_lines: 1 }
      })
      expect(kept.output).toBe("cd")
      const all = yield* readAll(w, second.pid)
      expect(all).toMatchObject({ text: "abcd", skipped: 3 })
      expect(yield* w.poll(me, { pid: second.pid, line: 1 })).toMatchObject({ _tag: "Lines", content: "ab" })
    }))

  it.scopedLive("a spent quota sets a capture error at once; a small complete stream still shows its true tail", () =>
    Effect.gen(function*() {
      const m = yield* manager({}, { pools: { spool: { bytes: 500 } } })
      const { pid } = yield* m.start(me, shell("seq 1 400"))
      const v = yield* exited(m, pid)
      const whole = Array.from({ length: 400 }, (_, i) => `${i + 1}\n`).join("")
      expect(v.retention.capture_error).toContain("quota")
      expect(v.retention.retained_bytes).toBe(500)
      expect(v.retention.not_retained_bytes).toBe(whole.length - 500)
      expect(v.retention.tail_status).toBeUndefined()
      expect(v.output.endsWith("399\n400\n")).toBe(true)
      const [[from, to]] = v.retention.shown_intervals
      expect(to).toBe(whole.length)
      expect(whole.slice(from, to)).toBe(v.output)
      expect((yield* readAll(m, pid)).text).toBe(whole.slice(0, 500))
      // with the quota spent, the next job keeps nothing, and a stream too large for memory shows no tail
      const m2 = yield* manager({ smallStreamBytes: 100 }, { pools: { spool: { bytes: 500 } } })
      const big = yield* m2.start(me, shell("seq 1 400"))
      const bv = yield* exited(m2, big.pid)
      expect(bv.retention).toMatchObject({ retained_bytes: 500, tail_status: ProcessView.WITHHELD, shown_intervals: [] })
      const next = yield* m2.start(me, shell("echo after"))
      const nv = yield* exited(m2, next.pid)
      expect(nv.retention.retained_bytes).toBe(0)
      expect(nv.retention.capture_error).toContain("quota")
      expect(nv.output).toBe("after\n")
      expect(yield* m2.quotaUsed).toBe(500)
    }))

  it.scopedLive("keeps the output of a job that ends before its record is saved", () =>
    Effect.gen(function*() {
      // records kept somewhere slow (a database across a network): the child is long gone when the save returns
      const slow = Layer.effect(
        Manifests.Manifests,
        Effect.map(Manifests.Manifests, (real) => ({
          ...real,
          insert: (m: Manifests.Manifest) => Effect.zipRight(Effect.sleep("150 millis"), real.insert(m)),
          update: (m: Manifests.Manifest) => Effect.zipRight(Effect.sleep("150 millis"), real.update(m))
        }))
      ).pipe(Layer.provide(Manifests.layerMemory))
      const m = yield* manager({}, { manifests: slow })
      for (let i = 0; i < 3; i++) {
        const { pid } = yield* m.start(me, shell(`echo quick ${i}; exit 2`))
        const v = yield* exited(m, pid)
        expect(v.output).toBe(`quick ${i}\n`)
        expect(v.retention.exit_code).toBe(2)
      }
    }))

  it.scopedLive("a failed spool write sets a capture error at once and keeps the prefix written before it", () =>
    Effect.gen(function*() {
      // the real store, except that spool writes fail once 4,096 bytes are written
      const failing = (real: BodyFiles.Service): BodyFiles.Service => ({
        ...real,
        create: (name, visibility) =>
          Effect.map(real.create(name, visibility), (sink) => {
            let written = 0
            return {
              ...sink,
              write: (bytes: Uint8Array) => {
                if (written + bytes.length > 4_096) return Effect.fail(new Errors.StoreFailed({ operation: `write ${name}`, reason: "disk full" }))
                written += bytes.length
                return sink.write(bytes)
              }
            }
          })
      })
      const m = yield* manager({}, { files: failing })
      const { pid } = yield* m.start(me, shell("for i in $(seq 1 300); do seq 1 100; sleep 0.001; done"))
      const v = yield* exited(m, pid)
      expect(v.retention.capture_error).toContain("disk full")
      const whole = Array.from({ length: 300 }, () => Array.from({ length: 100 }, (_, i) => `${i + 1}\n`).join("")).join("")
      expect(v.retention.emitted_bytes).toBe(whole.length)
      expect(v.retention.retained_bytes).toBeLessThanOrEqual(4_096)
      expect(v.retention.not_retained_bytes).toBe(whole.length - v.retention.retained_bytes)
      expect(v.retention.tail_status).toBe(ProcessView.WITHHELD)
      expect((yield* readAll(m, pid)).text).toBe(whole.slice(0, v.retention.retained_bytes))
    }))

  it.scopedLive("local capture never consumes what a remote start reserved; a released reservation frees its room", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(deps({ pools: { spool: { bytes: 1_000 } } }))
      const quota = Context.get(context, Retention.Retention)
      const m = yield* Process.make().pipe(Effect.provide(context))
      const reservation = yield* quota.reserve("spool", 600, { entry: false })
      expect((yield* Effect.flip(quota.reserve("spool", 600, { entry: false })))._tag).toBe("QuotaExceeded")
      const first = yield* m.start(me, shell("seq 1 1000"))
      const v = yield* exited(m, first.pid)
      expect(v.retention.retained_bytes).toBe(400)
      expect(v.retention.capture_error).toContain("1000-byte spool retention quota is used up")
      expect(quota.usage("spool")).toMatchObject({ used: 400, reserved: 600, limit: 1_000 })
      // a refused dispatch gives its reservation back, once
      yield* reservation.release
      yield* reservation.release
      const second = yield* m.start(me, shell("seq 1 1000"))
      expect((yield* exited(m, second.pid)).retention.retained_bytes).toBe(600)
      expect(quota.usage("spool")).toMatchObject({ used: 1_000, reserved: 0, limit: 1_000 })
    }))

  it.scopedLive("output expires after the exit, reads do not renew it, and a sweep removes the spool", () =>
    Effect.gen(function*() {
      const directory = Path.join(tempDir(), "spools")
      const m = yield* manager({}, { directory, pools: { spool: { bytes: 1024 * 1024, ttlMillis: 1_500 } } })
      const { pid } = yield* m.start(me, shell("echo soon gone"))
      const v = yield* exited(m, pid)
      expect(v.retention.spool).toBe("durable")
      expect(Date.parse(v.retention.expires_at!)).toBeGreaterThan(Date.now())
      const spools = Fs.readdirSync(directory).filter((f) => f.startsWith("job-"))
      expect(spools.length).toBe(1)
      expect(Fs.statSync(Path.join(directory, spools[0])).mode & 0o777).toBe(0o600)
      expect(Fs.statSync(directory).mode & 0o777).toBe(0o700)
      yield* Effect.sleep("500 millis")
      yield* m.poll(me, { pid })
      yield* Effect.sleep("1100 millis")
      expect((yield* m.poll(me, { pid }).pipe(Effect.flip))._tag).toBe("Expired")
      expect(yield* m.sweep).toBe(1)
      expect(Fs.readdirSync(directory).filter((f) => f.startsWith("job-"))).toEqual([])
      expect((yield* m.poll(me, { pid }).pipe(Effect.flip))._tag).toBe("NotFound")
      expect(yield* m.quotaUsed).toBe(0)
    }))

  it.live("restores jobs read-only after a restart in the middle of a job", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      const store = () => ({ directory, manifests: SqlManifests.layerFor(Path.join(directory, ".manifests.sqlite")) })
      const first = yield* Scope.make()
      const m1 = yield* manager({}, store()).pipe(Scope.extend(first))
      const done = yield* m1.start(me, shell("echo finished; exit 4"))
      const doneView = yield* exited(m1, done.pid)
      const running = yield* m1.start(me, shell("echo before; sleep 30", { stdin: "pipe" }))
      const before = yield* m1.wait(me, { pid: running.pid, timeoutMillis: 10_000, pattern: "before", fromLine: 1 })
      yield* Scope.close(first, Exit.void)

      const second = yield* Scope.make()
      const m2 = yield* manager({}, store()).pipe(Scope.extend(second))
      const jobs = yield* m2.list(me)
      expect(jobs.map((j) => [j.pid, j.status, j.read_only])).toEqual([
        [done.pid, "exited", true],
        [running.pid, "unknown", true]
      ])
      const restored = view(yield* m2.poll(me, { pid: running.pid }))
      expect(restored.output).toBe("before\n")
      expect(restored.retention.status).toBe("unknown")
      expect(Date.parse(restored.retention.expires_at!)).toBe(Date.parse(running.started_at) + 24 * 60 * 60 * 1000)
      // cursors from before the restart still read the same output
      expect(page(yield* m2.poll(me, { pid: running.pid, cursor: before.retention.cursor })).content).toBe("before\n")
      const finished = view(yield* m2.poll(me, { pid: done.pid }))
      expect(finished.retention).toMatchObject({ status: "exited", exit_code: 4, expires_at: doneView.retention.expires_at })
      for (const refused of [m2.writeStdin(me, running.pid, "x"), m2.signal(me, running.pid, "SIGTERM"), m2.cancel(me, running.pid)]) {
        const e = yield* Effect.flip(refused)
        expect(e._tag).toBe("InvalidRequest")
        expect(e.message).toContain("read-only")
      }
      expect((yield* m2.poll({ owner: "bob", channel: "chat-1" }, { pid: done.pid }).pipe(Effect.flip))._tag).toBe("AccessDenied")
      yield* Scope.close(second, Exit.void)
    }))

  it.live("the window of newest output outlives a restart, for jobs that ended and jobs the manager stopped with", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      const store = () => ({ directory, manifests: SqlManifests.layerFor(Path.join(directory, ".manifests.sqlite")) })
      const options = { captureLimitBytes: 1_000, tailBytes: 500 }
      const first = yield* Scope.make()
      const m1 = yield* manager(options, store()).pipe(Scope.extend(first))
      const done = yield* m1.start(me, shell("seq 1 1000; echo LAST; exit 2"))
      const doneView = yield* exited(m1, done.pid)
      const running = yield* m1.start(me, shell("seq 1 1000; echo MARK; sleep 30"))
      const runningView = yield* m1.wait(me, { pid: running.pid, timeoutMillis: 10_000, pattern: "^MARK$", fromLine: 1 })
      expect(runningView.retention.wait?.ended_by).toBe("match")
      yield* Scope.close(first, Exit.void)

      const second = yield* Scope.make()
      const m2 = yield* manager(options, store()).pipe(Scope.extend(second))
      const after = view(yield* m2.poll(me, { pid: done.pid }))
      expect(after.retention.kept).toEqual(doneView.retention.kept)
      expect(after.output.endsWith("1000\nLAST\n")).toBe(true)
      expect(yield* m2.poll(me, { pid: done.pid, line: 1001 })).toMatchObject({ _tag: "Lines", content: "LAST\n" })
      const stopped = view(yield* m2.poll(me, { pid: running.pid }))
      expect(stopped.retention.status).toBe("unknown")
      expect(stopped.output.endsWith("1000\nMARK\n")).toBe(true)
      expect(stopped.retention.kept?.total_lines).toBe(1001)
      yield* Scope.close(second, Exit.void)
    }))

  it.scopedLive("100 jobs at once: every emitted byte is counted and nothing retained is lost", () =>
    Effect.gen(function*() {
      const m = yield* manager()
      const size = 2 * 1024 * 1024
      const started = yield* Effect.forEach(
        Array.from({ length: 100 }, (_, i) => i),
        (i) => m.start(me, shell(`yes job${String(i).padStart(3, "0")} | head -c ${size}`)),
        { concurrency: 10 }
      )
      const views = yield* Effect.forEach(started, (s) => exited(m, s.pid), { concurrency: "unbounded" })
      let kept = 0
      for (const [i, v] of views.entries()) {
        const r = v.retention
        expect(r.emitted_bytes).toBe(size)
        expect(r.retained_bytes + r.not_retained_bytes).toBe(size)
        kept += r.retained_bytes
        const line = `job${String(i).padStart(3, "0")}\n`
        if (r.retained_bytes < size) expect(r.capture_error).toContain("quota")
        if (r.retained_bytes === 0) continue
        // the first and last retained pages hold exactly what the job wrote there
        const head = page(yield* m.poll(me, { pid: v.retention.pid, offset: 1, limit: 8_000 }))
        expect(head.content).toBe(line.repeat(2_000).slice(1, 1 + head.shown_bytes))
        const at = r.retained_bytes - 70
        const tail = page(yield* m.poll(me, { pid: v.retention.pid, offset: at, limit: 8_000 }))
        expect(tail.next_offset).toBe(r.retained_bytes)
        expect(tail.content).toBe(line.repeat(2_000).slice(at % line.length, at % line.length + 70))
      }
      expect(kept).toBe(128 * 1024 * 1024)
      expect(yield* m.quotaUsed).toBe(128 * 1024 * 1024)
      // one job read back whole, page by page
      const whole = yield* readAll(m, views[0].retention.pid, 8_000)
      expect(whole.end).toBe(views[0].retention.retained_bytes)
      expect(whole.text).toBe("job000\n".repeat(size / 7 + 1).slice(0, whole.end))
    }), 120_000)
})

describe("NodeProcess", () => {
  it.scopedLive("wires a durable manager: records, key and spools in the retention directory", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      const context = yield* Layer.build(NodeProcess.layer({ directory }))
      const started = yield* Process.start(me, shell("echo wired")).pipe(Effect.provide(context))
      const v = yield* Process.wait(me, { pid: started.pid, timeoutMillis: 10_000 }).pipe(Effect.provide(context))
      expect(v.output).toBe("wired\n")
      expect(v.retention.spool).toBe("durable")
      expect(Fs.existsSync(Path.join(directory, ".manifests.sqlite"))).toBe(true)
      expect(Fs.statSync(Path.join(directory, ".cursor.key")).mode & 0o777).toBe(0o600)
      expect(Fs.readdirSync(directory).filter((f) => f.startsWith("job-")).length).toBe(1)
    }))

  it.scopedLive("a read-only grant polls jobs but cannot start or drive them", () =>
    Effect.gen(function*() {
      const full = yield* Layer.build(NodeProcess.layer())
      const { pid } = yield* Process.start(me, shell("echo seen")).pipe(Effect.provide(full))
      yield* Process.wait(me, { pid, timeoutMillis: 10_000 }).pipe(Effect.provide(full))
      const read = yield* Layer.build(Process.readOnly(Layer.succeedContext(full)))
      const v = yield* Process.poll(me, { pid }).pipe(Effect.provide(read))
      expect(v._tag === "StatusView" && v.output).toBe("seen\n")
      expect(v._tag === "StatusView" && v.retention.spool).toBe("temporary")
      // the grant holds the read methods alone
      expect(Object.keys(read.unsafeMap.get(Process.ProcessRead.key) as object).sort()).toEqual(["list", "poll", "search", "wait"])
      expect(read.unsafeMap.has(Process.ProcessSpawn.key)).toBe(false)
      expect(read.unsafeMap.has(Process.ProcessControl.key)).toBe(false)
      // @ts-expect-error a program that spawns does not compile against a read-only grant
      const spawn: Effect.Effect<unknown, unknown, never> = Process.start(me, shell("true")).pipe(Effect.provide(read))
      expect(spawn).toBeDefined()
    }))
})
