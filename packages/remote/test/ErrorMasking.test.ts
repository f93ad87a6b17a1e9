import { describe, expect, it } from "@effect/vitest"
import { Controller } from "@spillway/remote"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import { bin, hostFiles } from "./hosts.js"

const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
const me = { owner: "controller-1", channel: "conv-1" }

/** The host's errors go through the one error-to-text path: a secret an error quotes reaches the controller masked. */
describe("a host: error words are masked", () => {
  it.scopedLive("a search whose pattern holds a token and does not compile fails with the token masked", () =>
    Effect.gen(function*() {
      const credential = "masking-test-credential-0123456789"
      const files = hostFiles({ [credential]: "team-a" })
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(files.root, { recursive: true, force: true })))
      const context = yield* Layer.build(Controller.layer().pipe(
        Layer.provideMerge(Controller.layerStdio(process.execPath, [bin, "host", "--stdio", "--dir", files.directory, "--credentials", files.credentials]))
      ))
      const leased = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(context))
      const job = yield* leased.start({ command: "echo hi" })
      yield* leased.wait(job.pid, 10_000)
      const failed = yield* Effect.flip(leased.search(job.pid, { pattern: `${TOKEN}(` }))
      expect(failed.message.length).toBeGreaterThan(0)
      expect(failed.message).not.toContain(TOKEN)
    }), 30_000)
})
