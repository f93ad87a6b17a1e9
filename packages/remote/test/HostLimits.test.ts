import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as Fs from "node:fs"
import { hostFiles, hostProcess, pour, rawTcp, rawWs, rssMiB, controllerOn, peakWhile } from "./hosts.js"

type View = { readonly output: string }

/** Waits until `pid`'s resident memory is under `limit` MiB, or `seconds` pass; the last reading. */
const settlesUnder = (pid: number, limit: number, seconds: number) =>
  Effect.gen(function*() {
    let rss = rssMiB(pid)
    for (let i = 0; i < seconds * 10 && rss >= limit; i++) {
      yield* Effect.sleep("100 millis")
      rss = rssMiB(pid)
    }
    return rss
  })

/** The stated bounds: the host's resident memory under a flood, and after it, above what it used before. */
const FLOOD_PEAK_MIB = 128
const AFTER_FLOOD_MIB = 64

describe("a host before authentication", () => {
  it.scopedLive("40 TCP connections each sending 15 MiB without a newline: each is closed with its reason, an authenticated client is served, memory stays bounded", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { host, port } = yield* hostProcess(files)
      const leased = yield* controllerOn(port, "tcp", "cred-a-4f9c2e7b1d8a")
      const warm = yield* leased.start({ command: "echo warm" })
      yield* leased.wait(warm.pid, 10_000)
      const idle = rssMiB(host.pid!)
      const chunk = Buffer.alloc(64 * 1024, 0x61)
      const { peak, result } = yield* peakWhile(host.pid!, Effect.gen(function*() {
        const flood = Array.from({ length: 40 }, () => rawTcp(port))
        const poured = Promise.all(flood.map(async (c) => {
          await c.connected
          await pour(c.socket, chunk, 15 * 1024 * 1024)
          await c.seen.ended
        }))
        // meanwhile, the authenticated client starts a job and waits for it
        const job = yield* leased.start({ command: "echo served during the flood" })
        const view = (yield* leased.wait(job.pid, 10_000)) as View
        yield* Effect.promise(() => poured)
        return { view, flood }
      }))
      expect(result.view.output).toBe("served during the flood\n")
      for (const c of result.flood) {
        expect(c.seen.lines.join("\n")).toMatch(/the host closed the connection: (a frame is longer than 1048576 bytes|it had not authenticated when newer connections came)/)
      }
      const settled = yield* settlesUnder(host.pid!, idle + AFTER_FLOOD_MIB, 10)
      expect(peak).toBeLessThan(idle + FLOOD_PEAK_MIB)
      expect(settled).toBeLessThan(idle + AFTER_FLOOD_MIB)
      // still serving
      const after = yield* leased.start({ command: "echo after" })
      expect(((yield* leased.wait(after.pid, 10_000)) as View).output).toBe("after\n")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 120_000)

  it.scopedLive("30 WebSocket connections each sending one 99 MiB frame: each is closed (1009), an authenticated client is served, memory stays bounded", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { host, port } = yield* hostProcess(files, "--listen-ws")
      const leased = yield* controllerOn(port, "ws", "cred-a-4f9c2e7b1d8a")
      const warm = yield* leased.start({ command: "echo warm" })
      yield* leased.wait(warm.pid, 10_000)
      const idle = rssMiB(host.pid!)
      const chunk = Buffer.alloc(64 * 1024, 0x61)
      const size = 99 * 1024 * 1024
      const { peak, result } = yield* peakWhile(host.pid!, Effect.gen(function*() {
        const flood = Array.from({ length: 30 }, () => rawWs(port))
        const poured = Promise.all(flood.map(async (c) => {
          if (!(await c.upgrade)) return
          c.socket.write(c.header(size))
          await pour(c.socket, chunk, size)
          await c.seen.ended
        }))
        const job = yield* leased.start({ command: "echo served during the flood" })
        const view = (yield* leased.wait(job.pid, 10_000)) as View
        yield* Effect.promise(() => poured)
        return { view, flood }
      }))
      expect(result.view.output).toBe("served during the flood\n")
      for (const c of result.flood) expect(c.seen.close?.code).toBe(1009)
      const settled = yield* settlesUnder(host.pid!, idle + AFTER_FLOOD_MIB, 10)
      expect(peak).toBeLessThan(idle + FLOOD_PEAK_MIB)
      expect(settled).toBeLessThan(idle + AFTER_FLOOD_MIB)
      const after = yield* leased.start({ command: "echo after" })
      expect(((yield* leased.wait(after.pid, 10_000)) as View).output).toBe("after\n")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 120_000)
})

/** A Lease request as the RPC client frames it. */
const leaseFrame = (id: number, credential: string) =>
  `${JSON.stringify({ _tag: "Request", id: String(id), tag: "Lease", payload: { credential, owner: "raw", channel: "raw" }, headers: [] })}\n`

