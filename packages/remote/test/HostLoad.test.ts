import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { bin, hostFiles, hostProcess, rawTcp, rawWs, rssMiB, controllerOn, peakWhile } from "./hosts.js"

type View = { readonly output: string }

/** File descriptors a process holds open. */
const openFiles = (pid: number): number => Fs.readdirSync(`/proc/${pid}/fd`).length

/** Polls until `check` holds or `seconds` pass; whether it held. */
const eventually = (check: () => boolean, seconds: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < seconds * 20; i++) {
      if (check()) return true
      yield* Effect.sleep("50 millis")
    }
    return check()
  })

/**
 * `count` connections that say nothing, and `half` more that send half a
 * frame (a Lease request with no end on TCP; a WebSocket frame that
 * declares 1,000 bytes and sends 10), opened 100 at a time and held.
 */
const flood = (port: number, transport: "tcp" | "ws", count: number, half: number) =>
  Effect.promise(async () => {
    const held: Array<{ readonly socket: Net.Socket; readonly ended: Promise<void> }> = []
    for (let start = 0; start < count + half; start += 100) {
      const batch = await Promise.all(Array.from({ length: Math.min(100, count + half - start) }, async (_, k) => {
        const halfFrame = start + k >= count
        if (transport === "ws" && halfFrame) {
          const c = rawWs(port)
          if (await c.upgrade) {
            c.socket.write(c.header(1000))
            c.socket.write(Buffer.alloc(10, 0x61))
          }
          return { socket: c.socket, ended: c.seen.ended }
        }
        const c = rawTcp(port)
        await Promise.race([c.connected, c.seen.ended])
        if (halfFrame) c.socket.write(`{"_tag":"Request","id":"1","tag":"Lease","payload":{"credential":"`)
        return { socket: c.socket, ended: c.seen.ended }
      }))
      held.push(...batch)
    }
    return held
  })

describe("a host under unauthenticated load", () => {
  for (const transport of ["tcp", "ws"] as const) {
    it.scopedLive(`${transport}: with 1,000 idle connections and 100 half frames held, a controller with a credential leases and runs a job within 5 s; memory and descriptors stay bounded, and every connection is closed at the end`, () =>
      Effect.gen(function*() {
        const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
        const { host, port } = yield* hostProcess(files, transport === "tcp" ? "--listen" : "--listen-ws")
        const pid = host.pid!
        // warm: one controller has come and gone
        const warm = yield* Effect.scoped(Effect.gen(function*() {
          const leased = yield* controllerOn(port, transport, "cred-a-4f9c2e7b1d8a")
          return (yield* leased.wait((yield* leased.start({ command: "echo warm" })).pid, 10_000)) as View
        }))
        expect(warm.output).toBe("warm\n")
        const idle = rssMiB(pid)
        const files0 = openFiles(pid)
        const { peak, result } = yield* peakWhile(pid, Effect.gen(function*() {
          const held = yield* flood(port, transport, 1000, 100)
          const started = Date.now()
          const view = yield* Effect.scoped(Effect.gen(function*() {
            const leased = yield* controllerOn(port, transport, "cred-a-4f9c2e7b1d8a")
            const job = yield* leased.start({ command: "echo served under load" })
            return (yield* leased.wait(job.pid, 10_000)) as View
          }))
          return { held, view, took: Date.now() - started }
        }))
        expect(result.view.output).toBe("served under load\n")
        expect(result.took).toBeLessThan(5000)
        // the host keeps 32 waiting: it closed the rest to make room, oldest first
        let closed = 0
        for (const c of result.held) void c.ended.then(() => closed++)
        expect(yield* eventually(() => closed >= 1100 - 32, 10)).toBe(true)
        expect(peak).toBeLessThan(idle + 64)
        // the rest go when their handshake time is over, or when the client leaves: here, now
        for (const c of result.held) c.socket.destroy()
        expect(yield* eventually(() => openFiles(pid) <= files0 + 2, 10)).toBe(true)
        expect(host.exitCode).toBe(null)
        Fs.rmSync(files.root, { recursive: true, force: true })
      }), 60_000)
  }
})

/** Frames of the host's calls, as the RPC client writes them. */
const frame = (id: number, tag: string, payload: unknown) => `${JSON.stringify({ _tag: "Request", id: String(id), tag, payload, headers: [] })}\n`

/** A raw connection's replies by request id, as they arrive. */
const replies = (lines: Array<string>) => {
  const byId = new Map<string, { readonly _tag: string; readonly value?: any; readonly error?: any }>()
  for (const line of lines) {
    const reply = JSON.parse(line) as { _tag: string; requestId?: string; exit?: { _tag: string; value?: unknown; cause?: { error?: unknown } } }
    if (reply._tag === "Exit" && reply.requestId !== undefined) {
      byId.set(reply.requestId, { _tag: reply.exit!._tag, value: reply.exit!.value, error: reply.exit!.cause?.error })
    }
  }
  return byId
}

