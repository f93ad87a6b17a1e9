import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))
const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

/** The command's errors go through the one error-to-text path: a secret an error quotes is masked on stderr and in --json. */
describe("spillway: error words are masked", () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-cli-errors-"))
  afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))
  const spillway = (args: ReadonlyArray<string>) => {
    const r = spawnSync(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SPILLWAY_OUTPUT_DIR: dir, SPILLWAY_QUICK: "0" },
      timeout: 30_000
    })
    return { status: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
  }

  it("a read of a name holding a token says it found nothing, the token masked", () => {
    const r = spillway(["read", `${TOKEN}.log`])
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain("spillway read:")
    expect(r.stderr).not.toContain(TOKEN)
    expect(r.stderr).toContain("no saved output")
  })

  it("a grep whose pattern holds a token and does not compile says why, the token masked", () => {
    const r = spillway(["grep", `${TOKEN}(`, "2026-01-01T00-00-00-000Z-abcdef.log"])
    expect(r.status).not.toBe(0)
    expect(r.stderr.length).toBeGreaterThan(0)
    expect(r.stderr).not.toContain(TOKEN)
  })
})
