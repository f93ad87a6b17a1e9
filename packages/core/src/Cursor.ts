/**
 * Continuation cursors for paged reads of retained output (tool output,
 * process spools, agent results). A cursor is handed to a model, which passes
 * it back unchanged to get the next page; the signature makes sure the model
 * cannot forge one, alter one, or pass one tool's cursor to another tool.
 *
 * Format: `spw1.<payload>.<tag>`, where `payload` is the base64url (unpadded)
 * of the compact JSON array `[tool, evidence, offset, unit, generation?]`
 * (unit `0` for code points, `1` for bytes, `2` for line numbers) and `tag` is the base64url of
 * HMAC-SHA256(key, "spw1." + payload), cut to its first 16 bytes. A 128-bit
 * tag leaves a forger one chance in 2^128 per try, and every try is a round
 * trip through the host, so the cut costs nothing that matters while keeping
 * cursors short. The version prefix lets later formats change everything
 * after it.
 *
 * Cursors are signed, not encrypted: anyone holding one can read its tool,
 * evidence id and offset, so nothing secret (and no file system path) goes
 * into them. Whether the evidence still exists or has expired is for the
 * store that holds it to say; this module only vouches that the host issued
 * the cursor, for this tool, in this unit.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import { equalConstantTime, fromBase64url, randomBytes, toBase64url } from "./internal/bytes.js"
import { hmacSha256 } from "./internal/sha256.js"

/** The unit a cursor's offset counts: code points, bytes, or (1-based) line numbers. */
export type Unit = "code_point" | "byte" | "line"

/** What a cursor says: which tool issued it, which evidence, where to continue, in what unit. */
export interface Position {
  /** The tool that issued the cursor and alone may take it back, e.g. `get_tool_output`; 1 to 64 of `[A-Za-z0-9._:-]`. */
  readonly tool: string
  /** An evidence, job or agent id; 1 to 128 of `[A-Za-z0-9._:-]`. */
  readonly evidence: string
  /** Where to continue, in `unit`s; a non-negative safe integer. */
  readonly offset: number
  readonly unit: Unit
  /** A random job generation that binds a process cursor to one run; 1 to 64 of `[A-Za-z0-9._:-]`. */
  readonly generation?: string
}

/** The key cursors are signed with, as a service, so tests and hosts provide their own. */
export class CursorKey extends Context.Tag("@spillway/core/CursorKey")<CursorKey, { readonly key: Uint8Array }>() {}

/** Shortest key accepted, in bytes: as long as the HMAC-SHA256 output. */
export const MIN_KEY_BYTES = 32

/** Longest cursor `decode` looks at, in characters; anything longer is refused unread. */
export const MAX_CURSOR_LENGTH = 1024

/** The version prefix of cursors this module issues. */
export const VERSION = "spw1"

/** Bytes of the HMAC kept in a cursor (a 128-bit tag). */
const TAG_BYTES = 16

const shortKey = (key: Uint8Array) =>
  `cursor key is ${key.length} bytes; it must be at least ${MIN_KEY_BYTES} random bytes (e.g. crypto.randomBytes(32))`

/**
 * The signing key as a layer. A key shorter than `MIN_KEY_BYTES` is a host
 * configuration bug, so building the layer dies with a message saying so.
 * The key is copied, so later changes to the caller's array do not reach it.
 */
export const layerKey = (key: Uint8Array): Layer.Layer<CursorKey> =>
  Layer.effect(
    CursorKey,
    Effect.suspend(() =>
      key.length < MIN_KEY_BYTES
        ? Effect.dieMessage(shortKey(key))
        : Effect.succeed({ key: Uint8Array.from(key) })
    )
  )

/**
 * A fresh random 32-byte key, made when the layer is built. Cursors signed
 * with it stop working when the process restarts (they decode as "tampered");
 * hosts whose cursors must survive a restart provide a stored key with `layerKey`.
 */
export const layerRandomKey: Layer.Layer<CursorKey> = Layer.sync(
  CursorKey,
  () => ({ key: randomBytes(MIN_KEY_BYTES) })
)