describe("a host's connection limits", () => {
  it.scopedLive("closes a connection that does not authenticate in time, with its reason, on TCP and WebSocket", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const tcp = yield* hostProcess(files, "--listen", ["--handshake-timeout", "1"])
      const silent = rawTcp(tcp.port)
      // a wrong credential is answered, and is not authentication
      silent.socket.write(leaseFrame(1, "wrong"))
      yield* Effect.promise(() => silent.seen.ended)
      expect(silent.seen.lines[0]).toContain("does not know that credential")
      expect(silent.seen.lines.at(-1)).toContain("the host closed the connection: no credential or lease within 1 s")

      const files2 = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const ws = yield* hostProcess(files2, "--listen-ws", ["--handshake-timeout", "1"])
      const quiet = rawWs(ws.port)
      expect(yield* Effect.promise(() => quiet.upgrade)).toBe(true)
      yield* Effect.promise(() => quiet.seen.ended)
      expect(quiet.seen.close).toEqual({ code: 1008, reason: "no credential or lease within 1 s" })
      // authenticated in time, a connection stays
      const shown = rawTcp(tcp.port)
      shown.socket.write(leaseFrame(1, "cred-a-4f9c2e7b1d8a"))
      yield* Effect.sleep("2 seconds")
      expect(shown.socket.destroyed).toBe(false)
      expect(shown.seen.lines[0]).toContain(`"_tag":"Exit"`)
      shown.socket.destroy()
      Fs.rmSync(files.root, { recursive: true, force: true })
      Fs.rmSync(files2.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("past the unauthenticated limit, closes the oldest waiting connection to make room; authenticated ones never count", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { port } = yield* hostProcess(files, "--listen", ["--max-unauthenticated", "3"])
      const waiting = Array.from({ length: 3 }, () => rawTcp(port))
      yield* Effect.promise(() => Promise.all(waiting.map((c) => c.connected)))
      yield* Effect.sleep("200 millis")
      const fourth = rawTcp(port)
      yield* Effect.promise(() => waiting[0]!.seen.ended)
      expect(waiting[0]!.seen.lines.join("\n")).toContain("the host closed the connection: it had not authenticated when newer connections came (3 may wait at once)")
      expect(fourth.socket.destroyed).toBe(false)
      // one of them authenticates: it is never pushed out, however many come after
      waiting[1]!.socket.write(leaseFrame(1, "cred-a-4f9c2e7b1d8a"))
      yield* Effect.sleep("500 millis")
      expect(waiting[1]!.seen.lines[0]).toContain(`"_tag":"Exit"`)
      const later = Array.from({ length: 6 }, () => rawTcp(port))
      yield* Effect.promise(() => Promise.all([waiting[2]!.seen.ended, fourth.seen.ended, later[0]!.seen.ended, later[1]!.seen.ended, later[2]!.seen.ended]))
      expect(waiting[1]!.socket.destroyed).toBe(false)
      waiting[1]!.socket.write(leaseFrame(2, "cred-a-4f9c2e7b1d8a"))
      yield* Effect.sleep("300 millis")
      expect(waiting[1]!.seen.lines[1]).toContain(`"_tag":"Exit"`)
      for (const c of [...waiting, fourth, ...later]) c.socket.destroy()

      const files2 = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const ws = yield* hostProcess(files2, "--listen-ws", ["--max-unauthenticated", "1"])
      const first = rawWs(ws.port)
      expect(yield* Effect.promise(() => first.upgrade)).toBe(true)
      const second = rawWs(ws.port)
      expect(yield* Effect.promise(() => second.upgrade)).toBe(true)
      yield* Effect.promise(() => first.seen.ended)
      expect(first.seen.close?.code).toBe(1013)
      expect(first.seen.lines.join("")).toContain("it had not authenticated when newer connections came (1 may wait at once)")
      second.socket.destroy()
      Fs.rmSync(files.root, { recursive: true, force: true })
      Fs.rmSync(files2.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("closes an authenticated connection left idle, with its reason", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { port } = yield* hostProcess(files, "--listen", ["--idle-timeout", "1"])
      const c = rawTcp(port)
      c.socket.write(leaseFrame(1, "cred-a-4f9c2e7b1d8a"))
      yield* Effect.promise(() => c.seen.ended)
      expect(c.seen.lines[0]).toContain(`"_tag":"Exit"`)
      expect(c.seen.lines.at(-1)).toContain("the host closed the connection: idle for 1 s")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("closes a connection that sends a frame that is not JSON or not a frame, with its reason", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { port } = yield* hostProcess(files, "--listen", ["--max-frame-bytes", "4096"])
      for (const [frame, reason] of [
        ["{not json\n", "a frame is not JSON"],
        ["[1,2,3]\n", "malformed frame: a frame must be a JSON object"],
        [`${JSON.stringify({ _tag: "Request", id: "abc", tag: "Lease", payload: {}, headers: [] })}\n`, "malformed frame: Request needs a numeric id string"],
        [`${JSON.stringify({ _tag: "Request", id: "1", tag: "Nope", payload: {}, headers: [] })}\n`, "malformed frame: Request needs the name of a call: one of Lease, Start"],
        [`${"x".repeat(5000)}\n`, "a frame is longer than 4096 bytes"]
      ] as const) {
        const c = rawTcp(port)
        c.socket.write(frame)
        yield* Effect.promise(() => c.seen.ended)
        expect(c.seen.lines.at(-1)).toContain(`the host closed the connection: ${reason}`)
      }
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

/** Frames a hostile client might send: bytes, JSON of any shape, frame-shaped JSON with wrong parts, frames over the limit. */
const hostileFrames = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.from(b)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(`${JSON.stringify(v)}\n`)),
  fc.record({
    _tag: fc.constantFrom("Request", "Ack", "Interrupt", "Eof", "Ping", "Exit", "x"),
    id: fc.oneof(fc.stringMatching(/^\d{1,30}$/), fc.jsonValue()),
    requestId: fc.oneof(fc.stringMatching(/^\d{1,5}$/), fc.jsonValue()),
    tag: fc.constantFrom("Lease", "Start", "Poll", "Wait", "Stdin", "Signal", "Status", "Delete", "Nope", ""),
    payload: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ lease: fc.string(), pid: fc.oneof(fc.integer(), fc.double()), credential: fc.string(), owner: fc.string(), channel: fc.string(), pattern: fc.string(), timeoutMillis: fc.integer() }, { requiredKeys: [] })
    ),
    headers: fc.oneof(fc.constant([]), fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 3 }), fc.jsonValue())
  }, { requiredKeys: ["_tag"] }).map((v) => Buffer.from(`${JSON.stringify(v)}\n`)),
  fc.integer({ min: 70_000, max: 300_000 }).map((n) => Buffer.from(`{"_tag":"Ping","pad":"${"p".repeat(n)}"}\n`))
)

describe("a host's frame decoder under fuzzing", () => {
  it.scopedLive("answers or closes with a reason every connection sending random frames, over TCP and WebSocket, and stays up", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const limits = ["--handshake-timeout", "2", "--max-frame-bytes", "65536"]
      const tcp = yield* hostProcess(files, "--listen", limits)
      const files2 = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const ws = yield* hostProcess(files2, "--listen-ws", limits)
      const cases = fc.sample(fc.array(hostileFrames, { minLength: 1, maxLength: 3 }), { numRuns: 120 })
      for (let start = 0; start < cases.length; start += 24) {
        const batch = cases.slice(start, start + 24)
        const results = yield* Effect.promise(() => Promise.all(batch.map(async (frames, k) => {
          if (k % 2 === 0) {
            const c = rawTcp(tcp.port)
            await c.connected
            for (const f of frames) c.socket.write(f)
            await c.seen.ended
            return { transport: "tcp" as const, seen: c.seen, frames }
          }
          const c = rawWs(ws.port)
          if (await c.upgrade) for (const f of frames) c.sendText(f.toString("latin1"))
          await c.seen.ended
          return { transport: "ws" as const, seen: c.seen, frames }
        })))
        for (const r of results) {
          const context = `${r.transport} ${JSON.stringify(r.frames.map((f) => f.subarray(0, 80).toString("latin1")))}`
          for (const line of r.seen.lines) expect(() => JSON.parse(line), context).not.toThrow()
          if (r.transport === "tcp") {
            const last = JSON.parse(r.seen.lines.at(-1) ?? "null") as { _tag?: string; defect?: string } | null
            expect(last?._tag, context).toBe("Defect")
            expect(last?.defect, context).toMatch(/^the host (closed|refused) the connection: /)
          } else {
            expect(r.seen.close?.code, context).toBeGreaterThanOrEqual(1000)
          }
        }
      }
      expect(tcp.host.exitCode).toBe(null)
      expect(ws.host.exitCode).toBe(null)
      for (const [port, transport] of [[tcp.port, "tcp"], [ws.port, "ws"]] as const) {
        const leased = yield* controllerOn(port, transport, "cred-a-4f9c2e7b1d8a")
        const job = yield* leased.start({ command: "echo still up" })
        expect(((yield* leased.wait(job.pid, 10_000)) as View).output).toBe("still up\n")
      }
      Fs.rmSync(files.root, { recursive: true, force: true })
      Fs.rmSync(files2.root, { recursive: true, force: true })
    }), 120_000)
})
