/**
 * One way to turn a failure into words for a wire: the command's standard
 * error and `--json`, an MCP reply, the web view's pages and API, the host's
 * RPC errors. The words are the failure's own message (a typed error's,
 * an `Error`'s, or the first line of a defect), with absolute paths shown by
 * a name, cut to a bound (a hostile argument an error quotes must not make
 * the reply as large as itself), then masked: an error can quote a secret
 * (a name, a command, a driver's message), and none reaches a wire unmasked.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Option } from "effect"
import * as Split from "./internal/split.js"
import { Secrets } from "./Secrets.js"
import type { Masker } from "./Secrets.js"
import * as Utf8 from "./Utf8.js"

/** Longest error text handed to a wire, in characters. */
export const MAX_CHARS = 2_000

/** How error words are made safe: the masker, and absolute paths shown by a name instead. */
export interface Options {
  readonly masker?: Masker | undefined
  /** Absolute paths and what to show instead, such as the output directory shown as "the output directory". */
  readonly paths?: ReadonlyArray<readonly [path: string, shownAs: string]> | undefined
  /** Longest text, in characters; `MAX_CHARS` by default. */
  readonly maxChars?: number | undefined
}

/** A failure as a wire carries it: its kind (a typed error's tag, `Error` otherwise) and its words. */
export interface Described {
  readonly tag: string
  readonly message: string
}

/**
 * Cuts text longer than `max` characters (code points) in the middle, at
 * whole code points, saying how many were left out: the start keeps seven
 * tenths of what is kept, the end the rest.
 */
export const cut = (text: string, max: number = MAX_CHARS): string => {
  // a string is never shorter in UTF-16 units than in code points: one that fits in units is not counted
  if (text.length <= max) return text
  const codePoints = Utf8.codePointLength(text)
  if (codePoints <= max) return text
  return Split.text(text, {
    keep: Math.max(0, max - 60),
    headShare: 0.7,
    codePoints,
    marker: (omitted) => ` [… ${omitted} characters left out …] `
  }).text
}

/** Text as a wire may carry it: paths replaced, cut to the bound, then masked. */
export const safe = (text: string, options: Options = {}): string => {
  let out = text
  for (const [path, shownAs] of options.paths ?? []) if (path.length > 1) out = out.split(path).join(shownAs)
  out = cut(out, options.maxChars)
  return options.masker !== undefined ? options.masker.maskText(out) : out
}

/** Codes of a file system error that mean the disk has no room left (or the user's quota none). */
const DISK_FULL = new Set(["ENOSPC", "EDQUOT"])

/**
 * A failure's own words, unmasked: its `message` when it has one, else what
 * it prints as; a file system's "no space left" is led by what it means.
 */
export const messageOf = (error: unknown): string => {
  const e = error as { readonly message?: unknown; readonly code?: unknown } | null | undefined
  if (typeof e === "object" && e !== null && typeof e.message === "string" && e.message !== "") {
    return typeof e.code === "string" && DISK_FULL.has(e.code) ? `the disk is full (${e.message}); free some space on it` : e.message
  }
  return String(error)
}

/** A failure's kind: a typed error's tag, or `Error`. */
export const tagOf = (error: unknown): string => {
  const e = error as { readonly _tag?: unknown } | null | undefined
  return typeof e === "object" && e !== null && typeof e._tag === "string" ? e._tag : "Error"
}

/** A failure's kind and words, made safe. */
export const describe = (error: unknown, options: Options = {}): Described => ({
  tag: tagOf(error),
  message: safe(messageOf(error), options)
})

/**
 * What a cause says, made safe: its first failure, or for a defect or an
 * interruption the first line of its account (`Internal` as its kind).
 */
export const ofCause = (cause: Cause.Cause<unknown>, options: Options = {}): Described => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return describe(failure.value, options)
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) return { tag: "Internal", message: safe(messageOf(defect.value).split("\n")[0] ?? "", options) }
  return { tag: "Internal", message: safe(Cause.pretty(cause).split("\n")[0] ?? "interrupted", options) }
}

/** `describe` with the masker of the `Secrets` service in context, when there is one (and the options' otherwise). */
export const describeMasked = (error: unknown, options: Omit<Options, "masker"> = {}): Effect.Effect<Described> =>
  Effect.map(Effect.serviceOption(Secrets), (masker) => describe(error, { ...options, masker: Option.getOrUndefined(masker) }))

/** `ofCause` with the masker of the `Secrets` service in context, when there is one. */
export const ofCauseMasked = (cause: Cause.Cause<unknown>, options: Omit<Options, "masker"> = {}): Effect.Effect<Described> =>
  Effect.map(Effect.serviceOption(Secrets), (masker) => ofCause(cause, { ...options, masker: Option.getOrUndefined(masker) }))
