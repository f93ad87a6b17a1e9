import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"

// Example credentials are generated here (seeded) or built by concatenation,
// so this file holds no literal token for secret scanners to flag.

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(20240901)

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const LOWER = "abcdefghijklmnopqrstuvwxyz"
const DIGITS = "0123456789"
const ALNUM = UPPER + LOWER + DIGITS
const HEX = "0123456789abcdef"
const B64 = ALNUM + "+/"
const B64URL = ALNUM + "_-"

/** A random string of `length` characters from `alphabet`, with one of its digits every fourth character so it always looks random. */
const gen = (alphabet: string, length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) {
    const digits = alphabet.replace(/[^0-9]/g, "")
    const from = i % 4 === 1 && digits.length > 0 ? digits : alphabet
    out += from[Math.floor(random() * from.length)]
  }
  return out
}

const stars = (text: string) => "*".repeat(Buffer.byteLength(text, "utf8"))

interface Hit {
  readonly text: string
  readonly expected: string
  readonly secrets: ReadonlyArray<string>
}

/** A text with the given secret parts, and the text expected once they are masked. */
const hide = (text: string, ...secrets: Array<string>): Hit => {
  let expected = text
  for (const secret of secrets) {
    expect(expected.includes(secret), secret).toBe(true)
    expected = expected.split(secret).join(stars(secret))
  }
  return { text, expected, secrets }
}

/** Builds `prefix + body` texts where the whole token is the secret. */
const token = (before: string, value: string, after = ""): Hit => hide(before + value + after, value)

interface Case {
  readonly hit: ReadonlyArray<Hit>
  readonly keep: ReadonlyArray<string>
}

const keyLines = [gen(B64, 64), gen(B64, 64), gen(B64, 24) + "=="]
const jwtHeader = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")
const jwtPayload = Buffer.from(JSON.stringify({ sub: "1234567890", name: "build-bot", iat: 1716239022 })).toString("base64url")
const jwt = `${jwtHeader}.${jwtPayload}.${gen(B64URL, 43)}`
const basicValue = Buffer.from("deploy:" + gen(ALNUM, 16)).toString("base64")
const dockerAuth = Buffer.from("robot:" + gen(ALNUM, 24)).toString("base64")
const storageKey = gen(B64, 86) + "=="
const sasSig = gen(B64, 40) + "%2B" + gen(ALNUM, 3) + "%3D"
const urlPassword = gen(ALNUM, 20)
const genericValue = gen(ALNUM + "!#%", 24)
const quotedValue = gen(ALNUM + " !#%", 28)