describe("a host's waits per scope", () => {
  it.scopedLive("8,000 long waits from one scope: 64 run, the rest are refused with the limit and what to do; the host grows little and another scope keeps its latency", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a", "cred-b-8e3a6c0f5b2d": "team-b" })
      const { host, port } = yield* hostProcess(files)
      const pid = host.pid!
      const other = yield* controllerOn(port, "tcp", "cred-b-8e3a6c0f5b2d")
      const theirs = yield* other.start({ command: "sleep 30" })
      // warm: the other scope's calls have run once
      yield* other.status(theirs.pid)
      const c = rawTcp(port)
      yield* Effect.promise(() => c.connected)
      c.socket.write(frame(1, "Lease", { credential: "cred-a-4f9c2e7b1d8a", owner: "flood", channel: "flood" }))
      yield* eventually(() => replies(c.seen.lines).has("1"), 10)
      const lease = replies(c.seen.lines).get("1")!.value.lease as string
      c.socket.write(frame(2, "Start", { lease, command: "sleep 30" }))
      yield* eventually(() => replies(c.seen.lines).has("2"), 10)
      const job = replies(c.seen.lines).get("2")!.value.pid as number
      const idle = rssMiB(pid)
      const { peak, result } = yield* peakWhile(pid, Effect.gen(function*() {
        let text = ""
        for (let id = 3; id < 8003; id++) text += frame(id, "Wait", { lease, pid: job, timeoutMillis: 50_000 })
        c.socket.write(text)
        // meanwhile the other scope's calls answer as quickly as ever
        const latencies: Array<number> = []
        for (let k = 0; k < 20; k++) {
          const t = Date.now()
          yield* other.status(theirs.pid)
          latencies.push(Date.now() - t)
          yield* Effect.sleep("100 millis")
        }
        yield* eventually(() => replies(c.seen.lines).size >= 2 + 8000 - 64, 20)
        return latencies
      }))
      const all = replies(c.seen.lines)
      const refused = [...all.values()].filter((r) => r._tag === "Failure")
      expect(refused.length).toBe(8000 - 64)
      expect(refused[0]!.error).toMatchObject({
        _tag: "HostError",
        reason: "WaitLimit",
        detail: "this scope has 64 waits running on this host already, the most it allows (spillway host --max-waits); let one end before waiting again, or wait on fewer jobs at once"
      })
      // the 64 that run are still waiting
      expect([...Array(8000).keys()].filter((k) => !all.has(String(k + 3))).length).toBe(64)
      // the calls made while the host parses the flood's 8,000 frames share its thread with them (up to about half a
      // second on a slow two-core machine); a host that put them behind the flood's waits would answer in seconds
      const sorted = [...result].sort((a, b) => a - b)
      expect(sorted[sorted.length >> 1]).toBeLessThan(250)
      for (const ms of result) expect(ms).toBeLessThan(1000)
      expect(peak).toBeLessThan(idle + 64)
      // the waits end with their job
      c.socket.write(frame(9000, "Signal", { lease, pid: job, signal: "SIGKILL" }))
      expect(yield* eventually(() => replies(c.seen.lines).size >= 2 + 8000 + 1, 10)).toBe(true)
      c.socket.destroy()
      yield* other.signal(theirs.pid, "SIGKILL")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 60_000)
})

describe("a host's start", () => {
  const start = (files: { readonly directory: string; readonly credentials: string }) =>
    ChildProcess.spawnSync(process.execPath, [bin, "host", "--listen", "0", "--dir", files.directory, "--credentials", files.credentials], {
      encoding: "utf8",
      timeout: 20_000
    })

  it("refuses a credential shorter than 16 characters, naming its scope and not the credential, and listens on nothing", () => {
    const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a", abc: "team-weak" })
    try {
      const r = start(files)
      expect(r.status).toBe(1)
      expect(r.stderr).toBe(
        `spillway host: cannot start: ${files.credentials}: a credential (for scope "team-weak") is shorter than 16 characters; replace it with random ones (make one with \`openssl rand -hex 16\`)\n`
      )
      expect(r.stderr).not.toContain("abc")
    } finally {
      Fs.rmSync(files.root, { recursive: true, force: true })
    }
  })

  it("refuses a cursor key shorter than 32 bytes, saying how to make a new one", () => {
    const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
    try {
      Fs.mkdirSync(files.directory, { recursive: true })
      Fs.writeFileSync(Path.join(files.directory, "cursor.key"), "short")
      const r = start(files)
      expect(r.status).toBe(1)
      expect(r.stderr).toBe(
        `spillway host: cannot start: ${Path.join(files.directory, "cursor.key")}: the cursor key is 5 bytes; it must be 32 random bytes or more. Remove the file and the host makes a new one (cursors signed with the old key stop working)\n`
      )
    } finally {
      Fs.rmSync(files.root, { recursive: true, force: true })
    }
  })
})
