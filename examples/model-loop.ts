/**
 * A host's model loop over @effect/ai, with Spillway's tools: the host asks
 * the model, runs the tool calls it makes (`LanguageModel.generateText` with
 * `Tools.FullToolkit`, handled by `NodeTools.layer`), feeds the results back
 * as the next turn's prompt, and stops when the model answers in words.
 *
 * The model here is scripted (`scriptedModel`): a `LanguageModel` layer that
 * replays a fixed list of steps and calls no network. Like a real model it
 * keeps no state of its own: each step reads the conversation it is given,
 * the last tool result in particular, to decide its next call. `debugBuild`
 * is such a script: run a failing build whose output is too long to show,
 * read the preview, search the saved output for the error, read the lines
 * around it, page the kept output by cursor, start the tests as a background
 * job and wait for their summary line.
 *
 * Run it with `node examples/dist/model-loop.js` after `pnpm build`.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { NodeTools } from "@spillway/node"
import { Tools } from "@spillway/tools"
import { Effect, Layer, Stream } from "effect"

/** A tool result as the model reads it from the conversation: the encoded result, what a provider would send. */
export interface Seen {
  readonly name: string
  readonly isFailure: boolean
  readonly result: any
}

/** What a step does: call a tool, or answer and end the conversation. */
export type Move =
  | { readonly tool: string; readonly params: Record<string, unknown> }
  | { readonly answer: string }

/** One step of a script: the next move, given every tool result so far (the last one last). */
export type Step = (seen: ReadonlyArray<Seen>) => Move

/** The tool results in a conversation, in order. */
const toolResults = (prompt: Prompt.Prompt): ReadonlyArray<Seen> =>
  prompt.content.flatMap((message) =>
    message.role === "tool"
      ? message.content.map((part) => ({ name: part.name, isFailure: part.isFailure, result: part.result }))
      : []
  )

const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

/**
 * A language model that replays `script`: at each request it counts the
 * tool results in the conversation, and takes the step of that number.
 */
export const scriptedModel = (script: ReadonlyArray<Step>): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync((): Array<Response.PartEncoded> => {
          const seen = toolResults(options.prompt)
          const step = script[seen.length]
          const move = step === undefined ? { answer: "the script has no more steps" } : step(seen)
          if ("answer" in move) {
            return [{ type: "text", text: move.answer }, { type: "finish", reason: "stop", usage }]
          }
          return [
            { type: "tool-call", id: `call-${seen.length + 1}`, name: move.tool, params: move.params },
            { type: "finish", reason: "tool-calls", usage }
          ]
        }),
      streamText: () => Stream.dieMessage("the scripted model does not stream")
    })
  )

/** One tool call of a conversation and its result, as the host ran it. */
export interface Turn {
  readonly tool: string
  readonly params: unknown
  readonly isFailure: boolean
  readonly result: any
}

/**
 * The host's loop: asks the model, lets @effect/ai run the tool calls it
 * makes, adds the calls and their results to the conversation, and asks
 * again until the model answers without calling a tool (or `maxTurns` pass).
 */
export const converse = (task: string, maxTurns = 20) =>
  Effect.gen(function*() {
    let prompt = Prompt.make(task)
    const turns: Array<Turn> = []
    for (let turn = 0; turn < maxTurns; turn++) {
      const response = yield* LanguageModel.generateText({ prompt, toolkit: Tools.FullToolkit })
      // the model's calls and their results become the next turn's conversation
      prompt = Prompt.merge(prompt, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length === 0) return { answer: response.text, turns }
      for (const call of response.toolCalls) {
        const result = response.toolResults.find((r) => r.id === call.id)
        turns.push({ tool: call.name, params: call.params, isFailure: result?.isFailure ?? true, result: result?.encodedResult })
      }
    }
    return yield* Effect.dieMessage(`the model did not answer within ${maxTurns} turns`)
  })

/** A build that fails after printing far more than a preview holds, with its error in the middle. */
export const failingBuild =
  "for i in $(seq 1 1500); do echo \"compiling unit $i\"; done; echo 'src/ledger.c:42: error: ledger_total undeclared'; for i in $(seq 1501 3000); do echo \"compiling unit $i\"; done; echo 'make: *** [all] Error 1'; exit 2"

/** Tests that take a moment and end with a summary line. */
export const slowTests = "for i in 1 2 3 4 5; do echo \"test $i ok\"; sleep 0.1; done; echo 'Tests: 5 passed'"

const last = (seen: ReadonlyArray<Seen>) => seen[seen.length - 1]!

/** A line number from `grep_spill`'s first match. */
const firstMatch = (seen: ReadonlyArray<Seen>): number => last(seen).result.matches[0].line

/** The steps of a model that finds why a build failed, then runs the tests in the background. */
export const debugBuild: ReadonlyArray<Step> = [
  () => ({ tool: "run_command", params: { command: failingBuild } }),
  // the preview names the saved file; search it for the error
  (seen) => ({ tool: "grep_spill", params: { filename: last(seen).result.filename, pattern: "error:" } }),
  // read the lines around the first match
  (seen) => ({ tool: "read_spill", params: { filename: seen[0]!.result.filename, offset: firstMatch(seen) - 2, limit: 5 } }),
  // the same output, by cursor, from where the preview's head ended
  (seen) => ({ tool: "get_tool_output", params: { cursor: seen[0]!.result.cursor } }),
  () => ({ tool: "manage_process", params: { action: "start", command: slowTests } }),
  (seen) => ({ tool: "manage_process", params: { action: "wait", pid: last(seen).result.pid, pattern: "^Tests:", from_line: 1, timeout_ms: 30_000 } }),
  (seen) => ({ answer: `The build fails at ${seen[2]!.result.text.split("\n").find((l: string) => l.includes("error:"))}; the tests pass.` })
]

if (import.meta.url === `file://${process.argv[1]}`) {
  // one layer for every conversation: each runs for its own caller
  const tools = NodeTools.layer({ directory: ".spillway/model-loop", caller: "per-call" })
  const program = converse("Why does the build fail?").pipe(
    NodeTools.actingFor({ owner: "example", channel: "conversation-1" }),
    Effect.provide(Layer.merge(scriptedModel(debugBuild), tools))
  )
  Effect.runPromise(Effect.scoped(program)).then(({ answer, turns }) => {
    for (const turn of turns) console.log(`${turn.tool} ${JSON.stringify(turn.params).slice(0, 120)}\n${String(turn.result.text ?? turn.result.detail).slice(0, 400)}\n`)
    console.log(answer)
  })
}
