import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Access, SpillPolicy } from "@spillway/core"
import { NodeTools } from "@spillway/node"
import { Mcp, Tools } from "@spillway/tools"
import { Cause, Effect, Exit, Layer } from "effect"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-tools-")
const alice = { owner: "alice", channel: "conversation-1" }
const bob = { owner: "bob", channel: "conversation-2" }

/** A command whose output is too long for a preview. */
const long = "for i in $(seq 1 3000); do echo line $i; done; echo 'error: the build broke' ; exit 2"

type Kept = { readonly text: string; readonly filename: string | null; readonly cursor: string | null; readonly exit_code: number | null }

/** The success of a call, or the test fails with the tool's own words. */
const succeeded = <A>(r: { readonly isFailure: boolean; readonly result: A | Tools.ToolFailure }): A => {
  if (r.result instanceof Tools.ToolFailure) throw new Error(`the tool failed: ${r.result.message}`)
  return r.result
}

const failed = (r: { readonly result: unknown }): Tools.ToolFailure => {
  if (!(r.result instanceof Tools.ToolFailure)) throw new Error(`expected a ToolFailure, got ${JSON.stringify(r.result)}`)
  return r.result
}

describe("NodeTools", () => {
  it.scopedLive("previews point at the tools, and run_command's cursor pages through get_tool_output", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      const toolkit = yield* Effect.provide(Tools.FullToolkit, yield* Layer.build(NodeTools.layer({ directory, caller: alice })))
      const run = succeeded(yield* toolkit.handle("run_command", { command: long })) as Kept
      expect(run.exit_code).toBe(2)
      expect(run.text).toContain(`read_spill filename=${run.filename}`)
      expect(run.text).not.toContain("readSpill(")
      const page = succeeded(yield* toolkit.handle("get_tool_output", { cursor: run.cursor! }))
      expect(page.text).toContain("line ")
      // the key is the directory's file: a layer built again on the same directory takes the same cursor
      const again = yield* Effect.provide(Tools.FullToolkit, yield* Layer.build(NodeTools.layer({ directory, caller: alice })))
      expect(succeeded(yield* again.handle("get_tool_output", { cursor: run.cursor! })).text).toBe(page.text)
    }))

  it.scopedLive("a policy refuses saves and reads, an authorizer refuses reads, both in the tools' results", () =>
    Effect.gen(function*() {
      const directory = tempDir()
      const saving = yield* Effect.provide(Tools.FullToolkit, yield* Layer.build(NodeTools.layer({ directory, caller: alice })))
      const kept = succeeded(yield* saving.handle("run_command", { command: long })) as Kept
      const noReads = SpillPolicy.fromFunction((op) => op._tag === "spill/read" ? "reads are closed for review" : undefined)
      const policed = yield* Effect.provide(Tools.FullToolkit, yield* Layer.build(NodeTools.layer({ directory, caller: alice, policy: noReads })))
      const refused = failed(yield* policed.handle("read_spill", { filename: kept.filename! }))
      expect(refused.reason).toBe("SpillPolicyRefused")
      expect(refused.message).toContain("reads are closed for review")
      const noSaves = SpillPolicy.fromFunction((op) => op._tag === "spill/write" ? "no saving here" : undefined)
      const unsaved = yield* Effect.provide(Tools.FullToolkit, yield* Layer.build(NodeTools.layer({ directory, caller: alice, policy: noSaves })))
      const cut = succeeded(yield* unsaved.handle("run_command", { command: long })) as Kept
      expect(cut.filename).toBeNull()
      expect(cut.text).toContain("No copy was saved")
      const revoked = Access.fromFunction((_caller, _resource, action) => action !== "read")
      const denied = yield* Effect.provide(Tools.ReadToolkit, yield* Layer.build(NodeTools.layerRead({ directory, caller: alice, authorizer: revoked })))
      expect(failed(yield* denied.handle("read_spill", { filename: kept.filename! })).reason).toBe("AccessDenied")
    }))

  it.scopedLive("with a caller per call, one layer serves many conversations, each reaching only its own output", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeTools.layer({ directory: tempDir(), caller: "per-call" }))
      const toolkit = yield* Effect.provide(Tools.FullToolkit, context)
      const mine = succeeded(yield* toolkit.handle("run_command", { command: long }).pipe(NodeTools.actingFor(alice))) as Kept
      const read = yield* toolkit.handle("read_spill", { filename: mine.filename!, offset: 3001, limit: 5 }).pipe(NodeTools.actingFor(alice))
      expect(succeeded(read).text).toContain("error: the build broke")
      const theirs = yield* toolkit.handle("read_spill", { filename: mine.filename! }).pipe(NodeTools.actingFor(bob))
      expect(failed(theirs).reason).toBe("AccessDenied")
      expect(failed(yield* toolkit.handle("get_tool_output", { cursor: mine.cursor! }).pipe(NodeTools.actingFor(bob))).reason).toBe("AccessDenied")
      // a call without a caller is the host's mistake, and says how to fix it
      const exit = yield* Effect.exit(toolkit.handle("read_spill", { filename: mine.filename! }))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain("Access.CurrentCaller")
    }))

  it.scopedLive("one layer serves two MCP sessions, each acting for its own caller", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeTools.layer({ directory: tempDir(), caller: "per-call" }))
      const session = (caller: Access.Caller) =>
        Effect.gen(function*() {
          const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
          yield* Effect.forkScoped(Mcp.serve(Tools.FullToolkit, serverSide).pipe(NodeTools.actingFor(caller), Effect.provide(context)))
          const client = new Client({ name: caller.owner, version: "1.0.0" })
          yield* Effect.promise(() => client.connect(clientSide))
          yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
          return client
        })
      const a = yield* session(alice)
      const b = yield* session(bob)
      const run = yield* Effect.promise(() => a.callTool({ name: "run_command", arguments: { command: long } }))
      const filename = (run.structuredContent as { filename: string }).filename
      expect(filename).toMatch(/\.log$/)
      const own = yield* Effect.promise(() => a.callTool({ name: "grep_spill", arguments: { filename, pattern: "^error:" } }))
      expect(own.content).toEqual([{ type: "text", text: "3001: error: the build broke" }])
      const other = yield* Effect.promise(() => b.callTool({ name: "grep_spill", arguments: { filename, pattern: "^error:" } }))
      expect(other.isError).toBe(true)
    }))
})
