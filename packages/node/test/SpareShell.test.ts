import { describe, expect, it } from "@effect/vitest"
import { Child } from "@spillway/core"
import { NodeChild } from "@spillway/node"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Spare from "../src/internal/spareShell.js"

interface Ran {
  readonly out: string
  readonly err: string
  readonly code: number | null
}

const collect = (child: ChildProcess.ChildProcess): Promise<Ran> =>
  new Promise((resolve) => {
    let out = ""
    let err = ""
    child.stdout!.on("data", (d) => (out += d))
    child.stderr!.on("data", (d) => (err += d))
    child.on("close", (code) => resolve({ out, err, code }))
  })

/** A spare, asked for and waited for. */
const ready = async (spares: Spare.Spares, script: string): Promise<ChildProcess.ChildProcess> => {
  for (let i = 0; i < 200; i++) {
    spares.refill()
    await new Promise((r) => setTimeout(r, 10))
    const child = spares.take(script)
    if (child !== undefined) return child
  }
  throw new Error("no spare shell became ready within 2 s")
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("a spare shell", () => {
  // scripts whose output, errors and status a spare must give exactly as `sh -c` does
  const scripts = [
    "echo hi",
    "echo hi\n",
    "printf 'a\\nb'; printf 'c'",
    "echo one\necho two\n\necho four",
    "echo 'a line that goes on \\\n still'",
    "echo trailing\\",
    "exit 3",
    "echo out; echo err >&2; exit 7",
    "cat; echo after-stdin",
    "echo \"[$__spillway_s][$__spillway_l]\"",
    "echo \"$0\" \"$#\" \"$?\"",
    "x=1; f() { echo \"f $x $1\"; }; f arg",
    "cat <<EOF\nhere $((1 + 2))\nEOF",
    "exec 2>&1; echo merged >&2",
    "if then fi",
    "echo $(echo nested) `echo backticks`",
    "trap 'echo bye' EXIT; echo first",
    "set -e; false; echo not-reached",
    `echo ${"x".repeat(12_000)} | wc -c`
  ]

  it("runs each script as sh -c does: the same output, errors and status", async () => {
    const spares = Spare.make()
    try {
      for (const script of scripts) {
        const expected = await collect(ChildProcess.spawn("/bin/sh", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] }))
        const got = await collect(await ready(spares, script))
        // a syntax error is worded by `eval` in the spare: its status and its place in the output are what must match
        if (script === "if then fi") {
          expect(got.code).toBe(expected.code)
          expect(got.out).toBe(expected.out)
          expect(got.err).toMatch(/Syntax error/)
        } else {
          expect({ script, ...got }).toEqual({ script, ...expected })
        }
      }
    } finally {
      spares.close()
    }
  }, 60_000)

  it("stands in for /bin/sh -c SCRIPT only", () => {
    expect(Spare.scriptOf(["/bin/sh", "-c", "echo hi"])).toBe("echo hi")
    expect(Spare.scriptOf(["/bin/sh", "-c", "echo hi", "sh", "x"])).toBeUndefined()
    expect(Spare.scriptOf(["/bin/bash", "-c", "echo hi"])).toBeUndefined()
    expect(Spare.scriptOf(["echo", "hi"])).toBeUndefined()
    // a long script is read faster by a shell of its own than a byte at a time
    expect(Spare.scriptOf(["/bin/sh", "-c", `echo ${"x".repeat(Spare.MAX_SCRIPT_LENGTH)}`])).toBeUndefined()
    expect(Spare.scriptOf(["/bin/sh", "-c", "x".repeat(Spare.MAX_SCRIPT_LENGTH)])).toBe("x".repeat(Spare.MAX_SCRIPT_LENGTH))
  })

  it("runs in its own process group, and close stops the one held", async () => {
    const spares = Spare.make()
    const child = await ready(spares, "ps -o pgid= -p $$")
    expect(spares.take("echo none")).toBeUndefined()
    const ran = await collect(child)
    expect(Number(ran.out.trim())).toBe(child.pid)
    // the next one is started when asked for, after the command's end
    spares.refill()
    let held: number | undefined
    for (let i = 0; i < 200 && held === undefined; i++) {
      await new Promise((r) => setTimeout(r, 10))
      held = listSpares().find((pid) => pid !== child.pid)
    }
    expect(held).toBeDefined()
    spares.close()
    for (let i = 0; i < 200 && alive(held!); i++) await new Promise((r) => setTimeout(r, 10))
    expect(alive(held!)).toBe(false)
    expect(spares.take("echo hi")).toBeUndefined()
  })

  it("is not started inside a line that came before it: the refill waits for that line's end", async () => {
    const spares = Spare.make()
    try {
      const before = new Set(listSpares())
      spares.refill()
      // a line right after the last one's end: no spare is ready, and the one due is not started under it
      expect(spares.take("echo now")).toBeUndefined()
      await new Promise((r) => setTimeout(r, 100))
      expect(listSpares().filter((pid) => !before.has(pid))).toEqual([])
      // that line's end asks again, and a spare is started
      const child = await ready(spares, "echo later")
      expect((await collect(child)).out).toBe("later\n")
    } finally {
      spares.close()
    }
  })

  it("ends when the process that started it dies without a word", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-spare-"))
    const pidFile = Path.join(dir, "spare.pid")
    // a parent that starts a spare, writes its pid and is killed with SIGKILL
    const parent = ChildProcess.spawn(process.execPath, [
      "-e",
      `const c = require("node:child_process").spawn("/bin/sh", ["-c", ${JSON.stringify(Spare.SPARE_SCRIPT)}], { stdio: ["pipe", "pipe", "pipe"], detached: true });
       require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(c.pid)); setInterval(() => {}, 1000)`
    ], { stdio: "ignore" })
    try {
      for (let i = 0; i < 500 && !Fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 10))
      const pid = Number(Fs.readFileSync(pidFile, "utf8"))
      expect(alive(pid)).toBe(true)
      parent.kill("SIGKILL")
      for (let i = 0; i < 300 && alive(pid); i++) await new Promise((r) => setTimeout(r, 10))
      expect(alive(pid)).toBe(false)
    } finally {
      parent.kill("SIGKILL")
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the runner with a spare shell", () => {
  /** Runs a shell line through the runner and returns what it printed. */
  const printed = (spec: Child.Spec) =>
    Effect.gen(function*() {
      let out = ""
      const status = yield* Child.run(spec, (chunk) => Effect.sync(() => void (out += Buffer.from(chunk).toString("utf8"))))
      return { out, status: status.status }
    })

  it.live("runs the next shell line in the spare it started, and a line with a directory of its own as usual", () =>
    Effect.gen(function*() {
      const first = yield* printed({ command: "echo $$", shell: true, mergeStderr: true })
      // the first line started a spare after it
      let spare: number | undefined
      for (let i = 0; i < 200 && spare === undefined; i++) {
        yield* Effect.sleep("10 millis")
        spare = listSpares()[0]
      }
      expect(spare).toBeDefined()
      expect(Number(first.out.trim())).not.toBe(spare)
      const second = yield* printed({ command: "echo $$; echo err >&2; exit 4", shell: true, mergeStderr: true })
      expect(second).toEqual({ out: `${spare}\nerr\n`, status: 4 })
      // a line with a directory of its own starts as usual, and never takes the spare held
      let next: number | undefined
      for (let i = 0; i < 200 && next === undefined; i++) {
        yield* Effect.sleep("10 millis")
        next = listSpares()[0]
      }
      const elsewhere = yield* printed({ command: "echo $$; pwd", shell: true, cwd: Os.tmpdir() })
      expect(elsewhere.out.split("\n")[0]).not.toBe(String(next))
      expect(elsewhere.out.split("\n")[1]).toBe(Fs.realpathSync(Os.tmpdir()))
      expect(listSpares()).toContain(next)
    }).pipe(Effect.scoped, Effect.provide(NodeChild.layer({ spareShell: true }))))

  it.live("made ready, starts its spare as it is built, and runs its first shell line in it", () =>
    Effect.gen(function*() {
      let spare: number | undefined
      for (let i = 0; i < 200 && spare === undefined; i++) {
        yield* Effect.sleep("10 millis")
        spare = listSpares()[0]
      }
      expect(spare).toBeDefined()
      const first = yield* printed({ command: "echo $$", shell: true, mergeStderr: true })
      expect(first).toEqual({ out: `${spare}\n`, status: 0 })
    }).pipe(Effect.scoped, Effect.provide(NodeChild.layer({ spareShell: "ready" }))))

  it.live("stops its spare when its scope closes", () =>
    Effect.gen(function*() {
      const held = yield* Effect.gen(function*() {
        yield* printed({ command: "true", shell: true })
        let spare: number | undefined
        for (let i = 0; i < 200 && spare === undefined; i++) {
          yield* Effect.sleep("10 millis")
          spare = listSpares()[0]
        }
        return spare
      }).pipe(Effect.scoped, Effect.provide(NodeChild.layer({ spareShell: true })))
      expect(held).toBeDefined()
      for (let i = 0; i < 200 && alive(held!); i++) yield* Effect.sleep("10 millis")
      expect(alive(held!)).toBe(false)
    }))
})

/** The spare shells of this process: its children running the spare's script. */
const listSpares = (): Array<number> =>
  ChildProcess.execFileSync("ps", ["-o", "pid=,ppid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("__spillway_s"))
    .map((line) => Number(line.trim().split(/\s+/)[0]))
