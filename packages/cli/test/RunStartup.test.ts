import { afterAll, describe, expect, it } from "@effect/vitest"
import { Access, Body, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { NodeBodies } from "@spillway/node"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))
const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

const made: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-startup-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

const spillway = (dir: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir, ...env },
    timeout: 60_000
  })
  return { status: r.status, stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8") }
}

/** A file a writer that is gone left half-written: its name holds a pid no process has. */
const debris = (dir: string) => {
  const name = ".tmp-4194303-abcdef-left-behind.log"
  Fs.writeFileSync(Path.join(dir, name), "half written\n")
  return name
}

/**
 * `spillway run` starts with only what the command needs: a run whose
 * output is shown whole builds no masking rules for its command and reads
 * nothing of the output directory; what it prints, its status and what a
 * long output keeps are as they always were.
 */
describe("spillway run: start-up", () => {
  it("run -- true prints nothing, exits 0 and keeps nothing", () => {
    const dir = tempDir()
    for (const quick of ["1", "0"]) {
      const r = spillway(dir, ["run", "--", "true"], { SPILLWAY_QUICK: quick })
      expect(r).toEqual({ status: 0, stdout: "", stderr: "" })
      expect(Fs.readdirSync(dir).filter((f) => !f.startsWith("."))).toEqual([])
    }
    const failing = spillway(dir, ["run", "--", "false"])
    expect(failing).toEqual({ status: 1, stdout: "", stderr: "" })
  })

  it("a run shown whole leaves the directory unread; the next run that keeps output sweeps a dead writer's file", () => {
    const dir = tempDir()
    const left = debris(dir)
    expect(spillway(dir, ["run", "--", "echo", "short"]).stdout).toBe("short\n")
    expect(Fs.readdirSync(dir)).toContain(left)
    const long = spillway(dir, ["run", "-c", "seq 1 3000"])
    expect(long.status).toBe(0)
    expect(long.stdout).toMatch(/Full output: \S+\.log/)
    expect(Fs.readdirSync(dir)).not.toContain(left)
    expect(Fs.readdirSync(dir).filter((f) => !f.startsWith("."))).toHaveLength(1)
  })

  it.effect("the masking rules are built for a command's record only when the body is stored, and the record is masked", () => {
    const dir = tempDir()
    let builds = 0
    const secrets = Layer.succeed(Secrets.Secrets, Secrets.lazy(() => {
      builds++
      return Secrets.unsafeMakeMasker()
    }))
    const store = NodeBodies.layerWithout({ directory: dir }).pipe(Layer.provide(Layer.merge(secrets, Access.allowOwners)))
    const services = Layer.mergeAll(Spill.layerWrite(), Access.layerCaller({ owner: "tester", channel: "cli" })).pipe(
      Layer.provideMerge(store),
      Layer.provide(SpillPolicy.allowAll)
    )
    return Effect.gen(function*() {
      const write = yield* Spill.SpillWrite
      const empty = yield* write.keepOutput("", 0, { command: `true ${TOKEN}` })
      expect(empty).toMatchObject({ text: "", truncated: false, totalBytes: 0 })
      expect(builds).toBe(0)
      const kept = yield* write.keepOutput("line\n".repeat(1000), 0, { command: `seq ${TOKEN}` })
      expect(kept.truncated).toBe(true)
      expect(builds).toBe(1)
      const manifest = yield* Effect.flatMap(Body.Bodies, (bodies) => bodies.manifest(kept.filename!))
      expect(manifest?.origin).toEqual({ _tag: "Tool", command: expect.stringMatching(/^seq /) })
      const command = manifest?.origin._tag === "Tool" ? manifest.origin.command ?? "" : ""
      expect(command).not.toContain(TOKEN)
      expect(command).toHaveLength(`seq ${TOKEN}`.length)
    }).pipe(Effect.provide(services), Effect.scoped)
  })
})
