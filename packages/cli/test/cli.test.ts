import { afterAll, describe, expect, it } from "@effect/vitest"
import { Secrets } from "@spillway/core"
import { NodeSecrets } from "@spillway/node"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))

interface Result {
  readonly status: number | null
  readonly stdout: string
  readonly stdoutBytes: Buffer
  readonly stderr: string
}

const spillway = (dir: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): Result => {
  const r = spawnSync(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir, ...env },
    maxBuffer: 64 * 1024 * 1024
  })
  return { status: r.status, stdout: r.stdout.toString("utf8"), stdoutBytes: r.stdout, stderr: r.stderr.toString("utf8") }
}

const made: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-cli-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})
const savedName = (text: string) => /Full output: (\S+\.log)\]/.exec(text)?.[1]
const noisy = (n: number) => `for i in $(seq 1 ${n}); do echo "step $i of the build"; done`

describe("spillway run", () => {
  it("prints short output exactly and exits with the command's status", () => {
    const dir = tempDir()
    const r = spillway(dir, ["run", "-c", "echo hello; sleep 0.2; echo world >&2; exit 3"])
    expect(r.status).toBe(3)
    expect(r.stdout).toBe("hello\nworld\n")
    expect(Fs.existsSync(dir) ? Fs.readdirSync(dir) : []).toEqual([])
  })

  it("returns within the drain grace when the command leaves a background child holding its output", () => {
    const started = Date.now()
    const r = spillway(tempDir(), ["run", "--", "sh", "-c", "echo hi; sleep 30 &"])
    expect(r.status).toBe(0)
    expect(r.stdout).toBe("hi\n")
    expect(Date.now() - started).toBeLessThan(15_000)
  })

  it("prints a whole output byte for byte, without adding a final newline", () => {
    const none = spillway(tempDir(), ["run", "--", "printf", "no newline at the end"])
    expect(none.status).toBe(0)
    expect(none.stdout).toBe("no newline at the end")
    expect(spillway(tempDir(), ["run", "-c", "true"]).stdoutBytes.length).toBe(0)
    expect(spillway(tempDir(), ["run", "-c", "printf 'a\\n\\nb'"]).stdout).toBe("a\n\nb")
  })

  it("passes its stdin on to the command with --stdin, and closes it otherwise", () => {
    const r = spawnSync(process.execPath, [bin, "run", "--stdin", "--", "sh", "-c", "cat; echo end"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: tempDir() },
      input: "from stdin\n"
    })
    expect(r.status).toBe(0)
    expect(r.stdout.toString()).toBe("from stdin\nend\n")
    const closed = spawnSync(process.execPath, [bin, "run", "--", "sh", "-c", "cat; echo end"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: tempDir() },
      input: "from stdin\n"
    })
    expect(closed.stdout.toString()).toBe("end\n")
  })

  it("runs a command given after --", () => {
    const r = spillway(tempDir(), ["run", "--", "printf", "%s-%s\\n", "a b", "c"])
    expect(r.status).toBe(0)
    expect(r.stdout).toBe("a b-c\n")
  })

  it("merges stdout and stderr in the order the command wrote them", () => {
    const r = spillway(tempDir(), ["run", "-c", "for i in $(seq 1 100); do echo out$i; echo err$i >&2; done"])
    expect(r.stdout).toBe(Array.from({ length: 100 }, (_, i) => `out${i + 1}\nerr${i + 1}\n`).join(""))
    const short = spillway(tempDir(), ["run", "--", "sh", "-c", "echo a; echo b >&2; echo c"])
    expect(short.stdout).toBe("a\nb\nc\n")
  })

  it("saves long output, prints a preview, and reads it back", () => {
    const dir = tempDir()
    const r = spillway(dir, ["run", "-c", `${noisy(2100)}; exit 1`])
    expect(r.status).toBe(1)
    expect([...r.stdout.trimEnd()].length).toBeLessThanOrEqual(2000)
    expect(r.stdout).toContain("exit code 1")
    expect(r.stdout).toContain("step 1 of the build\n")
    expect(r.stdout).toContain("step 2100 of the build")
    const name = savedName(r.stdout)!
    expect(name).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[0-9a-f]{6}\.log$/)
    expect(r.stdout).toContain(`spillway read ${name} --offset `)
    const file = Fs.readFileSync(Path.join(dir, name), "utf8")
    expect(file.split("\n").length).toBe(2101)

    const page = spillway(dir, ["read", name, "--offset", "900", "--limit", "3"])
    expect(page.status).toBe(0)
    expect(page.stdout).toBe("step 900 of the build\nstep 901 of the build\nstep 902 of the build\n")
    expect(page.stderr).toBe(`[lines 900-902 of 2100; continue with: spillway read ${name} --offset 903 --limit 3]\n`)
    const whole = spillway(dir, ["read", name, "--all"])
    expect(whole.stdout).toBe(file)
    expect(whole.stderr).toContain("end of file")

    const found = spillway(dir, ["grep", "step 1[0-9]00 ", name])
    expect(found.status).toBe(0)
    expect(found.stdout).toBe("1000:step 1000 of the build\n1100:step 1100 of the build\n1200:step 1200 of the build\n" +
      "1300:step 1300 of the build\n1400:step 1400 of the build\n1500:step 1500 of the build\n1600:step 1600 of the build\n" +
      "1700:step 1700 of the build\n1800:step 1800 of the build\n1900:step 1900 of the build\n")
    const limited = spillway(dir, ["grep", "step", name, "--max-results", "2"])
    expect(limited.stdout).toBe("1:step 1 of the build\n2:step 2 of the build\n")
    expect(limited.stderr).toContain("more lines match")
    const none = spillway(dir, ["grep", "nothing like this", name])
    expect(none.status).toBe(1)
    expect(none.stdout).toBe("")
  })

  it("prints the same lines by the quick read path as by the full command", () => {
    const dir = tempDir()
    // no final line break, multi-byte text, 5,000 lines so checkpoints are used
    const r = spillway(dir, ["run", "--", process.execPath, "-e",
      "process.stdout.write(Array.from({length:5000},(_, i)=>'é row '+(i+1)).join('\\n'))"])
    const name = savedName(r.stdout)!
    for (const [offset, limit] of [[0, 0], [1, 1], [1024, 3], [1025, 1], [4999, 0], [5000, 10], [2048, 2049]]) {
      const quick = spillway(dir, ["read", name, "--offset", String(offset), "--limit", String(limit)])
      const full = JSON.parse(spillway(dir, ["read", name, "--offset", String(offset), "--limit", String(limit), "--json"]).stdout)
      expect(quick.stdout, `${offset} ${limit}`).toBe(full.text)
      const next = full.nextOffset === undefined ? "end of file" : `continue with: spillway read ${name} --offset ${full.nextOffset}`
      expect(quick.stderr).toContain(next)
    }
  })

  it("serves a common read from its own program, which loads only the SQLite driver's addon", () => {
    const dir = tempDir()
    const name = savedName(spillway(dir, ["run", "--", "seq", "1", "3000"]).stdout)!
    // a preload records which files Node read and which modules it loaded
    const trace = Path.join(dir, "trace.json")
    const preload = Path.join(tempDir(), "trace.cjs")
    Fs.writeFileSync(preload, `const fs = require("node:fs"); const read = []; const readFileSync = fs.readFileSync
fs.readFileSync = function (file, ...rest) { read.push(String(file)); return readFileSync.call(this, file, ...rest) }
process.on("exit", () => fs.writeFileSync(process.env.TRACE, JSON.stringify({ read, modules: Object.keys(require.cache) })))\n`)
    const r = spawnSync(process.execPath, ["-r", preload, bin, "read", name, "--offset", "2990", "--limit", "2"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir, TRACE: trace }
    })
    expect(r.stdout.toString()).toBe("2990\n2991\n")
    const seen = JSON.parse(Fs.readFileSync(trace, "utf8")) as { read: Array<string>; modules: Array<string> }
    expect(seen.read.filter((f) => f.endsWith(Path.join("dist", "spillway.cjs")) || f.endsWith("spillway.cache")), "the full command is not loaded").toEqual([])
    expect(seen.modules.filter((m) => m.endsWith("better_sqlite3.node"))).toHaveLength(1)
    expect(seen.modules.filter((m) => m.includes(`better-sqlite3${Path.sep}lib`)), "the driver's JavaScript is the bundled copy").toEqual([])
  })

  it("runs the common forms from a program of its own, with the whole command's results", () => {
    // each form, run by the run program and by the whole command (SPILLWAY_QUICK=0): the same
    // status, stdout, stderr and saved body, the saved file's name aside
    const forms: ReadonlyArray<ReadonlyArray<string>> = [
      ["run", "--", "printf", "%s\\n", "short"],
      ["run", "--", "seq", "1", "5000"],
      ["run", "-c", "echo one; echo two >&2; exit 4"],
      ["run", "--json", "--", "seq", "1", "3000"],
      ["run", "--max-chars=500", "--", "seq", "1", "3000"],
      ["run", "--max-chars", "700", "--json", "-c", "seq 1 3000"],
      ["run", "--stdin", "--", "bash", "-c", "seq 1 4000; exit 3"],
      ["run", "--stdin", "--stdin", "--", "true"],
      ["run", "--", "--json"],
      ["run", "--", "no-such-command-here"],
      ["run", "--max-chars", "100", "--", "true"],
      ["run", "--max-chars", "x", "--", "true"],
      ["run", "--json", "--json", "--", "true"],
      ["run", "-c"],
      ["run"]
    ]
    const named = (text: string) => text.replace(/[\w.-]+\.log\b/g, "NAME.log")
    for (const form of forms) {
      const ran = [{}, { SPILLWAY_QUICK: "0" }].map((env) => {
        const dir = tempDir()
        const r = spillway(dir, form, env)
        const saved = Fs.readdirSync(dir).filter((f) => f.endsWith(".log"))
        return {
          status: r.status,
          stdout: named(r.stdout),
          stderr: named(r.stderr),
          saved: saved.map((f) => Fs.readFileSync(Path.join(dir, f), "utf8"))
        }
      })
      expect(ran[0], form.join(" ")).toEqual(ran[1])
    }
    // the run program does not load the whole command; the forms it hands over do
    const preload = Path.join(tempDir(), "trace.cjs")
    Fs.writeFileSync(preload, `const fs = require("node:fs"); const read = []; const readFileSync = fs.readFileSync
fs.readFileSync = function (file, ...rest) { read.push(String(file)); return readFileSync.call(this, file, ...rest) }
process.on("exit", () => fs.writeFileSync(process.env.TRACE, JSON.stringify(read)))\n`)
    const loaded = (args: ReadonlyArray<string>) => {
      const dir = tempDir()
      const trace = Path.join(dir, "trace.json")
      const r = spawnSync(process.execPath, ["-r", preload, bin, ...args], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir, TRACE: trace }
      })
      expect(r.status).toBe(args.includes("x") || args.includes("9") ? 2 : 0)
      return (JSON.parse(Fs.readFileSync(trace, "utf8")) as Array<string>).filter((f) => f.endsWith(".cjs") && Path.basename(Path.dirname(f)) === "dist").map((f) => Path.basename(f))
    }
    // a short output is finished by the short run alone; a long one goes on in the run program
    expect(loaded(["run", "--", "echo", "hi"])).toEqual(["short.cjs"])
    // the form an agent's hook rewrites every command to
    expect(loaded(["run", "--stdin", "--", "bash", "-c", "echo hi"])).toEqual(["short.cjs"])
    expect(loaded(["run", "--", "seq", "1", "5000"])).toEqual(["short.cjs", "run.cjs"])
    // help never takes the run program; a form it does not know is handed over once it has looked, a common form
    // the short run does not take on goes to the run program, which words its error
    expect(loaded(["run", "--help"])).toEqual(["spillway.cjs"])
    expect(loaded(["run", "--max-chars", "x", "--", "true"])).toEqual(["short.cjs", "spillway.cjs"])
    expect(loaded(["run", "--max-chars", "9", "--", "true"])).toEqual(["short.cjs", "run.cjs"])
  })

  it("shows a failure from the middle of a long run, with a grep for the rest", () => {
    const dir = tempDir()
    const r = spillway(dir, ["run", "-c",
      `${noisy(1500)}; echo "main.c:3:1: error: unknown type name 'foo'"; echo "util.c:9:2: error: expected ';'"; ${noisy(1500)}; exit 2`])
    expect(r.status).toBe(2)
    const name = savedName(r.stdout)!
    expect(r.stdout).toContain("1501: main.c:3:1: error: unknown type name 'foo'\n1502: util.c:9:2: error: expected ';'")
    expect(r.stdout).toContain("[Lines that report errors or failures: 2 of 2]")
    // many failures: the section says how to find them all, and that command works as printed
    const many = spillway(dir, ["run", "-c",
      `${noisy(1000)}; for i in $(seq 1 40); do echo "mod$i.c:1:1: error: bad thing $i"; done; ${noisy(1000)}; exit 2`])
    const find = /Find all: spillway (grep .+)\]\n/.exec(many.stdout)?.[1]
    expect(find).toBeDefined()
    const all = spawnSync("sh", ["-c", `"${process.execPath}" "${bin}" ${find}`], { env: { ...process.env, SPILLWAY_OUTPUT_DIR: dir } })
    expect(all.stdout.toString().trim().split("\n").length).toBe(40)
    const quiet = spillway(dir, ["run", "-c", noisy(3000)])
    expect(quiet.stdout).not.toContain("Lines that report")
    expect(name).toBeDefined()
  })

  it("still shows lines under a tight --max-chars, dropping the search hint first", () => {
    const r = spillway(tempDir(), ["run", "--max-chars", "400", "-c", "seq 1 1000"])
    expect([...r.stdout.trimEnd()].length).toBeLessThanOrEqual(400)
    expect(r.stdout).toMatch(/\n1\n/)
    expect(r.stdout).toMatch(/\n1000\n/)
    expect(r.stdout).toContain("Read more: spillway read ")
    expect(r.stdout).not.toContain("search:")
    expect(spillway(tempDir(), ["run", "--max-chars", "399", "--", "true"]).status).toBe(2)
  })

  it("reports signals as 128+N and an unstartable command as 127", () => {
    const dir = tempDir()
    const killed = spillway(dir, ["run", "-c", "echo before; kill -9 $$"])
    expect(killed.status).toBe(137)
    expect(killed.stdout).toBe("before\n")
    const term = spillway(dir, ["run", "--", "sh", "-c", "kill -TERM $$"])
    expect(term.status).toBe(143)
    const missing = spillway(dir, ["run", "--", "no-such-command-here"])
    expect(missing.status).toBe(127)
    expect(missing.stderr).toMatch(/^spillway run: cannot start no-such-command-here: .*\n$/)
  })

  it("masks what it prints itself: a secret given as the command is not in the error", () => {
    const dir = tempDir()
    const secret = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    const r = spillway(dir, ["run", "--", secret], { MY_API_KEY: secret })
    expect(r.status).toBe(127)
    expect(r.stderr).toMatch(/^spillway run: cannot start \*+: /)
    expect(r.stderr + r.stdout).not.toContain(secret.slice(8))
    const known = "an0ther-value-of-the-env"
    const shell = spillway(dir, ["run", "--", `./${known}`], { DEPLOY_TOKEN: known })
    expect(shell.stderr).not.toContain(known)
  })

  it("masks long output on its worker exactly as in-process, secrets split across reads included", () => {
    const dir = tempDir()
    // several MiB, so the stream hands on to the worker; secrets at every offset of a 64 KiB pipe read
    const script = [
      "const t='ghp_'+'aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6';",
      "let s='';for(let i=0;i<120000;i++){s+=(i%7===0?'token='+t:'line '+i+' of the build')+'\\n'}",
      "s+='-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA7x9Zq2Lk\\n-----END RSA PRIVATE KEY-----\\nend\\n';",
      "process.stdout.write(s)"
    ].join("")
    const r = spillway(dir, ["run", "--", process.execPath, "-e", script])
    expect(r.status).toBe(0)
    const name = savedName(r.stdout)!
    const saved = Fs.readFileSync(Path.join(dir, name), "utf8")
    expect(saved).not.toContain("aB3dE6gH9jK2mN5p")
    expect(saved).not.toContain("MIIEowIBAAKCAQEA7x9Zq2Lk")
    const lines = saved.split("\n")
    expect(lines[0]).toBe(`token=${"*".repeat(40)}`)
    expect(lines[1]).toBe("line 1 of the build")
    expect(lines.at(-3)).toBe("-----END RSA PRIVATE KEY-----")
    expect(lines.length).toBe(120000 + 5)
  })

  it("bundles a masking worker that masks as the in-process masker does", () => {
    const workerFile = fileURLToPath(new URL("../dist/internal/maskWorker.js", import.meta.url))
    const masker = Effect.runSync(NodeSecrets.makeWorkerMasker({ workerFile, handOffBytes: 16, shouldHandOff: () => true }))
    const text = `export GITHUB_TOKEN=ghp_${"aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"}\n`.repeat(50)
    const pause = new Int32Array(new SharedArrayBuffer(4))
    const deadline = Date.now() + 20_000
    let handedOn = false
    let fed = ""
    let out = ""
    const stream = masker.stream()
    while (!handedOn && Date.now() < deadline) {
      fed += text
      out += Buffer.from(stream.push(Buffer.from(text))).toString("utf8")
      handedOn = stream.checkpoint() === undefined
      if (!handedOn) Atomics.wait(pause, 0, 0, 50)
    }
    out += Buffer.from(stream.end()).toString("utf8")
    expect(handedOn).toBe(true)
    expect(out).toBe(Secrets.unsafeMakeMasker().maskText(fed))
    expect(out).not.toContain("aB3dE6gH9jK2mN5p")
  })

  it("keeps binary and invalid UTF-8 output byte for byte in the file", () => {
    const dir = tempDir()
    // every byte value, over and over, with line breaks
    const r = spillway(dir, ["run", "--", process.execPath, "-e",
      "const b=Buffer.alloc(256*64);for(let i=0;i<b.length;i++)b[i]=i%256;process.stdout.write(b)"])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("\ufffd")
    const name = savedName(r.stdout)!
    const saved = Fs.readFileSync(Path.join(dir, name))
    const expected = Buffer.alloc(256 * 64)
    for (let i = 0; i < expected.length; i++) expected[i] = i % 256
    expect(saved.equals(expected)).toBe(true)
    const back = spillway(dir, ["read", name])
    expect(back.stdoutBytes.equals(expected)).toBe(true)
  })

  it("masks a secret from the environment in the preview and in the file", () => {
    const dir = tempDir()
    const secret = "s3cr3t-v4lue-that-must-not-leak"
    const r = spillway(dir, ["run", "-c", `echo "key=$MY_SERVICE_TOKEN"; ${noisy(3000)}; echo "again $MY_SERVICE_TOKEN"`], {
      MY_SERVICE_TOKEN: secret
    })
    expect(r.stdout).not.toContain(secret)
    expect(r.stdout).toContain("*".repeat(secret.length))
    const file = Fs.readFileSync(Path.join(dir, savedName(r.stdout)!), "utf8")
    expect(file).not.toContain(secret)
    expect(file.startsWith(`key=${"*".repeat(secret.length)}\n`)).toBe(true)
  })

  it("names secret-looking environment values too short to mask in --json, not on every run's stderr", () => {
    const r = spillway(tempDir(), ["run", "--", "echo", "hi"], { SHORT_TOKEN: "abc" })
    expect(r.status).toBe(0)
    expect(r.stdout).toBe("hi\n")
    expect(r.stderr).toBe("")
    const json = spillway(tempDir(), ["run", "--json", "--", "echo", "hi"], { SHORT_TOKEN: "abc" })
    expect(JSON.parse(json.stdout).notMasked).toEqual([{ name: "SHORT_TOKEN", reason: "shorter than 8 bytes" }])
    expect(json.stderr).toBe("")
    expect(json.stdout).not.toContain("abc")
    expect(JSON.parse(spillway(tempDir(), ["run", "--json", "--", "true"]).stdout).notMasked).toBeUndefined()
  })

  it("still prints a marked cut when the spill directory cannot be written", () => {
    const base = tempDir()
    Fs.writeFileSync(Path.join(base, "not-a-dir"), "")
    const r = spillway(Path.join(base, "not-a-dir", "spill"), ["run", "-c", noisy(3000)])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("[No copy was saved:")
    expect(r.stdout).toMatch(/\[Showing lines 1-\d+, \d+-3000 of 3000\]/)
    expect(r.stdout).toContain("step 3000 of the build")
  })

  it("prints one JSON object with --json", () => {
    const dir = tempDir()
    const r = spillway(dir, ["run", "--json", "-c", noisy(3000)])
    const o = JSON.parse(r.stdout)
    expect(o).toMatchObject({ exitCode: 0, truncated: true, totalLines: 3000 })
    const page = JSON.parse(spillway(dir, ["read", o.filename, "--offset", "2", "--limit", "1", "--json"]).stdout)
    expect(page).toMatchObject({ offset: 2, lines: 1, text: "step 2 of the build\n", nextOffset: 3, totalLines: 3000 })
    const g = JSON.parse(spillway(dir, ["grep", "--json", "step 2999 ", o.filename]).stdout)
    expect(g.matches).toEqual([{ line: 2999, text: "step 2999 of the build", cut: false }])
  })
})

