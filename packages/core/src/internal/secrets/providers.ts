// Credential formats with a documented prefix or shape, as data: each is a
// literal prefix (the anchor the masker looks for) and the shape of what
// follows. The same description builds the rule's pattern and, for tests,
// sample tokens. Shapes follow the providers' documentation and the public
// rule catalogues of established secret scanners.

/** A class of characters a part of a token is drawn from. */
export type CharClass = keyof typeof classes

/** Characters of each class, as they go inside a pattern's brackets, and as a list for samples. */
export const classes = {
  alnum: "A-Za-z0-9",
  lower: "a-z",
  upper: "A-Z",
  letters: "A-Za-z",
  lowerDigits: "a-z0-9",
  upperDigits: "A-Z0-9",
  digits: "0-9",
  hex: "a-f0-9",
  hexUpper: "A-F0-9",
  hexAny: "a-fA-F0-9",
  base64: "A-Za-z0-9+/",
  base64url: "A-Za-z0-9_-",
  word: "A-Za-z0-9_",
  wordDash: "A-Za-z0-9_.=-",
  base64Word: "A-Za-z0-9_+/=-",
  base32: "A-Z2-7",
  bech32: "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
} as const

/** One part of a token: literal text, `min` to `max` characters of a class, or one of several sequences. */
export type Part =
  | string
  | readonly [chars: CharClass, min: number, max?: number]
  | { readonly oneOf: ReadonlyArray<ReadonlyArray<Part>> }

/** A provider's credential format. */
export interface TokenFormat {
  readonly id: string
  readonly description: string
  /** Literal text every token starts with; each is an anchor. */
  readonly prefixes: ReadonlyArray<string>
  /** What follows the prefix. */
  readonly body: ReadonlyArray<Part>
  /** Compare the prefix and letters without case. */
  readonly ignoreCase?: boolean
  /** Characters that may not come right before the prefix; letters and digits when absent, nothing when "". */
  readonly notAfter?: string
  /** Longer prefixes that belong to other formats: a token starting with one is not of this format. */
  readonly except?: ReadonlyArray<string>
  /** Literal text every real token holds somewhere after its prefix; a token without it is a look-alike. */
  readonly holds?: string
}

const t = (
  id: string,
  description: string,
  prefixes: ReadonlyArray<string>,
  body: ReadonlyArray<Part>,
  options: { readonly ignoreCase?: boolean; readonly notAfter?: string; readonly holds?: string; readonly except?: ReadonlyArray<string> } = {}
): TokenFormat => ({ id, description, prefixes, body, ...options })

const uuid: ReadonlyArray<Part> = [["hex", 8], "-", ["hex", 4], "-", ["hex", 4], "-", ["hex", 4], "-", ["hex", 12]]

