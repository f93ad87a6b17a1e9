import { describe, expect, it } from "@effect/vitest"
import { Controller, RemoteRecords } from "@spillway/remote"
import { Effect, Fiber, Layer } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { hostFiles, hostProcess } from "./hosts.js"
import { freshUrl, pgUrl, relay } from "./pgRelay.js"

const me = { owner: "controller-1", channel: "conv-1" }

/** A controller over TCP whose records live behind a relay that can be cut, tried again for one second before failing. */
const controllerVia = (port: number, records: string) =>
  Controller.layer().pipe(
    Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })),
    Layer.provide(RemoteRecords.layerFor(records, { retryFor: "1 second" }))
  )

/** The command lines of the processes running now. */
const commandLines = () => ChildProcess.execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })

/** A host, a fresh database behind a relay the test can cut, and a controller over both, leased as `me`. */
const rig = Effect.gen(function*() {
  const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
  const { port } = yield* hostProcess(files)
  const { url } = yield* freshUrl
  const link = yield* relay(new URL(url))
  const context = yield* Layer.build(controllerVia(port, link.url))
  const remote = yield* Effect.provide(Controller.RemoteLease, context)
  const leased = yield* remote.lease("cred-a-4f9c2e7b1d8a", me)
  return { files, port, url, link, remote, leased }
})

