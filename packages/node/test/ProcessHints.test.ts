/**
 * A job's views say how to read on in the words of whoever reads them: a
 * program on the Effect layers is told the `Process` calls, a program on
 * the Promise face that face's methods, and a model the `manage_process`
 * tool. Each hint is the call itself: made as it says, it reads on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Cursor, Manifests, Process, ProcessView, Retention, Secrets } from "@spillway/core"
import { NodeChild, NodeProcess, Spillway } from "@spillway/node"
import { Effect, Layer } from "effect"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-hints-")
const me: Process.Caller = { owner: "alice", channel: "build" }

/** 3,000 numbered lines, with an error on line 1,500: a status view cut short, a search that pages. */
const SCRIPT = `i=1; while [ $i -le 3000 ]; do if [ $i -eq 1500 ]; then echo "error: step $i failed"; else echo "step $i"; fi; i=$((i+1)); done`

const viewOf = (r: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) => {
  if (r._tag !== "StatusView") throw new Error(`expected the status view, got ${r._tag}`)
  return r
}

/** A watcher: two lines, then after a while the line a caller waits for, then it runs on. */
const WATCHER = "echo compiling; echo compiled ok; sleep 1; echo compiled ok; sleep 20"

/** The wait a running job's view names first, with its stand-in pattern and its line. */
const waitCall = (next: string, call: RegExp) => {
  const m = call.exec(next)
  if (m === null) throw new Error(`no wait call in: ${next}`)
  return { pid: Number(m[1]), fromLine: Number(m[2]) }
}

