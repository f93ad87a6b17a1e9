// Builds `spillway`, Spillway in one install, into dist/package/ (what
// `pnpm pack:spillway` packs): the command as @spillway/cli bundled it (its
// bin/, and every bundle, code cache and worker of its dist/), and the
// libraries for programs without Effect as ES modules with Effect and the
// @spillway packages inside them (`spillway`, `spillway/ai-sdk`,
// `spillway/langchain`), with their declarations. better-sqlite3 stays
// a dependency, as its addon is made for the machine that installs it; the
// frameworks an adapter plugs into are optional peers. The manifest is
// written here from what was built, so it names only files that ship.
//
// Run after the packages are compiled and the command is bundled
// (`pnpm build` does both first).
import { build } from "esbuild"
import * as Fs from "node:fs"
import { builtinModules } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { writeDeclarations } from "./declarations.mjs"

const here = Path.dirname(fileURLToPath(import.meta.url))
const packages = Path.join(here, "..")
const cli = Path.join(packages, "cli")
const out = Path.join(here, "dist", "package")
const workspace = JSON.parse(Fs.readFileSync(Path.join(here, "package.json"), "utf8"))

/** The library entry points: the file under dist/ and types/, the subpath users import, and the compiled module it is made from. */
const libraries = [
  { name: "index", subpath: ".", module: "node/dist/Spillway.js" },
  { name: "ai-sdk", subpath: "./ai-sdk", module: "ai-sdk/dist/index.js" },
  { name: "langchain", subpath: "./langchain", module: "langchain/dist/index.js" }
]

/** The frameworks an adapter plugs into: imported from the user's project, never bundled. */
const peers = ["ai", "langchain", "@langchain/core", "zod"]

/** Modules the bundled code names but reaches only when they are installed (inside `try`), or only as text it generates. */
const optional = ["pg-native", "bufferutil", "utf-8-validate", "bindings", "ajv", "ajv-formats"]

const say = (message) => console.log(`spillway build: ${message}`)
const fail = (message) => {
  console.error(`spillway build: ${message}`)
  process.exit(1)
}
const importName = (l) => (l.subpath === "." ? "spillway" : `spillway/${l.subpath.slice(2)}`)

/** The files under a directory, as paths relative to it. */
const filesUnder = (dir) =>
  Fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => Path.relative(dir, Path.join(e.parentPath, e.name)))

/**
 * Whether a file of the command's dist/ ships: its bundles, code caches and workers do. What tsc
 * wrote does not (a module with a declaration file beside it, the declarations, the source maps):
 * it imports the @spillway packages, which this package holds only inside the bundles.
 */
const ships = (file, all) => {
  if (file.endsWith(".map") || file.endsWith(".d.ts")) return false
  return !(file.endsWith(".js") && all.has(file.replace(/\.js$/, ".d.ts")))
}

/** Copies the command: bin/ whole, and what ships of dist/. Returns the dist/ files copied. */
const copyCommand = () => {
  if (!Fs.existsSync(Path.join(cli, "dist", "spillway.cjs"))) {
    fail("packages/cli/dist/spillway.cjs is missing: bundle the command first (`npx --yes pnpm@10.34.8 build` does)")
  }
  Fs.cpSync(Path.join(cli, "bin"), Path.join(out, "bin"), { recursive: true })
  const dist = Path.join(cli, "dist")
  const all = new Set(filesUnder(dist))
  const copied = [...all].filter((f) => ships(f, all)).sort()
  for (const file of copied) {
    Fs.mkdirSync(Path.dirname(Path.join(out, "dist", file)), { recursive: true })
    Fs.copyFileSync(Path.join(dist, file), Path.join(out, "dist", file))
  }
  return copied
}

/** The library entries whose compiled module exists; a missing one is named and left out. */
const presentLibraries = () =>
  libraries.filter((l) => {
    if (Fs.existsSync(Path.join(packages, l.module))) return true
    say(`leaving out ${importName(l)}: packages/${l.module} is not built (its source is not there yet)`)
    return false
  })

/** esbuild's options for the libraries: ES modules, their shared code in chunks beside them. */
const libraryOptions = (entries) => ({
  entryPoints: Object.fromEntries(entries.map((l) => [l.name, Path.join(packages, l.module)])),
  outdir: Path.join(out, "dist"),
  absWorkingDir: here,
  bundle: true,
  splitting: true,
  chunkNames: "chunk-[hash]",
  platform: "node",
  format: "esm",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  external: ["better-sqlite3", ...peers, ...peers.map((p) => `${p}/*`), ...optional],
  // bundled CommonJS calls `require`, which an ES module lacks
  banner: { js: "import{createRequire as __spillwayRequire}from\"node:module\";const require=__spillwayRequire(import.meta.url);" }
})

/**
 * Bundles the libraries into dist/, beside the command's bundles, so that `import.meta.url` in any
 * of them finds the workers in dist/internal/. An entry whose module exports nothing (an adapter
 * not written yet) is named and left out. Returns the entries bundled and the dist/ files written.
 */
