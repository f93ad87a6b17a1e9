/**
 * Every TypeScript snippet of the README compiles against the workspace's
 * packages, so what a reader copies is what the packages export. A snippet
 * that is deliberately partial is marked `<!-- snippet: not compiled: WHY -->`
 * on the line before its fence; there are few, each saying why.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { checkSnippets, fencedBlocks, isCompiledSnippet, readmePath, root } from "./readme.js"

const generated = Path.join(root, "examples", ".readme-snippets")

const requireBuild = () => {
  if (!Fs.existsSync(Path.join(root, "packages", "node", "dist", "index.d.ts"))) {
    throw new Error("the packages' types are not built: run `npx --yes pnpm@10.34.8 check` first (`pnpm test` does)")
  }
}

describe("the README's TypeScript snippets", () => {
  it("compile against the workspace's packages", () => {
    requireBuild()
    const readme = Fs.readFileSync(readmePath, "utf8")
    const typescript = fencedBlocks(readme).filter((b) => b.lang === "ts" || b.lang === "typescript")
    const skipped = typescript.filter((b) => !isCompiledSnippet(b))
    // one snippet on Effect and one on the Promise API; the rest are on the docs' pages (test/docs.test.ts)
    expect(typescript.map((b) => b.text.match(/from "([^"]+)"/)?.[1])).toEqual(expect.arrayContaining(["@spillway/core", "spillway"]))
    expect(skipped.map((b) => `README.md:${b.line}: ${b.marker}`), "few snippets go uncompiled, each saying why").toHaveLength(0)
    const problems = checkSnippets(readme, "README.md", Path.join(generated, "readme"))
    expect(problems.join("\n"), "tsc on the README's snippets").toBe("")
  }, 120_000)

  it("reports a snippet that does not compile by its README line, and skips one marked as not compiled", () => {
    requireBuild()
    const markdown = [
      "# A README",
      "",
      "```ts",
      "import { Spill } from \"@spillway/core\"",
      "export const kept = Spill.keepOutput(hugeBuildLog, 0)",
      "```",
      "",
      "```ts",
      "import { Spill } from \"@spillway/core\"",
      "",
      "export const page = Spill.readSpill(42)",
      "```",
      "",
      "<!-- snippet: not compiled: a fragment -->",
      "```ts",
      "kept.nothing()",
      "```"
    ].join("\n")
    const problems = checkSnippets(markdown, "README.md", Path.join(generated, "broken"))
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^README\.md:11:\d+: error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'/)
  }, 120_000)
})
