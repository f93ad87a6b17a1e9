/**
 * The spill profile wired to the real file system: `SpillWrite` and
 * `SpillRead` over the body store in the spill directory, masking the
 * default rules plus the environment's secrets, a policy that allows
 * everything unless a host provides its own, and the caller from the
 * environment (`SPILLWAY_OWNER` on `SPILLWAY_CHANNEL`) unless a host provides
 * one per request.
 *
 * @since 0.1.0
 */
import { Access, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { Layer } from "effect"
import * as NodeBodies from "./NodeBodies.js"

/** Where the spill directory is and the profile's limits. */
export interface Options extends Spill.Options, NodeBodies.Options {}

const caller = Layer.sync(Access.CurrentCaller, () => NodeBodies.callerFromEnv("cli"))

/** Both capabilities and the caller from the environment, with the policy, the masker and the authorizer left to the host. */
export const layerWithout = (
  options: Options = {}
): Layer.Layer<Spill.SpillWrite | Spill.SpillRead | Access.CurrentCaller, never, SpillPolicy.SpillPolicy | Secrets.Secrets | Access.Authorizer> =>
  Layer.mergeAll(Spill.layer(options), caller).pipe(Layer.provide(NodeBodies.layerWithout(options)), Layer.orDie)

/** Both capabilities with an allow-all policy, the environment's secrets masked and the caller from the environment. */
export const layer = (options: Options = {}): Layer.Layer<Spill.SpillWrite | Spill.SpillRead | Access.CurrentCaller> =>
  Layer.mergeAll(Spill.layer(options), caller).pipe(
    Layer.provide(NodeBodies.layer(options)),
    Layer.provide(SpillPolicy.allowAll),
    Layer.orDie
  )

/** Reading alone: a program that needs `SpillWrite` does not compile against this layer. */
export const layerRead = (options: Options = {}): Layer.Layer<Spill.SpillRead | Access.CurrentCaller> =>
  Layer.mergeAll(Spill.layerRead(options), caller).pipe(
    Layer.provide(NodeBodies.layer(options)),
    Layer.provide(SpillPolicy.allowAll),
    Layer.orDie
  )
