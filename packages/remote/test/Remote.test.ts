import { describe, expect, it } from "@effect/vitest"
import { Retention } from "@spillway/core"
import { Controller, HostIdentity, Lease, RemoteRecords } from "@spillway/remote"
import { Cause, Clock, type Context, Effect, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { bin, hostFiles, hostProcess } from "./hosts.js"

const me = { owner: "controller-1", channel: "conv-1" }

/** The lease capability over a host started as a child speaking over its stdio. */
const overStdio = (files: { readonly directory: string; readonly credentials: string }) =>
  Controller.layer().pipe(
    Layer.provideMerge(Controller.layerStdio(process.execPath, [bin, "host", "--stdio", "--dir", files.directory, "--credentials", files.credentials]))
  )

const leaseWith = (credential: string, options?: { readonly expectHost?: string }) =>
  Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me, options))

type View = { readonly output: string; readonly retention: { readonly cursor: string; readonly status: string; readonly emitted_bytes: number } }

describe("a host over stdio", () => {
  it.scopedLive("runs a job whose output stays on the host and is paged only through the lease", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "secret-credential-1": "team-a" })
      const context = yield* Layer.build(overStdio(files))
      const leased = yield* leaseWith("secret-credential-1").pipe(Effect.provide(context))
      expect(leased.scope).toBe("team-a")
      // the lease names the host by the hash of its identity, never the identity itself
      expect(leased.host).toBe(HostIdentity.hashOf(new Uint8Array(Fs.readFileSync(Path.join(files.directory, "identity")))))
      expect(Fs.statSync(Path.join(files.directory, "identity")).mode & 0o777).toBe(0o600)
      const job = yield* leased.start({ command: "echo hello from the host; echo bye" })
      const view = (yield* leased.wait(job.pid, 10_000)) as View
      expect(view.output).toBe("hello from the host\nbye\n")
      expect(view.retention.status).toBe("exited")
      const page = (yield* leased.poll(job.pid, { cursor: view.retention.cursor, limit: 6 })) as { content: string; next_cursor: string }
      expect(page.content).toBe("hello ")
      const next = (yield* leased.poll(job.pid, { cursor: page.next_cursor })) as { content: string; truncated: boolean }
      expect(next).toMatchObject({ content: "from the host\nbye\n", truncated: false })
      expect(yield* leased.status(job.pid)).toMatchObject({ pid: job.pid, status: "exited", exit_code: 0 })
      // the spool is on the host, in its own directory, and expiry deletes it there
      const spools = () => Fs.readdirSync(Path.join(files.directory, "spools")).filter((f) => f.startsWith("job-"))
      expect(spools().length).toBe(1)
      expect(yield* leased.expire(job.pid)).toEqual({ pid: job.pid, deleted: true })
      expect(spools()).toEqual([])
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("refuses forged leases, revoked credentials, other scopes, and a host with a new identity", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a", "cred-b-8e3a6c0f5b2d": "team-b" })
      const first = yield* Scope.make()
      const context = yield* Layer.build(overStdio(files)).pipe(Scope.extend(first))
      const a = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
      const b = yield* leaseWith("cred-b-8e3a6c0f5b2d").pipe(Effect.provide(context))
      expect((yield* Effect.flip(leaseWith("no-such-credential").pipe(Effect.provide(context)))).message).toContain("does not know that credential")
      const job = yield* a.start({ command: "echo for team a" })
      yield* a.wait(job.pid, 10_000)
      // another scope's lease does not reach the job, whatever pid it knows
      expect((yield* Effect.flip(b.poll(job.pid))).message).toMatch(/no job with pid|may not/)
      // a forged lease: the right shape, signed with another secret
      const client = Effect.provide(Controller.HostConnection, context)
      const forged = Lease.issue(new Uint8Array(32).fill(1), { scope: "team-a", owner: me.owner, channel: me.channel, host: a.host, fence: Lease.fenceOf("cred-a-4f9c2e7b1d8a"), issuedAt: Date.now(), expiresAt: Date.now() + 60_000 })
      const refused = yield* Effect.flip(Effect.flatMap(client, (c) => c.Poll({ lease: forged, pid: job.pid })))
      expect(refused.message).toContain("lease refused (forged)")
      // a call naming the pid of a job with another generation (a later job that got the pid) is refused
      const token = (yield* Effect.flatMap(client, (c) => c.Lease({ credential: "cred-a-4f9c2e7b1d8a", owner: me.owner, channel: me.channel }))).lease
      const stale = yield* Effect.flip(Effect.flatMap(client, (c) => c.Poll({ lease: token, pid: job.pid, generation: "an-earlier-job" })))
      expect(stale.message).toContain("does not belong to the current job")
      // revoking the credential ends the lease at once
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: { "cred-b-8e3a6c0f5b2d": "team-b" } }))
      expect((yield* Effect.flip(a.poll(job.pid))).message).toContain("lease refused (revoked)")
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: { "cred-a-4f9c2e7b1d8a": "team-a" } }))
      const again = yield* leaseWith("cred-a-4f9c2e7b1d8a", { expectHost: a.host }).pipe(Effect.provide(context))
      expect(((yield* again.poll(job.pid)) as View).output).toBe("for team a\n")
      yield* Scope.close(first, Exit.void)

      // the host comes back with a new identity: old leases and the old identity are refused
      Fs.rmSync(Path.join(files.directory, "identity"))
      const context2 = yield* Layer.build(overStdio(files))
      const mismatch = yield* Effect.flip(leaseWith("cred-a-4f9c2e7b1d8a", { expectHost: a.host }).pipe(Effect.provide(context2)))
      expect(mismatch._tag).toBe("HostMismatch")
      const client2 = Effect.provide(Controller.HostConnection, context2)
      const old = yield* Effect.flip(Effect.flatMap(client2, (c) => c.Poll({ lease: Lease.issue(new Uint8Array(32), { scope: "x", owner: "x", channel: "x", host: a.host, fence: "x", issuedAt: 0, expiresAt: Date.now() + 60_000 }), pid: job.pid })))
      expect(old.message).toContain("lease refused")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("searches a job's output on the host through the lease, in pages; its failure lines cross with the view", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a", "cred-b-8e3a6c0f5b2d": "team-b" })
      const context = yield* Layer.build(overStdio(files))
      const a = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
      const b = yield* leaseWith("cred-b-8e3a6c0f5b2d").pipe(Effect.provide(context))
      const job = yield* a.start({ command: "seq 1 1500; echo 'src/app.ts(1501,7): error TS2322: no'; seq 1502 4002; exit 2" })
      const view = yield* a.wait(job.pid, 10_000)
      expect(view.retention.failure_lines).toEqual([{ line: 1501, text: "src/app.ts(1501,7): error TS2322: no" }])
      expect(view.text).toContain("1501: src/app.ts(1501,7): error TS2322: no\n")
      expect(view.text.split("\n")[0]).toBe(`Job ${job.pid} exited with 2.`)
      // a failure line among the newest lines is shown once, over the lease as on the host
      const late = yield* a.start({ command: "seq 1 10; echo 'Error: late failure'; seq 12 20; exit 1" })
      const lateView = yield* a.wait(late.pid, 10_000)
      expect(lateView.retention.failure_lines?.map((l) => l.line)).toEqual([11])
      expect(lateView.text.split("Error: late failure")).toHaveLength(2)
      expect(lateView.text).not.toContain("Lines that report errors")
      const first = yield* a.search(job.pid, { pattern: "^40\\d\\d$", maxResults: 2 })
      expect(first.matches.map((m) => m.line)).toEqual([4000, 4001])
      expect(first.more).toBe(true)
      const second = yield* a.search(job.pid, { pattern: "^40\\d\\d$", maxResults: 2, cursor: first.next_cursor })
      expect(second.matches.map((m) => m.line)).toEqual([4002])
      expect(second.more).toBe(false)
      // another scope's lease does not reach the job; a revoked credential ends the search too
      expect((yield* Effect.flip(b.search(job.pid, { pattern: "error" }))).message).toMatch(/no job with pid|may not/)
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: { "cred-b-8e3a6c0f5b2d": "team-b" } }))
      expect((yield* Effect.flip(a.search(job.pid, { pattern: "error" }))).message).toContain("lease refused (revoked)")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("reserves the 4 MiB allowance before dispatch, and a refused start gives it back", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const quota = Retention.make({ spool: { bytes: 6 * 1024 * 1024 } })
      const context = yield* Layer.build(
        overStdio(files).pipe(Layer.provide(Layer.succeed(Retention.Retention, quota)))
      )
      const leased = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
      // a start the host refuses (no such directory) releases its reservation
      expect((yield* Effect.flip(leased.start({ command: "true", cwd: "/no/such/dir" })))._tag).toBe("HostError")
      expect(quota.usage("spool").reserved).toBe(0)
      const job = yield* leased.start({ command: "sleep 0.1" })
      expect(quota.usage("spool").reserved).toBe(4 * 1024 * 1024)
      // local capture cannot take the reserved room, and a second start is refused before dispatch
      const local = yield* quota.reserve("spool", 0)
      expect(local.grow(3 * 1024 * 1024)).toBe(2 * 1024 * 1024)
      const refused = yield* Effect.flip(leased.start({ command: "echo never runs" }))
      expect(refused._tag).toBe("QuotaExceeded")
      yield* local.release
      yield* leased.wait(job.pid, 10_000)
      yield* leased.expire(job.pid)
      expect(quota.usage("spool").reserved).toBe(0)
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

/** The lease capability over a stdio host whose client notes each `Poll` and `Pages` call it makes. */
const countingOverStdio = (
  files: { readonly directory: string; readonly credentials: string },
  calls: Array<string>,
  options?: Controller.LayerOptions
) => {
  const stdio = Controller.layerStdio(process.execPath, [bin, "host", "--stdio", "--dir", files.directory, "--credentials", files.credentials])
  const counting = Layer.effect(
    Controller.HostConnection,
    Effect.map(Controller.HostConnection, (client) => ({
      ...client,
      Poll: ((payload: Parameters<typeof client.Poll>[0]) => {
        calls.push("Poll")
        return client.Poll(payload)
      }) as typeof client.Poll,
      Pages: ((payload: Parameters<typeof client.Pages>[0]) => {
        calls.push(`Pages ${payload.count}`)
        return client.Pages(payload)
      }) as typeof client.Pages
    }))
  )
  return Controller.layer(options).pipe(Layer.provideMerge(Layer.provideMerge(counting, stdio)))
}

type Paged = { readonly _tag: string; readonly content: string; readonly offset: number; readonly truncated: boolean; readonly next_cursor?: string }

/** Every page from a cursor, each asked for as soon as the last came. */
const pageAll = (poll: (cursor: string) => Effect.Effect<unknown, unknown>, first: string, between = Effect.void) =>
  Effect.gen(function*() {
    const pages: Array<Paged> = []
    let cursor: string | undefined = first
    while (cursor !== undefined) {
      const page = (yield* poll(cursor)) as Paged
      pages.push(page)
      cursor = page.truncated ? page.next_cursor : undefined
      if (cursor !== undefined) yield* between
    }
    return pages
  })

/**
 * A stdio host whose client notes its `Poll` and `Pages` calls, a lease on
 * it, and a job of `command` waited for (to its end, or to `pattern`); the
 * notes start empty after the wait.
 */
const leasedJob = (command: string, options?: Controller.LayerOptions, pattern?: string) =>
  Effect.gen(function*() {
    const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
    const calls: Array<string> = []
    const context = yield* Layer.build(countingOverStdio(files, calls, options))
    const leased = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
    const job = yield* leased.start({ command })
    const view = (yield* leased.wait(job.pid, 10_000, pattern, pattern === undefined ? undefined : 1)) as View
    calls.length = 0
    return { files, calls, context, leased, job, view }
  })

/** The host's client in a context, and a lease of its own to call it with. */
const rawClient = (context: Context.Context<Controller.HostConnection>) =>
  Effect.gen(function*() {
    const client = yield* Effect.provide(Controller.HostConnection, context)
    const token = (yield* client.Lease({ credential: "cred-a-4f9c2e7b1d8a", owner: me.owner, channel: me.channel })).lease
    return { client, token }
  })

describe("reading ahead through a lease", () => {
  it.scopedLive("gives a reader paging in a row the pages one call at a time would, in far fewer calls", () =>
    Effect.gen(function*() {
      const { calls, context, files, job, leased, view } = yield* leasedJob("seq 1 20000")
      const read = yield* pageAll((cursor) => leased.poll(job.pid, { cursor, limit: 1000 }), view.retention.cursor)
      const made = [...calls]
      // the same pages, cursors and all, as polling the host for each one
      const { client, token } = yield* rawClient(context)
      const one = yield* pageAll((cursor) => client.Poll({ lease: token, pid: job.pid, generation: job.generation, cursor, limit: 1000 }), view.retention.cursor)
      expect(read.length).toBe(Math.ceil(108_894 / 1000))
      expect(read).toEqual(one)
      expect(read.map((p) => p.content).join("")).toBe(Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join(""))
      // one page, then 2, 4 and 8 at a time: 109 pages in 16 calls
      expect(made.slice(0, 4)).toEqual(["Poll", "Pages 2", "Pages 4", "Pages 8"])
      expect(made.length).toBe(4 + Math.ceil((read.length - 1 - 2 - 4 - 8) / 8))
      expect(made.length).toBe(16)
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("makes one call per page for a reader that comes back later, or with reading ahead off", () =>
    Effect.gen(function*() {
      const { calls, files, job, leased, view } = yield* leasedJob("seq 1 2000", { readAhead: { millis: 100 } })
      const slow = yield* pageAll((cursor) => leased.poll(job.pid, { cursor, limit: 1000 }), view.retention.cursor, Effect.sleep("150 millis"))
      expect(slow.length).toBe(9)
      expect(calls).toEqual(Array.from({ length: 9 }, () => "Poll"))

      const offCalls: Array<string> = []
      const off = yield* Layer.build(countingOverStdio(files, offCalls, { readAhead: false }))
      const again = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(off))
      expect(yield* pageAll((cursor) => again.poll(job.pid, { cursor, limit: 1000 }), view.retention.cursor)).toEqual(slow)
      expect(offCalls).toEqual(Array.from({ length: 9 }, () => "Poll"))
      // a setting out of range is refused when the layer is built
      const bad = yield* Effect.exit(Layer.build(countingOverStdio(files, [], { readAhead: { pages: 9 } })))
      expect(Exit.isFailure(bad) && String(Cause.squash(bad.cause))).toContain("readAhead.pages must be a whole number from 1 to 8, got 9")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("keeps no page of a job still running, and no page past its time once the credential is revoked", () =>
    Effect.gen(function*() {
      const { calls, files, job: running, leased, view: seen } = yield* leasedJob("seq 1 2000; echo READY; sleep 30", { readAhead: { millis: 300 } }, "READY")
      // a running job's page may still change: every one comes from the host (the host stops at the first)
      const live = yield* pageAll((cursor) => leased.poll(running.pid, { cursor, limit: 1000 }), seen.retention.cursor)
      expect(live.length).toBe(9)
      expect(calls.filter((c) => c === "Poll" || c.startsWith("Pages")).length).toBe(live.length)

      const job = yield* leased.start({ command: "seq 1 20000" })
      const view = (yield* leased.wait(job.pid, 10_000)) as View
      calls.length = 0
      let cursor = view.retention.cursor
      for (let i = 0; i < 4; i++) cursor = ((yield* leased.poll(job.pid, { cursor, limit: 1000 })) as Paged).next_cursor!
      // the call for 4 pages left 3 here; revoked, they are served no longer than the 300 ms they are kept
      expect(calls).toEqual(["Poll", "Pages 2", "Pages 4"])
      Fs.writeFileSync(files.credentials, JSON.stringify({ credentials: {} }))
      yield* Effect.sleep("350 millis")
      expect((yield* Effect.flip(leased.poll(job.pid, { cursor, limit: 1000 }))).message).toContain("lease refused (revoked)")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("reads one page at a time from a host that does not know the call for several", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      // a host from before the call: the same host, behind a relay that renames the call on its way in
      const relay = [
        "const { spawn } = require('node:child_process')",
        "const host = spawn(process.execPath, process.argv.slice(1), { stdio: ['pipe', 'inherit', 'inherit'] })",
        "let held = ''",
        "process.stdin.on('data', (d) => { held += d; const lines = held.split('\\n'); held = lines.pop(); for (const l of lines) host.stdin.write(l.replace('\"tag\":\"Pages\"', '\"tag\":\"PagesOfLater\"') + '\\n') })",
        "process.stdin.on('end', () => host.stdin.end())",
        "process.on('SIGTERM', () => { host.kill('SIGTERM'); process.exit(0) })"
      ].join("\n")
      const context = yield* Layer.build(Controller.layer().pipe(Layer.provideMerge(Controller.layerStdio(
        process.execPath,
        ["-e", relay, bin, "host", "--stdio", "--dir", files.directory, "--credentials", files.credentials]
      ))))
      const leased = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
      const job = yield* leased.start({ command: "seq 1 20000" })
      const view = (yield* leased.wait(job.pid, 10_000)) as View
      const { client, token } = yield* rawClient(context)
      // the renamed call is refused as unknown, and paging goes on without it
      const refused = yield* Effect.exit(client.Pages({ lease: token, pid: job.pid, generation: job.generation, cursor: view.retention.cursor, count: 2 }))
      expect(Exit.isFailure(refused) && String(Cause.squash(refused.cause))).toContain("Unknown request tag")
      const read = yield* pageAll((cursor) => leased.poll(job.pid, { cursor, limit: 1000 }), view.retention.cursor)
      expect(read.length).toBe(109)
      expect(read.map((p) => p.content).join("")).toBe(Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join(""))
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)

  it.scopedLive("the host answers at most 8 pages, and fewer at the end of the output", () =>
    Effect.gen(function*() {
      const { context, files, job, view } = yield* leasedJob("seq 1 2000")
      const { client, token } = yield* rawClient(context)
      const ask = (count: number) => client.Pages({ lease: token, pid: job.pid, generation: job.generation, cursor: view.retention.cursor, limit: 1000, count })
      const pages = yield* ask(8)
      expect(pages.length).toBe(8)
      expect((yield* ask(3)).map((p) => p.offset)).toEqual([0, 1000, 2000])
      // 8,893 bytes: the ninth page is the last
      const rest = yield* client.Pages({ lease: token, pid: job.pid, generation: job.generation, cursor: pages[7]!.next_cursor!, limit: 1000, count: 8 })
      expect(rest.map((p) => [p.offset, p.truncated])).toEqual([[8000, false]])
      expect(Exit.isFailure(yield* Effect.exit(ask(9)))).toBe(true)
      expect(Exit.isFailure(yield* Effect.exit(ask(0)))).toBe(true)
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

describe("a host over TCP", () => {
  it.scopedLive("serves the same calls on a loopback port; a host gone at expiry cannot confirm deletion", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const { host, port } = yield* hostProcess(files)
      const context = yield* Layer.build(
        Controller.layer({ callTimeout: "3 seconds" }).pipe(Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })))
      )
      const leased = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
      const job = yield* leased.start({ command: "printf 'over tcp\\n'" })
      const tcpView = (yield* leased.wait(job.pid, 10_000)) as View
      expect(tcpView.output).toBe("over tcp\n")
      // the host goes away: at expiry access ends here, and the result says deletion was not confirmed
      host.kill("SIGKILL")
      yield* Effect.async<void>((resume) => void host.once("exit", () => resume(Effect.void)))
      const expired = yield* leased.expire(job.pid)
      expect(expired.deleted).toBe(false)
      expect(expired.note).toContain("could not confirm")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

/** A host listening on a loopback port (TCP, or WebSocket), as a process of its own, stopped with the scope. */
const tcpHost = (files: { readonly directory: string; readonly credentials: string }, flag: "--listen" | "--listen-ws" = "--listen") =>
  Effect.map(hostProcess(files, flag), ({ port }) => port)

/** A controller over TCP whose records live at `manifests`. */
const controller = (port: number, manifests: Layer.Layer<RemoteRecords.RemoteRecords, unknown>) =>
  Controller.layer().pipe(
    Layer.provideMerge(Controller.layerTcp({ host: "127.0.0.1", port })),
    Layer.provide(Layer.orDie(manifests))
  )

describe("a restarted controller", () => {
  it.scopedLive("finds its jobs in its records, needs a fresh lease from the same host, and gets them read-only but for signals", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const port = yield* tcpHost(files)
      const records = Path.join(files.root, "controller", "remote-jobs.sqlite")
      const before = yield* Scope.make()
      const first = yield* Layer.build(controller(port, Controller.manifestsAt(records))).pipe(Scope.extend(before))
      const leased = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(first))
      const job = yield* leased.start({ command: "echo started before the restart; sleep 30", stdin: true })
      yield* leased.wait(job.pid, 10_000, "restart")
      expect(yield* leased.jobs).toEqual([{ pid: job.pid, command: "echo started before the restart; sleep 30", readOnly: false }])
      yield* Scope.close(before, Exit.void)

      const after = yield* Layer.build(controller(port, Controller.manifestsAt(records)))
      const remote = yield* Controller.RemoteLease.pipe(Effect.provide(after))
      const hosts = yield* remote.knownHosts(me)
      // the identity, with the address it was last reached at; not dialled by this controller yet, so its state is unknown
      expect(hosts).toEqual([{ host: leased.host, address: `127.0.0.1:${port}`, seenAt: expect.any(Number), liveness: { state: "unknown" } }])
      const again = yield* remote.lease("cred-a-4f9c2e7b1d8a", me, { expectHost: hosts[0]!.host })
      expect(yield* again.jobs).toEqual([{ pid: job.pid, command: "echo started before the restart; sleep 30", readOnly: true }])
      expect(((yield* again.poll(job.pid)) as View).output).toBe("started before the restart\n")
      expect((yield* Effect.flip(again.stdin(job.pid, "x")))._tag).toBe("RemoteJobReadOnly")
      // expiry ends access here; the host refuses to delete a job still running, and the result says so
      const expired = yield* again.expire(job.pid)
      expect(expired.deleted).toBe(false)
      expect(expired.note).toContain("still running")
      expect(yield* again.jobs).toEqual([])
      // a job restored from the records can still be stopped: a controller that replaced its starter signals it
      const gone = yield* Scope.make()
      const starter = yield* Layer.build(controller(port, Controller.manifestsAt(records))).pipe(Scope.extend(gone))
      const second = yield* leaseWith("cred-a-4f9c2e7b1d8a", { expectHost: leased.host }).pipe(Effect.provide(starter))
      const other = yield* second.start({ command: "echo second; sleep 30" })
      yield* second.wait(other.pid, 10_000, "second")
      yield* Scope.close(gone, Exit.void)
      const replaced = yield* Layer.build(controller(port, Controller.manifestsAt(records)))
      const third = yield* leaseWith("cred-a-4f9c2e7b1d8a", { expectHost: leased.host }).pipe(Effect.provide(replaced))
      expect(yield* third.jobs).toEqual([{ pid: other.pid, command: "echo second; sleep 30", readOnly: true }])
      yield* third.signal(other.pid, "SIGTERM")
      expect(((yield* third.wait(other.pid, 10_000)) as View).retention).toMatchObject({ pid: other.pid, status: "exited", signal: "SIGTERM" })
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

describe("output expiry", () => {
  it.scopedLive("a sweep expires what the host said has expired, deleting it there", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const context = yield* Layer.build(overStdio(files))
      const leased = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
      const job = yield* leased.start({ command: "echo kept a day" })
      const view = (yield* leased.wait(job.pid, 10_000)) as View & { retention: { expires_at: string } }
      const expiresAt = Date.parse(view.retention.expires_at)
      expect(expiresAt - Date.now()).toBeGreaterThan(23 * 60 * 60 * 1000)
      expect(yield* leased.sweep).toEqual([])
      // a day later
      const later = yield* leased.sweep.pipe(Effect.withClock(fixedClock(expiresAt + 1)))
      expect(later).toEqual([{ pid: job.pid, deleted: true }])
      expect(yield* leased.jobs).toEqual([])
      expect((yield* Effect.flip(leased.poll(job.pid))).message).toContain(`no job with pid ${job.pid}`)
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

const pgUrl = process.env.SPILLWAY_TEST_PG_URL

describe.skipIf(pgUrl === undefined || pgUrl === "")("controllers sharing one PostgreSQL", () => {
  it.scopedLive("see the same remote jobs", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const port = yield* tcpHost(files)
      // a channel of this run's own, so records of other runs in the shared database stay out of view
      const caller = { owner: "shared", channel: `run-${Date.now()}-${Math.random()}` }
      const one = yield* Layer.build(controller(port, Controller.manifestsAt(pgUrl!)))
      const two = yield* Layer.build(controller(port, Controller.manifestsAt(pgUrl!)))
      const a = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease("cred-a-4f9c2e7b1d8a", caller)).pipe(Effect.provide(one))
      const job = yield* a.start({ command: "echo seen by both" })
      yield* a.wait(job.pid, 10_000)
      const remote = yield* Controller.RemoteLease.pipe(Effect.provide(two))
      expect((yield* remote.knownHosts(caller)).map((h) => h.host)).toEqual([a.host])
      const b = yield* remote.lease("cred-a-4f9c2e7b1d8a", caller, { expectHost: a.host })
      expect(yield* b.jobs).toEqual([{ pid: job.pid, command: "echo seen by both", readOnly: true }])
      expect(((yield* b.poll(job.pid)) as View).output).toBe("seen by both\n")
      yield* a.expire(job.pid)
      expect(yield* b.jobs).toEqual([])
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})

/** A clock that says `now` (for a sweep a day later), sleeping as the live one does. */
const fixedClock = (now: number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => now,
  unsafeCurrentTimeNanos: () => BigInt(now) * 1_000_000n,
  currentTimeMillis: Effect.succeed(now),
  currentTimeNanos: Effect.succeed(BigInt(now) * 1_000_000n),
  sleep: (duration) => Effect.sleep(duration)
})

describe("a host over WebSocket", () => {
  it.scopedLive("serves the same calls", () =>
    Effect.gen(function*() {
      const files = hostFiles({ "cred-a-4f9c2e7b1d8a": "team-a" })
      const port = yield* tcpHost(files, "--listen-ws")
      const context = yield* Layer.build(Controller.layer().pipe(Layer.provideMerge(Controller.layerWebSocket(`ws://127.0.0.1:${port}`))))
      const leased = yield* leaseWith("cred-a-4f9c2e7b1d8a").pipe(Effect.provide(context))
      const job = yield* leased.start({ command: "echo over a websocket" })
      expect(((yield* leased.wait(job.pid, 10_000)) as View).output).toBe("over a websocket\n")
      Fs.rmSync(files.root, { recursive: true, force: true })
    }), 30_000)
})
