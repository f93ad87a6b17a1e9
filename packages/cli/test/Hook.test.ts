import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))
const made: Array<string> = []
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

/** A home folder, a project folder and a `spillway` on PATH that runs this checkout's command. */
const world = () => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-hook-"))
  made.push(root)
  const home = Path.join(root, "home")
  const project = Path.join(root, "project")
  const shims = Path.join(root, "bin")
  for (const dir of [home, project, shims]) Fs.mkdirSync(dir)
  Fs.writeFileSync(Path.join(shims, "spillway"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} "$@"\n`, { mode: 0o755 })
  const env: Record<string, string> = {
    PATH: `${shims}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    CLAUDE_PROJECT_DIR: project,
    SPILLWAY_OUTPUT_DIR: Path.join(root, "out")
  }
  const write = (file: string, value: unknown) => {
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value))
  }
  return { home, project, env, write }
}

interface HookRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

const hook = (agent: string, input: string | Buffer, env: Record<string, string>): HookRun => {
  const r = spawnSync(process.execPath, [bin, "hook", agent], { env, input, timeout: 20_000 })
  return { status: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
}

/** Runs a rewritten line as a host would: `bash -c`, output merged. */
const run = (line: string, env: Record<string, string>, cwd: string) => {
  const r = spawnSync("bash", ["-c", `${line} 2>&1`], { env, cwd, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 })
  return { status: r.status, output: r.stdout.toString() }
}

const claudeCall = (command: string, project: string, permissionMode = "default") => JSON.stringify({
  session_id: "abc123",
  transcript_path: "/tmp/transcript.jsonl",
  cwd: project,
  permission_mode: permissionMode,
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command, description: "Print numbers", timeout: 120000 },
  tool_use_id: "toolu_01"
})

const bounded = (output: string) => {
  expect(output.length).toBeLessThan(30_000)
  expect(output).toMatch(/\n200000\n/)
  expect(output).toMatch(/spillway read \S+\.log/)
}

