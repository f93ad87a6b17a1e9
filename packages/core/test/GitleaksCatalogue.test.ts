import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { judge, KEPT_OUT, type Outcome, PUBLIC_PARTS, readCatalogue } from "./catalogues/gitleaks.js"

// Every rule of gitleaks' catalogue, with its own true and false samples
// (catalogues/gitleaks.json, generated from gitleaks' sources; regenerate
// with `node scripts/secret-catalogues.mjs gitleaks <checkout>`), run
// through the default masker. A true sample counts as masked when every
// byte of each secret span is `*`, except line breaks and a public prefix or
// suffix PUBLIC_PARTS names; a false sample counts as a look-alike when no
// rule of the catalogue outside KEPT_OUT finds a secret in it, and as kept
// when it comes out byte for byte.

const catalogue = readCatalogue()
const masker = Secrets.unsafeMakeMasker()
const encoder = new TextEncoder()
const mask = (text: string) => [masker.maskBytes(encoder.encode(text)), 0] as const

/**
 * Rules whose samples do not all come out as they should, and how many:
 * each is a sample the masker gets wrong today, with why. A rule's test
 * fails when it does worse, and when it does better (then lower the count).
 */
const SHORTFALLS: Readonly<Record<string, { readonly missed: number; readonly leaked: number; readonly why: string }>> = {
  "aws-amazon-bedrock-api-key-long-lived": { missed: 1, leaked: 0, why: "a key in a shape no other sample has" },
  "anthropic-admin-api-key": { missed: 1, leaked: 0, why: "a key whose body runs through the alphabet, kept as a placeholder" },
  "anthropic-api-key": { missed: 1, leaked: 0, why: "a key whose body runs through the alphabet, kept as a placeholder" },
  "cloudflare-api-key": { missed: 1, leaked: 0, why: "a bare value after the word cloudflare, with no key naming a credential" },
  "curl-auth-user": { missed: 1, leaked: 0, why: "-u \"secret:\" gives a token as the user name, which stays visible" },
  "facebook-access-token": { missed: 3, leaked: 0, why: "app tokens (app id|secret) have no prefix a rule can wake at" },
  "freemius-secret-key": { missed: 0, leaked: 1, why: "the same text as its true sample, told apart by the file name (.html) alone, which output does not carry" },
  "hashicorp-tf-password": { missed: 2, leaked: 0, why: "a password of dictionary words (rootpasswd), and one the span judge counts with its quotes" },
  "heroku-api-key": { missed: 1, leaked: 0, why: "a UUID under a bare key" },
  "hubspot-api-key": { missed: 1, leaked: 0, why: "a UUID under a bare key" },
  "jfrog-identity-token": { missed: 1, leaked: 0, why: "a call argument after a name that does not name a credential" },
  jwt: { missed: 5, leaked: 0, why: "random ey... strings that are not JWTs (no eyJ), ending in a dot kept visible" },
  "kubernetes-secret-yaml": {
    missed: 3,
    leaked: 4,
    why: "values after a comment line or quoted under tab indents; under data:, a SopsSecret's template values (a rule sees the data: block, not the kind above it) and `YmFyCg==`, masked as short values such as a user name are"
  },
  "mailchimp-api-key": { missed: 0, leaked: 1, why: "a real-shaped key (32 hex digits, -us18) passed to a call: a true secret in a shape gitleaks' rule does not take there, masked" },
  "messagebird-client-id": { missed: 1, leaked: 0, why: "a UUID under a bare key" },
  "nuget-config-password": {
    missed: 2,
    leaked: 1,
    why: "passwords of words (TestSourcePassword) kept as placeholders; the look-alike is the same text as a true sample, told apart by the file name alone"
  },
  "slack-legacy-bot-token": { missed: 1, leaked: 0, why: "a short legacy form" },
  "slack-legacy-workspace-token": { missed: 2, leaked: 0, why: "short legacy forms" },
  "snyk-api-token": { missed: 1, leaked: 0, why: "a UUID under a bare key" },
  "sonar-api-token": { missed: 6, leaked: 0, why: "values under keys that do not name a credential (sonar.login)" },
  "stripe-access-token": { missed: 0, leaked: 1, why: "40 random characters under a Token key (task_test_...): not Stripe's, but a secret by any other reading, masked" },
  "sumologic-access-id": { missed: 4, leaked: 0, why: "ids of 14 characters under keys that name an id" },
  "telegram-bot-api-token": { missed: 1, leaked: 0, why: "a token after `telegram bot:`, a key that names no credential" },
  "generic-api-key": { missed: 0, leaked: 1, why: "a vault's name (cmp2-qat-1208358310) under a key ending in Secrets: masked as that key's value" }
}

const outcomes = new Map<string, Outcome>(catalogue.rules.map((rule) => [rule.id, judge(rule, mask)]))

describe("gitleaks catalogue, through the library", () => {
  it("has every rule of the catalogue, each with samples or a reason", () => {
    expect(catalogue.rules.length).toBeGreaterThanOrEqual(200)
    expect(catalogue.commit).toMatch(/^[0-9a-f]{40}$/)
    // gitleaks gives two rules no sample at all; every other rule has true samples, built or kept out
    const without = catalogue.rules.filter((rule) => rule.tps.length === 0 && !(rule.id in KEPT_OUT)).map((rule) => rule.id)
    expect(without).toEqual(["dropbox-long-lived-api-token", "dropbox-short-lived-api-token"])
    for (const id of [...Object.keys(KEPT_OUT), ...Object.keys(SHORTFALLS), ...Object.keys(PUBLIC_PARTS)]) {
      expect(outcomes.has(id), `${id} is a rule of the catalogue`).toBe(true)
    }
  })

  for (const rule of catalogue.rules) {
    if (rule.id in KEPT_OUT) continue
    it(`${rule.id}: masks its secrets and keeps its look-alikes`, () => {
      const outcome = outcomes.get(rule.id)!
      const shortfall = SHORTFALLS[rule.id] ?? { missed: 0, leaked: 0 }
      expect(outcome.missed.length, `true samples not masked: ${JSON.stringify(outcome.missed.slice(0, 3))}`).toBe(shortfall.missed)
      expect(outcome.leaked.length, `look-alikes masked: ${JSON.stringify(outcome.leaked.slice(0, 3))}`).toBe(shortfall.leaked)
    })
  }

  it("keeps out only rules that would miss: each rule kept out masks fewer than all of its samples or has none", () => {
    for (const id of Object.keys(KEPT_OUT)) {
      const outcome = outcomes.get(id)!
      expect(outcome.truths === 0 || outcome.masked < outcome.truths, id).toBe(true)
    }
  })

  it("masks 99% of the catalogue's secrets and keeps 97% of its look-alikes, counting every rule", () => {
    let masked = 0
    let truths = 0
    let kept = 0
    let lookAlikes = 0
    for (const outcome of outcomes.values()) {
      masked += outcome.masked
      truths += outcome.truths
      kept += outcome.kept
      lookAlikes += outcome.lookAlikes
    }
    expect(truths).toBeGreaterThan(6000)
    expect(masked / truths).toBeGreaterThanOrEqual(0.99)
    expect(kept / lookAlikes).toBeGreaterThanOrEqual(0.97)
  })
})
