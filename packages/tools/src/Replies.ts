/**
 * What a model reads when a call fails: the words, masked and bounded. An
 * error quotes what it refused, and a hostile argument must not make the
 * reply as large as itself (a 10 MB file name, a 10 MB working directory),
 * carry a secret back into the transcript, or show where the host keeps
 * its files. Each failure also has a kind from a small, stable set, for
 * programs.
 *
 * @since 0.1.0
 */
import { ErrorText } from "@spillway/core"
import { Schema } from "effect"

/** Longest error text a model is handed, in characters (`ErrorText.MAX_CHARS`). */
export const MAX_ERROR_CHARS = ErrorText.MAX_CHARS

/** How replies are made safe: the masker, and absolute paths shown by a name instead. */
export type Options = Omit<ErrorText.Options, "maxChars">

/** Cuts text longer than `max` characters in the middle, saying how much was left out (`ErrorText.cut`). */
export const cut = ErrorText.cut

/** An error text as a model may read it: paths replaced, cut to `MAX_ERROR_CHARS`, then masked (`ErrorText.safe`). */
export const safe = (text: string, options: Options = {}): string => ErrorText.safe(text, options)

/**
 * What kind of failure a call met, for programs: a small, stable set. A
 * bad argument is `InvalidArguments` (the call does not match the tool's
 * input schema) or `InvalidRequest` (it does, but cannot be carried out as
 * given); a cursor that is not one of this server's is `InvalidCursor`.
 */
export const ErrorKind = Schema.Literal(
  "InvalidArguments",
  "InvalidRequest",
  "InvalidCursor",
  "NotFound",
  "AccessDenied",
  "Refused",
  "Expired",
  "QuotaExceeded",
  "NotReady",
  "TooLarge",
  "SpawnFailed",
  "StoreFailed",
  "Internal"
).annotations({ description: "what kind of failure it was; stable, for programs to act on" })

/** What kind of failure a call met. */
export type ErrorKind = typeof ErrorKind.Type

const kinds: Readonly<Record<string, ErrorKind>> = {
  InvalidArguments: "InvalidArguments",
  MalformedOutput: "InvalidArguments",
  InvalidRequest: "InvalidRequest",
  GrepPatternError: "InvalidRequest",
  BatchTooLarge: "InvalidRequest",
  CursorError: "InvalidCursor",
  NotFound: "NotFound",
  AccessDenied: "AccessDenied",
  SpillPolicyRefused: "Refused",
  AdmissionRefused: "Refused",
  Expired: "Expired",
  QuotaExceeded: "QuotaExceeded",
  AgentRunning: "NotReady",
  EnvelopeTooSmall: "TooLarge",
  SpawnFailed: "SpawnFailed",
  StoreFailed: "StoreFailed"
}

/** The kind of a failure from the tag of the error behind it; `Internal` for anything unforeseen. */
export const kindOf = (tag: string): ErrorKind => (Object.hasOwn(kinds, tag) ? kinds[tag]! : "Internal")

/** The structured content of a failed call: its kind, and the same words a model reads. */
export const ErrorFacts = Schema.Struct({
  error: Schema.Struct({
    kind: ErrorKind,
    message: Schema.String.annotations({ description: "what was wrong and what to do, bounded and masked as the text is" })
  })
}).annotations({ description: "a failed call (isError): what kind of failure, and what to do" })

/** The structured content of a failed call. */
export type ErrorFacts = typeof ErrorFacts.Type
