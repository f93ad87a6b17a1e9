import { afterAll, describe, expect, it } from "@effect/vitest"
import type * as ChildPipes from "@spillway/node/ChildPipes"
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { tryShortRun } from "../src/shortRun.js"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))
const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
const KNOWN = "Zq8vN3xL0pR7tY2wK5mB9cF4hJ6dS1gA"

const made: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-short-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly saved: ReadonlyArray<string>
  readonly files: number
}

const named = (text: string) => text.replace(/[\w.-]+\.log\b/g, "NAME.log")

/** Runs the bin with the short run (quick) or the whole command (SPILLWAY_QUICK=0): what it printed, and what it kept. */
const run = (args: ReadonlyArray<string>, options: { quick: boolean; env?: Record<string, string>; input?: Buffer }): Ran => {
  const dir = tempDir()
  const r = spawnSync(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: Os.tmpdir(),
      SPILLWAY_OUTPUT_DIR: dir,
      ...(options.quick ? {} : { SPILLWAY_QUICK: "0" }),
      ...options.env
    },
    ...(options.input !== undefined ? { input: options.input } : {}),
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024
  })
  const logs = Fs.readdirSync(dir).filter((f) => f.endsWith(".log"))
  return {
    status: r.status,
    stdout: named(r.stdout.toString("utf8")),
    stderr: named(r.stderr.toString("utf8")),
    saved: logs.map((f) => Fs.readFileSync(Path.join(dir, f), "utf8")),
    files: Fs.readdirSync(dir).length
  }
}

const same = (args: ReadonlyArray<string>, env: Record<string, string> = {}, input?: Buffer) => {
  const short = run(args, { quick: true, env, ...(input !== undefined ? { input } : {}) })
  const whole = run(args, { quick: false, env, ...(input !== undefined ? { input } : {}) })
  expect(short, args.join(" ")).toEqual(whole)
  return short
}

/**
 * The short run finishes a short output without loading Effect, and hands a
 * long one to the run program: either way a person sees what the whole
 * command shows, byte for byte, and keeps what it keeps.
 */
