import type { SecretRule } from "../../Secrets.js"
import { isCredentialValue, locateAssignment, locateMysqlPassword, locateUrlCredentials, locateUserOption } from "./assignment.js"
import { decodeBase64, isCredentialPair, isPlaceholder, isReference, isRepetitive, looksLikeWords } from "./lookalike.js"
import { formatSource, type TokenFormat, tokenFormats } from "./providers.js"
import { publishedValues } from "./publishedValues.js"
import { emulatorKeys, serviceRules } from "./services.js"

// Every pattern is written for the latin1 view of UTF-8 bytes: ASCII only,
// no `\s` or `.`, nothing that crosses a line break (key blocks aside), and
// bounded repetition so that a match stays far below 8 KiB. Each pattern
// starts with one of its anchors: the masker jumps to anchor positions and
// runs the pattern there.

/** True for a token body that is a placeholder or an identifier: `xxxx...`, `...EXAMPLE`, `requiredCharacteristicTypes`. */
const isPlaceholderBody = (body: string): boolean =>
  isRepetitive(body) || isPeriodic(body) || hasAscendingRun(body) || /example|x{6,}|X{6,}|\*{3,}|#{4,}|0{12,}|abcdefgh|12345678|ABCDEFGH|here$/i.test(body) ||
  (/^[A-Za-z_-]+$/.test(body) && body.length >= 12 && looksLikeWords(body)) ||
  // an identifier after a version or a number (`1-SlackAppConfigurationAccessTokenHere`)
  /^[0-9]{1,3}[-_.][A-Za-z_-]{12,}$/.test(body) && looksLikeWords(body.replace(/^[0-9]{1,3}[-_.]/, "")) ||
  // words joined by `_` and `-`, a number here and there (`PREfix_helloworld380_testin_pretty_long_token`)
  wordsWithNumbers(body)

/** Three pieces or more between `_` and `-`, with few digits, that read as words once their digits are taken out. */
const wordsWithNumbers = (body: string): boolean => {
  const pieces = body.split(/[_-]+/).filter((piece) => piece.length > 0)
  const digits = body.replace(/[^0-9]/g, "").length
  const letters = body.replace(/[^A-Za-z]/g, "").length
  return pieces.length >= 3 && body.length >= 16 && digits * 4 <= letters &&
    looksLikeWords(pieces.map((piece) => piece.replace(/[0-9]+/g, "")).join("_"))
}

/** Seven letters or digits in alphabet order (`lmnopqrs`, `3456789`): typed, not random. */
const hasAscendingRun = (body: string): boolean => {
  let run = 1
  for (let i = 1; i < body.length; i++) {
    const c = body.charCodeAt(i)
    run = c === body.charCodeAt(i - 1) + 1 && /[A-Za-z0-9]/.test(body[i]) ? run + 1 : 1
    if (run >= 7) return true
  }
  return false
}

/** A short sequence repeated over the whole body (`123123123123`, `abab...`): typed, not random. */
const isPeriodic = (body: string): boolean => /^(.{1,4})\1{3,}.{0,3}$/.test(body)

const formatRule = (format: TokenFormat): SecretRule => {
  const prefixes = [...format.prefixes].sort((a, b) => b.length - a.length)
  return {
    id: format.id,
    description: format.description,
    pattern: new RegExp(formatSource(format), format.ignoreCase === true ? "i" : ""),
    anchors: format.prefixes,
    allow: (value) => {
      if (publishedValues.has(value)) return true
      const lower = value.toLowerCase()
      const prefix = prefixes.find((p) => lower.startsWith(p.toLowerCase())) ?? ""
      if (format.holds !== undefined && !value.includes(format.holds, prefix.length)) return true
      return isPlaceholderBody(value.slice(prefix.length))
    }
  }
}

const beginMarker = "(?:-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----)"
const endMarker = /(?:-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----|---- END SSH2 ENCRYPTED PRIVATE KEY ----)/