/** Why a cursor was refused. */
export class CursorError extends Schema.TaggedError<CursorError>()("CursorError", {
  reason: Schema.Literal("malformed", "version", "tampered", "foreign-tool", "unit"),
  tool: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    switch (this.reason) {
      case "malformed":
        return `this is not a cursor ${this.tool} can read (${this.detail}); pass the cursor from this tool's last result exactly as given, or start again without a cursor`
      case "version":
        return `this cursor is in a format ${this.tool} does not read (${this.detail}); start again without a cursor to get a current one`
      case "tampered":
        return `this cursor was changed or was issued by another server or session (${this.detail}); pass the cursor from ${this.tool}'s last result exactly as given, or start again without a cursor`
      case "foreign-tool":
        return `this cursor was not issued by ${this.tool} (${this.detail}); pass the cursor from this tool's last result`
      case "unit":
        return `this cursor counts a different unit than this request (${this.detail}); pass the cursor from ${this.tool}'s last result for the same kind of read`
    }
  }
}

const idPattern = (max: number) => new RegExp(`^[A-Za-z0-9._:-]{1,${max}}$`)
const toolPattern = idPattern(64)
const evidencePattern = idPattern(128)
const generationPattern = idPattern(64)

const unitCodes: Readonly<Record<Unit, number>> = { code_point: 0, byte: 1, line: 2 }
const unitWords: Readonly<Record<Unit, string>> = { code_point: "code points", byte: "bytes", line: "lines" }
const unitOf = (code: unknown): Unit | undefined => code === 0 ? "code_point" : code === 1 ? "byte" : code === 2 ? "line" : undefined

/**
 * The first thing wrong with a position, or undefined when `encode` will take
 * it. Callers holding ids from elsewhere can check them here first.
 */
export const positionProblem = (position: Position): string | undefined => {
  if (typeof position.tool !== "string" || !toolPattern.test(position.tool)) {
    return "tool must be 1 to 64 characters of [A-Za-z0-9._:-]"
  }
  if (typeof position.evidence !== "string" || !evidencePattern.test(position.evidence)) {
    return "evidence must be 1 to 128 characters of [A-Za-z0-9._:-]"
  }
  if (!Number.isSafeInteger(position.offset) || position.offset < 0) {
    return "offset must be a non-negative safe integer"
  }
  if (position.unit !== "code_point" && position.unit !== "byte" && position.unit !== "line") {
    return "unit must be \"code_point\", \"byte\" or \"line\""
  }
  if (
    position.generation !== undefined &&
    (typeof position.generation !== "string" || !generationPattern.test(position.generation))
  ) {
    return "generation must be 1 to 64 characters of [A-Za-z0-9._:-]"
  }
  return undefined
}

const utf8 = new TextEncoder()

const sign = (key: Uint8Array, payload: string): Uint8Array =>
  hmacSha256(key, utf8.encode(`${VERSION}.${payload}`)).subarray(0, TAG_BYTES)

const payloadOf = (position: Position): string =>
  JSON.stringify(
    position.generation === undefined
      ? [position.tool, position.evidence, position.offset, unitCodes[position.unit]]
      : [position.tool, position.evidence, position.offset, unitCodes[position.unit], position.generation]
  )

/**
 * Signs a position into a cursor. Positions come from the host, never from a
 * model, so one `positionProblem` refuses (an evidence id with a `/`, a
 * negative offset) is a bug in the caller and dies with what was wrong.
 */
export const encode = (position: Position): Effect.Effect<string, never, CursorKey> =>
  Effect.flatMap(CursorKey, ({ key }) => Effect.sync(() => encodeWith(key, position)))

/**
 * The pure codec behind `encode`: signs a position with a key. A short key
 * or a position `positionProblem` refuses is a bug in the caller, and throws
 * saying what was wrong.
 */
export const encodeWith = (key: Uint8Array, position: Position): string => {
  if (key.length < MIN_KEY_BYTES) throw new Error(shortKey(key))
  const problem = positionProblem(position)
  if (problem !== undefined) throw new Error(`cannot encode cursor position: ${problem}`)
  const payload = toBase64url(utf8.encode(payloadOf({ ...position, offset: position.offset + 0 })))
  return `${VERSION}.${payload}.${toBase64url(sign(key, payload))}`
}

/** The pure codec behind `decode`: checks a cursor against a key and reads its position, or says why not. */
export const decodeWith = (
  key: Uint8Array,
  cursor: string,
  expect: { readonly tool: string; readonly unit?: Unit }
): Either.Either<Position, CursorError> => {
  if (key.length < MIN_KEY_BYTES) throw new Error(shortKey(key))
  return Either.mapLeft(check(key, cursor, expect), ([reason, detail]) => new CursorError({ reason, tool: expect.tool, detail }))
}

