/**
 * The one layer behind the Promise face (`Spillway.open`): the store of one
 * directory as the tools wire it (`toolHost.store`), every capability over
 * it once (one jobs manager, so jobs started by a method and by the
 * `manage_process` tool are the same jobs), the handlers of every tool, and
 * one fixed caller.
 */
import { Access, Delivery, Process, Spill, SpillPolicy } from "@spillway/core"
import { Handlers } from "@spillway/tools"
import { Layer } from "effect"
import type * as NodeBodies from "../NodeBodies.js"
import * as NodeChild from "../NodeChild.js"
import * as NodeEvidence from "../NodeEvidence.js"
import * as host from "./toolHost.js"

/** What the layer is built from. */
export interface Settings extends NodeBodies.Options {
  readonly caller: Access.Caller
  readonly maxChars?: number | undefined
  readonly budgetChars?: number | undefined
  readonly policy?: host.PolicyLayer | undefined
  readonly authorizer?: host.AuthorizerLayer | undefined
}

/** A layer made with the given budget, or the tools' budget from configuration when none is given. */
const withBudget = <A, E, R>(budgetChars: number | undefined, make: (budgetChars: number) => Layer.Layer<A, E, R>) =>
  budgetChars !== undefined ? make(budgetChars) : host.withBudget(make)

/** Every capability and every tool handler over the store of one directory, for one caller. */
export const make = (settings: Settings) => {
  const store = host.store(settings)
  const spill: Spill.Options = {
    hint: Handlers.hint,
    grepHint: Handlers.grepHint,
    maxPageBytes: 60 * 1024,
    ...(settings.maxChars !== undefined ? { maxChars: settings.maxChars } : {})
  }
  const services = Layer.mergeAll(
    withBudget(settings.budgetChars, (limit) => Layer.succeed(Delivery.Budget, { limit })),
    Spill.layer(spill).pipe(Layer.provide(settings.policy ?? SpillPolicy.allowAll)),
    withBudget(settings.budgetChars, (budgetChars) => NodeEvidence.layerWithout({ budgetChars })),
    withBudget(settings.budgetChars, (budgetChars) => Process.layer({ budgetChars })).pipe(Layer.provide(NodeChild.layerForJobs())),
    // a program that runs many short commands: a shell started ahead takes the next one
    NodeChild.layer({ spareShell: true }),
    Access.layerCaller(settings.caller)
  ).pipe(Layer.provideMerge(store.bodies))
  return Handlers.fullLayer.pipe(Layer.provideMerge(services), Layer.orDie)
}
