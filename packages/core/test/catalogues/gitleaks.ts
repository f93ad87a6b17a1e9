// gitleaks' rule catalogue as test data (gitleaks.json, written by
// `node scripts/secret-catalogues.mjs gitleaks <checkout>`), and how a masked
// output is judged against it: shared by the library's test and the
// command's.
import { Schema } from "effect"
import * as Fs from "node:fs"

const Span = Schema.Tuple(Schema.Number, Schema.Number)

/** A true sample: a text in one of the generator's contexts, and the byte spans of the secrets gitleaks finds in it. */
const TrueSample = Schema.Struct({
  text: Schema.String,
  context: Schema.optional(Schema.String),
  path: Schema.optional(Schema.String),
  spans: Schema.Array(Span)
})

/** A false sample: a text the rule must not find; `matchedBy` names other rules of the catalogue that do find a secret in it. */
const FalseSample = Schema.Struct({
  text: Schema.String,
  path: Schema.optional(Schema.String),
  matchedBy: Schema.optional(Schema.Array(Schema.String))
})

const Rule = Schema.Struct({
  id: Schema.String,
  description: Schema.String,
  regex: Schema.NullOr(Schema.String),
  secretGroup: Schema.optional(Schema.Number),
  entropy: Schema.optional(Schema.Number),
  path: Schema.optional(Schema.String),
  keywords: Schema.Array(Schema.String),
  tps: Schema.Array(TrueSample),
  fps: Schema.Array(FalseSample),
  unbuilt: Schema.Array(Schema.Struct({ what: Schema.String, reason: Schema.String, text: Schema.optional(Schema.String) }))
})

/** The catalogue file: where it came from, and its rules in gitleaks' order. */
export const Catalogue = Schema.Struct({
  source: Schema.String,
  commit: Schema.String,
  generatedBy: Schema.String,
  note: Schema.String,
  rules: Schema.Array(Rule)
})

export type Catalogue = typeof Catalogue.Type
export type CatalogueRule = typeof Rule.Type
export type TrueSample = typeof TrueSample.Type
export type FalseSample = typeof FalseSample.Type

/** Reads and decodes gitleaks.json. */
export const readCatalogue = (): Catalogue =>
  Schema.decodeUnknownSync(Schema.parseJson(Catalogue))(Fs.readFileSync(new URL("./gitleaks.json", import.meta.url), "utf8"))

/**
 * Rules kept out of the masker's rules, with the reason: their samples are
 * still counted (as misses when they are not masked), but a rule here has
 * no test of its own that must pass.
 */
export const KEPT_OUT: Readonly<Record<string, string>> = {
  "pkcs12-file": "it finds files by their name (.p12, .pfx), not by content: a stream of output has no file name, and its samples are empty texts",
  "sourcegraph-access-token": "it accepts any 40 hex digits alone, which in output are mostly git object names (`git log`, lock files, CI logs); the prefixed forms (sgp_) are masked by a rule of their own"
}

/**
 * Parts of a secret span that a rule of the masker keeps visible on
 * purpose, because they are public: the secret counts as masked when every
 * byte between them is `*`.
 */
