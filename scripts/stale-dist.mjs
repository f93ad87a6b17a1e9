// Removes what an earlier build left in a package's dist/ for a source file
// that is gone (a module moved or deleted), so that a packed package never
// ships it: `tsc -b` writes outputs and never deletes them. A module tsc
// wrote has a declaration file; the command's bundles have none and are kept.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../packages", import.meta.url))

for (const name of Fs.readdirSync(root)) {
  const dist = Path.join(root, name, "dist")
  if (!Fs.existsSync(dist)) continue
  for (const file of Fs.readdirSync(dist, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".d.ts")) continue
    const module = file.slice(0, -".d.ts".length)
    if (Fs.existsSync(Path.join(root, name, "src", `${module}.ts`))) continue
    for (const output of [".js", ".js.map", ".d.ts", ".d.ts.map"]) {
      Fs.rmSync(Path.join(dist, module + output), { force: true })
    }
    console.log(`removed packages/${name}/dist/${module}.*: its source is gone`)
  }
}
