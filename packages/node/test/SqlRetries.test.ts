import { describe, expect, it } from "@effect/vitest"
import { Manifests } from "@spillway/core"
import * as SqlBackend from "@spillway/node/SqlBackend"
import * as SqlManifests from "@spillway/node/SqlManifests"
import { type Duration, Effect, Fiber, Layer } from "effect"
import { freshDatabase, pgUrl } from "./pg.js"
import { relay } from "./pgRelay.js"

const manifest = (id: string, fields: Partial<Manifests.Manifest> = {}): Manifests.Manifest => ({
  id,
  profile: "evidence",
  owner: "agent-7",
  channel: "conv-1",
  channelBound: false,
  tool: "bash",
  status: "exit 0",
  state: "complete",
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_600_000,
  bytes: 12,
  codePoints: 12,
  lines: 1,
  sourceBytes: 12,
  kept: "whole",
  captureError: null,
  checkpoints: [{ codePoint: 0, byte: 0 }],
  lineIndex: { every: 1024, starts: [0] },
  origin: { _tag: "Tool" },
  ...fields
})

/** The manifest store over a fresh database behind a relay, tried again for `retryFor`. */
const storeBehindRelay = (retryFor: Duration.DurationInput) =>
  Effect.gen(function*() {
    const url = yield* freshDatabase
    const link = yield* relay(new URL(url))
    const store = yield* Effect.provide(Manifests.Manifests, yield* Layer.build(SqlManifests.layerFor(link.url, { retryFor })))
    // opened, and its table made, before the link is cut
    yield* store.insert(manifest("first"))
    const direct = yield* Effect.provide(Manifests.Manifests, yield* Layer.build(SqlManifests.layerFor(url, { retryFor: 0 })))
    return { link, store, direct }
  })

describe("which driver errors are tried again", () => {
  it("a lost, refused or ended connection and a server shutting down are; a constraint or a syntax error is not", () => {
    const wrapped = (cause: unknown) => ({ _tag: "SqlError", message: "Connection error", cause })
    const transient = [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      new Error("Connection terminated unexpectedly"),
      new Error("Client has encountered a connection error and is not queryable")
    ]
    const lasting = [
      Object.assign(new Error("duplicate key value violates unique constraint"), { code: "23505" }),
      Object.assign(new Error("syntax error at or near"), { code: "42601" }),
      new Error("Connection refused by policy, but a code says otherwise")
    ]
    expect(transient.map((e) => SqlBackend.isTransient(wrapped(e)))).toEqual([true, true, true, true])
    expect(lasting.map((e) => SqlBackend.isTransient(wrapped(e)))).toEqual([false, false, false])
  })
})

describe.skipIf(pgUrl === undefined)("manifests in PostgreSQL while PostgreSQL is briefly down", () => {
  it.scopedLive("writes and reads made during an outage shorter than the budget all complete, and nothing is lost", () =>
    Effect.gen(function*() {
      const { direct, link, store } = yield* storeBehindRelay("6 seconds")
      link.cut()
      const started = Date.now()
      const writes = yield* Effect.fork(Effect.all([
        store.insert(manifest("during-1")),
        store.insert(manifest("during-2", { state: "writing", status: "running" })),
        store.get("first"),
        store.list({ owner: "agent-7" })
      ], { concurrency: "unbounded" }))
      yield* Effect.sleep("1500 millis")
      yield* link.restore
      const [, , got, listed] = yield* Fiber.join(writes)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400)
      expect(got?.id).toBe("first")
      expect(listed.length).toBeGreaterThanOrEqual(1)
      // a removal and an update after the outage, of rows written before and during it
      yield* store.remove("first")
      yield* store.update(manifest("during-2", { state: "complete", status: "exit 0" }))
      const rows = yield* direct.list({ owner: "agent-7" })
      expect(rows.map((m) => [m.id, m.state]).sort()).toEqual([["during-1", "complete"], ["during-2", "complete"]])
    }), 40_000)

  it.scopedLive("an outage longer than the budget fails with StoreFailed within the budget and a connect timeout, then works again", () =>
    Effect.gen(function*() {
      const { direct, link, store } = yield* storeBehindRelay("1500 millis")
      link.cut()
      const started = Date.now()
      const failure = yield* Effect.flip(store.insert(manifest("lost")))
      const took = Date.now() - started
      expect(failure._tag).toBe("StoreFailed")
      expect(failure.message).toContain("manifest insert failed")
      // tried again for the budget, not once, and not forever
      expect(took).toBeGreaterThanOrEqual(1_200)
      expect(took).toBeLessThan(1_500 + 6_000)
      expect((yield* Effect.flip(store.get("first")))._tag).toBe("StoreFailed")
      yield* link.restore
      yield* store.insert(manifest("after"))
      expect((yield* direct.list({ owner: "agent-7" })).map((m) => m.id).sort()).toEqual(["after", "first"])
    }), 40_000)

  it.scopedLive("a store first opened while PostgreSQL is down opens once it is back within the budget", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const link = yield* relay(new URL(url))
      link.cut()
      const store = yield* Effect.provide(Manifests.Manifests, yield* Layer.build(SqlManifests.layerFor(link.url, { retryFor: "6 seconds" })))
      const insert = yield* Effect.fork(store.insert(manifest("opened-late")))
      yield* Effect.sleep("1 second")
      yield* link.restore
      yield* Fiber.join(insert)
      expect((yield* store.get("opened-late"))?.id).toBe("opened-late")
    }), 40_000)
})
