/**
 * The checks every saved body passes before it is read, shared by the body
 * store and by small programs that read a body without loading the rest of
 * Spillway (`spillway read`'s quick path): the open flags, what an opened
 * file must be, where the spill directory is, and how a file system error
 * is worded.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Os from "node:os"

/** Flags every saved file is opened with: read-only, never through a symlink, never blocking on a FIFO. */
export const OPEN_FLAGS = Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW | Fs.constants.O_NONBLOCK

/** Why an open failed, when the error means the name is a symlink. */
export const isSymlinkError = (code: string | undefined): boolean => code === "ELOOP" || code === "EMLINK"

/** Why an open file is refused, or undefined for a regular file with one link owned by this user. */
export const refusal = (st: Fs.Stats): string | undefined => {
  if (!st.isFile()) {
    return st.isFIFO()
      ? "it is a FIFO"
      : st.isCharacterDevice() || st.isBlockDevice()
      ? "it is a device"
      : st.isDirectory()
      ? "it is a directory"
      : st.isSocket()
      ? "it is a socket"
      : "it is not a regular file"
  }
  if (st.nlink !== 1) return `it has ${st.nlink} hard links`
  const uid = process.getuid?.()
  if (uid !== undefined && st.uid !== uid) return "it is owned by another user"
  return undefined
}

/** Name of the index file kept beside a body. */
export const indexName = (filename: string): string => `.${filename}.idx`

/** The spill directory from `SPILLWAY_OUTPUT_DIR`, or `~/.spillway/tool-output`. */
export const directoryFrom = (env: Record<string, string | undefined>): string =>
  env.SPILLWAY_OUTPUT_DIR !== undefined && env.SPILLWAY_OUTPUT_DIR !== ""
    ? env.SPILLWAY_OUTPUT_DIR
    : `${Os.homedir()}/.spillway/tool-output`

/** Codes of a file system with no room left for more (or a user past their disk quota). */
const FULL = new Set(["ENOSPC", "EDQUOT"])

/** A file system error as a reason: its code and words, led by "the disk is full" when that is why. */
export const reasonOf = (e: unknown): string => {
  const err = e as { code?: string; message?: string }
  if (typeof err?.code === "string") {
    // Node's message repeats the code before its own words
    const text = err.message ? err.message.replace(/, \w+ '.*'$/, "").replace(new RegExp(`^${err.code}: `), "") : ""
    const said = `${err.code}${text !== "" ? `: ${text}` : ""}`
    return FULL.has(err.code) ? `the disk is full (${said}); free some space on it` : said
  }
  return err?.message ?? String(e)
}