// A line of a key block's body: base64 that does not read as a word, an
// armor header, a PGP checksum or a blank line, after the indentation, diff,
// quote or comment mark the opening marker's line may carry too.
const keyBodyLine = new RegExp(
  "^[ \\t]{0,40}(?:[+>#|-][ \\t]{0,2}|//[ \\t]?)?" +
    "(?:(?=[A-Za-z0-9+/]{0,127}(?:[0-9+/=]|[a-z][A-Z]|[A-Z]{2}[a-z]))[A-Za-z0-9+/]{4,128}={0,3}" +
    "|=[A-Za-z0-9+/]{4}" +
    "|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID|Subject): [^\\r\\n]{0,200}" +
    "|)[ \\t]{0,8}\\r?$"
)

const keyAnchors = ["-----BEGIN ", "---- BEGIN SSH2"]

/** The latin1 text of a base64 value's first bytes, or "" when it is not base64. */
const decodedStart = (value: string, chars = 120): string => decodeBase64(value.slice(0, chars - (chars % 4))) ?? ""

// Credential words in the case styles keys are written in (`password`,
// `dbPassword`, `DB_PASSWORD`); the rule reads the whole key around each.
// Three-letter words are found with a character next to them (`_key`,
// `KEY=`, `apiKey`): alone they would wake the rule at every `they`.
const lowers = "abcdefghijklmnopqrstuvwxyz".split("")
const shortWord = (word: string) => [
  ...["_", "-", ".", "\"", "'", " ", "$"].map((c) => c + word),
  ...["=", ":", "\"", "'", "_", "-", " ", ">"].map((c) => word + c),
  ...[...lowers, "_", "-", " ", "\"", "'"].map((c) => c + word[0].toUpperCase() + word.slice(1)),
  ...["_", "-", "\"", "'", " ", "$"].map((c) => c + word.toUpperCase()),
  ...["=", ":", "\"", "'", "_", " "].map((c) => word.toUpperCase() + c),
  ...["=", ":", "\"", "'", "_"].map((c) => word[0].toUpperCase() + word.slice(1) + c)
]
const keywordAnchors = [
  ...["pass", "secret", "token", "cred", "auth", "dockerc", "session"].flatMap((word) => [
    word,
    word[0].toUpperCase() + word.slice(1),
    word.toUpperCase()
  ]),
  ...shortWord("key"),
  ...shortWord("pwd"),
  "_PAT",
  // personal access tokens in lower and camel case, after a word and before an assignment
  // (`_pat` alone would wake the rule at every `_path`); few of them, since every anchor
  // makes the one pass over the bytes stop more often
  ...["=", ":", "\"", " "].map((after) => `_pat${after}`),
  ...["=", ":"].map((after) => `-pat${after}`),
  ...["=", ":", "\""].map((after) => `Pat${after}`)
]

/**
 * Whether a value under a Kubernetes Secret's `data:` is plainly not a
 * secret's base64: not base64 of whole bytes, or short and decoding to
 * binary (`true`, `Secret`: words a list's next keys hold, not values).
 */
const notSecretData = (value: string): boolean => {
  if (value.length % 4 !== 0) return true
  const decoded = decodeBase64(value)
  if (decoded === undefined) return true
  if (value.length >= 24) return false
  let printable = 0
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i)
    if ((c >= 0x20 && c < 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d || c >= 0xc2) printable++
  }
  return printable < decoded.length * 0.9
}

// A Secret's `data:` or `stringData:` key on a line of its own (at any indent, in a list item
// or not: not `metadata:`; a rule sees one line), then its entries: `key: value`, indented
// (a map: a `- name:` line after them is the next item of a list around the Secret).
const secretDataKey = (word: string) => new RegExp(`(?<=^[ \\t]{0,40}(?:-[ \\t]{1,4})?)${word}:[ \\t]{0,8}\\r?$`)
const secretEntry = (value: string) => new RegExp(`^[ \\t]{1,40}[A-Za-z0-9._-]{1,253}:[ \\t]{1,8}(${value})[ \\t]*\\r?$`)

