#!/usr/bin/env node
// Reads a secret scanner's rule catalogue from a checkout of its repository
// and writes the catalogue's own true and false samples as test data:
//
//   node scripts/secret-catalogues.mjs <catalogue> <checkout>
//
// Each catalogue has a reader in scripts/secret-catalogues/<catalogue>.mjs
// that exports `generate(checkout, root)` and writes
// packages/core/test/catalogues/<catalogue>.json. The same checkout always
// gives the same bytes.
import { existsSync, readdirSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const readers = join(here, "secret-catalogues")
const known = readdirSync(readers).filter((f) => f.endsWith(".mjs")).map((f) => f.slice(0, -4)).sort()

const [name, checkout] = process.argv.slice(2)
if (name === undefined || checkout === undefined || !known.includes(name)) {
  process.stderr.write(
    `usage: node scripts/secret-catalogues.mjs <catalogue> <checkout>\n  catalogues: ${known.join(", ")}\n` +
      `  <checkout> is a checkout of the catalogue's repository (its files, not a bare git directory)\n`
  )
  process.exit(2)
}
if (!existsSync(checkout)) {
  process.stderr.write(`no such directory: ${checkout}; pass a checkout of the ${name} repository\n`)
  process.exit(2)
}
const reader = await import(pathToFileURL(join(readers, `${name}.mjs`)).href)
const written = await reader.generate(resolve(checkout), resolve(here, ".."))
process.stdout.write(`${written}\n`)
