// Reads secretlint's recommended preset from a checkout of
// github.com/secretlint/secretlint (MIT) and writes each rule's snapshot
// fixtures as samples: a fixture whose expected output reports something is
// a true sample (one span per report), one that reports nothing is a false
// sample. The reports' ranges cover more than the secret (a whole URL, a
// `KEY = value` pair, a whole JSON file): each is narrowed to the value the
// report names, then to a URL's password and a private key's body, which are
// what a masker hides.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { commitOf, formatCatalogue } from "./lib/catalogue.mjs"

/** Writes a catalogue's samples as JSON, one rule to a block; returns the path. */
const writeCatalogue = (root, name, catalogue) => {
  const dir = join(root, "packages/core/test/catalogues")
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `${name}.json`)
  writeFileSync(path, formatCatalogue(catalogue))
  return path
}

const rulesDir = "packages/@secretlint"
const preset = "secretlint-rule-preset-recommend"

/** The rule packages the preset registers, in its order, read from its index.ts. */
const presetRules = (checkout) => {
  const index = readFileSync(join(checkout, rulesDir, preset, "src/index.ts"), "utf8")
  const imports = new Map()
  for (const m of index.matchAll(/import \{ creator as (\w+) \} from "@secretlint\/(secretlint-rule-[\w-]+)"/g)) imports.set(m[1], m[2])
  const list = /export const rules = \[([^\]]*)\]/.exec(index)
  if (list === null) throw new Error(`no rules list in ${preset}/src/index.ts: the preset's layout changed; update this reader`)
  return list[1].split(",").map((s) => s.trim()).filter((s) => s !== "").map((name) => {
    const pkg = imports.get(name)
    if (pkg === undefined) throw new Error(`${name} is not imported in ${preset}/src/index.ts`)
    return pkg
  })
}

const bytes = (text) => Buffer.byteLength(text, "utf8")

/** The UTF-8 byte offset of a UTF-16 index into `text`. */
const byteAt = (text, index) => bytes(text.slice(0, index))

const valueKeys = ["KEY", "TOKEN", "SECRET", "ID", "CREDENTIAL", "URI"]

/** Narrows a report's [start, end) (UTF-16 indices into `text`) to the secret itself. */
const narrow = (text, start, end, data) => {
  let [s, e] = [start, end]
  const value = valueKeys.map((k) => data?.[k]).find((v) => typeof v === "string" && v.length > 0)
  if (value !== undefined) {
    // some reports start at the key and span the value's length: take the value where it is
    const inside = text.slice(s, e).indexOf(value)
    const at = inside >= 0 ? s + inside : text.indexOf(value, s)
    if (at >= 0) [s, e] = [at, at + value.length]
  }
  const slice = text.slice(s, e)
  // a URL's credentials: the password, or the user where the password is the x-oauth-basic marker
  const url = /^([a-z][a-z0-9+.:-]*:\/\/)([^:/@\s]*):(.*)@[^@]*$/i.exec(slice)
  if (url !== null) {
    const user = s + url[1].length
    const password = user + url[2].length + 1
    return url[3] === "x-oauth-basic" ? [user, user + url[2].length] : [password, password + url[3].length]
  }
  // a URL without credentials (a webhook): its path below the first segment
  const hook = /^[a-z]+:\/\/[^/\s]+\/[^/\s]+\//i.exec(slice)
  if (hook !== null) return [s + hook[0].length, e]
  // a private key: the body between its markers (the markers name the format, and stay visible)
  const begin = /-----BEGIN [A-Z ]*PRIVATE KEY-----/.exec(slice)
  if (begin !== null) {
    const from = begin.index + begin[0].length
    const stop = slice.indexOf("-----END", from)
    return [s + from, s + (stop < 0 ? slice.length : stop)]
  }
  return [s, e]
}

/** The input file a snapshot's output.json names, or undefined. */
const inputOf = (dir, output) => {
  const name = /^\[SNAPSHOT\]\/[^/]+\/(.+)$/.exec(output.filePath ?? "")?.[1]
  return name !== undefined && existsSync(join(dir, name)) ? name : undefined
}

/** The options a fixture's own configuration gives the rule, if any. */
const fixtureOptions = (dir) => {
  const file = join(dir, ".secretlintrc.json")
  if (!existsSync(file)) return undefined
  const config = JSON.parse(readFileSync(file, "utf8"))
  const options = config.rules?.[0]?.options
  return options !== undefined && Object.keys(options).length > 0 ? options : undefined
}

const isText = (buffer) => !buffer.includes(0) && Buffer.from(buffer.toString("utf8"), "utf8").equals(buffer)

const readRule = (checkout, pkg) => {
  const snapshots = join(checkout, rulesDir, pkg, "test/snapshots")
  const rule = { id: pkg.replace(/^secretlint-rule-/, ""), ruleId: `@secretlint/${pkg}`, tps: [], fps: [], unbuilt: [] }
  const fixtures = existsSync(snapshots) ? readdirSync(snapshots).filter((f) => existsSync(join(snapshots, f, "output.json"))).sort() : []
  for (const fixture of fixtures) {
    const dir = join(snapshots, fixture)
    const output = JSON.parse(readFileSync(join(dir, "output.json"), "utf8"))
    const input = inputOf(dir, output)
    const name = `${fixture}/${input ?? "?"}`
    if (input === undefined) {
      rule.unbuilt.push({ what: name, reason: "output.json names no input file in the fixture" })
      continue
    }
    const raw = readFileSync(join(dir, input))
    if (!isText(raw)) {
      rule.unbuilt.push({ what: name, reason: "a binary file (PKCS#12): no text for a masker of output to read" })
      continue
    }
    const text = raw.toString("utf8")
    const messages = output.messages ?? []
    const foreign = messages.filter((m) => m.ruleId !== rule.ruleId)
    if (foreign.length > 0) {
      rule.unbuilt.push({
        what: name,
        reason: `reports come from a rule defined only in the fixture's test (${[...new Set(foreign.map((m) => m.ruleId))].join(", ")}): its "secrets" are test words`
      })
      continue
    }
    const options = fixtureOptions(dir)
    if (messages.length === 0) {
      rule.fps.push(options === undefined ? { name, text } : { name, text, options: JSON.stringify(options) })
      continue
    }
    const spans = messages.map((m) => {
      const [s, e] = narrow(text, m.range[0], m.range[1], m.data)
      return [byteAt(text, s), byteAt(text, e)]
    })
    rule.tps.push({ name, text, spans })
  }
  if (fixtures.length === 0) rule.unbuilt.push({ what: "test/snapshots", reason: "the rule has no snapshot fixtures" })
  return rule
}

/** Reads the preset from `checkout` and writes packages/core/test/catalogues/secretlint.json under `root`. */
export const generate = (checkout, root) => {
  const rules = presetRules(checkout).map((pkg) => readRule(checkout, pkg))
  return writeCatalogue(root, "secretlint", {
    source: "secretlint (https://github.com/secretlint/secretlint), MIT License, Copyright (c) 2020 azu",
    commit: commitOf(checkout),
    generatedBy: "node scripts/secret-catalogues.mjs secretlint <checkout>",
    note: `The rules of ${rulesDir}/${preset}, in its order, with each rule's test/snapshots fixtures: tps are fixtures whose output.json reports (spans: byte ranges of each reported secret, narrowed to the value, a URL's password or a key's body), fps fixtures that report nothing (options: the fixture's own rule options, which may be what keeps a real secret from being reported).`,
    rules
  })
}
