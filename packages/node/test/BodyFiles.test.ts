import { describe, expect, it } from "@effect/vitest"
import { BodyFiles } from "@spillway/core"
import * as NodeBodyFiles from "@spillway/node/NodeBodyFiles"
import { Effect, Exit, Layer, Scope } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-bodyfiles-")
const bytes = (s: string) => new TextEncoder().encode(s)
const text = (b: Uint8Array) => new TextDecoder().decode(b)

const readAll = (name: string) =>
  Effect.scoped(Effect.gen(function*() {
    const files = yield* BodyFiles.BodyFiles
    const file = yield* files.open(name)
    return text(yield* file.read(0, file.size + 10))
  }))

/** The behaviour every bytes store shares. */
const behaviour = (name: string, fresh: () => Layer.Layer<BodyFiles.BodyFiles>) =>
  describe(`${name}: shared behaviour`, () => {
    it.effect("publishes a body whole at commit, and nothing under its name before", () =>
      Effect.gen(function*() {
        const files = yield* BodyFiles.BodyFiles
        yield* Effect.scoped(Effect.gen(function*() {
          const sink = yield* files.create("a.log", "on-commit")
          yield* sink.write(bytes("one\n"))
          expect((yield* Effect.flip(readAll("a.log")))._tag).toBe("NotFound")
          yield* sink.write(bytes("two\n"))
          yield* sink.commit
        }))
        expect(yield* readAll("a.log")).toBe("one\ntwo\n")
        const part = yield* Effect.scoped(Effect.flatMap(files.open("a.log"), (f) => f.read(4, 3)))
        expect(text(part)).toBe("two")
      }).pipe(Effect.provide(fresh())))

    it.effect("leaves nothing behind when the scope closes before commit, and never replaces a body", () =>
      Effect.gen(function*() {
        const files = yield* BodyFiles.BodyFiles
        yield* Effect.scoped(Effect.flatMap(files.create("gone.log", "on-commit"), (s) => s.write(bytes("half"))))
        expect((yield* Effect.flip(readAll("gone.log")))._tag).toBe("NotFound")
        yield* Effect.scoped(Effect.flatMap(files.create("kept.log", "on-commit"), (s) => Effect.zipRight(s.write(bytes("first")), s.commit)))
        const second = yield* Effect.exit(Effect.scoped(Effect.flatMap(files.create("kept.log", "on-commit"), (s) => Effect.zipRight(s.write(bytes("second")), s.commit))))
        expect(Exit.isFailure(second)).toBe(true)
        expect(yield* readAll("kept.log")).toBe("first")
      }).pipe(Effect.provide(fresh())))

    it.effect("reads any range, short and long, into a new buffer or the caller's, and stops at the end", () =>
      Effect.gen(function*() {
        const files = yield* BodyFiles.BodyFiles
        // 200 KiB of bytes that say where they are: small reads and reads of several blocks
        const all = Uint8Array.from({ length: 200 * 1024 }, (_, i) => (i * 7 + (i >> 8)) & 0xff)
        yield* Effect.scoped(Effect.flatMap(files.create("ranges.log", "on-commit"), (s) => Effect.zipRight(s.write(all), s.commit)))
        yield* Effect.scoped(Effect.gen(function*() {
          const file = yield* files.open("ranges.log")
          expect(file.size).toBe(all.length)
          for (const [at, length] of [[0, 0], [0, 1], [5, 64 * 1024], [5, 64 * 1024 + 1], [1000, 150 * 1024], [all.length - 3, 64 * 1024], [all.length + 5, 10]] as const) {
            const want = Buffer.from(all.subarray(Math.min(at, all.length), Math.min(at + length, all.length)))
            const got = yield* file.read(at, length)
            expect(Buffer.from(got.buffer, got.byteOffset, got.length).equals(want), `${at} +${length}`).toBe(true)
            const into = new Uint8Array(length + 8)
            const back = yield* file.read(at, length, into.subarray(4, 4 + length))
            expect(Buffer.from(back.buffer, back.byteOffset, back.length).equals(want), `${at} +${length} into a buffer`).toBe(true)
            if (back.length > 0) expect(back.buffer, "the caller's buffer holds what was read").toBe(into.buffer)
          }
        }))
      }).pipe(Effect.provide(fresh())))

    it.effect("lets a visible body be read as it grows", () =>
      Effect.gen(function*() {
        const files = yield* BodyFiles.BodyFiles
        const scope = yield* Scope.make()
        const sink = yield* files.create("spool.log", "while-writing").pipe(Scope.extend(scope))
        yield* sink.write(bytes("early\n"))
        expect(yield* readAll("spool.log")).toBe("early\n")
        yield* sink.write(bytes("late\n"))
        expect(yield* readAll("spool.log")).toBe("early\nlate\n")
        yield* sink.commit
        yield* Scope.close(scope, Exit.void)
        expect(yield* readAll("spool.log")).toBe("early\nlate\n")
        yield* files.remove("spool.log")
        yield* files.remove("spool.log")
        expect((yield* Effect.flip(readAll("spool.log")))._tag).toBe("NotFound")
      }).pipe(Effect.provide(fresh())))

    it.effect("refuses names that are not bare names or plain relative paths, before any other step", () =>
      Effect.gen(function*() {
        const files = yield* BodyFiles.BodyFiles
        for (const bad of ["", "../etc/passwd", "/etc/passwd", ".hidden", "a/../b", "a//b", "x\0y", "a\\b", "%2e%2e", "a".repeat(200)]) {
          const opened = yield* Effect.flip(Effect.scoped(files.open(bad)))
          expect(opened._tag, bad).toBe("InvalidRequest")
          const created = yield* Effect.flip(Effect.scoped(files.create(bad, "on-commit")))
          expect(created._tag, bad).toBe("InvalidRequest")
          expect(opened.message.length).toBeLessThan(400)
        }
        yield* Effect.scoped(Effect.flatMap(files.create("conv-1/outputs/run-command-1.txt", "on-commit"), (s) => Effect.zipRight(s.write(bytes("nested")), s.commit)))
        expect(yield* readAll("conv-1/outputs/run-command-1.txt")).toBe("nested")
      }).pipe(Effect.provide(fresh())))
  })

