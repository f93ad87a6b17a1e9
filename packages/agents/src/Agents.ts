/**
 * Agents as supervised fibers: a catalog of definitions, spawn admission
 * against the live configuration, `waitForAgents` snapshots with fair
 * previews inside the delivery budget, and `getAgentResults` pages of each
 * agent's result or error body behind byte cursors.
 *
 * A finished agent's result (or error) is a body of the `agent` profile in
 * the one body store: masked as it is written, immutable, bound to the
 * owner and channel that spawned it, and kept for the `agent` pool's time
 * to live (24 hours by default). It outlives the runtime and a restart: a
 * runtime finds finished agents again from their manifests. Every read (a
 * preview, a page) asks `Access` through the body store, whoever holds the
 * id or the cursor. Agents belong to the runtime's scope, not to the
 * caller: a caller that stops waiting leaves them running.
 *
 * @since 0.1.0
 */
import type { Access, Child, Delivery, Envelope, Errors } from "@spillway/core"
import { Body, Cursor, Secrets } from "@spillway/core"
import { Context, Duration, Effect, Layer, Schedule, Schema, type Scope } from "effect"
import { AgentConfig } from "./AgentConfig.js"
import * as Catalogs from "./internal/catalog.js"
import type { AdmissionRefused, AgentRunning, BatchTooLarge } from "./internal/errors.js"
import * as Command from "./internal/command.js"
import * as Pages from "./internal/pages.js"
import * as Registry from "./internal/registry.js"
import * as Roster from "./internal/roster.js"
import type * as State from "./internal/state.js"
import * as Wait from "./internal/wait.js"

/** The cursor tool of result pages; no other tool takes them. */
export const TOOL = "get_agent_results"