describe("spillway hook claude", () => {
  it("rewrites an allowed command, keeps tool_input, and its output comes back bounded", () => {
    const w = world()
    w.write(Path.join(w.project, ".claude", "settings.json"), { permissions: { allow: ["Bash(seq:*)"] } })
    const r = hook("claude", claudeCall("seq 1 200000", w.project), w.env)
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout).hookSpecificOutput
    expect(out).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "allow" })
    expect(out.updatedInput).toEqual({ command: "spillway run --stdin -- bash -c 'seq 1 200000'", description: "Print numbers", timeout: 120000 })
    const ran = run(out.updatedInput.command, w.env, w.project)
    expect(ran.status).toBe(0)
    bounded(ran.output)
  })

  it("never turns a prompt into an allow by default", () => {
    const w = world()
    // no rule: Claude Code would ask, so the call is left as it is
    expect(hook("claude", claudeCall("seq 1 3", w.project), w.env)).toEqual({ status: 0, stdout: "", stderr: "" })
    // an allow rule for one part is not an allow for the whole line
    w.write(Path.join(w.home, ".claude", "settings.json"), { permissions: { allow: ["Bash(seq:*)"] } })
    expect(hook("claude", claudeCall("seq 1 3 && rm -f x", w.project), w.env).stdout).toBe("")
    expect(hook("claude", claudeCall("seq 1 $(rm -f x)", w.project), w.env).stdout).toBe("")
    // a deny or ask rule anywhere wins over the allow rule
    w.write(Path.join(w.project, ".claude", "settings.local.json"), { permissions: { ask: ["Bash(seq 1 5:*)"] } })
    expect(hook("claude", claudeCall("seq 1 5", w.project), w.env).stdout).toBe("")
    expect(JSON.parse(hook("claude", claudeCall("seq 1 4", w.project), w.env).stdout).hookSpecificOutput.permissionDecision).toBe("allow")
    w.write(Path.join(w.project, ".claude", "settings.json"), { permissions: { deny: ["Bash(rm:*)"] } })
    expect(hook("claude", claudeCall("seq 1 4; \"rm\" -f x", w.project, "bypassPermissions"), w.env).stdout).toBe("")
    // even when told to allow, and in bypassPermissions mode
    expect(hook("claude", claudeCall("/bin/rm -f x", w.project), { ...w.env, SPILLWAY_HOOK_PERMISSION: "allow" }).stdout).toBe("")
    // a settings file that cannot be read leaves every call as it is
    w.write(Path.join(w.project, ".claude", "settings.json"), "{ not json")
    expect(hook("claude", claudeCall("seq 1 4", w.project), w.env).stdout).toBe("")
  })

  it("asks, or allows, when SPILLWAY_HOOK_PERMISSION says so, and allows in bypassPermissions mode", () => {
    const w = world()
    const decision = (extra: Record<string, string>, mode?: string) =>
      JSON.parse(hook("claude", claudeCall("seq 1 3", w.project, mode), { ...w.env, ...extra }).stdout).hookSpecificOutput.permissionDecision
    expect(decision({ SPILLWAY_HOOK_PERMISSION: "ask" })).toBe("ask")
    expect(decision({ SPILLWAY_HOOK_PERMISSION: "allow" })).toBe("allow")
    expect(decision({}, "bypassPermissions")).toBe("allow")
    const odd = hook("claude", claudeCall("seq 1 3", w.project), { ...w.env, SPILLWAY_HOOK_PERMISSION: "yes" })
    expect(odd.stdout).toBe("")
    expect(odd.stderr).toMatch(/SPILLWAY_HOOK_PERMISSION="?yes"? is not keep, ask or allow/)
  })

  it("leaves shell-state commands and background runs, and SPILLWAY_HOOK=off turns it off", () => {
    const w = world()
    for (const command of ["cd /tmp && ls", "export A=1"]) {
      expect(hook("claude", claudeCall(command, w.project, "bypassPermissions"), w.env).stdout).toBe("")
    }
    const background = JSON.parse(claudeCall("seq 1 3", w.project, "bypassPermissions"))
    background.tool_input.run_in_background = true
    expect(hook("claude", JSON.stringify(background), w.env).stdout).toBe("")
    expect(hook("claude", claudeCall("seq 1 3", w.project, "bypassPermissions"), { ...w.env, SPILLWAY_HOOK: "off" }).stdout).toBe("")
  })
})

describe("spillway hook codex", () => {
  const codexCall = (command: unknown, cwd: string) => JSON.stringify({
    session_id: "019a-thread",
    turn_id: "turn-1",
    transcript_path: null,
    cwd,
    hook_event_name: "PreToolUse",
    model: "gpt-5-codex",
    permission_mode: "default",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "call-1"
  })

  it("answers allow with updatedInput, as Codex requires, and the output comes back bounded", () => {
    const w = world()
    const r = hook("codex", codexCall("seq 1 200000", w.project), w.env)
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        updatedInput: { command: "spillway run --stdin -- bash -c 'seq 1 200000'" }
      }
    })
    bounded(run(JSON.parse(r.stdout).hookSpecificOutput.updatedInput.command, w.env, w.project).output)
    const argv = JSON.parse(hook("codex", codexCall(["bash", "-lc", "seq 1 3"], w.project), w.env).stdout)
    expect(argv.hookSpecificOutput.updatedInput.command).toEqual(["bash", "-lc", "spillway run --stdin -- bash -c 'seq 1 3'"])
  })

  it("leaves a command a prompt or forbidden rule may cover", () => {
    const w = world()
    w.write(
      Path.join(w.home, ".codex", "rules", "default.rules"),
      `prefix_rule(\n  pattern = ["git", ["push", "fetch"]],\n  decision = "forbidden",\n  justification = "no pushing",\n)\nprefix_rule(pattern = ["seq"])\n`
    )
    expect(hook("codex", codexCall("git push origin main", w.project), w.env).stdout).toBe("")
    expect(JSON.parse(hook("codex", codexCall("seq 1 2", w.project), w.env).stdout).hookSpecificOutput.permissionDecision).toBe("allow")
  })
})

