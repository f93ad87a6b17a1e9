import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { mcpServer, textOf } from "./mcpStdio.js"

// the driver the command ships with, to look at the manifests the server wrote
const Database = createRequire(new URL("../../cli/package.json", import.meta.url))("better-sqlite3") as new(
  file: string,
  options: { readonly readonly: boolean }
) => { prepare: (sql: string) => { all: () => Array<Record<string, unknown>> }; close: () => void }

const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

/** The saved outputs in a directory: every file but the store's own (whose names start with a dot). */
const savedFiles = (dir: string) => Fs.readdirSync(dir).filter((f) => !f.startsWith("."))

/** Every manifest row of the directory's store, or none when no manifest was ever written. */
const manifestRows = (dir: string): Array<Record<string, unknown>> => {
  const file = Path.join(dir, ".manifests.sqlite")
  if (!Fs.existsSync(file)) return []
  const db = new Database(file, { readonly: true })
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'spillway_bodies'").all()
    return table.length === 0 ? [] : db.prepare("SELECT id, profile, state, bytes, origin FROM spillway_bodies").all()
  } finally {
    db.close()
  }
}

/**
 * A short output (the common call) is answered whole and kept nowhere:
 * the reply names no file and no cursor, so nothing refers to a copy, and
 * the server stores none (no file, no manifest row). A long one still takes
 * the whole path: a published file and a complete manifest, before the
 * reply names them.
 */
describe("spillway mcp: a short run_command keeps nothing", () => {
  const server = mcpServer("spillway-mcp-short-")

  it("the work a server does for its first call, once connected, keeps nothing", async () => {
    // the first-call work runs in the background after the handshake: give it time to end
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(savedFiles(server.dir)).toEqual([])
    expect(manifestRows(server.dir)).toEqual([])
  })

  it("a short output comes back whole, with no file, no cursor and no manifest row", async () => {
    for (let i = 0; i < 20; i++) {
      const r = await server.call("run_command", { command: `echo short call ${i}` })
      expect(r.isError).toBeFalsy()
      expect(textOf(r)).toBe(`short call ${i}\n[exit code 0]`)
      expect(r.structuredContent).toEqual({ exit_code: 0, timed_out: false, truncated: false, filename: null, cursor: null })
    }
    expect(savedFiles(server.dir)).toEqual([])
    expect(manifestRows(server.dir)).toEqual([])
  })

  it("a short output with a token comes back masked, and is not kept either", async () => {
    const r = await server.call("run_command", { command: `echo ${TOKEN}` })
    expect(textOf(r)).not.toContain(TOKEN)
    expect(r.structuredContent!.filename).toBeNull()
    expect(savedFiles(server.dir)).toEqual([])
    expect(manifestRows(server.dir)).toEqual([])
  })

  it("an output one character past the cap takes the whole path: a saved file and a complete manifest", async () => {
    // 2,001 characters: one past the preview's default cap
    const r = await server.call("run_command", { command: `head -c 2000 /dev/zero | tr '\\0' x; echo; : ${TOKEN}` })
    expect(r.structuredContent!.truncated).toBe(true)
    const filename = r.structuredContent!.filename as string
    expect(typeof filename).toBe("string")
    expect(r.structuredContent!.cursor).toEqual(expect.any(String))
    expect(savedFiles(server.dir)).toEqual([filename])
    expect(Fs.statSync(Path.join(server.dir, filename)).size).toBe(2001)
    const rows = manifestRows(server.dir)
    expect(rows.map((m) => [m.id, m.profile, m.state, Number(m.bytes)])).toEqual([[filename, "spill", "complete", 2001]])
    // the command recorded beside it is masked like the output
    expect(String(rows[0]!.origin)).toContain("/dev/zero")
    expect(String(rows[0]!.origin)).not.toContain(TOKEN)
    // and it reads back by name
    const page = await server.call("read_spill", { filename, offset: 1, limit: 1 })
    expect(textOf(page)).toContain("x".repeat(100))
  })
})