describe.skipIf(pgUrl === undefined)("a controller whose record store does not answer", () => {
  it.scopedLive("fails a start with StoreFailed and stops the job it started, so no job runs unrecorded", () =>
    Effect.gen(function*() {
      const { files, link, leased } = yield* rig
      link.cut()
      const marker = `sleep 37.${process.pid}`
      const failure = yield* Effect.flip(leased.start({ command: `${marker}; echo never` }))
      expect(failure._tag).toBe("StoreFailed")
      expect(failure.message).toContain("remote record save failed")
      expect(failure.message).toContain("was stopped")
      expect(commandLines()).not.toContain(marker)
      // and once the store answers again, nothing is recorded of it
      yield* link.restore
      expect(yield* leased.jobs).toEqual([])
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 60_000)

  it.scopedLive("answers jobs, knownHosts and polls of jobs it never looked up with StoreFailed, never an empty list or an unchecked generation", () =>
    Effect.gen(function*() {
      const { files, link, leased, port, remote } = yield* rig
      const job = yield* leased.start({ command: "echo recorded" })
      yield* leased.wait(job.pid, 10_000)
      link.cut()
      expect((yield* Effect.flip(leased.jobs))._tag).toBe("StoreFailed")
      expect((yield* Effect.flip(remote.knownHosts(me)))._tag).toBe("StoreFailed")
      // a pid this controller never looked up: no generation to check, so no read
      expect((yield* Effect.flip(leased.poll(job.pid + 1_000_000)))._tag).toBe("StoreFailed")
      yield* link.restore
      expect((yield* leased.jobs).map((j) => j.pid)).toEqual([job.pid])
      expect(yield* remote.knownHosts(me)).toEqual([
        { host: leased.host, address: `127.0.0.1:${port}`, seenAt: expect.any(Number), liveness: { state: "up", answeredAt: expect.any(Number) } }
      ])
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 60_000)

  it.scopedLive("records the exits it observed while the store was down once it answers again", () =>
    Effect.gen(function*() {
      const { files, link, leased, url } = yield* rig
      const jobs = yield* Effect.forEach([0, 1, 2], (i) => leased.start({ command: `sleep 1.5; exit ${i + 3}` }))
      // the waits are under way (their generations checked) when the store goes away; the exits come while it is away
      const waits = yield* Effect.fork(Effect.forEach(jobs, (j) => leased.wait(j.pid, 20_000), { concurrency: "unbounded" }))
      yield* Effect.sleep("500 millis")
      link.cut()
      const views = yield* waits.await.pipe(Effect.flatten)
      expect(views.map((v) => v.retention.exit_code)).toEqual([3, 4, 5])
      yield* link.restore
      // the next call that reaches the store writes what was kept
      yield* leased.jobs
      const store = yield* Effect.provide(RemoteRecords.RemoteRecords, yield* Layer.build(RemoteRecords.layerFor(url)))
      const recorded = yield* store.list({ owner: me.owner, channel: me.channel, host: leased.host })
      expect(recorded.map((r) => [r.pid, r.exitCode])).toEqual(jobs.map((j, i) => [j.pid, i + 3]))
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 60_000)
})

/** The output of a finished job from its second byte (offset 0 is the status view), read page after page by cursor, and by offset. */
const readAll = (leased: Controller.Leased, pid: number) =>
  Effect.gen(function*() {
    let byCursor = ""
    let page = yield* leased.poll(pid, { offset: 1, limit: 4_000 })
    for (;;) {
      if (page._tag !== "Page") return yield* Effect.dieMessage(`not a page: ${page._tag}`)
      byCursor += page.content
      if (!page.truncated || page.next_cursor === undefined) break
      page = yield* leased.poll(pid, { cursor: page.next_cursor, limit: 4_000 })
    }
    let byOffset = ""
    for (let offset = 1; ;) {
      const p = yield* leased.poll(pid, { offset, limit: 4_000 })
      if (p._tag !== "Page") return yield* Effect.dieMessage(`not a page: ${p._tag}`)
      byOffset += p.content
      if (!p.truncated) break
      offset = p.next_offset!
    }
    return { byCursor, byOffset }
  })

describe.skipIf(pgUrl === undefined)("a controller while its record store is down", () => {
  const lines = Array.from({ length: 3_000 }, (_, i) => `line ${i + 1} of the build`).join("\n") + "\n"

  it.scopedLive("serves polls, pages, waits and searches of the jobs it looked up, refuses a new start, and is consistent once the store is back", () =>
    Effect.gen(function*() {
      const { files, link, leased, url } = yield* rig
      const built = yield* leased.start({ command: "seq -f 'line %g of the build' 1 3000" })
      yield* leased.wait(built.pid, 10_000)
      const running = yield* leased.start({ command: "sleep 2; echo ready-now; sleep 1; exit 7" })
      link.cut()
      // polls and pages go on, each without waiting out the store's retries
      const started = Date.now()
      const status = yield* leased.poll(built.pid)
      expect(status._tag === "StatusView" && status.retention.exit_code).toBe(0)
      // half a second for the store, not its whole retry window
      expect(Date.now() - started).toBeLessThan(1_000)
      const { byCursor, byOffset } = yield* readAll(leased, built.pid)
      expect(byCursor).toBe(lines.slice(1))
      expect(byOffset).toBe(lines.slice(1))
      const found = yield* leased.search(built.pid, { pattern: "^line 2999 " })
      expect(found.matches.map((m) => m.text)).toEqual(["line 2999 of the build"])
      expect((yield* leased.status(built.pid)).exit_code).toBe(0)
      expect(Date.now() - started).toBeLessThan(5_000)
      // a wait on a job started before the outage sees its line and its end
      const ready = yield* leased.wait(running.pid, 10_000, "ready-now", 1)
      expect(ready.retention.wait).toMatchObject({ ended_by: "match" })
      const ended = yield* leased.wait(running.pid, 10_000)
      expect(ended.retention.exit_code).toBe(7)
      // what needs the store fails loudly: a new start (stopped on the host), the listing
      const refused = yield* Effect.flip(leased.start({ command: "echo never-recorded" }))
      expect(refused._tag).toBe("StoreFailed")
      expect((yield* Effect.flip(leased.jobs))._tag).toBe("StoreFailed")

      yield* link.restore
      expect((yield* leased.jobs).map((j) => j.pid)).toEqual([built.pid, running.pid])
      const store = yield* Effect.provide(RemoteRecords.RemoteRecords, yield* Layer.build(RemoteRecords.layerFor(url)))
      const recorded = yield* store.list({ owner: me.owner, channel: me.channel, host: leased.host })
      // the exit seen during the outage is recorded now
      expect(recorded.map((r) => [r.pid, r.exitCode])).toEqual([[built.pid, 0], [running.pid, 7]])
      const after = yield* readAll(leased, built.pid)
      expect(after.byCursor).toBe(lines.slice(1))
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 60_000)

  it.scopedLive("refuses reads through a revoked credential within a second, the store down", () =>
    Effect.gen(function*() {
      const { files, link, leased } = yield* rig
      const job = yield* leased.start({ command: "seq 1 5000; sleep 30" })
      yield* leased.wait(job.pid, 10_000, "^5000$", 1)
      link.cut()
      expect((yield* leased.poll(job.pid))._tag).toBe("StatusView")
      // a reader paging in a loop while the credential is removed
      const reading = yield* Effect.fork(Effect.gen(function*() {
        for (;;) {
          const outcome = yield* Effect.either(leased.poll(job.pid, { offset: 0, limit: 200 }))
          if (outcome._tag === "Left") return { error: outcome.left, at: Date.now() }
          yield* Effect.sleep("50 millis")
        }
      }))
      yield* Effect.sleep("300 millis")
      const revokedAt = Date.now()
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: {} }))
      const { at, error } = yield* Fiber.join(reading).pipe(Effect.timeout("5 seconds"))
      expect(error).toMatchObject({ _tag: "HostError", reason: "LeaseRefused" })
      expect(at - revokedAt).toBeLessThan(1_000)
      yield* leased.signal(job.pid, "SIGKILL").pipe(Effect.ignore)
      yield* link.restore
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 60_000)
})
