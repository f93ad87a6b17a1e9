/**
 * The scratch profile: per-tool output policies. Each tool has a projection
 * strategy (head, tail, middle, none) and an automatic capture (none, a
 * command's cumulative output, a snapshot per call, the received result, or
 * never, for secrets), set by the tool's implementation and never by the
 * model. `deliver` masks a result and projects it onto the model ceiling
 * (65,536 UTF-8 bytes and 2,000 lines, counted on the complete serialized
 * response), with whole lines only, captures the full redacted output to the scratch store
 * when (and only when) something was cut, and marks the cut. `fold` is the
 * separate, display-only folding for people.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import * as Marker from "./Marker.js"
import * as Projection from "./Projection.js"
import { pathFor, type ScratchFile, ScratchStore } from "./ScratchStore.js"
import { Secrets, type StreamMasker } from "./Secrets.js"
import * as Utf8 from "./Utf8.js"

/** What a tool's output is captured as, when a projection cuts it. */
export type Capture = "none" | "cumulative" | "snapshot" | "received" | "never"

/** One row of the policy table. */
export interface ToolPolicy {
  readonly strategy: Projection.Strategy
  readonly capture: Capture
  /** A wrapper tool that plans around another keeps that tool's strategy. */
  readonly wraps?: string | undefined
}

/**
 * The default table. Commands keep their tail and their cumulative output;
 * fetched documents and searches keep their head and what was received;
 * tools that page a source of their own (file reads, searches, jobs) keep
 * their head and capture nothing, since the source is still there; a tool
 * that returns a secret bypasses projection and is never captured.
 */
export const defaultPolicies: Readonly<Record<string, ToolPolicy>> = {
  run_command: { strategy: "tail", capture: "cumulative" },
  command_output: { strategy: "tail", capture: "snapshot" },
  fetch: { strategy: "head", capture: "received" },
  web_search: { strategy: "head", capture: "received" },
  read_spill: { strategy: "head", capture: "none" },
  grep_spill: { strategy: "head", capture: "none" },
  get_tool_output: { strategy: "head", capture: "none" },
  manage_process: { strategy: "head", capture: "none" },
  request_user_secret: { strategy: "none", capture: "never" }
}

/** The policy of a tool not in the table: an outbound MCP tool's, middle and received. */
export const fallbackPolicy: ToolPolicy = { strategy: "middle", capture: "received" }

/** The model ceiling; every figure defaults to the source design's. */
export interface Ceiling {
  /** Most UTF-8 bytes of the whole serialized response. 65,536 by default. */
  readonly maxBytes: number
  /** Most lines of the delivered body. 2,000 by default. */
  readonly maxLines: number
}

/** The source design's ceiling. */
export const defaultCeiling: Ceiling = { maxBytes: 65_536, maxLines: 2_000 }

/**
 * The policy a tool gets: its own row, or the fallback; a wrapper takes the
 * strategy of the tool it wraps (following wrappers of wrappers) and keeps
 * its own capture.
 */
export const policyFor = (tool: string, table: Readonly<Record<string, ToolPolicy>> = defaultPolicies): ToolPolicy => {
  const own = table[tool] ?? fallbackPolicy
  let strategy = own.strategy
  const seen = new Set([tool])
  for (let wrapped = own.wraps; wrapped !== undefined && !seen.has(wrapped);) {
    seen.add(wrapped)
    const row = table[wrapped] ?? fallbackPolicy
    strategy = row.strategy
    wrapped = row.wraps
  }
  return { strategy, capture: own.capture }
}

/** A command's collector: one cumulative scratch file, masked as a stream, appended to at each delivery. */
export interface Collector {
  file: ScratchFile | undefined
  /** Raw bytes of the command's output already fed to the masker. */
  fed: number
  readonly masker: StreamMasker | undefined
  failed: string | undefined
}

