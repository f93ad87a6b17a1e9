/**
 * The scratch profile: per-tool output policies. Each tool has a projection
 * strategy (head, tail, middle, none) and an automatic capture (none, a
 * command's cumulative output, a snapshot per call, the received result, or
 * never, for secrets), set by the tool's implementation and never by the
 * model. `deliver` masks a result and projects it onto the model ceiling
 * (65,536 UTF-8 bytes and 2,000 lines, counted on the complete serialized
 * response) in whole lines, or, when not one whole line fits, that line's
 * start and end with the bytes between counted. When (and only when)
 * something was cut, the redacted output is captured as a body of the one
 * store (profile and retention pool `scratch`), at the path the path factory
 * makes (`<conversation>/outputs/<tool-name>-<uuid>.txt`); the marker names
 * it only when the copy is complete. `read` pages a capture back for its
 * owner, through the same access check as every other view. `fold` is the
 * separate, display-only folding for people.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { CurrentCaller } from "./Access.js"
import { Bodies, type OpenError } from "./Body.js"
import { nameProblem } from "./BodyFiles.js"
import type { InvalidRequest } from "./Errors.js"
import * as Scratch from "./internal/scratch.js"
import * as Marker from "./Marker.js"
import * as Projection from "./Projection.js"
import { Secrets } from "./Secrets.js"
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

/** Where a capture goes: the conversation's folder, or the run's when there is no conversation. */
export interface ScratchOwner {
  readonly conversationId?: string | undefined
  readonly runId: string
}

/** Makes the path of a new capture, relative to the store: the whole path, nothing is added to it. */
export type PathFactory = (tool: string, owner: ScratchOwner) => string

/**
 * The path of a new capture: `<owner>/outputs/<tool-name>-<uuid>.txt`, where
 * the owner is the conversation's id, or the run's when there is none, and
 * the tool name's underscores become hyphens. The folders are file
 * organization, not isolation: who may read a capture is its body's owner.
 */
export const pathFor = (tool: string, owner: ScratchOwner, uuid: string = globalThis.crypto.randomUUID()): string =>
  `${owner.conversationId ?? owner.runId}/outputs/${tool.replace(/_/g, "-")}-${uuid}.txt`

/**
 * Why a capture path is refused, or undefined when it is fine: a relative
 * path whose every part is a name of letters, digits, `.`, `_` and `-` (no
 * empty, `.` or `..` part, no leading dot), as every body name is.
 */
export const pathProblem = (path: string): string | undefined => nameProblem(path)

/** Most bytes one capture keeps, the source design's 8 MiB; the rest is counted, not kept, and the capture is not complete. */
export const MAX_CAPTURE_BYTES = 8 * 1024 * 1024

/**
 * A command's collector: one body for all of the command's deliveries,
 * masked as one stream (a secret split across two deliveries is still
 * masked), written from the first delivery that was cut on and sealed at
 * the last. It lives as long as the scope it was made in; closed before the
 * last delivery, what it collected is kept, sealed as unfinished.
 */
export interface Collector {
  /** The capture's path, once one was made. */
  readonly path: () => string | undefined
  /** Raw bytes of the command's output written to the capture so far. */
  readonly fed: () => number
}

/** What a delivery needs. */
export interface DeliverInput {
  readonly tool: string
  /** The whole raw result text (for a command: everything it has written so far). */
  readonly output: string
  /** Whose folder a capture goes in; by default the caller's channel, as the conversation. */
  readonly owner?: ScratchOwner | undefined
  /** True when an external client, not a model, asked: no projection and no capture. */
  readonly external?: boolean | undefined
  /** Wraps the delivered body into the complete response, which the ceiling counts; `{ output }` by default. */
  readonly envelope?: ((body: string) => unknown) | undefined
  /** The command's collector, for cumulative capture. */
  readonly collector?: Collector | undefined
  /** True when this is the command's last delivery: the cumulative capture is then sealed. */
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
  /** The capture, when one was kept; `complete` only when it holds the whole redacted output. */
  readonly capture?: { readonly path: string; readonly complete: boolean }
  /** Why no complete copy exists, when one was due. */
  readonly captureError?: string
}

/** Where to read a capture from: a 1-indexed first line (0 is the start) and a line count (0: as many as a page holds). */
export interface ReadOptions {
  readonly offset?: number | undefined
  readonly limit?: number | undefined
}

/** A page of a capture. */
export interface ScratchPage {
  readonly path: string
  /** Whole lines (malformed UTF-8 shown as U+FFFD), each with its line break. */
  readonly text: string
  /** First line of the page (1-indexed). */
  readonly offset: number
  readonly lines: number
  readonly totalLines: number
  readonly totalBytes: number
  /** False while a command's capture is still being written, and for a capture that holds only part of the output. */
  readonly complete: boolean
  /** The line to continue from, when lines remain after the page. */
  readonly nextOffset?: number
  /** Present when the page's one line was longer than a page: it is shown in part. */
  readonly cutLine?: { readonly line: number; readonly shownBytes: number; readonly totalBytes: number }
}

