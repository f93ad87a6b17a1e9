import { Delivery, Envelope, Utf8 } from "@spillway/core"
import { Either } from "effect"
import type { WaitFacts, WaitResult, WaitRow } from "../Agents.js"
import { isAgentId } from "./state.js"

/** The visible notice of an interrupted wait. @internal */
export const NOTICE = "A parent message interrupted this wait; the agents go on running. Wait again or fetch their results later."

/** Characters the parent message that interrupted a wait may take in the serialized result. @internal */
export const REASON_CHARS = 200

/** Characters a row's reason (a lifetime, a lost or expired result) may take in the serialized result. @internal */
export const ROW_REASON_CHARS = 80

/** Longest id a wait or a read takes, in characters; agent ids are far shorter. @internal */
export const MAX_ID_CHARS = 256

/** The most iterations an agent's count shows; more are not counted. @internal */
export const MAX_ITERATIONS = 999_999_999

/**
 * More bytes than any agent body can have: a body is the UTF-8 of one
 * JavaScript string, under 2^30 code units of at most 3 bytes each. @internal
 */
export const MAX_BODY_BYTES = 9_999_999_999

/** A row's reasons. @internal */
export const reasons = {
  lifetime: (seconds: number) => `stopped after its lifetime of ${seconds} seconds`,
  shutDown: "stopped when its runtime shut down",
  lost: "its body was not kept",
  expired: "its result has expired",
  gone: "its result is no longer kept",
  missing: "no agent with this id was started here"
} as const

/** Code points a string takes once serialized as a JSON string, quotes aside. */
const serializedSize = (text: string) => Envelope.sizeOf(JSON.stringify(text)) - 2

/**
 * A text cut so that, serialized as a JSON string (escapes counted), it
 * takes at most `max` code points: the whole text when it fits, otherwise
 * its start in whole code points and a marker saying how long it was. @internal
 */
export const cut = (text: string, max: number = REASON_CHARS): string => {
  if (serializedSize(text) <= max) return text
  const marker = `… [cut: ${Utf8.codePointLength(text)} characters in all]`
  const fitted = Envelope.fitText(text, (part) => `${part}${marker}`, { limit: max + 2 })
  return Either.isRight(fitted) ? fitted.right.value : Utf8.takeCodePoints(marker, max)
}

/** What a row is made from before its preview is cut to a share. @internal */
export interface Entry {
  readonly agent_id: string
  readonly name: string
  readonly status: WaitRow["status"]
  readonly iterations: number
  readonly reason?: string | undefined
  /** The start of the body, at least the preview ceiling (and 3 bytes more, to find a boundary) when it is that long. */
  readonly head?: Uint8Array | undefined
  readonly body_bytes: number
  readonly fetch?: string | undefined
}

/** The row of an entry with at most `share` bytes of preview, cut at a code point. @internal */
export const row = (entry: Entry, share: number): WaitRow => {
  const head = entry.head ?? new Uint8Array(0)
  const end = Utf8.byteBoundary(head, Math.min(share, entry.body_bytes, head.length))
  return {
    agent_id: entry.agent_id,
    name: entry.name,
    status: entry.status,
    iterations: entry.iterations,
    ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
    preview: Utf8.decodeLossy(head.subarray(0, end)),
    preview_bytes: end,
    body_bytes: entry.body_bytes,
    ...(entry.fetch !== undefined ? { fetch: entry.fetch } : {})
  }
}

/** An id as the text shows it: as given when it has an agent id's shape, JSON-quoted otherwise, so it cannot pass for other lines. */
const shownId = (id: string) => (isAgentId(id) ? id : JSON.stringify(id))

/** The roster as a model reads it. @internal */
export const render = (rows: ReadonlyArray<WaitRow>, timedOut: boolean, notice: string | undefined): string =>
  [
    ...(notice !== undefined ? [notice] : []),
    ...rows.map((r) =>
      [
        r.status === "not_found" && r.name === ""
          ? `${shownId(r.agent_id)}: not_found, ${r.reason ?? "no agent with this id was started here"}`
          : `${shownId(r.agent_id)} (${r.name}): ${r.status}, ${r.iterations} iterations${r.reason !== undefined ? `, ${r.reason}` : ""}`,
        ...(r.preview !== "" ? [`  ${r.preview.replace(/\n/g, "\n  ")}`] : []),
        ...(r.fetch !== undefined ? [`  complete output (${r.body_bytes} bytes): ${r.fetch}`] : [])
      ].join("\n")
    ),
    ...(timedOut ? ["The wait timed out; agents still running go on."] : [])
  ].join("\n")