describe("the words a job's views read on in", () => {
  it.live("NodeProcess.layer: the Process calls, which read on as they say", () =>
    Effect.gen(function*() {
      const { pid } = yield* Process.start(me, { command: SCRIPT, shell: true })
      const done = yield* Process.wait(me, { pid, timeoutMillis: 20_000 })
      expect(done.retention.next).toBe(`Process.poll(caller, { pid: ${pid}, cursor: ${JSON.stringify(done.retention.cursor)} }) reads the kept output from its start; each page ends with the call for the next`)
      expect(done.text).not.toContain("manage_process")
      // the call the hint names, made as written
      const call = /^Process\.poll\(caller, \{ pid: (\d+), cursor: ("[^"]+") \}\)/.exec(done.retention.next)!
      const page = yield* Process.poll(me, { pid: Number(call[1]), cursor: JSON.parse(call[2]!) as string })
      expect(page._tag === "Page" && page.content.startsWith("step 1\nstep 2\n")).toBe(true)
      const found = yield* Process.search(me, { pid, pattern: "^step \\d+$", maxResults: 2 })
      expect(found.text.split("\n").at(-1)).toBe(
        `[2 matching lines; searched lines 1-2 of 3000. Next, from line 3: Process.search(caller, { pid: ${pid}, pattern: "^step \\\\d+$", cursor: ${JSON.stringify(found.next_cursor)} })]`
      )
      // lines delivered in the library's words, when a program asks for them
      const lines = yield* Process.poll(me, { pid, line: 1, lines: 2 })
      expect(ProcessView.delivered(lines, ProcessView.libraryHints).text).toBe(
        `step 1\nstep 2\n[Showing lines 1-2 of 3000. Next: Process.poll(caller, { pid: ${pid}, line: 3, lines: 2 })]`
      )
      // a job still running: first the wait from the line after the newest shown, which ends on a line printed since
      const live = yield* Process.start(me, { command: WATCHER, shell: true })
      yield* Effect.sleep("300 millis")
      const running = viewOf(yield* Process.poll(me, { pid: live.pid }))
      expect(running.text).toContain("compiled ok")
      const w = waitCall(running.retention.next, /^Process\.wait\(caller, \{ pid: (\d+), timeoutMillis: 30000, pattern: PATTERN, fromLine: (\d+) \}\) waits for a new line matching your PATTERN/)
      expect(w).toEqual({ pid: live.pid, fromLine: 3 })
      expect(running.retention.next).toContain(`; Process.poll(caller, { pid: ${live.pid}, cursor: `)
      const waited = yield* Process.wait(me, { pid: w.pid, timeoutMillis: 20_000, pattern: "^compiled ok$", fromLine: w.fromLine })
      expect(waited.retention.wait?.ended_by).toBe("match")
      expect(waited.retention.wait?.match?.line).toBe(3)
    }).pipe(Effect.provide(NodeProcess.layer({ directory: tempDir() }))))

  it("the Promise face: its own methods, while the manage_process tool keeps the tool's words", { timeout: 30_000 }, async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner: me })
    const { pid } = await sw.start(SCRIPT)
    const done = await sw.wait(pid, { timeoutMs: 20_000 })
    expect(done.retention.next.startsWith(`poll(${pid}, { cursor: ${JSON.stringify(done.retention.cursor)} })`)).toBe(true)
    expect(done.text).not.toContain("manage_process")
    const call = /^poll\((\d+), \{ cursor: ("[^"]+") \}\)/.exec(done.retention.next)!
    const page = await sw.poll(Number(call[1]), { cursor: JSON.parse(call[2]!) as string })
    expect(page._tag === "Page" && page.content.startsWith("step 1\n")).toBe(true)
    const found = await sw.search(pid, { pattern: "^step", maxResults: 1 })
    expect(found.text).toContain(`Next, from line 2: search(${pid}, { pattern: "^step", cursor: ${JSON.stringify(found.next_cursor)} })`)
    const again = await sw.search(pid, { pattern: "^step", maxResults: 1, cursor: found.next_cursor! })
    expect(again.matches[0]!.line).toBe(2)
    // what a model reads through the tool names the tool
    const viaTool = await sw.tool("manage_process", { action: "poll", pid })
    expect(viaTool.text).toContain(`Next: manage_process action=poll pid=${pid} cursor=`)
    expect(viaTool.text).not.toContain(`poll(${pid},`)
    // a job still running: the face's wait, then the tool's, each made as written and ending on the line printed since
    const live = await sw.start(WATCHER)
    await new Promise((r) => setTimeout(r, 300))
    const running = await sw.poll(live.pid)
    if (running._tag !== "StatusView") throw new Error(running._tag)
    const w = waitCall(running.retention.next, /^wait\((\d+), \{ timeoutMs: 30000, pattern: PATTERN, fromLine: (\d+) \}\) waits for a new line matching your PATTERN/)
    expect(w).toEqual({ pid: live.pid, fromLine: 3 })
    const waited = await sw.wait(w.pid, { timeoutMs: 20_000, pattern: "^compiled ok$", fromLine: w.fromLine })
    expect(waited.retention.wait?.match?.line).toBe(3)
    const toolView = await sw.tool("manage_process", { action: "poll", pid: live.pid })
    const t = waitCall(toolView.text, /Next: manage_process action=wait pid=(\d+) pattern=PATTERN from_line=(\d+) waits for a new line matching your PATTERN/)
    expect(t).toEqual({ pid: live.pid, fromLine: 4 })
    const viaToolWait = await sw.tool("manage_process", { action: "wait", pid: t.pid, pattern: "^compiled ok$", from_line: t.fromLine, timeout_ms: 1_000 })
    // nothing printed from line 4 on: the wait times out rather than match the lines before
    expect(viaToolWait.text).toMatch(/The wait timed out after \d+ s with no line matching/)
    await sw.kill(live.pid)
  })

  it.live("Process.layer alone, as the MCP server and the toolkit build it: the tool's words; and any caller's own for one call", () =>
    Effect.gen(function*() {
      const { pid } = yield* Process.start(me, { command: SCRIPT, shell: true })
      const done = yield* Process.wait(me, { pid, timeoutMillis: 20_000 })
      expect(done.retention.next.startsWith(`manage_process action=poll pid=${pid} cursor=${done.retention.cursor} `)).toBe(true)
      const mine = yield* Process.poll(me, { pid }).pipe(
        Effect.provideService(ProcessView.CurrentHints, ProcessView.methodHints({ poll: "jobs.read", search: "jobs.find", wait: "jobs.wait", timeout: "ms" }, "argument"))
      )
      expect(viewOf(mine).retention.next.startsWith(`jobs.read(${pid}, { cursor: `)).toBe(true)
      // a job still running: the wait comes first, in the caller's words
      const live = yield* Process.start(me, { command: WATCHER, shell: true })
      yield* Effect.sleep("300 millis")
      const running = yield* Process.poll(me, { pid: live.pid }).pipe(
        Effect.provideService(ProcessView.CurrentHints, ProcessView.methodHints({ poll: "jobs.read", search: "jobs.find", wait: "jobs.wait", timeout: "ms" }, "argument"))
      )
      expect(viewOf(running).retention.next).toMatch(new RegExp(`^jobs\\.wait\\(${live.pid}, \\{ ms: 30000, pattern: PATTERN, fromLine: 3 \\}\\) waits for a new line`))
    }).pipe(Effect.provide(Process.layer().pipe(
      Layer.provide(NodeChild.layerForJobs()),
      Layer.provide(Cursor.layerRandomKey),
      Layer.provide(Body.layer.pipe(Layer.provideMerge(Layer.mergeAll(
        BodyFiles.layerMemory,
        Manifests.layerMemory,
        Retention.layer(),
        Secrets.layer(),
        Access.allowOwners
      )))),
      Layer.orDie
    ))))
})