// An XML element named for a credential (`<dbPassword>`, `<apiKey>`) alone on its line, and
// its value alone on the next line (as formatters wrap long text): the value, if it passes the
// gate an assignment to such a key does. A rule sees one line, so the opener is the element's
// line and the value is a block's one body line.
const elementLine = "(?<=^[ \\t]{0,40}<[A-Za-z0-9_.:-]{0,60}"
const keyQualifier = "(?:api|access|secret|private|client|signing|encryption|master|license|auth)[_.-]?"
const elementRule = (id: string, description: string, endings: ReadonlyArray<string>, strength: "password" | "token"): SecretRule => ({
  id,
  description,
  pattern: new RegExp(
    `(?:${endings.map((e) => e === "key" ? `${elementLine}${keyQualifier})key>` : `${elementLine})${e}>`).join("|")})[ \\t]{0,8}\\r?$`,
    "i"
  ),
  end: /<\//,
  body: /^[ \t]{0,40}([^\x00-\x20<>]{1,4000})[ \t]*\r?$/,
  group: 1,
  allow: (value) => !isCredentialValue(value, { strength, qualified: true }, true),
  maxLines: 1,
  maxLineBytes: 4096,
  anchors: endings.map((e) => `${e}>`)
})

const alternation = (words: ReadonlyArray<string>) => words.map((w) => w.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join("|")

/** The built-in rules, most specific first. */
export const defaultRules: ReadonlyArray<SecretRule> = [
  {
    id: "private-key",
    description: "PEM, OpenSSH, SSH2 and PGP private key blocks: the base64 body lines (and armor headers) after the BEGIN line, through the END line or the first line that cannot belong to a key; markers stay visible.",
    pattern: new RegExp(beginMarker),
    end: endMarker,
    body: keyBodyLine,
    maxLines: 4096,
    anchors: keyAnchors
  },
  {
    id: "private-key-inline",
    description: "A private key written on one line after its BEGIN marker (escaped `\\n` line breaks in JSON, or spaces).",
    pattern: new RegExp(`${beginMarker}((?:\\\\{1,2}[rn]|[ \\t]|[A-Za-z0-9+/=]){16,7000})`),
    group: 1,
    allow: (value) => !/[A-Za-z0-9+/]{16}/.test(value),
    anchors: keyAnchors
  },
  {
    id: "kubernetes-secret-data",
    description: "The base64 values under a Kubernetes Secret's data: (as kubectl get -o yaml prints them, whatever the keys are called); keys stay visible.",
    pattern: secretDataKey("data"),
    end: /(?!)/,
    body: secretEntry("[A-Za-z0-9+/]{4,8000}={0,2}"),
    group: 1,
    allow: notSecretData,
    maxLines: 1024,
    maxLineBytes: 8192,
    anchors: ["data:"]
  },
  {
    id: "kubernetes-secret-string-data",
    description: "The values under a Kubernetes Secret's stringData:, which holds secrets in plain text; keys stay visible.",
    pattern: secretDataKey("stringData"),
    end: /(?!)/,
    body: secretEntry("[^ \\t\\r\\n][^\\r\\n]{0,4000}?"),
    group: 1,
    // templates and values SOPS has encrypted (`ENC[AES256_GCM,...]`) are not the secret
    allow: isReference,
    maxLines: 1024,
    maxLineBytes: 8192,
    anchors: ["stringData:"]
  },
  elementRule("xml-element-password", "A password alone on the line inside a multi-line XML element named for one (<dbPassword>, <passphrase>); the tags stay visible.", [
    "password",
    "passwd",
    "pwd",
    "passphrase"
  ], "password"),
  elementRule("xml-element-token", "A token, secret or API key alone on the line inside a multi-line XML element named for one (<authToken>, <clientSecret>, <apiKey>); the tags stay visible.", [
    "token",
    "secret",
    "credentials",
    "credential",
    "key"
  ], "token"),
  {
    id: "putty-private-key",
    description: "The private lines of PuTTY key files (after Private-Lines:, up to Private-MAC:).",
    pattern: /Private-Lines: [0-9]{1,4}/,
    end: /Private-MAC: /,
    body: /^(?:[A-Za-z0-9+/]{4,128}={0,3})?\r?$/,
    maxLines: 1024,
    anchors: ["Private-Lines: "]
  },
  {
    id: "private-key-base64",
    description: "Private keys encoded whole in base64 (LS0tLS1CRUdJTi..., as Kubernetes secrets and CI variables hold them).",
    pattern: /LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,7000}={0,2}/,
    allow: (value) => !decodedStart(value).includes("PRIVATE KEY"),
    anchors: ["LS0tLS1CRUdJTi"]
  },
  {
    id: "aws-access-key-id",
    description: "AWS access key ids (AKIA, ASIA and related prefixes, 20 characters).",
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])/,
    allow: (value) => value.endsWith("EXAMPLE") || isPlaceholderBody(value.slice(4)),
    anchors: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"]
  },
  {
    id: "aws-secret-access-key",
    description: "AWS secret access keys assigned to aws_secret_access_key, AWS_SECRET_ACCESS_KEY or SecretAccessKey.",
    pattern: /secret[_-]?access[_-]?key["']?[ \t]{0,16}(?::=|=>|[:=])[ \t]{0,16}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/i,
    group: 1,
    allow: (value) => value.endsWith("EXAMPLEKEY"),
    anchors: ["secret"]
  },
  {
    id: "azure-storage-account-key",
    description: "Account keys in Azure storage and service bus connection strings (AccountKey=, SharedAccessKey=).",
    pattern: /(?:AccountKey|SharedAccessKey)[ \t]{0,16}=[ \t]{0,16}([A-Za-z0-9+/]{20,1024}={0,2})/i,
    group: 1,
    // words (`storageaccountkeybase64encoded`), and the storage emulator's key, which Microsoft publishes
    allow: (value) => looksLikeWords(value) || isPlaceholder(value) || emulatorKeys.has(value),
    anchors: ["AccountKey", "SharedAccessKey"]
  },
  {
    id: "azure-sas-signature",
    description: "The sig= signature of Azure shared access signature URLs and tokens.",
    pattern: /(?<![^?&;\n\r \t"'])sig=([A-Za-z0-9%+/_-]{16,1024}={0,2})/i,
    group: 1,
    anchors: ["sig="]
  },
  {
    id: "azure-sas-token",
    description: "Whole Azure SharedAccessSignature values in connection strings and headers.",
    pattern: /SharedAccessSignature[ \t]{0,16}[= ][ \t]{0,16}([^\x00-\x20"';]{16,4096})/i,
    group: 1,
    anchors: ["SharedAccessSignature"]
  },
  {
    id: "azure-ad-client-secret",
    description: "Microsoft Entra ID (Azure AD) client secrets (three characters, a digit, then Q~); masked from Q~ on.",
    pattern: /(?<=[A-Za-z0-9_~.]{3})[0-9](Q~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])/,
    group: 1,
    allow: (value) => isPlaceholderBody(value.slice(2)),
    anchors: "0123456789".split("").map((digit) => `${digit}Q~`)
  },
  {
    id: "azure-devops-pat",
    description: "Azure DevOps personal access tokens of 84 characters, which carry AZDO at the 77th.",
    pattern: /AZDO[A-Za-z0-9]{4}(?![A-Za-z0-9])/,
    locate: (line, at) =>
      at >= 76 && /^[A-Za-z0-9]{76}$/.test(line.slice(at - 76, at)) && (at === 76 || !/[A-Za-z0-9]/.test(line[at - 77]))
        ? [at - 76, at + 8]
        : undefined,
    anchors: ["AZDO"]
  },
  {
    id: "terraform-cloud-token",
    description: "Terraform Cloud / Enterprise API tokens (<id>.atlasv1.<secret>); masked from .atlasv1. on.",
    pattern: /(?<=[A-Za-z0-9]{14})\.atlasv1\.[A-Za-z0-9_=-]{60,120}/,
    allow: (value) => isPlaceholderBody(value.slice(9)),
    anchors: [".atlasv1."]
  },
  ...tokenFormats.map(formatRule),
  {
    id: "twilio-api-key",
    description: "Twilio API keys (SK followed by 32 hex digits).",
    pattern: /(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![0-9A-Za-z])/,
    allow: (value) => isRepetitive(value.slice(2)),
    anchors: "0123456789abcdefABCDEF".split("").map((digit) => `SK${digit}`)
  },
  {
    id: "openai-legacy-api-key",
    description: "OpenAI keys of any kind that carry the T3BlbkFJ marker (sk-...T3BlbkFJ...).",
    pattern: /T3BlbkFJ[A-Za-z0-9_-]{1,200}/,
    locate: (line, at) => {
      const start = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{0,200}$/.exec(line.slice(Math.max(0, at - 204), at))
      if (start === null) return undefined
      const end = /^T3BlbkFJ[A-Za-z0-9_-]{1,200}/.exec(line.slice(at, at + 210))!
      return [at - start[0].length, at + end[0].length]
    },
    anchors: ["T3BlbkFJ"]
  },
  {
    id: "telegram-bot-token",
    description: "Telegram bot tokens (a bot id, a colon, then AA and 33 characters); masked from the colon on.",
    pattern: /:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/,
    locate: (line, at) => (/[0-9]{8,10}$/.test(line.slice(Math.max(0, at - 10), at)) ? [at + 1, at + 36] : undefined),
    anchors: [":AA"]
  },
  {
    id: "mailchimp-api-key",
    description: "Mailchimp API keys (32 hex digits, then -us and the data center), data center included.",
    pattern: /-us[0-9]{1,2}(?![A-Za-z0-9])/,
    locate: (line, at) => {
      if (at < 32 || !/^[a-f0-9]{32}$/.test(line.slice(at - 32, at)) || /[A-Za-z0-9_-]/.test(line[at - 33] ?? "")) return undefined
      // the data center is part of the key as Mailchimp issues it
      const center = /^-us[0-9]{1,2}/.exec(line.slice(at, at + 5))!
      return [at - 32, at + center[0].length]
    },
    anchors: "123456789".split("").map((digit) => `-us${digit}`)
  },
  {
    id: "maxmind-license-key",
    description: "MaxMind license keys (6 characters, _, 29 characters, _mmk).",
    pattern: /_mmk(?![A-Za-z0-9_])/,
    locate: (line, at) =>
      at >= 36 && /^[A-Za-z0-9]{6}_[A-Za-z0-9]{29}$/.test(line.slice(at - 36, at)) && !/[A-Za-z0-9_]/.test(line[at - 37] ?? "")
        ? [at - 36, at + 4]
        : undefined,
    anchors: ["_mmk"]
  },
  {
    id: "slack-webhook-url",
    description: "The secret path of Slack incoming webhook and workflow URLs (hooks.slack.com/services/...).",
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9_/+-]{16,512})/,
    group: 1,
    anchors: ["hooks.slack.com/"]
  },
  {
    id: "discord-webhook-url",
    description: "The token of Discord webhook URLs (discord.com/api/webhooks/<id>/<token>).",
    pattern: /discord(?:app)?\.com\/api\/webhooks\/[0-9]{17,20}\/([A-Za-z0-9_-]{60,72})/,
    group: 1,
    anchors: ["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"]
  },
  {
    id: "teams-webhook-url",
    description: "The secret path of Microsoft Teams incoming webhook URLs (webhook.office.com/webhookb2/...).",
    pattern: /webhook\.office\.com\/webhookb2\/([A-Za-z0-9@/_-]{60,400})/,
    group: 1,
    anchors: ["webhook.office.com/webhookb2/"]
  },
  {
    id: "sidekiq-credentials",
    description: "Sidekiq Pro and Enterprise gem server credentials (BUNDLE_GEMS__CONTRIBSYS__COM=...).",
    pattern: /BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM["']?[ \t]{0,8}[:=][ \t]{0,8}["']?([a-f0-9]{8}:[a-f0-9]{8})/i,
    group: 1,
    anchors: ["BUNDLE_ENTERPRISE__CONTRIBSYS__COM", "BUNDLE_GEMS__CONTRIBSYS__COM"]
  },
  {
    id: "jwt",
    description: "JSON Web Tokens: base64url parts, the first two starting eyJ; the third (the signature) may be missing, as in unsigned tokens.",
    pattern: /eyJ[A-Za-z0-9_-]{4,1024}\.eyJ[A-Za-z0-9_-]{4,5000}(?:\.[A-Za-z0-9_-]{0,1500})?/,
    anchors: ["eyJ"]
  },
  {
    id: "jwt-base64",
    description: "JSON Web Tokens encoded once more in base64 (ZXlK...).",
    pattern: /ZXlK[A-Za-z0-9+/]{40,7000}={0,2}/,
    allow: (value) => !/^eyJ[A-Za-z0-9_-]{4,}\.eyJ/.test(decodedStart(value, 4000)),
    anchors: ["ZXlK"]
  },
  {
    id: "docker-config-base64",
    description: "Docker registry credentials (a config.json) encoded in base64, as Kubernetes .dockerconfigjson values are (eyJhdXRocyI6...).",
    pattern: /(?:eyJhdXRocyI6|ewogICJhdXRocyI6|ewoJImF1dGhzIjog)[A-Za-z0-9+/]{20,7000}={0,2}/,
    anchors: ["eyJhdXRocyI6", "ewogICJhdXRocyI6", "ewoJImF1dGhzIjog"]
  },
  {
    id: "bearer-token",
    description: "A token after the word Bearer anywhere (curl flags, logged headers); the scheme stays visible.",
    pattern: /(?<![A-Za-z0-9])bearer[ \t]{1,16}([A-Za-z0-9._~+/-]{16,4096}={0,2})/i,
    group: 1,
    minEntropy: 3,
    allow: (value) => isReference(value) || isRepetitive(value) || looksLikeWords(value),
    anchors: ["bearer"]
  },
  {
    id: "basic-credentials",
    description: "Base64 user:password after the word Basic anywhere; the scheme stays visible.",
    pattern: /(?<![A-Za-z0-9])basic[ \t]{1,16}([A-Za-z0-9+/]{6,4096}={0,2})(?![A-Za-z0-9+/=])/i,
    group: 1,
    allow: (value) => !isCredentialPair(value),
    anchors: ["basic"]
  },
  {
    id: "url-credentials",
    description: "The password of credentials embedded in a URL (scheme://user:password@host), or the token given as the user before x-oauth-basic; placeholder passwords (password, YOUR_PASSWORD, the user name again) stay visible.",
    pattern: /:\/\/[^\x00-\x20:/?#@"'<>\\[\]{}]{0,256}:[^\x00-\x20/?#"'<>\\]{1,256}@/,
    locate: locateUrlCredentials,
    anchors: ["://"]
  },
  {
    id: "sidekiq-gem-server-url",
    description: "The user and password of Sidekiq Pro and Enterprise gem server URLs (https://user:password@gems.contribsys.com/): both are the license's credentials.",
    pattern: /contribsys\.com/i,
    locate: (line, at) => {
      const m = /:\/\/([A-Za-z0-9]{1,64}:[A-Za-z0-9]{1,64})@(?:gems\.|enterprise\.)?$/i.exec(line.slice(Math.max(0, at - 160), at))
      return m === null ? undefined : [at - m[0].length + 3, at - m[0].length + 3 + m[1].length]
    },
    anchors: ["contribsys.com"]
  },
  {
    id: "docker-config-auth",
    description: "Base64 credentials in Docker config.json auths entries (\"auth\": \"...\").",
    pattern: /"auth"[ \t]{0,16}:[ \t]{0,16}"([A-Za-z0-9+/]{8,4096}={0,2})"/,
    group: 1,
    anchors: ["\"auth\""]
  },
  {
    id: "npmrc-auth",
    description: "Credentials in .npmrc files (_authToken=, _auth=, _password=).",
    pattern: /(?<![A-Za-z0-9])_(?:auth(?:Token)?|password)[ \t]{0,16}=[ \t]{0,16}["']?([^\x00-\x20"'&;,\x7f]{8,4096})/,
    group: 1,
    allow: (value) => isReference(value) || isPlaceholder(value),
    anchors: ["_auth", "_password"]
  },
  {
    id: "mysql-password-option",
    description: "The password of a MySQL or MariaDB client's -pPASSWORD (mysql, mysqldump, mysqladmin, mariadb...); -p alone asks for it and is kept.",
    pattern: /(?:mysql|mariadb)[a-z-]{0,12}(?:\.exe)?[ \t]/,
    locate: locateMysqlPassword,
    anchors: ["mysql", "mariadb"]
  },
  {
    id: "user-option",
    description: "The password of -u user:password and --user user:password (curl, wget, httpie); the user name stays visible.",
    pattern: /[ \t](?:--user|-u|--http-user|--auth)[ \t=]/,
    locate: (line, at) => locateUserOption(line, at + 1),
    anchors: [" -u ", " -u=", "\t-u ", " --user", "\t--user", " --http-user", " --auth "]
  },
  ...serviceRules,
  {
    id: "generic-assignment",
    description: "Values assigned to keys that name a credential (password, secret, token, api key, private key, auth ...), with any common operator or markup around them; gated by length, entropy and look-alike checks that look at the key and the value.",
    pattern: new RegExp(alternation(keywordAnchors)),
    locate: locateAssignment,
    anchors: keywordAnchors
  }
]