describe("crash debris", () => {
  it("what a killed run left half-written is never read, and the next run removes it", async () => {
    const dir = tempDir()
    const child = spawn(process.execPath, [bin, "run", "--", "sh", "-c", "yes spillway-debris-line | head -c 200000000; sleep 30"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir },
      stdio: ["ignore", "ignore", "ignore"]
    })
    // wait until the half-written body is well under way, then kill the command without a chance to clean up
    const temp = () => Fs.readdirSync(dir).filter((f) => f.startsWith(".tmp-"))
    for (let i = 0; i < 200 && !(temp().length > 0 && Fs.statSync(Path.join(dir, temp()[0]!)).size > 1_000_000); i++) {
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(temp().length).toBe(1)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    // the command's own process group outlives its killed parent: end it by its ids
    for (const pid of spawnSync("pgrep", ["-f", "spillway-debris-line"]).stdout.toString().split("\n").filter((l) => l !== "")) {
      try {
        process.kill(Number(pid), "SIGKILL")
      } catch {
        // gone already
      }
    }
    const left = temp()[0]!
    expect(spillway(dir, ["read", left]).status).toBe(2)
    // the next run that keeps output sweeps what writers that are gone left behind
    const next = spillway(dir, ["run", "-c", noisy(3000)])
    expect(next.status).toBe(0)
    expect(temp()).toEqual([])
    expect(Fs.readdirSync(dir).filter((f) => !f.startsWith("."))).toHaveLength(1)
  }, 60_000)
})

