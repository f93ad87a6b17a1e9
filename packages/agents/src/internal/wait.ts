import type { Access } from "@spillway/core"
import { Envelope, Errors } from "@spillway/core"
import { Deferred, Duration, Effect, Either } from "effect"
import type { WaitRequest, WaitResult } from "../Agents.js"
import { BatchTooLarge } from "./errors.js"
import * as Roster from "./roster.js"
import { type Context, type Found, resolve, resourceOf, statusOf } from "./state.js"

/** The row of an agent whose body could not be kept; it stays one until the wait ends. */
const lostEntry = (id: string, f: Extract<Found, { readonly _tag: "Lost" }>): Roster.Entry => ({
  agent_id: id,
  name: f.lost.name,
  status: f.lost.status,
  iterations: f.lost.iterations,
  reason: Roster.reasons.lost,
  body_bytes: 0
})

/** The command that fetches an agent's whole body from its start. @internal */
export const fetchLine = (ctx: Context, id: string) => `get_agent_results agent_id=${id} cursor=${ctx.codec.encode(id, 0)}`

/** Refuses what no wait can carry out: no ids, an id no agent can have that is too long to echo, a timeout that is not a duration. */
const validate = (request: WaitRequest) =>
  Effect.gen(function*() {
    if (!Array.isArray(request.agentIds) || request.agentIds.length === 0) {
      return yield* new Errors.InvalidRequest({ argument: "agent_ids", reason: "must name at least one agent" })
    }
    for (const id of request.agentIds) {
      if (typeof id !== "string" || id.length > Roster.MAX_ID_CHARS) {
        return yield* new Errors.InvalidRequest({
          argument: "agent_ids",
          reason: `${typeof id === "string" ? Errors.quote(id) : "a value that is not a string"} is not an agent id; pass the agent_id spawn_agent returned`
        })
      }
    }
    if (typeof request.timeoutMillis !== "number" || !Number.isFinite(request.timeoutMillis) || request.timeoutMillis < 0) {
      return yield* new Errors.InvalidRequest({ argument: "timeout", reason: "must be a number of milliseconds, 0 or more" })
    }
    return [...new Set(request.agentIds)]
  })

/** Code points a reason takes once cut for a row. */
const reasonChars = (reason: string | null) => (reason === null ? 0 : Envelope.sizeOf(JSON.stringify(Roster.cut(reason, Roster.ROW_REASON_CHARS))) - 2)

/** The widest row an id can have when the wait ends, from what it names now. */
const widest = (ctx: Context, id: string, f: Found): Roster.Entry => {
  switch (f._tag) {
    case "Missing":
      return Roster.missing(id)
    case "Lost":
      return lostEntry(id, f)
    case "Running":
      return Roster.widest(id, {
        name: f.agent.name,
        iterations: Roster.MAX_ITERATIONS,
        reasonChars: Math.max(
          Roster.reasons.lifetime(f.agent.lifetimeSeconds).length,
          Roster.reasons.lost.length,
          Roster.reasons.expired.length,
          Roster.reasons.gone.length
        ),
        bodyBytes: Roster.MAX_BODY_BYTES,
        fetch: fetchLine(ctx, id)
      })
    case "Finished":
      return Roster.widest(id, {
        name: f.origin.name,
        iterations: f.origin.iterations,
        reasonChars: Math.max(reasonChars(f.origin.reason), Roster.reasons.expired.length, Roster.reasons.gone.length),
        bodyBytes: f.manifest.bytes,
        fetch: fetchLine(ctx, id)
      })
  }
}

/**
 * Reserves the roster before waiting: the widest rows the ids can have,
 * with the notice and an interruption reason, must fit one result, or the
 * batch is refused with the largest size that fits. A batch too large even
 * for rows of ids that name nothing is measured on as many ids as could fit,
 * so no more are looked up than that. Returns what each id names now.
 */
const reserve = (ctx: Context, ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const most = Roster.fits(ids.map(Roster.missing), ctx.budget)
    const measured = ids.length > most ? ids.slice(0, most + 1) : ids
    const found = yield* Effect.forEach(measured, (id) => resolve(ctx, id))
    const fits = Roster.fits(measured.map((id, i) => widest(ctx, id, found[i]!)), ctx.budget)
    if (fits < ids.length) return yield* new BatchTooLarge({ requested: ids.length, fits })
    return found
  })

