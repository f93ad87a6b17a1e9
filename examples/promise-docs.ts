/**
 * docs/frameworks.md shows the examples whole: each of its TypeScript
 * blocks is one of these files, so what the page shows is compiled and run.
 */
import * as Fs from "node:fs"

const docs = () => Fs.readFileSync(new URL("../docs/frameworks.md", import.meta.url), "utf8")

/** The TypeScript blocks of the page. */
export const docsBlocks = (): Array<string> =>
  [...docs().matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)

/** True when the page shows an example file whole, as one of its blocks. */
export const docsShow = (file: string): boolean =>
  docsBlocks().includes(Fs.readFileSync(new URL(`./${file}`, import.meta.url), "utf8"))