/** What an agent's run function gets. */
export interface AgentContext {
  readonly task: string
  /** Reports that an iteration has finished; counts stop at 999,999,999. */
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
export const Status = Schema.Literal("running", "completed", "failed", "expired")

/** Where an agent is. */
export type Status = typeof Status.Type

/** A row of a wait result. */
export const WaitRow = Schema.Struct({
  agent_id: Schema.String,
  /** The agent's name in the catalog; empty for an id that was never started here. */
  name: Schema.String,
  status: Schema.Union(Status, Schema.Literal("not_found")),
  iterations: Schema.Number,
  /** Why it ended as it did (a lifetime, a lost or expired result), cut to a bounded length. */
  reason: Schema.optionalWith(Schema.String, { exact: true }),
  preview: Schema.String,
  preview_bytes: Schema.Number,
  body_bytes: Schema.Number,
  /** `get_agent_results agent_id=... cursor=...` for the whole body, once there is one. */
  fetch: Schema.optionalWith(Schema.String, { exact: true })
})

/** A row of a wait result. */
export type WaitRow = typeof WaitRow.Type

/**
 * What a wait returns: the roster as a model reads it (`text`), and the
 * same facts as fields for programs. As delivered (`deliveredWait`: the
 * text, and the facts without the previews it shows), it fits the delivery
 * budget whole.
 */
export const WaitResult = Schema.Struct({
  /** The roster as text: the notice, a line per agent with its preview and how to fetch the rest. */
  text: Schema.String,
  agents: Schema.Array(WaitRow),
  timed_out: Schema.Boolean,
  notice: Schema.optionalWith(Schema.String, { exact: true }),
  audit: Schema.Struct({
    interrupted: Schema.Boolean,
    /** The parent message that interrupted the wait, masked and cut to a bounded length with a marker. */
    interrupt_reason: Schema.optionalWith(Schema.String, { exact: true }),
    /** The ids whose row comes from a kept result body. */
    durable_results: Schema.Array(Schema.String)
  })
})

/** What a wait returns. */
export type WaitResult = typeof WaitResult.Type

/** A page of an agent's body. */
export const ResultPage = Schema.Struct({
  agent_id: Schema.String,
  status: Status,
  kind: Schema.Literal("result", "error"),
  text: Schema.String,
  offset: Schema.Number,
  next_offset: Schema.Number,
  original_bytes: Schema.Number,
  result_bytes: Schema.Number,
  error_bytes: Schema.Number,
  /** UTF-8 bytes of the body before secrets were masked. */
  source_original_bytes: Schema.Number,
  truncated: Schema.Boolean,
  cursor: Schema.optionalWith(Schema.String, { exact: true }),
  /** When the body is removed (ISO 8601), or "never"; reads never move it. */
  expires_at: Schema.String,
  tools: Schema.optionalWith(Schema.Array(Schema.Struct({ name: Schema.String, calls: Schema.Number })), { exact: true }),
  tools_omitted: Schema.optionalWith(Schema.Number, { exact: true })
})

/** A page of an agent's body. */
export type ResultPage = typeof ResultPage.Type

const { text: _pageText, ...pageFields } = ResultPage.fields

/** What a program reads of a page of an agent's body; the page itself is the delivered text. */
export const ResultFacts = Schema.Struct({
  ...pageFields,
  /** Code points at the start of the text that are the body; what follows them is the page's marker. */
  content_chars: Schema.Number
})

/** What a program reads of a page of an agent's body. */
export type ResultFacts = typeof ResultFacts.Type

const { fetch: _fetch, preview: _preview, ...rowFields } = WaitRow.fields

/** What a program reads of a row of a wait; its preview, and the call that fetches the whole body, are in the delivered text. */
export const WaitRowFacts = Schema.Struct(rowFields)

const { text: _waitText, agents: _agents, ...waitFields } = WaitResult.fields

/** What a program reads of a wait; the roster with its previews is the delivered text. */
export const WaitFacts = Schema.Struct({ agents: Schema.Array(WaitRowFacts), ...waitFields })

/** What a program reads of a wait. */
export type WaitFacts = typeof WaitFacts.Type

/** A page of an agent's body as delivered: the page and its marker as text, the rest as facts. */
export const deliveredPage: (page: ResultPage) => Delivery.Delivered<ResultFacts> = Pages.delivered

/** A wait as delivered: the roster as text, its facts without the previews and calls the text shows. */
export const deliveredWait: (result: WaitResult) => Delivery.Delivered<WaitFacts> = Roster.delivered

/** The catalog as `spawn_agent` describes it. */
export interface Catalog {
  readonly agents: ReadonlyArray<{ readonly name: string; readonly description: string }>
  readonly max_concurrent_agents: number
  /** The limit for agents spawned from now on; running agents keep theirs. */
  readonly max_lifetime_seconds: number
  readonly text: string
}

/** A started agent. */
export interface Spawned {
  readonly agent_id: string
  readonly name: string
  readonly status: "running"
  readonly max_lifetime_seconds: number
}

/** One agent as `list` shows it. */
export interface Summary {
  readonly agent_id: string
  readonly name: string
  readonly status: Status
  readonly iterations: number
}

/** The agent-specific refusals: a spawn past the limit, a result asked of an agent still running, a wait on too many agents for one result. */
export { AdmissionRefused, AgentRunning, BatchTooLarge } from "./internal/errors.js"

/** Everything spawning can fail with. */
export type SpawnError = Errors.InvalidRequest | AdmissionRefused

/** Everything a wait can fail with; an expired or lost result is a row, not a failure. */
export type WaitError = Errors.InvalidRequest | Errors.AccessDenied | Errors.StoreFailed | BatchTooLarge

/** Everything reading a result can fail with. */
export type ResultsError =
  | Errors.NotFound
  | Errors.AccessDenied
  | Errors.Expired
  | Errors.InvalidRequest
  | Errors.StoreFailed
  | Cursor.CursorError
  | Envelope.EnvelopeTooSmall
  | AgentRunning

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
  /** Time between sweeps of expired results. 1 minute by default. */
  readonly sweepEveryMillis?: number
}

const defaults: State.Limits = {
  budgetChars: 12_000,
  previewBytes: 800,
  defaultPageBytes: 4_000,
  maxPageBytes: 8_000,
  toolsAllowance: 1_000,
  sweepEveryMillis: 60_000
}

