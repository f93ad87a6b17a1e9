/**
 * Spillway as a user gets it. The one package, `spillway`, packed from the
 * build with `pnpm pack:spillway`, installed with npm into an empty global
 * prefix (as the README says) and into an empty project; then the installed
 * command, its hook, its init, its MCP server and the libraries are used as a
 * user would use them. And once, the seven `@spillway/*` packages that
 * programs written with Effect install instead.
 *
 * This test packs what the build made, and does not build: `pnpm test`
 * builds first; run alone, build with `npx --yes pnpm@10.34.8 build`. A build
 * older than the sources fails here with that advice.
 *
 * npm runs no install scripts here (`--ignore-scripts`): better-sqlite3's
 * would fetch or compile its addon, minutes of work that is better-sqlite3's
 * own business. Its addon, built from the same version by the workspace's
 * install, is put where the script would have put it.
 * `SPILLWAY_INSTALL_TEST_SCRIPTS=1` runs the scripts instead.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { builtinModules, createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { blockHolding, root, type ServerEntry } from "./readme.js"

/** The packages programs written with Effect install, all in one `npm install`. */
const effectPackages = ["core", "node", "agents", "tools", "remote", "web", "cli"] as const
/** The packages whose sources the one package is built from. */
const sourcePackages = [...effectPackages, "ai-sdk", "langchain"] as const
const pnpm = ["--yes", "pnpm@10.34.8"]
const scripts = process.env.SPILLWAY_INSTALL_TEST_SCRIPTS === "1"
const npmFlags = ["--no-audit", "--no-fund", "--prefer-offline", ...(scripts ? [] : ["--ignore-scripts"])]
const minute = 60_000
const built = Path.join(root, "packages", "spillway", "dist", "package")

/** Modules the command's bundles name without shipping them: reached only when installed (inside `try`), or text of generated code. */
const optionalModules = ["pg-native", "bufferutil", "utf-8-validate", "bindings", "ajv", "ajv-formats"]

interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Most bytes of output kept from one program. */
const MAX_OUTPUT = 64 * 1024 * 1024

/**
 * Runs a program to its end; a program that cannot start, prints more than
 * `MAX_OUTPUT` or times out is an error. Asynchronous, so that the test's
 * worker keeps answering the test runner while npm installs for minutes.
 */
