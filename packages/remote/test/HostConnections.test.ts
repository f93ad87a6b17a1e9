import { describe, expect, it } from "@effect/vitest"
import { Retention } from "@spillway/core"
import { Controller } from "@spillway/remote"
import { type Duration, Effect, Layer } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import { bin, hostFiles, hostProcess } from "./hosts.js"

const me = { owner: "agent-1", channel: "conversation-7" }
const credential = "cred-a-4f9c2e7b1d8a"

/** A controller's lease on a TCP port, with a short call timeout. */
const leaseOn = (port: number, callTimeout: Duration.DurationInput = "1 second", options: Omit<Controller.LayerOptions, "callTimeout"> = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Controller.layer({ callTimeout, ...options }).pipe(Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })))
    )
    return yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(context))
  })

/** A loopback TCP server that does `onConnection` with every socket, closed with the scope. */
const server = (onConnection: (socket: Net.Socket) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Net.Server; readonly port: number }>((resume) => {
      const s = Net.createServer((socket) => {
        socket.on("error", () => {})
        onConnection(socket)
      })
      s.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server: s, port: (s.address() as Net.AddressInfo).port })))
    }),
    ({ server }) => Effect.sync(() => server.close())
  )

/** A port nothing listens on. */
const closedPort = Effect.map(Effect.scoped(server(() => {})), ({ port }) => port)

/** A controller on a port where `onConnection` answers: the error a lease ends with. */
const leaseFails = (port: number) =>
  Effect.flip(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      Controller.layer({ callTimeout: "1 second" }).pipe(Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })))
    )
    return yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(context))
  })))

describe("a wait longer than a call", () => {
  it.scopedLive("ends on a line printed after several call timeouts, the host healthy", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const { port } = yield* hostProcess(files)
      const leased = yield* leaseOn(port, "1 second")
      const job = yield* leased.start({ command: "sleep 3.5; echo ready-at-last; sleep 30" })
      const started = Date.now()
      const view = (yield* leased.wait(job.pid, 8_000, "ready-at-last")) as { readonly retention: { readonly wait?: Record<string, unknown> } }
      expect(view.retention.wait).toMatchObject({ ended_by: "match", match: { text: "ready-at-last" } })
      expect(Date.now() - started).toBeGreaterThan(3_000)
      // a call that is not a wait still has only the call timeout
      yield* leased.signal(job.pid, "SIGKILL")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

describe("connection failures", () => {
  it.scopedLive("a closed port is HostUnreachable, refused, naming the address", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const e = yield* leaseFails(port)
      expect(e).toMatchObject({ _tag: "HostUnreachable", reason: "refused", address: `127.0.0.1:${port}` })
      expect(e.message).toContain(`the host at 127.0.0.1:${port} could not be reached (refused)`)
      expect(e.message).not.toMatch(/could not be reached.*could not be reached/)
      // a connection never made: the call did not run
      expect(e.message).toContain("the call was not done")
    }), 20_000)

  it.scopedLive("a server that resets the connection is HostUnreachable, reset", () =>
    Effect.gen(function*() {
      const { port } = yield* server((socket) => socket.once("data", () => socket.resetAndDestroy()))
      const e = yield* leaseFails(port)
      expect(e).toMatchObject({ _tag: "HostUnreachable", reason: "reset", address: `127.0.0.1:${port}` })
    }), 20_000)

  it.scopedLive("a server that never answers is HostUnreachable, timeout, within the call timeout", () =>
    Effect.gen(function*() {
      const { port } = yield* server(() => {})
      const started = Date.now()
      const e = yield* leaseFails(port)
      expect(e).toMatchObject({ _tag: "HostUnreachable", reason: "timeout", address: `127.0.0.1:${port}` })
      expect(Date.now() - started).toBeLessThan(5_000)
      // no answer in time: the host may have run it, so the words never say it did not
      expect(e.message).toContain("may have been done on the host")
      expect(e.message).not.toContain("was not done")
    }), 20_000)

  it.scopedLive("a host killed mid-call fails the call as HostUnreachable, and later calls at once, until it is back", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const first = yield* hostProcess(files)
      const leased = yield* leaseOn(first.port, "5 seconds")
      const job = yield* leased.start({ command: "echo before; sleep 60" })
      const waiting = yield* Effect.fork(Effect.flip(leased.wait(job.pid, 20_000, "never-printed")))
      yield* Effect.sleep("300 millis")
      first.host.kill("SIGKILL")
      const killed = yield* waiting.await
      // a typed failure, never a defect
      expect(killed._tag).toBe("Success")
      const inFlight = killed._tag === "Success" ? killed.value : undefined
      expect(inFlight).toMatchObject({ _tag: "HostUnreachable", address: `127.0.0.1:${first.port}` })
      expect(["closed", "reset"]).toContain((inFlight as Controller.HostUnreachable).reason)
      // the next call fails within a second, without waiting for the call timeout
      const started = Date.now()
      const next = yield* Effect.flip(leased.poll(job.pid))
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(next).toMatchObject({ _tag: "HostUnreachable" })
      expect(["closed", "refused", "reset"]).toContain((next as Controller.HostUnreachable).reason)
      // the host comes back on its port: a later call reconnects and reads the job, now read-only there
      const again = yield* hostProcess(files, "--listen", [], first.port)
      const view = yield* leased.poll(job.pid).pipe(Effect.tapError(() => Effect.sleep("250 millis")), Effect.retry({ times: 40 }))
      expect(JSON.stringify(view)).toContain("before")
      again.host.kill("SIGTERM")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 40_000)
})

describe("a revoked credential", () => {
  it.scopedLive("refuses a wait in flight and every later call with the same LeaseRefused", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const { port } = yield* hostProcess(files)
      const leased = yield* leaseOn(port, "5 seconds")
      const job = yield* leased.start({ command: "sleep 30" })
      const waiting = yield* Effect.fork(Effect.flip(leased.wait(job.pid, 10_000, "never-printed")))
      yield* Effect.sleep("300 millis")
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: {} }))
      const inFlight = yield* waiting.await.pipe(Effect.flatten)
      const later = yield* Effect.flip(leased.poll(job.pid))
      for (const e of [inFlight, later]) {
        expect(e).toMatchObject({ _tag: "HostError", reason: "LeaseRefused" })
        expect(e.message).toContain("lease refused (revoked)")
      }
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 20_000)
})

