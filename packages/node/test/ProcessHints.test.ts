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
  })

  it.live("Process.layer alone, as the MCP server and the toolkit build it: the tool's words; and any caller's own for one call", () =>
    Effect.gen(function*() {
      const { pid } = yield* Process.start(me, { command: SCRIPT, shell: true })
      const done = yield* Process.wait(me, { pid, timeoutMillis: 20_000 })
      expect(done.retention.next.startsWith(`manage_process action=poll pid=${pid} cursor=${done.retention.cursor} `)).toBe(true)
      const mine = yield* Process.poll(me, { pid }).pipe(
        Effect.provideService(ProcessView.CurrentHints, ProcessView.methodHints({ poll: "jobs.read", search: "jobs.find" }, "argument"))
      )
      expect(viewOf(mine).retention.next.startsWith(`jobs.read(${pid}, { cursor: `)).toBe(true)
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