/** The built-in token formats. */
export const tokenFormats: ReadonlyArray<TokenFormat> = [
  t("1password-secret-key", "1Password account secret keys (A3-).", ["A3-"], [
    ["upperDigits", 6], "-",
    { oneOf: [[["upperDigits", 11]], [["upperDigits", 6], "-", ["upperDigits", 5]]] },
    "-", ["upperDigits", 5], "-", ["upperDigits", 5], "-", ["upperDigits", 5]
  ]),
  t("1password-service-account-token", "1Password service account tokens (ops_eyJ).", ["ops_eyJ"], [["base64", 250, 4000]]),
  t("adafruit-io-key", "Adafruit IO keys (aio_).", ["aio_"], [["alnum", 28]]),
  t("adobe-client-secret", "Adobe OAuth client secrets (p8e-).", ["p8e-"], [["alnum", 32]]),
  t("adyen-api-key", "Adyen API keys (AQE...).", ["AQE"], [["lowerDigits", 5, 40], ".", ["wordDash", 50, 80]]),
  t("alibaba-access-key-id", "Alibaba Cloud AccessKey ids (LTAI).", ["LTAI"], [["alnum", 20]]),
  t("apify-token", "Apify API tokens (apify_api_).", ["apify_api_"], [["alnum", 36]]),
  t("artifactory-api-key", "JFrog Artifactory API keys (AKCp).", ["AKCp"], [["alnum", 69]]),
  t("artifactory-reference-token", "JFrog Artifactory reference tokens (cmVmd...).", ["cmVmd"], [["alnum", 59]]),
  t("buildkite-token", "Buildkite API access tokens (bkua_).", ["bkua_"], [["hex", 40]]),
  t("braintree-access-token", "Braintree access tokens (access_token$production$, access_token$sandbox$).", [
    "access_token$production$",
    "access_token$sandbox$"
  ], [["lowerDigits", 16], "$", ["hex", 32]]),
  t("castai-api-key", "CAST AI API keys (castai_v1_).", ["castai_v1_"], [["alnum", 64], "_", ["alnum", 8]]),
  t("chieftools-token", "Chief Tools personal, access and refresh tokens (ctp_, cto_, ctr_).", ["ctp_", "cto_", "ctr_"], [["alnum", 30, 248]]),
  t("circleci-token", "CircleCI personal API tokens (CCIPAT_).", ["CCIPAT_"], [["alnum", 22], "_", ["hex", 40]]),
  t("clickhouse-cloud-secret", "ClickHouse Cloud API secret keys (4b1d).", ["4b1d"], [["alnum", 38]]),
  t("clojars-token", "Clojars deploy tokens (CLOJARS_).", ["CLOJARS_"], [["lowerDigits", 60]], { ignoreCase: true }),
  t("cloudflare-origin-ca-key", "Cloudflare Origin CA keys (v1.0-).", ["v1.0-"], [["hex", 24], "-", ["hex", 146]]),
  t("contentful-pat", "Contentful personal access tokens (CFPAT-).", ["CFPAT-"], [["base64url", 43]]),
  t("databricks-token", "Databricks personal access tokens (dapi followed by 32 hex digits).", ["dapi"], [
    ["hex", 32],
    { oneOf: [[], ["-", ["digits", 1, 2]]] }
  ]),
  t("datafactory-shir-key", "Azure Data Factory self-hosted integration runtime keys (IR@).", ["IR@"], [
    ...uuid, "@", ["wordDash", 3, 64], "@", ["lowerDigits", 2, 24], "@", ["base64", 43], "="
  ]),
  t("defined-networking-token", "Defined Networking API tokens (dnkey-).", ["dnkey-"], [["wordDash", 26], "-", ["wordDash", 52]]),
  t("deno-token", "Deno Deploy tokens (ddp_, ddw_).", ["ddp_", "ddw_"], [["alnum", 36]]),
  t("digitalocean-token", "DigitalOcean personal, OAuth and refresh tokens (dop_v1_, doo_v1_, dor_v1_).", ["dop_v1_", "doo_v1_", "dor_v1_"], [["hex", 64]]),
  t("docker-hub-token", "Docker Hub personal and organization access tokens (dckr_pat_, dckr_oat_).", ["dckr_pat_", "dckr_oat_"], [["base64url", 20, 64]]),
  t("doppler-token", "Doppler personal, CLI, service, service account, SCIM and audit tokens (dp.pt., dp.ct., dp.st., ...).", [
    "dp.pt.",
    "dp.ct.",
    "dp.st.",
    "dp.sa.",
    "dp.scim.",
    "dp.audit."
  ], [["wordDash", 40, 256]]),
  t("dropbox-token", "Dropbox short-lived access tokens (sl.).", ["sl."], [["wordDash", 130, 1400]]),
  t("duffel-token", "Duffel API tokens (duffel_live_, duffel_test_).", ["duffel_live_", "duffel_test_"], [["wordDash", 43]]),
  t("dynatrace-token", "Dynatrace API tokens (dt0c01.).", ["dt0c01."], [["upperDigits", 24], ".", ["alnum", 64]]),
  t("easypost-key", "EasyPost production and test API keys (EZAK, EZTK).", ["EZAK", "EZTK"], [["alnum", 54]]),
  t("facebook-access-token", "Meta (Facebook) access tokens (EAAB, EAAC, EAAG, EAAI, EAAJ, EAAM ...).", ["EAAB", "EAAC", "EAAG", "EAAI", "EAAJ", "EAAM"], [["alnum", 100, 600]]),
  t("figma-token", "Figma personal access tokens (figd_).", ["figd_"], [["base64url", 40, 64]]),
  t("firecrawl-key", "Firecrawl API keys (fc-).", ["fc-"], [["hex", 32]]),
  t("fireworks-key", "Fireworks AI API keys (fw_).", ["fw_"], [["alnum", 24, 48]]),
  t("flutterwave-key", "Flutterwave secret and encryption keys (FLWSECK-, FLWSECK_TEST-).", ["FLWSECK-", "FLWSECK_TEST-"], [
    { oneOf: [[["hex", 32], "-X"], [["hex", 12]]] }
  ]),
  t("flyio-token", "Fly.io access tokens (fo1_).", ["fo1_"], [["base64url", 43]]),
  t("flyio-macaroon", "Fly.io macaroon tokens (fm1a_, fm1r_, fm2_).", ["fm1a_", "fm1r_", "fm2_"], [["base64", 100, 2000], { oneOf: [[], ["="], ["=="]] }]),
  t("frameio-token", "Frame.io API tokens (fio-u-).", ["fio-u-"], [["wordDash", 64]]),
  t("gitlab-session-cookie", "GitLab session cookies (_gitlab_session=).", ["_gitlab_session="], [["lowerDigits", 32]], { notAfter: "" }),
  t("google-oauth-refresh-token", "Google OAuth refresh tokens (1//0).", ["1//0"], [["base64url", 40, 512]]),
  t("grafana-api-key", "Grafana API keys (eyJrIjoi...).", ["eyJrIjoi"], [["alnum", 70, 400], { oneOf: [[], ["="], ["=="]] }]),
  t("groq-key", "Groq API keys (gsk_).", ["gsk_"], [["alnum", 48, 52]]),
  t("harness-token", "Harness personal and service account tokens (pat., sat.).", ["pat.", "sat."], [["base64url", 22], ".", ["alnum", 24], ".", ["alnum", 20]]),
  t("heroku-key", "Heroku API keys in the HRKU-AA format.", ["HRKU-AA"], [["base64url", 58]]),
  t("hubspot-private-app-token", "HubSpot private app access tokens (pat-na1-, pat-eu1-).", ["pat-na1-", "pat-eu1-", "pat-na2-"], uuid),
  t("huggingface-org-token", "Hugging Face organization API tokens (api_org_).", ["api_org_"], [["letters", 34]]),
  t("infracost-key", "Infracost API keys (ico-).", ["ico-"], [["alnum", 32]]),
  t("intra42-secret", "42 Intra client secrets (s-s4t2ud-, s-s4t2af-).", ["s-s4t2ud-", "s-s4t2af-"], [["hex", 64]]),
  t("langsmith-key", "LangSmith personal access tokens and service keys (lsv2_pt_, lsv2_sk_).", ["lsv2_pt_", "lsv2_sk_"], [["hex", 32], "_", ["hex", 10]]),
  t("linear-oauth-token", "Linear OAuth access tokens (lin_oauth_).", ["lin_oauth_"], [["hex", 64]]),
  t("mapbox-secret-token", "Mapbox secret access tokens (sk.eyJ).", ["sk.eyJ"], [["base64url", 40, 200], ".", ["base64url", 20, 40]]),
  t("new-relic-key", "New Relic user, admin, ingest and browser keys (NRAK-, NRAA-, NRII-, NRJS-).", ["NRAK-", "NRAA-", "NRII-", "NRJS-"], [
    ["upperDigits", 19, 32]
  ]),
  t("notion-token", "Notion integration tokens (ntn_).", ["ntn_"], [["digits", 11], ["alnum", 35]]),
  t("notion-legacy-secret", "Notion internal integration secrets of the older format (secret_).", ["secret_"], [["alnum", 43]]),
  t("nvidia-key", "NVIDIA API keys (nvapi-).", ["nvapi-"], [["base64url", 64]]),
  t("octopus-deploy-key", "Octopus Deploy API keys (API- and 26 upper-case letters and digits).", ["API-"], [["upperDigits", 26]]),
  t("openrouter-key", "OpenRouter API keys (sk-or-v1-).", ["sk-or-v1-"], [["hex", 64]]),
  t("openshift-token", "OpenShift user tokens (sha256~).", ["sha256~"], [["base64url", 43]]),
  t("perplexity-key", "Perplexity API keys (pplx-).", ["pplx-"], [["alnum", 48]]),
  t("pinecone-key", "Pinecone API keys (pcsk_).", ["pcsk_"], [["alnum", 5, 8], "_", ["alnum", 60, 70]]),
  t("plaid-access-token", "Plaid access tokens (access-production-, access-sandbox-, access-development-).", [
    "access-production-",
    "access-sandbox-",
    "access-development-"
  ], uuid),
  t("planetscale-token", "PlanetScale service tokens, OAuth tokens and passwords (pscale_tkn_, pscale_oauth_, pscale_pw_).", [
    "pscale_tkn_",
    "pscale_oauth_",
    "pscale_pw_"
  ], [["wordDash", 32, 64]]),
  t("posthog-personal-key", "PostHog personal API keys (phx_).", ["phx_"], [["word", 43, 47]]),
  t("prefect-key", "Prefect API keys (pnu_).", ["pnu_"], [["alnum", 36]]),
  t("readme-key", "ReadMe API keys (rdme_).", ["rdme_"], [["lowerDigits", 70]]),
  t("replicate-token", "Replicate API tokens (r8_).", ["r8_"], [["alnum", 37]]),
  t("rubygems-key", "RubyGems API keys (rubygems_).", ["rubygems_"], [["hex", 48]]),
  t("scalingo-token", "Scalingo API tokens (tk-us-).", ["tk-us-"], [["base64url", 48]]),
  t("sendinblue-key", "Brevo (Sendinblue) API and SMTP keys (xkeysib-, xsmtpsib-).", ["xkeysib-", "xsmtpsib-"], [["hex", 64], "-", ["alnum", 16]]),
  t("settlemint-token", "SettleMint application, personal and service access tokens (sm_aat_, sm_pat_, sm_sat_).", ["sm_aat_", "sm_pat_", "sm_sat_"], [["alnum", 16]]),
  t("shippo-token", "Shippo API tokens (shippo_live_, shippo_test_).", ["shippo_live_", "shippo_test_"], [["hex", 40]]),
  t("sonarqube-token", "SonarQube user, project and global analysis tokens (squ_, sqp_, sqa_).", ["squ_", "sqp_", "sqa_"], [["hex", 40]]),
  t("sourcegraph-token", "Sourcegraph access tokens (sgp_) and Cody gateway keys (slk_).", ["sgp_", "slk_"], [
    { oneOf: [[["hex", 40]], [["hex", 16], "_", ["hex", 40]], ["local_", ["hex", 40]], [["hex", 64]]] }
  ]),
  t("square-access-token", "Square access tokens of the EAAA form.", ["EAAA"], [["base64url", 60]]),
  t("supabase-token", "Supabase personal access tokens (sbp_).", ["sbp_"], [["hex", 40]]),
  t("tailscale-key", "Tailscale auth, API, OAuth client and webhook keys (tskey-).", ["tskey-"], [
    ["lower", 3, 8], "-", ["alnum", 8, 20], "-", ["alnum", 20, 64]
  ]),
  t("tavily-key", "Tavily API keys (tvly-).", ["tvly-"], [{ oneOf: [[], ["dev-"], ["prod-"]] }, ["alnum", 28, 40]]),
  t("typeform-token", "Typeform personal access tokens (tfp_).", ["tfp_"], [["wordDash", 59]]),
  t("ubidots-token", "Ubidots API tokens (BBFF-).", ["BBFF-"], [["alnum", 30]]),
  t("vercel-token", "Vercel personal, integration, app, refresh and API keys (vcp_, vci_, vca_, vcr_, vck_).", ["vcp_", "vci_", "vca_", "vcr_", "vck_"], [["alnum", 20, 60]]),
  t("cloudflare-api-token", "Cloudflare account and user API tokens and global API keys of the prefixed form (cfat_, cfut_, cfk_; 40 characters and an 8-hex-digit checksum).", ["cfat_", "cfut_", "cfk_"], [
    ["alnum", 40], ["hex", 8]
  ]),
  t("xai-key", "xAI API keys (xai-).", ["xai-"], [["alnum", 80]]),
  t("yandex-api-key", "Yandex Cloud API keys (AQVN).", ["AQVN"], [["base64url", 35, 38]]),
  t("anthropic-api-key", "Anthropic API, admin and OAuth keys (sk-ant-api03-, sk-ant-admin01-, sk-ant-oat01-).", ["sk-ant-"], [
    ["lower", 2, 10], ["digits", 2], "-", ["base64url", 20, 400]
  ]),
  t("openai-api-key", "OpenAI project, service account and admin keys (sk-proj-, sk-svcacct-, sk-admin-, sk-None-).", [
    "sk-proj-",
    "sk-svcacct-",
    "sk-admin-",
    "sk-None-"
  ], [["base64url", 20, 400]], { holds: "T3BlbkFJ" }),
  t("github-token", "GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens (ghp_, gho_, ghu_, ghs_, ghr_).", [
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_"
  ], [["alnum", 36, 251]]),
  t("github-app-installation-token", "GitHub App installation tokens of the newer form (ghs_, the app id, then a JWT).", ["ghs_"], [
    ["digits", 1, 12], "_", "eyJ", ["base64url", 10, 1024], ".", ["base64url", 10, 4096], ".", ["base64url", 20, 1024]
  ]),
  t("github-fine-grained-pat", "GitHub fine-grained personal access tokens (github_pat_).", ["github_pat_"], [["word", 50, 255]]),
  t("gitlab-token", "GitLab tokens: personal, deploy, runner, trigger, job, mail, agent, SCIM, feature flag, OAuth and feed tokens, and runner registration tokens.", [
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glcbt-",
    "glimt-",
    "glagent-",
    "glsoat-",
    "glffct-",
    "gloas-",
    "glft-",
    "GR1348941"
  ], [["wordDash", 20, 255]]),
  t("slack-token", "Slack bot, user, app, refresh and configuration tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-, xoxo-, xapp-).", [
    "xoxa-",
    "xoxb-",
    "xoxe-",
    "xoxo-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "xapp-",
    "xoxe.xoxp-",
    "xoxe.xoxb-"
  ], [["digits", 1, 14], "-", ["base64url", 10, 255]]),
  t("stripe-secret-key", "Stripe secret and restricted keys (sk_live_, sk_test_, sk_prod_, rk_live_, rk_test_, rk_prod_).", [
    "sk_live_",
    "sk_test_",
    "sk_prod_",
    "rk_live_",
    "rk_test_",
    "rk_prod_"
  ], [["alnum", 10, 247]]),
  t("stripe-webhook-secret", "Stripe webhook signing secrets (whsec_).", ["whsec_"], [["base64", 20, 255], { oneOf: [[], ["="], ["=="]] }]),
  t("npm-token", "npm access tokens (npm_ followed by 36 characters).", ["npm_"], [["alnum", 36]]),
  t("pypi-token", "PyPI and TestPyPI API tokens (pypi-AgEIcHlwaS5vcmc...).", ["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"], [["base64url", 50, 4096]]),
  t("huggingface-token", "Hugging Face access tokens (hf_ followed by 34 letters).", ["hf_"], [["letters", 34]]),
  t("sendgrid-api-key", "SendGrid API keys (SG.<22>.<43>).", ["SG."], [["base64url", 22], ".", ["base64url", 43]]),
  t("mailgun-api-key", "Mailgun private API keys (key- followed by 32 lower-case letters and digits).", ["key-"], [["lowerDigits", 32]], { notAfter: "A-Za-z0-9_-" }),
  t("shopify-token", "Shopify access tokens and shared secrets (shpat_, shpca_, shppa_, shpss_; 32 hex digits, or up to 64 letters and digits since 2024).", ["shpat_", "shpca_", "shppa_", "shpss_"], [["alnum", 32, 64]]),
  t("atlassian-api-token", "Atlassian API tokens and organization admin keys (ATATT, ATCTT3).", ["ATATT", "ATCTT3"], [["wordDash", 50, 1024]]),
  t("bitbucket-app-password", "Bitbucket app passwords (ATBB).", ["ATBB"], [["wordDash", 24, 128]]),
  t("vault-token", "HashiCorp Vault service, batch and recovery tokens (hvs., hvb., hvr.).", ["hvs.", "hvb.", "hvr."], [["base64url", 24, 1024]]),
  t("linear-api-key", "Linear API keys (lin_api_).", ["lin_api_"], [["alnum", 40]]),
  t("postman-api-key", "Postman API keys (PMAK-).", ["PMAK-"], [["hex", 24], "-", ["hex", 34]]),
  t("grafana-cloud-token", "Grafana Cloud access policy tokens (glc_).", ["glc_"], [["base64", 32, 1024], { oneOf: [[], ["="], ["=="]] }]),
  t("grafana-service-account-token", "Grafana service account tokens (glsa_).", ["glsa_"], [["alnum", 32], "_", ["hexAny", 8]]),
  t("sentry-org-token", "Sentry organization auth tokens (sntrys_, base64 JSON, _, a 43-character signature).", ["sntrys_"], [
    "eyJ", ["base64", 20, 1024], { oneOf: [[], ["="], ["=="]] }, "_", ["base64", 43]
  ]),
  t("sentry-user-token", "Sentry user auth tokens (sntryu_ and 64 hex digits).", ["sntryu_"], [["hex", 64]]),
  t("square-token", "Square access tokens and OAuth secrets (sq0atp-, sq0csp-).", ["sq0atp-", "sq0csp-"], [["base64url", 20, 64]]),
  t("pulumi-token", "Pulumi access tokens (pul- followed by 40 hex digits).", ["pul-"], [["hex", 40]]),
  t("age-secret-key", "age encryption secret keys (AGE-SECRET-KEY-1).", ["AGE-SECRET-KEY-1"], [["bech32", 58]]),
  t("google-api-key", "Google API keys (AIzaSy followed by 33 characters).", ["AIzaSy"], [["base64url", 33]]),
  t("google-oauth-client-secret", "Google OAuth client secrets (GOCSPX-).", ["GOCSPX-"], [["base64url", 24, 64]]),
  t("google-oauth-access-token", "Google OAuth access tokens (ya29.).", ["ya29."], [["base64url", 20, 4096]])
]

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")

