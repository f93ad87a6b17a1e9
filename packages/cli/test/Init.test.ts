import { afterAll, describe, expect, it } from "@effect/vitest"
import * as JsoncParser from "jsonc-parser"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as SmolToml from "smol-toml"
import { Init } from "../src/index.js"
import type { Environment } from "../src/init/Agent.js"
import * as Files from "../src/init/Files.js"

const made: Array<string> = []
const tempDir = (prefix = "spillway-init-") => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

const launcher = ["/opt/node/bin/node", "/opt/spillway/bin/spillway.cjs"]

/** A temp HOME with no agent on PATH, and bundles holding the two plugin files. */
const environment = (env: Record<string, string> = {}): Environment => {
  const home = tempDir()
  const bundles = tempDir("spillway-bundles-")
  Fs.mkdirSync(Path.join(bundles, "integrations"))
  Fs.writeFileSync(Path.join(bundles, "integrations", "opencode.js"), "export const SpillwayPlugin = async () => ({})\n")
  Fs.writeFileSync(Path.join(bundles, "integrations", "pi.js"), "export default function (pi) { void pi }\n")
  return { env: { PATH: tempDir("spillway-path-"), ...env }, home, launcher, bundles }
}

const write = (file: string, content: string, mode = 0o644) => {
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.writeFileSync(file, content, { mode })
  Fs.chmodSync(file, mode)
}

const read = (file: string) => Fs.readFileSync(file, "utf8")

