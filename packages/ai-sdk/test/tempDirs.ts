import { afterAll } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** A maker of temporary directories, each removed when the test file's tests are done. */
export const tempDirs = (prefix: string) => {
  const made: Array<string> = []
  afterAll(() => {
    for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
    made.push(dir)
    return dir
  }
}
