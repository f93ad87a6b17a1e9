/**
 * The README's fenced code blocks, for the tests that hold the README to
 * what it shows: its TypeScript snippets compile, and its MCP client
 * configurations start a server that answers.
 */
import * as Fs from "node:fs"
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
