import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { connectMcp, type Result } from "./mcpStdio.js"

/** A `spillway mcp` over a directory, through the official client, with the server's pid. */
const start = async (dir: string) => {
  const { client, transport } = await connectMcp(dir)
  const call = async (args: Record<string, unknown>) =>
    (await client.callTool({ name: "manage_process", arguments: args }, undefined, { timeout: 30_000 })) as unknown as Result
  return { client, call, pid: transport.pid! }
}

/** Whether any process that runs is left in a process group (on Linux, a zombie waiting for init to reap it does not count). */
const groupAlive = (pgid: number): boolean => {
  if (process.platform === "linux") return members(pgid).some((m) => running(m.pid))
  try {
    process.kill(-pgid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Waits until the group is gone, up to `millis`; how long it took, or undefined if it was still there. */
const goneWithin = async (pgid: number, millis: number): Promise<number | undefined> => {
  const began = Date.now()
  while (Date.now() - began < millis) {
    if (!groupAlive(pgid)) return Date.now() - began
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return groupAlive(pgid) ? undefined : Date.now() - began
}

/** Whether a process runs (a zombie, which only waits to be reaped, does not). */
const running = (pid: number): boolean => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/** The pids of a process group's members (Linux: from /proc). */
const members = (pgid: number): Array<{ pid: number; args: string }> =>
  Fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const stat = Fs.readFileSync(`/proc/${d}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[2]) !== pgid) return []
      return [{ pid: Number(d), args: Fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").join(" ") }]
    } catch {
      return []
    }
  })

/**
 * A job cannot outlive the server that owns it: killed with SIGKILL, the
 * server leaves the job's process group to its watchdog, which stops it;
 * and a group left anyway (its watchdog killed too) is stopped by the next
 * server over the same directory, which records how.
 */
describe("spillway mcp: jobs end with their server", () => {
  const dirs: Array<string> = []
  const groups: Array<number> = []
  const servers: Array<number> = []
  const tempDir = () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-mcp-end-"))
    dirs.push(dir)
    return dir
  }
  afterAll(() => {
    // whatever a failed test left: the servers and the job groups it started
    for (const pid of servers) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // gone
      }
    }
    for (const pgid of groups) {
      try {
        process.kill(-pgid, "SIGKILL")
      } catch {
        // gone
      }
    }
    for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("a job's `sleep 40` is gone 2 s after its server's SIGKILL, and its whole process group soon after", async () => {
    const dir = tempDir()
    const server = await start(dir)
    servers.push(server.pid)
    const started = await server.call({ action: "start", command: "sleep 40; echo never" })
    expect(started.isError).toBeFalsy()
    const pid = started.structuredContent!.pid as number
    groups.push(pid)
    expect(groupAlive(pid)).toBe(true)
    const sleeps = process.platform === "linux" ? members(pid).filter((m) => m.args.startsWith("sleep 40")) : []
    if (process.platform === "linux") expect(sleeps).toHaveLength(1)
    process.kill(server.pid, "SIGKILL")
    // the sleep itself is stopped at once; the watchdog leaves once the job's own process is gone, within the kill grace
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    for (const sleep of sleeps) expect(running(sleep.pid)).toBe(false)
    const took = await goneWithin(pid, 5_000)
    expect(took).toBeDefined()
    await server.client.close().catch(() => undefined)
  }, 30_000)

  it.skipIf(process.platform !== "linux")("a later server stops a group left running, and says so in the job's status", async () => {
    const dir = tempDir()
    const first = await start(dir)
    servers.push(first.pid)
    const started = await first.call({ action: "start", command: "sleep 40; echo never" })
    const pid = started.structuredContent!.pid as number
    groups.push(pid)
    // the watchdog is the member of the group that is not the job's own processes: without it, nothing stops the job
    const deadline = Date.now() + 5_000
    let watchdogs: Array<{ pid: number; args: string }> = []
    while (watchdogs.length === 0 && Date.now() < deadline) {
      watchdogs = members(pid).filter((m) => m.args.includes("trap"))
      if (watchdogs.length === 0) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(watchdogs).toHaveLength(1)
    process.kill(watchdogs[0]!.pid, "SIGKILL")
    process.kill(first.pid, "SIGKILL")
    await first.client.close().catch(() => undefined)
    // nothing of the first server is left to stop the job
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(groupAlive(pid)).toBe(true)
    const second = await start(dir)
    servers.push(second.pid)
    const took = await goneWithin(pid, 8_000)
    expect(took).toBeDefined()
    const status = await second.call({ action: "poll", pid })
    expect(status.structuredContent).toMatchObject({ status: "exited", signal: "SIGTERM" })
    await second.client.close()
  }, 40_000)
})
