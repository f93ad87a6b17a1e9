/**
 * The host's RPC group, the only way into a host: lease, start, poll, pages,
 * wait, search, stdin, signal, status and delete. Every call but `Lease` carries a lease;
 * none takes a path. Views and pages cross as the same schemas a local poll
 * returns, decoded on arrival.
 *
 * @since 0.1.0
 */
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import { Process, ProcessView } from "@spillway/core"
import { Schema } from "effect"

/** A refused or failed host call, with the reason's tag and words to act on. */
export class HostError extends Schema.TaggedError<HostError>()("HostError", {
  reason: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

const lease = Schema.String
const pid = Schema.Number
/** The generation the controller recorded for the pid: a later job that got the same pid is refused. */
const generation = Schema.optional(Schema.String)

/** Most pages one `Pages` call returns: what a controller reading ahead may ask for. */
export const MAX_PAGES_AHEAD = 8

/** The host's calls. */
export class HostRpcs extends RpcGroup.make(
  Rpc.make("Lease", {
    payload: { credential: Schema.String, owner: Schema.String, channel: Schema.String },
    /** `ttlMillis`: how long the lease lasts from now; the controller renews it before then. */
    success: Schema.Struct({ lease: Schema.String, scope: Schema.String, host: Schema.String, ttlMillis: Schema.Number }),
    error: HostError
  }),
  Rpc.make("Start", {
    payload: {
      lease,
      command: Schema.String,
      cwd: Schema.optional(Schema.String),
      stdin: Schema.optional(Schema.Boolean),
      keep: Schema.optional(Schema.Literal("head-and-tail", "whole"))
    },
    success: Schema.Struct({ pid: Schema.Number, generation: Schema.String, started_at: Schema.String }),
    error: HostError
  }),
  Rpc.make("Poll", {
    payload: {
      lease,
      pid,
      generation,
      cursor: Schema.optional(Schema.NullOr(Schema.String)),
      offset: Schema.optional(Schema.NullOr(Schema.Union(Schema.Number, Schema.String))),
      limit: Schema.optional(Schema.NullOr(Schema.Number)),
      line: Schema.optional(Schema.NullOr(Schema.Number)),
      lines: Schema.optional(Schema.NullOr(Schema.Number))
    },
    success: ProcessView.PollResult,
    error: HostError
  }),
  /**
   * Up to `count` pages in a row from a cursor, as that many polls would
   * return them: what a controller reading a job's output ahead asks for.
   * The host stops early at the end of the output, at a page of a job still
   * running (whose next page may still change), and once the pages hold
   * about 64 Ki characters.
   */
  Rpc.make("Pages", {
    payload: {
      lease,
      pid,
      generation,
      cursor: Schema.String,
      limit: Schema.optional(Schema.NullOr(Schema.Number)),
      count: Schema.Int.pipe(Schema.between(1, MAX_PAGES_AHEAD))
    },
    success: Schema.Array(ProcessView.Page),
    error: HostError
  }),
  Rpc.make("Wait", {
    payload: {
      lease,
      pid,
      generation,
      timeoutMillis: Schema.Number,
      pattern: Schema.optional(Schema.String),
      /** With a pattern: the line it is first tried on; absent, only lines printed after the call match. */
      fromLine: Schema.optional(Schema.Number)
    },
    success: ProcessView.StatusView,
    error: HostError
  }),
  Rpc.make("Search", {
    payload: {
      lease,
      pid,
      generation,
      pattern: Schema.String,
      ignoreCase: Schema.optional(Schema.Boolean),
      maxResults: Schema.optional(Schema.NullOr(Schema.Number)),
      cursor: Schema.optional(Schema.NullOr(Schema.String))
    },
    success: ProcessView.Matches,
    error: HostError
  }),
  Rpc.make("Stdin", {
    payload: { lease, pid, generation, data: Schema.optional(Schema.String), close: Schema.optional(Schema.Boolean) },
    error: HostError
  }),
  Rpc.make("Signal", { payload: { lease, pid, generation, signal: Schema.String }, error: HostError }),
  Rpc.make("Status", { payload: { lease, pid, generation }, success: Process.JobSummary, error: HostError }),
  Rpc.make("Delete", { payload: { lease, pid, generation }, error: HostError })
) {}