/** Every file under a folder with its bytes: what a run wrote, or that it wrote nothing. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (here: string) => {
    for (const entry of Fs.readdirSync(here, { withFileTypes: true })) {
      const full = Path.join(here, entry.name)
      if (entry.isDirectory()) {
        out[Path.relative(dir, full) + "/"] = ""
        walk(full)
      } else out[Path.relative(dir, full)] = read(full)
    }
  }
  walk(dir)
  return out
}

const init = (e: Environment, agents: Init.InitOptions["agents"], flags: { dryRun?: boolean; uninstall?: boolean } = {}) =>
  Init.run({ agents, dryRun: flags.dryRun ?? false, uninstall: flags.uninstall ?? false }, e)

const jsonc = (text: string): any => {
  const errors: Array<JsoncParser.ParseError> = []
  const value = JsoncParser.parse(text, errors, { allowTrailingComma: true })
  expect(errors).toEqual([])
  return value
}

const claudeSettings = `{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Edit",
        "hooks": [{ "type": "command", "command": "prettier-hook" }]
      }
    ],
    "Stop": [{ "hooks": [{ "type": "command", "command": "notify-done" }] }]
  },
  "permissions": { "allow": ["Bash(ls:*)"] }
}
`

const claudeState = `{"numStartups":12,"mcpServers":{"github":{"type":"stdio","command":"gh-mcp","args":[]}},"projects":{}}`

describe("spillway init claude", () => {
  it("adds the Bash hook and the MCP server beside other tools' hooks and servers, keeping key order", () => {
    const e = environment()
    const settings = Path.join(e.home, ".claude", "settings.json")
    const state = Path.join(e.home, ".claude.json")
    write(settings, claudeSettings)
    write(state, claudeState, 0o600)
    const report = init(e, ["claude"])
    expect(report.refused).toBe(0)
    const s = JSON.parse(read(settings))
    expect(Object.keys(s)).toEqual(["model", "hooks", "permissions"])
    expect(s.hooks.PreToolUse).toEqual([
      { matcher: "Edit", hooks: [{ type: "command", command: "prettier-hook" }] },
      { matcher: "Bash", hooks: [{ type: "command", command: "/opt/node/bin/node /opt/spillway/bin/spillway.cjs hook claude" }] }
    ])
    expect(s.hooks.Stop).toEqual([{ hooks: [{ type: "command", command: "notify-done" }] }])
    const st = JSON.parse(read(state))
    expect(Object.keys(st)).toEqual(["numStartups", "mcpServers", "projects"])
    expect(st.mcpServers).toEqual({
      github: { type: "stdio", command: "gh-mcp", args: [] },
      spillway: { type: "stdio", command: "/opt/node/bin/node", args: ["/opt/spillway/bin/spillway.cjs", "mcp"] }
    })
    // the state file is private to its owner, and stays so
    expect(Fs.statSync(state).mode & 0o777).toBe(0o600)
    expect(read(state + Files.backupSuffix)).toBe(claudeState)
    expect(report.text).toContain("next: restart Claude Code")
  })

  it("changes nothing, byte for byte, when run a second time, and says so", () => {
    const e = environment()
    write(Path.join(e.home, ".claude", "settings.json"), claudeSettings)
    init(e, ["claude"])
    const before = snapshot(e.home)
    const again = init(e, ["claude"])
    expect(snapshot(e.home)).toEqual(before)
    expect(again.text).toMatch(/claude +unchanged +~\/\.claude\/settings\.json/)
    expect(again.text).toContain("nothing to change")
  })

  it("puts back the original bytes on --uninstall, and removes a file it created", () => {
    const e = environment()
    const settings = Path.join(e.home, ".claude", "settings.json")
    write(settings, claudeSettings)
    const before = snapshot(e.home)
    init(e, ["claude"])
    expect(Fs.existsSync(Path.join(e.home, ".claude.json"))).toBe(true)
    const undo = init(e, ["claude"], { uninstall: true })
    expect(undo.refused).toBe(0)
    const after = snapshot(e.home)
    // the record's folder stays: it is where spillway keeps its output too
    delete after[".spillway/"]
    expect(after).toEqual(before)
    expect(undo.text).toMatch(/restored +~\/\.claude\/settings\.json/)
    expect(undo.text).toMatch(/removed +~\/\.claude\.json/)
  })

  it("replaces its own hook when the command moved, rather than adding a second", () => {
    const e = environment()
    init(e, ["claude"])
    const moved = { ...e, launcher: ["spillway"] }
    init(moved, ["claude"])
    const s = JSON.parse(read(Path.join(e.home, ".claude", "settings.json")))
    expect(s.hooks.PreToolUse).toEqual([{ matcher: "Bash", hooks: [{ type: "command", command: "spillway hook claude" }] }])
  })

  it("keeps under CLAUDE_CONFIG_DIR what it would keep in ~/.claude", () => {
    const e = environment()
    const dir = Path.join(e.home, "elsewhere")
    const moved = { ...e, env: { ...e.env, CLAUDE_CONFIG_DIR: dir } }
    init(moved, ["claude"])
    expect(Fs.existsSync(Path.join(dir, "settings.json"))).toBe(true)
    expect(JSON.parse(read(Path.join(dir, ".claude.json"))).mcpServers.spillway.args).toEqual(["/opt/spillway/bin/spillway.cjs", "mcp"])
    expect(Fs.existsSync(Path.join(e.home, ".claude"))).toBe(false)
  })
})

describe("spillway init codex", () => {
  const config = `# my Codex settings
model = "gpt-5-codex" # the default

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]

[profiles.fast]
model = "gpt-5-mini"
`

  it("appends [mcp_servers.spillway] to config.toml, keeping the other tables and comments, and parses back", () => {
    const e = environment()
    const file = Path.join(e.home, ".codex", "config.toml")
    write(file, config)
    expect(init(e, ["codex"]).refused).toBe(0)
    const text = read(file)
    expect(text.startsWith(config)).toBe(true)
    const parsed = SmolToml.parse(text) as any
    expect(parsed.model).toBe("gpt-5-codex")
    expect(parsed.mcp_servers.docs).toEqual({ command: "docs-mcp", args: ["--stdio"] })
    expect(parsed.profiles.fast.model).toBe("gpt-5-mini")
    expect(parsed.mcp_servers.spillway).toEqual({
      command: "/opt/node/bin/node",
      args: ["/opt/spillway/bin/spillway.cjs", "mcp"],
      tool_timeout_sec: 600
    })
    const hooks = JSON.parse(read(Path.join(e.home, ".codex", "hooks.json")))
    expect(hooks).toEqual({
      hooks: { PreToolUse: [{ matcher: "^Bash$", hooks: [{ type: "command", command: "/opt/node/bin/node /opt/spillway/bin/spillway.cjs hook codex" }] }] }
    })
  })

  it("is idempotent and undone byte for byte, under CODEX_HOME", () => {
    const base = environment()
    const dir = Path.join(base.home, "codex-home")
    const e = { ...base, env: { ...base.env, CODEX_HOME: dir } }
    write(Path.join(dir, "config.toml"), config)
    const before = snapshot(base.home)
    init(e, ["codex"])
    const once = snapshot(base.home)
    expect(init(e, ["codex"]).text).toContain("nothing to change")
    expect(snapshot(base.home)).toEqual(once)
    init(e, ["codex"], { uninstall: true })
    const after = snapshot(base.home)
    delete after[".spillway/"]
    expect(after).toEqual(before)
  })

  it("refuses a [mcp_servers.spillway] someone else wrote, and leaves the file untouched", () => {
    const e = environment()
    const file = Path.join(e.home, ".codex", "config.toml")
    const own = `[mcp_servers.spillway]\ncommand = "my-wrapper"\n`
    write(file, own)
    const report = init(e, ["codex"])
    expect(report.refused).toBe(1)
    expect(report.text).toMatch(/codex +refused +~\/\.codex\/config\.toml +it already has a \[mcp_servers\.spillway\] entry of its own/)
    expect(read(file)).toBe(own)
    // the hooks file, which it could edit, was still written
    expect(Fs.existsSync(Path.join(e.home, ".codex", "hooks.json"))).toBe(true)
  })

  it("removes only its own table when the file was edited after init", () => {
    const e = environment()
    const file = Path.join(e.home, ".codex", "config.toml")
    write(file, config)
    init(e, ["codex"])
    Fs.appendFileSync(file, `\n[mcp_servers.later]\ncommand = "added-after"\n`)
    expect(init(e, ["codex"], { uninstall: true }).refused).toBe(0)
    const parsed = SmolToml.parse(read(file)) as any
    expect(parsed.mcp_servers.spillway).toBeUndefined()
    expect(parsed.mcp_servers.later).toEqual({ command: "added-after" })
    expect(parsed.mcp_servers.docs).toEqual({ command: "docs-mcp", args: ["--stdio"] })
    expect(read(file)).toBe(config + `\n[mcp_servers.later]\ncommand = "added-after"\n`)
  })
})

describe("spillway init gemini, opencode, pi, cursor", () => {
  it("gemini: a BeforeTool hook on run_shell_command and the MCP server, under GEMINI_CLI_HOME", () => {
    const base = environment()
    const e = { ...base, env: { ...base.env, GEMINI_CLI_HOME: Path.join(base.home, "g") } }
    const file = Path.join(base.home, "g", ".gemini", "settings.json")
    write(file, `{\n\t"theme": "GitHub",\n\t"mcpServers": { "other": { "command": "x" } }\n}\n`)
    init(e, ["gemini"])
    const s = JSON.parse(read(file))
    expect(s.hooks.BeforeTool).toEqual([
      { matcher: "run_shell_command", hooks: [{ name: "spillway", type: "command", command: "/opt/node/bin/node /opt/spillway/bin/spillway.cjs hook gemini" }] }
    ])
    expect(s.mcpServers).toEqual({ other: { command: "x" }, spillway: { command: "/opt/node/bin/node", args: ["/opt/spillway/bin/spillway.cjs", "mcp"] } })
    // the file's own tab indentation is kept for what is added
    expect(read(file)).toContain(`\n\t"hooks": {\n\t\t"BeforeTool"`)
  })

  it("opencode: keeps the comments of opencode.jsonc, adds the local MCP server, and copies the plugin", () => {
    const e = environment()
    const dir = Path.join(e.home, ".config", "opencode")
    const file = Path.join(dir, "opencode.jsonc")
    const original = `{
  // the model I use
  "model": "anthropic/claude-sonnet-4",
  /* servers */
  "mcp": {
    "other": { "type": "remote", "url": "https://example.com/mcp" }, // trailing comment
  },
}
`
    write(file, original)
    expect(init(e, ["opencode"]).refused).toBe(0)
    const text = read(file)
    expect(text).toContain("// the model I use")
    expect(text).toContain("/* servers */")
    expect(text).toContain("// trailing comment")
    const parsed = jsonc(text)
    expect(parsed.mcp.other).toEqual({ type: "remote", url: "https://example.com/mcp" })
    expect(parsed.mcp.spillway).toEqual({
      type: "local",
      command: ["/opt/node/bin/node", "/opt/spillway/bin/spillway.cjs", "mcp"],
      enabled: true,
      timeout: 600000
    })
    expect(read(Path.join(dir, "plugins", "spillway.js"))).toBe(read(Path.join(e.bundles, "integrations", "opencode.js")))
    init(e, ["opencode"], { uninstall: true })
    expect(read(file)).toBe(original)
    expect(Fs.existsSync(Path.join(dir, "plugins"))).toBe(false)
  })

  it("opencode: follows XDG_CONFIG_HOME and an existing plugin/ folder", () => {
    const base = environment()
    const xdg = Path.join(base.home, "xdg")
    const e = { ...base, env: { ...base.env, XDG_CONFIG_HOME: xdg } }
    Fs.mkdirSync(Path.join(xdg, "opencode", "plugin"), { recursive: true })
    init(e, ["opencode"])
    expect(Fs.existsSync(Path.join(xdg, "opencode", "plugin", "spillway.js"))).toBe(true)
    expect(jsonc(read(Path.join(xdg, "opencode", "opencode.json"))).mcp.spillway.type).toBe("local")
  })

  it("pi: copies the extension into PI_CODING_AGENT_DIR/extensions, and refuses a file of that name it did not write", () => {
    const base = environment()
    const e = { ...base, env: { ...base.env, PI_CODING_AGENT_DIR: Path.join(base.home, "pi-agent") } }
    const target = Path.join(base.home, "pi-agent", "extensions", "spillway.js")
    init(e, ["pi"])
    expect(read(target)).toBe(read(Path.join(base.bundles, "integrations", "pi.js")))
    init(e, ["pi"], { uninstall: true })
    expect(Fs.existsSync(target)).toBe(false)

    write(target, "// someone else's spillway.js\n")
    const report = init(e, ["pi"])
    expect(report.refused).toBe(1)
    expect(read(target)).toBe("// someone else's spillway.js\n")
  })

  it("pi: says which bundle is missing when the command was built without it", () => {
    const e = environment()
    Fs.rmSync(Path.join(e.bundles, "integrations", "pi.js"))
    const report = init(e, ["pi"])
    expect(report.refused).toBe(1)
    expect(report.text).toContain(`the bundle ${Path.join(e.bundles, "integrations", "pi.js")} is missing`)
  })

  it("cursor: only the MCP server, and says why there is no hook", () => {
    const e = environment()
    const report = init(e, ["cursor"])
    expect(JSON.parse(read(Path.join(e.home, ".cursor", "mcp.json")))).toEqual({
      mcpServers: { spillway: { command: "/opt/node/bin/node", args: ["/opt/spillway/bin/spillway.cjs", "mcp"] } }
    })
    expect(Fs.existsSync(Path.join(e.home, ".cursor", "hooks.json"))).toBe(false)
    expect(report.text).toContain("Cursor's shell hooks can allow or deny a command but not rewrite it")
  })
})

describe("spillway init, for every agent", () => {
  it("configures only the agents found installed (a config folder, or a binary on PATH) and says what it skipped", () => {
    const e = environment()
    Fs.mkdirSync(Path.join(e.home, ".gemini"))
    const codex = Path.join(e.env.PATH!, "codex")
    write(codex, "#!/bin/sh\n", 0o755)
    const report = init(e, "all")
    expect(report.text).toMatch(/gemini +created +~\/\.gemini\/settings\.json/)
    expect(report.text).toMatch(/codex +created +~\/\.codex\/config\.toml/)
    expect(report.text).toMatch(/claude +skipped +not installed \(no ~\/\.claude, no ~\/\.claude\.json, no claude on PATH\)/)
    expect(report.text).toMatch(/pi +skipped +not installed/)
    expect(Fs.existsSync(Path.join(e.home, ".claude"))).toBe(false)
    expect(Fs.existsSync(Path.join(e.home, ".cursor"))).toBe(false)
    // uninstall of every agent takes out what was added, folders it made included
    init(e, "all", { uninstall: true })
    expect(Fs.existsSync(Path.join(e.home, ".codex"))).toBe(false)
    expect(snapshot(Path.join(e.home, ".gemini"))).toEqual({})
  })

  it("--dry-run prints each change and writes nothing", () => {
    const e = environment()
    write(Path.join(e.home, ".claude", "settings.json"), claudeSettings)
    Fs.mkdirSync(Path.join(e.home, ".codex"))
    const before = snapshot(e.home)
    const report = init(e, "all", { dryRun: true })
    expect(snapshot(e.home)).toEqual(before)
    expect(report.text).toMatch(/claude +would change +~\/\.claude\/settings\.json +add a PreToolUse hook on Bash/)
    expect(report.text).toMatch(/codex +would create +~\/\.codex\/hooks\.json/)
    expect(report.text).toContain("dry run: nothing was written")
    init(e, "all")
    const installed = snapshot(e.home)
    expect(init(e, "all", { uninstall: true, dryRun: true }).text).toMatch(/claude +would restore +~\/\.claude\/settings\.json/)
    expect(snapshot(e.home)).toEqual(installed)
  })

  it("refuses a corrupt config file, naming it and the parse error, leaves it untouched, and still does the others", () => {
    const e = environment()
    const broken = Path.join(e.home, ".claude", "settings.json")
    write(broken, `{ "hooks": { "PreToolUse": [ }`)
    const toml = Path.join(e.home, ".codex", "config.toml")
    write(toml, `model = "x"\n[broken\n`)
    Fs.mkdirSync(Path.join(e.home, ".gemini"))
    const report = init(e, "all")
    expect(report.refused).toBe(2)
    expect(report.text).toMatch(/claude +refused +~\/\.claude\/settings\.json +ValueExpected at line 1, column \d+; left untouched/)
    expect(report.text).toMatch(/codex +refused +~\/\.codex\/config\.toml +.+; left untouched/)
    expect(read(broken)).toBe(`{ "hooks": { "PreToolUse": [ }`)
    expect(read(toml)).toBe(`model = "x"\n[broken\n`)
    expect(Fs.existsSync(broken + Files.backupSuffix)).toBe(false)
    expect(JSON.parse(read(Path.join(e.home, ".gemini", "settings.json"))).mcpServers.spillway).toBeDefined()
    expect(JSON.parse(read(Path.join(e.home, ".claude.json"))).mcpServers.spillway).toBeDefined()
    expect(report.text).toContain("2 files were refused and left untouched")
  })

  it("keeps the user's edit made between init and uninstall, removing only Spillway's entries", () => {
    const e = environment()
    const settings = Path.join(e.home, ".claude", "settings.json")
    const state = Path.join(e.home, ".claude.json")
    write(settings, claudeSettings)
    init(e, ["claude"])
    // the person adds a hook of their own to the group Spillway added, and a server beside Spillway's
    const s = JSON.parse(read(settings))
    s.hooks.PreToolUse[1].hooks.push({ type: "command", command: "audit-bash" })
    s.theme = "dark"
    write(settings, JSON.stringify(s, null, 2) + "\n")
    const st = JSON.parse(read(state))
    st.mcpServers.later = { command: "later-mcp" }
    write(state, JSON.stringify(st, null, 2) + "\n")
    const undo = init(e, ["claude"], { uninstall: true })
    expect(undo.refused).toBe(0)
    const s2 = JSON.parse(read(settings))
    expect(s2.theme).toBe("dark")
    expect(s2.hooks.PreToolUse).toEqual([
      { matcher: "Edit", hooks: [{ type: "command", command: "prettier-hook" }] },
      { matcher: "Bash", hooks: [{ type: "command", command: "audit-bash" }] }
    ])
    expect(JSON.parse(read(state)).mcpServers).toEqual({ later: { command: "later-mcp" } })
    expect(undo.text).toMatch(/claude +changed +~\/\.claude\/settings\.json +removed .*kept the rest; the copy from before spillway init stays in settings\.json\.spillway-backup/)
  })

  it("reads its record back through the Schema, and refuses a record it did not write", () => {
    const e = environment()
    init(e, ["cursor"])
    const record = JSON.parse(read(Files.recordFile(e.home)))
    expect(record.version).toBe(1)
    expect(Object.keys(record.files)).toEqual([Path.join(e.home, ".cursor", "mcp.json")])
    expect(record.folders).toEqual([Path.join(e.home, ".cursor")])
    write(Files.recordFile(e.home), `{"version": 2, "files": []}`)
    const report = init(e, ["cursor"], { uninstall: true })
    expect(report.refused).toBe(1)
    expect(report.text).toContain(`${Files.recordFile(e.home)} is not a record spillway init wrote`)
    expect(Fs.existsSync(Path.join(e.home, ".cursor", "mcp.json"))).toBe(true)
  })

  it("refuses a config file too large to be one, and a folder where a file should be", () => {
    const e = environment()
    const big = Path.join(e.home, ".cursor", "mcp.json")
    write(big, "")
    Fs.truncateSync(big, Files.maxBytes + 1)
    Fs.mkdirSync(Path.join(e.home, ".gemini", "settings.json"), { recursive: true })
    const report = init(e, ["cursor", "gemini"])
    expect(report.refused).toBe(2)
    expect(report.text).toContain(`larger than ${Files.maxBytes} bytes`)
    expect(report.text).toContain("it is not a regular file")
    expect(Fs.statSync(big).size).toBe(Files.maxBytes + 1)
  })

  it("refuses an entry of the wrong type rather than overwriting it", () => {
    const e = environment()
    const file = Path.join(e.home, ".cursor", "mcp.json")
    write(file, `{"mcpServers": ["not", "an", "object"]}`)
    const report = init(e, ["cursor"])
    expect(report.text).toContain("mcpServers is not an object")
    expect(read(file)).toBe(`{"mcpServers": ["not", "an", "object"]}`)
  })
})

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))

const spillway = (home: string, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [bin, ...args], { env: { PATH: "/usr/bin:/bin", HOME: home }, timeout: 30_000 })
  return { status: r.status, stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8") }
}

describe("the spillway command's init", () => {
  it("installs, is idempotent, dry-runs and uninstalls byte for byte", () => {
    const home = tempDir()
    write(Path.join(home, ".claude", "settings.json"), claudeSettings)
    write(Path.join(home, ".codex", "config.toml"), `model = "o3"\n`)
    const before = snapshot(home)

    const dry = spillway(home, ["init", "--dry-run"])
    expect(dry.status).toBe(0)
    expect(dry.stdout).toContain("dry run: nothing was written")
    expect(snapshot(home)).toEqual(before)

    const first = spillway(home, ["init"])
    expect(first.stderr).toBe("")
    expect(first.status).toBe(0)
    expect(first.stdout).toMatch(/claude +changed +~\/\.claude\/settings\.json/)
    expect(first.stdout).toMatch(/gemini +skipped +not installed/)
    expect(first.stdout).toContain("trust the new hook in /hooks")
    // spillway is not on this PATH, so the agents start it by node and the bin's absolute paths
    const hook = JSON.parse(read(Path.join(home, ".claude", "settings.json"))).hooks.PreToolUse[1].hooks[0].command
    expect(hook).toBe(`${process.execPath} ${Fs.realpathSync(bin)} hook claude`)
    const codex = SmolToml.parse(read(Path.join(home, ".codex", "config.toml"))) as any
    expect(codex.mcp_servers.spillway.args).toEqual([Fs.realpathSync(bin), "mcp"])
    // what the hook names is a command that exists: its mcp answers --help
    const help = spawnSync(codex.mcp_servers.spillway.command, [...codex.mcp_servers.spillway.args, "--help"], { timeout: 30_000 })
    expect(help.stdout.toString()).toContain("usage: spillway mcp")

    const installed = snapshot(home)
    const second = spillway(home, ["init"])
    expect(second.status).toBe(0)
    expect(second.stdout).toContain("nothing to change")
    expect(snapshot(home)).toEqual(installed)

    const undo = spillway(home, ["init", "--uninstall"])
    expect(undo.status).toBe(0)
    const after = snapshot(home)
    delete after[".spillway/"]
    expect(after).toEqual(before)
  })

  it("exits non-zero on a corrupt file, naming it, and leaves it as it was", () => {
    const home = tempDir()
    write(Path.join(home, ".gemini", "settings.json"), "{ not json")
    const r = spillway(home, ["init", "gemini"])
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/gemini +refused +~\/\.gemini\/settings\.json +\w+ at line 1, column \d+; left untouched/)
    expect(r.stderr).toContain("spillway init: 1 file(s) refused")
    expect(read(Path.join(home, ".gemini", "settings.json"))).toBe("{ not json")
  })

  it("rejects an agent it does not know", () => {
    const r = spillway(tempDir(), ["init", "vim"])
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain("spillway init:")
  })
})

const repo = fileURLToPath(new URL("../../../", import.meta.url))

describe("the Claude Code plugin folder", () => {
  const plugin = Path.join(repo, "integrations", "claude-code")

  it("holds a manifest, a Bash hook running spillway hook claude, and the spillway mcp server", () => {
    const manifest = JSON.parse(read(Path.join(plugin, ".claude-plugin", "plugin.json")))
    expect(manifest.name).toBe("spillway")
    expect(manifest.name).toMatch(/^[a-z0-9-]+$/)
    const hooks = JSON.parse(read(Path.join(plugin, "hooks", "hooks.json")))
    expect(Object.keys(hooks.hooks)).toEqual(["PreToolUse"])
    expect(hooks.hooks.PreToolUse).toEqual([{ matcher: "Bash", hooks: [{ type: "command", command: "spillway hook claude" }] }])
    const mcp = JSON.parse(read(Path.join(plugin, ".mcp.json")))
    expect(mcp).toEqual({ mcpServers: { spillway: { command: "spillway", args: ["mcp"] } } })
  })

  it("names commands the spillway command has", () => {
    const hooks = JSON.parse(read(Path.join(plugin, "hooks", "hooks.json")))
    const mcp = JSON.parse(read(Path.join(plugin, ".mcp.json")))
    const commands: Array<ReadonlyArray<string>> = [
      hooks.hooks.PreToolUse[0].hooks[0].command.split(" "),
      [mcp.mcpServers.spillway.command, ...mcp.mcpServers.spillway.args]
    ]
    for (const [program, sub] of commands) {
      expect(program).toBe("spillway")
      // the bin answers the subcommand's --help, rather than calling it unknown
      const r = spawnSync(process.execPath, [bin, sub!, "--help"], { env: { PATH: "/usr/bin:/bin", HOME: tempDir() }, timeout: 30_000 })
      expect(r.status, `${sub} --help`).toBe(0)
      expect(r.stdout.toString()).toContain(`spillway ${sub}`)
    }
  })
})

describe("docs/agents.md", () => {
  const blocks = [...read(Path.join(repo, "docs", "agents.md")).matchAll(/^ *```(\w+)\n([\s\S]*?)^ *```$/gm)].map((m) => ({ lang: m[1]!, text: m[2]! }))

  it("shows blocks that parse, and that init's own entries match", () => {
    const json = blocks.filter((b) => b.lang === "json" || b.lang === "jsonc").map((b) => jsonc(b.text))
    const toml = blocks.filter((b) => b.lang === "toml").map((b) => SmolToml.parse(b.text) as any)
    expect(json.length).toBe(7)
    expect(toml).toHaveLength(1)
    // what init writes with spillway on PATH is what the page shows
    const e = { ...environment(), launcher: ["spillway"] }
    init(e, ["claude", "codex", "gemini", "opencode", "cursor"])
    expect(JSON.parse(read(Path.join(e.home, ".claude", "settings.json")))).toEqual(json[0])
    expect(JSON.parse(read(Path.join(e.home, ".claude.json")))).toEqual(json[1])
    expect(SmolToml.parse(read(Path.join(e.home, ".codex", "config.toml")))).toEqual(toml[0])
    expect(JSON.parse(read(Path.join(e.home, ".codex", "hooks.json")))).toEqual(json[2])
    expect(JSON.parse(read(Path.join(e.home, ".gemini", "settings.json")))).toEqual(json[3])
    expect(jsonc(read(Path.join(e.home, ".config", "opencode", "opencode.json")))).toEqual(json[4])
    expect(JSON.parse(read(Path.join(e.home, ".cursor", "mcp.json")))).toEqual(json[5])
  })
})
