import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Help from "../src/Help.js"
import * as Parse from "../src/Parse.js"
import * as Usage from "../src/Usage.js"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))
const page = fileURLToPath(new URL("../../../docs/cli.md", import.meta.url))

/** The real bin, its stdout and stderr piped (not a terminal). */
const spillway = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: Os.tmpdir(), SPILLWAY_OUTPUT_DIR: Path.join(Os.tmpdir(), "spillway-help-none"), ...env },
    encoding: "utf8",
    timeout: 30_000
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

const commands = ["run", "read", "grep", "mcp", "host", "hook", "init", "serve"]

/** What no help page may hold: escape codes, the framework's own options and wording, a `$ run` usage line. */
const framework = [/\x1b/, /--completions/, /--log-level/, /--wizard/, /--version/, /A user-defined piece of text/, /An integer\./, /^\s*\$ /m]

/** A shell line's words, single and double quotes honoured, up to a redirection, pipe or comment. */
const words = (line: string): Array<string> => {
  const out: Array<string> = []
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    const bare = m[3]
    if (bare !== undefined && (bare === "#" || bare === ">" || bare === "|" || bare.startsWith(">"))) break
    out.push(m[1] ?? m[2] ?? bare!)
  }
  return out
}

describe("help pages", () => {
  for (const name of commands) {
    it(`spillway ${name} --help: what it does, every flag, the environment and exit statuses, with no escape codes`, () => {
      const spec = Usage.spec(name)!
      const r = spillway([name, "--help"])
      expect(r.status).toBe(0)
      expect(r.stderr).toBe("")
      const text = r.stdout
      expect(text.startsWith(`usage: spillway ${name}`)).toBe(true)
      expect(text).toContain(`\n\nspillway ${name}: ${spec.summary}.\n\n`)
      for (const f of spec.flags) expect(text, Usage.typed(f)).toMatch(new RegExp(`(^|[ ,])${Usage.typed(f)}\\b`, "m"))
      for (const [variable] of spec.environment) expect(text).toContain(variable)
      expect(text).toContain("Exit status:")
      for (const [status] of spec.exits) expect(text).toContain(`  ${status}`)
      expect(text).toContain("Examples:")
      expect(text).toMatch(new RegExp(`Examples:\\n {2}.*spillway ${name}`))
      for (const bad of framework) expect(text, String(bad)).not.toMatch(bad)
      // the same page from spillway help COMMAND, and with NO_COLOR set
      expect(spillway(["help", name]).stdout).toBe(text)
      expect(spillway([name, "--help"], { NO_COLOR: "1" }).stdout).toBe(text)
      expect(text).toBe(Help.page(spec))
    })
  }

  it("spillway run --help says what -- and -c do, that the status is the command's, and names its flags and SPILLWAY_OUTPUT_DIR", () => {
    const text = spillway(["run", "--help"]).stdout
    expect(text.split("\n").slice(0, 2)).toEqual(["usage: spillway run [FLAGS] -- COMMAND [ARGUMENTS...]", "   or: spillway run [FLAGS] -c 'SHELL LINE'"])
    expect(text).toContain("-c LINE")
    expect(text).toMatch(/run LINE with \/bin\/sh -c/)
    expect(text).toContain("exits with the command's own status")
    for (const flag of ["--stdin", "--max-chars N", "--json", "SPILLWAY_OUTPUT_DIR"]) expect(text).toContain(flag)
    expect(text).toMatch(/^ {2}127 +the command could not be started/m)
  })

  it("mcp and host --help say more than one line", () => {
    for (const name of ["mcp", "host"]) expect(spillway([name, "--help"]).stdout.split("\n").length).toBeGreaterThan(20)
  })

  it("spillway alone prints the list of commands on stderr and exits 2; --help and help print it on stdout", () => {
    const alone = spillway([])
    expect(alone.status).toBe(2)
    expect(alone.stdout).toBe("")
    expect(alone.stderr).toBe(Help.top())
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const r = spillway(args)
      expect(r.status, args.join(" ")).toBe(0)
      expect(r.stdout).toBe(Help.top())
    }
    const listed = Help.top().split("\n").filter((l) => /^ {2}[a-z]+ {2}/.test(l)).map((l) => l.trim().split(/\s+/)[0])
    expect(listed).toEqual(commands)
    for (const bad of framework.filter((b) => b !== framework[4])) expect(Help.top(), String(bad)).not.toMatch(bad)
    expect(spillway(["--version"])).toMatchObject({ status: 0, stdout: "spillway 0.1.0\n" })
  })

  it("spillway help with an unknown command says so and exits 2; --version is not a command's flag", () => {
    const r = spillway(["help", "bogus"])
    expect(r.status).toBe(2)
    expect(r.stderr.startsWith("spillway: unknown command 'bogus'\n\n")).toBe(true)
    const version = spillway(["run", "--version", "--", "true"])
    expect(version).toMatchObject({ status: 2, stderr: "spillway run: unknown flag --version\n" })
  })
})

