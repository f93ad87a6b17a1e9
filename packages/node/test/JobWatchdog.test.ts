import { describe, expect, it } from "@effect/vitest"
import { Child } from "@spillway/core"
import { NodeChild } from "@spillway/node"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Whether a process group has a member that runs: on Linux a zombie (a
 * process that ended, waiting for init to reap it) does not count.
 */
const groupRuns = (pgid: number): boolean => {
  if (process.platform !== "linux") {
    try {
      process.kill(-pgid, 0)
      return true
    } catch {
      return false
    }
  }
  return Fs.readdirSync("/proc").some((d) => {
    if (!/^\d+$/.test(d)) return false
    try {
      const stat = Fs.readFileSync(`/proc/${d}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return Number(fields[2]) === pgid && fields[0] !== "Z"
    } catch {
      return false
    }
  })
}

/** A `sleep` in a process group of its own, as a job left by an ended server is; killed at the end of the test whatever happens. */
const orphan = Effect.acquireRelease(
  Effect.sync(() => {
    const c = ChildProcess.spawn("sleep", ["30"], { detached: true, stdio: "ignore" })
    c.unref()
    return c.pid!
  }),
  (pid) =>
    Effect.sync(() => {
      try {
        process.kill(-pid, "SIGKILL")
      } catch {
        // stopped by the test
      }
    })
)

/**
 * The job runner's watchdog and start marks: a job's process is known by
 * its start mark, and what an ended server left is stopped only while the
 * process with that pid is still the one recorded.
 */
describe.skipIf(process.platform === "win32")("NodeChild: jobs and what they leave", () => {
  const runner = NodeChild.make({ watchdog: true })

  it.live("a watched child has a start mark, and a child that ended leaves no watchdog behind", () =>
    Effect.scoped(Effect.gen(function*() {
      const running = yield* runner.start({ command: "echo hi", shell: true }, () => Effect.void)
      expect(running.startMark).toMatch(/^(linux|ps):/)
      const status = yield* running.exit
      expect(status.code).toBe(0)
      // the watchdog was told the end was seen: the group empties without a signal
      const began = Date.now()
      while (Date.now() - began < 3_000 && groupRuns(running.pid)) yield* Effect.sleep("50 millis")
      expect(groupRuns(running.pid)).toBe(false)
    })), 10_000)

  it.scoped("a missing program is refused before a shell could report it as exit 127", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(runner.start({ command: "no-such-program-here" }, () => Effect.void))
      expect(failed).toBeInstanceOf(Child.SpawnFailed)
      expect(failed.message).toContain("not found")
    }))

  it.scoped("stopLeftover signals no process whose start mark is not the recorded one (a pid used again)", () =>
    Effect.gen(function*() {
      const pid = yield* orphan
      const stopped = yield* runner.stopLeftover!(pid, "linux:another-boot:1", 200)
      expect(stopped).toBeUndefined()
      expect(alive(pid)).toBe(true)
    }))

  it.live("stopLeftover stops the group whose leader still has the recorded start mark", () =>
    Effect.scoped(Effect.gen(function*() {
      const pid = yield* orphan
      // the mark a job's record keeps, read the way the runner reads it
      const started = yield* runner.start({ command: "true" }, () => Effect.void)
      yield* started.exit
      const mark = started.startMark!.startsWith("linux:")
        ? started.startMark!.replace(/:\d+$/, `:${(ChildProcess.execFileSync("cat", [`/proc/${pid}/stat`], { encoding: "utf8" }).split(") ")[1] ?? "").split(" ")[19]}`)
        : `ps:${ChildProcess.execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], { encoding: "utf8" }).trim()}`
      const stopped = yield* runner.stopLeftover!(pid, mark, 2_000)
      expect(stopped).toBe("SIGTERM")
      expect(alive(pid)).toBe(false)
    })), 10_000)
})
