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
import { AccessDenied, Expired, type Resource as ResourceKind } from "./Errors.js"

/** Who acts: the principal, and the channel (conversation, session) it acts from. */
export interface Caller {
  readonly owner: string
  readonly channel: string
  /**
   * True for a caller that acts for the owner as a whole (a person at their
   * own terminal): it may read and list the owner's resources of every
   * channel; acting on one bound to a channel (a job's stdin, a signal)
   * still needs that channel.
   */
  readonly readsEveryChannel?: boolean | undefined
}

/**
 * The caller a request is made for, as a service: views that take no
 * caller argument (`readSpill`, `keepOutput`) act for the one in context,
 * so a host that serves many conversations provides one per request.
 */
export class CurrentCaller extends Context.Tag("@spillway/core/CurrentCaller")<CurrentCaller, Caller>() {}

/** A fixed caller, for a program that acts for one principal. */
export const layerCaller = (caller: Caller): Layer.Layer<CurrentCaller> => Layer.succeed(CurrentCaller, caller)

/** What a caller may ask to do. */
export type Action = "read" | "list" | "poll" | "wait" | "stdin" | "signal" | "cancel" | "delete"

/** What the check and the authorizer see of a resource. */
export interface Resource {
  readonly kind: ResourceKind
  /** Its name, pid or id, as the caller would name it. */
  readonly id: string
  readonly owner: string
  readonly channel: string
  /** True when only the channel it came from may reach it (jobs, agents); otherwise any channel of the owner. */
  readonly channelBound: boolean
  /** The tool that made it, when there is one. */
  readonly tool?: string | undefined
  /** Epoch milliseconds after which it is gone, or null when it does not expire. */
  readonly expiresAt?: number | null | undefined
}

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

/** True when the caller owns the resource (and, for one bound to its channel, acts from that channel). */
export const owns = (caller: Caller, resource: Resource): boolean =>
  caller.owner === resource.owner && (!resource.channelBound || caller.channel === resource.channel)

/** True for what a caller that reads every channel of its owner may do outside its own. */
const isReading = (action: Action): boolean => action === "read" || action === "list"

/** True when the caller may take `action` on the resource by ownership: `owns`, or an owner's read of any channel for a caller that reads every channel. */
export const mayAct = (caller: Caller, resource: Resource, action: Action): boolean =>
  owns(caller, resource) || (caller.readsEveryChannel === true && caller.owner === resource.owner && isReading(action))

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
    const expiresAt = resource.expiresAt
    if (expiresAt !== undefined && expiresAt !== null && (yield* Clock.currentTimeMillis) >= expiresAt) {
      return yield* new Expired({ resource: resource.kind, id: resource.id, expiresAt: iso(expiresAt) })
    }
  })
