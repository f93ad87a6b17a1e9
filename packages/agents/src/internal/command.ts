import { Child, Utf8 } from "@spillway/core"
import { Effect } from "effect"
import type { AgentDefinition } from "../Agents.js"

const ended = (file: string, status: Child.ExitStatus) =>
  `[${file} ended ${status.code !== null ? `with exit code ${status.code}` : `by ${status.signal ?? "a signal"}`}]`

/**
 * An agent that runs a command through the child runner: stdout and stderr,
 * in one pipe so that their lines keep the order the command wrote them in,
 * are its body; a non-zero exit or a signal makes
 * it an error body ending with how the command ended, and a command that
 * cannot start an error body saying why. @internal
 */
export const commandAgent = (
  name: string,
  description: string,
  argv: (task: string) => readonly [string, ...Array<string>]
): AgentDefinition<Child.ChildRunner> => ({
  name,
  description,
  run: ({ task }) =>
    Effect.gen(function*() {
      const [file, ...args] = argv(task)
      const parts: Array<Uint8Array> = []
      const status = yield* Child.run({ command: file, args, mergeStderr: true }, (chunk) => Effect.sync(() => void parts.push(Uint8Array.from(chunk)))).pipe(
        Effect.mapError((e) => `cannot run ${file}: ${e.reason}`)
      )
      const out = Utf8.decodeLossy(concat(parts))
      if (status.code === 0) return out
      return yield* Effect.fail(`${out}${out.endsWith("\n") || out === "" ? "" : "\n"}${ended(file, status)}`)
    })
})

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  let size = 0
  for (const p of parts) size += p.length
  const out = new Uint8Array(size)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
