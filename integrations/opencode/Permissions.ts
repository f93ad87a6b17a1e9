/**
 * Whether opencode's configuration decides `bash` permissions per command.
 *
 * opencode checks a `bash` call's permission inside the tool, after the
 * `tool.execute.before` hook: it matches the command it is handed against the
 * configured patterns. Once the command reads `spillway run --stdin -- bash -c
 * '...'`, a rule written for the command inside (`"rm *": "deny"`, `"git
 * push *": "ask"`) no longer matches it, and an "always allow" given to one
 * wrapped command would allow every other. So the plugin rewrites only when
 * every configured `bash` permission allows every command; otherwise it leaves
 * commands as written and the rules keep applying to them.
 *
 * @since 0.1.0
 */

/** The most entries read from one part of the configuration; more counts as rules. */
const ENTRIES_MAX = 1_000

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Why one `permission` value (global, an agent's or a mode's) may not allow every bash command, or undefined when it does. */
const bashRule = (permission: unknown, where: string): string | undefined => {
  if (permission === undefined || permission === null) return undefined
  if (typeof permission === "string") return permission === "allow" ? undefined : `${where} is "${permission}" for every tool`
  if (Array.isArray(permission)) {
    if (permission.length > ENTRIES_MAX) return `${where} holds over ${ENTRIES_MAX} rules`
    for (const rule of permission) {
      if (!isRecord(rule)) return `${where} holds a rule it cannot read`
      const applies = rule.permission === "bash" || rule.permission === "*"
      if (applies && rule.action !== "allow") return `${where} has a bash rule "${String(rule.pattern ?? "*")}": "${String(rule.action)}"`
    }
    return undefined
  }
  if (!isRecord(permission)) return `${where} cannot be read`
  const bash = permission.bash ?? permission["*"]
  if (bash === undefined || bash === "allow") return undefined
  if (typeof bash === "string") return `${where}.bash is "${bash}"`
  if (!isRecord(bash)) return `${where}.bash cannot be read`
  const entries = Object.entries(bash)
  if (entries.length > ENTRIES_MAX) return `${where}.bash holds over ${ENTRIES_MAX} rules`
  for (const [pattern, action] of entries) {
    if (action !== "allow") return `${where}.bash has "${pattern}": "${String(action)}"`
  }
  return undefined
}

/**
 * Why this opencode configuration may check bash commands one by one (so the
 * plugin should leave them as written), or undefined when every configured
 * bash permission allows every command. Reads the global `permission` and
 * each agent's and mode's.
 */
export const perCommandRules = (config: unknown): string | undefined => {
  if (!isRecord(config)) return undefined
  const global = bashRule(config.permission, "permission")
  if (global !== undefined) return global
  for (const part of ["agent", "mode"] as const) {
    const entries = config[part]
    if (entries === undefined || entries === null) continue
    if (!isRecord(entries)) return `${part} cannot be read`
    const named = Object.entries(entries)
    if (named.length > ENTRIES_MAX) return `${part} holds over ${ENTRIES_MAX} entries`
    for (const [name, value] of named) {
      const found = isRecord(value) ? bashRule(value.permission, `${part}.${name}.permission`) : undefined
      if (found !== undefined) return found
    }
  }
  return undefined
}
