// Tests on a candidate value: is it random enough to be a credential, or one
// of the things that sit where a credential could and are not one (a
// reference to a variable, a placeholder, a code expression, a number, a
// path, an identifier made of words)? Pure functions over latin1 strings.

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

// short and full git object names (SHA-1 and SHA-256)
const commitHash = /^(?:[0-9a-fA-F]{7,12}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/
const uuid = /^\{?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}?$/
const hex = /^(?:0x)?[0-9a-fA-F]{16,128}$/
const integrity = /^sha(?:1|256|384|512)-[A-Za-z0-9+/]{16,}={0,2}$/
const numeric = /^[+-]?[0-9]+(?:[._,][0-9]+)*(?:[eE][+-]?[0-9]+)?$/
// dates, times, versions and addresses: digits with the punctuation they use
const numberLike = /^[vV]?[0-9]{1,4}(?:[-.:/T _+][0-9]{1,9}){1,8}(?:[-+][0-9A-Za-z.]{1,20})?Z?$/
const literal = /^(?:true|false|null|nil|none|undefined|yes|no|on|off|empty|disabled|enabled|required|optional|n\/a|na|tbd|todo|fixme|unset|default|hidden|redacted|secret|password|token|changeme|change_me|changeit|example|sample|dummy|test|testing|placeholder|string|str|bytes|int|bool|object|any|value|text|foo|bar|baz|xxx)$/i
const masked = /^(?:\*|\u2022|x|X|\.|#|-|_|=|\?|0){3,}$|^\*{2,}|\*{4,}/
const reference =
  /^(?:\$\{\{[^{}]*\}\}|\$\{[^{}]*\}|\$\([^()]*\)?|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9]|%[A-Za-z_][A-Za-z0-9_]*%|%\([A-Za-z_]+\)[sd]|%[sdv]|\{\{[^{}]*\}\}|\{[0-9]{0,2}\}|#\{[^{}]*\}|@[A-Za-z_]+@|<[^<>]*>?|\[[A-Za-z _-]*\]|!Ref [A-Za-z]+|ENC\[[^\]]*\]?)$/
// `{name}`: a format placeholder when the name reads as words; `{d2LkV78zLx}` is a credential in braces
const braced = /^\{([A-Za-z_][A-Za-z0-9_.]*)\}$/
// a reference followed or preceded by literal text (`${HOME}/x`, `prefix-$VAR`), or several
const containsReference = /\$\{[A-Za-z_][A-Za-z0-9_.]*\}|\$\{\{|\{\{|\$\([A-Za-z_]/
const url = /^[A-Za-z][A-Za-z0-9+.-]{1,15}:\/\//
const email = /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+$/
const path = /^(?:\.{0,2}\/|~\/|[A-Za-z]:\\|\\\\)/
const fileName = /^[\w.-]{1,64}\.(?:json|ya?ml|txt|pem|key|crt|cer|csr|p12|pfx|env|ini|cfg|conf|toml|xml|properties|gpg|asc|jks|keystore|der|pub|sh|js|ts|py|rb|go|php|java|log|db|sqlite|enc|age)$/i
const placeholderWord =
  /^(?:(?:your|my|the|some|enter|insert|put|add|replace|set|change|new|real|actual|secret|api|access|auth|private|dummy|fake|sample|example|test|default)[-_ ]?)*(?:api[-_ ]?key|key|token|secret|password|passwd|pass|pwd|value|here|credentials?|keyhere|tokenhere|secrethere|passwordhere)(?:[-_ ]?here)?$/i
const placeholderHint = /example|placeholder|changeme|change_me|redacted|dummy|sample|xxxx|your[-_ ]|_here|-here|lorem|ipsum|fixme|todo|insert[-_ ]|replace[-_ ]?me/i

/** True for a git object name, a UUID or an `sha512-` integrity string: hashes and identifiers, not credentials, unless the context names one. */
export const isHashLike = (value: string): boolean =>
  commitHash.test(value) || uuid.test(value) || hex.test(value) || integrity.test(value)

/** True for the lengths of git object names (7 to 12, 40 or 64 hex digits) and for UUIDs. */
export const isCommitOrUuid = (value: string): boolean => commitHash.test(value) || uuid.test(value) || integrity.test(value)

/** True for an environment or template reference (`${VAR}`, `$VAR`, `%VAR%`, `{{ var }}`, `<placeholder>`) or text that is already masked. */
export const isReference = (value: string): boolean => {
  if (masked.test(value) || reference.test(value) || containsReference.test(value)) return true
  const name = braced.exec(value)
  return name !== null && (name[1].length <= 3 || /^[A-Z_.]+$/.test(name[1]) || looksLikeWords(name[1]))
}

/** True for a run of one character (`xxxxxxxx`, `00000000`) or of very few distinct ones, as placeholders are. */
export const isRepetitive = (value: string): boolean => {
  const letters = value.replace(/[^A-Za-z0-9]/g, "")
  if (letters.length < 4) return letters.length === 0 && value.length >= 4 && new Set(value).size === 1
  const distinct = new Set(letters).size
  return distinct === 1 || (letters.length >= 12 && distinct <= 2) || (letters.length >= 24 && distinct <= 3)
}

const alphabetRun = /abcdefgh|bcdefghi|ABCDEFGH|01234567|12345678|qwertyui/i

/** True for placeholders: `your_api_key_here`, `changeme`, `xxxxxxxx`, `<token>`, the alphabet, and values that say they are examples. */
export const isPlaceholder = (value: string): boolean =>
  isRepetitive(value) || placeholderWord.test(value) || literal.test(value) || alphabetRun.test(value) ||
  (placeholderHint.test(value) && (looksLikeWords(value) || /x{4}|X{4}|\*{3}/.test(value))) ||
  /^(?:[xX*#.]{4,}|\.{3}|\u2026)/.test(value) || /(?:[xX]{6,}|\*{4,}|[-_.]#{4,})$/.test(value)

const vowels = /[aeiouyAEIOUY]/

const digitInside = /[A-Za-z][0-9]+(?=[A-Za-z])/g

/**
 * True when digits break letters apart in two places or more
 * (`2n61yfj0udjlrq5`, `xotwnba6acnl5h`): random characters; names keep their
 * digits together (`sha256sum`, `id-Gost28147-89`, `k8s`).
 */
const digitsInside = (value: string): boolean => (value.match(digitInside)?.length ?? 0) >= 2

/** Letter pairs common in English words and identifiers: random letters make few of them. @internal */
export const englishPairs: ReadonlyArray<string> = (
  "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro " +
    "ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so " +
    "rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl " +
    "ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt " +
    "oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck " +
    "ew mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft wn nu af " +
    "hu nn eo vo rv nf xp gn sm fl iz ok nl my gl aw ju oa eq sy sl ps jo lf nv je nk kn gs dy hy ze ks xt bs ik dd " +
    "cy rp sk pm js db"
).split(" ")
const commonPairs = new Set(englishPairs)

/** The share of a word's letter pairs that are common ones. */
const commonPairShare = (word: string): number => {
  const lower = word.toLowerCase()
  let common = 0
  for (let i = 0; i + 1 < lower.length; i++) if (commonPairs.has(lower.slice(i, i + 2))) common++
  return common / Math.max(1, lower.length - 1)
}

/** A piece of an identifier that reads as a word: a vowel, no long consonant run, mostly common letter pairs. */
const isWordPiece = (piece: string): boolean =>
  vowels.test(piece) && !consonantRun.test(piece.length > 12 ? piece.slice(0, 12) : piece) && (piece.length <= 3 || commonPairShare(piece) >= 0.5)
const consonantRun = /[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}/
const shortWords = new Set([
  "id", "io", "db", "ok", "to", "of", "in", "on", "is", "my", "by", "at", "an", "as", "or", "up", "no", "go", "do", "be",
  "js", "ts", "py", "ui", "os", "fs", "ip", "tf", "gh", "ci", "cd", "dd", "pk", "sk", "v1", "v2", "x", "s", "a", "i"
])

/**
 * True when the letters of `value` read as words: an identifier
 * (`requiredCharacteristicTypesForDisplayMetadata`, `ADD_YOUR_TOKEN_HERE`,
 * `db_password`) rather than random characters. Random strings split into
 * many one- and two-letter pieces at their case changes; words do not.
 */
export const looksLikeWords = (value: string): boolean => {
  if (digitsInside(value)) return false
  const tokens = value.match(/[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]|[0-9]+/g)
  if (tokens === null) return false
  let letters = 0
  let wordLetters = 0
  let digits = 0
  let pieces = 0
  let singles = 0
  for (const token of tokens) {
    const code = token.charCodeAt(0)
    if (code >= 48 && code <= 57) {
      digits += token.length
      continue
    }
    pieces++
    letters += token.length
    const lower = token.toLowerCase()
    if (token.length === 1) {
      singles++
      if (shortWords.has(lower)) wordLetters += 1
    } else if (token.length === 2) {
      if (shortWords.has(lower) || vowels.test(token)) wordLetters += 2
    } else if (isWordPiece(token)) {
      wordLetters += token.length
    }
  }
  if (letters < 3) return false
  if (digits > Math.max(2, letters / 3)) return false
  if (singles > Math.max(1, pieces / 5)) return false
  return wordLetters >= letters * 0.85
}

/**
 * True when the letters of `value`, taken apart at digits, punctuation and
 * case changes, are mostly words of three letters or more
 * (`id-Gost28147-89-None-KeyMeshing`, `rc0.13.0_SNAPSHOT`): a name, not a
 * random string, whose pieces are short.
 */
export const looksLikeIdentifier = (value: string): boolean => {
  if (digitsInside(value)) return false
  const pieces = value.match(/[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]/g)
  if (pieces === null || pieces.length < 2) return false
  let letters = 0
  let wordLetters = 0
  for (const piece of pieces) {
    letters += piece.length
    if (piece.length >= 3 && isWordPiece(piece)) {
      wordLetters += piece.length
    }
  }
  return letters >= value.length * 0.4 && wordLetters >= letters * 0.7
}

const identifierSegment = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const allCaps = /^[A-Z][A-Z0-9_]*$/

/**
 * True for an unquoted value that is code, not data: a variable, a member
 * path (`var.db_password`, `X25519.secret_length`, `process.env.TOKEN`) or
 * the start of a call or an index (`os.environ[`, `document.getElementById(`).
 */
export const isCodeExpression = (value: string): boolean => {
  let text = value.replace(/^(?:new|await|typeof)\s+/, "").replace(/[;,]$/, "")
  const call = /[([]$/.test(text) || /\(\)$/.test(text)
  text = text.replace(/(?:\(\)|[([])$/, "").replace(/^[!&*@]/, "")
  if (text.length === 0) return call
  const segments = text.split(/\?\.|\.|::|->/)
  if (!segments.every((segment) => identifierSegment.test(segment))) return false
  if (call) return true
  if (segments.length === 1) {
    const only = segments[0]
    return allCaps.test(only) ? looksLikeWords(only) : looksLikeWords(only) || only.length <= 4
  }
  return segments.every((segment) => segment.length <= 8 || allCaps.test(segment) || looksLikeWords(segment))
}

/**
 * True for values that sit where a secret could but are not one: numbers,
 * dates and versions, booleans and placeholder words, masked text,
 * references, URLs, e-mail addresses, paths and file names.
 */
export const isPlainValue = (value: string): boolean =>
  numeric.test(value) || numberLike.test(value) || isReference(value) || isPlaceholder(value) ||
  url.test(value) || email.test(value) || path.test(value) || fileName.test(value)

/**
 * True for values that sit where a secret could but are not one: git commit
 * hashes, UUIDs, `sha512-` integrity strings, numbers, booleans, `null`,
 * masked text and variable references.
 */
export const isLookAlike = (value: string): boolean => isHashLike(value) || isPlainValue(value)

/** The classes of characters a value mixes: lower case, upper case, digits, others. */
export const characterClasses = (value: string): number => {
  let lower = 0
  let upper = 0
  let digit = 0
  let other = 0
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c >= 97 && c <= 122) lower = 1
    else if (c >= 65 && c <= 90) upper = 1
    else if (c >= 48 && c <= 57) digit = 1
    else other = 1
  }
  return lower + upper + digit + other
}

const base64Chars = /^[A-Za-z0-9+/]+={0,2}$/

/** Decodes standard or URL-safe base64 (padding optional) to a latin1 string; undefined when it is not base64. */
export const decodeBase64 = (value: string): string | undefined => {
  const normalized = value.replace(/-/g, "+").replace(/_/g, "/")
  if (!base64Chars.test(normalized) || normalized.replace(/=+$/, "").length % 4 === 1) return undefined
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  let bits = 0
  let count = 0
  let out = ""
  for (let i = 0; i < normalized.length; i++) {
    const c = normalized[i]
    if (c === "=") break
    bits = (bits << 6) | alphabet.indexOf(c)
    count += 6
    if (count >= 8) {
      count -= 8
      out += String.fromCharCode((bits >> count) & 0xff)
    }
  }
  return out
}

/**
 * True for a value typed rather than drawn at random: a unit of up to 16
 * characters repeated three times or more over three quarters of it
 * (`abcd1234abcd1234abcd1234`, compared without case), or, when
 * `ascending`, seven letters or digits in alphabet order (`1234567`,
 * `cdefghi`) anywhere in it.
 */
export const isTypedSequence = (value: string, ascending = true): boolean => {
  if (ascending) {
    let run = 1
    for (let i = 1; i < value.length; i++) {
      const c = value.charCodeAt(i)
      const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
      run = alnum && c === value.charCodeAt(i - 1) + 1 ? run + 1 : 1
      if (run >= 7) return true
    }
  }
  const lower = value.toLowerCase()
  for (let unit = 1; unit <= 16 && unit * 3 <= lower.length; unit++) {
    let same = unit
    while (same < lower.length && lower.charCodeAt(same) === lower.charCodeAt(same - unit)) same++
    if (same >= unit * 3 && same >= lower.length * 0.75) return true
  }
  return false
}

/** True when base64 text decodes to printable `user:password` style text, as HTTP Basic credentials do. */
export const isCredentialPair = (value: string): boolean => {
  const decoded = decodeBase64(value)
  return decoded !== undefined && decoded.length >= 3 && decoded.includes(":") && /^[\x20-\x7e]+$/.test(decoded)
}