describe("docs/cli.md", () => {
  it("holds every command's reference as the help data writes it", () => {
    const text = Fs.readFileSync(page, "utf8")
    expect(text.endsWith(Help.reference()), "regenerate the reference of docs/cli.md from Help.reference()").toBe(true)
    for (const spec of Usage.specs) {
      for (const f of spec.flags) expect(text).toContain(`\`${Help.flagLabel(f)}\``)
    }
  })

  it("shows only spillway lines the command reads without a usage error", () => {
    const text = Fs.readFileSync(page, "utf8")
    const examples = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split("\n")).filter((l) => l.startsWith("spillway "))
    examples.push(...Usage.specs.flatMap((s) => s.examples.map(([line]) => line)).filter((l) => l.startsWith("spillway ")))
    expect(examples.length).toBeGreaterThan(20)
    for (const line of examples) {
      const [, name, ...args] = words(line)
      const spec = Usage.spec(name!)
      expect(spec, line).toBeDefined()
      const parsed = Parse.parse(spec!, args)
      expect(Parse.isMistake(parsed) ? parsed.mistake : "", line).toBe("")
      if (!Parse.isMistake(parsed) && !spec!.takesCommand) {
        const given = Parse.positionals(spec!, parsed.positionals)
        expect(Parse.isMistake(given) ? given.mistake : "", line).toBe("")
      }
    }
  })
})

describe("the parser", () => {
  const run = Usage.spec("run")!
  const grep = Usage.spec("grep")!

  it("names an unknown flag as typed, before the command is taken", () => {
    expect(Parse.parse(run, ["--jsn", "--", "echo", "hi"])).toEqual({ mistake: "unknown flag --jsn" })
    expect(Parse.parse(grep, ["-c", "x", "NAME"])).toEqual({ mistake: "unknown flag -c" })
    expect(Parse.parse(run, ["--json", "--", "--jsn"])).toMatchObject({ command: ["--jsn"] })
    expect(Parse.parse(run, ["echo", "--jsn"])).toMatchObject({ command: ["echo", "--jsn"] })
  })

  it("words every bad number one way, naming the flag as typed", () => {
    expect(Parse.parse(grep, ["--max-results", "abc"])).toEqual({ mistake: "--max-results expects a whole number, got 'abc'" })
    expect(Parse.parse(grep, ["--max-results=0"])).toEqual({ mistake: "--max-results must be from 1 to 10000, got '0'" })
    expect(Parse.parse(grep, ["--max-results", "-3"])).toEqual({ mistake: "--max-results must be from 1 to 10000, got '-3'" })
    expect(Parse.parse(grep, ["--max-results", "99999999999999999999"])).toEqual({ mistake: "--max-results must be from 1 to 10000, got '99999999999999999999'" })
    expect(Parse.parse(grep, ["--max-results"])).toEqual({ mistake: "--max-results expects a whole number" })
    expect(Parse.parse(grep, ["-i", "-i"])).toEqual({ mistake: "--ignore-case is given twice" })
  })

  it("quotes a hostile argument cut to a bounded length", () => {
    const long = "x".repeat(1_000_000)
    const r = Parse.parse(grep, ["--max-results", long])
    expect(Parse.isMistake(r) && r.mistake.length).toBeLessThan(200)
    const flag = Parse.parse(grep, [`--${long}`])
    expect(Parse.isMistake(flag) && flag.mistake.length).toBeLessThan(200)
  })
})