/** A wait: the agents, how long at most, and an effect that completes when a parent message interrupts it. */
export interface WaitRequest {
  readonly agentIds: ReadonlyArray<string>
  readonly timeoutMillis: number
  /** Completes with the parent message when one arrives; the agents go on running. */
  readonly interrupt?: Effect.Effect<string> | undefined
}

/** A page request: the agent, the cursor of the previous page (none for the start), and a page size. */
export interface ResultsRequest {
  readonly agentId: string
  readonly cursor?: string | undefined
  /** Most bytes of the page; 4,000 by default, 4 to 8,000. */
  readonly limit?: number | undefined
}

/** The runtime. */
export interface Service {
  /** The catalog from the live configuration, rebuilt after each publication. */
  readonly catalog: Effect.Effect<Catalog>
  /** Starts an agent on a task, if the live limit admits it; it runs in the runtime's scope. */
  readonly spawn: (caller: Access.Caller, request: { readonly agent: string; readonly task: string }) => Effect.Effect<Spawned, SpawnError>
  /**
   * Waits until every agent has finished, the timeout passes, or
   * `interrupt` completes (a parent message); then checks access again and
   * returns every agent's row with a fair share of preview.
   */
  readonly waitForAgents: (caller: Access.Caller, request: WaitRequest) => Effect.Effect<WaitResult, WaitError>
  /** The page of an agent's body at a cursor (or its start), fitted whole to the budget. */
  readonly getAgentResults: (caller: Access.Caller, request: ResultsRequest) => Effect.Effect<ResultPage, ResultsError>
  /** The agents the caller may list, running or with a kept result. */
  readonly list: (caller: Access.Caller) => Effect.Effect<ReadonlyArray<Summary>, Errors.StoreFailed>
  /** How many agents are running. */
  readonly running: Effect.Effect<number>
  /** Removes expired result bodies; returns how many. */
  readonly sweep: Effect.Effect<number, Errors.StoreFailed>
}

/** The agent runtime service. */
export class AgentRuntime extends Context.Tag("@spillway/agents/AgentRuntime")<AgentRuntime, Service>() {}

/**
 * Builds the runtime over a catalog of definitions, the body store and a
 * cursor key; agents run in the scope it is built in, and expired results
 * are swept in the background.
 */
export const make = <R>(
  definitions: ReadonlyArray<AgentDefinition<R>>,
  options: Options = {}
): Effect.Effect<Service, never, AgentConfig | Body.Bodies | Secrets.Secrets | Cursor.CursorKey | Scope.Scope | R> =>
  Effect.gen(function*() {
    const limits: State.Limits = { ...defaults, ...options }
    const config = yield* AgentConfig
    const { key } = yield* Cursor.CursorKey
    const ctx: State.Context = {
      limits,
      bodies: yield* Body.Bodies,
      masker: yield* Secrets.Secrets,
      codec: Cursor.codec(key, TOOL, "byte"),
      budget: { limit: limits.budgetChars },
      live: new Map(),
      lost: new Map()
    }
    const spawner = yield* Registry.make(ctx, definitions, config)
    const sweep = Registry.sweep(ctx)
    yield* Effect.forkScoped(Effect.repeat(Effect.ignore(sweep), Schedule.spaced(Duration.millis(limits.sweepEveryMillis))))
    return AgentRuntime.of({
      catalog: Catalogs.make(definitions, config),
      spawn: spawner.spawn,
      waitForAgents: (caller, request) => Wait.waitForAgents(ctx, caller, request),
      getAgentResults: (caller, request) => Pages.getAgentResults(ctx, caller, request),
      list: (caller) => Registry.list(ctx, caller),
      running: Effect.sync(() => ctx.live.size),
      sweep
    })
  })

/** The runtime over a catalog, as a layer; agents run as long as the layer's scope. */
export const layer = <R>(
  definitions: ReadonlyArray<AgentDefinition<R>>,
  options: Options = {}
): Layer.Layer<AgentRuntime, never, AgentConfig | Body.Bodies | Secrets.Secrets | Cursor.CursorKey | R> =>
  Layer.scoped(AgentRuntime, make(definitions, options))
