import { describe, expect, it } from "@effect/vitest"
import { Controller, HostHealth } from "@spillway/remote"
import { Effect, Layer, TestClock } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import { hostFiles, hostProcess } from "./hosts.js"

const me = { owner: "agent-1", channel: "conversation-7" }
const credential = "cred-a-4f9c2e7b1d8a"

/** Quick pings, so a test sees a change within seconds. */
const quick: HostHealth.Options = { pingEvery: "300 millis", pingTimeout: "1 second", upFor: "3 seconds" }

/** Controllers of the given TCP ports sharing one view of hosts: each port's capability, leased as `me`. */
const controllerOf = (ports: ReadonlyArray<number>, options: HostHealth.Options = quick) =>
  Effect.gen(function*() {
    const health = yield* Layer.build(HostHealth.layer(options))
    return yield* Effect.forEach(ports, (port) =>
      Effect.gen(function*() {
        const context = yield* Layer.build(
          Controller.layer({ callTimeout: "5 seconds" }).pipe(
            Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })),
            Layer.provide(Layer.succeedContext(health))
          )
        )
        const remote = yield* Effect.provide(Controller.RemoteLease, context)
        const leased = yield* remote.lease(credential, me)
        return { remote, leased, port }
      }))
  })

/** Asks `f` every 100 ms until it holds, for at most `millis`; how long that took. */
const within = <A>(millis: number, probe: Effect.Effect<A>, holds: (a: A) => boolean) =>
  Effect.gen(function*() {
    const started = Date.now()
    for (;;) {
      const a = yield* probe
      if (holds(a)) return { value: a, took: Date.now() - started }
      if (Date.now() - started > millis) return yield* Effect.dieMessage(`not within ${millis} ms: ${JSON.stringify(a)}`)
      yield* Effect.sleep("100 millis")
    }
  })

/** A TCP relay in front of a port that can be frozen (bytes held, the connections left open) and counts the leases asked for through it. */
const freezer = (port: number) =>
  Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly freeze: () => void; readonly thaw: () => void; readonly leases: () => number; readonly close: () => void }>((resume) => {
      let frozen = false
      let leases = 0
      const pairs = new Set<readonly [Net.Socket, Net.Socket]>()
      const server = Net.createServer((inbound) => {
        const outbound = Net.connect(port, "127.0.0.1")
        const pair = [inbound, outbound] as const
        pairs.add(pair)
        for (const s of pair) {
          s.on("error", () => {})
          s.on("close", () => {
            pairs.delete(pair)
            inbound.destroy()
            outbound.destroy()
          })
        }
        inbound.on("data", (d: Buffer) => {
          leases += (d.toString("utf8").match(/"tag":"Lease"/g) ?? []).length
          if (!frozen) outbound.write(d)
        })
        outbound.on("data", (d: Buffer) => {
          if (!frozen) inbound.write(d)
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          port: (server.address() as Net.AddressInfo).port,
          freeze: () => void (frozen = true),
          thaw: () => void (frozen = false),
          leases: () => leases,
          close: () => {
            server.close()
            for (const [a, b] of pairs) {
              a.destroy()
              b.destroy()
            }
          }
        })))
    }),
    ({ close }) => Effect.sync(close)
  )

