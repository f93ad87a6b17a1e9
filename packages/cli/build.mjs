// Bundles the command into one plain JavaScript file so it starts fast, then
// records V8's code cache for it and for the run program by running each once
// (the run program on an output too long for the short run, which hands it
// over), and for the MCP server by serving one short call: the bin
// hands that cache to V8, which then skips compiling what the cache holds. A
// cache V8 rejects (another Node version) only costs the compile time.
import { build } from "esbuild"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { clearTimeout, setTimeout } from "node:timers"

// better-sqlite3 finds its native addon from its own folder, so it stays outside the bundles
// (but the read program's, which hands the driver its addon).
// `import.meta.url` is the bundle's own file, so modules find what ships beside it
// (the pattern worker, bundled to dist/internal/patternWorker.js).
const bundle = (entry, outfile, external = ["better-sqlite3"]) =>
  build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    minify: true,
    legalComments: "none",
    external,
    // a package's ES module build where it has one: jsonc-parser's main file is a UMD module whose inner
    // requires esbuild cannot follow
    mainFields: ["module", "main"],
    define: { "import.meta.url": "__spillwayModuleUrl" },
    banner: { js: "var __spillwayModuleUrl=require(\"node:url\").pathToFileURL(__filename).href;" }
  })

/**
 * Writes the few characters past ASCII that esbuild leaves in regular expression literals (the salience rules'
 * `✓`, `●`, `❯`) as `\uXXXX` escapes, which mean the same there and in strings and names: V8 keeps a source
 * that is all ASCII one byte a character, half the memory of the two it takes otherwise, for as long as the
 * command runs. A character after a backslash would change meaning: the build stops rather than write that.
 */
const asciiOnly = (file) => {
  const text = Fs.readFileSync(file, "utf8")
  const escaped = text.replace(/[^\x00-\x7f]/g, (c, at) => {
    if (text[at - 1] === "\\") throw new Error(`${file}: a character past ASCII after a backslash at ${at}`)
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  })
  if (escaped !== text) Fs.writeFileSync(file, escaped)
}

await bundle("dist/main.js", "dist/spillway.cjs")
// The read program holds the driver's JavaScript and loads only its addon (see src/fastRead.ts);
// `bindings`, the driver's search for the addon, is never reached there.
await bundle("dist/fastRead.js", "dist/read.cjs", ["bindings"])
// The grep program: the read program's checks, the pattern engine and the masking rules (see src/fastGrep.ts).
await bundle("dist/fastGrep.js", "dist/grep.cjs", ["bindings"])
// The run program holds only what `spillway run` needs (see src/quickRun.ts).
await bundle("dist/quickRun.js", "dist/run.cjs")
// The short run holds no Effect: it starts the command and finishes a short output itself (see src/shortRun.ts).
await bundle("dist/shortRun.js", "dist/short.cjs")
await bundle("dist/mcp.js", "dist/mcp.cjs")
// `spillway hook` runs before every shell command an agent runs: its bundle holds no Effect runtime (see src/hook.ts)
await bundle("dist/hook.js", "dist/hook.cjs")
await bundle("dist/host.js", "dist/host.cjs")
await bundle("dist/serve.js", "dist/serve.cjs")
// The worker threads, where @spillway/node looks for them beside the bundle (dist/internal/):
// ES modules, as every .js file of this package. The pattern worker runs searches against
// their deadlines; the mask worker masks long output on a second core (see NodeSecrets).
for (const worker of ["patternWorker", "maskWorker"]) {
  await build({
    entryPoints: [`../node/dist/internal/${worker}.js`],
    outfile: `dist/internal/${worker}.js`,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    legalComments: "none"
  })
}
// The pi and opencode plugins (integrations/): one ES module each, the rewrite inlined and nothing
// imported but Node's own modules, so `spillway init` can copy the file alone into the agent's plugin
// folder. Left readable: it is the file a user installs into the agent.
for (const agent of ["pi", "opencode"]) {
  await build({
    entryPoints: [`../../integrations/${agent}/index.ts`],
    outfile: `dist/integrations/${agent}.js`,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    legalComments: "none",
    banner: { js: `// Spillway's ${agent} plugin: runs the model's bash commands through \`spillway run\` (see integrations/${agent}/README.md).` }
  })
}

for (const name of ["spillway", "read", "grep", "run", "short", "mcp", "hook", "host", "serve"]) asciiOnly(`dist/${name}.cjs`)

// The run program serves the outputs too long for the short run: it is trained on one. SPILLWAY_QUICK=0 hands the
// run to the whole command, so that run trains its cache.
const longOutput = [process.execPath, "-e", "process.stdout.write('line\\n'.repeat(5000))"]
for (const [name, quick, command] of [["run", "1", longOutput], ["spillway", "0", ["true"]]]) {
  Fs.rmSync(`dist/${name}.cache`, { force: true })
  const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-build-"))
  try {
    execFileSync(process.execPath, ["bin/spillway.cjs", "run", "--", ...command], {
      env: { ...process.env, SPILLWAY_OUTPUT_DIR: scratch, SPILLWAY_WRITE_CODE_CACHE: "1", SPILLWAY_QUICK: quick },
      stdio: "ignore"
    })
  } finally {
    Fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * Trains the MCP server's cache as a client uses it: the handshake, the tool list and one short
 * `run_command`, then the end of stdin, on which the server exits and writes its cache. A server
 * that does not answer within a minute is stopped, and the build goes on without its cache.
 */
const trainMcp = async () => {
  Fs.rmSync("dist/mcp.cache", { force: true })
  const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-build-"))
  const server = spawn(process.execPath, ["bin/spillway.cjs", "mcp"], {
    env: { ...process.env, HOME: scratch, SPILLWAY_OUTPUT_DIR: scratch, SPILLWAY_WRITE_CODE_CACHE: "1" },
    stdio: ["pipe", "pipe", "ignore"]
  })
  const exited = new Promise((resolve) => server.once("exit", resolve))
  const timer = setTimeout(() => server.kill("SIGKILL"), 60_000)
  let pending = ""
  const answered = new Set()
  const waiting = new Map()
  server.stdout.on("data", (chunk) => {
    pending += chunk
    const lines = pending.split("\n")
    pending = lines.pop()
    for (const line of lines) {
      let id
      try {
        id = JSON.parse(line).id
      } catch {
        continue
      }
      answered.add(id)
      waiting.get(id)?.()
    }
  })
  const ask = (id, method, params) => {
    server.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
    return Promise.race([new Promise((resolve) => answered.has(id) ? resolve() : waiting.set(id, resolve)), exited])
  }
  try {
    await ask(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "spillway-build", version: "0" } })
    server.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
    await ask(2, "tools/list", {})
    await ask(3, "tools/call", { name: "run_command", arguments: { command: "echo spillway" } })
    server.stdin.end()
    await exited
  } finally {
    clearTimeout(timer)
    Fs.rmSync(scratch, { recursive: true, force: true })
  }
}
await trainMcp()
