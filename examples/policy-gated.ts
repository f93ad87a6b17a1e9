/**
 * A workflow that keeps a build's output and lets a reviewer read it back,
 * under a policy: saving is allowed, reading is allowed only for files this
 * workflow saved itself. Run it with `node examples/dist/policy-gated.js`
 * after `pnpm build`, or import `program` and `layer` into your own host.
 */
import { Access, Child, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { NodeChild, NodeSpill } from "@spillway/node"
import { Effect, Layer } from "effect"

/** Runs a command, keeps its output, and greps the saved copy for errors. */
export const program = (command: Child.Spec) =>
  Effect.gen(function*() {
    const write = yield* Spill.SpillWrite
    const kept = yield* Effect.scoped(Effect.gen(function*() {
      const capture = yield* write.capture()
      const exit = yield* Child.run(command, capture.write)
      return yield* capture.finish(exit.status)
    }))
    yield* Effect.log(kept.text)
    if (kept.filename === undefined) return kept
    const errors = yield* Spill.grepSpill("error|fail", kept.filename, { ignoreCase: true, maxResults: 5 })
    for (const m of errors.matches) yield* Effect.log(`${m.line}: ${m.text}`)
    return kept
  })

/** Saving is allowed; reading only of files saved by this process. */
export const ownFilesOnly = () => {
  const saved = new Set<string>()
  return SpillPolicy.fromFunction((op) => {
    if (op._tag === "spill/write") {
      saved.add(op.filename)
      return undefined
    }
    return saved.has(op.filename) ? undefined : "this workflow reads only the output it saved"
  })
}

/** The capabilities the workflow needs: spill read and write under the policy, and running commands. */
export const layer = (options: NodeSpill.Options = {}) =>
  NodeSpill.layerWithout(options).pipe(
    Layer.provide(ownFilesOnly()),
    Layer.provide(Secrets.layerFromEnv),
    Layer.provide(Access.allowOwners),
    Layer.merge(NodeChild.layer())
  )

if (import.meta.url === `file://${process.argv[1]}`) {
  const command: Child.Spec = {
    command: "for i in $(seq 1 3000); do echo \"compiling unit $i\"; done; echo 'error: unit 1234 failed' >&2; exit 1",
    shell: true
  }
  Effect.runPromise(program(command).pipe(Effect.provide(layer())))
}
