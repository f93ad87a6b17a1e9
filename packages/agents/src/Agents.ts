/**
 * Agents as supervised fibers: a catalog of definitions, spawn admission
 * against the live configuration, `waitForAgents` snapshots with fair
 * previews inside the delivery budget, and `getAgentResults` pages of each
 * agent's immutable, scrubbed result or error body behind byte cursors.
 * Agents belong to the runtime's scope, not to the caller: a caller that
 * stops waiting leaves them running, and their results outlive the live
 * registry.
 *
 * @since 0.1.0
 */
import type { Child } from "@spillway/core"
import { Cursor, Envelope, Errors, Secrets, Utf8 } from "@spillway/core"
import { Cause, Clock, Context, Deferred, Duration, Effect, Either, Exit, FiberId, Layer, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { AgentConfig } from "./AgentConfig.js"
import { AgentResults, type StoredResult } from "./AgentResults.js"
import * as Command from "./internal/command.js"

/** The cursor tool of result pages; no other tool takes them. */
export const TOOL = "get_agent_results"

/** What an agent's run function gets. */
export interface AgentContext {
  readonly task: string
  /** Reports that an iteration has finished. */
  readonly iteration: Effect.Effect<void>
  /** Reports a tool call, for the result's tool metadata. */
  readonly toolUsed: (name: string) => Effect.Effect<void>
}

/** An agent: a name, a description, and a program that ends with a result body or an error body. */
export interface AgentDefinition<R = never> {
  readonly name: string
  readonly description: string
  readonly run: (context: AgentContext) => Effect.Effect<string, string, R>
}

/**
 * An agent that runs a command (any command-line agent that takes a prompt
 * and prints its answer) through the child runner: `argv` turns the task
 * into the command line. Its body is the command's output, stdout and
 * stderr in the order the command wrote them; a non-zero exit or a signal
 * makes it an error body that says how the command ended.
 */
export const commandAgent: (
  name: string,
  description: string,
  argv: (task: string) => readonly [string, ...Array<string>]
) => AgentDefinition<Child.ChildRunner> = Command.commandAgent

/** Where an agent is. */
export type Status = "running" | "completed" | "failed" | "expired"

/** Who reads: the principal and its channel. */
export interface Caller {
  readonly owner: string
  readonly channel: string
}

/** What an authorizer sees of an agent. */
export interface AgentInfo {
  readonly id: string
  readonly name: string
  readonly owner: string
  readonly channel: string
}

/** Decides, on every read, whether a caller may read an agent; the owner and channel are checked first. */
export class AgentAuthorizer extends Context.Tag("@spillway/agents/AgentAuthorizer")<
  AgentAuthorizer,
  { readonly canRead: (caller: Caller, agent: AgentInfo) => Effect.Effect<boolean> }
>() {}

/** An authorizer that adds nothing to the owner and channel checks. */
export const allowOwners: Layer.Layer<AgentAuthorizer> = Layer.succeed(AgentAuthorizer, { canRead: () => Effect.succeed(true) })

/** A spawn past the concurrency limit. */
export class AdmissionRefused extends Schema.TaggedError<AdmissionRefused>()("AdmissionRefused", {
  limit: Schema.Number,
  running: Schema.Number
}) {
  override get message() {
    return `cannot start another agent: ${this.running} are running and agents.max_concurrent_agents is ${this.limit}; wait for one to finish`
  }
}

/** No agent by that name in the catalog. */
export class UnknownAgent extends Schema.TaggedError<UnknownAgent>()("UnknownAgent", { name: Schema.String, known: Schema.Array(Schema.String) }) {
  override get message() {
    return `no agent named ${JSON.stringify(this.name)}; the catalog has ${this.known.join(", ") || "none"}`
  }
}

/** No agent by that id. */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { agentId: Schema.String }) {
  override get message() {
    return `no agent with id ${Errors.quote(this.agentId)}; it was never started here`
  }
}

/** The caller may not read this agent. */
export class AgentAccessDenied extends Schema.TaggedError<AgentAccessDenied>()("AgentAccessDenied", { agentId: Schema.String }) {
  override get message() {
    return `you may not read agent ${this.agentId}; holding its id or a cursor is not permission`
  }
}

