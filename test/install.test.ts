/**
 * Spillway as a user gets it: every package packed the way pnpm publishes it,
 * the tarballs installed with npm into empty directories (globally, as the
 * README says, and into a project), and then the installed command, MCP
 * server and libraries used as a user would use them.
 *
 * The packages are packed from what the build made (`dist/`), which this
 * test does not make: `pnpm test` builds first; run alone, build with
 * `npx --yes pnpm@10.34.8 build`. A build older than the sources fails here
 * with that advice.
 *
 * npm runs no install scripts here (`--ignore-scripts`): better-sqlite3's
 * would compile SQLite, minutes of work that is better-sqlite3's own
 * business. Its addon, built from the same version by the workspace's install,
 * is put where the script would have put it. `SPILLWAY_INSTALL_TEST_SCRIPTS=1`
 * runs the scripts instead.
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

const packages = ["core", "node", "agents", "tools", "remote", "web", "cli"] as const
const pnpm = ["--yes", "pnpm@10.34.8"]
const npmFlags = ["--no-audit", "--no-fund", "--prefer-offline", ...(process.env.SPILLWAY_INSTALL_TEST_SCRIPTS === "1" ? [] : ["--ignore-scripts"])]
const minute = 60_000

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
const run = (file: string, args: ReadonlyArray<string>, options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const what = `${file} ${args.join(" ")}`
    const child = spawn(file, args, { cwd: options.cwd ?? root, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] })
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
    child.stdout.on("data", take(out))
    child.stderr.on("data", take(err))
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
  for (const name of packages) {
    if (!Fs.existsSync(Path.join(root, "packages", name, "dist", "index.js"))) return `packages/${name}/dist/index.js is missing`
  }
  const bundle = Path.join(root, "packages", "cli", "dist", "spillway.cjs")
  if (!Fs.existsSync(bundle)) return "the command's bundle, packages/cli/dist/spillway.cjs, is missing"
  const built = Fs.statSync(bundle).mtimeMs
  for (const name of packages) {
    const src = Path.join(root, "packages", name, "src")
    const newer = filesUnder(src).find((f) => Fs.statSync(Path.join(src, f)).mtimeMs > built)
    if (newer !== undefined) return `packages/${name}/src/${newer} is newer than the command's bundle`
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
  if (process.env.SPILLWAY_INSTALL_TEST_SCRIPTS === "1") return
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
    /^(?:import|export)\b[^;"']*?\bfrom\s*["']([^"']+)["']/gm,
    /^import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const re of statements) {
    for (const m of code.matchAll(re)) {
      const spec = m[1]!
      if (spec.startsWith("node:") || spec.startsWith(".") || builtinModules.includes(spec.split("/")[0]!)) continue
      names.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!)
    }
  }
  return [...names]
}

describe("the packed packages, installed with npm", { timeout: 2 * minute }, () => {
  let dir: string
  let packs: string
  let global: string
  let project: string
  let output: string
  const manifests = new Map<string, any>()
  const clients: Array<Client> = []

  /** An environment for the installed programs: this Node first on PATH, a home and an output directory of the test's own. */
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: [Path.dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(Path.delimiter),
    HOME: dir,
    SPILLWAY_OUTPUT_DIR: output,
    SPILLWAY_OWNER: "installer",
    ...extra
  })

  beforeAll(async () => {
    const problem = buildProblem()
    if (problem !== undefined) {
      throw new Error(`this test installs what the build made, and ${problem}: run \`npx --yes pnpm@10.34.8 build\` first (\`pnpm test\` builds before it tests)`)
    }
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-install-"))
    packs = Path.join(dir, "packs")
    global = Path.join(dir, "global")
    project = Path.join(dir, "project")
    output = Path.join(dir, "output")
    Fs.mkdirSync(project)

    await succeed("npx", [...pnpm, "-r", "pack", "--pack-destination", packs])
    for (const tarball of Fs.readdirSync(packs)) {
      const manifest = JSON.parse(await succeed("tar", ["-xzOf", Path.join(packs, tarball), "package/package.json"]))
      manifest.files = (await succeed("tar", ["-tzf", Path.join(packs, tarball)])).split("\n").filter((f) => f !== "").map((f) => f.replace(/^package\//, ""))
      manifests.set(manifest.name, manifest)
    }
    const tarballs = Fs.readdirSync(packs).map((f) => Path.join(packs, f))

    // as the README says: every tarball installed globally, here under a prefix of the test's own
    // (the user's npm settings and cache are kept: what fails here fails for a user)
    await succeed("npm", ["install", "--global", "--prefix", global, ...npmFlags, ...tarballs], { cwd: dir })
    provideSqliteAddon(Path.join(global, "lib", "node_modules"))
    // and into a project, whose programs import the libraries (with the `effect` they are written against)
    Fs.writeFileSync(Path.join(project, "package.json"), JSON.stringify({ name: "spillway-user", private: true, type: "module" }))
    const effect = JSON.parse(Fs.readFileSync(Path.join(root, "packages", "core", "package.json"), "utf8")).dependencies.effect
    await succeed("npm", ["install", ...npmFlags, ...tarballs, `effect@${effect}`], { cwd: project })
    provideSqliteAddon(Path.join(project, "node_modules"))
  }, 10 * minute)

  afterAll(async () => {
    for (const client of clients) await client.close()
    if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  })

  it("packs every package, each naming its siblings at their versions", () => {
    expect([...manifests.keys()].sort()).toEqual(packages.map((p) => `@spillway/${p}`).sort())
    for (const [name, manifest] of manifests) {
      for (const field of ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]) {
        for (const [dep, spec] of Object.entries<string>(manifest[field] ?? {})) {
          expect(spec, `${name}'s ${field}: ${dep}`).not.toMatch(/^workspace:/)
          if (field === "dependencies" && dep.startsWith("@spillway/")) {
            expect(spec, `${name} depends on ${dep}`).toBe(manifests.get(dep)?.version)
          }
        }
      }
    }
  })

  it("ships every file a package's exports and bin name", () => {
    for (const [name, manifest] of manifests) {
      // the license the manifest declares ships with the package
      expect(manifest.license, name).toBe("MIT")
      expect(manifest.files, `${name} ships its license`).toContain("LICENSE")
      const named: Array<string> = []
      const collect = (value: unknown) => {
        if (typeof value === "string") named.push(value)
        else if (value !== null && typeof value === "object") Object.values(value).forEach(collect)
      }
      collect(manifest.exports)
      collect(manifest.bin)
      for (const file of named.filter((f) => !f.includes("*"))) {
        expect(manifest.files, `${name} names ${file}`).toContain(file.replace(/^\.\//, ""))
      }
      // the wildcard export reaches every public module, with its types
      for (const js of manifest.files.filter((f: string) => /^dist\/[^/]+\.js$/.test(f))) {
        expect(manifest.files, `${name}: ${js} has its types`).toContain(js.replace(/\.js$/, ".d.ts"))
      }
    }
    const cli = manifests.get("@spillway/cli").files
    for (const file of ["dist/spillway.cjs", "dist/read.cjs", "dist/run.cjs", "dist/run.cache", "dist/mcp.cjs", "dist/host.cjs", "dist/serve.cjs", "dist/internal/maskWorker.js", "dist/internal/patternWorker.js"]) {
      expect(cli, "the command's bundles").toContain(file)
    }
    expect(manifests.get("@spillway/node").files).toEqual(expect.arrayContaining(["dist/internal/patternWorker.js", "dist/internal/maskWorker.js"]))
  })

  it("declares as a dependency every module a package's code imports", () => {
    for (const name of packages) {
      const installed = Path.join(project, "node_modules", "@spillway", name)
      const manifest = JSON.parse(Fs.readFileSync(Path.join(installed, "package.json"), "utf8"))
      const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})])
      // the command's bundles hold their dependencies, so only the modules tsc wrote are read
      const code = filesUnder(Path.join(installed, "dist")).filter((f) => f.endsWith(".js") && !(name === "cli" && f === Path.join("internal", "patternWorker.js")))
      expect(code.length).toBeGreaterThan(0)
      for (const file of code) {
        for (const module of importedModules(Fs.readFileSync(Path.join(installed, "dist", file), "utf8"))) {
          expect(declared.has(module), `@spillway/${name}'s dist/${file} imports ${module}, which its package.json does not list in dependencies`).toBe(true)
        }
      }
    }
  })

  it("runs the globally installed spillway, and the project's, and keeps long output it can read back", async () => {
    for (const bin of [Path.join(global, "bin", "spillway"), Path.join(project, "node_modules", ".bin", "spillway")]) {
      const hi = await run(bin, ["run", "--", "echo", "hi"], { env: env() })
      expect({ status: hi.status, stdout: hi.stdout, stderr: hi.stderr }).toEqual({ status: 0, stdout: "hi\n", stderr: "" })
    }
    const spillway = Path.join(global, "bin", "spillway")
    const long = await run(spillway, ["run", "--", "node", "-e", "for (let i = 1; i <= 3000; i++) console.log(`line ${i}`)"], { env: env() })
    expect(long.status).toBe(0)
    const name = /Full output: (\S+\.log)\]/.exec(long.stdout)?.[1]
    expect(name, long.stdout + long.stderr).toBeDefined()
    expect((await run(spillway, ["read", name!, "--offset", "1500", "--limit", "2"], { env: env() })).stdout).toBe("line 1500\nline 1501\n")
    expect((await run(spillway, ["grep", "^line 2999$", name!], { env: env() })).stdout).toBe("2999:line 2999\n")
  })

  it("serves the tools over MCP, started as the README's client configuration says", async () => {
    const block = blockHolding("json", "\"mcpServers\"")
    const entry: ServerEntry = JSON.parse(block.text).mcpServers.spillway
    expect(entry.command).toBe("spillway")
    // the README's entry, with the global install first on PATH and an output directory of the test's own
    const client = new Client({ name: "spillway-install-test", version: "1.0.0" })
    clients.push(client)
    await client.connect(
      new StdioClientTransport({
        command: entry.command,
        args: [...entry.args],
        env: { ...getDefaultEnvironment(), ...entry.env, ...(env({ PATH: [Path.join(global, "bin"), env().PATH!].join(Path.delimiter) }) as Record<string, string>) },
        cwd: dir,
        stderr: "pipe"
      })
    )
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["run_command", "read_spill", "grep_spill", "get_tool_output", "manage_process"]))
    const result = await client.callTool({ name: "run_command", arguments: { command: "echo hi" } }) as any
    expect(result.isError).toBeFalsy()
    expect(result.content[0].text).toMatch(/^hi\n[\s\S]*\[exit code 0\]$/)
    expect(result.structuredContent).toMatchObject({ exit_code: 0, timed_out: false, truncated: false })
  })

  it("runs a program that imports @spillway/core and @spillway/node from the installed packages", async () => {
    const token = "Zq8vN3xW5tLr2Kp9Hd4s"
    Fs.writeFileSync(
      Path.join(project, "keep.mjs"),
      `import { Spill } from "@spillway/core"
import { NodeSpill } from "@spillway/node"
import { Effect } from "effect"

const lines = Array.from({ length: 5000 }, (_, i) => i === 2999 ? "deploy with " + process.env.DEPLOY_TOKEN : \`step \${i + 1} of the build\`)
const program = Effect.gen(function*() {
  const kept = yield* Spill.keepOutput(lines.join("\\n") + "\\n", 1)
  const page = yield* Spill.readSpill(kept.filename, { offset: 2999, limit: 3 })
  const found = yield* Spill.grepSpill("^step 4999 ", kept.filename)
  return { truncated: kept.truncated, filename: kept.filename, preview: kept.text, page: page.text, found: found.matches }
})
process.stdout.write(JSON.stringify(await Effect.runPromise(program.pipe(Effect.provide(NodeSpill.layer())))))
`
    )
    const out = await succeed(process.execPath, ["keep.mjs"], { cwd: project, env: env({ DEPLOY_TOKEN: token }) })
    const result = JSON.parse(out)
    expect(result.truncated).toBe(true)
    expect(result.preview).toContain(`Full output: ${result.filename}]`)
    expect(result.page).toBe(`step 2999 of the build\ndeploy with ${"*".repeat(token.length)}\nstep 3001 of the build\n`)
    expect(result.found).toEqual([{ line: 4999, text: "step 4999 of the build", cut: false }])
    const saved = Path.join(output, result.filename)
    expect(Fs.statSync(saved).mode & 0o777).toBe(0o600)
    expect(Fs.readFileSync(saved, "utf8")).not.toContain(token)
  })
})