const partSource = (part: Part): string => {
  if (typeof part === "string") return escape(part)
  if ("oneOf" in part) {
    // longest first: a pattern takes the first alternative that lets it end
    const ordered = [...part.oneOf].sort((a, b) => longest(b) - longest(a))
    return `(?:${ordered.map((sequence) => sequence.map(partSource).join("")).join("|")})`
  }
  const [chars, min, max = min] = part
  return `[${escapeClass(classes[chars])}]${min === max ? `{${min}}` : `{${min},${max}}`}`
}

const longest = (sequence: ReadonlyArray<Part>): number =>
  sequence.reduce((sum, part) =>
    sum + (typeof part === "string" ? part.length : "oneOf" in part ? Math.max(0, ...part.oneOf.map(longest)) : part[2] ?? part[1]), 0)

const escapeClass = (chars: string): string => chars.replace(/[\\\]^/]/g, "\\$&")

const partClasses = (part: Part, into: Set<string>): void => {
  if (typeof part === "string") return
  if ("oneOf" in part) {
    for (const sequence of part.oneOf) for (const p of sequence) partClasses(p, into)
    return
  }
  into.add(classes[part[0]])
}

// A token followed by a file extension is part of a file name: a build's fingerprinted asset (`icon.ico-7a38....png`).
const notFileName = "(?!\\.(?:png|jpe?g|gif|svg|ico|webp|css|js|mjs|map|woff2?|ttf|eot|html?)(?![A-Za-z0-9]))"
// A token whose last part is a filler (`xoxp-5723...-1188-####`) is a template with its secret left out.
const notFiller = "(?!(?<=[-_.])#{4})"

