import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Process, ProcessView } from "@spillway/core"
import { NodeProcess } from "@spillway/node"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { skipReason, tmpfs } from "./tmpfs.js"

const bin = fileURLToPath(new URL("../../cli/bin/spillway.cjs", import.meta.url))
const me: Process.Caller = { owner: "tester", channel: "chat" }

const view = (result: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) => {
  if (result._tag !== "StatusView") throw new Error("expected the status view")
  return result
}

/**
 * A full disk, made in the test as a small tmpfs: a job whose spool fills
 * it is reported exited with the reason and expires; kept output stays
 * readable with `spillway read` and `grep`; and an MCP server that cannot
 * start says why on its standard error and in its reply to the client.
 */
describe.skipIf(skipReason !== undefined)(`a full disk${skipReason !== undefined ? ` (skipped: ${skipReason})` : ""}`, () => {
  const jobs = tmpfs("spillway-full-jobs-", 1024)
  const reads = tmpfs("spillway-full-reads-", 512)

  it.live("a job whose spool fills the disk is reported exited, says the disk is full, and expires", () =>
    Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(NodeProcess.layer({
        directory: jobs.dir,
        pools: { spool: { ttlMillis: 1_500 } },
        sweepEveryMillis: 200
      }))
      const started = yield* Process.start(me, { command: "head -c 3000000 /dev/zero | od -v | head -c 3000000; exit 4", shell: true }).pipe(
        Effect.provide(context)
      )
      const ended = view(yield* Process.wait(me, { pid: started.pid, timeoutMillis: 15_000 }).pipe(Effect.provide(context)))
      expect(ended.retention).toMatchObject({ status: "exited", exit_code: 4 })
      expect(ended.retention.capture_error).toContain("the disk is full")
      // the record follows the job to its end: it expires, and its output is removed
      const deadline = Date.now() + 10_000
      let gone = false
      while (!gone && Date.now() < deadline) {
        yield* Effect.sleep("200 millis")
        gone = (yield* Effect.either(Process.poll(me, { pid: started.pid }).pipe(Effect.provide(context))))._tag === "Left"
      }
      expect(gone).toBe(true)
      expect((yield* Process.list(me).pipe(Effect.provide(context))).map((j) => j.pid)).not.toContain(started.pid)
    })), 40_000)

  const spillway = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: reads.dir, SPILLWAY_OUTPUT_DIR: reads.dir, ...env },
      timeout: 30_000
    })
    return { status: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
  }

  it("kept output is read and searched on a full disk, by the quick reader and by the whole command", () => {
    const kept = spillway(["run", "-c", "seq 1 3000"])
    const name = /spillway read (\S+\.log)/.exec(kept.stdout + kept.stderr)?.[1]
    expect(name).toBeDefined()
    reads.fill()
    expect(() => Fs.writeFileSync(Path.join(reads.dir, "one-more"), "x".repeat(64 * 1024))).toThrow(/ENOSPC/)
    for (const quick of ["1", "0"]) {
      const read = spillway(["read", name!, "--offset", "2999", "--limit", "2"], { SPILLWAY_QUICK: quick })
      expect(read.stderr).not.toContain("SQLITE")
      expect(read.status).toBe(0)
      expect(read.stdout).toBe("2999\n3000\n")
    }
    const grep = spillway(["grep", "^2999$", name!])
    expect(grep.status).toBe(0)
    expect(grep.stdout).toContain("2999:2999")
  }, 60_000)

  it("an MCP server that cannot start on a full disk says why on stderr and in its reply", async () => {
    // the disk is full already (the test above filled it); this server has no cursor key yet and cannot make one
    const dir = reads.dir
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "mcp", "--dir", Path.join(dir, "fresh")],
      env: { PATH: process.env.PATH ?? "", HOME: dir, SPILLWAY_OWNER: "tester" },
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()))
    const client = new Client({ name: "spillway-test", version: "1.0.0" })
    const failed = await client.connect(transport).then(() => undefined, (e: Error) => e)
    await client.close().catch(() => undefined)
    expect(failed?.message).toContain("cannot start")
    expect(failed?.message).toContain("the disk is full")
    const deadline = Date.now() + 10_000
    while (!stderr.includes("disk is full") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(stderr).toContain("spillway mcp:")
    expect(stderr).toContain("the disk is full")
  }, 30_000)
})