describe("a controller's view of its hosts", () => {
  it.scopedLive("a host killed reads unreachable within two seconds, and up again once it is back on its port", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const first = yield* hostProcess(files)
      const [{ leased, remote }] = yield* controllerOf([first.port])
      const job = yield* leased.start({ command: "echo on-host" })
      yield* leased.wait(job.pid, 10_000)
      const address = `127.0.0.1:${first.port}`
      expect(yield* remote.hosts).toEqual([{ address, host: leased.host, liveness: { state: "up", answeredAt: expect.any(Number) } }])
      expect((yield* remote.knownHosts(me)).map((h) => [h.host, h.liveness.state])).toEqual([[leased.host, "up"]])

      const killedAt = Date.now()
      first.host.kill("SIGKILL")
      // no call is made: the ping finds out
      const down = yield* within(5_000, remote.hosts, (hosts) => hosts[0]?.liveness.state === "unreachable")
      expect(down.took).toBeLessThan(2_000)
      const liveness = down.value[0]!.liveness
      expect(liveness).toMatchObject({ state: "unreachable", since: expect.any(Number), detail: expect.any(String) })
      expect(["closed", "reset", "refused"]).toContain(liveness.state === "unreachable" ? liveness.reason : "")
      expect(liveness.state === "unreachable" && liveness.since).toBeGreaterThanOrEqual(killedAt)
      expect((yield* remote.knownHosts(me))[0]!.liveness.state).toBe("unreachable")
      // a call made meanwhile fails as it always did, and the state stays, since when unchanged
      expect((yield* Effect.flip(leased.poll(job.pid)))._tag).toBe("HostUnreachable")
      expect((yield* remote.hosts)[0]!.liveness).toMatchObject({ state: "unreachable", since: liveness.state === "unreachable" ? liveness.since : 0 })

      const again = yield* hostProcess(files, "--listen", [], first.port)
      // the connection is opened again with backoff (at most 5 s between tries), then a ping answers
      const up = yield* within(12_000, remote.hosts, (hosts) => hosts[0]?.liveness.state === "up")
      expect(up.value[0]!.host).toBe(leased.host)
      const view = yield* leased.poll(job.pid)
      expect(JSON.stringify(view)).toContain("on-host")
      again.host.kill("SIGTERM")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 40_000)

  it.scopedLive("a host that stops answering reads unreachable (timeout), with one ping in flight at a time, and up once it answers", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const { port } = yield* hostProcess(files)
      const relay = yield* freezer(port)
      const [{ remote }] = yield* controllerOf([relay.port], { pingEvery: "100 millis", pingTimeout: "1 second", upFor: "3 seconds" })
      expect((yield* remote.hosts)[0]!.liveness.state).toBe("up")
      // idle: pinged about every 100 ms
      yield* Effect.sleep("1 second")
      expect(relay.leases()).toBeGreaterThanOrEqual(4)
      relay.freeze()
      const before = relay.leases()
      const down = yield* within(4_000, remote.hosts, (hosts) => hosts[0]?.liveness.state === "unreachable")
      expect(down.value[0]!.liveness).toMatchObject({ state: "unreachable", reason: "timeout" })
      expect(down.took).toBeLessThan(2_500)
      yield* Effect.sleep("2 seconds")
      // each ping waits out its second before the next: no storm against a host that does not answer
      expect(relay.leases() - before).toBeLessThanOrEqual(5)
      relay.thaw()
      yield* within(5_000, remote.hosts, (hosts) => hosts[0]?.liveness.state === "up")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 40_000)

  it.scopedLive("one view lists every host of the controller, one up and one down, and a host never dialled reads unknown", () =>
    Effect.gen(function*() {
      const a = hostFiles({ [credential]: "team-a" })
      const b = hostFiles({ [credential]: "team-b" })
      const hostA = yield* hostProcess(a)
      const hostB = yield* hostProcess(b)
      const [one, two] = yield* controllerOf([hostA.port, hostB.port])
      yield* one!.leased.start({ command: "true" })
      yield* two!.leased.start({ command: "true" })
      hostB.host.kill("SIGKILL")
      const seen = yield* within(5_000, one!.remote.hosts, (hosts) => hosts.some((h) => h.liveness.state === "unreachable"))
      expect(seen.value.map((h) => [h.address, h.host, h.liveness.state])).toEqual([
        [`127.0.0.1:${hostA.port}`, one!.leased.host, "up"],
        [`127.0.0.1:${hostB.port}`, two!.leased.host, "unreachable"]
      ].sort((x, y) => (x[0]! < y[0]! ? -1 : 1)))
      // a controller with a view of its own, on another host, knows nothing of these
      const health = yield* Effect.provide(HostHealth.HostHealth, yield* Layer.build(HostHealth.layer()))
      expect(yield* health.liveness(one!.leased.host)).toEqual({ state: "unknown" })
      Fs.rmSync(a.root, { recursive: true, force: true })
      Fs.rmSync(b.root, { recursive: true, force: true })
    }), 40_000)
})

describe("a host's state over time", () => {
  it.scoped("up while an answer is recent, unknown once it is older than upFor, unreachable from a failure to the next answer", () =>
    Effect.gen(function*() {
      const health = yield* HostHealth.make({ upFor: "10 seconds" })
      const connection = yield* health.connect("10.0.0.7:7400")
      expect(yield* health.liveness("h1", "10.0.0.7:7400")).toEqual({ state: "unknown" })
      connection.identified("h1")
      yield* connection.answered
      expect(yield* health.liveness("h1")).toEqual({ state: "up", answeredAt: 0 })
      yield* TestClock.adjust("10001 millis")
      expect(yield* health.liveness("h1")).toEqual({ state: "unknown", answeredAt: 0 })
      yield* connection.failed({ reason: "refused", detail: "connect ECONNREFUSED" })
      yield* TestClock.adjust("3 seconds")
      yield* connection.failed({ reason: "timeout", detail: "no answer" })
      // since the first failure, with the newest cause
      expect(yield* health.liveness("h1")).toEqual({ state: "unreachable", reason: "timeout", detail: "no answer", since: 10_001, answeredAt: 0 })
      yield* connection.answered
      expect(yield* health.liveness("h1")).toEqual({ state: "up", answeredAt: 13_001 })
      expect((yield* health.hosts).map((h) => [h.address, h.host])).toEqual([["10.0.0.7:7400", "h1"]])
    }))

  it.scoped("forgets a connection once its scope closes", () =>
    Effect.gen(function*() {
      const health = yield* HostHealth.make()
      yield* Effect.scoped(Effect.flatMap(health.connect("10.0.0.8:7400"), (c) => c.answered))
      expect(yield* health.hosts).toEqual([])
    }))
})
