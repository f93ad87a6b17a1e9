import { describe, expect, it } from "@effect/vitest"
import { Spillway } from "@spillway/node"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-promise-")
const alice = { owner: "alice", channel: "app" }
const bob = { owner: "bob", channel: "app" }

/** An AWS access key id the masker must catch (not the documented example key, which it keeps). */
const awsKey = "AKIA" + "Z3MHQ7XK2P4L9WTR"

/** An output too long for a preview: 5,000 numbered lines, a key in the middle, an error at the end. */
const longOutput = () => {
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`)
  lines[2500] = `aws_access_key_id=${awsKey}`
  lines.push("error: the last step failed")
  return lines.join("\n") + "\n"
}

/** Whether a process (group leader) still exists. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The rejection of a promise, or the test fails. */
const rejection = async (promise: Promise<unknown>): Promise<{ readonly _tag: string; readonly message: string }> => {
  try {
    await promise
  } catch (e) {
    return e as { readonly _tag: string; readonly message: string }
  }
  throw new Error("expected the promise to reject")
}

describe("Spillway (the Promise face)", () => {
  it("keeps a long output as a bounded, masked preview, and a second open over the directory reads it back", async () => {
    const dir = tempDir()
    const first = await Spillway.open({ dir, owner: alice })
    const kept = await first.keepOutput(longOutput(), { exitCode: 1 })
    await first.close()
    expect(kept.truncated).toBe(true)
    expect([...kept.text].length).toBeLessThanOrEqual(2000)
    expect(kept.text).toContain("error: the last step failed")
    expect(kept.text).toContain(`read_spill filename=${kept.filename}`)
    expect(Fs.existsSync(Path.join(dir, kept.filename!))).toBe(true)

    await using second = await Spillway.open({ dir, owner: alice })
    const page = await second.read(kept.filename!, { offset: 2500, limit: 3 })
    expect(page.text).toMatch(/^line 2500\naws_access_key_id=\S{20}\nline 2502\n$/)
    expect(page.text).not.toContain(awsKey.slice(4))
    expect(page.nextOffset).toBe(2503)
    const found = await second.grep("^error:", kept.filename!)
    expect(found.matches).toEqual([{ line: 5001, text: "error: the last step failed", cut: false }])
    // the same body through a cursor, paged by code points
    const cursor = await second.cursorFor(kept.filename!)
    const paged = await second.getToolOutput(cursor)
    expect("content" in paged && paged.content.startsWith("line 1\nline 2\n")).toBe(true)
    // and through the tools a model calls
    const tool = await second.tool("read_spill", { filename: kept.filename!, offset: 5001 })
    expect(tool.text).toContain("error: the last step failed")
  })

  it("keeps bytes as they are, and short output whole", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner: alice })
    const short = await sw.keepOutput(new TextEncoder().encode("héllo\nworld\n"))
    expect(short).toMatchObject({ text: "héllo\nworld\n", truncated: false, totalLines: 2, exitCode: 0 })
    expect(short.filename).toBeUndefined()
  })

  it("runs a real command, shell line or argv, and keeps its merged output", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner: alice })
    const ran = await sw.run("for i in $(seq 1 3000); do echo out $i; done; echo 'fatal: disk full' >&2; exit 3")
    expect(ran.exitCode).toBe(3)
    expect(ran.truncated).toBe(true)
    expect(ran.text).toContain("fatal: disk full")
    const tail = await sw.read(ran.filename!, { offset: 3001 })
    expect(tail.text).toBe("fatal: disk full\n")
    const argv = await sw.run(["printf", "%s\\n", "a b", "c"])
    expect(argv).toMatchObject({ text: "a b\nc\n", exitCode: 0, truncated: false, timedOut: false })
    const stopped = await sw.run(["sleep", "20"], { timeoutMs: 300 })
    expect(stopped.timedOut).toBe(true)
    expect(stopped.signal).toBe("SIGTERM")
  })

  it("starts, waits for and kills jobs, and close stops the jobs still running", async () => {
    const dir = tempDir()
    const sw = await Spillway.open({ dir, owner: alice })
    const quick = await sw.start("echo started; echo done")
    const view = await sw.wait(quick.pid, { timeoutMs: 10_000 })
    expect(view.retention.status).toBe("exited")
    expect(view.output).toContain("done")
    const killed = await sw.start(["sleep", "30"])
    await sw.kill(killed.pid)
    expect(alive(killed.pid)).toBe(false)
    const running = await sw.start("sleep 30")
    expect(alive(running.pid)).toBe(true)
    expect((await sw.jobs()).map((j) => j.pid)).toContain(running.pid)
    await sw.close()
    expect(alive(running.pid)).toBe(false)
    // a closed Spillway says so
    const after = await rejection(sw.jobs())
    expect(after._tag).toBe("InvalidRequest")
    expect(after.message).toContain("closed")
  })

  it("rejects with the library's tagged errors, never a wrapped string", async () => {
    const dir = tempDir()
    await using mine = await Spillway.open({ dir, owner: alice })
    const kept = await mine.keepOutput(longOutput())
    const missing = await rejection(mine.read("2026-01-01T00-00-00-000Z-abcdef.log"))
    expect(missing._tag).toBe("NotFound")
    expect(Spillway.isError(missing)).toBe(true)
    expect((await rejection(mine.read("../etc/passwd")))._tag).toBe("InvalidRequest")
    expect((await rejection(mine.read(kept.filename!, { offset: -1 })))._tag).toBe("InvalidRequest")
    expect((await rejection(mine.grep("(a", kept.filename!)))._tag).toBe("GrepPatternError")
    expect((await rejection(mine.grep("x", kept.filename!, { maxResults: 1_000_000 })))._tag).toBe("InvalidRequest")
    expect((await rejection(mine.getToolOutput("not-a-cursor")))._tag).toBe("CursorError")
    expect((await rejection(mine.run("")))._tag).toBe("InvalidRequest")
    expect((await rejection(mine.run(["true"], { timeoutMs: -5 })))._tag).toBe("InvalidRequest")
    expect((await rejection(mine.run(["/no/such/program"])))._tag).toBe("SpawnFailed")
    expect((await rejection(mine.poll(999_999)))._tag).toBe("NotFound")
    const refused = await rejection(mine.tool("read_spill", { filename: "nope.log" }))
    expect(refused._tag).toBe("ToolFailure")
    expect(refused).toMatchObject({ reason: "NotFound" })
    // the read-only grant holds the read methods alone, and calls no other tool
    const reader = mine.readOnly()
    expect(Object.keys(reader).sort()).toEqual(["getToolOutput", "grep", "owner", "read", "readTool"])
    expect((await reader.readTool("grep_spill", { filename: kept.filename!, pattern: "^error:" })).text).toContain("error: the last step failed")
    const notRead = await rejection(reader.readTool("run_command" as never, { command: "touch x" } as never))
    expect(notRead._tag).toBe("ToolFailure")
    expect(notRead.message).toContain("not a read tool")
    // another owner over the same directory is refused, whoever holds the name
    await using theirs = await Spillway.open({ dir, owner: bob })
    const denied = await rejection(theirs.read(kept.filename!))
    expect(denied._tag).toBe("AccessDenied")
    expect(denied.message).toContain("not permission")
  })

  it("delivers a tool result with the scratch profile's strategy, kept under a name the read tools take", async () => {
    await using sw = await Spillway.open({ dir: tempDir(), owner: alice })
    const output = longOutput()
    const tail = await sw.deliver("fetch_logs", output, { policy: { strategy: "tail" }, ceiling: { maxBytes: 4000 } })
    expect(tail.truncated).toBe(true)
    expect(new TextEncoder().encode(JSON.stringify(tail.response)).length).toBeLessThanOrEqual(4000)
    expect(tail.body).toContain("error: the last step failed")
    expect(tail.body).not.toContain("line 1\n")
    expect(tail.capture?.complete).toBe(true)
    expect(tail.body).toContain(`Full output: ${tail.capture!.path}`)
    const back = await sw.read(tail.capture!.path, { offset: 2501, limit: 1 })
    expect(back.text).toMatch(/^aws_access_key_id=\S{20}\n$/)
    expect(back.text).not.toContain(awsKey.slice(4))
    const head = await sw.deliver("fetch_logs", output, { policy: { strategy: "head" }, ceiling: { maxLines: 10 } })
    expect(head.ranges).toEqual([{ from: 1, to: 9 }])
    expect((await rejection(sw.deliver("x", output, { ceiling: { maxBytes: 0 } })))._tag).toBe("InvalidRequest")
    const github = "ghp_" + "R8kT2mQ9vX4bN7pL1sW6yH3jD5fG0aZcE2uK"
    const small = await sw.deliver("fetch_logs", `token ${github}\n`)
    expect(small.truncated).toBe(false)
    expect(small.body).not.toContain(github.slice(4))
  })
})
