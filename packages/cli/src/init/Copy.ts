/**
 * A plugin file copied whole from the command's bundles into an agent's
 * plugin folder: the file is Spillway's alone, so it is written while it is
 * absent or Spillway's own, and goes again only as Spillway wrote it.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import { type Name, refused, type Target, text } from "./Agent.js"
import * as Files from "./Files.js"

/** The target that copies `source` (a bundle of the command) to `file`. */
export const copy = (agent: Name, file: string, source: string, what: string): Target => ({
  agent,
  file,
  what,
  add: (current, owned) => {
    let content: string
    try {
      if (Fs.statSync(source).size > Files.maxBytes) return refused(`the bundle ${source} is larger than ${Files.maxBytes} bytes`)
      content = Fs.readFileSync(source, "utf8")
    } catch {
      return refused(`the bundle ${source} is missing: this copy of spillway was built without it; build it again (npx pnpm@10.34.8 build)`)
    }
    if (current === undefined || current === content || owned) return text(content)
    return refused("a file of that name is already there and spillway init did not write it; move it away to install Spillway's")
  },
  // reached only when the file is not as spillway init wrote it (Apply restores or removes it when it is)
  remove: () => refused("it is not the file spillway init wrote; remove it by hand if it is Spillway's"),
  empty: () => true
})
