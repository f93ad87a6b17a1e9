import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Cursor, Errors, Evidence, Process, ProcessManifests, Secrets } from "@spillway/core"
import { NodeEvidence, SqlProcessManifests } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Path from "node:path"
import { freshDatabase, pgUrl } from "./pg.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-jobs-")

const job = (generation: string, fields: Partial<ProcessManifests.JobManifest> = {}): ProcessManifests.JobManifest => ({
  generation,
  pid: 4242,
  owner: "alice",
  channel: "chat-1",
  command: "make test",
  spool: `${generation}.spool`,
  startedAt: 1_700_000_000_000,
  emittedBytes: 10,
  spooledBytes: 10,
  ...fields
})

/** The behaviour every job record store shares. */
const behaviour = (name: string, fresh: () => Layer.Layer<ProcessManifests.ProcessManifests, Errors.StoreFailed>) =>
  describe(`${name}: job records`, () => {
    it.effect("saves, replaces, lists oldest first, and removes", () =>
      Effect.gen(function*() {
        const store = yield* ProcessManifests.ProcessManifests
        yield* store.save(job("gen-b", { startedAt: 2 }))
        yield* store.save(job("gen-a", { startedAt: 1 }))
        yield* store.save(job("gen-b", { startedAt: 2, exitedAt: 5, exitCode: 3, emittedBytes: 2 ** 40, captureError: "quota" }))
        const listed = yield* store.list
        expect(listed.map((m) => m.generation)).toEqual(["gen-a", "gen-b"])
        expect(listed[1]).toMatchObject({ exitedAt: 5, exitCode: 3, emittedBytes: 2 ** 40, captureError: "quota" })
        yield* store.remove("gen-a")
        expect((yield* store.list).map((m) => m.generation)).toEqual(["gen-b"])
      }).pipe(Effect.provide(fresh())))
  })

behaviour("layerMemory", () => ProcessManifests.layerMemory)
behaviour("layerSqlite", () => SqlProcessManifests.layerSqlite({ filename: Path.join(tempDir(), "jobs.sqlite") }))
if (pgUrl !== undefined) {
  behaviour("layerPg", () => Layer.unwrapScoped(Effect.map(freshDatabase, (url) => SqlProcessManifests.layerPg({ url }))))
}

describe.skipIf(pgUrl === undefined)("two controllers sharing one PostgreSQL", () => {
  const me = { owner: "alice", channel: "chat-1" }

  it.scopedLive("see the same kept output and the same jobs", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const directory = tempDir()
      // evidence: kept by one, read by the other through the shared manifests (and the shared key file)
      const one = yield* Layer.build(NodeEvidence.layer({ directory, manifests: url }))
      const two = yield* Layer.build(NodeEvidence.layer({ directory, manifests: url }))
      const kept = yield* Evidence.retain({ owner: "alice", tool: "bash", status: "exit 0", body: "x\n".repeat(20_000) }).pipe(
        Effect.provide(one)
      )
      const page = yield* Evidence.getToolOutput(kept.first.next_cursor!, me).pipe(Effect.provide(two))
      expect("content" in page && page.offset).toBe(kept.first.head!.length)

      // jobs: started by one controller, seen by another started after it
      const spools = Path.join(directory, "jobs")
      const platform = Layer.mergeAll(NodeCommandExecutor.layer, NodePath.layer).pipe(Layer.provideMerge(NodeFileSystem.layer))
      const controller = Layer.mergeAll(
        platform,
        SqlProcessManifests.layerPg({ url }),
        Secrets.layer({}),
        Cursor.layerKey(new Uint8Array(32).fill(5)),
        Process.allowOwners
      ).pipe(Layer.orDie)
      const first = yield* Process.make({ directory: spools }).pipe(Effect.provide(yield* Layer.build(controller)))
      const { pid } = yield* first.start(me, { command: "echo shared; exit 2", shell: true })
      yield* first.wait(me, { pid, timeoutMillis: 10_000 })
      const second = yield* Process.make({ directory: spools }).pipe(Effect.provide(yield* Layer.build(controller)))
      expect((yield* second.list(me)).map((j) => [j.pid, j.status, j.exit_code, j.read_only])).toEqual([[pid, "exited", 2, true]])
      const view = yield* second.poll(me, { pid })
      expect(view._tag === "StatusView" && view.output).toBe("shared\n")
    }))
})
