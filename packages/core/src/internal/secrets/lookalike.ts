/** Shannon entropy of a string, in bits per character. */
export const shannonEntropy = (value: string): number => {
  const length = value.length
  if (length === 0) return 0
  const counts = new Map<number, number>()
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i)
    counts.set(code, (counts.get(code) ?? 0) + 1)
  }
  let bits = 0
  for (const count of counts.values()) {
    const p = count / length
    bits -= p * Math.log2(p)
  }
  return bits
}

// short and full git object names (SHA-1 and SHA-256); 32 hex digits are left to the entropy gate, since `openssl rand -hex 16` passwords look like that
const commitHash = /^(?:[0-9a-fA-F]{7,12}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/
const uuid = /^\{?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}?$/
const integrity = /^sha(?:1|256|384|512)-[A-Za-z0-9+/]{16,}={0,2}$/
const numeric = /^[+-]?[0-9]+(?:[._][0-9]+)*(?:[eE][+-]?[0-9]+)?$/
const literal = /^(?:true|false|null|nil|none|undefined|yes|no|on|off)$/i
const masked = /^\*+$/
const reference = /^(?:\$\{[^{}]*\}|\$\([^()]*\)|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|\{\{[^{}]*\}\}|<[^<>]*>)$/

/** True for an environment or template reference (`${VAR}`, `$VAR`, `%VAR%`, `{{ var }}`, `<placeholder>`) or text that is already masked. */
export const isReference = (value: string): boolean => masked.test(value) || reference.test(value)

/**
 * True for values that sit where a secret could but are not one: git commit
 * hashes, UUIDs, `sha512-` integrity strings, numbers, booleans, `null`,
 * masked text and variable references.
 */
export const isLookAlike = (value: string): boolean =>
  isReference(value) ||
  commitHash.test(value) ||
  uuid.test(value) ||
  integrity.test(value) ||
  numeric.test(value) ||
  literal.test(value)

/** True when base64 text decodes to printable `user:password` style text, as HTTP Basic credentials do. */
export const isCredentialPair = (value: string): boolean => {
  const decoded = Buffer.from(value, "base64").toString("latin1")
  return decoded.length >= 3 && decoded.includes(":") && /^[\x20-\x7e]+$/.test(decoded)
}
