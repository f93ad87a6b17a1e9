/**
 * The fenced code blocks of the README and the docs, for the tests that
 * hold them to what they show: their TypeScript snippets compile, and the
 * README's MCP client configurations start a server that answers.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root directory. */
export const root = fileURLToPath(new URL("..", import.meta.url))

/** The README the tests read. */
export const readmePath = fileURLToPath(new URL("../README.md", import.meta.url))

/** One fenced block: its language word, its text, and where it is. */
export interface Block {
  readonly lang: string
  /** The 1-based line of the README that holds the block's first line of text. */
  readonly line: number
  readonly text: string
  /** The `<!-- snippet: ... -->` comment on the line before the opening fence, when there is one: what follows `snippet:`. */
  readonly marker?: string
}

/** Every fenced block of a Markdown text, in order; a fence indented under a list item counts, its indent taken off the block's lines. */
export const fencedBlocks = (markdown: string): Array<Block> => {
  const lines = markdown.split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\S*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const indent = open[1]!
    let end = i + 1
    while (end < lines.length && !new RegExp(`^${indent}\`\`\`\\s*$`).test(lines[end]!)) end++
    const before = i > 0 ? /^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$/.exec(lines[i - 1]!) : null
    blocks.push({
      lang: open[2]!,
      line: i + 2,
      text: lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join("\n"),
      ...(before !== null ? { marker: before[1]! } : {})
    })
    i = end
  }
  return blocks
}

/** The README's blocks. */
export const readmeBlocks = (): Array<Block> => fencedBlocks(Fs.readFileSync(readmePath, "utf8"))

/** The one block of a language that holds a text, or an error that says which block the README lacks. */
export const blockHolding = (lang: string, needle: string): Block => {
  const found = readmeBlocks().filter((b) => b.lang === lang && b.text.includes(needle))
  if (found.length !== 1) {
    throw new Error(`README.md should have exactly one \`\`\`${lang} block holding ${needle}; it has ${found.length}`)
  }
  return found[0]!
}

/** A server entry of an MCP client's configuration: the command to start, its arguments and its environment. */
export interface ServerEntry {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/** The environment variables `spillway mcp` reads, each named in the sources that read it. */
export const serverVariables = [
  "SPILLWAY_OUTPUT_DIR",
  "SPILLWAY_OWNER",
  "SPILLWAY_CHANNEL",
  "SPILLWAY_MANIFESTS_URL",
  "TOOLS_TOOL_OUTPUT_MAX_CHARS"
] as const

/**
 * Names the README's snippets use for data a reader has at hand (a build's
 * log, a tool's raw result, a fetched page): declared as strings where the
 * snippets are compiled, so that a snippet need not make them up.
 */
export const placeholders = ["hugeBuildLog", "rawOutput", "fetchedPage"] as const

/** Whether a block is a TypeScript snippet to compile: `ts` or `typescript`, not marked `<!-- snippet: not compiled ... -->`. */
export const isCompiledSnippet = (b: Block): boolean =>
  (b.lang === "ts" || b.lang === "typescript") && !(b.marker ?? "").startsWith("not compiled")

/** A Markdown file whose snippets are checked: the name problems are reported under, and its text. */
export interface Page {
  readonly name: string
  readonly markdown: string
}

/**
 * Where the one package's names resolve when snippets are compiled: the
 * declarations the build wrote for `spillway` (the Promise API),
 * `spillway/ai-sdk` and `spillway/langchain`, as an install of the one
 * package gives them.
 */
const onePackage = (directory: string): Record<string, Array<string>> => {
  const at = (file: string) => [`./${Path.relative(directory, Path.join(root, "packages", file)).split(Path.sep).join("/")}`]
  return {
    "spillway": at("node/dist/Spillway.d.ts"),
    "spillway/ai-sdk": at("ai-sdk/dist/index.d.ts"),
    "spillway/langchain": at("langchain/dist/index.d.ts")
  }
}

/**
 * Type-checks the TypeScript snippets of Markdown files against the
 * workspace's packages in one run of tsc, each snippet as a module of its
 * own, in a directory under `examples/` (whose dependencies are the
 * packages). Returns tsc's complaints, each starting with the Markdown
 * file's name and line (`docs/jobs.md:312:7: error TS2339: ...`); none when
 * every snippet compiles.
 */
export const checkPages = (pages: ReadonlyArray<Page>, directory: string): Array<string> => {
  Fs.rmSync(directory, { recursive: true, force: true })
  Fs.mkdirSync(directory, { recursive: true })
  pages.forEach((page, k) => {
    for (const snippet of fencedBlocks(page.markdown).filter(isCompiledSnippet)) {
      Fs.writeFileSync(Path.join(directory, `snippet-${k}-${snippet.line}.ts`), `${snippet.text}\n`)
    }
  })
  Fs.writeFileSync(Path.join(directory, "placeholders.d.ts"), placeholders.map((p) => `declare const ${p}: string\n`).join(""))
  Fs.writeFileSync(
    Path.join(directory, "tsconfig.json"),
    JSON.stringify({
      extends: Path.relative(directory, Path.join(root, "tsconfig.base.json")),
      // snippets show a call and leave its result unused; nothing is emitted
      compilerOptions: {
        noEmit: true,
        composite: false,
        incremental: false,
        declaration: false,
        declarationMap: false,
        sourceMap: false,
        noUnusedLocals: false,
        noUnusedParameters: false,
        paths: onePackage(directory)
      },
      include: ["*.ts"]
    })
  )
  const tsc = Path.join(root, "node_modules", "typescript", "bin", "tsc")
  const r = spawnSync(process.execPath, [tsc, "-p", Path.join(directory, "tsconfig.json"), "--pretty", "false"], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 })
  if (r.error !== undefined) throw r.error
  const problems: Array<string> = []
  for (const line of `${r.stdout}${r.stderr}`.split("\n")) {
    if (line.trim() === "") continue
    const at = /^(?:.*[/\\])?snippet-(\d+)-(\d+)\.ts\((\d+),(\d+)\): (.*)$/.exec(line)
    if (at !== null) problems.push(`${pages[Number(at[1])]!.name}:${Number(at[2]) + Number(at[3]) - 1}:${at[4]}: ${at[5]}`)
    else if (/^\s/.test(line) && problems.length > 0) problems[problems.length - 1] += `\n${line}`
    else problems.push(line)
  }
  if (r.status !== 0 && problems.length === 0) problems.push(`tsc exited ${r.status} without saying why`)
  return problems
}

/** `checkPages` for one Markdown text (`README.md:312:7: error TS2339: ...`). */
export const checkSnippets = (markdown: string, name: string, directory: string): Array<string> =>
  checkPages([{ name, markdown }], directory)
