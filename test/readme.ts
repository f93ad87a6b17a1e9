/**
 * The README's fenced code blocks, for the tests that hold the README to
 * what it shows: its TypeScript snippets compile, and its MCP client
 * configurations start a server that answers.
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

/** Every fenced block of a Markdown text, in order. */
export const fencedBlocks = (markdown: string): Array<Block> => {
  const lines = markdown.split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    let end = i + 1
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++
    const before = i > 0 ? /^<!--\s*snippet:\s*(.*?)\s*-->\s*$/.exec(lines[i - 1]!) : null
    blocks.push({
      lang: open[1]!,
      line: i + 2,
      text: lines.slice(i + 1, end).join("\n"),
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

/**
 * Type-checks a Markdown text's TypeScript snippets against the workspace's
 * packages, each as a module of its own, in a directory under `examples/`
 * (whose dependencies are the packages). Returns tsc's complaints, each
 * starting with the Markdown file's name and line (`README.md:312:7: error
 * TS2339: ...`); none when every snippet compiles.
 */
export const checkSnippets = (markdown: string, name: string, directory: string): Array<string> => {
  Fs.rmSync(directory, { recursive: true, force: true })
  Fs.mkdirSync(directory, { recursive: true })
  const snippets = fencedBlocks(markdown).filter(isCompiledSnippet)
  for (const snippet of snippets) Fs.writeFileSync(Path.join(directory, `snippet-${snippet.line}.ts`), `${snippet.text}\n`)
  Fs.writeFileSync(Path.join(directory, "placeholders.d.ts"), placeholders.map((p) => `declare const ${p}: string\n`).join(""))
  Fs.writeFileSync(
    Path.join(directory, "tsconfig.json"),
    JSON.stringify({
      extends: Path.relative(directory, Path.join(root, "tsconfig.base.json")),
      // snippets show a call and leave its result unused; nothing is emitted
      compilerOptions: { noEmit: true, composite: false, incremental: false, declaration: false, declarationMap: false, sourceMap: false, noUnusedLocals: false, noUnusedParameters: false },
      include: ["*.ts"]
    })
  )
  const tsc = Path.join(root, "node_modules", "typescript", "bin", "tsc")
  const r = spawnSync(process.execPath, [tsc, "-p", Path.join(directory, "tsconfig.json"), "--pretty", "false"], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 })
  if (r.error !== undefined) throw r.error
  const problems: Array<string> = []
  for (const line of `${r.stdout}${r.stderr}`.split("\n")) {
    if (line.trim() === "") continue
    const at = /^(?:.*[/\\])?snippet-(\d+)\.ts\((\d+),(\d+)\): (.*)$/.exec(line)
    if (at !== null) problems.push(`${name}:${Number(at[1]) + Number(at[2]) - 1}:${at[3]}: ${at[4]}`)
    else if (/^\s/.test(line) && problems.length > 0) problems[problems.length - 1] += `\n${line}`
    else problems.push(line)
  }
  if (r.status !== 0 && problems.length === 0) problems.push(`tsc exited ${r.status} without saying why`)
  return problems
}