const bundleLibraries = async (entries) => {
  if (entries.length === 0) return { bundled: [], files: [] }
  const result = await build({ ...libraryOptions(entries), write: false })
  const empty = entries.filter((l) => result.metafile.outputs[Path.join("dist", "package", "dist", `${l.name}.js`)]?.exports.length === 0)
  for (const l of empty) say(`leaving out ${importName(l)}: packages/${l.module} exports nothing yet`)
  const bundled = entries.filter((l) => !empty.includes(l))
  if (bundled.length === 0) return { bundled, files: [] }
  const written = await build(libraryOptions(bundled))
  return { bundled, files: Object.keys(written.metafile.outputs).map((f) => Path.relative(Path.join(out, "dist"), Path.join(here, f))) }
}

/** The libraries' declarations under types/ (see declarations.mjs), the frameworks' left to the user's install: returns those they import. */
const bundleTypes = (entries) => {
  if (entries.length === 0) return {}
  const config = ts.getParsedCommandLineOfConfigFile(Path.join(here, "tsconfig.types.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail(ts.flattenDiagnosticMessageText(d.messageText, "\n")) })
  const { files, imported } = writeDeclarations({
    entries: entries.map((l) => ({ name: l.name, file: Path.join(packages, l.module.replace(/\.js$/, ".d.ts")) })),
    outDir: Path.join(out, "types"),
    keep: peers,
    compilerOptions: config.options
  })
  say(`types/ holds ${files} declaration files`)
  return imported
}

/** The bare modules a built file imports or requires, less Node's own. */
const importedModules = (code) => {
  const names = new Set()
  const statements = [
    /(?:^|[;}\s])(?:import|export)\b[^;"'()]*?\bfrom\s*["']([^"']+)["']/g,
    /(?:^|[;}\s])import\s*["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const re of statements) {
    for (const m of code.matchAll(re)) {
      const spec = m[1]
      if (spec.startsWith("node:") || spec.startsWith(".") || spec.startsWith("/") || builtinModules.includes(spec.split("/")[0])) continue
      names.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0])
    }
  }
  return [...names]
}

/**
 * The frameworks the libraries or their declarations import, each with the range an adapter (or else the
 * package that imports it) names. Fails the build when shipped code imports a module the package
 * neither holds nor declares.
 */
const checkImports = (files, libraryFiles, typeImports) => {
  const allowed = new Set(["better-sqlite3", ...peers, ...optional])
  const used = new Set(Object.keys(typeImports))
  for (const file of files.filter((f) => /\.(c|m)?js$/.test(f))) {
    const modules = importedModules(Fs.readFileSync(Path.join(out, "dist", file), "utf8"))
    const stray = modules.filter((m) => !allowed.has(m))
    if (stray.length > 0) fail(`dist/${file} imports ${stray.join(", ")}, which the package neither bundles nor declares`)
    if (libraryFiles.includes(file)) modules.filter((m) => peers.includes(m)).forEach((m) => used.add(m))
  }
  const ranges = Object.assign({}, typeImports, ...["ai-sdk", "langchain"].map((p) => JSON.parse(Fs.readFileSync(Path.join(packages, p, "package.json"), "utf8")).peerDependencies ?? {}))
  const missing = [...used].filter((m) => ranges[m] === undefined)
  if (missing.length > 0) fail(`the libraries import ${missing.join(", ")}, for which neither an adapter nor the package that imports them names a range`)
  return Object.fromEntries([...used].sort().map((m) => [m, ranges[m]]))
}

/** The manifest of what was built: its entries, its one dependency, its frameworks as optional peers. */
const manifest = (entries, frameworks) => ({
  name: workspace.name,
  version: workspace.version,
  description: workspace.description,
  license: workspace.license,
  type: "module",
  engines: { node: ">=20" },
  bin: { spillway: "./bin/spillway.cjs" },
  exports: {
    ...Object.fromEntries(entries.map((l) => [l.subpath, { types: `./types/${l.name}.d.mts`, default: `./dist/${l.name}.js` }])),
    "./package.json": "./package.json"
  },
  files: ["bin", "dist", "types"],
  dependencies: { "better-sqlite3": workspace.dependencies["better-sqlite3"] },
  ...(Object.keys(frameworks).length > 0
    ? { peerDependencies: frameworks, peerDependenciesMeta: Object.fromEntries(Object.keys(frameworks).map((m) => [m, { optional: true }])) }
    : {})
})

Fs.rmSync(out, { recursive: true, force: true })
const command = copyCommand()
const entries = presentLibraries()
const { bundled, files } = await bundleLibraries(entries)
const typeImports = bundleTypes(bundled)
const frameworks = checkImports([...command, ...files], files, typeImports)
Fs.writeFileSync(Path.join(out, "package.json"), `${JSON.stringify(manifest(bundled, frameworks), null, 2)}\n`)
Fs.copyFileSync(Path.join(packages, "..", "LICENSE"), Path.join(out, "LICENSE"))
Fs.copyFileSync(Path.join(here, "README.md"), Path.join(out, "README.md"))
say(`packages/spillway/dist/package holds the command (${command.length} files) and ${bundled.length === 0 ? "no library yet" : bundled.map(importName).join(", ")}`)