const run = (file: string, args: ReadonlyArray<string>, options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number; input?: string } = {}): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const what = `${file} ${args.join(" ")}`
    const child = spawn(file, args, { cwd: options.cwd ?? root, env: options.env ?? process.env, stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    let size = 0
    let failed: Error | undefined
    const stop = (e: Error) => {
      failed ??= e
      child.kill("SIGKILL")
    }
    const timeout = options.timeout ?? 4 * minute
    const timer = setTimeout(() => stop(new Error(`${what}: timed out after ${timeout} ms`)), timeout)
    const take = (into: Array<Buffer>) => (d: Buffer) => {
      size += d.length
      if (size > MAX_OUTPUT) stop(new Error(`${what}: printed more than ${MAX_OUTPUT} bytes`))
      else into.push(d)
    }
    child.stdout!.on("data", take(out))
    child.stderr!.on("data", take(err))
    if (options.input !== undefined) child.stdin!.end(options.input)
    child.once("error", (e) => {
      clearTimeout(timer)
      reject(new Error(`${what}: ${e.message}`))
    })
    child.once("close", (status) => {
      clearTimeout(timer)
      if (failed !== undefined) reject(failed)
      else resolve({ status, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
    })
  })

/** Runs a program that must succeed, saying what it printed when it does not. */
const succeed = async (file: string, args: ReadonlyArray<string>, options: Parameters<typeof run>[2] = {}): Promise<string> => {
  const r = await run(file, args, options)
  if (r.status !== 0) throw new Error(`${file} ${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/** The files under a directory, as paths relative to it. */
const filesUnder = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => Path.relative(dir, Path.join(e.parentPath, e.name)))

/** What the build made is missing or older than the sources: why, or undefined when it is there and current. */
const buildProblem = (): string | undefined => {
  for (const name of effectPackages) {
    if (!Fs.existsSync(Path.join(root, "packages", name, "dist", "index.js"))) return `packages/${name}/dist/index.js is missing`
  }
  const bundle = Path.join(root, "packages", "cli", "dist", "spillway.cjs")
  if (!Fs.existsSync(bundle)) return "the command's bundle, packages/cli/dist/spillway.cjs, is missing"
  const manifest = Path.join(built, "package.json")
  if (!Fs.existsSync(manifest)) return "the one package, packages/spillway/dist/package, is not built"
  const packed = Fs.statSync(manifest).mtimeMs
  if (Fs.statSync(bundle).mtimeMs > packed) return "the command's bundle is newer than packages/spillway/dist/package"
  for (const name of sourcePackages) {
    const src = Path.join(root, "packages", name, "src")
    const newer = filesUnder(src).find((f) => Fs.statSync(Path.join(src, f)).mtimeMs > packed)
    if (newer !== undefined) return `packages/${name}/src/${newer} is newer than packages/spillway/dist/package`
  }
  return undefined
}

/** The package directories named `name` under a node_modules tree, however deep npm nested them. */
const installedCopies = (dir: string, name: string): Array<string> => {
  const found: Array<string> = []
  const visit = (nodeModules: string) => {
    if (!Fs.existsSync(nodeModules)) return
    for (const entry of Fs.readdirSync(nodeModules)) {
      const scoped = entry.startsWith("@") ? Fs.readdirSync(Path.join(nodeModules, entry)).map((e) => Path.join(entry, e)) : [entry]
      for (const pkg of scoped) {
        const at = Path.join(nodeModules, pkg)
        if (pkg === name) found.push(at)
        visit(Path.join(at, "node_modules"))
      }
    }
  }
  visit(dir)
  return found
}

/** Puts the workspace's compiled better-sqlite3 addon into every installed copy of that version, as its install script would. */
const provideSqliteAddon = (nodeModules: string) => {
  if (scripts) return
  const source = Path.dirname(createRequire(Path.join(root, "packages", "cli", "package.json")).resolve("better-sqlite3/package.json"))
  const version = JSON.parse(Fs.readFileSync(Path.join(source, "package.json"), "utf8")).version
  const copies = installedCopies(nodeModules, "better-sqlite3")
  expect(copies.length).toBeGreaterThan(0)
  for (const copy of copies) {
    expect(JSON.parse(Fs.readFileSync(Path.join(copy, "package.json"), "utf8")).version).toBe(version)
    Fs.mkdirSync(Path.join(copy, "build", "Release"), { recursive: true })
    Fs.copyFileSync(Path.join(source, "build", "Release", "better_sqlite3.node"), Path.join(copy, "build", "Release", "better_sqlite3.node"))
  }
}

/** The bare module names a built JavaScript file imports or requires. */
const importedModules = (code: string): Array<string> => {
  const names = new Set<string>()
  const statements = [
    /(?:^|[;}\s])(?:import|export)\b[^;"'()]*?\bfrom\s*["']([^"']+)["']/g,
    /(?:^|[;}\s])import\s*["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const re of statements) {
    for (const m of code.matchAll(re)) {
      const spec = m[1]!
      if (spec.startsWith("node:") || spec.startsWith(".") || spec.startsWith("/") || builtinModules.includes(spec.split("/")[0]!)) continue
      names.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!)
    }
  }
  return [...names]
}

/** The dependencies of the workspace's AI SDK adapter, at the versions it is tested with. */
const aiSdkVersions = (): { ai: string; zod: string } => {
  const dev = JSON.parse(Fs.readFileSync(Path.join(root, "packages", "ai-sdk", "package.json"), "utf8")).devDependencies
  return { ai: dev.ai, zod: dev.zod }
}

describe("spillway, the one package, installed with npm", { timeout: 2 * minute }, () => {
  let dir: string
  let global: string
  let project: string
  let output: string
  let tarball: string
  let manifest: any
  let packed: Array<string>
  const clients: Array<Client> = []

  const spillway = () => Path.join(global, "bin", "spillway")
  const installed = () => Path.join(global, "lib", "node_modules", "spillway")

  /** An environment for the installed programs: this Node first on PATH, a home and an output directory of the test's own. */
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: [Path.dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(Path.delimiter),
    HOME: dir,
    SPILLWAY_OUTPUT_DIR: output,
    SPILLWAY_OWNER: "installer",
    ...extra
  })
  /** The same, with the global install's bin first on PATH, as after `npm install -g`. */
  const globalEnv = (extra: Record<string, string> = {}) => env({ PATH: [Path.join(global, "bin"), env().PATH!].join(Path.delimiter), ...extra })

  beforeAll(async () => {
    const problem = buildProblem()
    if (problem !== undefined) {
      throw new Error(`this test installs what the build made, and ${problem}: run \`npx --yes pnpm@10.34.8 build\` first (\`pnpm test\` builds before it tests)`)
    }
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-install-"))
    global = Path.join(dir, "global")
    project = Path.join(dir, "project")
    output = Path.join(dir, "output")
    Fs.mkdirSync(project)

    // as the README says: `pnpm pack:spillway FOLDER` leaves the tarball there and prints its path
    const packs = Path.join(dir, "packs")
    tarball = (await succeed("npx", [...pnpm, "--silent", "pack:spillway", packs])).trim().split("\n").at(-1)!
    expect(tarball).toBe(Path.join(packs, "spillway-0.1.0.tgz"))
    manifest = JSON.parse(await succeed("tar", ["-xzOf", tarball, "package/package.json"]))
    packed = (await succeed("tar", ["-tzf", tarball])).split("\n").filter((f) => f !== "").map((f) => f.replace(/^package\//, ""))

    // installed globally, under a prefix of the test's own (the user's npm settings and cache are kept: what fails here fails for a user)
    await succeed("npm", ["install", "--global", "--prefix", global, ...npmFlags, tarball], { cwd: dir })
    provideSqliteAddon(Path.join(global, "lib", "node_modules"))
    // and into a project, with the AI SDK beside it for the adapter
    Fs.writeFileSync(Path.join(project, "package.json"), JSON.stringify({ name: "spillway-user", private: true, type: "module" }))
    const { ai, zod } = aiSdkVersions()
    await succeed("npm", ["install", ...npmFlags, tarball, `ai@${ai}`, `zod@${zod}`], { cwd: project })
    provideSqliteAddon(Path.join(project, "node_modules"))
  }, 10 * minute)

  afterAll(async () => {
    for (const client of clients) await client.close()
    if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("is one package with one dependency, whose every named file ships, with nothing of the build around it", () => {
    expect(manifest.name).toBe("spillway")
    expect(manifest.license).toBe("MIT")
    expect(packed).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json", "bin/spillway.cjs"]))
    const version = JSON.parse(Fs.readFileSync(Path.join(root, "packages", "spillway", "package.json"), "utf8")).dependencies["better-sqlite3"]
    expect(manifest.dependencies).toEqual({ "better-sqlite3": version })
    expect(manifest.devDependencies).toBeUndefined()
    // every framework is a peer the user installs only for the adapter that needs it
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) expect(manifest.peerDependenciesMeta?.[peer], peer).toEqual({ optional: true })
    const named: Array<string> = []
    const collect = (value: unknown) => {
      if (typeof value === "string") named.push(value)
      else if (value !== null && typeof value === "object") Object.values(value).forEach(collect)
    }
    collect(manifest.exports)
    collect(manifest.bin)
    for (const file of named) expect(packed, `the manifest names ${file}`).toContain(file.replace(/^\.\//, ""))
    // the command's bundles, code caches and workers; none of what tsc wrote, no source maps
    expect(packed).toEqual(expect.arrayContaining(["dist/spillway.cjs", "dist/spillway.cache", "dist/run.cjs", "dist/run.cache", "dist/read.cjs", "dist/mcp.cjs", "dist/host.cjs", "dist/serve.cjs", "dist/internal/maskWorker.js", "dist/internal/patternWorker.js"]))
    expect(packed.filter((f) => f.endsWith(".map") || f.startsWith("src/") || /^dist\/[A-Z]\w*\.js$/.test(f))).toEqual([])
  })

  it("ships code that imports only Node, better-sqlite3 and the frameworks it names as peers", () => {
    const allowed = new Set(["better-sqlite3", ...Object.keys(manifest.peerDependencies ?? {}), ...optionalModules])
    const code = filesUnder(installed()).filter((f) => !f.startsWith("node_modules") && /\.(c|m)?js$/.test(f))
    expect(code.length).toBeGreaterThan(10)
    for (const file of code) {
      for (const module of importedModules(Fs.readFileSync(Path.join(installed(), file), "utf8"))) {
        expect(allowed.has(module), `spillway's ${file} imports ${module}, which the package neither bundles nor declares`).toBe(true)
      }
    }
  })

  it("keeps a long output bounded with its last line, and reads it back by its saved name, from the global install", async () => {
    const long = await run(spillway(), ["run", "--", "seq", "1", "200000"], { env: env() })
    expect(long.stderr).toBe("")
    expect(long.status).toBe(0)
    expect(long.stdout.length).toBeLessThan(3_000)
    expect(long.stdout).toContain("\n200000\n")
    const name = /Full output: (\S+\.log)\]/.exec(long.stdout)?.[1]
    expect(name, long.stdout).toBeDefined()
    expect(await succeed(spillway(), ["read", name!, "--offset", "199999", "--limit", "5"], { env: env() })).toBe("199999\n200000\n")
    // the search runs on the pattern worker shipped in dist/internal/
    expect(await succeed(spillway(), ["grep", "^123456$", name!], { env: env() })).toBe("123456:123456\n")
    // a short output comes back whole, from the project's copy too
    const hi = await run(Path.join(project, "node_modules", ".bin", "spillway"), ["run", "--", "echo", "hi"], { env: env() })
    expect({ status: hi.status, stdout: hi.stdout, stderr: hi.stderr }).toEqual({ status: 0, stdout: "hi\n", stderr: "" })
  })

  it("ships code caches that V8 takes for the bundles beside them, loaded by the bin itself", async () => {
    const caches = filesUnder(Path.join(installed(), "dist")).filter((f) => f.endsWith(".cache")).map((c) => Path.basename(c)).sort()
    expect(caches).toEqual(["mcp.cache", "run.cache", "spillway.cache"])
    // the bin loads each bundle with its cache under the V8 flags it sets for it: a cache made under other flags
    // is refused. Each program is started as a user starts it, and says whether V8 took its cache.
    const preload = Path.join(dir, "cache-report.cjs")
    Fs.writeFileSync(preload, `const vm = require("node:vm"), fs = require("node:fs")
const Script = vm.Script
vm.Script = class extends Script {
  constructor(source, options) {
    super(source, options)
    if (options && options.cachedData) fs.appendFileSync(process.env.CACHE_REPORT, require("node:path").basename(options.filename) + (this.cachedDataRejected ? " rejected" : " taken") + "\\n")
  }
}
`)
    const report = Path.join(dir, "cache-report.txt")
    const loaded = async (args: ReadonlyArray<string>, input?: string) => {
      Fs.rmSync(report, { force: true })
      const r = await run(process.execPath, ["-r", preload, Fs.realpathSync(Path.join(installed(), "bin", "spillway.cjs")), ...args], {
        env: env({ CACHE_REPORT: report }),
        ...(input !== undefined ? { input } : {})
      })
      expect(r.status, r.stderr).toBe(0)
      return Fs.readFileSync(report, "utf8")
    }
    // a long output goes on in the run program; help is the whole command's; the MCP server ends at its stdin's end
    expect(await loaded(["run", "--", "seq", "1", "5000"]), process.version).toBe("run.cjs taken\n")
    expect(await loaded(["--help"]), process.version).toBe("spillway.cjs taken\n")
    expect(await loaded(["mcp"], ""), process.version).toBe("mcp.cjs taken\n")
  })

  it("serves the tools over MCP, started as the README's client configuration says", async () => {
    const block = blockHolding("json", "\"mcpServers\"")
    const entry: ServerEntry = JSON.parse(block.text).mcpServers.spillway
    expect(entry.command).toBe("spillway")
    const client = new Client({ name: "spillway-install-test", version: "1.0.0" })
    clients.push(client)
    await client.connect(
      new StdioClientTransport({
        command: entry.command,
        args: [...entry.args],
        env: { ...getDefaultEnvironment(), ...entry.env, ...(globalEnv() as Record<string, string>) },
        cwd: dir,
        stderr: "pipe"
      })
    )
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["run_command", "read_spill", "grep_spill", "get_tool_output", "manage_process"]))
    const result = await client.callTool({ name: "run_command", arguments: { command: "echo hi" } }) as any
    expect(result.isError).toBeFalsy()
    expect(result.content[0].text).toMatch(/^hi\n[\s\S]*\[exit code 0\]$/)
  })

  it("answers Claude Code's hook with the command routed through the installed spillway, whose output comes back bounded", async () => {
    const claudeProject = Path.join(dir, "claude-project")
    Fs.mkdirSync(Path.join(claudeProject, ".claude"), { recursive: true })
    Fs.writeFileSync(Path.join(claudeProject, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash(seq:*)"] } }))
    const call = {
      session_id: "abc123",
      transcript_path: Path.join(dir, "transcript.jsonl"),
      cwd: claudeProject,
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "seq 1 200000", description: "Print numbers" },
      tool_use_id: "toolu_01"
    }
    const hooked = await run(spillway(), ["hook", "claude"], { env: globalEnv({ CLAUDE_PROJECT_DIR: claudeProject }), input: JSON.stringify(call) })
    expect(hooked.status).toBe(0)
    const answer = JSON.parse(hooked.stdout).hookSpecificOutput
    expect(answer.hookEventName).toBe("PreToolUse")
    expect(answer.updatedInput.description).toBe("Print numbers")
    expect(answer.updatedInput.command).toMatch(/^spillway run .*seq 1 200000/)
    // the agent runs the rewritten line with bash, the global install on its PATH
    const ran = await run("bash", ["-c", `${answer.updatedInput.command} 2>&1`], { cwd: claudeProject, env: globalEnv() })
    expect(ran.status).toBe(0)
    expect(ran.stdout.length).toBeLessThan(3_000)
    expect(ran.stdout).toMatch(/\n200000\n/)
    expect(ran.stdout).toMatch(/spillway read \S+\.log/)
  })

  it("shows with init --dry-run what it would write, writes nothing, then wires Claude Code to the installed command", async () => {
    const home = Path.join(dir, "init-home")
    Fs.mkdirSync(Path.join(home, ".claude"), { recursive: true })
    const before = filesUnder(home)
    // spillway is not on this PATH: the agent is wired to Node and the installed bin by their paths
    const bare = { PATH: Path.dirname(process.execPath) + Path.delimiter + "/usr/bin:/bin", HOME: home }
    const dry = await run(spillway(), ["init", "--dry-run"], { env: bare })
    expect(dry.status).toBe(0)
    expect(dry.stdout).toMatch(/^claude +would create +~\/\.claude\/settings\.json/m)
    expect(dry.stdout).toContain("dry run: nothing was written")
    expect(filesUnder(home)).toEqual(before)
    const wired = await run(spillway(), ["init", "claude"], { env: bare })
    expect(wired.status, wired.stdout + wired.stderr).toBe(0)
    const settings = JSON.parse(Fs.readFileSync(Path.join(home, ".claude", "settings.json"), "utf8"))
    const commands: Array<string> = settings.hooks.PreToolUse.flatMap((h: any) => h.hooks.map((c: any) => c.command))
    const bin = Fs.realpathSync(Path.join(installed(), "bin", "spillway.cjs"))
    expect(commands).toContain(`${process.execPath} ${bin} hook claude`)
  })

  it("runs a program that uses the Promise API and the AI SDK adapter from the installed package", async () => {
    const token = "Zq8vN3xW5tLr2Kp9Hd4s"
    Fs.writeFileSync(
      Path.join(project, "keep.mjs"),
      `import { open } from "spillway"
import { spill, spillwayTools } from "spillway/ai-sdk"
import { tool } from "ai"
import { z } from "zod"

const lines = Array.from({ length: 5000 }, (_, i) => i === 2999 ? "deploy with " + process.env.DEPLOY_TOKEN : \`step \${i + 1} of the build\`)
const sw = await open()
try {
  const kept = await sw.keepOutput(lines.join("\\n") + "\\n", { exitCode: 1 })
  const page = await sw.read(kept.filename, { offset: 2999, limit: 3 })
  const found = await sw.grep("^step 4999 ", kept.filename)
  const build = spill(sw, tool({ description: "The build's log", inputSchema: z.object({}), execute: async () => lines.join("\\n") }), { name: "build_log" })
  const model = await build.toModelOutput({ toolCallId: "call-1", input: {}, output: lines.join("\\n") })
  process.stdout.write(JSON.stringify({ truncated: kept.truncated, filename: kept.filename, preview: kept.text, page: page.text, found: found.matches, tools: Object.keys(spillwayTools(sw)), model, whole: lines.join("\\n").length }))
} finally {
  await sw.close()
}
`
    )
    const result = JSON.parse(await succeed(process.execPath, ["keep.mjs"], { cwd: project, env: env({ DEPLOY_TOKEN: token }) }))
    expect(result.truncated).toBe(true)
    expect(result.preview).toContain(`Full output: ${result.filename}]`)
    expect(result.page).toBe(`step 2999 of the build\ndeploy with ${"*".repeat(token.length)}\nstep 3001 of the build\n`)
    expect(result.found).toEqual([{ line: 4999, text: "step 4999 of the build", cut: false }])
    expect(result.tools).toEqual(expect.arrayContaining(["read_spill", "grep_spill"]))
    expect(result.model.type).toBe("text")
    // the model reads a bounded projection, masked, of a result kept whole under the tool's name
    expect(result.model.value.length).toBeLessThan(result.whole / 2)
    expect(result.model.value).not.toContain(token)
    expect(Fs.readdirSync(output).filter((f) => f.startsWith("build_log-"))).toHaveLength(1)
    const saved = Path.join(output, result.filename)
    expect(Fs.statSync(saved).mode & 0o777).toBe(0o600)
    expect(Fs.readFileSync(saved, "utf8")).not.toContain(token)
  })

  it("gives TypeScript the libraries' types from the installed package, the frameworks' from the project", async () => {
    Fs.writeFileSync(
      Path.join(project, "check.ts"),
      `import { open, type Spillway } from "spillway"
import { spillwayTools } from "spillway/ai-sdk"

const sw: Spillway = await open({ maxChars: 4000 })
const kept = await sw.keepOutput("a\\nb\\n")
export const name: string | undefined = kept.filename
export const tools = spillwayTools(sw)
// @ts-expect-error keepOutput takes text or bytes
await sw.keepOutput(42)
`
    )
    Fs.writeFileSync(
      Path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", skipLibCheck: true, types: ["node"], typeRoots: [Path.join(root, "node_modules", "@types")] },
        files: ["check.ts"]
      })
    )
    const tsc = await run(process.execPath, [Path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", project, "--pretty", "false"], { cwd: project })
    expect(tsc.stdout + tsc.stderr).toBe("")
    expect(tsc.status).toBe(0)
  })
})

describe("the @spillway packages, for programs written with Effect", () => {
  it("install in one npm install into a project, whose program runs against them", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-install-effect-"))
    try {
      const packs = Path.join(dir, "packs")
      const project = Path.join(dir, "project")
      Fs.mkdirSync(project)
      await succeed("npx", [...pnpm, ...effectPackages.flatMap((p) => ["--filter", `@spillway/${p}`]), "pack", "--pack-destination", packs])
      const tarballs = Fs.readdirSync(packs).map((f) => Path.join(packs, f))
      expect(tarballs.length).toBe(effectPackages.length)
      Fs.writeFileSync(Path.join(project, "package.json"), JSON.stringify({ name: "spillway-effect-user", private: true, type: "module" }))
      const effect = JSON.parse(Fs.readFileSync(Path.join(root, "packages", "core", "package.json"), "utf8")).dependencies.effect
      await succeed("npm", ["install", ...npmFlags, ...tarballs, `effect@${effect}`], { cwd: project })
      provideSqliteAddon(Path.join(project, "node_modules"))
      Fs.writeFileSync(
        Path.join(project, "keep.mjs"),
        `import { Spill } from "@spillway/core"
import { NodeSpill } from "@spillway/node"
import { Effect } from "effect"

const lines = Array.from({ length: 5000 }, (_, i) => \`step \${i + 1} of the build\`)
const program = Effect.gen(function*() {
  const kept = yield* Spill.keepOutput(lines.join("\\n") + "\\n", 1)
  const page = yield* Spill.readSpill(kept.filename, { offset: 2999, limit: 2 })
  return { truncated: kept.truncated, page: page.text }
})
process.stdout.write(JSON.stringify(await Effect.runPromise(program.pipe(Effect.provide(NodeSpill.layer())))))
`
      )
      const env = { PATH: [Path.dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(Path.delimiter), HOME: dir, SPILLWAY_OUTPUT_DIR: Path.join(dir, "output") }
      expect(JSON.parse(await succeed(process.execPath, ["keep.mjs"], { cwd: project, env }))).toEqual({ truncated: true, page: "step 2999 of the build\nstep 3000 of the build\n" })
      expect(await succeed(Path.join(project, "node_modules", ".bin", "spillway"), ["run", "--", "echo", "hi"], { env })).toBe("hi\n")
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 10 * minute)
})
