// Packs the built package (dist/package/, see build.mjs) into a folder:
// `node pack.mjs [FOLDER]`, the folder relative to where pnpm was started
// (INIT_CWD) and the current directory by default. Prints the tarball's path.
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const built = Path.join(here, "dist", "package")
const from = process.env.INIT_CWD ?? process.cwd()
const folder = Path.resolve(from, process.argv[2] ?? ".")

if (!Fs.existsSync(Path.join(built, "package.json"))) {
  console.error("spillway pack: packages/spillway/dist/package is not built: run `npx --yes pnpm@10.34.8 build` first")
  process.exit(1)
}
Fs.mkdirSync(folder, { recursive: true })
// pnpm hands its scripts its own settings as npm_config_* variables, which npm would warn about;
// packing needs none of them (npm reads the user's .npmrc itself)
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
const report = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", folder], { cwd: built, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }))
console.log(Path.join(folder, report[0].filename))
