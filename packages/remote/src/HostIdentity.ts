/**
 * A host's persistent random identity: 32 random bytes made on first start
 * and kept in a 0600 file. The secret signs the host's leases; controllers
 * and manifests know only its hash, so a host restarted with a new identity
 * is told apart from the one a lease or a manifest names.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** A host identity: the secret, and the hash others may know. */
export interface HostIdentity {
  readonly secret: Uint8Array
  /** Hex SHA-256 of the secret, cut to 32 characters. */
  readonly hash: string
}

/** The identity file could not be made or read. */
export class IdentityError extends Schema.TaggedError<IdentityError>()("IdentityError", { file: Schema.String, reason: Schema.String }) {
  override get message() {
    return `host identity ${this.file}: ${this.reason}`
  }
}

/** The hash of an identity secret. */
export const hashOf = (secret: Uint8Array): string => createHash("sha256").update(secret).digest("hex").slice(0, 32)

/** Reads the identity in `file`, making it (32 random bytes, mode 0600, its directory 0700) when missing. */
export const loadOrCreate = (file: string): Effect.Effect<HostIdentity, IdentityError> =>
  Effect.try({
    try: () => {
      Fs.mkdirSync(Path.dirname(file), { recursive: true, mode: 0o700 })
      try {
        Fs.writeFileSync(file, randomBytes(32), { flag: "wx", mode: 0o600 })
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
      }
      const stat = Fs.lstatSync(file)
      if (!stat.isFile()) throw new Error("not a regular file")
      if ((stat.mode & 0o077) !== 0) throw new Error(`mode ${(stat.mode & 0o777).toString(8)} lets others read it; it must be 0600`)
      const secret = new Uint8Array(Fs.readFileSync(file))
      if (secret.length !== 32) throw new Error(`holds ${secret.length} bytes, not 32`)
      return { secret, hash: hashOf(secret) }
    },
    catch: (e) => new IdentityError({ file, reason: e instanceof Error ? e.message : String(e) })
  })
