/**
 * The spill profile wired to the real file system: `SpillWrite` and
 * `SpillRead` over the spill directory, with secret masking from the default
 * rules and the environment's secret values, and a policy that allows
 * everything unless a host provides its own.
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Secrets, Spill, SpillPolicy } from "@spillway/core"
import { Layer } from "effect"
import * as NodeSpillStore from "./NodeSpillStore.js"

/** Where the spill directory is and the profile's limits. */
export interface Options extends Spill.Options {
  readonly directory?: string | undefined
}

/** The store on the real file system. */
export const store = (options: Options = {}) =>
  NodeSpillStore.layer({ directory: options.directory }).pipe(Layer.provide(NodeFileSystem.layer))

/** Both capabilities, with the host's own `SpillPolicy` and `Secrets` left to provide. */
export const layerWithout = (options: Options = {}) => Spill.layer(options).pipe(Layer.provide(store(options)))

/** Both capabilities with an allow-all policy and masking of default rules plus the environment's secrets. */
export const layer = (options: Options = {}): Layer.Layer<Spill.SpillWrite | Spill.SpillRead> =>
  layerWithout(options).pipe(Layer.provide(SpillPolicy.allowAll), Layer.provide(Secrets.layerFromEnv))

/** Reading alone: a program that needs `SpillWrite` does not compile against this layer. */
export const layerRead = (options: Options = {}): Layer.Layer<Spill.SpillRead> =>
  Spill.layerRead(options).pipe(Layer.provide(store(options)), Layer.provide(SpillPolicy.allowAll))
