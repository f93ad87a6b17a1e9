import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const sourcesOf = (directory: string): ReadonlyArray<string> =>
  Fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(directory, entry.name)
    return entry.isDirectory() ? sourcesOf(path) : entry.name.endsWith(".ts") ? [path] : []
  })

describe("@spillway/agents is platform-free", () => {
  it("no source imports a Node module: files go through FileSystem, children through the child runner, randomness through Web Crypto", () => {
    const src = Path.join(import.meta.dirname, "..", "src")
    const offending = sourcesOf(src).filter((file) => /\bfrom\s+["']node:|\bimport\(\s*["']node:|\brequire\(\s*["']node:/.test(Fs.readFileSync(file, "utf8")))
    expect(offending.map((file) => Path.relative(src, file))).toEqual([])
    expect(sourcesOf(src).length).toBeGreaterThan(5)
  })
})