describe("spillway hook gemini", () => {
  const geminiCall = (command: string, cwd: string, tool = "run_shell_command") => JSON.stringify({
    session_id: "s-1",
    transcript_path: "/tmp/t.json",
    cwd,
    hook_event_name: "BeforeTool",
    timestamp: "2026-01-01T00:00:00.000Z",
    tool_name: tool,
    tool_input: { command, description: "numbers", dir_path: cwd }
  })

  it("answers with hookSpecificOutput.tool_input, and the output comes back bounded", () => {
    const w = world()
    const r = hook("gemini", geminiCall("seq 1 200000", w.project), w.env)
    expect(r.status).toBe(0)
    const answer = JSON.parse(r.stdout)
    expect(answer).toEqual({ hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: "spillway run --stdin -- bash -c 'seq 1 200000'" } } })
    bounded(run(answer.hookSpecificOutput.tool_input.command, w.env, w.project).output)
    expect(JSON.parse(hook("gemini", geminiCall("seq 1 2", w.project), { ...w.env, SPILLWAY_HOOK_PERMISSION: "ask" }).stdout).decision).toBe("ask")
  })

  it("leaves a command a deny policy or tools.exclude may cover", () => {
    const w = world()
    w.write(Path.join(w.home, ".gemini", "policies", "mine.toml"), `[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = ["git push", "rm"]\ndecision = "deny"\npriority = 500\n`)
    w.write(Path.join(w.project, ".gemini", "settings.json"), `{\n  // comments are allowed here\n  "tools": { "exclude": ["run_shell_command(curl)"] }\n}`)
    for (const command of ["git push", "rm -rf build", "curl example.com"]) {
      expect(hook("gemini", geminiCall(command, w.project), w.env).stdout, command).toBe("{}\n")
    }
    expect(JSON.parse(hook("gemini", geminiCall("seq 1 2", w.project), w.env).stdout).hookSpecificOutput).toBeDefined()
  })
})

describe("spillway hook with bad input", () => {
  it("leaves the call untouched, says why on stderr, and exits 0", () => {
    const w = world()
    const cases: Array<[string, string | Buffer, RegExp]> = [
      ["claude", "not json", /not JSON/],
      ["codex", "[1,2]", /not a JSON object/],
      ["claude", Buffer.alloc(2 * 1024 * 1024, 0x20), /over 1048576 bytes/],
      ["gemini", Buffer.alloc(2 * 1024 * 1024, 0x7b), /over 1048576 bytes/],
      ["claude", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "/x" } }), /not the Bash tool/],
      ["codex", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: "x" } }), /not a shell tool/],
      ["gemini", JSON.stringify({ hook_event_name: "BeforeTool", tool_name: "read_file", tool_input: {} }), /not run_shell_command/],
      ["claude", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: 42 } }), /not a string/]
    ]
    for (const [agent, input, message] of cases) {
      const r = hook(agent, input, w.env)
      expect(r.status, String(message)).toBe(0)
      expect(r.stdout, String(message)).toBe(agent === "gemini" ? "{}\n" : "")
      expect(r.stderr, String(message)).toMatch(message)
      expect(r.stderr.trim().split("\n").length).toBe(1)
    }
    const unknown = hook("cursor", "{}", w.env)
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toMatch(/unknown agent "cursor"/)
  })

  it("gives up on input that never ends, within its deadline", async () => {
    const w = world()
    const started = Date.now()
    // stdin stays open and empty, as from a host that never writes
    const child = spawn(process.execPath, [bin, "hook", "claude"], { env: { ...w.env, SPILLWAY_HOOK_TIMEOUT_MS: "500" }, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => void (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => void (stderr += d.toString()))
    const status = await new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
    child.stdin.destroy()
    expect(status).toBe(0)
    expect(stdout).toBe("")
    expect(stderr).toMatch(/no whole input within 500 ms/)
    expect(Date.now() - started).toBeLessThan(10_000)
  })
})
