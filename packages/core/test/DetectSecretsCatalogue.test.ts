import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { expectTotals, judgeRule, type Lists, readCatalogue } from "./catalogues/samples.js"

// detect-secrets' plugins, one test each, with the (line, should_flag) cases
// of its own test suite (catalogues/detect-secrets.json, generated from its
// repository). Every flagged line's secret must be masked whole and every
// other line kept byte for byte, except what the lists below name, each
// with how many samples it covers and why: placeholders (kept, or masked
// whole, never cut), plugins kept out, unflagged lines that hold a real
// secret (masked on purpose) and look-alikes masked anyway. A change that
// masks less, or masks a look-alike the lists do not name, fails here.

const catalogue = readCatalogue("detect-secrets")
const masker = Secrets.unsafeMakeMasker()

const repeatedUnit = "a short unit repeated over the value (abcd1234abcd1234..., 1234567890abcdef1234567890abcdef...): typed, not drawn at random"

const lists: Lists = {
  placeholders: {
    artifactory: [{ match: /^A(?:P[0-9A-F]|KC)x{10}$/, count: 19, why: "x repeated after the prefix (AP6xxxxxxxxxx, AKCxxxxxxxxxx)" }],
    aws_key: [
      { match: /^A(?:KIA|SIA|BIA|CCA|3T0)Z{16}$/, count: 5, why: "Z repeated after the prefix (AKIAZZZZ...)" },
      { match: /EXAMPLEKEY$/, count: 1, why: "AWS's documented example secret key (...EXAMPLEKEY)" }
    ],
    basic_auth: [{ match: /^password$/, count: 1, why: "the password is the word password (https://username:password@yelp.com)" }],
    cloudant: [
      { match: /^abcdefghijabcdefghijabcd$/, count: 2, why: "the alphabet, repeated" },
      { match: /^(?:abcd1234)+$/, count: 8, why: repeatedUnit }
    ],
    discord: [{
      match: /^(?:MZ1y|ATMy)/,
      count: 2,
      why: "not bot tokens: a token's first part is the base64 of the bot's user id, a number (MTk4..., Nzk5...), and these decode to no number (the catalogue changed their first characters)"
    }],
    gitlab_token: [{
      match: /PREfix_helloworld|my-tokens_are|Need5_T00-bee|checking_Length/,
      count: 7,
      why: "words joined by _ and - with a number here and there (PREfix_helloworld380_testin_pretty_long_token_long): identifiers the test wrote, not tokens"
    }],
    ibm_cloud_iam: [{ match: /^(?:abcd1234)+(?:ABCD1234)+--__$/, count: 24, why: repeatedUnit }],
    ibm_cos_hmac: [{ match: /^(?:1234567890abcdef)+$/, count: 15, why: repeatedUnit }],
    npm: [{ match: /^npm_x+$/, count: 1, why: "x repeated after the prefix" }],
    softlayer: [{ match: /^(?:abcd1234)+$/, count: 51, why: repeatedUnit }],
    twilio: [{ match: /^(?:SK|AC)x{32}$/, count: 2, why: "x repeated after the prefix" }]
  },
  keptOut: {
    ip_public: { count: 5, why: "a public IP address names a host, it grants nothing; output is full of them" }
  },
  partly: {},
  missed: {},
  realSecrets: {
    gitlab_token: [{ match: /^ghp_/, count: 1, why: "a GitHub token: a real secret of another format" }],
    jwt: [{ match: /^eyJhbasd|^eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ\./, count: 2, why: "JWT-shaped values the plugin rejects only after decoding them (a header with letters typed into it, a header one character short): bearer tokens to a reader, masked" }],
    npm: [{ match: /_authToken=[0-9a-f-]{36}$/, count: 4, why: "a UUID under _authToken in shapes the plugin does not read: npm's legacy tokens are UUIDs" }],
    pypi_token: [{ match: /^pypi-AgEIcHlwaS5vcmc/, count: 1, why: "a PyPI token shorter than the plugin's minimum: still PyPI's format" }],
    telegram_token: [{ match: /^bot[0-9]+:AA/, count: 1, why: "a bot token after the word bot, as Telegram's API URLs write it: the plugin wants it alone" }]
  },
  lookAlikesMasked: {
    gitlab_token: [{
      match: /^gl(?:ptt|agent)-(?:Need5|hellOworld)/,
      count: 3,
      why: "words and digits with too few pieces (hellOworld380_testin) or single letters among them (Need5_T00-be-...): read as random, masked as GitLab's format"
    }]
  }
}

const outcomes = catalogue.rules.map((rule) => ({ rule, outcome: judgeRule(masker, rule, lists) }))

describe("detect-secrets' plugins", () => {
  it("is read from a named commit, and says why cases could not be read", () => {
    expect(catalogue.commit).toMatch(/^[0-9a-f]{40}$/)
    expect(catalogue.rules.length).toBeGreaterThanOrEqual(25)
    for (const rule of catalogue.rules) {
      for (const unbuilt of rule.unbuilt) expect(unbuilt.reason.length, `${rule.id} ${unbuilt.what}`).toBeGreaterThan(10)
    }
  })

  for (const { outcome, rule } of outcomes) {
    it(`${rule.id}: masks its flagged lines' secrets and keeps the others byte for byte, but for what is listed`, () => {
      expect(outcome.problems, rule.id).toEqual([])
    })
  }

  it("lists only plugins of the catalogue", () => {
    const ids = new Set(catalogue.rules.map((rule) => rule.id))
    for (const list of Object.values(lists)) for (const id of Object.keys(list)) expect(ids.has(id), id).toBe(true)
  })

  it("masks the share of the catalogue's samples in docs/secrets.md", () => {
    const pinned = { samples: 176, falseSamples: 101 }
    expectTotals(outcomes.map(({ outcome }) => outcome), { ...pinned, counts: { masked: 33, partly: 0, missed: 0, placeholders: 138, keptOut: 5, kept: 89, realSecrets: 9, lookAlikesMasked: 3 } })
  })
})
