// Finds the value assigned to a key that names a credential, whatever the
// syntax around it: `KEY=v`, `key: v`, `key := v`, `key ::= v`, `key ?= v`,
// `$key .= v`, `'key' => 'v'`, quoted and backquoted values, XML element
// bodies and attribute pairs (`<password>v</password>`,
// `<add key="Password" value="v"/>`), call arguments (`setProperty("key", "v")`),
// typed declarations (`var key string = "v"`, `const key: string = "v"`),
// flags (`--password v`), `Authorization: <scheme> <token>`, and `curl -u
// user:password`. Every value then passes gates that look at the key and at
// the value: references, code expressions, placeholders and identifiers made
// of words stay visible.
//
// Works on one line of latin1 text at a time; positions are indexes in it.

import {
  characterClasses,
  decodeBase64,
  isCodeExpression,
  isCommitOrUuid,
  isPlaceholder,
  isPlainValue,
  isReference,
  isRepetitive,
  isTypedSequence,
  looksLikeIdentifier,
  looksLikeWords,
  shannonEntropy
} from "./lookalike.js"
import { breaksProviderShape } from "./providerShapes.js"
import { publishedValues } from "./publishedValues.js"
import { emulatorKeys } from "./services.js"

/** How strongly a key names a credential, which sets how random its value must look. */
type Strength = "password" | "token" | "key"

interface KeyInfo {
  readonly start: number
  readonly end: number
  readonly strength: Strength
  /** The key has a word before its credential word (`client_secret`, `GITHUB_TOKEN`), so hex and UUID values count. */
  readonly qualified: boolean
  readonly authorization: boolean
}

