/**
 * A workflow composed in code: a parent spawns three agents that each study
 * the same saved build log, waits for them with a timeout, and pages each
 * agent's whole result. The agents read saved output through `SpillRead`;
 * the workflow runs under a layer that grants that read access and no
 * `SpillWrite`, so neither it nor its agents can save anything. The
 * agents' results are kept as bodies of the same store, for a day.
 */
import { AgentConfig, Agents } from "@spillway/agents"
import { Access, Cursor, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { NodeBodies } from "@spillway/node"
import { Effect, Layer } from "effect"

/** An agent that greps the saved log named by its task for a pattern and reports what it found. */
const grepAgent = (
  name: string,
  description: string,
  pattern: string
): Agents.AgentDefinition<Spill.SpillRead | Access.CurrentCaller> => ({
  name,
  description,
  run: (ctx) =>
    Effect.gen(function*() {
      yield* ctx.toolUsed("grep_spill")
      const found = yield* Spill.grepSpill(pattern, ctx.task, { ignoreCase: true }).pipe(Effect.mapError((e) => e.message))
      yield* ctx.iteration
      return found.matches.length === 0
        ? `no line matches ${pattern}`
        : [`${found.matches.length}${found.more ? "+" : ""} lines match ${pattern}:`, ...found.matches.map((m) => `  ${m.line}: ${m.text}`)].join("\n")
    })
})

/** The three agents of the workflow. */
export const definitions = [
  grepAgent("errors", "finds the lines that report errors", "error"),
  grepAgent("warnings", "finds the lines that warn", "warn"),
  grepAgent("timing", "finds how long steps took", "[0-9]+ ?ms")
]

const me = { owner: "workflow", channel: "example" }

/** Spawns the three agents on a saved log, waits up to `timeoutMillis`, and pages each result whole. */
export const workflow = (savedLog: string, timeoutMillis = 30_000) =>
  Effect.gen(function*() {
    const runtime = yield* Agents.AgentRuntime
    const ids: Array<string> = []
    for (const d of definitions) ids.push((yield* runtime.spawn(me, { agent: d.name, task: savedLog })).agent_id)
    const snapshot = yield* runtime.waitForAgents(me, { agentIds: ids, timeoutMillis })
    const results: Record<string, string> = {}
    for (const row of snapshot.agents) {
      if (row.status === "running" || row.status === "not_found") continue
      let text = ""
      let cursor: string | undefined
      do {
        const page = yield* runtime.getAgentResults(me, { agentId: row.agent_id, cursor })
        text += page.text
        cursor = page.cursor
      } while (cursor !== undefined)
      results[row.name] = text
    }
    return { snapshot, results }
  })

/**
 * The workflow's capabilities: the agent runtime and the spill directory's
 * read capability alone, over one body store in the directory (the saved
 * log and the agents' results are bodies of it), configuration in memory,
 * a random cursor key.
 */
export const layer = (directory: string) =>
  Agents.layer(definitions).pipe(
    Layer.provide(Layer.mergeAll(
      Spill.layerRead().pipe(Layer.provide(SpillPolicy.allowAll)),
      // the agents read saved output as the host's caller, who saved the log
      Access.layerCaller(NodeBodies.callerFromEnv("cli")),
      AgentConfig.layer().pipe(Layer.provide(AgentConfig.persistenceMemory())),
      Secrets.layerFromEnv,
      Cursor.layerRandomKey
    )),
    Layer.provide(NodeBodies.layer({ directory })),
    Layer.orDie
  )
