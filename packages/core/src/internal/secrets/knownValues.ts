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
  const bytes = Buffer.byteLength(value, "utf8")
  if (bytes < MIN_KNOWN_VALUE_BYTES) return { _tag: "TooShort", bytes }
  const longest = knownValueForms(value).reduce((max, form) => Math.max(max, form.length), 0)
  if (longest > MAX_FORM_BYTES) {
    return {
      _tag: "Invalid",
      reason: `one of its encoded forms is ${longest} bytes, over the ${MAX_FORM_BYTES} a masker looks for; register a shorter value or its parts`
    }
  }
  return undefined
}

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")

const urlSafe = (base64: string): string => base64.replace(/\+/g, "-").replace(/\//g, "_")

const asciiJson = (escaped: string): string =>
  escaped.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * Every form a literal secret is looked for in, as latin1 views of their
 * bytes: the raw UTF-8 bytes; base64 (standard and URL-safe, padded and
 * not, and the part fixed by the value at each of the three alignments
 * inside longer base64 text); URL-encoded; and JSON-escaped.
 */
export const knownValueForms = (value: string): ReadonlyArray<string> => {
  const bytes = Buffer.from(value, "utf8")
  const forms = new Set<string>()
  forms.add(latin1(bytes))

  const base64 = bytes.toString("base64")
  for (const form of [base64, base64.replace(/=+$/, "")]) {
    forms.add(form)
    forms.add(urlSafe(form))
  }
  for (let shift = 1; shift <= 2; shift++) {
    const shifted = Buffer.concat([Buffer.alloc(shift), bytes]).toString("base64")
    const core = shifted.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6))
    forms.add(core)
    forms.add(urlSafe(core))
  }

  const uri = encodeURIComponent(value.replace(/[\ud800-\udfff]/g, "\ufffd"))
  forms.add(uri)
  forms.add(uri.replace(/%20/g, "+"))
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()))

  const json = JSON.stringify(value).slice(1, -1)
  forms.add(latin1(Buffer.from(json, "utf8")))
  forms.add(latin1(Buffer.from(json.replace(/\//g, "\\/"), "utf8")))
  forms.add(asciiJson(json))

  return [...forms].filter((form) => form.length >= MIN_KNOWN_VALUE_BYTES)
}
