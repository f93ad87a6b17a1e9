/**
 * The checks every saved body passes before it is read, shared by the body
 * store and by small programs that read a body without loading the rest of
 * Spillway (`spillway read`'s quick path): the open flags, what an opened
 * file must be, and where the spill directory is.
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
