// Rules for credentials with no prefix of their own, found by what sits
// next to them: a token of a service's documented shape shortly after the
// service's name on the same line (`okta token - '00AbC...'`, `Using
// assemblyai Key=...`, `new HubSpotAPI("<uuid>")`), Airtable personal
// access tokens after a delimiter, and Discord bot tokens, whose first part
// is the base64 of a numeric user id.
//
// Works on one line of latin1 text at a time; positions are indexes in it.

import type { SecretRule } from "../../Secrets.js"
import { isPlaceholder, isRepetitive, isTypedSequence, shannonEntropy } from "./lookalike.js"

/**
 * Keys that emulators publish in their documentation and use on every
 * install (Azurite's storage account key): not secrets, kept visible.
 */
export const emulatorKeys: ReadonlySet<string> = new Set([
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
])

/** A service whose credentials have no prefix: the names it goes by, and the shapes of its tokens. */
export interface Service {
  readonly names: ReadonlyArray<string>
  readonly shapes: ReadonlyArray<RegExp>
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The services, with the token shapes their documentation (and public scanners' detectors for them) give. */
export const services: ReadonlyArray<Service> = [
  { names: ["okta"], shapes: [/^00[A-Za-z0-9_-]{40}$/] },
  { names: ["zendesk"], shapes: [/^[A-Za-z0-9]{40}$/] },
  { names: ["jira", "atlassian", "confluence"], shapes: [/^[A-Za-z0-9]{24}$/] },
  { names: ["twilio"], shapes: [/^[0-9a-f]{32}$/] },
  { names: ["mailgun"], shapes: [/^[A-Za-z0-9-]{72}$/, /^[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}$/, /^key-[a-z0-9]{32}$/] },
  { names: ["paypal"], shapes: [/^[A-Za-z0-9_.-]{44,80}$/] },
  { names: ["assemblyai"], shapes: [/^[0-9a-z]{32}$/] },
  { names: ["alibaba", "aliyun"], shapes: [/^[A-Za-z0-9]{30}$/] },
  { names: ["railway"], shapes: [uuid] },
  { names: ["hubspot"], shapes: [uuid, /^pat-(?:na|eu)[0-9]-[0-9a-f-]{36}$/] },
  { names: ["vercel"], shapes: [/^[A-Za-z0-9]{24}$/] },
  { names: ["asana"], shapes: [/^[0-9]{1,20}(?:\/[0-9]{10,64}){1,2}:[A-Za-z0-9]{32,128}$/] },
  { names: ["cloudflare"], shapes: [/^[a-f0-9]{37}$/] }
]

/** Words that may stand between a service's name and its token: what the token is, and who it is for. */
const gapWord = /^(?:api|apis|app|token|tokens|key|keys|secret|secrets|auth|oauth|pass|password|client|account|sid|access|bearer|private|personal|admin|management|global|v[0-9])$/i

/** How far after a service's name its token may start. */
const REACH = 48

const isNameChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/** A token drawn at random: letters and digits, varied, not a placeholder or a typed sequence. */
const isRandom = (value: string): boolean =>
  /[0-9]/.test(value) && /[A-Za-z]/.test(value) && !isRepetitive(value) && !isTypedSequence(value) && !isPlaceholder(value) &&
  !/fake|example|test|dummy|sample/i.test(value) && shannonEntropy(value) >= 3

/**
 * Finds the token of `service` after its name, which starts at `at` in
 * `line`: past the rest of the identifier (`zendeskapi`, `OKTA_TOKEN`,
 * `HubSpotAPI`), then quotes, operators and words that say what the token
 * is (`token`, `api key`), within `REACH` characters, the first run of
 * token characters; it is the token when it has one of the service's
 * shapes and reads as random.
 */
export const locateServiceToken = (service: Service, line: string, at: number): readonly [number, number] | undefined => {
  if (at > 0 && isLetter(line.charCodeAt(at - 1))) return undefined
  let i = at
  while (i < line.length && isNameChar(line.charCodeAt(i))) i++
  const stop = Math.min(line.length, i + REACH)
  for (;;) {
    while (i < stop && /[ \t'"`:=(){}[\],>|-]/.test(line[i]!)) i++
    const word = /^[A-Za-z_]{1,16}/.exec(line.slice(i, i + 17))
    if (word === null || !gapWord.test(word[0]) || isNameChar(line.charCodeAt(i + word[0].length))) break
    i += word[0].length
  }
  if (i >= stop) return undefined
  const run = /^[A-Za-z0-9_.+/=:-]{16,200}/.exec(line.slice(i, i + 201))
  if (run === null) return undefined
  const token = run[0].replace(/[.:]+$/, "")
  if (!service.shapes.some((shape) => shape.test(token)) || !isRandom(token)) return undefined
  return [i, i + token.length]
}

/** One rule per service, anchored on its names (in any case). */
const serviceRule = (service: Service): SecretRule => ({
  id: `service-token-${service.names[0]}`,
  description: `A token of ${service.names[0]}'s documented shape shortly after the service's name on the same line (${service.names.join(", ")}); the name stays visible.`,
  pattern: new RegExp(service.names.join("|"), "i"),
  locate: (line, at) => locateServiceToken(service, line, at),
  anchors: service.names
})

// Airtable personal access tokens: pat, 14 letters and digits, a dot, 64 hex digits. `pat`
// alone (or after a blank or a quote) would wake the rule at every `path` of a log or a JSON
// object: it is found where a value starts, after an operator or the Bearer scheme.
const airtableStarts = ["=", "=\"", "='", ":", ": ", ":\"", ": \"", "Bearer "]

// A Discord bot token's first part is the base64 of a user id, a number of 17 to 20 digits:
// it starts with one of these (the base64 of `1`..`9` then a digit), then the second digit's
// own character (A E I M Q U Y c g k).
const snowflakeStarts = ["MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"].flatMap((two) =>
  "AEIMQUYcgk".split("").map((third) => two + third)
)

/** Rules for credentials found by what sits next to them. */
export const serviceRules: ReadonlyArray<SecretRule> = [
  ...services.map(serviceRule),
  {
    id: "airtable-personal-access-token",
    description: "Airtable personal access tokens (pat, 14 characters, a dot, 64 hex digits) after an operator, a quote or a blank.",
    pattern: /(?:=["']?|: ?"?|Bearer )pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])/,
    locate: (line, at) => {
      const start = line.indexOf("pat", at)
      return [start, start + 3 + 14 + 1 + 64]
    },
    anchors: airtableStarts.map((c) => `${c}pat`)
  },
  {
    id: "discord-bot-token",
    description: "Discord bot tokens: the base64 of the bot's user id (24 to 26 characters), a dot, 6 characters, a dot, 27 to 38 characters.",
    pattern: /(?<![A-Za-z0-9_-])[MNO][TjzD][AEIMQUYcgk][w-z0-5][A-Za-z0-9_-]{20,22}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])/,
    allow: (value) => {
      const last = value.slice(value.lastIndexOf(".") + 1)
      return isRepetitive(last) || isTypedSequence(last) || shannonEntropy(last) < 3.5
    },
    anchors: snowflakeStarts
  }
]
