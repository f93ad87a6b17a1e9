/**
 * The body store's read capability alone: a grant that looks up manifests
 * and opens bodies through `Access`, with no way to create, recover, remove
 * or sweep one. A program that needs more of the store does not compile
 * against it.
 *
 * @since 0.1.0
 */
import { Body } from "@spillway/core"
import { Context, Effect, Layer } from "effect"

/** What reading the store takes: manifests, the access check, and opening a body for a caller. */
export interface Service {
  /** The manifest of a body, to be checked with `authorize` before anything of it is shown. */
  readonly manifest: Body.Service["manifest"]
  /** Every manifest of a profile, each to be checked with `authorize` before it is listed. */
  readonly manifests: Body.Service["manifests"]
  /** The one access check: the owner (and channel), the host's authorizer, then expiry. */
  readonly authorize: Body.Service["authorize"]
  /** Opens a body for a caller, after the access check. */
  readonly open: Body.Service["open"]
}

/** The read-only grant over the body store. */
export class BodyRead extends Context.Tag("@spillway/web/BodyRead")<BodyRead, Service>() {}

/** Builds the grant as a new object holding only the read methods of the store. */
export const fromBodies = (bodies: Body.Service): Service => ({
  manifest: bodies.manifest,
  manifests: bodies.manifests,
  authorize: bodies.authorize,
  open: bodies.open
})

/** The grant over the store in context. */
export const layer: Layer.Layer<BodyRead, never, Body.Bodies> = Layer.effect(BodyRead, Effect.map(Body.Bodies, fromBodies))
