import type { Literal } from "./engine.js"

/** Smallest known value accepted, in UTF-8 bytes: shorter ones would turn masking into an oracle for guesses. */
export const MIN_KNOWN_VALUE_BYTES = 8

/** Longest form of a known value the masker will look for, in bytes (every non-block match must stay below the stream's context). */
export const MAX_FORM_BYTES = 8000

/** Why a known value was refused. */
export type KnownValueProblem =
  | { readonly _tag: "TooShort"; readonly bytes: number }
  | { readonly _tag: "Invalid"; readonly reason: string }

/** Checks a literal secret before it is registered; `undefined` when it is fine. */
export const checkKnownValue = (value: string): KnownValueProblem | undefined => {
  if (value.includes("\n") || value.includes("\r")) {
    return {
      _tag: "Invalid",
      reason: "it contains a line break; a masker matches within lines, so register each line of a multi-line secret as its own value"
    }
  }
  const bytes = encoder.encode(value).length
  if (bytes < MIN_KNOWN_VALUE_BYTES) return { _tag: "TooShort", bytes }
  const longest = knownValueForms(value).reduce((max, form) => Math.max(max, form.text.length), 0)
  if (longest > MAX_FORM_BYTES) {
    return {
      _tag: "Invalid",
      reason: `one of its encoded forms is ${longest} bytes, over the ${MAX_FORM_BYTES} a masker looks for; register a shorter value or its parts`
    }
  }
  return undefined
}

const encoder = new TextEncoder()

const latin1 = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as Array<number>)
  return out
}

const utf8 = (value: string): Uint8Array => encoder.encode(value.replace(/[\ud800-\udfff]/g, (c, i: number, all: string) => {
  // a lone surrogate cannot be encoded; keep pairs, replace the rest as encoders do
  const code = c.charCodeAt(0)
  if (code < 0xdc00 && i + 1 < all.length && all.charCodeAt(i + 1) >= 0xdc00 && all.charCodeAt(i + 1) <= 0xdfff) return c
  if (code >= 0xdc00 && i > 0 && all.charCodeAt(i - 1) >= 0xd800 && all.charCodeAt(i - 1) < 0xdc00) return c
  return "\ufffd"
}))

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Standard base64 with padding. */
const base64 = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i]
    const b = i + 1 < bytes.length ? bytes[i + 1] : 0
    const c = i + 2 < bytes.length ? bytes[i + 2] : 0
    out += BASE64[a >> 2] + BASE64[((a & 3) << 4) | (b >> 4)]
    out += i + 1 < bytes.length ? BASE64[((b & 15) << 2) | (c >> 6)] : "="
    out += i + 2 < bytes.length ? BASE64[c & 63] : "="
  }
  return out
}

const urlSafe = (text: string): string => text.replace(/\+/g, "-").replace(/\//g, "_")

/**
 * The base64 characters fixed by the value alone when it sits `shift` bytes
 * (0, 1 or 2) past a multiple of three inside longer base64 text.
 */
const base64Core = (bytes: Uint8Array, shift: number): string => {
  const padded = new Uint8Array(shift + bytes.length)
  padded.set(bytes, shift)
  return base64(padded).slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6))
}

