/**
 * What every hook shares: the permission choice (`SPILLWAY_HOOK_PERMISSION`),
 * settings files read within bounds, and the loose test "does this command
 * mention that rule's command", which errs towards yes so that a deny or
 * ask rule of the host is never stepped around.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"

/** How far a hook may go: keep the host's answer, ask the user, or allow. */
export type Permission = "keep" | "ask" | "allow"

/** The permission choice from `SPILLWAY_HOOK_PERMISSION` ("keep" when unset); a note when the value is not one. */
export const permissionFrom = (env: Readonly<Record<string, string | undefined>>): { permission: Permission; note?: string } => {
  const raw = env.SPILLWAY_HOOK_PERMISSION?.trim().toLowerCase()
  if (raw === undefined || raw === "" || raw === "keep") return { permission: "keep" }
  if (raw === "ask" || raw === "allow") return { permission: raw }
  return { permission: "keep", note: `SPILLWAY_HOOK_PERMISSION=${JSON.stringify(raw).slice(1, -1)} is not keep, ask or allow; using keep` }
}

/** Largest settings or rules file read. */
const MAX_FILE_BYTES = 1024 * 1024

/** A file's text, "missing" when there is none, "unreadable" when it cannot be read whole. */
export const readText = (path: string): string | "missing" | "unreadable" => {
  try {
    const stat = Fs.statSync(path)
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return "unreadable"
    return Fs.readFileSync(path, "utf8")
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR" ? "missing" : "unreadable"
  }
}

/** The files in a folder whose names end with `suffix`, sorted; empty when there is no such folder. */
export const filesIn = (dir: string, suffix: string): ReadonlyArray<string> => {
  try {
    return Fs.readdirSync(dir).filter((n) => n.endsWith(suffix)).sort().slice(0, 200).map((n) => `${dir}/${n}`)
  } catch {
    return []
  }
}

/** A command with quotes and backslashes dropped and blanks run together, as the loose test compares it. */
const loosen = (text: string): string => text.replace(/["'\\]/g, "").replace(/\s+/g, " ").trim()

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * True when `command` may run what `pattern` names: a command prefix, with
 * `*` for any text (`git push`, `rm -rf *`, `npm run test:*`). Its first part
 * must start a word of the command; the match is loose on purpose (a rule
 * for `rm` matches `/bin/rm` and `"rm"`), since it decides when to stand
 * aside.
 */
export const mentions = (command: string, pattern: string): boolean => {
  const parts = loosen(pattern.replace(/:\*$/, "*")).split("*").map((p) => p.trim()).filter((p) => p.length > 0)
  if (parts.length === 0) return true
  const text = loosen(command)
  const [first, ...rest] = parts
  if (!new RegExp(`(^|[\\s;&|(){}\`$/=!])${escape(first!)}`).test(text)) return false
  return rest.every((part) => text.includes(part))
}