describe("sizing", () => {
  it.scopedLive("400 short jobs on a host with a small pool all keep their output, and every reservation comes back", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const { port } = yield* hostProcess(files, "--listen", ["--spool-pool", "2M"])
      const quota = Retention.make({ spool: { bytes: 8 * 4 * 1024 * 1024 } })
      const context = yield* Layer.build(
        Controller.layer({ callTimeout: "20 seconds" }).pipe(
          Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })),
          Layer.provide(Layer.succeed(Retention.Retention, quota))
        )
      )
      const leased = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(context))
      // 8 at once under a quota of 8 reservations: 400 starts go through only if each comes back at its job's end
      const seen = yield* Effect.forEach(Array.from({ length: 400 }, (_, i) => i), (i) =>
        Effect.gen(function*() {
          const job = yield* leased.start({ command: `printf 'job-${i}-%0200d\\n' 0` })
          const view = yield* leased.wait(job.pid, 10_000)
          return view.output.includes(`job-${i}-`) ? 1 : 0
        }), { concurrency: 8 })
      expect(seen.reduce((a: number, b: number) => a + b, 0)).toBe(400)
      expect(quota.usage("spool")).toMatchObject({ reserved: 0 })
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 120_000)

  it.scopedLive("a host's pool is what --spool-pool says: past it, a job keeps nothing and says so", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const { port } = yield* hostProcess(files, "--listen", ["--spool-pool", "64K"])
      const leased = yield* leaseOn(port, "10 seconds")
      const views = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) =>
        Effect.gen(function*() {
          const job = yield* leased.start({ command: `printf 'kept-${i}-%08000d\n' 0` })
          const { retention } = (yield* leased.wait(job.pid, 10_000)) as unknown as {
            readonly retention: { readonly retained_bytes: number; readonly capture_error?: string }
          }
          return retention
        }))
      expect(views[0]!.retained_bytes).toBe(8008)
      // 64 KiB hold 8 such outputs; the last ones keep nothing, and their status says why
      expect(views.at(-1)!.retained_bytes).toBe(0)
      expect(views.at(-1)!.capture_error).toContain("the 65536-byte spool retention quota is used up")
      const bad = ChildProcess.spawnSync(process.execPath, [bin, "host", "--listen", "0", "--dir", files.directory, "--credentials", files.credentials, "--spool-pool", "12Q"], { encoding: "utf8" })
      expect(bad.status).toBe(2)
      expect(bad.stderr).toContain("--spool-pool expects a size such as 512M or 2G")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("the private quota admits as many starts as it is told", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const { port } = yield* hostProcess(files)
      const leased = yield* leaseOn(port, "5 seconds", { reservation: { bytesPerStart: 1024, maxStarts: 2 } })
      const a = yield* leased.start({ command: "sleep 30" })
      const b = yield* leased.start({ command: "sleep 30" })
      const refused = yield* Effect.flip(leased.start({ command: "true" }))
      expect(refused._tag).toBe("QuotaExceeded")
      // a job that ends gives its reservation back
      yield* leased.signal(a.pid, "SIGKILL")
      yield* leased.wait(a.pid, 5_000)
      const c = yield* leased.start({ command: "true" })
      yield* leased.signal(b.pid, "SIGKILL")
      yield* leased.wait(c.pid, 5_000)
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 20_000)
})
