/**
 * Secret masking: every credential match is replaced by `*` repeated for
 * the same number of UTF-8 bytes, over a whole text or as a stream. Pattern
 * rules cover the documented formats of providers' credentials (a table of
 * prefixes and shapes), private key blocks bounded to their body lines,
 * JWTs, Authorization headers, URL and `curl -u` passwords, and values
 * assigned to keys that name a credential in any common syntax, gated by
 * checks that look at the key and the value; a host can add literal secrets
 * it knows (masked also in the base64, URL, JSON and shell forms tools print
 * them in). Masking works on bytes, so it keeps byte offsets and is safe on
 * invalid UTF-8 and binary input.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import * as Env from "./internal/secrets/env.js"
import { MIN_KNOWN_VALUE_BYTES } from "./internal/secrets/knownValues.js"
import { buildMasker, type Built, DEFAULT_MAX_HELD_BYTES } from "./internal/secrets/masker.js"
import * as rules from "./internal/secrets/rules.js"
import { CONTEXT_BYTES } from "./internal/secrets/stream.js"

/**
 * A pattern rule: what a credential looks like and which part of a match
 * to mask. Patterns see the latin1 view of the bytes (one character per
 * byte), so they should be ASCII, avoid `\s` and `.`, never match across a
 * line break and bound every repetition so a match stays under 8 KiB.
 */
export interface SecretRule {
  /** A stable id, such as `github-token`. */
  readonly id: string
  /** What the rule finds, for people. */
  readonly description: string
  /** The pattern, in latin1 space; compiled with the rule's own flags plus the ones the masker needs. */
  readonly pattern: RegExp
  /** The capture group to mask; the whole match when absent. */
  readonly group?: number
  /** Shannon entropy, in bits per character, the masked value must reach (for generic rules). */
  readonly minEntropy?: number
  /** Returns true for a look-alike to keep visible (a commit hash, a UUID, an integrity string...). */
  readonly allow?: (value: string) => boolean
  /**
   * Literal text, two characters or more, that every match starts with
   * (compared ignoring case when the pattern has the `i` flag). The masker
   * runs the pattern only where an anchor occurs, which keeps masking fast;
   * a rule without anchors is run over the whole text.
   */
  readonly anchors?: ReadonlyArray<string>
  /**
   * Finds what to mask where `pattern` matched, for rules a pattern alone
   * cannot say: gets the line the match is in (latin1, at most 8 KiB either
   * side of the match) and where in it the match starts, and returns the
   * `[start, end)` in that line to mask, or undefined for nothing. `group`,
   * `minEntropy` and `allow` do not apply.
   */
  readonly locate?: (line: string, at: number) => readonly [number, number] | undefined
  /**
   * Makes this a block rule: `pattern` is the opening marker, and
   * everything after it up to the next match of `end` (or the end of the
   * text) is masked, keeping line breaks; both markers stay visible, and
   * `minEntropy` does not apply, nor `group` and `allow` unless the rule has
   * a `body`.
   */
  readonly end?: RegExp
  /**
   * For a block rule: what a line of its body looks like, tested on each
   * whole line after the opening marker's line. The block then ends at the
   * first line that holds `end`, or before the first line that neither
   * matches nor holds `end`, or after `maxLines` lines; only matching lines
   * (and base64 before `end` on its line) are masked. With `group`, only
   * that group of each body line is masked (a value after its key), unless
   * `allow` keeps it.
   */
  readonly body?: RegExp
  /** For a block rule with `body`: the most lines a block masks; 4096 when absent. */
  readonly maxLines?: number
  /** For a block rule with `body`: the longest body line, in bytes (a longer one ends the block); 512 when absent, 8192 at most. */
  readonly maxLineBytes?: number
}

/** A literal secret registered under a name, so errors and warnings can say which one. */
export interface KnownValue {
  readonly name: string
  readonly value: string
}

/** How to build a masker. */
export interface MaskerOptions {
  /** The pattern rules; `defaultRules` when absent. */
  readonly rules?: ReadonlyArray<SecretRule>
  /** Literal secrets a host registers, each at least 8 UTF-8 bytes and without line breaks. */
  readonly knownValues?: ReadonlyArray<string | KnownValue>
  /** Cap on the bytes a stream holds back waiting for the end of a line; 65536 when absent. */
  readonly maxHeldBytes?: number
}

