import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { judge, type Judged, percent, readCatalogue } from "./catalogues/samples.js"

// secretlint's recommended preset, rule by rule, with the fixtures of its
// own test suite (catalogues/secretlint.json, generated from secretlint's
// repository). Most of its true samples are placeholders (`hf_xxxx...`,
// `sk_live_AAAA...`, `user:pass@`), which the masker keeps on purpose: each
// one it keeps is listed below with the reason, and every other true sample
// must be masked whole. False samples must come out byte for byte, except
// the few listed as real secrets that only a fixture option or another
// format's rule keeps from secretlint's report.

const catalogue = readCatalogue("secretlint")
const masker = Secrets.unsafeMakeMasker()

/** True samples the masker keeps visible, by rule, fixture and report number, and why: placeholders, which docs/secrets.md says stay. */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  "aws ng.AWS Account ID/input #0": "an AWS account id names an account and grants nothing; this one is all zeros",
  "basicauth ng.basic-auth-ftp-url/input.txt #0": "the password is the word pass (user:pass@example.com)",
  "basicauth ng.basic-auth-http-url/input.txt #0": "the password is the word pass (user:pass@example.com)",
  "basicauth ng.basic-auth-in-markdown/input.txt #0": "the password is the word pass (user:pass@example.com)",
  "basicauth ng.basic-auth-in-markdown/input.txt #1": "the password is the word pass (user:pass@example.com)",
  "basicauth ng.basic-auth-in-markdown/input.txt #2": "the password is the word pass (user:pass@example.com)",
  "stripe ng.secret/input.txt #0": "one letter repeated 24 times (AAAA...)",
  "stripe ng.secret/input.txt #1": "one letter repeated 24 times (BBBB...)",
  "stripe ng.secret/input.txt #2": "one letter repeated 24 times (CCCC...)",
  "stripe ng.secret/input.txt #3": "one letter repeated 24 times (DDDD...)",
  "gitlab ng.personal_access_token/input.txt #0": "the alphabet in alternating case (aBcDeFgH...)",
  "grafana ng.service_account_token/input.txt #0": "the alphabet, then digits counting up",
  "groq ng.secret/input.txt #0": "the alphabet in alternating case, then digits counting up",
  "groq ng.secret/input.txt #1": "digits counting up, then the alphabet",
  "huggingface ng.secret/input.txt #0": "x repeated (hf_xxxx...)",
  "linear ng.secret/input.txt #0": "ends in EXAMPLE",
  "notion ng.secret/input.txt #0": "digits counting up, the alphabet in alternating case",
  "notion ng.secret/input.txt #1": "digits counting down, the alphabet backwards, digits counting up",
  "notion ng.secret/input.txt #2": "digits in runs, the alphabet in alternating case, digits counting up",
  "vercel ng.secret/input.txt #0": "the alphabet in alternating case, then digits counting up",
  "vercel ng.secret/input.txt #1": "the alphabet in alternating case, then digits counting up",
  "vercel ng.secret/input.txt #3": "the alphabet in alternating case, then digits counting up",
  "vercel ng.secret/input.txt #4": "the alphabet in alternating case, then digits counting up",
  "databricks ng.secret/input.txt #0": "digits counting up and ABCDEF, in upper case where tokens are lower-case hex",
  "databricks ng.secret/input.txt #1": "digits counting up and ABCDEF, in upper case where tokens are lower-case hex",
  "databricks ng.secret/input.txt #2": "hex digits counting down (FEDCBA9876543210), in upper case where tokens are lower-case hex",
  "docker ng.docker-pat/input.txt #0": "says Example, then digits counting up",
  "figma ng.secret/input.txt #0": "the alphabet in alternating case, digits counting up, the alphabet",
  "tailscale ng.boundary-non-letter/input.txt #1": "letters repeated (AAAA-BBBB), glued to a digit before it",
  "npm npmrc-_authToken/.npmrc #0": "one digit and one letter repeated (111111aaaa...)"
}

/** True samples masked all but a few bytes, how many stay visible, and why. */
const PARTLY: Readonly<Record<string, { readonly visible: number; readonly why: string }>> = {}

