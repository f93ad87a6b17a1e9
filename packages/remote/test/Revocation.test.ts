import { describe, expect, it } from "@effect/vitest"
import { Controller, HostIdentity, Lease } from "@spillway/remote"
import { Effect, Either, Layer, Scope, Exit } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Revocations from "../src/internal/revocations.js"
import { hostFiles, hostProcess } from "./hosts.js"

const me = { owner: "controller-1", channel: "conv-1" }
const credential = "cred-a-4f9c2e7b1d8a"
const grant = (issuedAt: number): Lease.Grant => ({
  scope: "team-a",
  owner: "o",
  channel: "c",
  host: "h".repeat(32),
  fence: Lease.fenceOf(credential),
  issuedAt,
  expiresAt: issuedAt + 3_600_000
})

describe("the revocation record", () => {
  it("trusts no one while the credentials file cannot be read or parsed, but revokes nothing", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-revoked-"))
    let inForce: ReadonlyMap<string, string> | undefined = new Map([[credential, "team-a"]])
    let now = 1_000
    const record = Revocations.make({
      stateFile: Path.join(dir, "revoked-credentials.json"),
      readCredentials: () => inForce,
      fenceOf: Lease.fenceOf,
      now: () => now
    })
    const secret = new Uint8Array(32).fill(3)
    const lease = Lease.issue(secret, grant(1_000))
    // the file half written in place: unreadable for a moment
    now = 2_000
    inForce = undefined
    expect(record.read().size).toBe(0)
    const meanwhile = Lease.verify(secret, "h".repeat(32), record.read(), lease, now, record.revokedAt)
    expect(Either.isLeft(meanwhile)).toBe(true)
    // written whole again with the same credential: the lease holds, nothing was revoked
    now = 3_000
    inForce = new Map([[credential, "team-a"]])
    expect(Either.isRight(Lease.verify(secret, "h".repeat(32), record.read(), lease, now, record.revokedAt))).toBe(true)
    expect(record.revokedAt(Lease.fenceOf(credential))).toBeUndefined()
    Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("refuses a lease issued before its credential was removed, once the credential is back, and after a restart", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-revoked-"))
    let inForce = new Map([[credential, "team-a"]])
    let now = 1_000
    const open = () =>
      Revocations.make({
        stateFile: Path.join(dir, "revoked-credentials.json"),
        readCredentials: () => inForce,
        fenceOf: Lease.fenceOf,
        now: () => now
      })
    const secret = new Uint8Array(32).fill(3)
    const before = Lease.issue(secret, grant(1_000))
    const record = open()
    const verify = (r: Revocations.Revocations, token: string) =>
      Lease.verify(secret, "h".repeat(32), r.read(), token, now, r.revokedAt)
    expect(Either.isRight(verify(record, before))).toBe(true)
    now = 2_000
    inForce = new Map()
    expect(record.read().size).toBe(0)
    now = 3_000
    inForce = new Map([[credential, "team-a"]])
    const refused = verify(record, before)
    expect(Either.isLeft(refused) && refused.left.reason).toBe("revoked")
    const after = Lease.issue(secret, grant(3_000))
    expect(Either.isRight(verify(record, after))).toBe(true)
    // a restarted host remembers it
    const again = open()
    expect(Either.isLeft(verify(again, before))).toBe(true)
    expect(Either.isRight(verify(again, after))).toBe(true)
    // and notices a credential removed while it was stopped
    inForce = new Map()
    now = 4_000
    const meanwhile = Lease.issue(secret, grant(3_500))
    inForce = new Map([[credential, "team-a"]])
    Fs.writeFileSync(
      Path.join(dir, "revoked-credentials.json"),
      JSON.stringify({ inForce: [Lease.fenceOf("another-credential-0001")], revoked: [] })
    )
    expect(Either.isRight(verify(open(), meanwhile))).toBe(true)
    Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("keeps at most its bound of fences, the oldest forgotten first", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-revoked-"))
    let inForce = new Map<string, string>()
    let now = 0
    const record = Revocations.make({
      stateFile: Path.join(dir, "revoked-credentials.json"),
      readCredentials: () => inForce,
      fenceOf: (c) => c,
      now: () => now,
      maxRevoked: 50
    })
    for (let i = 0; i <= 50; i++) {
      inForce = new Map([[`c${i}`, "s"]])
      now = i
      record.read()
    }
    inForce = new Map()
    record.read()
    expect(record.revokedAt("c0")).toBeUndefined()
    expect(record.revokedAt("c1")).toBe(2)
    expect(record.revokedAt("c50")).toBe(50)
    expect(Fs.statSync(Path.join(dir, "revoked-credentials.json")).size).toBeLessThan(51 * 40)
    Fs.rmSync(dir, { recursive: true, force: true })
  })
})

describe("a removed credential put back on a running host", () => {
  it.scopedLive("does not revive its old leases, there or after the host restarts; a new lease works", () =>
    Effect.gen(function*() {
      const files = hostFiles({ [credential]: "team-a" })
      const first = yield* Scope.make()
      const { port } = yield* hostProcess(files).pipe(Scope.extend(first))
      const controller = yield* Layer.build(Controller.layer().pipe(Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port }))))
      const lease = Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(controller))
      const old = yield* lease
      const issuedBefore = Date.now()
      const job = yield* old.start({ command: "echo kept" })
      yield* old.wait(job.pid, 10_000)
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: {} }))
      // the host notices within a second, whether or not anyone calls
      yield* Effect.sleep("1500 millis")
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: { [credential]: "team-a" } }))
      expect((yield* Effect.flip(old.poll(job.pid))).message).toContain("lease refused (revoked)")
      const fresh = yield* lease
      expect((yield* fresh.status(job.pid)).status).toBe("exited")
      // a host started again where it was remembers the revocation: a lease signed with its own secret, issued before, is refused
      yield* Scope.close(first, Exit.void)
      yield* Effect.sleep("300 millis")
      yield* hostProcess(files, "--listen", [], port)
      const identity = yield* HostIdentity.loadOrCreate(Path.join(files.directory, "identity"))
      const tokenAt = (issuedAt: number) =>
        Lease.issue(identity.secret, {
          scope: "team-a",
          owner: me.owner,
          channel: me.channel,
          host: identity.hash,
          fence: Lease.fenceOf(credential),
          issuedAt,
          expiresAt: issuedAt + 3_600_000
        })
      const client = yield* Effect.provide(Controller.HostConnection, yield* Layer.build(Controller.layerTcp({ host: "127.0.0.1", port })))
      const refused = yield* Effect.flip(client.Status({ lease: tokenAt(issuedBefore), pid: job.pid, generation: job.generation }))
      expect(JSON.stringify(refused)).toContain("revoked")
      expect((yield* client.Status({ lease: tokenAt(Date.now()), pid: job.pid, generation: job.generation })).status).toBe("exited")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 40_000)
})
