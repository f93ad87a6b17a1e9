import { describe, expect, it } from "@effect/vitest"
import { Controller, Lease } from "@spillway/remote"
import { Effect, Either, Exit, FastCheck as fc, Fiber, Layer } from "effect"
import * as Fs from "node:fs"
import { hostFiles, hostProcess } from "./hosts.js"

const secret = new Uint8Array(32).fill(7)
const host = "h".repeat(32)
const credentials = new Map([["cred-a-4f9c2e7b1d8a", "team-a"]])
const now = 1_800_000_000_000
const grant: Lease.Grant = {
  scope: "team-a",
  owner: "o",
  channel: "c",
  host,
  fence: Lease.fenceOf("cred-a-4f9c2e7b1d8a"),
  issuedAt: now,
  expiresAt: now + 60_000
}
const token = Lease.issue(secret, grant)
const refusal = (t: unknown, at = now) => {
  const r = Lease.verify(secret, host, credentials, t, at)
  return Either.isLeft(r) ? r.left : undefined
}

describe("Lease", () => {
  it("grants what it says, for its host, until it expires", () => {
    expect(Lease.verify(secret, host, credentials, token, now)).toEqual(Either.right(grant))
    expect(refusal(token, now + 59_999)).toBeUndefined()
    const expired = refusal(token, now + 60_000)!
    expect(expired.reason).toBe("expired")
    expect(expired.message).toContain("expired at")
    expect(Lease.verify(secret, "x".repeat(32), credentials, token, now).pipe(Either.flip, Either.getOrThrow).reason).toBe("host")
    expect(Lease.verify(secret, host, new Map([["cred-a-4f9c2e7b1d8a", "team-b"]]), token, now).pipe(Either.flip, Either.getOrThrow).reason).toBe("revoked")
  })

  it("is accepted only exactly as issued: junk after the signature, padding or re-encoding is refused", () => {
    for (const bad of [`${token}!!`, `${token}==`, `${token}=`, `${token}.`, ` ${token}`, `${token}\n`, token.replace(".", "=."), token.toUpperCase(), token.slice(0, -1)]) {
      expect(refusal(bad)?.reason, bad.slice(-6)).toBe("forged")
    }
    for (const bad of [undefined, null, 42, {}, "", "lease2..", "x".repeat(100_000)]) expect(refusal(bad)?.reason).toBe("forged")
  })

  it.prop("any change to a lease is refused", [fc.nat(), fc.constantFrom(..."ABCxyz019-_=!.+/ ")], ([at, c]) => {
    const i = at % (token.length + 1)
    for (const changed of [token.slice(0, i) + c + token.slice(i), token.slice(0, i) + token.slice(i + 1), token.slice(0, i) + c + token.slice(i + 1)]) {
      if (changed !== token) expect(refusal(changed)).toBeDefined()
    }
  })

  it("keeps scope and channel apart: no scope and channel reads as another scope's channel", () => {
    const a = Lease.callerOf({ scope: "prod", owner: "o", channel: "ci/x" })
    const b = Lease.callerOf({ scope: "prod/ci", owner: "o", channel: "x" })
    expect(a.channel).not.toBe(b.channel)
    expect(JSON.parse(a.channel)).toEqual(["prod", "ci/x"])
  })
})

const me = { owner: "controller-1", channel: "conv-1" }
type View = { readonly output: string }

/** A controller over TCP, with the client underneath for raw calls. */
const controllerOn = (port: number) =>
  Layer.build(Controller.layer({ callTimeout: "20 seconds" }).pipe(Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port }))))