/** What a delivery needs. */
export interface DeliverInput {
  readonly tool: string
  /** The whole raw result text (for a command: everything it has written so far). */
  readonly output: string
  readonly owner: { readonly conversationId?: string | undefined; readonly runId: string }
  /** True when an external client, not a model, asked: no projection and no capture. */
  readonly external?: boolean | undefined
  /** Wraps the delivered body into the complete response, which the ceiling counts; `{ output }` by default. */
  readonly envelope?: ((body: string) => unknown) | undefined
  /** The command's collector, for cumulative capture. */
  readonly collector?: Collector | undefined
  /** True when this is the command's last delivery: the cumulative file is then complete. */
  readonly final?: boolean | undefined
}

/** What was delivered. */
export interface Delivered {
  /** The body: the output, or its projection with a marker where lines are missing. */
  readonly body: string
  /** The complete response, within the ceiling unless the policy bypasses it. */
  readonly response: unknown
  readonly truncated: boolean
  readonly strategy: Projection.Strategy
  readonly ranges: ReadonlyArray<Projection.LineRange>
  readonly totalLines: number
  /** The scratch file, when one was written; `complete` when it holds the whole redacted output. */
  readonly capture?: { readonly path: string; readonly complete: boolean }
  /** Why no complete copy exists, when one was due. */
  readonly captureError?: string
}

/** Options of the profile. */
export interface Options {
  readonly policies?: Readonly<Record<string, ToolPolicy>> | undefined
  readonly ceiling?: Ceiling | undefined
}

const defaultEnvelope = (body: string) => ({ output: body })

/** A capture's outcome: a file (whole or not), or why there is none. */
type Saved = { readonly path: string; readonly complete: boolean } | { readonly error: string }

