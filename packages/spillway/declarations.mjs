// The libraries' type declarations, for a package that bundles its
// dependencies: every declaration file an entry reaches (the @spillway
// packages', Effect's) is copied under types/, grouped by the package it
// comes from, with each import of another copied file rewritten to a
// relative path. What the user installs beside the package (the frameworks,
// Node's own types) stays a bare import. Each entry gets types/<name>.d.mts,
// which re-exports its module.
//
// Every copy is named .d.mts, as the package is ES modules throughout; the
// name also keeps the build's sweep of stale outputs (scripts/stale-dist.mjs,
// which removes a .d.ts whose source is gone) off them.
//
// Flattening into one file (dts-bundle-generator) does not hold for these
// types: Effect's declarations merge interfaces across modules, and one flat
// file of them neither type-checks nor stays small.
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

/** The directory of the package a file belongs to, and the package's name. */
const owningPackage = (file, cache) => {
  let dir = Path.dirname(file)
  while (dir !== Path.dirname(dir)) {
    if (cache.has(dir)) return cache.get(dir)
    const manifest = Path.join(dir, "package.json")
    if (Fs.existsSync(manifest)) {
      const name = JSON.parse(Fs.readFileSync(manifest, "utf8")).name
      if (typeof name === "string") {
        cache.set(dir, { dir, name })
        return cache.get(dir)
      }
    }
    dir = Path.dirname(dir)
  }
  return undefined
}

/** The string literals of a declaration file that name modules: imports, exports, `import("...")` types. */
const moduleLiterals = (sourceFile) => {
  const found = []
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push(node.moduleReference.expression)
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      found.push(node.name)
    }
    ts.forEachChild(node, visit)
  }
  visit(sourceFile)
  return found
}

/** A module specifier for `to` as seen from `from`: relative, with the extension of the module it declares. */
const relativeSpecifier = (from, to) => {
  const path = Path.relative(Path.dirname(from), to).split(Path.sep).join("/").replace(/\.d\.(c|m)?ts$/, (_, k) => `.${k ?? ""}js`)
  return path.startsWith(".") ? path : `./${path}`
}

/**
 * Writes the declarations of `entries` (`{ name, file }`, `file` a compiled module's `.d.ts`) under
 * `outDir`. `keep` names the packages left as bare imports. Returns how many files were written, and
 * the kept packages the declarations import, each with the range of the package that imports it.
 */
export const writeDeclarations = ({ entries, outDir, keep, compilerOptions }) => {
  const program = ts.createProgram(entries.map((e) => e.file), { ...compilerOptions, noEmit: true })
  const packages = new Map()
  const resolve = (sourceFile, literal) => {
    const resolved = program.getResolvedModule(sourceFile, literal.text, program.getModeForUsageLocation(sourceFile, literal))?.resolvedModule
    return resolved === undefined ? undefined : program.getSourceFile(resolved.resolvedFileName)
  }
  // from the entries, through every module they name, but not into the packages kept as imports
  const copied = new Map()
  const kept = new Map()
  const queue = entries.map((e) => ({ sourceFile: program.getSourceFile(e.file), from: undefined }))
  while (queue.length > 0) {
    const { sourceFile, from } = queue.shift()
    if (sourceFile === undefined || copied.has(sourceFile.fileName) || program.isSourceFileDefaultLibrary(sourceFile)) continue
    const file = Fs.realpathSync(sourceFile.fileName)
    const owner = owningPackage(file, packages)
    if (owner === undefined) throw new Error(`${file} belongs to no package`)
    if (keep.includes(owner.name) || owner.name.startsWith("@types/")) {
      // the range the importing package asks for
      if (!owner.name.startsWith("@types/") && !kept.has(owner.name)) kept.set(owner.name, from?.dependencies?.[owner.name] ?? from?.peerDependencies?.[owner.name])
      continue
    }
    if (!/\.d\.(c|m)?ts$/.test(file)) throw new Error(`${file} is not a declaration file: the entries must be compiled modules' .d.ts`)
    copied.set(sourceFile.fileName, Path.join(outDir, "_", owner.name, Path.relative(owner.dir, file).replace(/\.d\.ts$/, ".d.mts")))
    owner.manifest ??= JSON.parse(Fs.readFileSync(Path.join(owner.dir, "package.json"), "utf8"))
    for (const literal of moduleLiterals(sourceFile)) queue.push({ sourceFile: resolve(sourceFile, literal), from: owner.manifest })
    for (const ref of sourceFile.referencedFiles) {
      queue.push({ sourceFile: program.getSourceFile(Path.resolve(Path.dirname(sourceFile.fileName), ref.fileName)), from: owner.manifest })
    }
  }
  for (const [fileName, target] of copied) {
    const sourceFile = program.getSourceFile(fileName)
    let text = sourceFile.text
    const edits = []
    for (const literal of moduleLiterals(sourceFile)) {
      const to = copied.get(resolve(sourceFile, literal)?.fileName)
      if (to !== undefined) edits.push({ start: literal.getStart(sourceFile) + 1, end: literal.getEnd() - 1, text: relativeSpecifier(target, to) })
    }
    for (const edit of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end)
    // the source maps of declarations point at sources that do not ship
    text = text.replace(/^\/\/# sourceMappingURL=.*$/m, "")
    Fs.mkdirSync(Path.dirname(target), { recursive: true })
    Fs.writeFileSync(target, text)
  }
  for (const entry of entries) {
    const module = copied.get(program.getSourceFile(entry.file)?.fileName ?? entry.file)
    const at = Path.join(outDir, `${entry.name}.d.mts`)
    Fs.writeFileSync(at, `export * from "${relativeSpecifier(at, module)}"\n`)
  }
  return { files: copied.size, imported: Object.fromEntries(kept) }
}