describe("leases over the wire", () => {
  it.scopedLive("a lease with junk appended is refused; scope prod with channel ci/x does not reach scope prod/ci's channel x", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-prod-7a1e9c4b": "prod", "cred-prod-ci-2d6f0a": "prod/ci" })
      const { port } = yield* hostProcess(files)
      const context = yield* controllerOn(port)
      const client = yield* Effect.provide(Controller.HostConnection, context)
      const ci = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease("cred-prod-ci-2d6f0a", { owner: "o", channel: "x" })).pipe(Effect.provide(context))
      const job = yield* ci.start({ command: "echo for prod/ci channel x" })
      expect(((yield* ci.wait(job.pid, 10_000)) as View).output).toBe("for prod/ci channel x\n")
      const prod = yield* client.Lease({ credential: "cred-prod-7a1e9c4b", owner: "o", channel: "ci/x" })
      const reached = yield* Effect.flip(client.Poll({ lease: prod.lease, pid: job.pid }))
      expect(reached.message).toMatch(/no job with pid|may not/)
      for (const junk of ["!!", "==", "="]) {
        const refused = yield* Effect.flip(client.Poll({ lease: `${prod.lease}${junk}`, pid: job.pid }))
        expect(refused.message).toContain("lease refused (forged)")
      }
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("leases expire and are refused with a clear error; a controller renews its own before they do", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { port } = yield* hostProcess(files, "--listen", ["--lease-ttl", "2"])
      const context = yield* controllerOn(port)
      const client = yield* Effect.provide(Controller.HostConnection, context)
      const leased = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease("cred-a-4f9c2e7b1d8a", me)).pipe(Effect.provide(context))
      const raw = yield* client.Lease({ credential: "cred-a-4f9c2e7b1d8a", owner: me.owner, channel: me.channel })
      expect(raw.ttlMillis).toBe(2000)
      const job = yield* leased.start({ command: "echo kept" })
      yield* Effect.sleep("2500 millis")
      const expired = yield* Effect.flip(client.Poll({ lease: raw.lease, pid: job.pid }))
      expect(expired.message).toContain("lease refused (expired)")
      // the controller renewed at half-life: its calls go on
      expect(((yield* leased.poll(job.pid)) as View).output).toBe("kept\n")
      yield* Effect.sleep("2500 millis")
      expect(((yield* leased.poll(job.pid)) as View).output).toBe("kept\n")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("a wait begun before a revocation returns nothing printed after it", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a", "cred-b-8e3a6c0f5b2d": "team-b" })
      const { port } = yield* hostProcess(files)
      const context = yield* controllerOn(port)
      for (const pattern of ["AFTER", undefined]) {
        Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: { "cred-a-4f9c2e7b1d8a": "team-a", "cred-b-8e3a6c0f5b2d": "team-b" } }))
        // a lease from before the credential was removed stays revoked: a new one is needed once it is back
        const leased = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease("cred-a-4f9c2e7b1d8a", me)).pipe(Effect.provide(context))
        const job = yield* leased.start({ command: "echo before; sleep 1.5; echo AFTER-REVOCATION; sleep 1" })
        yield* leased.wait(job.pid, 10_000, "before", 1)
        const waiting = yield* Effect.fork(leased.wait(job.pid, 10_000, pattern))
        yield* Effect.sleep("500 millis")
        Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: { "cred-b-8e3a6c0f5b2d": "team-b" } }))
        const exit = yield* Fiber.await(waiting)
        expect(JSON.stringify(exit)).not.toContain("AFTER-REVOCATION")
        expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("lease refused (revoked)")
      }
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

describe("a host wait with a pattern that cannot finish", () => {
  it.scopedLive("ends at the wait's timeout, while the host answers other calls", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { port } = yield* hostProcess(files)
      const leased = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease("cred-a-4f9c2e7b1d8a", me)).pipe(Effect.provide(yield* controllerOn(port)))
      // lines of random a and b: RE2's DFA gives up on the pattern below, and its NFA takes about a second a line
      const job = yield* leased.start({
        command: `node -e "for (let i = 0; i < 24; i++) { let s = ''; for (let k = 0; k < 65000; k++) s += Math.random() < 0.5 ? 'a' : 'b'; console.log(s) }"; sleep 30`
      })
      yield* leased.wait(job.pid, 10_000, "^[ab]{10}", 1)
      const order: Array<string> = []
      const started = Date.now()
      const waiting = yield* Effect.fork(Effect.tap(leased.wait(job.pid, 3000, "(?:a|b)*a[ab]{999}[^ab]", 1), () => Effect.sync(() => order.push("wait"))))
      yield* Effect.sleep("500 millis")
      const status = yield* leased.status(job.pid)
      order.push("status")
      const view = (yield* Fiber.join(waiting)) as { readonly output: string }
      expect(status).toMatchObject({ pid: job.pid, status: "running" })
      expect(order).toEqual(["status", "wait"])
      expect(JSON.stringify(view)).toContain(`"ended_by":"timeout"`)
      expect((Date.now() - started) / 1000).toBeLessThan(10)
      yield* leased.signal(job.pid, "SIGKILL")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 60_000)
})
