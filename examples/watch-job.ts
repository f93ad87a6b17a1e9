/**
 * A host that starts a long command as a background job, waits until it
 * prints a line that matters (or ends), and hands a reviewer read-only
 * access: the reviewer polls and pages the job's output but cannot start,
 * signal or feed a job. Run it with `node examples/dist/watch-job.js` after
 * `pnpm build`, or import `startAndWatch`, `review` and `layer`.
 */
import { Process, ProcessView } from "@spillway/core"
import { NodeProcess } from "@spillway/node"
import { Effect, Layer } from "effect"

/** Starts a shell line and waits for `pattern`, its exit, or the timeout; returns its pid and status view. */
export const startAndWatch = (caller: Process.Caller, line: string, pattern: string, timeoutMillis = 30_000) =>
  Effect.gen(function*() {
    const { pid } = yield* Process.start(caller, { command: line, shell: true })
    // from the job's first line: a line printed before the wait began counts too
    const view = yield* Process.wait(caller, { pid, timeoutMillis, pattern, fromLine: 1 })
    return { pid, view }
  })

/** Reads a job's whole retained output, page by page; needs `ProcessRead` alone. */
export const review = (caller: Process.Caller, pid: number) =>
  Effect.gen(function*() {
    const status = yield* Process.poll(caller, { pid })
    if (status._tag !== "StatusView") return ""
    let cursor: string | undefined = status.retention.cursor
    let text = ""
    while (cursor !== undefined) {
      const page: ProcessView.PollResult = yield* Process.poll(caller, { pid, cursor, limit: 8_000 })
      if (page._tag !== "Page") break
      text += page.content
      cursor = page.truncated ? page.next_cursor : undefined
    }
    return text
  })

/** Every process capability, over spools in `directory` (temporary ones when absent). */
export const layer = (directory?: string) => NodeProcess.layer({ directory })

if (import.meta.url === `file://${process.argv[1]}`) {
  const me = { owner: "example", channel: "cli" }
  const program = Effect.gen(function*() {
    const full = yield* Layer.build(layer())
    const { pid, view } = yield* startAndWatch(me, "for i in 1 2 3; do echo step $i; sleep 0.2; done; echo BUILD OK", "BUILD").pipe(
      Effect.provide(full)
    )
    console.log(view.text)
    // the reviewer's context holds ProcessRead and nothing else
    const reader = yield* Layer.build(Process.readOnly(Layer.succeedContext(full)))
    console.log(yield* review(me, pid).pipe(Effect.provide(reader)))
  })
  Effect.runPromise(Effect.scoped(program))
}