/** False samples that hold a real-looking secret, which the masker masks, and why secretlint does not report it. */
const REAL_SECRETS: Readonly<Record<string, string>> = {
  "aws ok.AWS Access Key ID--enableIDScanRule-false/input": "an AWS access key id; the fixture turns off the rule's id scan",
  "aws ok.AWS Secret Access Key/input": "an encrypted value under AWS_SECRET_ACCESS_KEY: a random value under a key that names a secret is masked, encrypted or not",
  "aws options.allows/input": "an AWS secret access key the fixture's options allow",
  "privatekey placeholder-short-base64/input": "base64 between private key markers: a key block's body is masked whatever it decodes to",
  "tailscale ok.allows/input.txt": "a Tailscale API key the fixture's options allow"
}

const keyOf = (rule: string, judged: Judged, n: number) => `${rule} ${judged.name} #${n}`

const results = catalogue.rules.map((rule) => ({
  rule,
  judged: rule.tps.flatMap((sample) => judge(masker, sample).map((judged, n) => ({ key: keyOf(rule.id, judged, n), judged })))
}))

describe("secretlint's recommended preset", () => {
  it("is read from a named commit, with every rule of the preset", () => {
    expect(catalogue.commit).toMatch(/^[0-9a-f]{40}$/)
    expect(catalogue.rules.length).toBeGreaterThanOrEqual(28)
    for (const rule of catalogue.rules) {
      // a rule with no true sample says why each fixture could not be built
      if (rule.tps.length === 0) expect(rule.unbuilt.length, rule.id).toBeGreaterThan(0)
      for (const unbuilt of rule.unbuilt) expect(unbuilt.reason.length, `${rule.id} ${unbuilt.what}`).toBeGreaterThan(10)
    }
  })

  for (const { judged, rule } of results) {
    it(`${rule.id}: masks its real-looking true samples whole and keeps its false samples byte for byte`, () => {
      for (const { judged: j, key } of judged) {
        // a placeholder is kept or masked whole, never cut
        if (key in PLACEHOLDERS) expect([0, j.bytes], `${key} is listed as a placeholder`).toContain(j.visible)
        else if (key in PARTLY) expect(j.visible, key).toBe(PARTLY[key].visible)
        else expect(j.visible, `${key}: ${j.secret.slice(0, 80)}`).toBe(0)
      }
      for (const sample of rule.fps) {
        const key = `${rule.id} ${sample.name}`
        const masked = masker.maskText(sample.text)
        if (key in REAL_SECRETS) expect(masked, `${key} holds a secret the masker masks`).not.toBe(sample.text)
        else expect(masked, key).toBe(sample.text)
      }
    })
  }

  it("lists only placeholders and real secrets that are in the catalogue", () => {
    const keys = new Set(results.flatMap(({ judged }) => judged.map((j) => j.key)))
    for (const key of [...Object.keys(PLACEHOLDERS), ...Object.keys(PARTLY)]) expect(keys.has(key), key).toBe(true)
    const fps = new Set(catalogue.rules.flatMap((rule) => rule.fps.map((sample) => `${rule.id} ${sample.name}`)))
    for (const key of Object.keys(REAL_SECRETS)) expect(fps.has(key), key).toBe(true)
  })

  it("masks every true sample but the placeholders: the figures in docs/secrets.md", () => {
    const all = results.flatMap(({ judged }) => judged.map(({ judged: j }) => j))
    const keys = results.flatMap(({ judged }) => judged.map(({ key }) => key))
    const whole = all.filter((j) => j.visible === 0).length
    const partly = all.filter((j) => j.visible > 0 && j.visible < j.bytes).length
    const falses = catalogue.rules.flatMap((rule) => rule.fps.map((sample) => `${rule.id} ${sample.name}`))
    const kept = falses.filter((key) => !(key in REAL_SECRETS)).length
    const keptPlaceholders = all.filter((j, i) => j.visible === j.bytes && keys[i] in PLACEHOLDERS).length
    expect({ samples: all.length, falseSamplesKept: `${kept} of ${falses.length - Object.keys(REAL_SECRETS).length}` }).toEqual({
      samples: 110,
      falseSamplesKept: "40 of 40"
    })
    // every sample is masked whole, masked all but a listed byte or two, or a listed placeholder kept whole
    expect(whole + partly + keptPlaceholders).toBe(all.length)
    // 67.3% (70.0% counting partial masks) before the provider table and the URL rule took this catalogue in
    expect(whole / all.length, `masked ${percent(whole, all.length)}`).toBeGreaterThanOrEqual(0.736)
    expect(partly, "partly masked").toBe(0)
  })
})