describe("interruption", () => {
  const runAndInterrupt = async (script: string, signals: number) => {
    const dir = tempDir()
    const marker = `stubborn-${process.pid}-${Date.now()}`
    const child = spawn(process.execPath, [bin, "run", "-c", `${script}; : ${marker}`], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout.on("data", (d) => (stdout += d))
    await new Promise((r) => setTimeout(r, 700))
    const started = Date.now()
    for (let i = 0; i < signals; i++) child.kill("SIGINT")
    const status = await new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
    const left = spawnSync("pgrep", ["-f", marker]).stdout.toString().trim()
    return { status, stdout, seconds: (Date.now() - started) / 1000, left }
  }

  it("passes Ctrl-C to the command, then keeps and shows its output", async () => {
    const r = await runAndInterrupt("for i in $(seq 1 3000); do echo line $i; done; echo started; sleep 60", 1)
    expect(r.status).toBe(130)
    expect(r.stdout).toContain("exit code 130")
    expect(r.stdout).toContain("started")
    expect(r.stdout).toMatch(/Full output: \S+\.log\]/)
    expect(r.left).toBe("")
  })

  it("kills a command that ignores the signals, SIGKILL after the grace periods", async () => {
    const r = await runAndInterrupt("trap '' INT TERM; echo started; sleep 60", 1)
    expect(r.status).toBe(130)
    expect(r.seconds).toBeLessThan(12)
    expect(r.left).toBe("")
  })
})