/**
 * The pattern source of a format: its prefixes (not one of `except`), then
 * its body, not inside a longer run of the same characters nor a file name.
 */
export const formatSource = (format: TokenFormat): string => {
  const notAfter = format.notAfter ?? "A-Za-z0-9"
  const used = new Set<string>(["A-Za-z0-9"])
  for (const part of format.body) partClasses(part, used)
  const after = [...used].map(escapeClass).join("")
  const except = format.except === undefined ? "" : `(?!${format.except.map(escape).join("|")})`
  return `${notAfter === "" ? "" : `(?<![${notAfter}])`}${except}(?:${format.prefixes.map(escape).join("|")})` +
    `${format.body.map(partSource).join("")}(?![${after}])${notFileName}${notFiller}`
}

const pick = (chars: string, random: () => number): string => {
  const expanded = chars.replace(/(.)-(.)/g, (_, a: string, b: string) => {
    let out = ""
    for (let c = a.charCodeAt(0); c <= b.charCodeAt(0); c++) out += String.fromCharCode(c)
    return out
  })
  return expanded[Math.floor(random() * expanded.length)]
}

const samplePart = (part: Part, random: () => number): string => {
  if (typeof part === "string") return part
  if ("oneOf" in part) return part.oneOf[Math.floor(random() * part.oneOf.length)].map((p) => samplePart(p, random)).join("")
  const [chars, min, max = min] = part
  // most tokens sit near their shortest documented length
  const length = min + Math.floor(random() * Math.min(max - min + 1, 24))
  let out = ""
  for (let i = 0; i < length; i++) {
    // a digit every few characters where the class has digits, so a sample never reads as words
    const set = i % 5 === 2 && /0-9/.test(classes[chars]) ? "0-9" : classes[chars]
    out += pick(set, random)
  }
  return out
}

/** A random token in the format, for tests: one of its prefixes and a body of its shape. */
export const sampleToken = (format: TokenFormat, random: () => number): string => {
  const body = format.body.map((part) => samplePart(part, random)).join("")
  const holds = format.holds ?? ""
  // the literal a real token holds, written over the middle of the body
  const at = Math.floor((body.length - holds.length) / 2)
  return format.prefixes[Math.floor(random() * format.prefixes.length)] + body.slice(0, at) + holds + body.slice(at + holds.length)
}