const cases: Record<string, Case> = {
  "private-key": {
    hit: [
      hide(
        `key:\n-----BEGIN RSA PRIVATE KEY-----\n${keyLines.join("\n")}\n-----END RSA PRIVATE KEY-----\ndone\n`,
        ...keyLines
      ),
      hide(
        `-----BEGIN OPENSSH PRIVATE KEY-----\r\n${keyLines.join("\r\n")}\r\n-----END OPENSSH PRIVATE KEY-----\r\n`,
        ...keyLines
      ),
      hide(
        `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${keyLines.join("\\n")}\\n-----END PRIVATE KEY-----\\n"}`,
        `\\n${keyLines.join("\\n")}\\n`
      ),
      hide(`-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${keyLines[0]}\n-----END PGP PRIVATE KEY BLOCK-----`, keyLines[0]),
      hide(`-----BEGIN ENCRYPTED PRIVATE KEY-----\n${keyLines[0]}\n${keyLines[1]}`, keyLines[0], keyLines[1])
    ],
    keep: [
      `-----BEGIN CERTIFICATE-----\n${keyLines[0]}\n-----END CERTIFICATE-----\n`,
      `-----BEGIN PUBLIC KEY-----\n${keyLines[1]}\n-----END PUBLIC KEY-----\n`
    ]
  },
  "aws-access-key-id": {
    hit: [token("aws_access_key_id = ", "AKIA" + gen(UPPER + DIGITS, 16)), token("\"AccessKeyId\": \"", "ASIA" + gen(UPPER + DIGITS, 16), "\",")],
    keep: ["AKIA" + "EXAMPLE", "XAKIA" + gen(UPPER + DIGITS, 16), "AKIA" + gen(UPPER + DIGITS, 20)]
  },
  "aws-secret-access-key": {
    hit: [
      token("aws_secret_access_key = ", gen(B64, 40)),
      token("export AWS_SECRET_ACCESS_KEY=", gen(B64, 40)),
      token("\"SecretAccessKey\": \"", gen(B64, 40), "\",")
    ],
    keep: ["aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}", "aws_secret_access_key = " + gen(B64, 30)]
  },
  "google-api-key": {
    hit: [token("key=", "AIza" + gen(B64URL, 35))],
    keep: ["AIza" + gen(ALNUM, 20)]
  },
  "google-oauth-client-secret": {
    hit: [token("\"client_secret\":\"", "GOCSPX-" + gen(B64URL, 28), "\"")],
    keep: ["GOCSPX-short"]
  },
  "google-oauth-access-token": {
    hit: [token("access_token: ", "ya29." + gen(B64URL, 120))],
    keep: ["ya29.short"]
  },
  "azure-storage-account-key": {
    hit: [
      hide(
        `DefaultEndpointsProtocol=https;AccountName=build;AccountKey=${storageKey};EndpointSuffix=core.windows.net`,
        storageKey
      ),
      hide(`Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=${storageKey}`, storageKey)
    ],
    keep: ["AccountKey=${STORAGE_KEY}", "AccountKey=short"]
  },
  "azure-sas-signature": {
    hit: [hide(`https://build.blob.core.windows.net/logs/a.txt?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=${sasSig}&x=1`, sasSig)],
    keep: ["https://example.com/?design=abcdefghijklmnopqrstuvwxyz", "sig=short"]
  },
  "azure-sas-token": {
    hit: [
      hide(
        `BlobEndpoint=https://b.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=${sasSig};x`,
        `sv=2022-11-02&ss=b&sig=${sasSig}`
      )
    ],
    keep: ["SharedAccessSignature is documented elsewhere"]
  },
  "azure-ad-client-secret": {
    hit: [(() => {
      const secret = "Q~" + gen(ALNUM + "_~.-", 34)
      return hide(`AZURE_CLIENT_SECRET=${gen(ALNUM, 3)}8${secret} `, secret)
    })()],
    keep: ["press Q~ to quit", "xQ~" + gen(ALNUM, 34)]
  },
  "github-token": {
    hit: [token("export GITHUB_TOKEN=", "ghp_" + gen(ALNUM, 36)), token("x-access-token:", "ghs_" + gen(ALNUM, 36), "@github.com")],
    keep: ["ghp_" + gen(ALNUM, 20), "ghx_" + gen(ALNUM, 36)]
  },
  "github-fine-grained-pat": {
    hit: [token("", "github_pat_" + gen(ALNUM, 22) + "_" + gen(ALNUM, 59))],
    keep: ["github_pat_short"]
  },
  "gitlab-token": {
    hit: [
      token("PRIVATE-TOKEN: ", "glpat-" + gen(B64URL, 20)),
      token("deploy ", "gldt-" + gen(B64URL, 20)),
      token("runner ", "glrt-" + gen(B64URL, 20))
    ],
    keep: ["glpat-short", "glxyz-" + gen(ALNUM, 20)]
  },
  "slack-token": {
    hit: [
      token("SLACK_BOT_TOKEN=", "xoxb-" + gen(DIGITS, 12) + "-" + gen(DIGITS, 13) + "-" + gen(ALNUM, 24)),
      token("", "xoxp-" + gen(DIGITS, 12) + "-" + gen(ALNUM, 32)),
      token("", "xapp-1-" + gen(UPPER + DIGITS, 11) + "-" + gen(DIGITS, 13) + "-" + gen(HEX, 64))
    ],
    keep: ["xoxb-123", "xoxz-" + gen(ALNUM, 20)]
  },
  "slack-webhook-url": {
    hit: [(() => {
      const path = `T${gen(UPPER + DIGITS, 8)}/B${gen(UPPER + DIGITS, 10)}/${gen(ALNUM, 24)}`
      return hide(`curl -X POST https://hooks.slack.com/services/${path} -d @msg.json`, path)
    })()],
    keep: ["see https://hooks.slack.com/services/ for webhooks", "https://api.slack.com/messaging/webhooks"]
  },
  "stripe-secret-key": {
    hit: [token("STRIPE_KEY=", "sk_" + "live_" + gen(ALNUM, 24)), token("", "rk_" + "test_" + gen(ALNUM, 24))],
    keep: ["sk_" + "live_abc", "pk_" + "live_" + gen(ALNUM, 24)]
  },
  "stripe-webhook-secret": {
    hit: [token("STRIPE_WEBHOOK_SECRET=", "whsec_" + gen(ALNUM, 32))],
    keep: ["whsec_short"]
  },
  "npm-token": {
    hit: [token("//registry.npmjs.org/:_authToken=", "npm_" + gen(ALNUM, 36))],
    keep: ["npm_config_registry=https://registry.npmjs.org/", "npm_" + gen(ALNUM, 40)]
  },
  "npmrc-auth": {
    hit: [
      token("//registry.npmjs.org/:_authToken=", gen(HEX, 8) + "-" + gen(HEX, 4) + "-" + gen(HEX, 4) + "-" + gen(HEX, 4) + "-" + gen(HEX, 12)),
      token("_auth=", Buffer.from("me:" + gen(ALNUM, 12)).toString("base64"))
    ],
    keep: ["//registry.npmjs.org/:_authToken=${NPM_TOKEN}", "_authorization=abcdefghijkl"]
  },
  "pypi-token": {
    hit: [token("password = ", "pypi-" + "AgEIcHlwaS5vcmc" + gen(B64URL, 140))],
    keep: ["pypi-" + "AgEIcHlwaS5vcmc" + "short", "pypi-" + gen(ALNUM, 80)]
  },
  "openai-api-key": {
    hit: [token("OPENAI_API_KEY=", "sk-" + "proj-" + gen(B64URL, 120)), token("", "sk-" + "svcacct-" + gen(B64URL, 80))],
    keep: ["sk-" + "proj-short", "task-proj-" + gen(ALNUM, 40)]
  },
  "openai-legacy-api-key": {
    hit: [token("", "sk-" + gen(ALNUM, 20) + "T3Blbk" + "FJ" + gen(ALNUM, 20))],
    keep: ["sk-" + "abcdefghij".repeat(5), "disk-" + gen(ALNUM, 20) + "T3Blbk" + "FJ" + gen(ALNUM, 20)]
  },
  "anthropic-api-key": {
    hit: [token("ANTHROPIC_API_KEY=", "sk-" + "ant-" + "api03-" + gen(B64URL, 93) + "AA"), token("", "sk-" + "ant-" + "admin01-" + gen(B64URL, 93))],
    keep: ["sk-" + "ant-short"]
  },
  "huggingface-token": {
    hit: [token("HF_TOKEN=", "hf_" + gen(UPPER + LOWER, 34))],
    keep: ["from huggingface_hub import hf_hub_download"]
  },
  "twilio-api-key": {
    hit: [token("TWILIO_API_KEY=", "SK" + gen(HEX, 32))],
    keep: ["TASK" + gen(HEX, 32), "SK" + gen(HEX, 20)]
  },
  "sendgrid-api-key": {
    hit: [token("SENDGRID_API_KEY=", "SG." + gen(B64URL, 22) + "." + gen(B64URL, 43))],
    keep: ["SG.example.com", "SG." + gen(ALNUM, 22)]
  },
  "mailgun-api-key": {
    hit: [token("api:", "key-" + gen(HEX, 32))],
    keep: ["cache-key-" + gen(HEX, 32), "key-" + gen(HEX, 16)]
  },
  "digitalocean-token": {
    hit: [token("DIGITALOCEAN_TOKEN=", "dop_" + "v1_" + gen(HEX, 64))],
    keep: ["dop_" + "v1_" + gen(HEX, 10)]
  },
  "shopify-token": {
    hit: [token("X-Shopify-Access-Token: ", "shpat_" + gen(HEX, 32))],
    keep: ["shpat_" + "xyz"]
  },
  "atlassian-api-token": {
    hit: [token("JIRA_API_TOKEN=", "ATATT3" + "xFfGF0" + gen(B64URL, 180)), token("", "ATBB" + gen(ALNUM, 32))],
    keep: ["ATATT3" + "short", "ATBB short"]
  },
  "databricks-token": {
    hit: [token("DATABRICKS_TOKEN=", "dapi" + gen(HEX, 32))],
    keep: ["dapi" + gen(HEX, 10), "loadapi" + gen(HEX, 32)]
  },
  "vault-token": {
    hit: [token("VAULT_TOKEN=", "hvs." + gen(B64URL, 90))],
    keep: ["hvs.short"]
  },
  "linear-api-key": {
    hit: [token("", "lin_" + "api_" + gen(ALNUM, 40))],
    keep: ["lin_" + "api_short"]
  },
  "postman-api-key": {
    hit: [token("", "PMAK-" + gen(HEX, 24) + "-" + gen(HEX, 34))],
    keep: ["PMAK-" + gen(HEX, 10)]
  },
  "doppler-token": {
    hit: [token("DOPPLER_TOKEN=", "dp." + "pt." + gen(ALNUM, 43)), token("", "dp." + "st." + "prd." + gen(ALNUM, 40))],
    keep: ["dp." + "pt.short", "dp.xx." + gen(ALNUM, 43)]
  },
  "grafana-token": {
    hit: [token("", "glsa_" + gen(ALNUM, 32) + "_" + gen(HEX, 8)), token("", "glc_" + gen(B64, 60) + "==")],
    keep: ["glsa_short", "glc_short"]
  },
  "sentry-token": {
    hit: [token("SENTRY_AUTH_TOKEN=", "sntrys_" + "eyJ" + gen(B64, 80)), token("", "sntryu_" + gen(HEX, 64))],
    keep: ["sntrys_short"]
  },
  "docker-hub-token": {
    hit: [token("echo ", "dckr_" + "pat_" + gen(B64URL, 27), " | docker login -u me --password-stdin")],
    keep: ["dckr_" + "pat_x"]
  },
  "square-token": {
    hit: [token("", "sq0atp-" + gen(B64URL, 22)), token("", "sq0csp-" + gen(B64URL, 43))],
    keep: ["sq0atp-x"]
  },
  "pulumi-token": {
    hit: [token("PULUMI_ACCESS_TOKEN=", "pul-" + gen(HEX, 40))],
    keep: ["pul-" + gen(HEX, 20)]
  },
  "terraform-cloud-token": {
    hit: [(() => {
      const secret = ".atlasv1." + gen(B64URL, 67)
      return hide(`TF_TOKEN_app_terraform_io=${gen(ALNUM, 14)}${secret}`, secret)
    })()],
    keep: ["x.atlasv1.short"]
  },
  "age-secret-key": {
    hit: [token("", "AGE-SECRET-KEY-1" + gen("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))],
    keep: ["AGE-SECRET-KEY-1" + "short"]
  },
  jwt: {
    hit: [token("id_token=", jwt), token("Cookie: session=", jwt, "; Path=/")],
    keep: [`header ${jwtHeader} only`, `${jwtHeader}.${gen(ALNUM, 20)}.${gen(ALNUM, 20)}`]
  },
  "authorization-header": {
    hit: [
      (() => {
        const credential = gen(B64URL + ".~", 40)
        return hide(`curl -H "Authorization: Bearer ${credential}" https://api.example.com`, credential)
      })(),
      hide(`> Authorization: Basic ${basicValue}`, basicValue),
      (() => {
        const credential = gen(ALNUM, 40)
        return hide(`{"authorization":"token ${credential}"}`, credential)
      })()
    ],
    keep: ["Authorization: Bearer ${TOKEN}", "Authorization: none"]
  },
  "bearer-token": {
    hit: [(() => {
      const credential = gen(B64URL, 48)
      return hide(`sending request with bearer ${credential}`, credential)
    })()],
    keep: ["Bearer authentication is required", "token_type: Bearer"]
  },
  "basic-credentials": {
    hit: [hide(`proxy auth: Basic ${basicValue}`, basicValue)],
    keep: ["Basic settings applied", "basic usage"]
  },
  "url-credentials": {
    hit: [
      hide(`git clone https://ci:${urlPassword}@git.example.com/org/repo.git`, urlPassword),
      hide(`DATABASE_URL=postgres://app:${urlPassword}@db:5432/app`, urlPassword)
    ],
    keep: [
      "GET https://registry.npmjs.org:443/lodash/-/lodash-4.17.21.tgz",
      "postgres://app@db:5432/app",
      "https://${USER}:${PASSWORD}@git.example.com/repo.git"
    ]
  },
  "docker-config-auth": {
    hit: [hide(`{"auths":{"ghcr.io":{"auth":"${dockerAuth}"}}}`, dockerAuth)],
    keep: ["{\"auths\":{\"ghcr.io\":{\"auth\":\"${DOCKER_AUTH}\"}}}"]
  },
  "generic-secret-assignment": {
    hit: [
      token("DB_PASSWORD=", genericValue),
      token("  password: ", genericValue),
      token("--api-key=", genericValue, " --verbose"),
      token("client_secret = ", genericValue, " # rotated"),
      token("export SECRET_TOKEN=", genericValue),
      // 32 hex digits, as `openssl rand -hex 16` prints: not a git object name
      token("password=", gen(HEX, 32))
    ],
    keep: [
      "password=changeme",
      "token=" + gen(HEX, 40),
      "token=" + gen(HEX, 12),
      "secret=550e8400-e29b-41d4-a716-446655440000",
      "token=sha512-" + gen(B64, 86) + "==",
      "password=${DB_PASSWORD}",
      "api_key=$API_KEY",
      "tokens=123456789012",
      "password=**********",
      "password: <your-password>",
      "secret_enabled=true"
    ]
  },
  "generic-secret-assignment-quoted": {
    hit: [
      token("{\"client_secret\": \"", quotedValue, "\"}"),
      token("password = '", quotedValue, "'"),
      token("API_KEY=\"", genericValue, "\""),
      token("'password' => '", genericValue, "',"),
      token("token := \"", genericValue, "\"")
    ],
    keep: [
      "\"password\": \"changeme\"",
      "\"api_key\": \"${API_KEY}\"",
      "\"secret\": \"550e8400-e29b-41d4-a716-446655440000\"",
      "token: \"" + gen(HEX, 40) + "\"",
      "\"password\": \"\""
    ]
  }
}

/** Pattern source with escapes and character classes blanked out, to check what is left. */
const bare = (source: string): string => source.replace(/\\./g, "E").replace(/\[[^\]]*\]/g, "C")

describe("defaultRules", () => {
  it("has true and false test cases for every rule, and no cases for rules that do not exist", () => {
    const ids = Secrets.defaultRules.map((rule) => rule.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) {
      expect(cases[id], `test cases for ${id}`).toBeDefined()
      expect(cases[id].hit.length, `true cases for ${id}`).toBeGreaterThan(0)
      expect(cases[id].keep.length, `false cases for ${id}`).toBeGreaterThan(0)
    }
    expect(Object.keys(cases).sort()).toEqual([...ids].sort())
  })

  it("stays in latin1 space with bounded repetition, and has anchors", () => {
    for (const rule of Secrets.defaultRules) {
      for (const pattern of [rule.pattern, ...(rule.end === undefined ? [] : [rule.end])]) {
        expect(pattern.source, rule.id).not.toMatch(/\\[sSdDwWbB]/)
        expect(pattern.flags.replace("i", ""), rule.id).toBe("")
        const left = bare(pattern.source)
        expect(left, `${rule.id}: unbounded repetition`).not.toMatch(/[*+]|\{\d+,\}/)
        expect(left, `${rule.id}: bare dot`).not.toContain(".")
        expect(pattern.source, `${rule.id}: non-ASCII`).toMatch(/^[\x20-\x7e]*$/)
      }
      expect(rule.anchors?.length ?? 0, rule.id).toBeGreaterThan(0)
      expect(rule.description.length, rule.id).toBeGreaterThan(10)
    }
  })

  for (const rule of Secrets.defaultRules) {
    describe(rule.id, () => {
      const only = Secrets.unsafeMakeMasker({ rules: [rule] })
      const all = Secrets.unsafeMakeMasker()
      const testCase = cases[rule.id] ?? { hit: [], keep: [] }

      it("masks the credential and nothing else", () => {
        for (const hit of testCase.hit) expect(only.maskText(hit.text)).toBe(hit.expected)
      })

      it("keeps look-alikes", () => {
        for (const text of testCase.keep) expect(only.maskText(text)).toBe(text)
      })

      it("masks the credential with the default rules too", () => {
        for (const hit of testCase.hit) {
          const masked = all.maskText(hit.text)
          expect(Buffer.byteLength(masked)).toBe(Buffer.byteLength(hit.text))
          for (const secret of hit.secrets) expect(masked).not.toContain(secret)
        }
      })

      it("does not match across a line break", () => {
        if (rule.end !== undefined) return
        for (const hit of testCase.hit) {
          for (const secret of hit.secrets) {
            const half = Math.floor(secret.length / 2)
            const broken = hit.text.replace(secret, secret.slice(0, half) + "\n" + secret.slice(half))
            const masked = only.maskText(broken)
            // Whatever is masked on either side, the line break itself survives.
            expect(masked.split("\n").length).toBe(broken.split("\n").length)
          }
        }
      })
    })
  }
})

describe("default rules on ordinary output", () => {
  const masker = Secrets.unsafeMakeMasker()
  const lines = [
    "2024-05-01T12:00:33.123Z [webpack] compiled successfully in 2345 ms",
    "npm WARN deprecated inflight@1.0.6: This module is not supported",
    "added 1234 packages, and audited 1235 packages in 12s",
    "GET https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz 200",
    "\"integrity\": \"sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==\",",
    "commit 3f2c9a1b7d4e5f60718293a4b5c6d7e8f9012345",
    "Merge pull request #42 from org/feature/token-refresh",
    "  ✓ tokenizes input (3 ms)",
    "PASS src/secrets.test.ts",
    "request id 550e8400-e29b-41d4-a716-446655440000",
    "Step 4/9 : RUN apt-get update && apt-get install -y curl",
    "sha256:9b2a1c3d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcdef",
    "Compiling serde v1.0.188 (registry+https://github.com/rust-lang/crates.io-index)",
    "error TS2322: Type 'string' is not assignable to type 'number'.",
    "password authentication failed for user \"app\"",
    "Set the API_KEY environment variable, see https://example.com/docs#api-key",
    "TASK [install packages] *****************************************************",
    "disk-usage: 45% of /dev/sda1"
  ]
  it("leaves ordinary build output alone", () => {
    for (const line of lines) expect(masker.maskText(line)).toBe(line)
  })
})