describe("bad input", () => {
  const oneLine = (r: Result) => {
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^spillway (read|grep|run): [^\n]+\n$/)
  }

  it("refuses names off the allowlist, unknown names, bad numbers and bad patterns", () => {
    const dir = tempDir()
    const r = spillway(dir, ["run", "-c", noisy(3000)])
    const name = savedName(r.stdout)!
    for (const bad of ["../etc/passwd", "a/b", ".hidden", "%2e%2e", "x".repeat(200)]) oneLine(spillway(dir, ["read", bad]))
    oneLine(spillway(dir, ["read", "2026-01-01T00-00-00-000Z-000000.log"]))
    oneLine(spillway(dir, ["read", name, "--offset", "-4"]))
    oneLine(spillway(dir, ["read", name, "--offset", "99999"]))
    oneLine(spillway(dir, ["read", name, "--limit", "abc"]))
    oneLine(spillway(dir, ["grep", "(", name]))
    const unsupported = spillway(dir, ["grep", "(a)\\1", name])
    oneLine(unsupported)
    expect(unsupported.stderr).toContain("it uses a backreference (\\1 at 3)")
    oneLine(spillway(dir, ["grep", "x", name, "--max-results", "0"]))
    oneLine(spillway(dir, ["run"]))
    // an unknown command: one line saying so, then the list of commands (see --help below)
    const unknown = spillway(dir, ["frobnicate"])
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toMatch(/^spillway: unknown command 'frobnicate'\n\n/)
  })

  it("refuses a symlink, a hard link and a FIFO planted in the directory", () => {
    const dir = tempDir()
    const name = savedName(spillway(dir, ["run", "-c", noisy(3000)]).stdout)!
    const outside = Path.join(tempDir(), "outside.txt")
    Fs.writeFileSync(outside, "not yours\n")
    Fs.symlinkSync(outside, Path.join(dir, "sym.log"))
    Fs.linkSync(Path.join(dir, name), Path.join(dir, "hard.log"))
    spawnSync("mkfifo", [Path.join(dir, "pipe.log")])
    for (const planted of ["sym.log", "hard.log", "pipe.log"]) {
      const r = spillway(dir, ["read", planted])
      oneLine(r)
      expect(r.stdout).toBe("")
    }
  })

  it("has --help on every command", () => {
    for (const args of [["--help"], ["run", "--help"], ["read", "--help"], ["grep", "--help"], ["mcp", "--help"], ["host", "--help"], ["hook", "--help"]]) {
      const r = spillway(tempDir(), args)
      expect(r.status, args.join(" ")).toBe(0)
      expect(r.stdout).toContain("spillway")
    }
  })

  it("--help lists every command, one line each; spillway alone and an unknown command list them on stderr and exit 2", () => {
    const commands = ["run", "read", "grep", "mcp", "host", "hook", "init", "serve"]
    const help = spillway(tempDir(), ["--help"])
    expect(help.status).toBe(0)
    const section = help.stdout.slice(help.stdout.indexOf("Commands:\n"), help.stdout.indexOf("\n\n", help.stdout.indexOf("Commands:\n")))
    const listed = section.split("\n").filter((l) => /^ {2}\S/.test(l))
    expect(listed.map((l) => l.trim().split(/\s+/)[0])).toEqual(commands)
    for (const line of listed) expect(line.trim().split(/\s{2,}/)[1]!.length).toBeGreaterThan(10)
    expect(spillway(tempDir(), ["-h"]).stdout).toBe(help.stdout)
    expect(spillway(tempDir(), [])).toMatchObject({ status: 2, stdout: "", stderr: help.stdout })
    const bogus = spillway(tempDir(), ["bogus"])
    expect(bogus.status).toBe(2)
    expect(bogus.stdout).toBe("")
    expect(bogus.stderr).toBe(`spillway: unknown command 'bogus'\n\n${help.stdout}`)
    // every command it names is one (its own --help answers)
    for (const name of commands) {
      const r = spillway(tempDir(), [name, "--help"])
      expect(r.status, name).toBe(0)
      expect(r.stdout, name).toContain(name)
    }
  })

  it("says so when its package was installed before it was built", () => {
    const unbuilt = tempDir()
    Fs.mkdirSync(Path.join(unbuilt, "bin"))
    Fs.copyFileSync(bin, Path.join(unbuilt, "bin", "spillway.cjs"))
    const r = spawnSync(process.execPath, [Path.join(unbuilt, "bin", "spillway.cjs"), "run", "--", "true"])
    expect(r.status).toBe(1)
    expect(r.stderr.toString()).toContain("this copy of @spillway/cli was never built")
  })

  it("refuses bad arguments to mcp and host with one line and exit 2", () => {
    for (const args of [["mcp", "--bogus"], ["mcp", "--read-only", "--agents", "x.json"], ["host", "--stdio"], ["host", "--listen", "99999", "--dir", "d", "--credentials", "c"],
      ["host", "--stdio", "--dir", "d", "--credentials", "c", "--max-frame-bytes", "0"], ["host", "--stdio", "--dir", "d", "--credentials", "c", "--idle-timeout", "soon"],
      ["host", "--bogus"]]) {
      const r = spillway(tempDir(), args)
      expect(r.status, args.join(" ")).toBe(2)
      expect(r.stderr.trim().split("\n").length).toBe(1)
      expect(r.stderr.startsWith(`spillway ${args[0]}: `)).toBe(true)
    }
  })
})