// Words of a key that name a credential outright.
const passwordWords = new Set(["password", "passwd", "passphrase", "pwd", "pass", "pw", "passwords"])
const tokenWords = new Set([
  "secret", "secrets", "token", "tokens", "credential", "credentials", "creds", "apikey", "auth", "authorization",
  "privatekey", "accesskey", "secretkey", "masterkey", "signingkey", "encryptionkey", "clientsecret", "authtoken",
  "accesstoken", "refreshtoken", "apitoken", "bottoken", "sessiontoken", "pat", "dockerconfigjson", "dockercfg",
  // a session (an AWS session token, a session cookie) is a bearer credential
  "session", "storagekey", "accountkey",
  "htpasswd", "privatekeyid"
])
// Compounds written as one word in upper or lower case (`DBPASSWORD`, `apitoken`).
const compoundEndings = ["password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "secretkey", "privatekey", "credentials"]
// Words before `key` that make it a credential (`api_key`, `encryption-key`, `SigningKey`).
const keyQualifiers = new Set([
  "api", "access", "secret", "private", "auth", "client", "master", "signing", "sign", "encryption", "encrypt",
  "decryption", "crypt", "crypto", "license", "licence", "service", "app", "application", "account", "shared",
  "storage", "webhook", "consumer", "ssh", "deploy", "admin", "root", "integration", "subscription", "ingest",
  "ingestion", "write", "management", "personal", "bot", "oauth", "hmac", "jwt", "session", "cookie", "cipher",
  "aes", "rsa", "gpg", "pgp", "sas", "tls", "ssl", "server", "user", "project", "org", "organization", "live",
  "prod", "production", "test", "sandbox", "token", "security", "instrumentation", "dsn", "mac", "rest", "sdk",
  "developer", "partner", "merchant", "payment", "publishable"
])
// A credential word after any of these is something else (`public_key`, `next_token`, `csrf_token`).
const notCredentialBefore = new Set([
  "public", "pub", "primary", "foreign", "sort", "partition", "hash", "range", "cache", "idempotency", "dedup",
  "dedupe", "unique", "composite", "natural", "surrogate", "row", "bucket", "object", "lookup", "map", "dict",
  "group", "metric", "label", "tag", "field", "column", "table", "index", "idx", "schema", "sequence", "hot",
  "shortcut", "keyboard", "routing", "message", "event", "i18n", "translation", "locale", "order", "registry",
  "csrf", "xsrf", "next", "page", "continuation", "cursor", "sync", "request", "trace", "correlation",
  "cancellation", "max", "min", "num", "total", "input", "output", "prompt", "completion", "completions", "eos",
  "bos", "pad", "unk", "sep", "cls", "mask", "special", "reasoning", "cached", "context", "vocab", "lexer",
  "parser", "syntax", "cancel", "pagination", "continue", "resume", "upload", "download", "sas_url", "disable",
  "enable", "use", "show", "hide", "remember", "forgot", "reset_link", "no", "keystore", "truststore", "sort",
  "authenticity"
])
// A credential word followed by any of these names something about the credential, not the credential.
const notCredentialAfter = new Set([
  "length", "len", "size", "count", "name", "names", "id", "ids", "type", "types", "kind", "url", "uri", "urls",
  "endpoint", "path", "file", "files", "dir", "directory", "field", "input", "label", "hint", "prompt", "policy",
  "policies", "regex", "pattern", "format", "version", "expiry", "expires", "expiration", "expired", "ttl",
  "timeout", "lifetime", "enabled", "disabled", "required", "optional", "mode", "env", "var", "ref", "arn",
  "header", "param", "params", "location", "store", "provider", "manager", "source", "class", "min", "max",
  "strength", "changed", "updated", "created", "prefix", "suffix", "limit", "limits", "index", "usage", "used",
  "status", "scope", "scopes", "audience", "issuer", "algorithm", "alg", "method", "rotation", "hash", "hashed",
  "digest", "checksum", "fingerprint", "thumbprint", "budget", "position", "pos", "offset", "start", "end",
  "list", "stream", "valid", "invalid", "validator", "validation", "error", "errors", "exists", "set", "missing",
  "help", "description", "desc", "text", "title", "placeholder", "template", "example", "sample", "reset",
  "confirm", "confirmation", "again", "repeat", "retype", "visible", "visibility", "toggle", "icon", "button",
  "btn", "form", "dialog", "modal", "page", "view", "screen", "component", "element", "el", "ref", "selector",
  "holder", "key_name", "mount", "volume", "backend", "engine", "spec", "config", "configuration", "options",
  "option", "setting", "settings", "handler", "service", "services", "client", "factory", "builder", "parser",
  "lexer", "printer", "reader", "writer", "loader", "cache", "helper", "util", "utils", "bytes", "bits", "counter",
  "request", "response", "generator", "fn", "func", "function", "callback", "cb", "event", "events", "changed",
  "index", "seq", "number", "no", "nr", "sha", "uuid", "ttl", "age", "at", "date", "time", "timestamp", "when",
  "lifespan", "rule", "rules", "check", "checks", "policy", "less", "protected", "storage", "ring"
])
// Keys that hold data about credentials rather than a credential.
const notCredentialKeys = new Set(["jsonwebtoken", "jsonwebtokens", "keyword", "keywords", "tokenizer", "tokenize", "tokenized", "tokenization", "author", "authors", "authored", "authority", "authentication", "authenticated", "authenticate", "authenticator", "authorize", "authorized", "authorizer", "secretary", "passport", "passage", "passenger", "passing", "passed", "passes", "passthrough", "bypass", "compass", "surpass", "trespass", "keyframe", "keyframes", "keypress", "keydown", "keyup", "keycode", "keymap", "keychain", "keyring", "keystore", "keytab", "keypair", "monkey", "turkey", "donkey", "hockey", "jockey", "whiskey", "authtype", "authmethod", "authmode", "authscheme", "authprovider", "authurl", "authenticity"])

// Words that say nothing about whose credential a key holds.
const trivialWords = new Set(["my", "the", "a", "x", "default", "new", "old", "your", "our", "this", "var", "env", "const", "let"])
// Keys of one such word (`token`, `secret`, `key`) hold hashes and ids often enough that hex and UUID values stay visible.
const bareWords = new Set(["token", "tokens", "secret", "secrets", "key", "keys", "auth", "signature", "sig"])

const isKeyChar = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46

/** Splits a key into lower-case words at `_ - . :` and at case changes. */
const keyWords = (key: string): Array<string> =>
  (key.match(/[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]|[0-9]+/g) ?? []).map((w) => w.toLowerCase())

const classify = (key: string): { strength: Strength; qualified: boolean; authorization: boolean } | undefined => {
  const words = keyWords(key)
  if (words.length === 0 || words.length > 12) return undefined
  const whole = words.join("")
  if (notCredentialKeys.has(whole) || notCredentialKeys.has(words[words.length - 1])) return undefined
  let at = -1
  let strength: Strength = "key"
  for (let i = words.length - 1; i >= 0 && at === -1; i--) {
    const word = words[i]
    if (passwordWords.has(word)) {
      at = i
      strength = "password"
    } else if (tokenWords.has(word)) {
      at = i
      strength = "token"
    } else if (word === "key" || word === "keys") {
      at = i
      // `api key`, `secret key` and the like are as strong as a token; a `key` of something unknown is weak
      const before = i > 0 ? words[i - 1] : undefined
      strength = before !== undefined && keyQualifiers.has(before) ? "token" : "key"
    } else {
      const ending = compoundEndings.find((e) => word.length > e.length && word.endsWith(e))
      if (ending !== undefined) {
        at = i
        strength = ending.startsWith("pass") ? "password" : "token"
      }
    }
  }
  if (at === -1) return undefined
  for (let i = at + 1; i < words.length; i++) {
    if (notCredentialAfter.has(words[i])) return undefined
  }
  if (at > 0 && notCredentialBefore.has(words[at - 1])) return undefined
  if (at > 1 && notCredentialBefore.has(`${words[at - 2]}_${words[at - 1]}`)) return undefined
  const credentialWord = words[at]
  if (credentialWord === "pass" || credentialWord === "pw") {
    // short words need a key made for them: `DB_PASS`, `pass:`, not `pass` in a sentence
    if (words.length === 1 && key.length !== credentialWord.length) return undefined
  }
  const others = words.filter((w, index) => index !== at && !/^[0-9]+$/.test(w) && !trivialWords.has(w))
  return {
    strength,
    qualified: others.length > 0 || !bareWords.has(credentialWord),
    authorization: credentialWord === "authorization"
  }
}

/** The identifier around `at` (letters, digits, `_ - .`), bounded to 80 characters each way. */
const keyAround = (line: string, at: number): { start: number; end: number } => {
  let start = at
  while (start > 0 && at - start < 80 && isKeyChar(line.charCodeAt(start - 1))) start--
  let end = at
  while (end < line.length && end - at < 80 && isKeyChar(line.charCodeAt(end))) end++
  // `--password`, `-key`, `.password` are the key with a leading flag dash or a path dot
  while (start < end && (line[start] === "-" || line[start] === ".")) start++
  while (end > start && (line[end - 1] === "-" || line[end - 1] === ".")) end--
  return { start, end }
}

const isSpace = (c: string | undefined): boolean => c === " " || c === "\t"

const skipSpaces = (line: string, i: number, limit = 16): number => {
  const stop = Math.min(line.length, i + limit)
  while (i < stop && isSpace(line[i])) i++
  return i
}

/** Keys where a plain space separates the key from its value (flags, netrc, Dockerfile ENV, fish `set -x`). */
const spaceAssigns = (line: string, keyStart: number, keyEnd: number): boolean => {
  if (line[keyStart - 1] === "-" && (line[keyStart - 2] === "-" || isSpace(line[keyStart - 2]) || keyStart === 1)) return true
  const before = line.slice(Math.max(0, keyStart - 40), keyStart)
  if (/(?:^|\s)(?:ENV|ARG|setenv|set\s+-[gxUlu]+|export)\s+$/.test(before)) return true
  if (/(?:^|\s)(?:login|machine)\s+\S+\s+$/.test(before) && /^pass/i.test(line.slice(keyStart, keyEnd))) return true
  return /^\s*$/.test(line.slice(0, keyStart)) && /^(?:password|passwd)$/i.test(line.slice(keyStart, keyEnd))
}

/** A quick look past the key: does anything that can assign follow it? Most words in prose fail here. */
const mayAssign = (line: string, start: number, end: number): boolean => {
  let j = end
  if (line[j] === "\"" || line[j] === "'" || line[j] === "`") j++
  if (line[j] === "]" || line[j] === "}") j++
  const spaced = j
  while (j < line.length && j - spaced < 16 && isSpace(line[j])) j++
  const c = line[j]
  if (c === undefined) return false
  if ("=:,?.|+<>".includes(c) || (c === "\\" && line[j + 1] === "\"")) return true
  if (j === spaced) return false
  // `var key string = ...`, `--password value`, `ENV KEY value`
  return line.indexOf("=", j) !== -1 || spaceAssigns(line, start, end)
}

const operators = [":::=", "::=", ":=", "?=", ".=", "+=", "||=", "=>", "===", "==", "<-", "=", ":"]

/** Reads an operator at `i`; returns the position after it, or -1. */
const readOperator = (line: string, i: number): number => {
  for (const op of operators) {
    if (line.startsWith(op, i)) {
      // `key::value` (a C++ path, a URL scheme `key://`) is not an assignment
      if (op === ":" && (line[i + 1] === ":" || line[i + 1] === "/")) return -1
      if (op === "=" && line[i + 1] === "~") return -1
      return i + op.length
    }
  }
  return -1
}

// `: string =`, ` string =`, `: &'static str =`, `: Option<String> =` between a key and `=`
const typeThenEquals = /^(?::[ \t]*|[ \t]+)(?:[&*]?'?[A-Za-z_][\w.:<>[\]*' ]{0,40}?|\[\][A-Za-z_]\w{0,20})(?:[ \t]+=|=(?=[ \t]*["'`]))(?![=>])/

interface Value {
  readonly start: number
  readonly end: number
  readonly quoted: boolean
}

const closing: Record<string, string> = { "\"": "\"", "'": "'", "`": "`" }

/** Reads a quoted value whose opening quote is at `i`. */
const readQuoted = (line: string, i: number): Value | undefined => {
  const quote = line[i]
  const escapedQuote = line[i - 1] === "\\" // `\"value\"` inside a JSON string
  const close = closing[quote]
  let j = i + 1
  const stop = Math.min(line.length, i + 1 + 1024)
  while (j < stop) {
    const c = line[j]
    if (escapedQuote) {
      if (c === "\\" && line[j + 1] === close) break
      if (c === "\\" && (line[j + 1] === "n" || line[j + 1] === "r" || line[j + 1] === "t")) break
    } else if (c === "\\" && quote !== "'") {
      j += 2
      continue
    } else if (c === close) break
    j++
  }
  if (j >= stop) return undefined
  return { start: i + 1, end: j, quoted: true }
}

const unquotedStop = (c: number): boolean =>
  c <= 32 || c === 34 || c === 39 || c === 96 || c === 59 || c === 38 || c === 44 || c === 60 || c === 62 ||
  c === 41 || c === 93 || c === 125 || c === 124 || c === 127

/** Reads an unquoted value starting at `i`: up to a space, a quote, `; & , < > ) ] } |` or a `\n`-style escape. */
const readUnquoted = (line: string, i: number): Value | undefined => {
  let j = i
  let depth = 0
  const stop = Math.min(line.length, i + 1024)
  while (j < stop) {
    const c = line.charCodeAt(j)
    // brackets opened inside the value (`${VAR}`, `$(cmd)`, `{{ x }}`) are part of it
    if (c === 123 || c === 40 || c === 91) depth++
    else if ((c === 125 || c === 41 || c === 93) && depth > 0) {
      depth--
      j++
      continue
    } else if (depth > 0 && c === 32) {
      j++
      continue
    }
    if (unquotedStop(c)) break
    // a JSON string holding `KEY=value\nNEXT=...`: the escape ends the value
    if (c === 92 && /[nrtu"\\/]/.test(line[j + 1] ?? "")) break
    j++
  }
  return j > i ? { start: i, end: j, quoted: false } : undefined
}

const readValue = (line: string, i: number): Value | undefined => {
  const c = line[i]
  if (c === "\"" || c === "'" || c === "`") return readQuoted(line, i)
  if (c === "\\" && line[i + 1] === "\"") return readQuoted(line, i + 1)
  return readUnquoted(line, i)
}

// XML: `<password>v</password>`, `<ns:Password type="x">v</ns:Password>`
const readElementBody = (line: string, i: number): Value | undefined => {
  const open = line.indexOf(">", i)
  if (open === -1 || open - i > 200) return undefined
  const close = line.indexOf("<", open + 1)
  if (close === -1 || close - open > 1024) return undefined
  let start = open + 1
  let end = close
  while (start < end && isSpace(line[start])) start++
  while (end > start && isSpace(line[end - 1])) end--
  return end > start ? { start, end, quoted: true } : undefined
}

// `key="Password" value="v"`, `name="password">v<`
const readAttributePair = (line: string, i: number): Value | undefined => {
  const rest = line.slice(i, i + 300)
  const attribute = /^[^<>]{0,120}?\bvalue[ \t]*=[ \t]*(["'])/i.exec(rest)
  if (attribute !== null) return readQuoted(line, i + attribute[0].length - 1)
  const body = /^[^<>]{0,120}?>/.exec(rest)
  if (body !== null && rest[body[0].length] !== "<") return readElementBody(line, i + body[0].length - 1)
  return undefined
}

/** The value after an Authorization key: the token after a scheme word, or the only token. */
const authorizationValue = (line: string, i: number, quote: string | undefined): Value | undefined => {
  const token = /^([A-Za-z][A-Za-z0-9_-]{0,30})[ \t]{1,8}(?=[^ \t])/.exec(line.slice(i, i + 48))
  const from = token !== null ? i + token[0].length : i
  let j = from
  const stop = Math.min(line.length, from + 4096)
  while (j < stop && !/[\s"'`,;\\)]/.test(line[j])) {
    if (line[j] === "=" && j + 1 < stop && /[A-Za-z0-9"]/.test(line[j + 1])) return undefined // `Digest username="..."`, `Credential=...`
    j++
  }
  if (j === from || /^[{<[$%]/.test(line[from])) return undefined // `{base64(user:pass)}`, `<token>`, `$TOKEN`
  return { start: from, end: j, quoted: quote !== undefined }
}

/** Decides whether a value read after a credential key is a credential. */
export const isCredentialValue = (raw: string, key: KeyInfo | { strength: Strength; qualified: boolean }, quoted: boolean): boolean => {
  const value = raw
  // credentials published as examples (SDK sources, documentation) are public
  if (value.length === 0 || publishedValues.has(value) || emulatorKeys.has(value)) return false
  // base64 of printable text (a Kubernetes secret's data): judge the text it holds
  if (value.length >= 8 && value.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(value) && /[0-9+/=]/.test(value)) {
    const decoded = decodeBase64(value)
    if (decoded !== undefined && decoded.length >= 4 && /^[\x20-\x7e]+$/.test(decoded)) {
      return isCredentialValue(decoded, key, true)
    }
  }
  // documented examples (AWS's ...EXAMPLE and ...EXAMPLEKEY) and a short unit repeated (`abcd1234abcd1234...`) are placeholders
  if (value.includes("EXAMPLE") || isTypedSequence(value, false)) return false
  if (key.strength !== "key" && key.qualified && isOwnedValue(value)) return true
  if (isPlainValue(value)) return false
  if ((!quoted || /[.([]/.test(value)) && isCodeExpression(value)) return false
  if (isCommitOrUuid(value)) {
    // a hash or UUID is a credential when the key says whose (`HEROKU_API_KEY`, `client_secret`) or it is a password
    return key.strength === "password" || key.qualified
  }
  const classesUsed = characterClasses(value)
  switch (key.strength) {
    case "password": {
      if (value.length < 6) return false
      if (classesUsed === 1 && /^[A-Za-z]+$/.test(value) && (looksLikeWords(value) || value.length < 10)) return false
      if (/^[A-Za-z]+(?:[ _.-][A-Za-z]+)*$/.test(value) && looksLikeWords(value)) return false
      return true
    }
    case "token": {
      if (value.length < 8) return false
      if (looksLikeWords(value) || looksLikeIdentifier(value)) return false
      const bits = shannonEntropy(value)
      if (value.length < 16) return classesUsed >= 2 && bits >= 2.5
      // hex carries at most 4 bits a character, so it is held to less
      return bits >= 3 || ((classesUsed >= 3 || /^[0-9a-fA-F]+$/.test(value)) && bits >= 2.5)
    }
    case "key": {
      if (value.length < 16 || looksLikeWords(value) || looksLikeIdentifier(value)) return false
      const padded = /^[A-Za-z0-9+/]{12,}={1,2}$/.test(value) && value.length % 4 === 0
      if (padded && decodeBase64(value) !== undefined) return true
      return classesUsed >= 2 && /[0-9]/.test(value) && /[A-Za-z]/.test(value) && shannonEntropy(value) >= 3.5
    }
  }
}

/**
 * Values that a key naming whose credential it is (`asanaToken`,
 * `SONAR_TOKEN`, `discord_client_secret`) holds as a secret although they
 * read as plain elsewhere: a long number (client ids and secrets of 14
 * digits or more), a UUID, and a value of a token's length (32 characters
 * or more of letters, digits, `_` and `-`) that reads as a sequence
 * (`12345678ABCDEF...`). A run of one filler, and values that say they are
 * examples, stay plain.
 */
const isOwnedValue = (value: string): boolean => {
  if (isRepetitive(value.replace(/-/g, "")) || /x{4}|X{4}|example|sample|placeholder|your|here|dummy|fake|redacted|abcdefgh|bcdefghi|qwerty/i.test(value)) return false
  return /^[0-9]{14,64}$/.test(value) || isCommitOrUuid(value) || (value.length >= 32 && value.length <= 256 && /^[A-Za-z0-9_-]+$/.test(value) && /[0-9]/.test(value) && /[A-Za-z]/.test(value))
}

/**
 * Finds the credential assigned to the key around `at` in `line`; returns
 * its `[start, end)` or undefined. `at` is where a credential word was found.
 */
export const locateAssignment = (line: string, anchor: number): readonly [number, number] | undefined => {
  // an anchor may start with the character before the word (` Key`, `"key`): the key starts after it
  const at = isKeyChar(line.charCodeAt(anchor)) ? anchor : anchor + 1
  const { start, end } = keyAround(line, at)
  if (end - start < 2 || end - start > 80) return undefined
  if (!mayAssign(line, start, end)) return undefined
  const key = line.slice(start, end)
  const found = classify(key)
  if (found === undefined) return undefined
  const info: KeyInfo = { start, end, ...found }

  const before = line[start - 1]
  // a quote before the key is the key's own only when the same quote follows it (`"password":`, not `"Authorization: ...`)
  const keyQuote = (before === "\"" || before === "'" || before === "`") && line[end] === before ? before : undefined
  let i = end
  if (keyQuote !== undefined) i++
  let value: Value | undefined

  if (before === "<" || (before === ":" && /<[A-Za-z]+:$/.test(line.slice(Math.max(0, start - 20), start)))) {
    // an XML element named for the credential
    value = readElementBody(line, end)
  } else if (keyQuote !== undefined && /(?:\bkey|\bname|\bid)[ \t]*=[ \t]*$/i.test(line.slice(Math.max(0, start - 12), start - 1))) {
    // `<add key="ApiKey" value="..."/>`, `<entry key="password">...</entry>`
    value = readAttributePair(line, i)
  } else {
    if (line[i] === "]" || line[i] === "}") i++
    const typed = typeThenEquals.exec(line.slice(i, i + 64))
    let next = typed !== null ? i + typed[0].length : -1
    i = skipSpaces(line, i)
    if (next === -1) next = readOperator(line, i)
    if (next === -1 && keyQuote !== undefined && line[i] === ",") next = i + 1 // `setProperty("password", "v")`
    if (next === -1 && i > end && spaceAssigns(line, start, end)) next = i // `--password v`, `ENV TOKEN v`
    if (next === -1) return undefined
    // `arn:aws:...:secret:name`, `a:token:b`: a field of a colon-separated name, not a key
    if (before === ":" && line[next - 1] === ":" && !isSpace(line[next])) return undefined
    i = skipSpaces(line, next)
    if (i >= line.length) return undefined
    if (info.authorization) {
      const quote = line[i] === "\"" || line[i] === "'" ? line[i] : undefined
      value = authorizationValue(line, quote === undefined ? i : i + 1, quote)
    } else {
      value = readValue(line, i)
    }
  }
  if (value === undefined || value.end <= value.start) return undefined
  let text = line.slice(value.start, value.end)
  let valueStart = value.start
  if (!value.quoted) {
    // a trailing period ends a sentence, not a credential
    const trimmed = text.replace(/[.:]+$/, "")
    text = trimmed
  }
  const trimmedStart = text.length - text.trimStart().length
  text = text.trim()
  valueStart += trimmedStart
  if (text.length === 0 || text.length > 1024) return undefined
  // the first parameter of a query string (`SAS_TOKEN=st=2025-...&sig=...`): its secret, if any, is another parameter
  if (!value.quoted && /^[A-Za-z_]{1,16}=/.test(text) && line[value.end] === "&") return undefined
  if (info.authorization) {
    if (text.length < 8 || isPlainValue(text) || isRepetitive(text)) return undefined
    if (looksLikeWords(text) && !/[0-9]/.test(text)) return undefined
    return [valueStart, valueStart + text.length]
  }
  // a malformed example of a provider's documented shape (`telegram_token = "7048:A..."`); a password is judged as one
  if (info.strength !== "password" && breaksProviderShape(key, text)) return undefined
  if (!isCredentialValue(text, info, value.quoted)) return undefined
  return [valueStart, valueStart + text.length]
}

/** Reads one part of `user:password`: quoted (the quotes left out) or up to `stop`. */
const readPart = (line: string, i: number, stop: RegExp): { start: number; end: number; next: number } => {
  const quote = line[i]
  if (quote === "\"" || quote === "'") {
    const close = line.indexOf(quote, i + 1)
    if (close !== -1) return { start: i + 1, end: close, next: close + 1 }
  }
  let j = i
  while (j < line.length && !stop.test(line[j])) j++
  return { start: i, end: j, next: j }
}

/**
 * Finds the password of `-u user:password` / `--user user:password` (curl,
 * wget, httpie) at `at`, where `-u` or `--user` starts; the user name stays
 * visible unless the password is empty, as API keys passed as the user are.
 */
export const locateUserOption = (line: string, at: number): readonly [number, number] | undefined => {
  const flag = /^(?:--user|-u|--http-user|--auth)(?:=|[ \t]{1,5})/.exec(line.slice(at, at + 20))
  if (flag === null) return undefined
  if (at > 0 && !isSpace(line[at - 1])) return undefined
  const first = readPart(line, at + flag[0].length, /[\s:]/)
  let user = { start: first.start, end: first.end }
  let password: { start: number; end: number }
  const inner = line.slice(first.start, first.end)
  const colon = inner.indexOf(":")
  if (line[first.next] === ":") {
    // `user:password`, `user:'password'`, `"user":"password"`
    const second = readPart(line, first.next + 1, /\s/)
    password = { start: second.start, end: second.end }
  } else if (colon !== -1) {
    // `"user:password"`
    user = { start: first.start, end: first.start + colon }
    password = { start: first.start + colon + 1, end: first.end }
  } else {
    return undefined
  }
  const secret = line.slice(password.start, password.end)
  if (/^[<[]/.test(line.slice(user.start, user.end)) || /[>\]]$/.test(secret)) return undefined // `<user:password>`, `[user:pass]`
  if (secret.length === 0) {
    // `-u "key:"`: the user is the credential
    const name = line.slice(user.start, user.end)
    if (name.length < 8 || !isCredentialValue(name, { strength: "token", qualified: true }, true)) return undefined
    return [user.start, user.end]
  }
  if (secret.length < 3 || isPlainValue(secret) || /^[0-9]+$/.test(secret) || isCodeExpression(secret)) return undefined
  if (/^(?:pass(?:word)?|pwd|test|token|secret|y+|x+|\*+)$/i.test(secret)) return undefined
  if (/^[A-Za-z]+$/.test(secret) && looksLikeWords(secret) && secret.length < 12) return undefined
  return [password.start, password.end]
}

// `scheme://user:password@`: the user (no `:/?#@`), then the password up to the last `@`
// before the host (passwords may hold `@`); nothing crosses a space or a quote.
const URL_CREDENTIALS = /^:\/\/([^\x00-\x20:/?#@"'<>\\[\]{}]{0,256}):([^\x00-\x20/?#"'<>\\]{1,256})@/
// a password that only names one, as documentation writes it: `password`, `mypassword`,
// `YOUR_PASSWORD`, `REPLACE_WITH_PASSWORD`, `pass`, `secret`
const passwordWord = /^(?:[A-Za-z]{1,12}[-_]?){0,3}(?:password|passwd|pass|pwd|secret)$/i

/**
 * Finds the secret of credentials in a URL at `at`, where `://` starts: the
 * password, or the user where the password is GitHub's `x-oauth-basic`
 * marker (a token given as the user name). Placeholders stay visible: a
 * password that only names one, the user name again, a run of one
 * character, three characters or fewer, or a reference.
 */
export const locateUrlCredentials = (line: string, at: number): readonly [number, number] | undefined => {
  const m = URL_CREDENTIALS.exec(line.slice(at, at + 520))
  if (m === null) return undefined
  const [, user, password] = m
  const userStart = at + 3
  const passwordStart = userStart + user.length + 1
  if (/^x-oauth-(?:basic|bearer)$/i.test(password)) {
    return user.length >= 8 && isCredentialValue(user, { strength: "token", qualified: true }, true)
      ? [userStart, userStart + user.length]
      : undefined
  }
  if (isReference(password) || /^\$|^\{\{|^%[A-Z_]+%$|^\*+$/.test(password)) return undefined
  if (password.length <= 3 || password.toLowerCase() === user.toLowerCase() || isRepetitive(password)) return undefined
  if (passwordWord.test(password) || isPlaceholder(password)) return undefined
  return [passwordStart, passwordStart + password.length]
}

/** A MySQL or MariaDB client's `-p<password>` (written against the flag; `-p` alone asks for it). */
const MYSQL_PASSWORD = /(?<=[ \t])-p(?=[^ \t\r\n-])/g

/**
 * Finds the password of a MySQL or MariaDB client's `-pPASSWORD` on the line
 * of the command named at `at` (`mysql -u root -pS3cret db`, `mysqldump
 * -p'...'`); `-p` alone, `-P 3306` and references (`-p"$DB_PASS"`) are kept.
 */
export const locateMysqlPassword = (line: string, at: number): readonly [number, number] | undefined => {
  if (at > 0 && !/[\s;|&(`'"/]/.test(line[at - 1]!)) return undefined
  // the options of this command only: up to the next command on the line
  const stop = line.slice(at).search(/[;|&]|\$\(/)
  const end = stop === -1 ? line.length : at + stop
  MYSQL_PASSWORD.lastIndex = at
  for (let flag = MYSQL_PASSWORD.exec(line); flag !== null && flag.index < end; flag = MYSQL_PASSWORD.exec(line)) {
    const part = readPart(line, flag.index + 2, /\s/)
    const secret = line.slice(part.start, Math.min(part.end, end))
    if (secret.length < 3 || isReference(secret) || /^(?:pass(?:word)?|x+|\*+)$/i.test(secret)) continue
    return [part.start, part.start + secret.length]
  }
  return undefined
}