describe("spillway run: the short run", () => {
  it("prints short outputs of every kind as the whole command does, and keeps nothing", () => {
    const env = { GITHUB_TOKEN: KNOWN }
    const forms: ReadonlyArray<ReadonlyArray<string>> = [
      ["run", "--", "true"],
      ["run", "--", "false"],
      ["run", "--json", "--", "true"],
      ["run", "--", "printf", "no newline at the end"],
      ["run", "-c", "echo out; echo err >&2; exit 7"],
      ["run", "-c", `echo "token ${TOKEN} and the known value ${KNOWN} here"`],
      ["run", "--json", "-c", `echo ${TOKEN}; exit 3`],
      // a secret cut across two writes of the command
      ["run", "-c", `printf 'ghp_aB3dE6gH9jK2'; sleep 0.05; printf 'mN5pQ8sT1vW4yZ7bC0eF3hJ6 after\\n'`],
      ["run", "-c", "printf 'caf\\303\\251 \\377\\376 broken bytes\\r\\nline two\\r\\n'"],
      ["run", "-c", "printf '\\033[31mred\\033[0m\\n'"],
      ["run", "-c", "kill -TERM $$"],
      ["run", "--stdin", "--", "true"],
      // exactly at the cap, and one character past it (many bytes a character: decided once the command ended)
      ["run", "--max-chars", "400", "-c", "printf '%.0s界' $(seq 1 400)"],
      ["run", "--max-chars", "400", "-c", "printf '%.0s界' $(seq 1 401)"],
      ["run", "--max-chars=400", "--json", "-c", "printf '%.0sx' $(seq 1 401)"]
    ]
    for (const form of forms) {
      const r = same(form, env)
      if (!r.stdout.includes("NAME.log")) expect(r.files, form.join(" ")).toBe(0)
    }
    const secret = run(["run", "-c", `echo ${TOKEN} ${KNOWN}`], { quick: true, env })
    expect(secret.stdout).not.toContain(TOKEN)
    expect(secret.stdout).not.toContain(KNOWN)
    // a secret-looking value too short to mask is named in --json, as the whole command names it
    const notMasked = same(["run", "--json", "--", "echo", "hi"], { API_KEY: "short" })
    expect(JSON.parse(notMasked.stdout).notMasked).toEqual([{ name: "API_KEY", reason: expect.any(String) }])
  })

  it("hands an output too long to show whole to the run program, which keeps all of it", () => {
    // around the point where the short run hands over (four bytes a character of --max-chars, and four more), and
    // past the queue's limit (1 MiB), where the pipes pause until the run program reads on
    const lines = (n: number) => ["run", "--max-chars", "400", "--", "seq", "1", String(n)]
    for (const form of [lines(330), lines(331), lines(400), lines(20_000), ["run", "--", "seq", "1", "400000"], ["run", "--max-chars", "1000000", "--", "seq", "1", "400000"]]) {
      const r = same(form)
      if (r.saved.length > 0) {
        const count = Number(form[form.length - 1])
        expect(r.saved[0]).toBe(Array.from({ length: count }, (_, i) => `${i + 1}\n`).join(""))
      }
    }
    expect(run(lines(20_000), { quick: true }).saved).toHaveLength(1)
    // a secret past the hand-over point is masked in the kept body too
    const masked = run(["run", "-c", `seq 1 3000; echo ${TOKEN}; seq 1 3000`], { quick: true })
    expect(masked.saved).toHaveLength(1)
    expect(masked.saved[0]).not.toContain(TOKEN)
    expect(masked.saved[0]!.split("\n")).toHaveLength(6002)
  })

  it("passes stdin on to the command, short and long, and over a hand-over", () => {
    expect(same(["run", "--stdin", "--", "cat"], {}, Buffer.from("a\nb\n")).stdout).toBe("a\nb\n")
    const long = Buffer.from(Array.from({ length: 50_000 }, (_, i) => `input line ${i}\n`).join(""))
    const r = same(["run", "--stdin", "--", "cat"], {}, long)
    expect(r.saved).toEqual([long.toString("utf8")])
    // without --stdin the command's stdin is closed
    expect(same(["run", "-c", "cat; echo end"], {}, Buffer.from("not passed\n")).stdout).toBe("end\n")
  })

  it("passes Ctrl-C to the command and shows what it printed; a command that ignores it is stopped", async () => {
    const interrupted = async (line: string, quick: boolean) => {
      const marker = `short-run-${process.pid}-${Date.now()}-${quick}`
      const child = spawn(process.execPath, [bin, "run", "-c", `${line}; : ${marker}`], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: tempDir(), ...(quick ? {} : { SPILLWAY_QUICK: "0" }) },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      child.stdout.on("data", (d) => (stdout += d))
      await new Promise((r) => setTimeout(r, 1000))
      child.kill("SIGINT")
      const status = await new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
      return { status, stdout, left: spawnSync("pgrep", ["-f", marker]).stdout.toString().trim() }
    }
    const trapped = "trap 'echo got it; exit 5' INT; echo ready; sleep 30 & wait"
    const short = await interrupted(trapped, true)
    expect(short).toEqual({ status: 5, stdout: "ready\ngot it\n", left: "" })
    expect(await interrupted(trapped, false)).toEqual(short)
    const stubborn = await interrupted("trap '' INT TERM; echo started; sleep 60", true)
    expect(stubborn).toEqual({ status: 130, stdout: "", left: "" })
  }, 60_000)

  it("holds at most the cap and one read before handing over, and leaves other forms alone", async () => {
    const dir = tempDir()
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", SPILLWAY_OUTPUT_DIR: dir }
    const listening = process.listenerCount("SIGINT")
    const handed = await new Promise<ChildPipes.Started | undefined>((resolve) => {
      expect(tryShortRun(["run", "--max-chars", "400", "--", "yes", "a line of output"], env, resolve)).toBe("started")
    })
    expect(handed).toBeDefined()
    const { child, pipes } = handed!
    try {
      expect(pipes.queued).toBeGreaterThan(400 * 4 + 4)
      expect(pipes.queued).toBeLessThanOrEqual(400 * 4 + 4 + 64 * 1024)
      expect(pipes.exited).toBeUndefined()
      // the signal handlers the short run set while it ran are gone with it
      expect(process.listenerCount("SIGINT")).toBe(listening)
    } finally {
      process.kill(-child.pid!, "SIGKILL")
      for (const reader of pipes.readers) reader.destroy()
    }
    expect(tryShortRun(["run", "--help"], env, () => undefined)).toBe("command")
    expect(tryShortRun(["run", "--max-chars", "9", "--", "true"], env, () => undefined)).toBe("run")
    expect(tryShortRun(["run", "--", "no-such-command-here"], env, () => undefined)).toBe("run")
    const file = Path.join(dir, "a-file")
    Fs.writeFileSync(file, "")
    expect(tryShortRun(["run", "--", "true"], { ...env, SPILLWAY_OUTPUT_DIR: file }, () => undefined)).toBe("run")
    expect(Fs.readdirSync(dir)).toEqual(["a-file"])
  })
})
