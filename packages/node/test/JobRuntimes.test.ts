/**
 * A job lives as long as the manager that started it, whichever child
 * runner runs it: started in one run of a program and polled and waited on
 * in another (as a host that keeps one runtime does, and as a test that
 * swaps in a runner layer does), its output is whole and its exit status
 * right.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { NodeCommandExecutor, NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Access, Body, BodyFiles, Child, Cursor, Manifests, Process, ProcessView, Retention, Secrets } from "@spillway/core"
import { NodeChild } from "@spillway/node"
import { Deferred, Effect, Exit, Inspectable, Layer, ManagedRuntime, Scope, Sink, Stream } from "effect"

const me: Process.Caller = { owner: "alice", channel: "ci-1" }

/** The job capabilities over a runner, with an in-memory body store: what a host's test composes. */
const jobs = (runner: Layer.Layer<Child.ChildRunner>) =>
  Process.layer({ drainGraceMillis: 500 }).pipe(
    Layer.provide(runner),
    Layer.provide(Cursor.layerRandomKey),
    Layer.provide(Body.layer.pipe(Layer.provideMerge(Layer.mergeAll(
      BodyFiles.layerMemory,
      Manifests.layerMemory,
      Retention.layer(),
      Secrets.layer(),
      Access.allowOwners
    )))),
    Layer.orDie
  )

const overExecutor = Child.layerExecutor.pipe(Layer.provide(NodeCommandExecutor.layer), Layer.provide(NodeFileSystem.layer))

/** 3,000 numbered lines, then a pause, then a last line and exit 3. */
const LINES = 3000
const SCRIPT = `i=1; while [ $i -le ${LINES} ]; do echo "line $i"; i=$((i+1)); done; sleep 0.3; echo done; exit 3`
const expected = Array.from({ length: LINES }, (_, i) => `line ${i + 1}\n`).join("") + "done\n"

/**
 * A scripted `CommandExecutor`, built with the platform's own `makeExecutor`:
 * every command "prints" `expected` in chunks, a few milliseconds apart, and
 * exits with 3 once its output is out. Nothing runs: what the job sees comes
 * from the script alone.
 */
const scripted = Layer.succeed(
  CommandExecutor.CommandExecutor,
  CommandExecutor.makeExecutor((_command) =>
    Effect.gen(function*() {
      const exited = yield* Deferred.make<CommandExecutor.ExitCode>()
      const chunks = expected.match(/[^]{1,4096}/g)!.map((s) => new TextEncoder().encode(s))
      const stdout = Stream.fromIterable(chunks).pipe(
        Stream.tap(() => Effect.sleep("5 millis")),
        Stream.ensuring(Deferred.succeed(exited, CommandExecutor.ExitCode(3)))
      )
      const process: CommandExecutor.Process = {
        [CommandExecutor.ProcessTypeId]: CommandExecutor.ProcessTypeId,
        pid: CommandExecutor.ProcessId(424242),
        exitCode: Deferred.await(exited),
        isRunning: Effect.map(Deferred.isDone(exited), (done) => !done),
        kill: () => Effect.asVoid(Deferred.succeed(exited, CommandExecutor.ExitCode(143))),
        stdout,
        stderr: Stream.empty,
        stdin: Sink.drain,
        toString: () => "scripted process",
        toJSON: () => ({ _id: "ScriptedProcess" }),
        [Inspectable.NodeInspectSymbol]: () => ({ _id: "ScriptedProcess" })
      }
      return process
    })
  )
)

const runners: ReadonlyArray<readonly [string, Layer.Layer<Child.ChildRunner>, string]> = [
  ["the Node runner", NodeChild.layerForJobs(), SCRIPT],
  ["the runner over the platform's NodeCommandExecutor", overExecutor, SCRIPT],
  ["the runner over a scripted CommandExecutor", Child.layerExecutor.pipe(Layer.provide(scripted)), "anything"]
]

const statusOf = (r: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines) => {
  if (r._tag !== "StatusView") throw new Error(`expected the status view, got ${r._tag}`)
  return r
}

/** Every kept line of a job, read back page by page by line. */
const allLines = (pid: number) =>
  Effect.gen(function*() {
    let out = ""
    let line: number | undefined = 1
    while (line !== undefined) {
      const page: ProcessView.StatusView | ProcessView.Page | ProcessView.Lines = yield* Process.poll(me, { pid, line, lines: 500 })
      if (page._tag !== "Lines") throw new Error(`expected lines, got ${page._tag}`)
      out += page.content
      line = page.next_line
    }
    return out
  })

describe("a job started in one run and waited on in another", () => {
  for (const [name, runner, command] of runners) {
    it(`${name}: the output is whole and the exit status right, across ManagedRuntime.runPromise calls`, { timeout: 30_000 }, async () => {
      const runtime = ManagedRuntime.make(jobs(runner))
      try {
        const { pid } = await runtime.runPromise(Process.start(me, { command, shell: true }))
        // this run of the program has ended: the job goes on without it
        const waited = await runtime.runPromise(Process.wait(me, { pid, timeoutMillis: 20_000 }))
        expect(waited.retention.wait?.ended_by).toBe("exit")
        expect(waited.retention).toMatchObject({ status: "exited", exit_code: 3, emitted_bytes: expected.length, not_retained_bytes: 0 })
        const polled = statusOf(await runtime.runPromise(Process.poll(me, { pid })))
        expect(polled.text).toContain("line 3000\ndone")
        expect(await runtime.runPromise(allLines(pid))).toBe(expected)
      } finally {
        await runtime.dispose()
      }
    })
  }

  it("over the platform's NodeCommandExecutor, with Effect.runPromise and a context built once", { timeout: 30_000 }, async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const context = await Effect.runPromise(Layer.buildWithScope(jobs(overExecutor), scope))
      const { pid } = await Effect.runPromise(Process.start(me, { command: SCRIPT, shell: true }).pipe(Effect.provide(context)))
      const waited = await Effect.runPromise(Process.wait(me, { pid, timeoutMillis: 20_000 }).pipe(Effect.provide(context)))
      expect(waited.retention).toMatchObject({ status: "exited", exit_code: 3, emitted_bytes: expected.length })
      expect(await Effect.runPromise(allLines(pid).pipe(Effect.provide(context)))).toBe(expected)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
