/**
 * The pages of `docs/` hold to what they show, as the README does: every
 * TypeScript block compiles against the workspace's packages (a
 * deliberately partial one is marked `<!-- snippet: not compiled: WHY -->`,
 * and there are few), every JSON and TOML block parses, every `spillway`
 * command a shell block shows names a command and flags that the command's
 * own `--help` lists, every relative link of the README, the CHANGELOG and
 * the pages leads to a file (and to a heading, when it names one), and the
 * configuration page names every environment variable the sources read.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parse as parseToml } from "smol-toml"
import { type Block, checkPages, fencedBlocks, isCompiledSnippet, type Page, root } from "./readme.js"

const docs = Path.join(root, "docs")
const bin = Path.join(root, "packages", "cli", "bin", "spillway.cjs")

/** Every page of docs/, by its name from the root (`docs/jobs.md`). */
const pages = (): Array<Page> =>
  Fs.readdirSync(docs)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => ({ name: `docs/${f}`, markdown: Fs.readFileSync(Path.join(docs, f), "utf8") }))

/** The pages, the README and the CHANGELOG: every Markdown file a reader follows links between. */
const everyMarkdown = (): Array<Page> => [
  ...pages(),
  ...["README.md", "CHANGELOG.md"].map((name) => ({ name, markdown: Fs.readFileSync(Path.join(root, name), "utf8") }))
]

const blocksOf = (page: Page): Array<Block & { readonly page: string }> => fencedBlocks(page.markdown).map((b) => ({ ...b, page: page.name }))

/** JSON with comments, as `.jsonc` files hold it: line comments outside strings taken out. */
const stripLineComments = (text: string): string =>
  text.split("\n").map((line) => {
    let inString = false
    for (let i = 0; i < line.length; i++) {
      const c = line[i]
      if (c === "\\" && inString) i++
      else if (c === "\"") inString = !inString
      else if (!inString && c === "/" && line[i + 1] === "/") return line.slice(0, i)
    }
    return line
  }).join("\n")

/** A shell line's words, quotes honoured, with the operators that end a command as words of their own; a `#` word ends the line. */
export const shellWords = (line: string): Array<string> => {
  const words: Array<string> = []
  let word: string | undefined
  const push = () => {
    if (word !== undefined) words.push(word)
    word = undefined
  }
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'" || c === "\"") {
      const end = line.indexOf(c, i + 1)
      const close = end === -1 ? line.length : end
      word = (word ?? "") + line.slice(i + 1, close)
      i = close
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i]
    } else if (/\s/.test(c)) {
      push()
    } else if (c === "#" && word === undefined) {
      break
    } else if ("|&;<>()".includes(c)) {
      push()
      words.push(c)
    } else {
      word = (word ?? "") + c
    }
  }
  push()
  return words
}

/** One `spillway` call a shell block shows: its command word and the flags given before `--`. */
interface Call {
  readonly where: string
  readonly command: string
  readonly flags: ReadonlyArray<string>
}

/** The `spillway` calls of a shell block: at the start of a line or after an operator. */
export const spillwayCalls = (text: string, where: string): Array<Call> => {
  const calls: Array<Call> = []
  for (const line of text.replace(/\\\n/g, " ").split("\n")) {
    const words = shellWords(line.replace(/^\$ /, ""))
    for (let i = 0; i < words.length; i++) {
      const atStart = i === 0 || "|&;(".includes(words[i - 1]!)
      if (words[i] !== "spillway" || !atStart) continue
      const rest: Array<string> = []
      for (let j = i + 1; j < words.length && !"|&;<>()".includes(words[j]!) && words[j] !== "--"; j++) rest.push(words[j]!)
      calls.push({ where, command: rest[0] ?? "", flags: rest.slice(1).filter((w) => /^--?[A-Za-z]/.test(w)).map((w) => w.replace(/=.*$/, "")) })
    }
  }
  return calls
}

/** GitHub's anchor for a heading: lower case, punctuation out, spaces as hyphens. */
export const slug = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

