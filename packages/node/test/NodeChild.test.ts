import { NodeCommandExecutor, NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it, vi } from "@effect/vitest"
import { Child, Slabs } from "@spillway/core"
import { ChildPipes, NodeChild } from "@spillway/node"
import { Effect, Exit, Fiber, Layer, Ref, Scope } from "effect"
import * as Fs from "node:fs"

const realAllocUnsafe = Buffer.allocUnsafe

const collect = () => {
  let out = ""
  return { onOutput: (c: Uint8Array) => Effect.sync(() => void (out += Buffer.from(c).toString())), text: () => out }
}
/** True while the process runs; a zombie nobody has reaped yet counts as gone. */
const alive = (pid: number) => {
  try {
    return Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z"
  } catch {
    return false
  }
}

/** The behaviour every runner shares. */
const behaviour = (name: string, layer: Layer.Layer<Child.ChildRunner>) =>
  describe(`${name}: shared behaviour`, () => {
    it.live("hands on every byte in order to a slow consumer", () =>
      Effect.gen(function*() {
        let total = 0
        const status = yield* Child.run({ command: "sh", args: ["-c", "head -c 20000000 /dev/zero; echo done >&2"] }, (chunk) =>
          Effect.gen(function*() {
            total += chunk.length
            yield* Effect.sleep("1 millis")
          }))
        expect(status).toEqual({ code: 0, signal: null, status: 0 })
        expect(total).toBe(20_000_000 + "done\n".length)
      }).pipe(Effect.provide(layer)))

    it.live("reports exit codes, and signals as 128+N", () =>
      Effect.gen(function*() {
        const none = () => Effect.void
        expect((yield* Child.run({ command: "sh", args: ["-c", "exit 7"] }, none)).status).toBe(7)
        expect(yield* Child.run({ command: "kill -KILL $$", shell: true }, none)).toEqual({ code: null, signal: "SIGKILL", status: 137 })
        expect((yield* Child.run({ command: "kill -TERM $$", shell: true, mergeStderr: true }, none)).status).toBe(143)
      }).pipe(Effect.provide(layer)))

    it.live("keeps reading after one pipe closes, and keeps the written order with mergeStderr", () =>
      Effect.gen(function*() {
        for (const mergeStderr of [false, true]) {
          const c = collect()
          yield* Child.run({ command: "sh", args: ["-c", "exec 2>&-; echo a; sleep 0.2; echo b"], mergeStderr }, c.onOutput)
          expect(c.text()).toBe("a\nb\n")
        }
        const c = collect()
        yield* Child.run({ command: "for i in 1 2 3 4 5 6 7 8 9; do echo out$i; echo err$i >&2; done", shell: true, mergeStderr: true }, c.onOutput)
        expect(c.text()).toBe([1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `out${i}\nerr${i}\n`).join(""))
      }).pipe(Effect.provide(layer)))

    it.live("closes stdin unless asked for a pipe, which it feeds and closes", () =>
      Effect.gen(function*() {
        const closed = collect()
        expect((yield* Child.run({ command: "cat" }, closed.onOutput)).status).toBe(0)
        expect(closed.text()).toBe("")
        const piped = collect()
        const status = yield* Effect.scoped(Effect.gen(function*() {
          const runner = yield* Child.ChildRunner
          const r = yield* runner.start({ command: "cat", stdin: "pipe" }, piped.onOutput)
          yield* r.writeStdin(new TextEncoder().encode("fed through stdin\n"))
          yield* r.closeStdin
          return yield* r.exit
        }))
        expect(status.status).toBe(0)
        expect(piped.text()).toBe("fed through stdin\n")
      }).pipe(Effect.provide(layer)))

    it.live("returns within the drain grace when a background child keeps the pipes open", () =>
      Effect.gen(function*() {
        const c = collect()
        const started = Date.now()
        const status = yield* Child.run({ command: "echo hi; sleep 30 &", shell: true }, c.onOutput, { drainGraceMillis: 300 })
        expect(status.status).toBe(0)
        expect(c.text()).toBe("hi\n")
        expect(Date.now() - started).toBeLessThan(10_000)
      }).pipe(Effect.provide(layer)))

    it.live("stops a child that ignores SIGTERM with SIGKILL after the grace, and its whole process group", () =>
      Effect.gen(function*() {
        const pids = yield* Ref.make("")
        const status = yield* Effect.scoped(Effect.gen(function*() {
          const runner = yield* Child.ChildRunner
          const r = yield* runner.start(
            { command: "trap '' TERM; sleep 60 & echo $!; wait", shell: true },
            (c) => Ref.update(pids, (s) => s + Buffer.from(c).toString()),
            { killGraceMillis: 300 }
          )
          while ((yield* Ref.get(pids)) === "") yield* Effect.sleep("20 millis")
          expect(yield* r.isRunning).toBe(true)
          return yield* r.terminate
        }))
        expect(status.status).toBe(137)
        const grandchild = Number((yield* Ref.get(pids)).trim())
        yield* Effect.sleep("100 millis")
        expect(alive(grandchild)).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.live("closing the scope stops a child still running", () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const runner = yield* Child.ChildRunner
        const r = yield* runner.start({ command: "sleep", args: ["60"] }, () => Effect.void).pipe(Scope.extend(scope))
        expect(alive(r.pid)).toBe(true)
        yield* Scope.close(scope, Exit.void)
        yield* Effect.sleep("100 millis")
        expect(alive(r.pid)).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.live("an interrupted run stops a child that ignores SIGTERM within the grace periods", () =>
      Effect.gen(function*() {
        const c = collect()
        const fiber = yield* Effect.fork(Child.run({ command: "trap '' TERM; echo up; sleep 60", shell: true }, c.onOutput, { killGraceMillis: 300 }))
        while (!c.text().includes("up")) yield* Effect.sleep("20 millis")
        const started = Date.now()
        yield* Fiber.interrupt(fiber)
        expect(Date.now() - started).toBeLessThan(5_000)
      }).pipe(Effect.provide(layer)))

    it.live("sends a signal to the group and goes on", () =>
      Effect.gen(function*() {
        const c = collect()
        const status = yield* Effect.scoped(Effect.gen(function*() {
          const runner = yield* Child.ChildRunner
          const r = yield* runner.start({ command: "trap 'echo got USR1; exit 3' USR1; echo ready; while :; do sleep 0.05; done", shell: true }, c.onOutput)
          while (!c.text().includes("ready")) yield* Effect.sleep("20 millis")
          yield* r.signal("SIGUSR1")
          return yield* r.exit
        }))
        expect(status.status).toBe(3)
        expect(c.text()).toContain("got USR1")
      }).pipe(Effect.provide(layer)))

    it.live("a command that does not exist is a SpawnFailed", () =>
      Effect.gen(function*() {
        const e = yield* Effect.flip(Child.run({ command: "no-such-command-here" }, () => Effect.void))
        expect(e._tag).toBe("SpawnFailed")
        expect(e.message).toContain("cannot start no-such-command-here")
      }).pipe(Effect.provide(layer)))
  })

behaviour("Node", NodeChild.layer())
behaviour("Node, a fresh buffer per read", NodeChild.layer({ reuseBuffers: false }))
behaviour("CommandExecutor", Child.layerExecutor.pipe(Layer.provide(NodeCommandExecutor.layer), Layer.provide(NodeFileSystem.layer)))

describe("Node", () => {
  it.live("hands output on in bounded batches, and refuses a merged command that is not on PATH", () =>
    Effect.gen(function*() {
      let largest = 0
      yield* Child.run({ command: "head", args: ["-c", "5000000", "/dev/zero"] }, (chunk) => Effect.sync(() => void (largest = Math.max(largest, chunk.length))))
      expect(largest).toBeLessThanOrEqual(256 * 1024)
      const e = yield* Effect.flip(Child.run({ command: "no-such-command-here", mergeStderr: true }, () => Effect.void))
      expect(e.message).toContain("not found")
    }).pipe(Effect.provide(NodeChild.layer({ maxBatchBytes: 256 * 1024, maxQueuedBytes: 512 * 1024 }))))

  it.live("hands a job's output on in batches of at most 256 KiB, where a capture's runner gathers up to 1 MiB for a slow consumer", () =>
    Effect.gen(function*() {
      /** The largest batch of 8 MB of output handed to a consumer that takes 2 ms a batch. */
      const largest = (layer: Layer.Layer<Child.ChildRunner>) =>
        Effect.gen(function*() {
          let most = 0
          let total = 0
          yield* Child.run({ command: "head", args: ["-c", "8000000", "/dev/zero"] }, (chunk) =>
            Effect.gen(function*() {
              most = Math.max(most, chunk.length)
              total += chunk.length
              yield* Effect.sleep("2 millis")
            }))
          expect(total).toBe(8_000_000)
          return most
        }).pipe(Effect.provide(layer))
      expect(yield* largest(NodeChild.layerForJobs())).toBeLessThanOrEqual(256 * 1024)
      expect(yield* largest(NodeChild.layer())).toBeGreaterThan(256 * 1024)
      // options given win over the jobs' batch size
      expect(yield* largest(NodeChild.layerForJobs({ maxBatchBytes: 64 * 1024 }))).toBeLessThanOrEqual(64 * 1024)
    }))

  it.live("reads a flood into a few buffers used over and over, every byte in order, for a consumer that waits between batches", () =>
    Effect.gen(function*() {
      const buffers = new Set<ArrayBufferLike>()
      let text = ""
      yield* Child.run({ command: "seq", args: ["1", "3000000"] }, (chunk) =>
        Effect.gen(function*() {
          buffers.add(chunk.buffer)
          // decoded at once: the runner may read into this memory again once the effect is done
          text += Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length).toString("latin1")
          yield* Effect.sleep("1 millis")
        }))
      const lines = text.split("\n")
      expect(lines.length).toBe(3_000_001)
      expect(lines[0]).toBe("1")
      expect(lines[1_499_999]).toBe("1500000")
      expect(lines[2_999_999]).toBe("3000000")
      for (let i = 0; i < lines.length - 1; i += 997) expect(lines[i]).toBe(String(i + 1))
      // 20 MB of output through a handful of 1 MiB buffers, not a new one per read
      expect(buffers.size).toBeLessThanOrEqual(8)
    }).pipe(Effect.provide(NodeChild.layer())))

  it.live("reads a short output to its end within its first small buffer: no large one is made for the read that finds the end", () =>
    Effect.gen(function*() {
      const made: Array<number> = []
      const allocUnsafe = vi.spyOn(Buffer, "allocUnsafe").mockImplementation(function(this: unknown, size: number) {
        made.push(size)
        return realAllocUnsafe.call(Buffer, size)
      })
      try {
        for (let i = 0; i < 20; i++) {
          const out = collect()
          expect((yield* Child.run({ command: "printf 'hi %s\\n' " + i, shell: true }, out.onOutput)).status).toBe(0)
          expect(out.text()).toBe(`hi ${i}\n`)
        }
        expect(made.filter((size) => size >= 1024 * 1024)).toEqual([])
        // a flood still reads into large buffers (the spy sees them)
        yield* Child.run({ command: "head", args: ["-c", "4000000", "/dev/zero"] }, () => Effect.void)
        expect(made.filter((size) => size >= 1024 * 1024).length).toBeGreaterThan(0)
      } finally {
        allocUnsafe.mockRestore()
      }
    }).pipe(Effect.provide(NodeChild.layer())))

  it.live("gathers a flood into large batches, and hands a trickle on as it comes", () =>
    Effect.gen(function*() {
      // a pipe delivers about 64 KiB a turn: a flood handed on read by read would cost the consumer a batch each
      const sizes: Array<number> = []
      yield* Child.run({ command: "head", args: ["-c", "32000000", "/dev/zero"] }, (chunk) => Effect.sync(() => void sizes.push(chunk.length)))
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(32_000_000)
      expect(Math.max(...sizes)).toBeLessThanOrEqual(1024 * 1024)
      // at least two reads a batch on average, however busy the machine (read by read would be about 490)
      expect(sizes.length).toBeLessThanOrEqual(32_000_000 / (128 * 1024))
      // a line written before a pause is its own batch: nothing waits for the next one
      const batches: Array<string> = []
      yield* Child.run({ command: "sh", args: ["-c", "echo first; sleep 1; echo second"] }, (chunk) =>
        Effect.sync(() => void batches.push(Buffer.from(chunk).toString())))
      expect(batches).toEqual(["first\n", "second\n"])
    }).pipe(Effect.provide(NodeChild.layer())))

  it.live("adopts a child started without Effect: what its pipes queued comes first, then the rest, then its exit", () =>
    Effect.gen(function*() {
      // 3 MB: past the queue's 1 MiB, so the pipes pause before the runner takes over and resume after
      const spec: Child.Spec = { command: "seq 1 400000; exit 3", shell: true, mergeStderr: true }
      const started = ChildPipes.open(Child.mergedArgv(spec), { stdin: "ignore" })
      yield* Effect.async<void>((resume) => {
        const check = () => (started.pipes.queued >= ChildPipes.MAX_QUEUED_BYTES ? resume(Effect.void) : void (started.pipes.wake = check))
        check()
      })
      // the reader that filled the queue has paused by the next turn
      yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
      expect(started.pipes.paused).toBe(true)
      const runner = NodeChild.adopt(started)
      let text = ""
      const status = yield* Effect.scoped(Effect.flatMap(
        runner.start(spec, (chunk) => Effect.sync(() => void (text += Buffer.from(chunk).toString("latin1")))),
        (running) => running.exit
      ))
      expect(status).toEqual({ code: 3, signal: null, status: 3 })
      expect(text).toBe(Array.from({ length: 400_000 }, (_, i) => `${i + 1}\n`).join(""))
      // a later start starts a child of its own
      const again = collect()
      expect((yield* Effect.scoped(Effect.flatMap(runner.start({ command: "echo again", shell: true }, again.onOutput), (r) => r.exit))).status).toBe(0)
      expect(again.text()).toBe("again\n")
    }))

  it("ChildPipes: a consumer that takes the queue as soon as it hears of a read never leaves the pipes paused", async () => {
    // every read fills this small queue: the consumer empties it inside the notice, before the reader would pause
    const started = ChildPipes.open(Child.mergedArgv({ command: "head -c 20000000 /dev/zero", shell: true, mergeStderr: true }), {
      stdin: "ignore",
      maxQueuedBytes: 64 * 1024
    })
    const p = started.pipes
    let total = 0
    const ended = new Promise<void>((resolve) => {
      const drain = () => {
        for (const region of p.queue) {
          total += region.bytes.length
          Slabs.giveBack(region)
        }
        p.queue = []
        p.queued = 0
        if (p.paused) {
          p.paused = false
          for (const reader of p.readers) reader.resume()
        }
        if (p.open === 0 && p.exited !== undefined) return resolve()
        p.wake = drain
      }
      p.wake = drain
    })
    const stalled = new Promise<string>((resolve) => setTimeout(() => resolve("stalled"), 20_000).unref())
    expect(await Promise.race([ended.then(() => "ended"), stalled])).toBe("ended")
    expect(total).toBe(20_000_000)
    for (const reader of p.readers) reader.destroy()
  }, 30_000)
})
