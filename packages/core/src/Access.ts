/**
 * Who may do what to kept output: one `Caller`, one `Authorizer` asked
 * `allow(caller, resource, action)`, and one `check` every view runs before
 * it reads or acts, by name, by pid or by cursor alike. The check is owner
 * first (and channel, for resources that belong to a conversation: jobs and
 * agents), then the host's authorizer (where a host revokes access), then
 * expiry. Holding a name, a pid or a cursor is never permission.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer } from "effect"
import { AccessDenied, Expired } from "./Errors.js"
import * as Permission from "./Permission.js"

/** Who acts: the principal, and the channel (conversation, session) it acts from (`Permission.Caller`). */
export type Caller = Permission.Caller

/**
 * The caller a request is made for, as a service: views that take no
 * caller argument (`readSpill`, `keepOutput`) act for the one in context,
 * so a host that serves many conversations provides one per request.
 */
export class CurrentCaller extends Context.Tag("@spillway/core/CurrentCaller")<CurrentCaller, Caller>() {}

/** A fixed caller, for a program that acts for one principal. */
export const layerCaller = (caller: Caller): Layer.Layer<CurrentCaller> => Layer.succeed(CurrentCaller, caller)

/** What a caller may ask to do (`Permission.Action`). */
export type Action = Permission.Action

/** What the check and the authorizer see of a resource (`Permission.Resource`). */
export type Resource = Permission.Resource

/** The host's say in every check, after the owner (and channel) match. */
export interface Service {
  readonly allow: (caller: Caller, resource: Resource, action: Action) => Effect.Effect<boolean>
}

/** The authorizer every view asks. */
export class Authorizer extends Context.Tag("@spillway/core/Authorizer")<Authorizer, Service>() {}

/** An authorizer that adds nothing to the owner and channel match. */
export const allowOwners: Layer.Layer<Authorizer> = Layer.succeed(Authorizer, { allow: () => Effect.succeed(true) })

/** An authorizer from a decision function. */
export const fromFunction = (
  allow: (caller: Caller, resource: Resource, action: Action) => boolean
): Layer.Layer<Authorizer> => Layer.succeed(Authorizer, { allow: (c, r, a) => Effect.sync(() => allow(c, r, a)) })

/** True when the caller owns the resource (and, for one bound to its channel, acts from that channel): `Permission.owns`. */
export const owns = Permission.owns

/** True when the caller may take `action` on the resource by ownership: `Permission.mayAct`. */
export const mayAct = Permission.mayAct

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The one check: the owner (and channel, see `mayAct`), then the authorizer, then expiry.
 * Another owner's resource is refused before its expiry is looked at, so a
 * refusal tells nothing about a resource that is not the caller's.
 */
export const check = (
  authorizer: Service,
  caller: Caller,
  resource: Resource,
  action: Action
): Effect.Effect<void, AccessDenied | Expired> =>
  Effect.gen(function*() {
    if (!mayAct(caller, resource, action) || !(yield* authorizer.allow(caller, resource, action))) {
      return yield* new AccessDenied({ resource: resource.kind, id: resource.id, action })
    }
    if (Permission.expired(resource, yield* Clock.currentTimeMillis)) {
      return yield* new Expired({ resource: resource.kind, id: resource.id, expiresAt: iso(resource.expiresAt!) })
    }
  })
