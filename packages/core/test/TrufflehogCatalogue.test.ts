import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { expectTotals, judgeRule, type Lists, readCatalogue } from "./catalogues/samples.js"

// TruffleHog's common detectors (the selection and why is in
// catalogues/trufflehog.json), one test each, with the cases of each
// detector's own pattern test. Every result must be masked whole and every
// case without results kept byte for byte, except what the lists below
// name, each with how many samples it covers and why: placeholders (kept,
// or masked whole, never cut), results masked all but bytes that are not
// the secret, results missed, result-less cases that hold a real secret
// (masked on purpose) and look-alikes masked anyway. A change that masks
// less, or masks a look-alike the lists do not name, fails here.

const catalogue = readCatalogue("trufflehog")
const masker = Secrets.unsafeMakeMasker()

// reasons that recur
const underKey = "a real-shaped value the detector rejects for its length or one character, under a key that names a credential or after the service's name: masked"
const changed = "a real token with one character changed by the test (?, @, $): the rest of it is still the secret, masked"
const otherFormat = "a real secret of another format, or of this one in a place the detector does not read: masked"
const verified = "a valid token the detector leaves out for its verification or its context (no e-mail, no keyword): masked"

const lists: Lists = {
  placeholders: {
    anthropic: [{ match: /abc123xyz|abc12fake/, count: 2, why: "runs of the alphabet and counting digits (abc123xyz-456def789ghij-klmnopqrstuvwx), and fake" }],
    cloudflareglobalapikey: [{ match: /^abcdef1234567890/, count: 1, why: "abcdef and digits counting up, repeated" }],
    flyio: [{ match: /abcdefghijklmnopqrstuvwxyz/, count: 1, why: "the alphabet and digits counting up inside the macaroon" }],
    hashicorpvault: [{ match: /^hvb\.(?:a+|b+)$|^s\.1234567890abcdef/, count: 3, why: "one letter repeated (hvb.aaaa...), digits counting up" }],
    "gitlab-v1": [{ match: /^ABc123456789dEFghIJK$/, count: 1, why: "the alphabet and digits counting up" }],
    twilioapikey: [{ match: /fake/, count: 1, why: "says fake" }],
    mongodb: [{ match: /^(?:root|password|db-password|randompassword)$/, count: 12, why: "the password is the user name again, the word password, or words" }],
    jdbc: [{ match: /^(?:MY-PASSWORD|testpassword|pass)$/, count: 9, why: "the password names a password (MY-PASSWORD, testpassword, pass)" }],
    uri: [{ match: /^password$/, count: 2, why: "the password is the word password" }]
  },
  keptOut: {},
  partly: {
    slackwebhook: [{ match: /^https:\/\/hooks\.slack\.com\//, count: 1, visible: 33, why: "the host and /services/ stay visible; the hook's path, the secret, is masked" }],
    discordwebhook: [{ match: /^https:\/\/discord\.com\/api\/webhooks\//, count: 2, visible: 53, why: "the host and the webhook's id stay visible; its token is masked" }],
    microsoftteamswebhook: [{ match: /\.webhook\.office\.com\/webhookb2\//, count: 1, visible: 48, why: "the host and /webhookb2/ stay visible; the path is masked" }],
    jdbc: [{ match: /^MyPa\$\$w0rd\.\.\.$/, count: 1, visible: 3, why: "the password's trailing dots read as the end of a sentence and stay visible" }]
  },
  missed: {
    azure_storage: [{
      match: /Pattern: (?:cpp|java|typescript)$/,
      count: 3,
      why: "account keys in code on the line after their key (AccountKey{, = on the next line, ACCOUNT_KEY ||): a rule sees one line"
    }],
    alibaba: [{ match: /^WX6OtM8p/, count: 1, why: "a secret in a Jenkins credentials file's <id> element, which names no credential" }],
    mailgun: [{ match: /^55c3a879/, count: 1, why: "a key after the word pass and a quote, with no operator: not an assignment" }]
  },
  realSecrets: {
    openaiadmin: [{ match: /OPENAI_API_KEY|BAD_KEY=sk-admin-/, count: 4, why: `${otherFormat} (OpenAI project and user keys, admin keys of the wrong length that hold T3BlbkFJ)` }],
    anthropic: [{ match: /sk-ant-/, count: 1, why: "a real-shaped key the detector rejects for one character" }],
    xai: [{ match: /xai-/, count: 1, why: underKey }],
    googlegemini: [{ match: /AIzaSy/, count: 1, why: underKey }],
    openrouter: [{ match: /sk-or-v1-/, count: 1, why: underKey }],
    pinecone: [{ match: /trailing alphanumeric/, count: 1, why: "a Pinecone key with characters after it: the key is masked" }],
    weightsandbiases: [{ match: /WANDB_API_KEY/, count: 1, why: underKey }],
    assemblyai: [{ match: /assemblyai Key=/, count: 1, why: underKey }],
    "aws-access_keys": [{ match: /secret: \$YenOG/, count: 1, why: changed }],
    "aws-session_keys": [{ match: /secret: \$YenOG/, count: 1, why: changed }],
    gcp: [{ match: /BEGIN PRIVATE KEY-----\\nMII/, count: 2, why: "service account private keys without a private_key_id: still private keys" }],
    azuresastoken: [{ match: /sig=/, count: 2, why: "a sig= signature the detector rejects for its other parameters (sp=rqx, an address cut short): the signature is masked" }],
    azuredevopspersonalaccesstoken: [{ match: /azure_key:/, count: 1, why: underKey }],
    alibaba: [{ match: /Using Key=/, count: 1, why: underKey }],
    cloudflareapitoken: [{ match: /legacy format|too short|too long/, count: 3, why: `${underKey}; and the legacy token format, which is still a token` }],
    cloudflareglobalapikey: [{ match: /too short|too long/, count: 2, why: underKey }],
    heroku: [{ match: /HRKU-/, count: 1, why: "an HRKU- key with underscores or a character the detector rejects: masked as the format it has" }],
    vultrapikey: [{ match: /\?/, count: 1, why: changed }],
    terraformcloudpersonaltoken: [{ match: /atlasv1/, count: 1, why: changed }],
    npmtoken: [{ match: /\?/, count: 1, why: changed }],
    nugetapikey: [{ match: /\?/, count: 1, why: changed }],
    artifactory: [{ match: /Using Key=/, count: 2, why: underKey }],
    buildkite: [{ match: /bkua_/, count: 1, why: underKey }],
    sonarcloud: [{ match: /token = '/, count: 2, why: changed }],
    jiratoken: [
      { match: /jira key = /, count: 1, why: changed },
      { match: /without email|without keywords/, count: 2, why: verified }
    ],
    newrelicpersonalapikey: [{ match: /\?/, count: 1, why: changed }],
    asanapersonalaccesstoken: [{ match: /asana Key=/, count: 1, why: underKey }],
    airtablepersonalaccesstoken: [{ match: /Using Key=pat/, count: 1, why: underKey }],
    box: [{ match: /using Key=/, count: 1, why: underKey }],
    auth0managementapitoken: [{ match: /apiToken:/, count: 1, why: "a JWT-shaped value under apiToken" }],
    microsoftteamswebhook: [{ match: /IncomingWebhook/, count: 1, why: "a real-shaped webhook path the detector rejects for one part: masked" }],
    jwt: [{ match: /: (?:HS256\/valid|HS384\/valid\/no-expiration|HS512\/valid\/no-expiration|HS256\/expired|HS256\/not-yet-valid)$/, count: 5, why: `${verified}: valid, expired and not-yet-valid JWTs are still bearer tokens` }],
    postgres: [{ match: /\?ostgres:\/\//, count: 1, why: "a URL with credentials whose scheme the test changed: its password is still masked" }],
    redis: [{ match: /password=/, count: 1, why: "an Azure Redis connection string: its password= is masked" }]
  },
  lookAlikesMasked: {
    cloudflareglobalapikey: [{
      match: /CLOUDFLARE_API_KEY=abcdef1234567890/,
      count: 1,
      why: "abcdef and digits counting up under CLOUDFLARE_API_KEY: 37 letters and digits under a key named for a service read as its key (gitleaks' catalogue has such values as true samples)"
    }]
  }
}

const outcomes = catalogue.rules.map((rule) => ({ rule, outcome: judgeRule(masker, rule, lists) }))

describe("TruffleHog's common detectors", () => {
  it("is read from a named commit, with its selection and why", () => {
    expect(catalogue.commit).toMatch(/^[0-9a-f]{40}$/)
    expect(catalogue.selection ?? "").toMatch(/cloud, SaaS and AI providers/)
    expect(catalogue.rules.length).toBeGreaterThanOrEqual(60)
    for (const rule of catalogue.rules) {
      expect(rule.tps.length + rule.fps.length + rule.unbuilt.length, `${rule.id} has samples or says why not`).toBeGreaterThan(0)
      for (const unbuilt of rule.unbuilt) expect(unbuilt.reason.length, `${rule.id} ${unbuilt.what}`).toBeGreaterThan(10)
    }
  })

  for (const { outcome, rule } of outcomes) {
    it(`${rule.id}: masks its results and keeps its result-less cases byte for byte, but for what is listed`, () => {
      expect(outcome.problems, rule.id).toEqual([])
    })
  }

  it("lists only detectors of the catalogue", () => {
    const ids = new Set(catalogue.rules.map((rule) => rule.id))
    for (const list of Object.values(lists)) for (const id of Object.keys(list)) expect(ids.has(id), id).toBe(true)
  })

  it("masks the share of the catalogue's samples in docs/secrets.md", () => {
    const pinned = { samples: 308, falseSamples: 153 }
    expectTotals(outcomes.map(({ outcome }) => outcome), { ...pinned, counts: { masked: 266, partly: 5, missed: 5, placeholders: 32, keptOut: 0, kept: 102, realSecrets: 50, lookAlikesMasked: 1 } })
  })
})