/** Builds the profile over a scratch store and a masker. */
export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const store = yield* ScratchStore
    const masker = yield* Secrets
    const table = options.policies ?? defaultPolicies
    const ceiling = options.ceiling ?? defaultCeiling

    /** A fresh collector for one command. */
    const collector = (): Collector => ({ file: undefined, fed: 0, masker: masker.stream(), failed: undefined })

    /** Writes the capture a policy asks for; a failure is a reason, never a claimed copy. */
    const capture = (input: DeliverInput, kind: Capture): Effect.Effect<Saved> =>
      Effect.gen(function*() {
        const raw = Utf8.encode(input.output)
        if (kind === "cumulative" && input.collector !== undefined) {
          const c = input.collector
          if (c.failed !== undefined) return { error: c.failed } satisfies Saved
          const masked = [c.masker!.push(raw.subarray(c.fed)), ...(input.final === true ? [c.masker!.end()] : [])]
          c.fed = raw.length
          const result = yield* Effect.either(Effect.gen(function*() {
            const file = c.file ?? (yield* store.create(pathFor(input.tool, input.owner)))
            c.file = file
            for (const part of masked) if (part.length > 0) yield* file.append(part)
            return file.path
          }))
          if (result._tag === "Left") {
            c.failed = `no complete copy was saved: ${result.left.message}`
            return { error: c.failed }
          }
          return { path: result.right, complete: input.final === true && c.masker!.heldBytes() === 0 }
        }
        const result = yield* Effect.either(Effect.gen(function*() {
          const file = yield* store.create(pathFor(input.tool, input.owner))
          yield* file.append(masker.maskBytes(raw))
          return file.path
        }))
        return result._tag === "Left"
          ? { error: `no complete copy was saved: ${result.left.message}` }
          : { path: result.right, complete: true }
      })

    /** Projects a result onto the ceiling, capturing and marking as the tool's policy says. */
    const deliver = (input: DeliverInput): Effect.Effect<Delivered> =>
      Effect.gen(function*() {
        const policy = policyFor(input.tool, table)
        const envelope = input.envelope ?? defaultEnvelope
        const lines = Projection.splitLines(input.output)
        let masked: Array<string> | undefined
        const whole = (body: string): Delivered => ({
          body,
          response: envelope(body),
          truncated: false,
          strategy: policy.strategy,
          ranges: lines.length > 0 ? [{ from: 1, to: lines.length }] : [],
          totalLines: lines.length
        })
        if (input.external === true || policy.strategy === "none") return whole(input.output)
        // what a model sees is masked; masks keep lengths, so the lines stay where they were
        const text = masker.maskText(input.output)
        const size = (body: string) => Utf8.byteLength(JSON.stringify(envelope(body)))
        if (lines.length <= ceiling.maxLines && size(text) <= ceiling.maxBytes) return whole(text)

        const saved = policy.capture === "none" || policy.capture === "never" ? undefined : yield* capture(input, policy.capture)
        const full = saved !== undefined && "path" in saved && saved.complete ? saved.path : undefined
        // the body's JSON-escaped bytes get what the empty response and the marker leave
        let budget = ceiling.maxBytes - size("")
        let projected = Projection.projectLines(lines, { strategy: policy.strategy, maxBytes: 0, maxLines: 0 })
        let body = ""
        for (let attempt = 0; attempt < 8; attempt++) {
          // the marker at its longest: two ranges, and a line cut to as many bytes as the output has
          const widest = { from: lines.length, to: lines.length }
          const totalBytes = Utf8.byteLength(text)
          const markerBytes = Utf8.jsonByteLength(
            Marker.format({
              ranges: [widest, widest],
              totalLines: lines.length,
              fullOutput: full,
              cutLine: { line: lines.length, shownBytes: totalBytes, totalBytes }
            })
          ) + 4
          projected = Projection.projectLines(masked ??= Projection.splitLines(text), {
            strategy: policy.strategy,
            maxBytes: Math.max(0, budget - markerBytes),
            maxLines: ceiling.maxLines - 1,
            measure: "json"
          })
          body = Projection.render(projected, full)
          const over = size(body) - ceiling.maxBytes
          if (over <= 0) break
          budget -= over
        }
        return {
          body,
          response: envelope(body),
          truncated: true,
          strategy: policy.strategy,
          ranges: projected.ranges,
          totalLines: lines.length,
          ...(saved !== undefined && "path" in saved ? { capture: { path: saved.path, complete: saved.complete } } : {}),
          ...(saved !== undefined && "error" in saved ? { captureError: saved.error } : {}),
          ...(saved !== undefined && "path" in saved && !saved.complete
            ? { captureError: "the saved copy holds the output only up to what was settled; the command has not ended" }
            : {})
        } satisfies Delivered
      })

    return { deliver, collector, policyFor: (tool: string) => policyFor(tool, table) }
  })

/** How display folding shapes a body for people. */
export type FoldKind = "command" | "other"

/** A body folded for display: what shows compact, and the full content for copying. */
export interface Folded {
  readonly compact: string
  /** True when the compact body leaves something out (a "Show more" applies). */
  readonly folded: boolean
  readonly full: string
}

/**
 * Display-only folding, separate from what the model receives: a command's
 * compact body is its last five whole lines within 64 KiB; other bodies
 * show the middle cut of 120 lines within 64 KiB. It adds no marker, never
 * rewrites model content and writes no file; `full` is the content as given.
 */
export const fold = (text: string, kind: FoldKind): Folded => {
  const policy: Projection.Policy = kind === "command"
    ? { strategy: "tail", maxBytes: 64 * 1024, maxLines: 5, longLine: "omit" }
    : { strategy: "middle", maxBytes: 64 * 1024, maxLines: 120, longLine: "omit" }
  const p = Projection.project(text, policy)
  return { compact: [...p.head, ...p.tail].join("\n"), folded: p.truncated, full: text }
}

/** The profile as a service. */
export class ToolOutput extends Context.Tag("@spillway/core/ToolOutput")<ToolOutput, Effect.Effect.Success<ReturnType<typeof make>>>() {}

/** The profile as a layer, over the scratch store and masker in context. */
export const layer = (options: Options = {}): Layer.Layer<ToolOutput, never, ScratchStore | Secrets> =>
  Layer.effect(ToolOutput, make(options))