/** The anchors of a Markdown text's headings (outside code blocks), a repeated one numbered as GitHub numbers it. */
const anchors = (markdown: string): Set<string> => {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  let fenced = false
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced
    const h = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line)
    if (h === null) continue
    const base = slug(h[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** The relative links of a Markdown text (not inside code), with their lines. */
const links = (markdown: string): Array<{ readonly line: number; readonly target: string }> => {
  const out: Array<{ line: number; target: string }> = []
  let fenced = false
  markdown.split("\n").forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced
    if (fenced) return
    for (const m of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1]!)) out.push({ line: i + 1, target: m[1]! })
    }
  })
  return out
}

/** The environment variables the packages' sources, the command's launcher and the agent plugins read. */
export const variablesRead = (): Set<string> => {
  const files: Array<string> = []
  const walk = (dir: string) => {
    if (!Fs.existsSync(dir)) return
    for (const e of Fs.readdirSync(dir, { withFileTypes: true })) {
      const p = Path.join(dir, e.name)
      if (e.isDirectory() && !["node_modules", "dist", "test"].includes(e.name)) walk(p)
      else if (e.isFile() && /\.(ts|cjs|mjs|js)$/.test(e.name) && !/\.(d|test)\.ts$/.test(e.name)) files.push(p)
    }
  }
  for (const p of Fs.readdirSync(Path.join(root, "packages"))) {
    walk(Path.join(root, "packages", p, "src"))
    walk(Path.join(root, "packages", p, "bin"))
  }
  walk(Path.join(root, "integrations", "pi"))
  walk(Path.join(root, "integrations", "opencode"))
  const names = new Set<string>()
  const reads = /\benv\??\.([A-Z][A-Z0-9_]*)\b|\benv\[\s*["'`]([A-Z][A-Z0-9_]*)["'`]\s*\]|\benvDir\(\s*\w+\s*,\s*"([A-Z][A-Z0-9_]*)"|\bConfig\.\w+\(\s*"([A-Z][A-Z0-9_]*)"/g
  for (const file of files) {
    // comments name variables they do not read (`process.env.TOKEN` as an example of a reference)
    const code = Fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
    for (const m of code.matchAll(reads)) names.add((m[1] ?? m[2] ?? m[3] ?? m[4])!)
  }
  return names
}

describe("the docs' pages", () => {
  it("compile every TypeScript block against the workspace's packages, few marked as not compiled", () => {
    if (!Fs.existsSync(Path.join(root, "packages", "node", "dist", "index.d.ts"))) {
      throw new Error("the packages' types are not built: run `npx --yes pnpm@10.34.8 check` first (`pnpm test` does)")
    }
    const all = pages()
    const typescript = all.flatMap(blocksOf).filter((b) => b.lang === "ts" || b.lang === "typescript")
    const skipped = typescript.filter((b) => !isCompiledSnippet(b))
    expect(typescript.length, "the pages show code").toBeGreaterThanOrEqual(10)
    expect(skipped.length, `few snippets go uncompiled: ${skipped.map((b) => `${b.page}:${b.line}`).join(", ")}`).toBeLessThanOrEqual(3)
    for (const b of skipped) expect(b.marker, `${b.page}:${b.line} says why it is not compiled`).toMatch(/^not compiled: \S/)
    for (const b of all.flatMap(blocksOf)) expect(["ts", "typescript", "sh", "json", "jsonc", "toml", "text", ""], `${b.page}:${b.line}: a block of a language the tests check`).toContain(b.lang)
    const problems = checkPages(all, Path.join(root, "examples", ".readme-snippets", "docs"))
    expect(problems.join("\n"), "tsc on the docs' snippets").toBe("")
  }, 180_000)

  it("reports a page's snippet that does not compile by its file and line", () => {
    const broken: Page = { name: "docs/broken.md", markdown: ["# A page", "", "  ```ts", "  import * as Spillway from \"spillway\"", "  export const x: number = Spillway.open", "  ```"].join("\n") }
    const fine: Page = { name: "docs/fine.md", markdown: ["```ts", "import { Spill } from \"@spillway/core\"", "export const kept = Spill.keepOutput(\"x\", 0)", "```"].join("\n") }
    const problems = checkPages([fine, broken], Path.join(root, "examples", ".readme-snippets", "docs-broken"))
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^docs\/broken\.md:5:\d+: error TS2322/)
  }, 120_000)

  it("parse every JSON and TOML block", () => {
    const blocks = everyMarkdown().flatMap(blocksOf)
    const data = blocks.filter((b) => ["json", "jsonc", "toml"].includes(b.lang))
    expect(data.length).toBeGreaterThanOrEqual(8)
    for (const b of data) {
      const parse = () => (b.lang === "toml" ? parseToml(b.text) : JSON.parse(b.lang === "jsonc" ? stripLineComments(b.text) : b.text))
      expect(parse, `${b.page}:${b.line} parses as ${b.lang}`).not.toThrow()
    }
  })

  it("show only spillway commands and flags that the command's --help lists", () => {
    if (!Fs.existsSync(Path.join(root, "packages", "cli", "dist", "spillway.cjs"))) {
      throw new Error("the command is not built: run `npx --yes pnpm@10.34.8 build` first (`pnpm test` builds before it tests)")
    }
    const help = new Map<string, { status: number | null; text: string }>()
    const helpOf = (command: string) => {
      let h = help.get(command)
      if (h === undefined) {
        const r = spawnSync(process.execPath, [bin, command, "--help"], { encoding: "utf8", timeout: 20_000, env: { ...process.env, NO_COLOR: "1" } })
        h = { status: r.status, text: `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, "") }
        help.set(command, h)
      }
      return h
    }
    const calls = everyMarkdown().flatMap((page) =>
      blocksOf(page).filter((b) => b.lang === "sh").flatMap((b) => spillwayCalls(b.text, `${page.name}:${b.line}`))
    )
    expect(calls.map((c) => c.command)).toEqual(expect.arrayContaining(["run", "read", "grep", "init", "mcp", "serve", "host", "hook"]))
    for (const call of calls) {
      const h = helpOf(call.command)
      expect(h.status, `${call.where}: spillway ${call.command} --help succeeds`).toBe(0)
      for (const flag of call.flags) {
        expect(h.text, `${call.where}: spillway ${call.command} --help lists ${flag}`).toMatch(new RegExp(`(^|[\\s\\[,(])${flag.replace(/[-]/g, "\\-")}(?![\\w-])`, "m"))
      }
    }
  }, 120_000)

  it("find the spillway calls of a shell line, and not the words that only look like one", () => {
    expect(spillwayCalls("echo '{}' | spillway hook claude   # --not-a-flag\nnpx pnpm pack:spillway .", "x")).toEqual([{ where: "x", command: "hook", flags: [] }])
    expect(spillwayCalls("spillway run --max-chars=4000 --json -- ls -la", "y")).toEqual([{ where: "y", command: "run", flags: ["--max-chars", "--json"] }])
    expect(spillwayCalls("spillway host --listen 7400 \\\n  --idle-timeout 300", "z")).toEqual([{ where: "z", command: "host", flags: ["--listen", "--idle-timeout"] }])
  })

  it("link only to files and headings that exist", () => {
    const markdown = everyMarkdown()
    expect(markdown.map((p) => p.name)).toEqual(expect.arrayContaining(["docs/architecture.md", "docs/configuration.md", "docs/mcp.md", "docs/library.md", "docs/jobs.md", "docs/remote.md", "docs/secrets.md", "docs/benchmarks.md"]))
    const broken: Array<string> = []
    for (const page of markdown) {
      const from = Path.dirname(Path.join(root, page.name))
      for (const { line, target } of links(page.markdown)) {
        const [file, anchor] = target.split("#") as [string, string | undefined]
        const path = file === "" ? Path.join(root, page.name) : Path.resolve(from, decodeURIComponent(file))
        if (!Fs.existsSync(path)) {
          broken.push(`${page.name}:${line}: ${target} (no such file)`)
          continue
        }
        if (anchor !== undefined && path.endsWith(".md") && !anchors(Fs.readFileSync(path, "utf8")).has(anchor)) {
          broken.push(`${page.name}:${line}: ${target} (no such heading)`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("name, on the configuration page, every environment variable the sources read", () => {
    const page = Fs.readFileSync(Path.join(docs, "configuration.md"), "utf8")
    const read = [...variablesRead()].sort()
    expect(read).toEqual(expect.arrayContaining(["SPILLWAY_OUTPUT_DIR", "SPILLWAY_OWNER", "SPILLWAY_CHANNEL", "TOOLS_TOOL_OUTPUT_MAX_CHARS", "SPILLWAY_QUICK"]))
    expect(read.filter((name) => !page.includes(`| \`${name}\` |`)), "variables read but not in a table of docs/configuration.md").toEqual([])
  })
})
