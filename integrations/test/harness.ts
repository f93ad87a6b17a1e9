/**
 * Shared ground for the plugin tests: the bundled plugin files, a `spillway`
 * on PATH that runs this checkout's command, and a shell whose stdout and
 * stderr go to one file, as an agent's shell tool reads them.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root. */
export const root = fileURLToPath(new URL("../../", import.meta.url))

/** The agents with an in-process plugin. */
export type Agent = "pi" | "opencode"

/** Where the build writes an agent's bundled plugin. */
export const bundlePath = (agent: Agent): string => Path.join(root, "packages", "cli", "dist", "integrations", `${agent}.js`)

/** The bundled plugin's text; fails with the command that builds it when it is missing. */
export const bundleText = (agent: Agent): string => {
  const file = bundlePath(agent)
  if (!Fs.existsSync(file)) {
    throw new Error(`${file} is missing: build it with \`npx tsc -b tsconfig.build.json && npx pnpm@10.34.8 --filter @spillway/cli bundle\``)
  }
  return Fs.readFileSync(file, "utf8")
}

/** Copies the bundled plugin to `dir/relative`, as `spillway init` places it, and returns the copy's path. */
export const install = (agent: Agent, dir: string, relative: string): string => {
  const target = Path.join(dir, relative)
  Fs.mkdirSync(Path.dirname(target), { recursive: true })
  Fs.writeFileSync(target, bundleText(agent))
  return target
}

/** A scratch directory, removed by `cleanup`. */
export interface Scratch {
  readonly dir: string
  readonly cleanup: () => void
}

/** Makes a scratch directory under the system's temp directory. */
export const scratch = (prefix: string): Scratch => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))
  return { dir, cleanup: () => Fs.rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Writes a `spillway` into `dir/bin` that execs this checkout's command with
 * this Node, and returns the environment that puts it first on PATH and keeps
 * saved outputs in `dir/outputs`.
 */
export const spillwayOnPath = (dir: string): Record<string, string> => {
  const bin = Path.join(dir, "bin")
  const outputs = Path.join(dir, "outputs")
  Fs.mkdirSync(bin, { recursive: true })
  Fs.mkdirSync(outputs, { recursive: true })
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  const shim = Path.join(bin, "spillway")
  Fs.writeFileSync(shim, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(Path.join(root, "packages", "cli", "bin", "spillway.cjs"))} "$@"\n`)
  Fs.chmodSync(shim, 0o755)
  return { PATH: `${bin}${Path.delimiter}${process.env.PATH ?? ""}`, SPILLWAY_OUTPUT_DIR: outputs }
}

/** What a shell line printed (stdout and stderr in the order written) and how it exited. */
export interface Ran {
  readonly output: string
  readonly status: number | null
}

/** The most bytes of a run's output read back; more fails the test rather than fill memory. */
const OUTPUT_MAX = 16 * 1024 * 1024

/** Runs `line` with `bash -c`, both streams into one file, within 60 seconds. */
export const runMerged = (line: string, env: Readonly<Record<string, string | undefined>>, cwd: string): Ran => {
  const file = Path.join(cwd, `.merged-${process.pid}-${Date.now()}`)
  const fd = Fs.openSync(file, "w")
  try {
    const result = spawnSync("bash", ["-c", line], { cwd, env: env as NodeJS.ProcessEnv, stdio: ["ignore", fd, fd], timeout: 60_000 })
    if (result.error !== undefined) throw result.error
    const size = Fs.fstatSync(fd).size
    if (size > OUTPUT_MAX) throw new Error(`the command printed ${size} bytes, more than the test reads`)
    return { output: Fs.readFileSync(file, "utf8"), status: result.status }
  } finally {
    Fs.closeSync(fd)
    Fs.rmSync(file, { force: true })
  }
}

/** The module names a bundle imports or requires (static and dynamic). */
export const importedNames = (text: string): ReadonlyArray<string> => {
  const names = new Set<string>()
  const patterns = [
    /\bimport\s*(?:[\w*${}\s,]+?\s*from\s*)?["']([^"']+)["']/g,
    /\bexport\s*[\w*${}\s,]*?\s*from\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) names.add(match[1]!)
  }
  return [...names]
}
