/**
 * Names of saved files: the allowlist every name passes before any file
 * system call, and fresh names for new files. Pure functions with no
 * dependencies.
 *
 * @since 0.1.0
 */

/** Longest file name accepted, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 128

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/**
 * Checks a name against the allowlist before any file system call: a bare
 * name of letters, digits, `.`, `_` and `-`, not starting with a dot, with no
 * `..`, at most 128 bytes. Returns the reason for a refusal.
 */
export const checkFilename = (filename: string): string | undefined => {
  if (filename.length === 0) return "the name is empty"
  if (filename.includes("\0")) return "the name contains a NUL byte"
  if (filename.includes("/") || filename.includes("\\")) return "the name contains a path separator; give a name, not a path"
  if (filename.includes("..")) return "the name contains '..'"
  if (filename.startsWith(".")) return "the name starts with a dot"
  if (filename.includes("%")) return "the name contains '%'; give the name as shown, not URL-encoded"
  if (new TextEncoder().encode(filename).length > MAX_NAME_BYTES) return `the name is longer than ${MAX_NAME_BYTES} bytes`
  if (!NAME.test(filename)) return "the name has characters other than letters, digits, '.', '_' and '-'"
  return undefined
}

/** A uniform fraction in [0, 1) from 24 bits of the platform's cryptographic random source. */
export const randomFraction = (): number => {
  const b = new Uint8Array(3)
  globalThis.crypto.getRandomValues(b)
  return ((b[0]! << 16) | (b[1]! << 8) | b[2]!) / 0x1000000
}

/**
 * A fresh file name, `YYYY-MM-DDTHH-MM-SS-mmmZ-xxxxxx.log`: the UTC time and
 * six random hex digits (from `random`, cryptographic by default).
 */
export const makeFilename = (now: Date, random: () => number = randomFraction, extension = ".log"): string => {
  const stamp = now.toISOString().replace(/:/g, "-").replace(".", "-")
  const hex = Math.floor(random() * 0x1000000).toString(16).padStart(6, "0")
  return `${stamp}-${hex}${extension}`
}
