/**
 * The package's types as a program that installs it gets them: a project
 * of its own, outside the repository, holding the declarations the build
 * made of `@spillway/web` and of the workspace packages it depends on, and
 * exactly the packages those declare as dependencies (no `@types` the
 * package does not name), type-checked by `tsc` as a Node project with the
 * library checks on. Run after a build (`npx tsc -b tsconfig.build.json`).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

interface Manifest {
  readonly name: string
  readonly dependencies?: Readonly<Record<string, string>>
}

const manifestOf = (dir: string): Manifest => JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8")) as Manifest

/** The directory a package resolves to from `from`, as Node looks it up: `node_modules` in `from` and every directory above it. */
const installed = (name: string, from: string): string => {
  for (let dir = from; ; dir = Path.dirname(dir)) {
    const candidate = Path.join(dir, "node_modules", name)
    if (Fs.existsSync(Path.join(candidate, "package.json"))) return Fs.realpathSync(candidate)
    if (Path.dirname(dir) === dir) throw new Error(`${name} is not installed where ${from} can reach it`)
  }
}

/** Copies the `.d.ts` files under `from` into `to`, keeping their paths. */
const copyDeclarations = (from: string, to: string): number => {
  let copied = 0
  for (const entry of Fs.readdirSync(from, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".d.ts")) continue
    const file = Path.join(entry.parentPath, entry.name)
    const target = Path.join(to, Path.relative(from, file))
    Fs.mkdirSync(Path.dirname(target), { recursive: true })
    Fs.copyFileSync(file, target)
    copied++
  }
  return copied
}

/**
 * Lays out `node_modules` as installing the workspace package in `dir`
 * gives it: the package and the workspace packages it depends on as their
 * manifests and built declarations, every other dependency they declare
 * as the copy the workspace installed (with that copy's own dependencies
 * beside it), and nothing else.
 */
const install = (dir: string, into: string): Array<string> => {
  const placed: Array<string> = []
  const queue = [dir]
  const seen = new Set<string>()
  while (queue.length > 0) {
    const pkg = queue.shift()!
    const manifest = manifestOf(pkg)
    if (seen.has(manifest.name)) continue
    seen.add(manifest.name)
    const target = Path.join(into, manifest.name)
    Fs.mkdirSync(target, { recursive: true })
    Fs.copyFileSync(Path.join(pkg, "package.json"), Path.join(target, "package.json"))
    const dist = Path.join(pkg, "dist")
    if (!Fs.existsSync(dist) || copyDeclarations(dist, Path.join(target, "dist")) === 0) {
      throw new Error(`${manifest.name} has no declarations in ${Path.relative(root, dist)}: build first (npx tsc -b tsconfig.build.json)`)
    }
    placed.push(manifest.name)
    for (const [name, version] of Object.entries(manifest.dependencies ?? {})) {
      if (version.startsWith("workspace:")) queue.push(installed(name, pkg))
      else if (!Fs.existsSync(Path.join(into, name))) {
        Fs.mkdirSync(Path.dirname(Path.join(into, name)), { recursive: true })
        Fs.symlinkSync(installed(name, pkg), Path.join(into, name))
        placed.push(name)
      }
    }
  }
  return placed
}

describe("@spillway/web's types in a project of its own", () => {
  it("type-check with only the dependencies the packages declare, library checks on", { timeout: 180_000 }, () => {
    const project = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-web-types-"))
    try {
      const modules = Path.join(project, "node_modules")
      const placed = install(Path.join(root, "packages", "web"), modules)
      expect(placed).toEqual(expect.arrayContaining(["@spillway/web", "@spillway/core"]))
      Fs.writeFileSync(
        Path.join(project, "check.ts"),
        `import { BodyRead, WebView } from "@spillway/web"

export const view: typeof WebView = WebView
export const reads: typeof BodyRead = BodyRead
`
      )
      Fs.writeFileSync(
        Path.join(project, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: "ES2022",
            lib: ["ES2022"],
            module: "NodeNext",
            moduleResolution: "NodeNext",
            skipLibCheck: false,
            typeRoots: [Path.join(modules, "@types")]
          },
          files: ["check.ts"]
        })
      )
      const tsc = spawnSync(process.execPath, [Path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", project, "--pretty", "false"], {
        cwd: project,
        encoding: "utf8",
        timeout: 170_000,
        maxBuffer: 16 * 1024 * 1024
      })
      expect(tsc.error).toBeUndefined()
      expect(tsc.stdout + tsc.stderr).toBe("")
      expect(tsc.status).toBe(0)
    } finally {
      Fs.rmSync(project, { recursive: true, force: true })
    }
  })
})
