import { describe, expect, it } from "@effect/vitest"
import { Controller, RemoteRecords } from "@spillway/remote"
import { Effect, Layer } from "effect"
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

  it.scopedLive("answers jobs, knownHosts and polls with StoreFailed, never an empty list or an unchecked generation", () =>
    Effect.gen(function*() {
      const { files, link, leased, port, remote } = yield* rig
      const job = yield* leased.start({ command: "echo recorded" })
      yield* leased.wait(job.pid, 10_000)
      link.cut()
      expect((yield* Effect.flip(leased.jobs))._tag).toBe("StoreFailed")
      expect((yield* Effect.flip(remote.knownHosts(me)))._tag).toBe("StoreFailed")
      expect((yield* Effect.flip(leased.poll(job.pid)))._tag).toBe("StoreFailed")
      yield* link.restore
      expect((yield* leased.jobs).map((j) => j.pid)).toEqual([job.pid])
      expect(yield* remote.knownHosts(me)).toEqual([{ host: leased.host, address: `127.0.0.1:${port}`, seenAt: expect.any(Number) }])
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