/** How a wait ended, for its result. @internal */
export interface Ending {
  readonly timedOut: boolean
  /** The parent message, masked and cut to `REASON_CHARS`, when one interrupted the wait. */
  readonly interrupt?: string | undefined
  /** Ids whose row comes from a kept result body. */
  readonly durable: ReadonlyArray<string>
}

/** A wait as delivered: the roster as the text a model reads, the facts without the previews and calls the roster shows. @internal */
export const delivered = ({ text, agents, ...fields }: WaitResult): Delivery.Delivered<WaitFacts> => ({
  text,
  facts: { agents: agents.map(({ fetch: _fetch, preview: _preview, ...row }) => row), ...fields }
})

/** What the budget counts of a result: the result as delivered, text and facts together. @internal */
export const measured = (result: WaitResult): string => Delivery.serialize(delivered(result))

/** The result fitted to a budget: the largest preview share up to `maxShare` for which the result as delivered fits. @internal */
export const fit = (entries: ReadonlyArray<Entry>, maxShare: number, ending: Ending, budget: Envelope.Budget) =>
  Envelope.fitCount(0, maxShare, (share) => result(entries, share, ending), budget, measured)

/** The whole result, every preview cut to `share` bytes. @internal */
export const result = (entries: ReadonlyArray<Entry>, share: number, ending: Ending): WaitResult => {
  const rows = entries.map((e) => row(e, share))
  const notice = ending.interrupt !== undefined ? NOTICE : undefined
  return {
    text: render(rows, ending.timedOut, notice),
    agents: rows,
    timed_out: ending.timedOut,
    ...(notice !== undefined ? { notice } : {}),
    audit: {
      interrupted: ending.interrupt !== undefined,
      ...(ending.interrupt !== undefined ? { interrupt_reason: ending.interrupt } : {}),
      durable_results: ending.durable
    }
  }
}

/** The row of an id that names nothing; it stays one until the wait ends. @internal */
export const missing = (id: string): Entry => ({ agent_id: id, name: "", status: "not_found", iterations: 0, body_bytes: 0 })

/**
 * The widest row an agent can have once the wait ends, with what is known
 * of it now: its name, the longest status, the most iterations it can show
 * (`iterations`, when they can no longer change), a reason of `reasonChars`,
 * its body's size when known (the most there can be otherwise), and its
 * fetch line. @internal
 */
export const widest = (id: string, known: {
  readonly name: string
  readonly iterations: number
  readonly reasonChars: number
  readonly bodyBytes: number
  readonly fetch: string
}): Entry => ({
  agent_id: id,
  name: known.name,
  status: "not_found",
  iterations: known.iterations,
  reason: "x".repeat(known.reasonChars),
  body_bytes: known.bodyBytes,
  fetch: known.fetch
})

/**
 * How many of `entries` (widest rows) fit one result with no preview, the
 * notice, a timeout line and an interruption reason of `REASON_CHARS` all
 * at once: what a wait reserves before it starts. Counts no further than
 * can possibly fit, so a huge batch is measured quickly. @internal
 */
export const fits = (entries: ReadonlyArray<Entry>, budget: Envelope.Budget): number => {
  // a row's field names alone take more than 80 characters
  const most = Math.min(entries.length, Math.floor(budget.limit / 80))
  const skeleton = (n: number) =>
    result(entries.slice(0, n), 0, { timedOut: true, interrupt: "x".repeat(REASON_CHARS), durable: entries.slice(0, n).map((e) => e.agent_id) })
  const fitted = Envelope.fitCount(0, most, skeleton, budget, measured)
  return Either.isRight(fitted) ? fitted.right.count : 0
}
