import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { SystemError } from "@effect/platform/Error"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { AgentConfig } from "@spillway/agents"
import { Context, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Os from "node:os"

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-agent-config-"))
  made.push(dir)
  return dir
}

/** A file system in a map, as small as persistence needs; `failRename` makes every rename fail as a full disk would. */
const memoryFs = (files: Map<string, string>, options: { failRename?: boolean } = {}) =>
  FileSystem.layerNoop({
    exists: (path) => Effect.succeed(files.has(path)),
    readFileString: (path) =>
      files.has(path)
        ? Effect.succeed(files.get(path)!)
        : Effect.fail(new SystemError({ reason: "NotFound", module: "FileSystem", method: "readFileString", pathOrDescriptor: path })),
    writeFileString: (path, data) => Effect.sync(() => void files.set(path, data)),
    makeDirectory: () => Effect.void,
    remove: (path) => Effect.sync(() => void files.delete(path)),
    rename: (from, to) =>
      options.failRename === true
        ? Effect.fail(new SystemError({ reason: "Unknown", module: "FileSystem", method: "rename", pathOrDescriptor: to, description: "no space left on device" }))
        : Effect.sync(() => {
          files.set(to, files.get(from)!)
          files.delete(from)
        })
  })

const live = (persistence: Layer.Layer<AgentConfig.ConfigPersistence>, initial?: AgentConfig.Config) =>
  Layer.build(AgentConfig.layer(initial).pipe(Layer.provide(persistence))).pipe(Effect.map(Context.get(AgentConfig.AgentConfig)))

const FILE = "/config/agents.json"

describe("configuration persisted in a file", () => {
  it.scoped("on the real file system: a publication is read by the next start, written whole", () =>
    Effect.gen(function*() {
      const file = Path.join(tempDir(), "nested", "agents.json")
      const persistence = AgentConfig.persistenceFile(file).pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))
      const first = yield* live(persistence)
      expect(yield* first.current).toEqual(AgentConfig.defaults)
      yield* first.publish({ maxConcurrentAgents: 4, maxLifetimeSeconds: 60 })
      const second = yield* live(persistence)
      expect(yield* second.current).toEqual({ maxConcurrentAgents: 4, maxLifetimeSeconds: 60 })
      expect(JSON.parse(Fs.readFileSync(file, "utf8"))).toEqual({ agents: { max_concurrent_agents: 4, max_lifetime_seconds: 60 } })
      // no temporary file is left beside it
      expect(Fs.readdirSync(Path.dirname(file))).toEqual(["agents.json"])
    }))

  it.scoped("on a file system a test swaps in: a figure left out takes its default", () =>
    Effect.gen(function*() {
      const files = new Map([[FILE, JSON.stringify({ agents: { max_lifetime_seconds: 90 } })]])
      const config = yield* live(AgentConfig.persistenceFile(FILE).pipe(Layer.provide(Layer.merge(memoryFs(files), NodePath.layer))))
      expect(yield* config.current).toEqual({ maxConcurrentAgents: AgentConfig.defaults.maxConcurrentAgents, maxLifetimeSeconds: 90 })
    }))

  it.scoped("a file that is not a configuration is refused with what is wrong in it", () =>
    Effect.gen(function*() {
      for (const [text, says] of [
        [JSON.stringify({ agents: { max_concurrent_agents: "4" } }), "max_concurrent_agents"],
        ["{ not json", "is not an agent configuration"],
        [JSON.stringify({ agents: [] }), "agents"]
      ] as const) {
        const files = new Map([[FILE, text]])
        const persistence = AgentConfig.persistenceFile(FILE).pipe(Layer.provide(Layer.merge(memoryFs(files), NodePath.layer)))
        const failed = yield* Effect.flip(live(persistence))
        expect(failed._tag).toBe("PersistFailed")
        expect(failed.message).toContain(says)
      }
      const files = new Map([[FILE, JSON.stringify({ agents: { max_concurrent_agents: 0 } })]])
      const invalid = yield* Effect.flip(live(AgentConfig.persistenceFile(FILE).pipe(Layer.provide(Layer.merge(memoryFs(files), NodePath.layer)))))
      expect(invalid._tag).toBe("InvalidConfig")
    }))

  it.scoped("a write that fails leaves the file and the live configuration as they were, and says so", () =>
    Effect.gen(function*() {
      const files = new Map([[FILE, JSON.stringify({ agents: { max_concurrent_agents: 2, max_lifetime_seconds: 30 } })]])
      const config = yield* live(AgentConfig.persistenceFile(FILE).pipe(Layer.provide(Layer.merge(memoryFs(files, { failRename: true }), NodePath.layer))))
      const failed = yield* Effect.flip(config.publish({ maxConcurrentAgents: 5, maxLifetimeSeconds: 50 }))
      expect(failed._tag).toBe("PublishFailed")
      expect(failed.message).toContain("no space left on device")
      expect(yield* config.current).toEqual({ maxConcurrentAgents: 2, maxLifetimeSeconds: 30 })
      expect([...files.keys()]).toEqual([FILE])
      expect(JSON.parse(files.get(FILE)!)).toEqual({ agents: { max_concurrent_agents: 2, max_lifetime_seconds: 30 } })
    }))
})