/** Masks secrets in whole inputs and streams; the output always has the input's byte length. */
export interface Masker {
  /** Masks a whole input; the result has the same length. */
  readonly maskBytes: (bytes: Uint8Array) => Uint8Array
  /** Encodes as UTF-8, masks and decodes; the result has the same UTF-8 byte length. */
  readonly maskText: (text: string) => string
  /**
   * Starts a fresh streaming state; with `watch`, also reports where the
   * watched literals begin in the output, found in the same pass over the bytes.
   */
  readonly stream: (watch?: Watch, options?: StreamOptions) => StreamMasker
  /**
   * Goes on with a stream from a checkpoint another stream took, as if it
   * had been fed all along: the masker must have been built with the same
   * rules and known values (on another thread, say).
   */
  readonly resume: (checkpoint: StreamCheckpoint, watch?: Watch, options?: StreamOptions) => StreamMasker
}

/** How a stream hands out what it masked. */
export interface StreamOptions {
  /**
   * Build every window in one buffer the stream keeps, instead of a fresh
   * one each time: what `push` and `end` return is then good only until the
   * next call on the stream, and a caller copies what it keeps. For a
   * caller that stores output as it goes (the body store does), this saves
   * allocating and collecting a buffer per chunk. False by default.
   */
  readonly reuseOutput?: boolean | undefined
  /**
   * Where to build each window instead (it implies `reuseOutput`): called
   * once per window with the bytes it needs (up to 15 more than the
   * window, so that it can start where copying into it is fast), it
   * returns a buffer at least that long, and what `push` or `end` returns
   * then lies in that buffer.
   * The stream holds on to nothing in it once the call returns, so a
   * caller that keeps the output may keep the buffer itself and hand out
   * another one next time, instead of copying. Windows over 4 MiB are
   * built in memory of their own.
   */
  readonly into?: ((length: number) => Uint8Array) | undefined
}

/**
 * Where a stream stands after the last whole line it emitted: plain data,
 * so it can cross to another thread or process.
 */
export interface StreamCheckpoint {
  /** Private key blocks still open, by the index of their rule in the masker's rules, with the body lines masked so far. */
  readonly blocks: ReadonlyArray<{
    readonly rule: number
    readonly lines: number
    /** The log prefix the block's lines carry, learned from its opening line. */
    readonly prefix?: string | undefined
    /** Lines of the same log passed over since its last body line. */
    readonly skipped?: number | undefined
  }>
  /** Bytes emitted so far. */
  readonly emitted: number
  /** The bytes held back (the line in progress), not yet emitted. */
  readonly held: Uint8Array
}

/**
 * Literals to report the positions of while masking a stream: each position
 * (a byte offset in the output, in order, each once) goes to `onMark` before
 * `push` or `end` returns the bytes it falls in. Literals shorter than two
 * bytes are never reported.
 */
export interface Watch {
  readonly literals: ReadonlyArray<string>
  readonly onMark: (position: number) => void
}

/** Masks a byte stream chunk by chunk; no part of a secret split across chunks is ever emitted. */
export interface StreamMasker {
  /** Takes the next chunk and returns the bytes now safe to emit, masked. */
  readonly push: (chunk: Uint8Array) => Uint8Array
  /** Flushes everything still held, masked as at the end of a whole text; the stream can then start over. */
  readonly end: () => Uint8Array
  /** How many bytes are held back right now. */
  readonly heldBytes: () => number
  /** Where the stream stands, to `resume` it elsewhere; undefined in the middle of cutting a long line, where there is no clean point. */
  readonly checkpoint: () => StreamCheckpoint | undefined
}

/** A known value was too short to register: masking it would let anyone confirm short guesses. */
export class SecretTooShort extends Schema.TaggedError<SecretTooShort>()("SecretTooShort", {
  name: Schema.optional(Schema.String),
  bytes: Schema.Number,
  minimum: Schema.Number
}) {
  override get message() {
    const what = this.name === undefined ? "a known secret value" : `the known secret value of ${this.name}`
    return `${what} is ${this.bytes} bytes, under the minimum of ${this.minimum}: masking short values would let output confirm guesses. Register only values of ${this.minimum} bytes or more (rotate a short secret to a longer one) and leave this one out.`
  }
}

