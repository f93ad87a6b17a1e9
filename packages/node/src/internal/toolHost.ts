/**
 * The wiring every tool layer on Node shares (`NodeTools`, and through it
 * `NodeMcp`): one body store per directory, with the directory's cursor key
 * file, pattern workers, masking and the host's authorizer; the spill
 * profile with hints in the tools' own names and the host's policy; jobs
 * over the fast child runner; scratch captures in the same store; one
 * delivery budget for every tool, from configuration
 * (`tools.tool_output_max_chars`, 12,000 by default).
 */
import { Access, Delivery, Process, Spill, SpillPolicy } from "@spillway/core"
import { Handlers } from "@spillway/tools"
import { Effect, Function, Layer } from "effect"
import * as NodeBodies from "../NodeBodies.js"
import * as NodeChild from "../NodeChild.js"
import * as NodeEvidence from "../NodeEvidence.js"
import * as NodePattern from "../NodePattern.js"
import * as NodeSecrets from "../NodeSecrets.js"

/** A policy a host gives the tools. */
export type PolicyLayer = Layer.Layer<SpillPolicy.SpillPolicy>

/** An authorizer a host gives the tools. */
export type AuthorizerLayer = Layer.Layer<Access.Authorizer>

/** What the tool layers are built from. */
export interface Options extends NodeBodies.Options {
  readonly caller?: Access.Caller | "per-call" | undefined
  readonly policy?: PolicyLayer | undefined
  readonly authorizer?: AuthorizerLayer | undefined
}

/** How long the tools keep what they save: a day, as the evidence profile's source design says, whatever the profile. */
const DAY = 24 * 60 * 60 * 1000

/** The caller when a host names none. */
export const defaultCaller = (channel: string): Access.Caller => NodeBodies.callerFromEnv(channel)

/** One body store in one directory, shared by every tool (and the agent tools) built over it. */
export const store = (options: Options) => {
  const directory = NodeBodies.directoryOf(options)
  const bodies = NodeBodies.layerWithout({
    directory,
    manifests: options.manifests,
    pools: { spill: { ttlMillis: DAY }, ...options.pools }
  }).pipe(
    Layer.provideMerge(Layer.mergeAll(NodeSecrets.layerWorkerFromEnv(options.maskWorker), options.authorizer ?? Access.allowOwners)),
    // the one key every cursor is signed and checked with: run_command's, get_tool_output's, a job's
    Layer.provideMerge(NodeEvidence.layerKeyFile(NodeEvidence.keyFileOf({ directory }))),
    // grep_spill and wait patterns run on worker threads, each ended at its deadline
    Layer.provideMerge(NodePattern.layer()),
    Layer.orDie
  )
  return { directory, bodies }
}

/** The body store of one directory, as `store` makes it. */
export type Store = ReturnType<typeof store>

/** A layer made with the tools' one delivery budget, read from configuration when it is built. */
export const withBudget = <A, E, R>(make: (budgetChars: number) => Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Effect.orDie(NodeEvidence.budgetConfig), make))

/** The budget every handler fits its results to. */
const budget = withBudget((limit) => Layer.succeed(Delivery.Budget, { limit }))

/** Jobs over the fast child runner, their views fitted to the same budget. */
const processes = () => withBudget((budgetChars) => Process.layer({ budgetChars })).pipe(Layer.provide(NodeChild.layerForJobs()))

/** Previews and hints name the tools; read_spill reads no more than its budget can show, and longer selections go on with next_offset. */
const spillOptions: Spill.Options = { hint: Handlers.hint, grepHint: Handlers.grepHint, maxPageBytes: 60 * 1024 }

const policyOf = (options: Options): PolicyLayer => options.policy ?? SpillPolicy.allowAll

/** The read handlers, acting for the caller the options name. */
const readHandlers = (caller: Access.Caller | "per-call") =>
  caller === "per-call" ? Handlers.readLayerPerCall : Handlers.readLayer.pipe(Layer.provide(Handlers.layerCaller(caller)))

/** Every handler, acting for the caller the options name. */
const fullHandlers = (caller: Access.Caller | "per-call") =>
  caller === "per-call" ? Handlers.fullLayerPerCall : Handlers.fullLayer.pipe(Layer.provide(Handlers.layerCaller(caller)))

/** The read handlers over read-only grants of one store. */
export const read = (s: Store, options: Options) =>
  readHandlers(options.caller ?? defaultCaller("tools")).pipe(
    Layer.provide(Layer.mergeAll(
      budget,
      Spill.layerRead(spillOptions).pipe(Layer.provide(policyOf(options))),
      NodeEvidence.layerWithout(),
      Process.readOnly(processes())
    )),
    Layer.provideMerge(s.bodies)
  )

/** Every handler over one store. */
export const full = (s: Store, options: Options) =>
  fullHandlers(options.caller ?? defaultCaller("tools")).pipe(
    Layer.provide(Layer.mergeAll(
      budget,
      Spill.layer(spillOptions).pipe(Layer.provide(policyOf(options))),
      NodeEvidence.layerWithout(),
      processes(),
      // a server runs many short commands: a shell started ahead takes the next one, the first one too
      NodeChild.layer({ spareShell: "ready" })
    )),
    Layer.provideMerge(s.bodies)
  )

/** Provides the caller an effect acts for. */
export const actingFor = Function.dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, caller: Access.Caller): Effect.Effect<A, E, Exclude<R, Access.CurrentCaller>> =>
    Effect.provideService(self, Access.CurrentCaller, caller)
)
