/**
 * A small tmpfs of its own for a test file (a full disk on demand): mounted
 * before the file's tests, unmounted and removed after them. Mounting needs
 * root (as the tests have in CI); elsewhere `skip` says why the file's tests
 * do not run.
 */
import { afterAll, beforeAll } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** Whether this process may mount a tmpfs, found once by trying. */
const mountable = ((): string | undefined => {
  if (process.platform !== "linux") return `tmpfs mounts are a Linux feature; this is ${process.platform}`
  const probe = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-tmpfs-probe-"))
  try {
    ChildProcess.execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "pipe", timeout: 10_000 })
    ChildProcess.execFileSync("umount", [probe], { stdio: "pipe", timeout: 10_000 })
    return undefined
  } catch (e) {
    return `mounting a tmpfs is not permitted here (${String((e as Error).message).split("\n")[0]}); run as root to test a full disk`
  } finally {
    Fs.rmSync(probe, { recursive: true, force: true })
  }
})()

/** Why the full-disk tests cannot run here, or undefined when they can. */
export const skipReason: string | undefined = mountable

/** A mounted tmpfs of `sizeKiB`, with `fill` to use up what is left of it. */
export interface Tmpfs {
  readonly dir: string
  /** Writes a file of zeros until the disk is full. */
  readonly fill: () => void
}

/** Mounts a tmpfs of `sizeKiB` before the file's tests; unmounts and removes it after them (lazily, if a process still holds it). */
export const tmpfs = (prefix: string, sizeKiB: number): Tmpfs => {
  let dir = ""
  beforeAll(() => {
    if (skipReason !== undefined) return
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
    ChildProcess.execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", dir], { stdio: "pipe", timeout: 10_000 })
  })
  afterAll(() => {
    if (dir === "") return
    try {
      ChildProcess.execFileSync("umount", [dir], { stdio: "pipe", timeout: 10_000 })
    } catch {
      ChildProcess.execFileSync("umount", ["-l", dir], { stdio: "pipe", timeout: 10_000 })
    }
    Fs.rmSync(dir, { recursive: true, force: true })
  })
  return {
    get dir() {
      return dir
    },
    fill: () => {
      const fd = Fs.openSync(Path.join(dir, `filler-${Fs.readdirSync(dir).length}`), "w")
      const zeros = Buffer.alloc(64 * 1024)
      try {
        for (;;) Fs.writeSync(fd, zeros)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e
        // the last blocks: a write smaller than a page may still fit
        try {
          for (;;) Fs.writeSync(fd, zeros, 0, 512)
        } catch {
          // full
        }
      } finally {
        Fs.closeSync(fd)
      }
    }
  }
}
