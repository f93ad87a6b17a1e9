import { describe, expect, it } from "@effect/vitest"
import { Spill } from "@spillway/core"
import { Effect, Exit } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { layer, program } from "./policy-gated.js"

describe("the policy-gated workflow", () => {
  it("keeps a failing build, finds its error, and may read only what it saved", async () => {
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-example-"))
    Fs.writeFileSync(Path.join(directory, "2026-01-01T00-00-00-000Z-abcdef.log"), "someone else's output\n", { mode: 0o600 })
    const command = { command: "for i in $(seq 1 3000); do echo \"unit $i\"; done; echo 'error: unit 1234 failed' >&2; exit 1", shell: true }
    const result = await Effect.runPromise(
      Effect.gen(function*() {
        const kept = yield* program(command)
        const own = yield* Spill.grepSpill("error", kept.filename!)
        const foreign = yield* Effect.exit(Spill.readSpill("2026-01-01T00-00-00-000Z-abcdef.log"))
        return { kept, own, foreign }
      }).pipe(Effect.provide(layer({ directory })))
    )
    expect(result.kept.exitCode).toBe(1)
    // stdout and stderr are two pipes merged as they are read, so where the
    // error line lands among the 3,001 lines depends on timing; that it is
    // kept, once, and shown in the preview does not
    expect(result.kept.text).toContain("error: unit 1234 failed")
    expect(result.kept.totalLines).toBe(3_001)
    expect(result.own.matches.map((m) => m.text)).toEqual(["error: unit 1234 failed"])
    Fs.rmSync(directory, { recursive: true, force: true })
    expect(Exit.isFailure(result.foreign) && JSON.stringify(result.foreign.cause)).toContain("this workflow reads only the output it saved")
  })
})
