/**
 * Leases: what a host grants a controller for a credential scope, and what
 * every action carries. A lease names the scope, the owner and the channel
 * it acts for as separate fields, the host identity's hash, a fence taken
 * from the credential, and when it was issued and expires; it is signed with
 * the host's secret. The host checks it before every action and again after
 * each wait: a forged, altered or expired lease, one from another host
 * identity, or one whose credential was revoked or replaced is refused.
 * Knowing a pid or a cursor grants nothing.
 *
 * A token is `lease2.<payload>.<signature>`, both base64url without padding,
 * and is accepted only in exactly the form the host wrote it: anything
 * appended, padded or re-encoded is refused before its fields are read.
 *
 * @since 0.1.0
 */
import type { Process } from "@spillway/core"
import { Either, Schema } from "effect"
import { createHash, createHmac, timingSafeEqual } from "node:crypto"

/** What a lease says. */
export interface Grant {
  readonly scope: string
  readonly owner: string
  readonly channel: string
  /** The hash of the identity of the host that signed it. */
  readonly host: string
  /** A hash of the credential it was granted for: a changed or removed credential revokes it. */
  readonly fence: string
  /** When it was issued, in milliseconds since the epoch (the host's clock). */
  readonly issuedAt: number
  /** When it expires, in milliseconds since the epoch (the host's clock). */
  readonly expiresAt: number
}

/** Why a lease was refused. */
export class LeaseRefused extends Schema.TaggedError<LeaseRefused>()("LeaseRefused", {
  reason: Schema.Literal("credential", "forged", "host", "revoked", "scope", "expired"),
  detail: Schema.String
}) {
  override get message() {
    return `lease refused (${this.reason}): ${this.detail}`
  }
}

/** How long a lease lasts unless the host says otherwise: one hour. */
export const DEFAULT_TTL_MILLIS = 60 * 60 * 1000

/** Longest token read at all. */
const MAX_TOKEN_LENGTH = 16 * 1024

const VERSION = "lease2"
const TOKEN = /^lease2\.([A-Za-z0-9_-]{1,16000})\.([A-Za-z0-9_-]{43})$/

/** The fence of a credential. */
export const fenceOf = (credential: string): string => createHash("sha256").update(credential, "utf8").digest("hex").slice(0, 24)

const sign = (secret: Uint8Array, payload: string): string =>
  createHmac("sha256", secret).update(`${VERSION}.${payload}`).digest().toString("base64url")

/** Equal strings, compared in time that depends only on their lengths. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  const x = createHash("sha256").update(a, "utf8").digest()
  const y = createHash("sha256").update(b, "utf8").digest()
  return timingSafeEqual(x, y) && a.length === b.length
}

/** Signs a grant into a lease token. */
export const issue = (secret: Uint8Array, grant: Grant): string => {
  const fields = [grant.scope, grant.owner, grant.channel, grant.host, grant.fence, grant.issuedAt, grant.expiresAt]
  const payload = Buffer.from(JSON.stringify(fields), "utf8").toString("base64url")
  return `${VERSION}.${payload}.${sign(secret, payload)}`
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Checks a lease token against this host's secret and identity, the
 * credentials now in force (credential to scope) and the time; returns
 * what it grants. With `revokedAt`, a lease issued at or before its
 * credential was last removed is refused, even when the same credential is
 * in force again.
 */
export const verify = (
  secret: Uint8Array,
  hostHash: string,
  credentials: ReadonlyMap<string, string>,
  token: unknown,
  now: number,
  revokedAt?: (fence: string) => number | undefined
): Either.Either<Grant, LeaseRefused> => {
  const refuse = (reason: LeaseRefused["reason"], detail: string) => Either.left(new LeaseRefused({ reason, detail }))
  const shape = typeof token === "string" && token.length <= MAX_TOKEN_LENGTH ? TOKEN.exec(token) : null
  if (shape === null) return refuse("forged", "this is not a lease this host issues, in the exact form it issues them")
  const [, payload, tag] = shape as unknown as [string, string, string]
  if (!constantTimeEqual(tag, sign(secret, payload))) {
    return refuse("forged", "its signature does not match: it was altered, or signed by another host or identity")
  }
  let fields: unknown
  try {
    const bytes = Buffer.from(payload, "base64url")
    if (bytes.toString("base64url") !== payload) throw new Error("not canonical base64url")
    const text = strictUtf8.decode(bytes)
    fields = JSON.parse(text)
    if (JSON.stringify(fields) !== text) throw new Error("not canonical JSON")
  } catch {
    return refuse("forged", "its payload cannot be read")
  }
  if (
    !Array.isArray(fields) || fields.length !== 7 || !fields.slice(0, 5).every((f) => typeof f === "string") ||
    !fields.slice(5).every((f) => Number.isSafeInteger(f))
  ) {
    return refuse("forged", "its payload is not a lease")
  }
  const [scope, owner, channel, host, fence, issuedAt, expiresAt] = fields as [string, string, string, string, string, number, number]
  if (!constantTimeEqual(host, hostHash)) return refuse("host", "it was issued by another host identity; ask this host for a new lease")
  if (now >= expiresAt) {
    return refuse("expired", `it expired at ${new Date(expiresAt).toISOString()}; ask the host for a new lease (controllers renew theirs before they expire)`)
  }
  let current = false
  for (const [credential, s] of credentials) {
    // every credential is compared, each in constant time
    if (constantTimeEqual(fenceOf(credential), fence) && s === scope) current = true
  }
  if (!current) return refuse("revoked", `the credential of scope ${JSON.stringify(scope)} was revoked or replaced; ask for a new lease`)
  const removedAt = revokedAt?.(fence)
  if (removedAt !== undefined && issuedAt <= removedAt) {
    return refuse("revoked", `the credential of scope ${JSON.stringify(scope)} was removed after this lease was issued; ask for a new lease`)
  }
  return Either.right({ scope, owner, channel, host, fence, issuedAt, expiresAt })
}

/**
 * The process caller a grant acts as: its owner, and its scope and channel
 * as one canonical pair (`["prod","ci/x"]`), so no scope and channel can be
 * read as another scope's channel.
 */
export const callerOf = (grant: Pick<Grant, "scope" | "owner" | "channel">): Process.Caller => ({
  owner: grant.owner,
  channel: JSON.stringify([grant.scope, grant.channel])
})

/** The scope a credential grants, found by comparing every known credential in constant time; undefined when none matches. */
export const scopeOf = (credentials: ReadonlyMap<string, string>, credential: unknown): string | undefined => {
  if (typeof credential !== "string") return undefined
  let scope: string | undefined
  for (const [known, s] of credentials) {
    if (constantTimeEqual(known, credential)) scope = s
  }
  return scope
}
