import type { Access, Cursor, Envelope, Errors, Manifests, Secrets } from "@spillway/core"
import { Body } from "@spillway/core"
import { type Deferred, Effect } from "effect"
import type { Status } from "../Agents.js"

/** The runtime's limits, every default filled in. @internal */
export interface Limits {
  readonly budgetChars: number
  readonly previewBytes: number
  readonly defaultPageBytes: number
  readonly maxPageBytes: number
  readonly toolsAllowance: number
  readonly sweepEveryMillis: number
}

/** An agent this runtime runs, until its body is kept. @internal */
export interface Live {
  readonly id: string
  readonly name: string
  readonly owner: string
  readonly channel: string
  readonly lifetimeSeconds: number
  iterations: number
  readonly tools: Map<string, number>
  /** True once its outcome is being kept: a second outcome (an interruption after the end) is ignored. */
  settled: boolean
  /** Completed once the agent has ended and its body is kept (or could not be). */
  readonly done: Deferred.Deferred<void>
}

/** A finished agent whose body could not be kept (a quota, a failed write): what is known of it, for as long as the runtime lasts. @internal */
export interface Lost {
  readonly id: string
  readonly name: string
  readonly owner: string
  readonly channel: string
  readonly status: Exclude<Status, "running">
  readonly iterations: number
  /** Why its body is not kept (the store's words, masked), for a read of it. */
  readonly error: string
}

/** What the runtime's parts share. @internal */
export interface Context {
  readonly limits: Limits
  readonly bodies: Body.Service
  readonly masker: Secrets.Masker
  readonly codec: Cursor.Codec
  readonly budget: Envelope.Budget
  readonly live: Map<string, Live>
  readonly lost: Map<string, Lost>
}

/** A finished agent's facts, as its body's manifest records them. @internal */
export type AgentOrigin = Extract<Manifests.Origin, { readonly _tag: "Agent" }>

/** What an id names. @internal */
export type Found =
  | { readonly _tag: "Running"; readonly agent: Live }
  | { readonly _tag: "Finished"; readonly manifest: Manifests.Manifest; readonly origin: AgentOrigin }
  | { readonly _tag: "Lost"; readonly lost: Lost }
  | { readonly _tag: "Missing" }

const idShape = /^agent-[A-Za-z0-9_-]{1,64}$/

/** True when an id has the shape of one this runtime gives; no other id can name an agent. @internal */
export const isAgentId = (id: string): boolean => idShape.test(id)

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** A fresh agent id: `agent-` and 72 random bits from the platform's cryptographic source, in base64url. @internal */
export const freshId = (): string => {
  const bytes = new Uint8Array(9)
  globalThis.crypto.getRandomValues(bytes)
  let out = "agent-"
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += alphabet[(n >> 18) & 63]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!
  }
  return out
}

const missing: Found = { _tag: "Missing" }

/**
 * What an id names: an agent this runtime runs, one whose result could not
 * be kept, a kept result (found by its body's manifest, so results of
 * earlier runtimes are found too), or nothing. No access check: callers
 * check before they show anything. @internal
 */
export const resolve = (ctx: Context, id: string): Effect.Effect<Found, Errors.StoreFailed> =>
  Effect.suspend(() => {
    if (!isAgentId(id)) return Effect.succeed(missing)
    const agent = ctx.live.get(id)
    if (agent !== undefined) return Effect.succeed<Found>({ _tag: "Running", agent })
    const lost = ctx.lost.get(id)
    if (lost !== undefined) return Effect.succeed<Found>({ _tag: "Lost", lost })
    return Effect.map(ctx.bodies.manifest(id), (m): Found =>
      m !== undefined && m.profile === "agent" && m.origin._tag === "Agent" ? { _tag: "Finished", manifest: m, origin: m.origin } : missing)
  })

/** An agent as `Access` sees it. @internal */
export const resourceOf = (found: Exclude<Found, { readonly _tag: "Missing" }>): Access.Resource => {
  if (found._tag === "Finished") return Body.resourceOf(found.manifest)
  const a = found._tag === "Running" ? found.agent : found.lost
  return { kind: "agent", id: a.id, owner: a.owner, channel: a.channel, channelBound: true, tool: "spawn_agent", expiresAt: null }
}

/** Where an agent named by `found` is. @internal */
export const statusOf = (found: Exclude<Found, { readonly _tag: "Missing" }>): Status =>
  found._tag === "Running" ? "running" : found._tag === "Lost" ? found.lost.status : found.origin.status
