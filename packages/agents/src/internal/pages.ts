import type { Access, Body } from "@spillway/core"
import { Delivery, Errors, Utf8 } from "@spillway/core"
import { Effect } from "effect"
import type { ResultFacts, ResultPage, ResultsRequest } from "../Agents.js"
import { AgentRunning } from "./errors.js"
import * as Roster from "./roster.js"
import { type AgentOrigin, type Context, resolve, resourceOf } from "./state.js"

/** The smallest page that may be asked for: room for any one code point. @internal */
export const MIN_PAGE_BYTES = 4

const limitOf = (ctx: Context, limit: number | undefined) =>
  limit === undefined
    ? Effect.succeed(ctx.limits.defaultPageBytes)
    : Number.isSafeInteger(limit) && limit >= MIN_PAGE_BYTES && limit <= ctx.limits.maxPageBytes
    ? Effect.succeed(limit)
    : Effect.fail(new Errors.InvalidRequest({
      argument: "limit",
      reason: `must be a whole number from ${MIN_PAGE_BYTES} to ${ctx.limits.maxPageBytes}; got ${Errors.quote(String(limit))}`
    }))

/** Where a page starts: the cursor's offset, once it is known to be this agent's; the start without one. */
const offsetOf = (ctx: Context, id: string, cursor: string | undefined) =>
  Effect.gen(function*() {
    if (cursor === undefined || cursor === "") return 0
    const position = yield* ctx.codec.decode(cursor)
    if (position.evidence !== id) {
      return yield* new Errors.InvalidRequest({
        argument: "cursor",
        reason: `this cursor belongs to agent ${position.evidence}, not ${Errors.quote(id)}; pass the cursor of this agent's last page`
      })
    }
    return position.offset
  })

/** Up to `length` bytes of a body from `position`, fewer only at its end. */
const readRange = (body: Body.Reader, position: number, length: number) =>
  Effect.gen(function*() {
    const out = new Uint8Array(Math.max(0, Math.min(length, body.size - position)))
    let got = 0
    while (got < out.length) {
      const chunk = yield* body.read(position + got, out.length - got)
      if (chunk.length === 0) break
      out.set(chunk, got)
      got += chunk.length
    }
    return out.subarray(0, got)
  })

/** The marker after a page that is not the whole body: what it shows, and the call that reads on. */
const marker = (page: ResultPage): string | undefined => {
  if (page.offset === 0 && !page.truncated) return undefined
  const shown = `Showing bytes ${page.offset}-${page.next_offset} of ${page.original_bytes}`
  if (page.cursor === undefined) return `[${shown}: the end of the ${page.kind}]`
  const inLine = Delivery.endsMidLine(page.text) ? "; the page ends inside a line, which the next page goes on with" : ""
  return `[${shown}${inLine}. Next: ${Delivery.call("get_agent_results", [["agent_id", page.agent_id], ["cursor", page.cursor]])}]`
}

/** A page as delivered: its text and marker for a model, the rest as facts. @internal */
export const delivered = (page: ResultPage): Delivery.Delivered<ResultFacts> => {
  const { text, ...fields } = page
  return { text: Delivery.withMarker(text, marker(page)), facts: { ...fields, content_chars: Delivery.contentChars(text) } }
}

/** Tool metadata within its own allowance, so it never crowds out the body; how many tools it shows. */
const toolsShown = (origin: AgentOrigin, allowance: number) => {
  let shown = origin.tools.length
  while (shown > 0 && JSON.stringify(origin.tools.slice(0, shown)).length > allowance) shown--
  return shown
}

/**
 * A page of an agent's kept body: the body is opened through `Access`
 * (owner, channel, the host's authorizer, expiry) on every request, the
 * cursor must be this agent's, and the page is the most whole code points
 * up to `limit` bytes whose whole result, as delivered, fits the budget; a page
 * that is not the last always advances. @internal
 */
export const getAgentResults = (ctx: Context, caller: Access.Caller, request: ResultsRequest) =>
  Effect.scoped(Effect.gen(function*() {
    const id = request.agentId
    if (typeof id !== "string" || id.length > Roster.MAX_ID_CHARS) {
      return yield* new Errors.InvalidRequest({ argument: "agent_id", reason: "is not an agent id; pass the agent_id spawn_agent returned" })
    }
    const found = yield* resolve(ctx, id)
    if (found._tag === "Missing") return yield* new Errors.NotFound({ resource: "agent", id })
    if (found._tag !== "Finished") {
      yield* ctx.bodies.authorize(caller, resourceOf(found), "read")
      if (found._tag === "Running") return yield* new AgentRunning({ agentId: id })
      return yield* new Errors.StoreFailed({ operation: `keeping the ${found.lost.status === "completed" ? "result" : "error"} body of agent ${id}`, reason: found.lost.error })
    }
    const body = yield* ctx.bodies.open(caller, id, { action: "read" })
    const limit = yield* limitOf(ctx, request.limit)
    const offset = yield* offsetOf(ctx, id, request.cursor)
    const m = body.manifest
    const origin = found.origin
    // three bytes before the offset too, to tell whether it starts a character
    const from = Math.max(0, Math.min(offset, body.size) - 3)
    const read = yield* readRange(body, from, offset - from + limit + 3)
    const rest = read.subarray(Math.min(read.length, offset - from))
    if (offset > body.size || !Utf8.isByteBoundary(read, offset - from)) {
      return yield* new Errors.InvalidRequest({
        argument: "cursor",
        reason: `offset ${offset} is not a character boundary of the ${body.size}-byte body; pass the cursor of this agent's last page`
      })
    }
    const shownTools = toolsShown(origin, ctx.limits.toolsAllowance)
    const expiresAt = m.expiresAt === null ? "never" : new Date(m.expiresAt).toISOString()
    const page = (n: number): ResultPage => {
      const cut = Utf8.byteBoundary(rest, Math.min(n, rest.length))
      const next = offset + cut
      const truncated = next < body.size
      return {
        agent_id: id,
        status: origin.status,
        kind: origin.kind,
        text: Utf8.decodeLossy(rest.subarray(0, cut)),
        offset,
        next_offset: next,
        original_bytes: body.size,
        result_bytes: origin.kind === "result" ? body.size : 0,
        error_bytes: origin.kind === "error" ? body.size : 0,
        source_original_bytes: m.sourceBytes,
        truncated,
        ...(truncated ? { cursor: ctx.codec.encode(id, next) } : {}),
        expires_at: expiresAt,
        ...(origin.tools.length > 0 ? { tools: origin.tools.slice(0, shownTools), tools_omitted: origin.tools.length - shownTools } : {})
      }
    }
    const max = Math.min(limit, rest.length)
    let min = max === 0 ? 0 : 1
    while (min < max && !Utf8.isByteBoundary(rest, min)) min++
    return (yield* Delivery.fitCount(min, max, page, ctx.budget, delivered)).value
  }))
