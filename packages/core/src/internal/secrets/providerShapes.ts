// A value whose provider is known, by its key (`TELEGRAM_BOT_TOKEN`) or by
// its own prefix (`sm_aat_...`), and that breaks the provider's documented
// shape, is a look-alike (a malformed or truncated example) unless it is,
// on its own, a random secret long enough to be one: formats change, and a
// token of a new one must not leak. Pure functions over latin1 strings.

import { characterClasses, looksLikeIdentifier, looksLikeWords, shannonEntropy } from "./lookalike.js"
import { formatSource, tokenFormats } from "./providers.js"

/** A provider whose credentials have a documented shape, named by a word in the keys that hold them. */
export interface KeyedShape {
  readonly id: string
  /** Words a key holds to name the provider, compared in lower case with the key's words joined. */
  readonly words: ReadonlyArray<string>
  /** The whole value of each kind of its credentials. */
  readonly shapes: ReadonlyArray<RegExp>
  /** Where the shape is documented. */
  readonly source: string
}

/**
 * Providers whose credentials have a fixed shape that keys name them by.
 * Only shapes fixed by construction belong here: a value that breaks one is
 * kept unless it is a random secret in its own right.
 */
export const keyedShapes: ReadonlyArray<KeyedShape> = [
  {
    id: "telegram-bot-token",
    words: ["telegram"],
    // the bot's user id (at most 52 bits, so 16 digits), a colon, and 35 characters
    shapes: [/^[0-9]{5,16}:[A-Za-z0-9_-]{35}$/],
    source: "https://core.telegram.org/bots/api (ids of at most 52 significant bits) and https://core.telegram.org/bots/tutorial"
  },
  {
    id: "sumologic-access-key",
    words: ["sumo", "sumologic"],
    // an access id (su and 12 characters) and its access key (64 letters and digits)
    shapes: [/^su[A-Za-z0-9]{12}$/, /^[A-Za-z0-9]{64}$/],
    source: "https://help.sumologic.com/docs/manage/security/access-keys/"
  },
  {
    id: "mailchimp-api-key",
    words: ["mailchimp"],
    // 32 hex digits, then the data center
    shapes: [/^[a-f0-9]{32}-us[0-9]{1,2}$/],
    source: "https://mailchimp.com/developer/marketing/guides/quick-start/"
  }
]

/** The shortest value that counts as a random secret whatever its shape. */
export const MIN_SHAPELESS_SECRET = 16

/**
 * True for a value that is a secret on its own, whatever provider it claims:
 * one run of a token's characters (no `:` or space to give it a structure),
 * 16 or more of them, mixing letters and digits, random enough, and not
 * words.
 */
export const isShapelessSecret = (value: string): boolean =>
  value.length >= MIN_SHAPELESS_SECRET && /^[A-Za-z0-9_+/=.~-]+$/.test(value) && /[0-9]/.test(value) && /[A-Za-z]/.test(value) &&
  characterClasses(value) >= 2 && shannonEntropy(value) >= 3 && !looksLikeWords(value) && !looksLikeIdentifier(value)

/** The provider a key names, if its credentials have a documented shape: a word of the key starts with the provider's name. */
export const keyedShapeOf = (key: string): KeyedShape | undefined => {
  const words = (key.match(/[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]/g) ?? []).map((w) => w.toLowerCase())
  return keyedShapes.find((entry) => entry.words.some((name) => words.some((word) => word.startsWith(name))))
}

// Prefixes distinctive enough that a value starting with one claims the format: four
// characters or more, ending in a separator (`sm_aat_`, `dckr_pat_`, `glpat-`).
interface Prefixed {
  readonly prefix: string
  readonly whole: RegExp
}
let prefixed: ReadonlyArray<Prefixed> | undefined
const prefixedFormats = (): ReadonlyArray<Prefixed> =>
  (prefixed ??= tokenFormats.flatMap((format) => {
    const whole = new RegExp(`^${formatSource(format)}$`, format.ignoreCase === true ? "i" : "")
    return format.prefixes.filter((prefix) => prefix.length >= 4 && /[_.-]$/.test(prefix)).map((prefix) => ({ prefix, whole }))
  }).sort((a, b) => b.prefix.length - a.prefix.length))

/**
 * True for a value that breaks the documented shape of its provider, named
 * by its key or by the value's own prefix, and is no random secret on its
 * own: a malformed or truncated example (`7048:A...` under
 * `telegram_api_token`, `sm_aat_7i5ruvuz7s`), kept visible. A value that
 * fits the shape, or names no provider, is left to the usual checks.
 */
export const breaksProviderShape = (key: string, value: string): boolean => {
  const keyed = keyedShapeOf(key)
  if (keyed !== undefined) return !keyed.shapes.some((shape) => shape.test(value)) && !isShapelessSecret(value)
  const claimed = prefixedFormats().find((entry) => value.startsWith(entry.prefix))
  return claimed !== undefined && !claimed.whole.test(value) && !isShapelessSecret(value.slice(claimed.prefix.length))
}