export const PUBLIC_PARTS: Readonly<Record<string, { readonly prefix?: RegExp; readonly suffix?: RegExp; readonly why: string }>> = {
  "telegram-bot-api-token": { prefix: /^[0-9]{5,16}:?/, why: "the bot's numeric id before the colon is public (it is the bot's user id)" },
  "azure-ad-client-secret": { prefix: /^[A-Za-z0-9_~.]{3}[0-9]/, why: "Azure shows the first three characters as the secret's hint; the digit before Q~ is the version" },
  "mailchimp-api-key": { suffix: /-us[0-9]{1,2}$/, why: "the data center (-us20) names a server, not the account" },
  "slack-webhook-url": {
    prefix: /^(?:https?:\/\/)?hooks\.slack\.com\/(?:services|workflows|triggers)\//,
    why: "the host and the kind of hook are the same for every Slack webhook"
  },
  "kubernetes-secret-yaml": {
    prefix: /^[\w.-]+:(?:[ \t]*(?:\||>[-+]?)\s+)?[ \t]*["']?/,
    suffix: /["']$/,
    why: "the secret's key under data: and the quotes around its value name the entry, not its value"
  },
  "curl-auth-user": {
    prefix: /^["']?[^:"']*["']?:["']?/,
    suffix: /["']$/,
    why: "the user name before the colon identifies the account; the password after it is the secret"
  },
  "private-key": {
    prefix: /^-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/,
    suffix: /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----$/,
    why: "the BEGIN and END markers say which kind of key a block is, not the key"
  }
}

const STAR = 0x2a
const NEWLINE = 0x0a
const RETURN = 0x0d
const encoder = new TextEncoder()

/** The latin1 view of bytes, for the public-part patterns. */
const latin1 = (bytes: Uint8Array): string => String.fromCharCode(...bytes)

/**
 * Whether a true sample counts as masked in `masked` (the sample's bytes
 * after masking): every byte of every secret span is `*`, except line
 * breaks (a masked key block keeps its lines) and a public prefix or suffix
 * the rule names in PUBLIC_PARTS, which may stay.
 */
export const isMasked = (ruleId: string, sample: TrueSample, masked: Uint8Array, offset = 0): boolean => {
  const original = encoder.encode(sample.text)
  const part = PUBLIC_PARTS[ruleId]
  return sample.spans.every(([start, end]) => {
    const secret = latin1(original.subarray(start, end))
    const head = part?.prefix?.exec(secret)?.[0].length ?? 0
    const tail = part?.suffix?.exec(secret)?.[0].length ?? 0
    if (head + tail >= end - start) return false
    for (let i = start + head; i < end - tail; i++) {
      if (masked[offset + i] !== STAR && original[i] !== NEWLINE && original[i] !== RETURN) return false
    }
    return true
  })
}

/** Whether a false sample is kept byte for byte. */
export const isKept = (sample: FalseSample, masked: Uint8Array, offset = 0): boolean => {
  const original = encoder.encode(sample.text)
  for (let i = 0; i < original.length; i++) if (masked[offset + i] !== original[i]) return false
  return true
}

/** Whether a false sample counts as a look-alike: no rule of the catalogue outside KEPT_OUT finds a secret in it. */
export const isLookAlike = (sample: FalseSample): boolean => (sample.matchedBy ?? []).every((id) => id in KEPT_OUT)

/** What a rule's samples came to: true samples masked, look-alikes kept, and the samples that missed. */
export interface Outcome {
  readonly masked: number
  readonly truths: number
  readonly kept: number
  readonly lookAlikes: number
  readonly missed: ReadonlyArray<string>
  readonly leaked: ReadonlyArray<string>
}

/** Judges a rule's samples, each masked by `mask` (the masked bytes of its text, and where the text starts in them). */
export const judge = (rule: CatalogueRule, mask: (text: string, index: number, kind: "tp" | "fp") => readonly [Uint8Array, number]): Outcome => {
  let masked = 0
  let kept = 0
  let lookAlikes = 0
  const missed: Array<string> = []
  const leaked: Array<string> = []
  rule.tps.forEach((sample, index) => {
    const [bytes, offset] = mask(sample.text, index, "tp")
    if (isMasked(rule.id, sample, bytes, offset)) masked++
    else missed.push(sample.text)
  })
  rule.fps.forEach((sample, index) => {
    if (!isLookAlike(sample)) return
    lookAlikes++
    const [bytes, offset] = mask(sample.text, index, "fp")
    if (isKept(sample, bytes, offset)) kept++
    else leaked.push(sample.text)
  })
  return { masked, truths: rule.tps.length, kept, lookAlikes, missed, leaked }
}
