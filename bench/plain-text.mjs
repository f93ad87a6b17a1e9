// What a model is spared by the plain text form: every log of the failure-line
// corpus (test/salience/corpus, real output of real tools), in characters
// before and after `Terminal.plain`, as text and as the JSON string a tool
// result carries it in (where an escape character costs six).
//
//   pnpm build && node bench/plain-text.mjs
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Terminal } from "@spillway/core"

const root = Path.dirname(fileURLToPath(import.meta.url))
const corpus = Path.join(root, "..", "test", "salience", "corpus")
const chars = (s) => [...s].length
const json = (s) => JSON.stringify(s).length - 2

const rows = []
const total = { before: 0, after: 0, jsonBefore: 0, jsonAfter: 0, lines: 0, logs: 0 }
for (const name of Fs.readdirSync(corpus).filter((f) => f.endsWith(".log")).sort()) {
  const text = Fs.readFileSync(Path.join(corpus, name), "utf8")
  const plain = Terminal.plain(text)
  if (plain.split("\n").length !== text.split("\n").length) throw new Error(`${name}: the line count changed`)
  const row = { name, before: chars(text), after: chars(plain), jsonBefore: json(text), jsonAfter: json(plain) }
  total.before += row.before
  total.after += row.after
  total.jsonBefore += row.jsonBefore
  total.jsonAfter += row.jsonAfter
  total.lines += text.split("\n").length
  total.logs++
  if (row.after !== row.before) rows.push(row)
}
const pct = (a, b) => `${(100 * (1 - b / a)).toFixed(1)}%`
console.log(`| log | characters | plain | saved | as JSON | plain, as JSON | saved |`)
console.log(`| --- | ---: | ---: | ---: | ---: | ---: | ---: |`)
for (const r of rows) {
  console.log(`| ${r.name} | ${r.before} | ${r.after} | ${pct(r.before, r.after)} | ${r.jsonBefore} | ${r.jsonAfter} | ${pct(r.jsonBefore, r.jsonAfter)} |`)
}
console.log(
  `| all ${total.logs} logs (${total.lines} lines) | ${total.before} | ${total.after} | ${pct(total.before, total.after)} | ${total.jsonBefore} | ${total.jsonAfter} | ${pct(total.jsonBefore, total.jsonAfter)} |`
)