/** A codec bound to one key and one tool and unit: what every paged view holds. */
export interface Codec {
  readonly encode: (evidence: string, offset: number, generation?: string) => string
  readonly decode: (cursor: string) => Either.Either<Position, CursorError>
}

/** The codec for one tool's cursors in one unit, under a key. */
export const codec = (key: Uint8Array, tool: string, unit: Unit): Codec => ({
  encode: (evidence, offset, generation) =>
    encodeWith(key, generation === undefined ? { tool, evidence, offset, unit } : { tool, evidence, offset, unit, generation }),
  decode: (cursor) => decodeWith(key, cursor, { tool, unit })
})

/** Reads a signed payload back into a position; undefined when it is not one `encode` writes. */
const parsePayload = (bytes: Uint8Array): Position | undefined => {
  let text: string
  let value: unknown
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!Array.isArray(value) || (value.length !== 4 && value.length !== 5)) return undefined
  const [tool, evidence, offset, unitCode, generation] = value as Array<unknown>
  const unit = unitOf(unitCode)
  if (typeof tool !== "string" || typeof evidence !== "string" || typeof offset !== "number" || unit === undefined) {
    return undefined
  }
  if (value.length === 5 && typeof generation !== "string") return undefined
  const position: Position = typeof generation === "string"
    ? { tool, evidence, offset, unit, generation }
    : { tool, evidence, offset, unit }
  // Only the exact text `encode` writes for these fields is accepted.
  if (positionProblem(position) !== undefined || payloadOf(position) !== text) return undefined
  return position
}

/**
 * Checks and reads a cursor a model passed back to `expect.tool`. The
 * signature is checked before the payload is parsed, so an altered cursor
 * never reaches the parser. Refusals: "malformed" (not a string, empty, over
 * `MAX_CURSOR_LENGTH`, cut short, bad encoding), "version" (a `spw` prefix
 * other than `spw1`), "tampered" (the signature does not match: altered, or
 * signed with another key), "foreign-tool" (issued by another tool) and
 * "unit" (counts another unit than `expect.unit`, when given). Whether the
 * evidence still exists or has expired is for the caller's store to check.
 */
export const decode = (
  cursor: string,
  expect: { readonly tool: string; readonly unit?: Unit }
): Effect.Effect<Position, CursorError, CursorKey> =>
  Effect.flatMap(CursorKey, ({ key }) => Effect.suspend(() => decodeWith(key, cursor, expect)))

/** The checks behind `decode`, in order; a refusal is its reason and detail. */
const check = (
  key: Uint8Array,
  cursor: unknown,
  expect: { readonly tool: string; readonly unit?: Unit }
): Either.Either<Position, readonly [CursorError["reason"], string]> => {
  const refuse = (reason: CursorError["reason"], detail: string) => Either.left([reason, detail] as const)
  if (typeof cursor !== "string") return refuse("malformed", "a cursor is a string")
  if (cursor.length === 0) return refuse("malformed", "the cursor is empty")
  if (cursor.length > MAX_CURSOR_LENGTH) {
    return refuse("malformed", `the cursor is longer than ${MAX_CURSOR_LENGTH} characters`)
  }
  const parts = cursor.split(".")
  if (parts[0] !== VERSION && parts.length > 1 && parts[0].startsWith("spw")) {
    return refuse("version", `version ${JSON.stringify(parts[0].slice(0, 16))} is not ${VERSION}`)
  }
  if (parts[0] !== VERSION || parts.length !== 3) {
    return refuse("malformed", `a cursor has the form ${VERSION}.<payload>.<signature>`)
  }
  const [, payload, tagText] = parts
  const payloadBytes = fromBase64url(payload)
  const tag = fromBase64url(tagText)
  if (payloadBytes === undefined || tag === undefined || tag.length !== TAG_BYTES) {
    return refuse("malformed", "the cursor is cut short or not in base64url")
  }
  if (!equalConstantTime(tag, sign(key, payload))) return refuse("tampered", "its signature does not match")
  const position = parsePayload(payloadBytes)
  if (position === undefined) return refuse("malformed", "its payload is not a cursor position")
  if (position.tool !== expect.tool) return refuse("foreign-tool", `it was issued by ${position.tool}`)
  if (expect.unit !== undefined && position.unit !== expect.unit) {
    return refuse("unit", `it counts ${unitWords[position.unit]}, this read counts ${unitWords[expect.unit]}`)
  }
  return Either.right(position)
}