/** Everything reading a capture can fail with. */
export type ReadError = OpenError | InvalidRequest

/** Options of the profile. */
export interface Options {
  readonly policies?: Readonly<Record<string, ToolPolicy>> | undefined
  readonly ceiling?: Ceiling | undefined
  /** The path factory; `pathFor` by default. */
  readonly paths?: PathFactory | undefined
  /** Most bytes one capture keeps; `MAX_CAPTURE_BYTES` (8 MiB) by default. */
  readonly maxCaptureBytes?: number | undefined
  /** Most bytes `read` returns in one page; 60 KiB by default, well inside the ceiling. */
  readonly maxPageBytes?: number | undefined
}

/** The profile's service. */
export interface Service {
  /** Projects a result onto the ceiling for the caller in context, capturing and marking as the tool's policy says. */
  readonly deliver: (input: DeliverInput) => Effect.Effect<Delivered, never, CurrentCaller>
  /** A collector for one command's deliveries, for as long as the scope lasts. */
  readonly collector: () => Effect.Effect<Collector, never, Scope.Scope>
  /** The policy a tool gets from this profile's table. */
  readonly policyFor: (tool: string) => ToolPolicy
  /** Pages a capture back for the caller in context, after `Access` has passed it. */
  readonly read: (path: string, options?: ReadOptions) => Effect.Effect<ScratchPage, ReadError, CurrentCaller>
}

const defaultEnvelope = (body: string) => ({ output: body })

/** Builds the profile over the body store and a masker. */
export const make = (options: Options = {}): Effect.Effect<Service, never, Bodies | Secrets> =>
  Effect.gen(function*() {
    const bodies = yield* Bodies
    const masker = yield* Secrets
    const table = options.policies ?? defaultPolicies
    const ceiling = options.ceiling ?? defaultCeiling
    const captures = Scratch.make(bodies, {
      paths: options.paths ?? ((tool, owner) => pathFor(tool, owner)),
      maxCaptureBytes: options.maxCaptureBytes ?? MAX_CAPTURE_BYTES,
      maxPageBytes: options.maxPageBytes ?? 60 * 1024,
      maxLines: ceiling.maxLines
    })

    const deliver: Service["deliver"] = (input) =>
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
        const caller = yield* CurrentCaller
        const capture = () =>
          captures.capture({
            caller,
            tool: input.tool,
            owner: input.owner ?? { conversationId: caller.channel, runId: caller.channel },
            raw: Utf8.encode(input.output),
            final: input.final === true
          }, policy.capture === "cumulative" ? input.collector : undefined)
        // what a model sees is masked; masks keep lengths, so the lines stay where they were
        const text = masker.maskText(input.output)
        const size = (body: string) => Utf8.byteLength(JSON.stringify(envelope(body)))
        if (lines.length <= ceiling.maxLines && size(text) <= ceiling.maxBytes) {
          // a command whose capture has begun goes on feeding it, so that it ends whole
          if (policy.capture === "cumulative" && captures.collecting(input.collector)) yield* capture()
          return whole(text)
        }

        const saved = policy.capture === "none" || policy.capture === "never" ? undefined : yield* capture()
        const full = saved !== undefined && "path" in saved && saved.complete ? saved.path : undefined
        // the body's JSON-escaped bytes get what the empty response and the marker leave; the marker
        // is counted at its longest: two ranges, and a line cut to as many bytes as the output has
        let budget = ceiling.maxBytes - size("")
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
        let projected = Projection.projectLines(lines, { strategy: policy.strategy, maxBytes: 0, maxLines: 0 })
        let body = ""
        for (let attempt = 0; attempt < 8; attempt++) {
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
          ...(saved !== undefined && "path" in saved && saved.note !== undefined ? { captureError: saved.note } : {})
        } satisfies Delivered
      })

    return {
      deliver,
      collector: () => captures.collector,
      policyFor: (tool) => policyFor(tool, table),
      read: (path, read) => Effect.flatMap(CurrentCaller, (caller) => captures.read(caller, path, read))
    } satisfies Service
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
export class ToolOutput extends Context.Tag("@spillway/core/ToolOutput")<ToolOutput, Service>() {}

/** The profile as a layer, over the body store and the masker in context. */
export const layer = (options: Options = {}): Layer.Layer<ToolOutput, never, Bodies | Secrets> =>
  Layer.effect(ToolOutput, make(options))