/** A known value cannot be registered as it is, for example because it spans several lines. */
export class InvalidSecret extends Schema.TaggedError<InvalidSecret>()("InvalidSecret", {
  reason: Schema.String
}) {
  override get message() {
    return `cannot register a known secret value: ${this.reason}.`
  }
}

/** The built-in rules: provider token formats, private key blocks, JWTs, auth headers, URL and `-u` passwords, and assignments to credential keys. */
export const defaultRules: ReadonlyArray<SecretRule> = rules.defaultRules

/** Smallest known value accepted, in UTF-8 bytes. */
export const MIN_SECRET_BYTES = MIN_KNOWN_VALUE_BYTES

/** Default cap on what a stream holds back, in bytes. */
export const DEFAULT_MAX_HELD = DEFAULT_MAX_HELD_BYTES

/** Original bytes a stream keeps before held text that starts inside a line; every non-block match is shorter. */
export const STREAM_CONTEXT_BYTES = CONTEXT_BYTES

const toError = (built: Extract<Built, { _tag: "Refused" }>): SecretTooShort | InvalidSecret => {
  const { name, problem } = built.refusal
  if (problem._tag === "TooShort") {
    return new SecretTooShort({
      ...(name === undefined ? {} : { name }),
      bytes: problem.bytes,
      minimum: MIN_KNOWN_VALUE_BYTES
    })
  }
  return new InvalidSecret({ reason: name === undefined ? problem.reason : `${name}: ${problem.reason}` })
}

/** Builds a masker; fails when a known value is too short or cannot be registered. */
export const makeMasker = (options?: MaskerOptions): Effect.Effect<Masker, SecretTooShort | InvalidSecret> =>
  Effect.suspend(() => {
    const built = buildMasker(options)
    return built._tag === "Built" ? Effect.succeed(built.masker) : Effect.fail(toError(built))
  })

/** Builds a masker synchronously; throws `SecretTooShort` or `InvalidSecret` as `makeMasker` fails. */
export const unsafeMakeMasker = (options?: MaskerOptions): Masker => {
  const built = buildMasker(options)
  if (built._tag === "Refused") throw toError(built)
  return built.masker
}

/** An environment variable that was not registered as a known value, and why. */
export type SkippedEnvValue = Env.SkippedEnvValue

/**
 * The values of environment variables whose names contain KEY, TOKEN,
 * SECRET or PASSWORD (any case), ready to register as known values. Empty
 * values are skipped, a multi-line value gives one entry per non-blank
 * line, and values a masker would refuse (under 8 bytes) are left out; see
 * `skippedValuesFromEnv` for those.
 */
export const knownValuesFromEnv: (env: Record<string, string | undefined>) => ReadonlyArray<KnownValue> = Env.knownValuesFromEnv

/** The secret-looking environment values `knownValuesFromEnv` left out (too short, or refused), without the values, so a host can warn. */
export const skippedValuesFromEnv: (env: Record<string, string | undefined>) => ReadonlyArray<SkippedEnvValue> = Env.skippedValuesFromEnv

/** The masker as a service. */
export class Secrets extends Context.Tag("@spillway/core/Secrets")<Secrets, Masker>() {}

/** Provides `Secrets` from the given options. */
export const layer = (options?: MaskerOptions): Layer.Layer<Secrets, SecretTooShort | InvalidSecret> =>
  Layer.effect(Secrets, makeMasker(options))

/** A masker built at its first use, so a program that never masks never pays for compiling the rules. */
export const lazy = (build: () => Masker): Masker => {
  let built: Masker | undefined
  const get = () => (built ??= build())
  return {
    maskBytes: (bytes) => get().maskBytes(bytes),
    maskText: (text) => get().maskText(text),
    stream: (watch, options) => get().stream(watch, options),
    resume: (checkpoint, watch, options) => get().resume(checkpoint, watch, options)
  }
}

/**
 * Provides `Secrets` with the default rules and the secret-looking values of
 * `process.env` (those of 8 bytes or more), built at the first use.
 */
export const layerFromEnv: Layer.Layer<Secrets> = Layer.sync(
  Secrets,
  () => lazy(() => unsafeMakeMasker({ knownValues: knownValuesFromEnv(process.env) }))
)