behaviour("memory", () => BodyFiles.layerMemory)
const fsLayer = (dir: string) => NodeBodyFiles.layer({ directory: dir })
behaviour("file system", () => fsLayer(tempDir()))

describe("file system: what a planted file gets", () => {
  it.effect("a symbolic link, a hard link, a FIFO and a linked folder are refused without blocking", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const files = yield* BodyFiles.BodyFiles
      yield* Effect.scoped(Effect.flatMap(files.create("real.log", "on-commit"), (s) => Effect.zipRight(s.write(bytes("real")), s.commit)))
      Fs.writeFileSync(Path.join(dir, "..", "outside-secret"), "secret")
      Fs.symlinkSync(Path.join(dir, "..", "outside-secret"), Path.join(dir, "link.log"))
      Fs.linkSync(Path.join(dir, "real.log"), Path.join(dir, "hard.log"))
      execFileSync("mkfifo", [Path.join(dir, "fifo.log")])
      Fs.symlinkSync(Path.join(dir, ".."), Path.join(dir, "up"))
      for (const name of ["link.log", "hard.log", "fifo.log", "up/outside-secret"]) {
        const e = yield* Effect.flip(readAll(name))
        expect(e._tag, name).toBe("StoreFailed")
      }
    }).pipe(Effect.provide(fsLayer(dir)))
  })

  it.effect("files are 0600 in a 0700 directory", () => {
    const dir = Path.join(tempDir(), "made")
    return Effect.gen(function*() {
      const files = yield* BodyFiles.BodyFiles
      yield* Effect.scoped(Effect.flatMap(files.create("m.log", "on-commit"), (s) => Effect.zipRight(s.write(bytes("x")), s.commit)))
      expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(Fs.statSync(Path.join(dir, "m.log")).mode & 0o777).toBe(0o600)
      expect(Fs.readdirSync(dir)).toEqual(["m.log"])
    }).pipe(Effect.provide(fsLayer(dir)))
  })

  it.effect("removes what a killed writer left half-written, and nothing a live writer holds", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const files = yield* BodyFiles.BodyFiles
      // a writer that dies mid-write leaves its temporary file behind
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"])
      const dead = child.pid!
      child.kill("SIGKILL")
      yield* Effect.promise(() => new Promise((resolve) => child.once("exit", resolve)))
      Fs.writeFileSync(Path.join(dir, `.tmp-${dead}-abc123-2026-01-01T00-00-00-000Z-aaaaaa.log`), "x".repeat(4096))
      const scope = yield* Scope.make()
      const live = yield* files.create("live.log", "on-commit").pipe(Scope.extend(scope))
      yield* live.write(bytes("in progress"))
      expect(yield* files.sweepDebris).toBe(4096)
      expect(Fs.readdirSync(dir).filter((f) => f.startsWith(".tmp-"))).toHaveLength(1)
      yield* live.commit
      yield* Scope.close(scope, Exit.void)
      expect(yield* readAll("live.log")).toBe("in progress")
      expect(Fs.readdirSync(dir)).toEqual(["live.log"])
    }).pipe(Effect.provide(fsLayer(dir)))
  })
})
