/**
 * Leases: what a host grants a controller for a credential scope, and what
 * every action carries. A lease names the scope, the owner and channel it
 * acts for, the host identity's hash, and a fence taken from the credential,
 * and is signed with the host's secret. The host checks it before every
 * action and again after each poll wait: a forged or altered lease, one from
 * another host identity, or one whose credential was revoked or replaced is
 * refused. Knowing a pid or a cursor grants nothing.
 *
 * @since 0.1.0
 */
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
}

/** Why a lease was refused. */
export class LeaseRefused extends Schema.TaggedError<LeaseRefused>()("LeaseRefused", {
  reason: Schema.Literal("credential", "forged", "host", "revoked", "scope"),
  detail: Schema.String
}) {
  override get message() {
    return `lease refused (${this.reason}): ${this.detail}`
  }
}

/** The fence of a credential. */
export const fenceOf = (credential: string): string => createHash("sha256").update(credential, "utf8").digest("hex").slice(0, 24)

const sign = (secret: Uint8Array, payload: string) => createHmac("sha256", secret).update(`lease1.${payload}`).digest()

/** Signs a grant into a lease token. */
export const issue = (secret: Uint8Array, grant: Grant): string => {
  const payload = Buffer.from(JSON.stringify([grant.scope, grant.owner, grant.channel, grant.host, grant.fence]), "utf8").toString("base64url")
  return `lease1.${payload}.${sign(secret, payload).toString("base64url")}`
}

/**
 * Checks a lease token against this host's secret and identity, and the
 * credentials now in force (credential to scope); returns what it grants.
 */
export const verify = (
  secret: Uint8Array,
  hostHash: string,
  credentials: ReadonlyMap<string, string>,
  token: string
): Either.Either<Grant, LeaseRefused> => {
  const refuse = (reason: LeaseRefused["reason"], detail: string) => Either.left(new LeaseRefused({ reason, detail }))
  const parts = typeof token === "string" ? token.split(".") : []
  if (parts.length !== 3 || parts[0] !== "lease1") return refuse("forged", "this is not a lease this host issues")
  const [, payload, tag] = parts as [string, string, string]
  const expected = sign(secret, payload)
  const given = Buffer.from(tag, "base64url")
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return refuse("forged", "its signature does not match: it was altered, or signed by another host or identity")
  }
  let fields: unknown
  try {
    fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
  } catch {
    return refuse("forged", "its payload cannot be read")
  }
  if (!Array.isArray(fields) || fields.length !== 5 || !fields.every((f) => typeof f === "string")) {
    return refuse("forged", "its payload is not a lease")
  }
  const [scope, owner, channel, host, fence] = fields as [string, string, string, string, string]
  if (host !== hostHash) return refuse("host", "it was issued by another host identity; ask this host for a new lease")
  const current = [...credentials.entries()].find(([credential, s]) => s === scope && fenceOf(credential) === fence)
  if (current === undefined) return refuse("revoked", `the credential of scope ${scope} was revoked or replaced; ask for a new lease`)
  return Either.right({ scope, owner, channel, host, fence })
}