/** The agent has no body yet. */
export class AgentRunning extends Schema.TaggedError<AgentRunning>()("AgentRunning", { agentId: Schema.String }) {
  override get message() {
    return `agent ${this.agentId} is still running and has no result yet; call wait_for_agents first`
  }
}

/** A wait whose roster alone would not fit the delivery budget. */
export class BatchTooLarge extends Schema.TaggedError<BatchTooLarge>()("BatchTooLarge", {
  requested: Schema.Number,
  fits: Schema.Number
}) {
  override get message() {
    return `waiting on ${this.requested} agents would not fit one result; split agent_ids into batches of at most ${this.fits}`
  }
}

/** A request the runtime cannot carry out as given. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** Limits of delivery; every figure defaults to the source design's. */
export interface Options {
  /** The delivery budget for one whole serialized result, in characters. 12,000 by default. */
  readonly budgetChars?: number
  /** Most preview bytes per agent in a wait. 800 by default. */
  readonly previewBytes?: number
  /** Page size when none is asked for. 4,000 bytes by default. */
  readonly defaultPageBytes?: number
  /** Largest page that may be asked for. 8,000 bytes by default. */
  readonly maxPageBytes?: number
  /** Characters the optional tool metadata of a page may take. 1,000 by default. */
  readonly toolsAllowance?: number
}

const defaults = { budgetChars: 12_000, previewBytes: 800, defaultPageBytes: 4_000, maxPageBytes: 8_000, toolsAllowance: 1_000 }

interface Agent {
  readonly id: string
  readonly name: string
  readonly owner: string
  readonly channel: string
  readonly lifetimeSeconds: number
  readonly startedAt: number
  status: Status
  iterations: number
  reason: string | undefined
  /** The scrubbed result or error body, once finished. */
  body: Uint8Array | undefined
  kind: "result" | "error" | undefined
  sourceBytes: number
  readonly tools: Map<string, number>
  readonly done: Deferred.Deferred<void>
}

/** A row of a wait result. */
export interface WaitRow {
  readonly agent_id: string
  readonly name: string
  readonly status: Status | "not_found"
  readonly iterations: number
  readonly reason?: string
  readonly preview: string
  readonly preview_bytes: number
  readonly body_bytes: number
  readonly fetch?: string
}

/** What a wait returns. */
export interface WaitResult {
  readonly agents: ReadonlyArray<WaitRow>
  readonly timed_out: boolean
  readonly notice?: string
  readonly audit: { readonly interrupted: boolean; readonly interrupt_reason?: string; readonly durable_results: ReadonlyArray<string> }
}

/** A page of an agent's body. */
export interface ResultPage {
  readonly agent_id: string
  readonly status: Status
  readonly kind: "result" | "error"
  readonly text: string
  readonly offset: number
  readonly next_offset: number
  readonly original_bytes: number
  readonly result_bytes: number
  readonly error_bytes: number
  readonly source_original_bytes: number
  readonly truncated: boolean
  readonly cursor?: string
  readonly tools?: ReadonlyArray<{ readonly name: string; readonly calls: number }>
  readonly tools_omitted?: number
}

/** The catalog as `spawn_agent` describes it. */
export interface Catalog {
  readonly agents: ReadonlyArray<{ readonly name: string; readonly description: string }>
  readonly max_concurrent_agents: number
  /** The limit for agents spawned from now on; running agents keep theirs. */
  readonly max_lifetime_seconds: number
  readonly text: string
}

const NOTICE = "A parent message interrupted this wait; the agents go on running. Wait again or fetch their results later."

/** Characters the parent message that interrupted a wait may take in the serialized result, as the roster reserves. */
const REASON_CHARS = 200

/** Longest id a wait takes, in characters; agent ids are far shorter. */
const MAX_ID_CHARS = 256

/**
 * A text cut so that, serialized as a JSON string (escapes counted), it
 * takes at most `max` code points: the whole text when it fits, otherwise
 * its start in whole code points and a marker saying how long it was.
 */
