/**
 * The output directory's problems, named as they are before a command
 * reads or writes there: `SPILLWAY_OUTPUT_DIR` set to a file, a `--dir`
 * that does not exist.
 *
 * @since 0.1.0
 */
import { directoryFrom } from "@spillway/node/FileChecks"
import * as Fs from "node:fs"

/** What is wrong with a directory named by `source` (`SPILLWAY_OUTPUT_DIR`, `--dir`), or undefined; a missing one is a problem only when `mustExist`. */
export const problem = (source: string, directory: string, mustExist: boolean): string | undefined => {
  // a flag is followed by its value as typed; a variable by its value in parentheses
  const named = source.startsWith("--") ? `${source} ${directory}` : `${source} (${directory})`
  let stat: Fs.Stats
  try {
    stat = Fs.statSync(directory)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "ENOENT") return mustExist ? `${named} does not exist; name a directory that holds saved output` : undefined
    // a file on the way to it (ENOTDIR) is left to the store, which keeps running and says no copy was saved
    return code === "ENOTDIR" ? undefined : `${named} cannot be read: ${code ?? String(e)}`
  }
  return stat.isDirectory() ? undefined : `${named} is a file, not a directory; point it at a directory`
}

/** What is wrong with the directory the environment names (`SPILLWAY_OUTPUT_DIR`, or the default), or undefined. */
export const fromEnv = (env: Record<string, string | undefined>): string | undefined => {
  const set = env.SPILLWAY_OUTPUT_DIR !== undefined && env.SPILLWAY_OUTPUT_DIR !== ""
  return problem(set ? "SPILLWAY_OUTPUT_DIR" : "the output directory", directoryFrom(env), false)
}