/** Percent-encodes UTF-8 bytes, leaving `keep` characters (and ASCII letters and digits) as they are. */
const percent = (bytes: Uint8Array, keep: string, spaceAsPlus: boolean, lower: boolean): string => {
  let out = ""
  for (const byte of bytes) {
    const c = String.fromCharCode(byte)
    if ((byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || (byte < 128 && keep.includes(c))) out += c
    else if (byte === 32 && spaceAsPlus) out += "+"
    else {
      const hex = byte.toString(16).padStart(2, "0")
      out += `%${lower ? hex : hex.toUpperCase()}`
    }
  }
  return out
}

// What common URL encoders leave unescaped: JavaScript's encodeURIComponent,
// RFC 3986 (rawurlencode, url.PathEscape, strict encoders), HTML forms and
// URLSearchParams, Python's quote and quote_plus, PHP's urlencode.
const urlEncoders: ReadonlyArray<readonly [keep: string, spaceAsPlus: boolean]> = [
  ["-_.!~*'()", false],
  ["-_.~", false],
  ["-_.*", true],
  ["-_.~/", false],
  ["-_.~", true],
  ["-_.", true]
]

/** `\u` and four hex digits for a UTF-16 code unit. */
const unicodeEscape = (c: string, upper = false): string => {
  const hex = c.charCodeAt(0).toString(16).padStart(4, "0")
  return `\\u${upper ? hex.toUpperCase() : hex}`
}

/**
 * A value inside a JSON string as common encoders write it: JavaScript's
 * `JSON.stringify`; with `/` escaped (PHP's `JSON_UNESCAPED_UNICODE`);
 * with every non-ASCII code unit as `\u` (Python's `json.dumps`, and PHP's
 * `json_encode` by default, which escapes `/` too), in either hex case
 * (.NET, Java); Go's `json.Marshal`, which escapes `<`, `>`, `&`, U+2028
 * and U+2029; and PHP with `JSON_HEX_TAG`, `_AMP`, `_APOS` and `_QUOT`
 * (Laravel's `@json`).
 */
const jsonForms = (value: string): Array<string> => {
  const json = JSON.stringify(value).slice(1, -1)
  const slashes = json.replace(/\//g, "\\/")
  const ascii = (text: string, upper = false) => text.replace(/[^\x00-\x7f]/g, (c) => unicodeEscape(c, upper))
  const go = json.replace(/[<>&\u2028\u2029]/g, (c) => unicodeEscape(c))
  const phpHex = ascii(slashes).replace(/\\"|[<>&']/g, (c) => unicodeEscape(c.length === 2 ? "\"" : c, true))
  return [
    latin1(utf8(json)),
    latin1(utf8(slashes)),
    ascii(json),
    ascii(slashes),
    ascii(json, true),
    ascii(slashes, true),
    latin1(utf8(go)),
    phpHex
  ]
}

const shellSpecial = /[ \t!"#$&'()*,;<>?[\\\]^`{|}~]/g

/** Literal forms of one value: raw, base64 (whole, inside longer text, wrapped), hex and hex dumps, URL-, JSON- and shell-escaped. */
const formsOf = (value: string, into: Map<string, Literal>): void => {
  const add = (text: string, at: Literal["at"] = "anywhere", ignoreCase = false) => {
    if (text.length < MIN_KNOWN_VALUE_BYTES) return
    const key = `${at}:${text}`
    if (!into.has(key)) into.set(key, ignoreCase ? { text, at, ignoreCase } : { text, at })
  }
  const bytes = utf8(value)
  add(latin1(bytes))

  const whole = base64(bytes)
  for (const form of [whole, whole.replace(/=+$/, "")]) {
    add(form)
    add(urlSafe(form))
  }
  // the value's own base64 wrapped over lines, its last characters and padding included
  add(whole, "wrapped")
  for (let shift = 0; shift <= 2; shift++) {
    const core = base64Core(bytes, shift)
    add(core)
    add(urlSafe(core))
    // base64 wrapped at any width (64 for PEM, 76 for MIME and GNU base64): a line may end
    // with the value's start, start with its end, or lie inside it
    add(core, "wrapped")
  }

  // hex, as `xxd -p` (wrapped at 60 columns), `od` and `.hex()` print it, and in hex dumps with
  // their ASCII column (`hexdump -C`, `xxd`, `od -tx1`)
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
  if (hex.length <= MAX_FORM_BYTES) {
    add(hex)
    add(hex.toUpperCase())
    add(hex, "wrapped", true)
  }
  add(latin1(bytes), "dump")

  for (const [keep, spaceAsPlus] of urlEncoders) {
    add(percent(bytes, keep, spaceAsPlus, false))
    add(percent(bytes, keep, spaceAsPlus, true))
  }

  for (const form of jsonForms(value)) add(form)

  // as shells print it: `printf %q`, inside single quotes, inside double quotes
  add(latin1(utf8(value.replace(shellSpecial, "\\$&"))))
  add(latin1(utf8(value.replace(/'/g, "'\\''"))))
  add(latin1(utf8(value.replace(/'/g, "'\"'\"'"))))
  add(latin1(utf8(value.replace(/[\\"$`]/g, "\\$&"))))
}

/**
 * Every form a literal secret is looked for in, as latin1 views of their
 * bytes: the raw UTF-8 bytes and the value with surrounding whitespace
 * trimmed; base64 (standard and URL-safe, padded and not, the part fixed by
 * the value at each of the three alignments inside longer base64 text, and
 * the parts of those on the lines of wrapped base64); hex, plain or
 * wrapped, and the value's bytes in hex dumps; URL-encoded as the common
 * encoders do it, with either hex case; and JSON and shell escaped.
 */
export const knownValueForms = (value: string): ReadonlyArray<Literal> => {
  const forms = new Map<string, Literal>()
  formsOf(value, forms)
  const trimmed = value.trim()
  if (trimmed !== value) formsOf(trimmed, forms)
  return [...forms.values()]
}