const cutReason = (text: string, max: number = REASON_CHARS): string => {
  if (Envelope.sizeOf(JSON.stringify(text)) - 2 <= max) return text
  const marker = `… [cut: ${Utf8.codePointLength(text)} characters in all]`
  const fitted = Envelope.fitText(text, (part) => `${part}${marker}`, { limit: max + 2 })
  return Either.isRight(fitted) ? fitted.right.value : Utf8.takeCodePoints(marker, max)
}

/** Builds the runtime over a catalog of definitions; agents run in the scope it is built in. */
export const make = <R>(definitions: ReadonlyArray<AgentDefinition<R>>, options: Options = {}) =>
  Effect.gen(function*() {
    const o = { ...defaults, ...options }
    const config = yield* AgentConfig
    const masker = yield* Secrets.Secrets
    const authorizer = yield* AgentAuthorizer
    const key = yield* Cursor.CursorKey
    const scope = yield* Effect.scope
    const services = yield* Effect.context<R>()
    // without a result store, results live as long as the runtime
    const store = yield* Effect.serviceOption(AgentResults)
    const budget = { limit: o.budgetChars }
    const byName = new Map(definitions.map((d) => [d.name, d]))
    const live = new Map<string, Agent>()
    const results = new Map<string, Agent>()
    let catalogCache: { version: number; catalog: Catalog } | undefined

    const cursorAt = (id: string, offset: number) =>
      Effect.runSync(Effect.provideService(Cursor.encode({ tool: TOOL, evidence: id, offset, unit: "byte" }), Cursor.CursorKey, key))

    /** The catalog from the live configuration, rebuilt after each publication. */
    const catalog = Effect.gen(function*() {
      const version = yield* config.version
      if (catalogCache !== undefined && catalogCache.version === version) return catalogCache.catalog
      const c = yield* config.current
      const agents = definitions.map((d) => ({ name: d.name, description: d.description }))
      const text = [
        "Start an agent on a task; it runs in the background. Agents:",
        ...agents.map((a) => `- ${a.name}: ${a.description}`),
        `At most ${c.maxConcurrentAgents} agents run at once. An agent started now may run ${c.maxLifetimeSeconds} seconds.`
      ].join("\n")
      const built: Catalog = { agents, max_concurrent_agents: c.maxConcurrentAgents, max_lifetime_seconds: c.maxLifetimeSeconds, text }
      catalogCache = { version, catalog: built }
      return built
    })

    const finish = (agent: Agent, kind: "result" | "error", raw: string, status: Status, reason?: string) => {
      const source = Utf8.encode(raw)
      agent.body = masker.maskBytes(source)
      agent.sourceBytes = source.length
      agent.kind = kind
      agent.status = status
      agent.reason = reason
      live.delete(agent.id)
      results.set(agent.id, agent)
      Deferred.unsafeDone(agent.done, Exit.void)
    }

    const stored = (a: Agent): StoredResult => ({
      id: a.id,
      name: a.name,
      owner: a.owner,
      channel: a.channel,
      status: a.status as StoredResult["status"],
      reason: a.reason,
      iterations: a.iterations,
      kind: a.kind!,
      body: a.body!,
      sourceBytes: a.sourceBytes,
      tools: [...a.tools.entries()].map(([name, calls]) => ({ name, calls }))
    })

    const keep = (a: Agent) =>
      Option.match(store, {
        onNone: () => Effect.void,
        onSome: (s) => s.put(stored(a)).pipe(Effect.catchAll((e) => Effect.logWarning(`agent ${a.id}: its result was not stored: ${e.message}`)))
      })

    /** Brings results of agents this runtime no longer holds (finished before a restart) back from the store. */
    const resolve = (ids: ReadonlyArray<string>) =>
      Effect.forEach(ids, (id) =>
        live.has(id) || results.has(id) || Option.isNone(store)
          ? Effect.void
          : store.value.get(id).pipe(
            Effect.map((r) => {
              if (r === undefined) return
              const agent: Agent = {
                id: r.id,
                name: r.name,
                owner: r.owner,
                channel: r.channel,
                lifetimeSeconds: 0,
                startedAt: 0,
                status: r.status,
                iterations: r.iterations,
                reason: r.reason,
                body: r.body,
                kind: r.kind,
                sourceBytes: r.sourceBytes,
                tools: new Map(r.tools.map((t) => [t.name, t.calls])),
                done: Deferred.unsafeMake<void>(FiberId.none)
              }
              Deferred.unsafeDone(agent.done, Exit.void)
              results.set(id, agent)
            }),
            Effect.catchAll((e) => Effect.logWarning(e.message))
          ), { discard: true })

    const spawn = (caller: Caller, request: { readonly agent: string; readonly task: string }) =>
      Effect.gen(function*() {
        const definition = byName.get(request.agent)
        if (definition === undefined) return yield* new UnknownAgent({ name: request.agent, known: [...byName.keys()] })
        const c = yield* config.current
        if (live.size >= c.maxConcurrentAgents) return yield* new AdmissionRefused({ limit: c.maxConcurrentAgents, running: live.size })
        const agent: Agent = {
          id: `agent-${randomBytes(9).toString("base64url")}`,
          name: definition.name,
          owner: caller.owner,
          channel: caller.channel,
          lifetimeSeconds: c.maxLifetimeSeconds,
          startedAt: yield* Clock.currentTimeMillis,
          status: "running",
          iterations: 0,
          reason: undefined,
          body: undefined,
          kind: undefined,
          sourceBytes: 0,
          tools: new Map(),
          done: Deferred.unsafeMake<void>(FiberId.none)
        }
        live.set(agent.id, agent)
        const context: AgentContext = {
          task: request.task,
          iteration: Effect.sync(() => void agent.iterations++),
          toolUsed: (name) => Effect.sync(() => void agent.tools.set(name, (agent.tools.get(name) ?? 0) + 1))
        }
        const run = definition.run(context).pipe(
          Effect.provide(services),
          Effect.timeoutFail({
            duration: Duration.seconds(agent.lifetimeSeconds),
            onTimeout: () => "lifetime" as const
          }),
          Effect.exit,
          Effect.flatMap((exit) =>
            Effect.sync(() => {
              if (Exit.isSuccess(exit)) return finish(agent, "result", exit.value, "completed")
              const failure = Cause.failureOption(exit.cause)
              if (Option.isSome(failure) && failure.value === "lifetime") {
                return finish(agent, "error", "", "expired", `stopped after its lifetime of ${agent.lifetimeSeconds} seconds`)
              }
              if (Option.isSome(failure)) return finish(agent, "error", failure.value, "failed")
              finish(agent, "error", `the agent crashed: ${Cause.pretty(exit.cause).split("\n")[0]}`, "failed")
            })
          )
        )
        yield* Effect.forkIn(Effect.zipRight(run, Effect.suspend(() => keep(agent))), scope)
        return { agent_id: agent.id, name: agent.name, status: "running" as const, max_lifetime_seconds: agent.lifetimeSeconds }
      })

    const info = (a: Agent): AgentInfo => ({ id: a.id, name: a.name, owner: a.owner, channel: a.channel })
    const allowed = (caller: Caller, a: Agent) =>
      a.owner === caller.owner && a.channel === caller.channel ? authorizer.canRead(caller, info(a)) : Effect.succeed(false)

    const lookup = (id: string) => live.get(id) ?? results.get(id)

    /** The largest number of rows whose bare roster (no previews) fits, with room for the notice. */
    const rosterFits = (ids: ReadonlyArray<string>) => {
      const skeleton = (n: number): WaitResult => ({
        agents: ids.slice(0, n).map((id) => ({
          agent_id: id,
          name: "x".repeat(Math.max(1, ...definitions.map((d) => d.name.length))),
          status: "not_found",
          iterations: 999_999_999,
          reason: "stopped after its lifetime of 9999999999 seconds",
          preview: "",
          preview_bytes: 0,
          body_bytes: 999_999_999,
          // only an id a cursor can name ever gets a fetch line
          ...(Cursor.positionProblem({ tool: TOOL, evidence: id, offset: 0, unit: "byte" }) === undefined
            ? { fetch: `get_agent_results agent_id=${id} cursor=${cursorAt(id, 0)}` }
            : {})
        })),
        timed_out: true,
        notice: NOTICE,
        audit: { interrupted: true, interrupt_reason: "x".repeat(REASON_CHARS), durable_results: ids.slice(0, n) }
      })
      return Envelope.fitCount(0, ids.length, skeleton, budget)
    }

    /**
     * Waits until every agent has finished, the timeout passes, or
     * `interrupt` completes (a parent message); then checks access again and
     * returns every agent's row with a fair share of preview.
     */
    const waitForAgents = (
      caller: Caller,
      request: { readonly agentIds: ReadonlyArray<string>; readonly timeoutMillis: number; readonly interrupt?: Effect.Effect<string> | undefined }
    ) =>
      Effect.gen(function*() {
        const ids = [...new Set(request.agentIds)]
        if (ids.length === 0) return yield* new InvalidRequest({ reason: "agent_ids must name at least one agent" })
        const tooLong = ids.find((id) => id.length > MAX_ID_CHARS)
        if (tooLong !== undefined) {
          return yield* new InvalidRequest({ reason: `agent_ids: ${Errors.quote(tooLong)} is not an agent id; pass the agent_id spawn_agent returned` })
        }
        if (!Number.isFinite(request.timeoutMillis) || request.timeoutMillis < 0) {
          return yield* new InvalidRequest({ reason: "timeout must be a number of milliseconds, 0 or more" })
        }
        yield* resolve(ids)
        const fits = rosterFits(ids)
        const fitting = Either.isRight(fits) ? fits.right.count : 0
        if (fitting < ids.length) return yield* new BatchTooLarge({ requested: ids.length, fits: fitting })
        for (const id of ids) {
          const a = lookup(id)
          if (a !== undefined && !(yield* allowed(caller, a))) return yield* new AgentAccessDenied({ agentId: id })
        }
        const pending = ids.map(lookup).filter((a): a is Agent => a !== undefined && a.status === "running")
        const allDone = Effect.as(Effect.forEach(pending, (a) => Deferred.await(a.done), { discard: true }), { _tag: "done" as const })
        const racers: Array<Effect.Effect<{ readonly _tag: "done" | "timeout" } | { readonly _tag: "interrupt"; readonly reason: string }>> = [
          allDone,
          Effect.as(Effect.sleep(Duration.millis(request.timeoutMillis)), { _tag: "timeout" as const })
        ]
        if (request.interrupt !== undefined) racers.push(Effect.map(request.interrupt, (reason) => ({ _tag: "interrupt" as const, reason })))
        const ended = yield* Effect.raceAll(racers)
        // access may have been taken away while waiting: no preview for a revoked reader
        for (const id of ids) {
          const a = lookup(id)
          if (a !== undefined && !(yield* allowed(caller, a))) return yield* new AgentAccessDenied({ agentId: id })
        }
        const interrupted = ended._tag === "interrupt"
        const durable = ids.filter((id) => !live.has(id) && results.has(id))
        const rows = (share: number): WaitResult => ({
          agents: ids.map((id) => {
            const a = lookup(id)
            if (a === undefined) return { agent_id: id, name: "", status: "not_found", iterations: 0, preview: "", preview_bytes: 0, body_bytes: 0 }
            const body = a.body ?? new Uint8Array(0)
            const cut = Utf8.byteBoundary(body, Math.min(share, body.length))
            return {
              agent_id: id,
              name: a.name,
              status: a.status,
              iterations: a.iterations,
              ...(a.reason !== undefined ? { reason: a.reason } : {}),
              preview: Utf8.decodeLossy(body.subarray(0, cut)),
              preview_bytes: cut,
              body_bytes: body.length,
              ...(a.status !== "running" ? { fetch: `get_agent_results agent_id=${id} cursor=${cursorAt(id, 0)}` } : {})
            } satisfies WaitRow
          }),
          timed_out: ended._tag === "timeout",
          ...(interrupted ? { notice: NOTICE } : {}),
          audit: {
            interrupted,
            ...(ended._tag === "interrupt" ? { interrupt_reason: cutReason(masker.maskText(ended.reason)) } : {}),
            durable_results: durable
          }
        })
        // every agent gets the same preview ceiling, as large as the budget allows, up to 800 bytes
        const fitted = yield* Envelope.fitCount(0, o.previewBytes, rows, budget)
        return fitted.value
      })

    const limitOf = (limit: number | undefined) =>
      limit === undefined
        ? Effect.succeed(o.defaultPageBytes)
        : Number.isSafeInteger(limit) && limit >= 4 && limit <= o.maxPageBytes
        ? Effect.succeed(limit)
        : Effect.fail(new InvalidRequest({ reason: `limit must be a whole number from 4 to ${o.maxPageBytes}; got ${limit}` }))

    /** The page of an agent's body at a cursor (or its start), fitted whole to the budget. */
    const getAgentResults = (
      caller: Caller,
      request: { readonly agentId: string; readonly cursor?: string | undefined; readonly limit?: number | undefined }
    ) =>
      Effect.gen(function*() {
        yield* resolve([request.agentId])
        const a = lookup(request.agentId)
        if (a === undefined) return yield* new AgentNotFound({ agentId: request.agentId })
        if (!(yield* allowed(caller, a))) return yield* new AgentAccessDenied({ agentId: a.id })
        if (a.body === undefined || a.kind === undefined) return yield* new AgentRunning({ agentId: a.id })
        const limit = yield* limitOf(request.limit)
        let offset = 0
        if (request.cursor !== undefined && request.cursor !== "") {
          const position = yield* Effect.provideService(Cursor.decode(request.cursor, { tool: TOOL, unit: "byte" }), Cursor.CursorKey, key)
          if (position.evidence !== a.id) {
            return yield* new InvalidRequest({ reason: `this cursor belongs to agent ${position.evidence}, not ${a.id}` })
          }
          offset = position.offset
        }
        const body = a.body
        if (offset > body.length || !Utf8.isByteBoundary(body, offset)) {
          return yield* new InvalidRequest({ reason: `offset ${offset} is not a character boundary of the ${body.length}-byte body` })
        }
        // tool metadata first, within its own allowance, so it never crowds out the body
        const tools = [...a.tools.entries()].map(([name, calls]) => ({ name, calls }))
        let shownTools = tools.length
        while (shownTools > 0 && JSON.stringify(tools.slice(0, shownTools)).length > o.toolsAllowance) shownTools--
        const rest = body.subarray(offset, offset + limit + 3)
        const page = (n: number): ResultPage => {
          const cut = Utf8.byteBoundary(rest, Math.min(n, rest.length))
          const next = offset + cut
          const truncated = next < body.length
          return {
            agent_id: a.id,
            status: a.status,
            kind: a.kind!,
            text: Utf8.decodeLossy(rest.subarray(0, cut)),
            offset,
            next_offset: next,
            original_bytes: body.length,
            result_bytes: a.kind === "result" ? body.length : 0,
            error_bytes: a.kind === "error" ? body.length : 0,
            source_original_bytes: a.sourceBytes,
            truncated,
            ...(truncated ? { cursor: cursorAt(a.id, next) } : {}),
            ...(tools.length > 0 ? { tools: tools.slice(0, shownTools), tools_omitted: tools.length - shownTools } : {})
          }
        }
        const max = Math.min(limit, rest.length)
        let min = max === 0 ? 0 : 1
        while (min < max && !Utf8.isByteBoundary(rest, min)) min++
        return (yield* Envelope.fitCount(min, max, page, budget)).value
      })

    /** The agents the caller may read, running or finished. */
    const list = (caller: Caller) =>
      Effect.gen(function*() {
        const out: Array<{ agent_id: string; name: string; status: Status; iterations: number }> = []
        for (const a of [...live.values(), ...results.values()]) {
          if (yield* allowed(caller, a)) out.push({ agent_id: a.id, name: a.name, status: a.status, iterations: a.iterations })
        }
        return out
      })

    /** How many agents are running. */
    const running = Effect.sync(() => live.size)

    return { catalog, spawn, waitForAgents, getAgentResults, list, running }
  })

/** The runtime's interface. */
export type Service = Effect.Effect.Success<ReturnType<typeof make<never>>>

/** The agent runtime service. */
export class AgentRuntime extends Context.Tag("@spillway/agents/AgentRuntime")<AgentRuntime, Service>() {}

/** The runtime over a catalog, as a layer; agents run as long as the layer's scope. */
export const layer = <R>(definitions: ReadonlyArray<AgentDefinition<R>>, options: Options = {}) =>
  Layer.scoped(AgentRuntime, make(definitions, options))