describe("spillway host --stdio", () => {
  it("ends on SIGTERM while its controller still holds stdin open", async () => {
    const dir = tempDir()
    Fs.writeFileSync(Path.join(dir, "credentials.json"), JSON.stringify({ credentials: { "a-long-enough-credential": "ci" } }))
    const child = spawn(process.execPath, [bin, "host", "--stdio", "--dir", Path.join(dir, "host"), "--credentials", Path.join(dir, "credentials.json")], {
      stdio: ["pipe", "pipe", "pipe"]
    })
    // it is up once it made its identity
    for (let i = 0; i < 100 && !Fs.existsSync(Path.join(dir, "host", "identity")); i++) await new Promise((r) => setTimeout(r, 50))
    expect(Fs.existsSync(Path.join(dir, "host", "identity"))).toBe(true)
    const ended = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    child.kill("SIGTERM")
    const code = await Promise.race([ended, new Promise<"still running">((r) => setTimeout(() => r("still running"), 5_000))])
    if (code === "still running") child.kill("SIGKILL")
    expect(code).toBe(0)
    child.stdin.end()
  })
})

describe("spillway grep with hostile patterns", () => {
  /** A saved file of `lines` lines of `width` random a and b: RE2's DFA gives up on the pattern below, and its NFA takes about a second a line. */
  const heavyFile = (lines: number, width: number) => {
    const dir = tempDir()
    const source = Path.join(dir, "source.txt")
    const fd = Fs.openSync(source, "w")
    for (let i = 0; i < lines; i++) {
      let s = ""
      for (let k = 0; k < width; k++) s += Math.random() < 0.5 ? "a" : "b"
      Fs.writeSync(fd, `${s}\n`)
    }
    Fs.closeSync(fd)
    const name = savedName(spillway(dir, ["run", "--", "cat", source]).stdout)!
    Fs.rmSync(source)
    return { dir, name }
  }
  const heavy = "(?:a|b)*a[ab]{999}[^ab]"

  const grepAsync = (dir: string, args: ReadonlyArray<string>) => {
    const child = spawn(process.execPath, [bin, "grep", ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const started = Date.now()
    const exited = new Promise<{ status: number | null; signal: string | null; seconds: number; stdout: string; stderr: string }>((resolve) =>
      child.on("exit", (status, signal) => resolve({ status, signal, seconds: (Date.now() - started) / 1000, stdout, stderr }))
    )
    return { child, exited }
  }

  it("accepts linear counted repetition, classes and anchors", () => {
    const dir = tempDir()
    const r = spillway(dir, ["run", "-c", `${noisy(300)}; echo "commit ${"0123456789abcdef".repeat(3)}01234567"; echo "${"x".repeat(17)}"; echo "${"*".repeat(40)}"`])
    const name = savedName(r.stdout)!
    expect(spillway(dir, ["grep", "[0-9a-f]{40}", name]).stdout).toBe(`301:commit ${"0123456789abcdef".repeat(3)}01234567\n`)
    expect(spillway(dir, ["grep", "^x{17}$", name]).stdout).toBe(`302:${"x".repeat(17)}\n`)
    expect(spillway(dir, ["grep", "\\*{40}", name]).stdout).toBe(`303:${"*".repeat(40)}\n`)
  })

  it("a pattern that backtracks catastrophically elsewhere ends at once on a megabyte", async () => {
    const dir = tempDir()
    const r = spillway(dir, ["run", "--", process.execPath, "-e", "for (let i = 0; i < 16; i++) console.log('='.repeat(10) + 'x'.repeat(65000))"])
    const name = savedName(r.stdout)!
    const { exited } = grepAsync(dir, [`${".*".repeat(100)}=y`, name])
    const done = await exited
    // the search finished: no match, and no deadline was needed
    expect(done.status).toBe(1)
    expect(done.stderr).toBe("")
    expect(done.seconds).toBeLessThan(15)
  }, 30_000)

  it("a search that cannot finish stops at its 10-second deadline and says where", async () => {
    const { dir, name } = heavyFile(24, 65_000)
    const { exited } = grepAsync(dir, [heavy, name])
    const done = await exited
    expect(done.stderr).toMatch(/\[search stopped at its deadline at line (\d+) of 24; go on with --offset \1\]/)
    expect(done.seconds).toBeLessThan(15)
  }, 30_000)

  it("exits at once on SIGTERM and on Ctrl-C in the middle of a search", async () => {
    const { dir, name } = heavyFile(24, 65_000)
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const { child, exited } = grepAsync(dir, [heavy, name])
      await new Promise((r) => setTimeout(r, 1500))
      const sent = Date.now()
      child.kill(signal)
      const done = await exited
      expect(done.status).toBe(130)
      expect((Date.now() - sent) / 1000).toBeLessThan(3)
    }
  }, 30_000)
})

describe("defaults and errors a person meets", () => {
  /** Follows `spillway read`'s markers from the first page to the end: the pages' text and every marker. */
  const readAll = (dir: string, name: string, env: Record<string, string>) => {
    let text = ""
    const markers: Array<string> = []
    let args: Array<string> = ["read", name]
    for (let i = 0; i < 50; i++) {
      const r = spillway(dir, args, env)
      expect(r.status).toBe(0)
      text += r.stdout
      markers.push(r.stderr)
      const next = /continue with: spillway (read .+)\]\n$/.exec(r.stderr)
      if (next === null) break
      args = next[1]!.split(" ")
    }
    return { text, markers }
  }

  it("read pages 200 lines by default, its marker gives the next --offset, and following it prints every line once", () => {
    const dir = tempDir()
    const name = savedName(spillway(dir, ["run", "--", "seq", "1", "1000"]).stdout)!
    for (const env of [{}, { SPILLWAY_QUICK: "0" }]) {
      const first = spillway(dir, ["read", name], env)
      expect(first.stdout).toBe(Array.from({ length: 200 }, (_, i) => `${i + 1}\n`).join(""))
      expect(first.stderr).toBe(`[lines 1-200 of 1000; continue with: spillway read ${name} --offset 201]\n`)
      const { markers, text } = readAll(dir, name, env)
      expect(text).toBe(Fs.readFileSync(Path.join(dir, name), "utf8"))
      expect(markers).toHaveLength(5)
      expect(markers[4]).toBe("[lines 801-1000 of 1000; end of file]\n")
      for (const all of [["--all"], ["--limit", "0"]]) {
        const whole = spillway(dir, ["read", name, ...all], env)
        expect(whole.stdout.split("\n")).toHaveLength(1001)
        expect(whole.stderr).toBe("[lines 1-1000 of 1000; end of file]\n")
      }
      const json = JSON.parse(spillway(dir, ["read", name, "--json"], env).stdout)
      expect(json).toMatchObject({ offset: 1, lines: 200, nextOffset: 201, totalLines: 1000 })
    }
    expect(spillway(dir, ["read", name, "--all", "--limit", "5"])).toMatchObject({
      status: 2,
      stderr: "spillway read: --all prints every line; leave out --limit 5, or --all\n"
    })
  })

  it("grep --offset pages matches: following its marker prints every match once", () => {
    const dir = tempDir()
    const name = savedName(spillway(dir, ["run", "--", "seq", "1", "3000"]).stdout)!
    const expected = Array.from({ length: 3000 }, (_, i) => i + 1).filter((n) => /7/.test(String(n))).map((n) => `${n}:${n}\n`).join("")
    let got = ""
    let args = ["grep", "--max-results", "100", "7", name]
    for (let i = 0; i < 20; i++) {
      const r = spillway(dir, args)
      expect(r.status).toBe(0)
      got += r.stdout
      const next = /^\[more lines match past line (\d+); continue with: spillway (grep .+)\]\n$/.exec(r.stderr)
      if (next === null) {
        expect(r.stderr).toBe("")
        break
      }
      args = next[2]!.split(" ")
    }
    expect(got).toBe(expected)
    const later = spillway(dir, ["grep", "--offset", "2990", "^299", name])
    expect(later.stdout).toBe("2990:2990\n2991:2991\n2992:2992\n2993:2993\n2994:2994\n2995:2995\n2996:2996\n2997:2997\n2998:2998\n2999:2999\n")
    const json = JSON.parse(spillway(dir, ["grep", "--json", "--max-results", "2", "--offset", "10", "1", name]).stdout)
    expect(json.matches.map((m: { line: number }) => m.line)).toEqual([10, 11])
    expect(json.nextOffset).toBe(12)
    expect(spillway(dir, ["grep", "--offset", "5000", "1", name])).toMatchObject({ status: 2, stderr: expect.stringMatching(/^spillway grep: --offset: line 5000 is past the end/) })
  })

  it("an unknown flag before the command is an error that names it, and nothing runs", () => {
    const dir = tempDir()
    const marker = Path.join(dir, "ran")
    for (const env of [{}, { SPILLWAY_QUICK: "0" }]) {
      const r = spillway(dir, ["run", "--jsn", "--", "touch", marker], env)
      expect(r).toMatchObject({ status: 2, stdout: "", stderr: "spillway run: unknown flag --jsn\n" })
      expect(Fs.existsSync(marker)).toBe(false)
    }
    expect(spillway(dir, ["grep", "-c", "x", "NAME.log"])).toMatchObject({ status: 2, stderr: "spillway grep: unknown flag -c\n" })
    expect(spillway(dir, ["read", "NAME.log", "--lines", "3"])).toMatchObject({ status: 2, stderr: "spillway read: unknown flag --lines\n" })
    expect(spillway(dir, ["init", "--force"])).toMatchObject({ status: 2, stderr: "spillway init: unknown flag --force\n" })
    expect(spillway(dir, ["serve", "--prot", "80"])).toMatchObject({ status: 2, stderr: "spillway serve: unknown flag --prot\n" })
    expect(spillway(dir, ["mcp", "--readonly"])).toMatchObject({ status: 2, stderr: "spillway mcp: unknown flag --readonly\n" })
    expect(spillway(dir, ["host", "--sdtio"])).toMatchObject({ status: 2, stderr: "spillway host: unknown flag --sdtio\n" })
    // after --, a flag is the command's own
    expect(spillway(dir, ["run", "--", "echo", "--jsn"])).toMatchObject({ status: 0, stdout: "--jsn\n" })
  })

  it("bad values are one line that names the flag as typed, with one range wording", () => {
    const dir = tempDir()
    const name = savedName(spillway(dir, ["run", "--", "seq", "1", "3000"]).stdout)!
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["grep", "x", name, "--max-results", "abc"], "spillway grep: --max-results expects a whole number, got 'abc'\n"],
      [["grep", "x", name, "--max-results", "0"], "spillway grep: --max-results must be from 1 to 10000, got '0'\n"],
      [["grep", "x", name, "--max-results", "-3"], "spillway grep: --max-results must be from 1 to 10000, got '-3'\n"],
      [["read", name, "--offset", "-4"], "spillway read: --offset must be 0 or more, got '-4'\n"],
      [["read", name, "--limit", "abc"], "spillway read: --limit expects a whole number, got 'abc'\n"],
      [["run", "--max-chars", "100", "--", "true"], "spillway run: --max-chars must be from 400 to 1000000, got '100'\n"],
      [["serve", "--port", "abc"], "spillway serve: --port expects a whole number, got 'abc'\n"],
      [["serve", "--port", "70000"], "spillway serve: --port must be from 0 to 65535, got '70000'\n"],
      [["init", "vim"], "spillway init: AGENT must be one of claude, codex, gemini, opencode, pi, cursor, all, got 'vim'\n"],
      [["grep", "x"], "spillway grep: missing NAME; usage: spillway grep [FLAGS] PATTERN NAME\n"]
    ]
    for (const [args, stderr] of cases) {
      const r = spillway(dir, args)
      expect(r.stderr, args.join(" ")).toBe(stderr)
      expect(r.status, args.join(" ")).toBe(2)
      expect(r.stderr).not.toContain("[object Object]")
    }
  })

  it("--json prints exactly one JSON object on stdout, errors included, with the exit status", () => {
    const dir = tempDir()
    const name = savedName(spillway(dir, ["run", "--", "seq", "1", "3000"]).stdout)!
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string, number]> = [
      [["run", "--json", "--", "nonexistent-cmd"], "SpawnFailed", 127],
      [["run", "--json", "--jsn", "--", "true"], "UsageError", 2],
      [["run", "--json", "--max-chars", "1", "--", "true"], "UsageError", 2],
      [["read", "--json", "2026-01-01T00-00-00-000Z-000000.log"], "NotFound", 2],
      [["read", "--json", name, "--offset", "99999"], "InvalidRequest", 2],
      [["grep", "--json", "x", name, "--max-results", "0"], "UsageError", 2],
      [["grep", "--json", "(", name], "GrepPatternError", 2]
    ]
    for (const [args, tag, status] of cases) {
      for (const env of [{}, { SPILLWAY_QUICK: "0" }]) {
        const r = spillway(dir, args, env)
        expect(r.status, args.join(" ")).toBe(status)
        expect(r.stdout.endsWith("}\n") && r.stdout.indexOf("\n") === r.stdout.length - 1, args.join(" ")).toBe(true)
        const o = JSON.parse(r.stdout)
        expect(Object.keys(o)).toEqual(["error"])
        expect(o.error.tag, args.join(" ")).toBe(tag)
        expect(typeof o.error.message).toBe("string")
        expect(r.stderr).toBe("")
      }
    }
  })

  it("a name that is not found is named without a cursor or a pid", () => {
    const r = spillway(tempDir(), ["read", "2026-01-01T00-00-00-000Z-000000.log"])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(
      "spillway read: no saved output \"2026-01-01T00-00-00-000Z-000000.log\": check the name a preview printed after \"Full output:\"; saved output is removed when it expires\n"
    )
  })

  it("names output-directory problems as they are", () => {
    const base = tempDir()
    const file = Path.join(base, "a-file")
    Fs.writeFileSync(file, "")
    for (const args of [["read", "x.log"], ["grep", "x", "x.log"]]) {
      for (const env of [{}, { SPILLWAY_QUICK: "0" }]) {
        const r = spillway(file, args, env)
        expect(r.stderr, args.join(" ")).toBe(`spillway ${args[0]}: SPILLWAY_OUTPUT_DIR (${file}) is a file, not a directory; point it at a directory\n`)
        expect(r.status).toBe(2)
        expect(r.stdout).toBe("")
      }
    }
    // run still runs the command (an agent's hook sends every command to it): the problem is named once,
    // a short output is shown whole, and a long one with a marked cut that says no copy was saved
    for (const args of [["run", "--", "sh", "-c", "echo hi; exit 3"], ["run", "-c", "echo hi; exit 3"]]) {
      for (const env of [{}, { SPILLWAY_QUICK: "0" }]) {
        const r = spillway(file, args, env)
        expect(r.stderr, args.join(" ")).toBe(
          `spillway run: SPILLWAY_OUTPUT_DIR (${file}) is a file, not a directory; point it at a directory; the command runs, and a long output cannot be saved\n`
        )
        expect(r).toMatchObject({ status: 3, stdout: "hi\n" })
      }
    }
    const long = spillway(file, ["run", "--", "seq", "1", "100000"])
    expect(long.status).toBe(0)
    expect(long.stdout).toContain("100000\n")
    expect(long.stdout).toContain("[No copy was saved")
    expect(JSON.parse(spillway(file, ["run", "--json", "--", "echo", "hi"]).stdout)).toMatchObject({ text: "hi\n", exitCode: 0 })
    const missing = Path.join(base, "nonexistent")
    expect(spillway(base, ["serve", "--dir", missing])).toMatchObject({
      status: 2,
      stdout: "",
      stderr: `spillway serve: --dir ${missing} does not exist; name a directory that holds saved output\n`
    })
    expect(spillway(file, ["serve"])).toMatchObject({ status: 2, stderr: `spillway serve: SPILLWAY_OUTPUT_DIR (${file}) is a file, not a directory; point it at a directory\n` })
  })

  it("reads an MCP server's job output from the command as the same user, and names the channel when one is pinned", async () => {
    const dir = tempDir()
    const server = spawn(process.execPath, [bin, "mcp"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: dir },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let buffered = ""
    const waiting = new Map<number, (message: any) => void>()
    server.stdout.on("data", (d) => {
      buffered += d
      for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
        const message = JSON.parse(buffered.slice(0, at))
        buffered = buffered.slice(at + 1)
        waiting.get(message.id)?.(message)
      }
    })
    let id = 0
    const request = (method: string, params: object) =>
      new Promise<any>((resolve) => {
        waiting.set(++id, resolve)
        server.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
      })
    try {
      await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cli-test", version: "1" } })
      server.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
      const started = await request("tools/call", { name: "manage_process", arguments: { action: "start", command: "seq 1 500" } })
      const pid = started.result.structuredContent.pid as number
      await request("tools/call", { name: "manage_process", arguments: { action: "wait", pid, timeout_ms: 20_000 } })
    } finally {
      server.stdin.end()
      await new Promise((r) => server.once("exit", r))
    }
    const spool = Fs.readdirSync(dir).find((f) => f.startsWith("job-") && f.endsWith(".log"))!
    expect(spool).toBeDefined()
    for (const env of [{}, { SPILLWAY_QUICK: "0" }]) {
      const r = spillway(dir, ["read", spool, "--limit", "3"], env)
      expect(r.stdout).toBe("1\n2\n3\n")
      expect(r.stderr).toBe(`[lines 1-3 of 500; continue with: spillway read ${spool} --offset 4 --limit 3]\n`)
      expect(spillway(dir, ["grep", "^50$", spool], env).stdout).toBe("50:50\n")
    }
    const pinned = spillway(dir, ["read", spool], { SPILLWAY_CHANNEL: "cli" })
    expect(pinned.status).toBe(2)
    expect(pinned.stderr).toBe(
      `spillway read: you may not read job output "${spool}": SPILLWAY_CHANNEL=cli limits this command to that channel's jobs; unset it to read every channel of yours\n`
    )
    // another owner's is still refused, and a file name is never called a pid
    const other = spillway(dir, ["read", spool], { SPILLWAY_OWNER: "someone-else" })
    expect(other.status).toBe(2)
    expect(other.stderr).not.toContain("pid")
    expect(other.stderr).toBe(`spillway read: you may not read job output "${spool}": it is not yours (this command reads as SPILLWAY_OWNER, your user name by default)\n`)
  }, 60_000)
})
