/**
 * A hook that sees every spill operation with its payload and may refuse it.
 * A refusal is a typed error, never a silent success.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"

/** One spill operation, as a policy sees it. */
export type SpillOperation =
  | { readonly _tag: "spill/write"; readonly filename: string }
  | { readonly _tag: "spill/read"; readonly filename: string }

/** A policy refused an operation. */
export class SpillPolicyRefused extends Schema.TaggedError<SpillPolicyRefused>()("SpillPolicyRefused", {
  operation: Schema.Literal("spill/write", "spill/read"),
  filename: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.operation} of ${this.filename} was refused by policy: ${this.reason}`
  }
}

/** Decides whether an operation may go ahead. */
export interface Service {
  readonly check: (operation: SpillOperation) => Effect.Effect<void, SpillPolicyRefused>
}

/** The policy hook. */
export class SpillPolicy extends Context.Tag("@spillway/core/SpillPolicy")<SpillPolicy, Service>() {}

/** A policy that allows every operation. */
export const allowAll: Layer.Layer<SpillPolicy> = Layer.succeed(SpillPolicy, { check: () => Effect.void })

/** A policy from a decision function: return a reason to refuse, or undefined to allow. */
export const fromFunction = (
  decide: (operation: SpillOperation) => string | undefined
): Layer.Layer<SpillPolicy> =>
  Layer.succeed(SpillPolicy, {
    check: (operation) => {
      const reason = decide(operation)
      return reason === undefined
        ? Effect.void
        : Effect.fail(new SpillPolicyRefused({ operation: operation._tag, filename: operation.filename, reason }))
    }
  })