/** Checks every known agent for `action`; another owner's agent refuses the whole wait, an expired result is left to its row. */
const checkAll = (ctx: Context, caller: Access.Caller, found: ReadonlyArray<Found>) =>
  Effect.forEach(found, (f) =>
    f._tag === "Missing"
      ? Effect.void
      : ctx.bodies.authorize(caller, resourceOf(f), "wait").pipe(Effect.catchTag("Expired", () => Effect.void)), { discard: true })

/** Waits for the running agents among `found`, the timeout or the interruption, whichever comes first. */
const race = (found: ReadonlyArray<Found>, request: WaitRequest) => {
  const pending = found.flatMap((f) => (f._tag === "Running" ? [f.agent] : []))
  const racers: Array<Effect.Effect<{ readonly _tag: "done" | "timeout" } | { readonly _tag: "interrupt"; readonly reason: string }>> = [
    Effect.as(Effect.forEach(pending, (a) => Deferred.await(a.done), { discard: true }), { _tag: "done" as const }),
    Effect.as(Effect.sleep(Duration.millis(request.timeoutMillis)), { _tag: "timeout" as const })
  ]
  if (request.interrupt !== undefined) racers.push(Effect.map(request.interrupt, (reason) => ({ _tag: "interrupt" as const, reason })))
  return Effect.raceAll(racers)
}

/** The entry of a row: what is known of the agent now, with the start of its body read through `Access`. */
const entryOf = (ctx: Context, caller: Access.Caller, id: string, found: Found) =>
  Effect.gen(function*() {
    if (found._tag === "Missing") return { entry: Roster.missing(id), durable: false } as const
    if (found._tag === "Running") {
      const a = found.agent
      return { entry: { agent_id: id, name: a.name, status: "running", iterations: a.iterations, body_bytes: 0 }, durable: false } as const
    }
    if (found._tag === "Lost") return { entry: lostEntry(id, found), durable: false } as const
    const m = found.manifest
    const head = yield* Effect.scoped(Effect.gen(function*() {
      const body = yield* ctx.bodies.open(caller, id, { action: "read" })
      return yield* body.read(0, Math.min(body.size, ctx.limits.previewBytes + 3))
    })).pipe(Effect.catchTags({ Expired: (e) => Effect.succeed(e), NotFound: (e) => Effect.succeed(e) }))
    if (!(head instanceof Uint8Array)) {
      const reason = head._tag === "Expired" ? Roster.reasons.expired : Roster.reasons.gone
      return { entry: { ...Roster.missing(id), reason }, durable: false } as const
    }
    return {
      entry: {
        agent_id: id,
        name: found.origin.name,
        status: statusOf(found),
        iterations: found.origin.iterations,
        ...(found.origin.reason !== null ? { reason: Roster.cut(found.origin.reason, Roster.ROW_REASON_CHARS) } : {}),
        head,
        body_bytes: m.bytes,
        fetch: fetchLine(ctx, id)
      },
      durable: true
    } as const
  })

/**
 * A wait: the ids are checked and counted once each, the roster is
 * reserved, access is checked, then the wait runs until the agents finish,
 * the timeout passes or a parent message interrupts it; access is checked
 * again after it, and every row gets the same preview ceiling, as large as
 * the budget allows up to `previewBytes`. An id no agent has is a
 * `not_found` row. @internal
 */
export const waitForAgents = (ctx: Context, caller: Access.Caller, request: WaitRequest) =>
  Effect.gen(function*() {
    const ids = yield* validate(request)
    const before = yield* reserve(ctx, ids)
    yield* checkAll(ctx, caller, before)
    const ended = yield* race(before, request)
    // an id that named nothing before the wait stays not_found: its row was reserved as one
    const after = yield* Effect.forEach(ids, (id, i) => (before[i]!._tag === "Missing" ? Effect.succeed(before[i]!) : resolve(ctx, id)))
    // access may have been taken away while waiting: no preview for a revoked reader
    yield* checkAll(ctx, caller, after)
    const rows = yield* Effect.forEach(after, (f, i) => entryOf(ctx, caller, ids[i]!, f))
    const ending: Roster.Ending = {
      timedOut: ended._tag === "timeout",
      interrupt: ended._tag === "interrupt" ? Roster.cut(ctx.masker.maskText(ended.reason)) : undefined,
      durable: ids.filter((_, i) => rows[i]!.durable)
    }
    const entries = rows.map((r) => r.entry)
    // the roster reserved above holds every row with no preview, so this always fits
    const fitted = Roster.fit(entries, ctx.limits.previewBytes, ending, ctx.budget)
    return Either.getOrThrowWith(fitted, (e) => new Error(`the roster reserved for this wait did not hold it: ${e.message}`)).value as WaitResult
  })
