/**
 * pi: the Spillway extension copied into pi's global extensions folder,
 * `~/.pi/agent/extensions/` (or `PI_CODING_AGENT_DIR/extensions/`).
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import type { Agent, Environment } from "./Agent.js"
import { envDir } from "./Agent.js"
import { copy } from "./Copy.js"

const agentDir = (e: Environment) => {
  const dir = envDir(e, "PI_CODING_AGENT_DIR")
  if (dir === undefined) return Path.join(e.home, ".pi", "agent")
  // pi expands a leading ~ itself
  return dir === "~" ? e.home : dir.startsWith("~/") ? Path.join(e.home, dir.slice(2)) : dir
}

/** pi's file. */
export const agent: Agent = {
  name: "pi",
  title: "pi",
  folders: (e) => [agentDir(e)],
  binaries: ["pi"],
  targets: (e) => [
    copy("pi", Path.join(agentDir(e), "extensions", "spillway.js"), Path.join(e.bundles, "integrations", "pi.js"), "the Spillway extension")
  ],
  next: "restart pi (or run /reload)"
}
