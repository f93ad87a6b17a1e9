/**
 * Revocations that stick: a host notes when each credential leaves its
 * credentials file (by the credential's fence, never the credential), in a
 * file of its directory, so a lease issued before a credential was removed
 * stays refused when the same credential is put back, across restarts of
 * the host too. A credential removed while the host was stopped is noted at
 * its next start. At most `MAX_REVOKED` fences are kept, the oldest
 * forgotten first.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** The most revoked fences a host remembers. */
export const MAX_REVOKED = 10_000

/** The state file's largest size read at all. */
const MAX_STATE_BYTES = 4 * 1024 * 1024

/** The credentials in force, read through the revocation record. */
export interface Revocations {
  /** The credentials in force now (credential to scope); each one that left since the last read is noted as revoked now. */
  readonly read: () => ReadonlyMap<string, string>
  /** When a credential with this fence was last removed (epoch ms), if ever. */
  readonly revokedAt: (fence: string) => number | undefined
}

interface State {
  readonly inForce: ReadonlyArray<string>
  readonly revoked: ReadonlyArray<readonly [string, number]>
}

const isState = (u: unknown): u is State =>
  typeof u === "object" && u !== null &&
  Array.isArray((u as State).inForce) && (u as State).inForce.every((f) => typeof f === "string") &&
  Array.isArray((u as State).revoked) &&
  (u as State).revoked.every((e) => Array.isArray(e) && e.length === 2 && typeof e[0] === "string" && Number.isSafeInteger(e[1]))

const load = (file: string): State | undefined => {
  try {
    if (Fs.statSync(file).size > MAX_STATE_BYTES) return undefined
    const parsed: unknown = JSON.parse(Fs.readFileSync(file, "utf8"))
    return isState(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * The revocation record of a host: `readCredentials` reads the credentials
 * file, `fenceOf` names a credential, `stateFile` keeps what was noted.
 * Throws when the state file cannot be written: a host that could not keep
 * a revocation must not start.
 */
export const make = (options: {
  readonly stateFile: string
  /** The credentials file's credentials, or undefined when it cannot be read or parsed. */
  readonly readCredentials: () => ReadonlyMap<string, string> | undefined
  readonly fenceOf: (credential: string) => string
  readonly now: () => number
  /** The most fences kept; `MAX_REVOKED` by default. */
  readonly maxRevoked?: number
}): Revocations => {
  const max = options.maxRevoked ?? MAX_REVOKED
  const saved = load(options.stateFile)
  const revoked = new Map<string, number>(saved?.revoked ?? [])
  let inForce = new Set<string>(saved?.inForce ?? [])
  const save = () => {
    Fs.mkdirSync(Path.dirname(options.stateFile), { recursive: true, mode: 0o700 })
    const temp = `${options.stateFile}.${process.pid}.tmp`
    Fs.writeFileSync(temp, JSON.stringify({ inForce: [...inForce], revoked: [...revoked] } satisfies State), { mode: 0o600 })
    Fs.renameSync(temp, options.stateFile)
  }
  const read = (): ReadonlyMap<string, string> => {
    const credentials = options.readCredentials()
    // a file that cannot be read or parsed (half written, say) trusts no one for now, and revokes nothing
    if (credentials === undefined) return new Map()
    const fences = new Set([...credentials.keys()].map(options.fenceOf))
    let changed = fences.size !== inForce.size
    const at = options.now()
    for (const fence of inForce) {
      if (!fences.has(fence)) {
        revoked.delete(fence)
        revoked.set(fence, at)
        changed = true
      }
    }
    for (const fence of fences) if (!inForce.has(fence)) changed = true
    while (revoked.size > max) revoked.delete(revoked.keys().next().value!)
    if (changed) {
      inForce = fences
      try {
        save()
      } catch {
        // kept in memory; written again at the next change
      }
    }
    return credentials
  }
  read()
  save()
  return { read, revokedAt: (fence) => revoked.get(fence) }
}
