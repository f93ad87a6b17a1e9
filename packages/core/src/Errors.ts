/**
 * The errors every view and store of the core shares: a small vocabulary,
 * each naming the resource it is about and saying what to do next. They are
 * `Schema.TaggedError`s, so they cross a wire (tool results, RPC) as they are.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/** What an error is about: a kept output, a job's output, an agent, or a scratch capture. */
export const Resource = Schema.Literal("output", "job", "agent", "scratch")

/** What an error is about. */
export type Resource = typeof Resource.Type

/** Longest part of a caller's argument an error quotes, in characters. */
export const MAX_QUOTE = 120

/**
 * A caller's argument as an error quotes it: JSON-quoted and cut to
 * `MAX_QUOTE` characters with the cut stated, so that a hostile argument
 * cannot make the reply as large as itself.
 */
export const quote = (value: string): string => {
  if (value.length <= MAX_QUOTE) return JSON.stringify(value)
  return `${JSON.stringify(value.slice(0, MAX_QUOTE))}… (${value.length} characters)`
}

const named = (resource: Resource, id: string): string => {
  switch (resource) {
    case "output":
      return `saved output ${quote(id)}`
    case "job":
      // a job is named by its pid, its output by the file name that keeps it
      return id.endsWith(".log") ? `job output ${quote(id)}` : `job with pid ${id.slice(0, 24)}`
    case "agent":
      return `agent ${quote(id)}`
    case "scratch":
      return `scratch file ${quote(id)}`
  }
}

const notFoundHint: Readonly<Record<Resource, string>> = {
  output: "check the name or cursor in the preview; saved output is removed when it expires",
  job: "it was not started here, or it expired and was removed; list your jobs to see which exist",
  agent: "it was never started here, or its result expired and was removed; check the agent_id",
  scratch: "check the path; scratch files are never overwritten, so each capture has its own"
}

/** Nothing by that name, id or cursor (never kept, or already removed). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Resource,
  id: Schema.String
}) {
  override get message() {
    return `no ${named(this.resource, this.id)}: ${notFoundHint[this.resource]}`
  }
}

/** The caller may not do this; holding a name, a pid or a cursor is never permission. */
export class AccessDenied extends Schema.TaggedError<AccessDenied>()("AccessDenied", {
  resource: Resource,
  id: Schema.String,
  action: Schema.String
}) {
  override get message() {
    return `you may not ${this.action} ${named(this.resource, this.id)}; knowing its name, pid or cursor is not permission`
  }
}

/** The resource has expired; reads never extend an expiry. */
export class Expired extends Schema.TaggedError<Expired>()("Expired", {
  resource: Resource,
  id: Schema.String,
  expiresAt: Schema.String
}) {
  override get message() {
    return `${named(this.resource, this.id)} expired at ${this.expiresAt}; run the command or tool again if you still need it`
  }
}

/** Keeping more would pass a retention quota. */
export class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", {
  /** The retention pool (a profile's name) whose quota it is. */
  pool: Schema.String,
  unit: Schema.Literal("bytes", "entries"),
  wanted: Schema.Number,
  available: Schema.Number,
  limit: Schema.Number
}) {
  override get message() {
    return this.unit === "entries"
      ? `the ${this.pool} store holds ${this.limit} entries, its limit; older ones free their room when they expire`
      : `keeping ${this.wanted} more bytes would pass the ${this.limit}-byte ${this.pool} quota (${this.available} free); older output frees its room when it expires`
  }
}

/** An argument or a request the callee cannot carry out as given. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  /** The argument at fault, or `request` when it is the request as a whole. */
  argument: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return this.argument === "request" ? this.reason : `${this.argument}: ${this.reason}`
  }
}

/** A store (files, manifests) failed; what was asked of it did not happen. */
export class StoreFailed extends Schema.TaggedError<StoreFailed>()("StoreFailed", {
  operation: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.operation} failed: ${this.reason}`
  }
}
