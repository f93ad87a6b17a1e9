import type { SecretRule } from "../../Secrets.js"
import { isCredentialPair, isLookAlike, isReference } from "./lookalike.js"

// Every pattern is written for the latin1 view of UTF-8 bytes: ASCII only,
// no `\s` or `.`, nothing that crosses a line break (key blocks aside), and
// bounded repetition so that a match stays far below 8 KiB. Each pattern
// starts with one of its anchors: the masker jumps to anchor positions and
// runs the pattern there.

const keywords = "(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key)"
const keywordAnchors = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "token",
  "api_key",
  "api-key",
  "apikey",
  "access_key",
  "access-key",
  "accesskey"
]
const keyThenSeparator = `${keywords}[A-Za-z0-9_.-]{0,40}["']?[ \\t]{0,16}(?::=|=>|[:=])[ \\t]{0,16}`

/** The built-in rules, most specific first. */
export const defaultRules: ReadonlyArray<SecretRule> = [
  {
    id: "private-key",
    description: "PEM, OpenSSH and PGP private key blocks: the body between the BEGIN and END markers, line breaks kept.",
    pattern: /-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----/,
    end: /-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----/,
    anchors: ["-----BEGIN "]
  },
  {
    id: "aws-access-key-id",
    description: "AWS access key ids (AKIA, ASIA and related prefixes, 20 characters).",
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])/,
    anchors: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"]
  },
  {
    id: "aws-secret-access-key",
    description: "AWS secret access keys assigned to aws_secret_access_key, AWS_SECRET_ACCESS_KEY or SecretAccessKey.",
    pattern: /secret[_-]?access[_-]?key["']?[ \t]{0,16}(?::=|=>|[:=])[ \t]{0,16}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/i,
    group: 1,
    anchors: ["secret"]
  },
  {
    id: "google-api-key",
    description: "Google API keys (AIza followed by 35 characters).",
    pattern: /AIza[0-9A-Za-z_-]{35}/,
    anchors: ["AIza"]
  },
  {
    id: "google-oauth-client-secret",
    description: "Google OAuth client secrets (GOCSPX-).",
    pattern: /GOCSPX-[0-9A-Za-z_-]{24,64}/,
    anchors: ["GOCSPX-"]
  },
  {
    id: "google-oauth-access-token",
    description: "Google OAuth access tokens (ya29.).",
    pattern: /ya29\.[0-9A-Za-z_-]{20,4096}/,
    anchors: ["ya29."]
  },
  {
    id: "azure-storage-account-key",
    description: "Account keys in Azure storage and service bus connection strings (AccountKey=, SharedAccessKey=).",
    pattern: /(?:AccountKey|SharedAccessKey)[ \t]{0,16}=[ \t]{0,16}([A-Za-z0-9+/]{20,1024}={0,2})/i,
    group: 1,
    anchors: ["AccountKey", "SharedAccessKey"]
  },
  {
    id: "azure-sas-signature",
    description: "The sig= signature of Azure shared access signature URLs and tokens.",
    pattern: /(?<![^?&;\n\r \t"'])sig=([A-Za-z0-9%+/]{16,1024}={0,2})/i,
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
    pattern: /(?<=[A-Za-z0-9_~.]{3}[0-9])Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/,
    anchors: ["Q~"]
  },
  {
    id: "github-token",
    description: "GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens (ghp_, gho_, ghu_, ghs_, ghr_).",
    pattern: /gh[pousr]_[A-Za-z0-9]{36,251}/,
    anchors: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]
  },
  {
    id: "github-fine-grained-pat",
    description: "GitHub fine-grained personal access tokens (github_pat_).",
    pattern: /github_pat_[A-Za-z0-9_]{50,255}/,
    anchors: ["github_pat_"]
  },
  {
    id: "gitlab-token",
    description: "GitLab tokens: personal, deploy, runner, trigger, job, mail, agent, SCIM, feature flag, OAuth and feed tokens, and runner registration tokens.",
    pattern: /(?:gl(?:pat|dt|rt|ptt|cbt|imt|agent|soat|ffct|oas|ft)-|GR1348941)[0-9A-Za-z_.-]{20,255}/,
    anchors: [
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
    ]
  },
  {
    id: "slack-token",
    description: "Slack bot, user, app, refresh and configuration tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-, xoxo-, xapp-).",
    pattern: /(?:xox[abeoprs]|xapp)-[0-9A-Za-z-]{10,255}/,
    anchors: ["xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-"]
  },
  {
    id: "slack-webhook-url",
    description: "The secret path of Slack incoming webhook and workflow URLs (hooks.slack.com/services/...).",
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9_/+-]{16,512})/,
    group: 1,
    anchors: ["hooks.slack.com/"]
  },
  {
    id: "stripe-secret-key",
    description: "Stripe secret and restricted keys (sk_live_, sk_test_, rk_live_, rk_test_).",
    pattern: /[sr]k_(?:live|test)_[0-9A-Za-z]{10,247}/,
    anchors: ["sk_live_", "sk_test_", "rk_live_", "rk_test_"]
  },
  {
    id: "stripe-webhook-secret",
    description: "Stripe webhook signing secrets (whsec_).",
    pattern: /whsec_[0-9A-Za-z+/=]{20,255}/,
    anchors: ["whsec_"]
  },
  {
    id: "npm-token",
    description: "npm access tokens (npm_ followed by 36 characters).",
    pattern: /npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/,
    anchors: ["npm_"]
  },
  {
    id: "npmrc-auth",
    description: "Credentials in .npmrc files (_authToken=, _auth=, _password=).",
    pattern: /_(?:auth(?:Token)?|password)[ \t]{0,16}=[ \t]{0,16}["']?([^\x00-\x20"'\x7f]{8,4096})/,
    group: 1,
    allow: isReference,
    anchors: ["_auth", "_password"]
  },
  {
    id: "pypi-token",
    description: "PyPI and TestPyPI API tokens (pypi-AgEIcHlwaS5vcmc...).",
    pattern: /pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,4096}/,
    anchors: ["pypi-AgE"]
  },
  {
    id: "openai-api-key",
    description: "OpenAI project, service account and admin keys (sk-proj-, sk-svcacct-, sk-admin-, sk-None-).",
    pattern: /(?<![A-Za-z0-9])sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,400}/,
    anchors: ["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"]
  },
  {
    id: "openai-legacy-api-key",
    description: "OpenAI keys of any kind that carry the T3BlbkFJ marker (sk-...T3BlbkFJ...).",
    pattern: /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{0,200}T3BlbkFJ[A-Za-z0-9_-]{1,200}/,
    anchors: ["sk-"]
  },
  {
    id: "anthropic-api-key",
    description: "Anthropic API, admin and OAuth keys (sk-ant-api03-, sk-ant-admin01-, ...).",
    pattern: /sk-ant-[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{20,400}/,
    anchors: ["sk-ant-"]
  },
  {
    id: "huggingface-token",
    description: "Hugging Face access tokens (hf_).",
    pattern: /hf_[A-Za-z0-9]{30,64}/,
    anchors: ["hf_"]
  },
  {
    id: "twilio-api-key",
    description: "Twilio API keys (SK followed by 32 hex digits).",
    pattern: /(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![0-9A-Za-z])/,
    anchors: ["SK"]
  },
  {
    id: "sendgrid-api-key",
    description: "SendGrid API keys (SG.<22>.<43>).",
    pattern: /SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/,
    anchors: ["SG."]
  },
  {
    id: "mailgun-api-key",
    description: "Mailgun private API keys (key- followed by 32 hex digits).",
    pattern: /(?<![A-Za-z0-9_-])key-[0-9a-f]{32}(?![0-9A-Za-z])/,
    anchors: ["key-"]
  },
  {
    id: "digitalocean-token",
    description: "DigitalOcean personal, OAuth and refresh tokens (dop_v1_, doo_v1_, dor_v1_).",
    pattern: /do[opr]_v1_[a-f0-9]{64}/,
    anchors: ["dop_v1_", "doo_v1_", "dor_v1_"]
  },
  {
    id: "shopify-token",
    description: "Shopify access tokens and shared secrets (shpat_, shpca_, shppa_, shpss_).",
    pattern: /shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}/,
    anchors: ["shpat_", "shpca_", "shppa_", "shpss_"]
  },
  {
    id: "atlassian-api-token",
    description: "Atlassian API tokens (ATATT3) and Bitbucket app passwords (ATBB).",
    pattern: /(?:ATATT3[A-Za-z0-9_=-]{50,1024}|ATBB[A-Za-z0-9_=.-]{24,128})/,
    anchors: ["ATATT3", "ATBB"]
  },
  {
    id: "databricks-token",
    description: "Databricks personal access tokens (dapi followed by 32 hex digits).",
    pattern: /(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-[0-9]{1,2})?/,
    anchors: ["dapi"]
  },
  {
    id: "vault-token",
    description: "HashiCorp Vault service, batch and recovery tokens (hvs., hvb., hvr.).",
    pattern: /hv[sbr]\.[A-Za-z0-9_-]{24,1024}/,
    anchors: ["hvs.", "hvb.", "hvr."]
  },
  {
    id: "linear-api-key",
    description: "Linear API keys (lin_api_).",
    pattern: /lin_api_[A-Za-z0-9]{40}/,
    anchors: ["lin_api_"]
  },
  {
    id: "postman-api-key",
    description: "Postman API keys (PMAK-).",
    pattern: /PMAK-[a-f0-9]{24}-[a-f0-9]{34}/,
    anchors: ["PMAK-"]
  },
  {
    id: "doppler-token",
    description: "Doppler personal, CLI, service, service account, SCIM and audit tokens (dp.pt., dp.ct., dp.st., ...).",
    pattern: /dp\.(?:pt|ct|st|sa|scim|audit)\.[A-Za-z0-9_.-]{40,256}/,
    anchors: ["dp."]
  },
  {
    id: "grafana-token",
    description: "Grafana Cloud access policy tokens (glc_) and service account tokens (glsa_).",
    pattern: /(?:glc_[A-Za-z0-9+/]{32,1024}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})/,
    anchors: ["glc_", "glsa_"]
  },
  {
    id: "sentry-token",
    description: "Sentry organization and user auth tokens (sntrys_, sntryu_).",
    pattern: /sntry[su]_[A-Za-z0-9_+/=]{40,1024}/,
    anchors: ["sntrys_", "sntryu_"]
  },
  {
    id: "docker-hub-token",
    description: "Docker Hub personal access tokens (dckr_pat_).",
    pattern: /dckr_pat_[A-Za-z0-9_-]{20,64}/,
    anchors: ["dckr_pat_"]
  },
  {
    id: "square-token",
    description: "Square access tokens and OAuth secrets (sq0atp-, sq0csp-).",
    pattern: /sq0(?:atp|csp)-[0-9A-Za-z_-]{20,64}/,
    anchors: ["sq0atp-", "sq0csp-"]
  },
  {
    id: "pulumi-token",
    description: "Pulumi access tokens (pul- followed by 40 hex digits).",
    pattern: /pul-[a-f0-9]{40}(?![a-f0-9])/,
    anchors: ["pul-"]
  },
  {
    id: "terraform-cloud-token",
    description: "Terraform Cloud / Enterprise API tokens (<id>.atlasv1.<secret>); masked from .atlasv1. on.",
    pattern: /(?<=[A-Za-z0-9]{14})\.atlasv1\.[A-Za-z0-9_=-]{60,120}/,
    anchors: [".atlasv1."]
  },
  {
    id: "age-secret-key",
    description: "age encryption secret keys (AGE-SECRET-KEY-1).",
    pattern: /AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/,
    anchors: ["AGE-SECRET-KEY-1"]
  },
  {
    id: "jwt",
    description: "JSON Web Tokens: three base64url parts, the first two starting eyJ.",
    pattern: /eyJ[A-Za-z0-9_-]{4,1024}\.eyJ[A-Za-z0-9_-]{4,5000}\.[A-Za-z0-9_-]{0,1500}/,
    anchors: ["eyJ"]
  },
  {
    id: "authorization-header",
    description: "The credential of an Authorization header (Bearer, Basic, token or bare); the header name and scheme stay visible.",
    pattern:
      /authorization["']?[ \t]{0,16}[:=][ \t]{0,16}["']?(?:(?:bearer|basic|token|bot|apikey|negotiate)[ \t]{1,16})?([A-Za-z0-9._~+/-]{8,4096}={0,2})/i,
    group: 1,
    allow: isReference,
    anchors: ["authorization"]
  },
  {
    id: "bearer-token",
    description: "A token after the word Bearer anywhere (curl flags, logged headers); the scheme stays visible.",
    pattern: /(?<![A-Za-z0-9])bearer[ \t]{1,16}([A-Za-z0-9._~+/-]{16,4096}={0,2})/i,
    group: 1,
    minEntropy: 3,
    allow: isReference,
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
    description: "The password of credentials embedded in a URL (scheme://user:password@host).",
    pattern: /:\/\/[^\x00-\x20:/?#@"'<>\\[\]{}]{0,256}:([^\x00-\x20/?#"'<>\\]{1,256})@/,
    group: 1,
    allow: isReference,
    anchors: ["://"]
  },
  {
    id: "docker-config-auth",
    description: "Base64 credentials in Docker config.json auths entries (\"auth\": \"...\").",
    pattern: /"auth"[ \t]{0,16}:[ \t]{0,16}"([A-Za-z0-9+/]{8,4096}={0,2})"/,
    group: 1,
    anchors: ["\"auth\""]
  },
  {
    id: "generic-secret-assignment",
    description: "Unquoted values assigned to password, secret, token, api key and access key names (env files, YAML, flags); gated by length and entropy.",
    pattern: new RegExp(`${keyThenSeparator}([^\\x00-\\x20"'\`,;&\\x7f]{8,4096})`, "i"),
    group: 1,
    minEntropy: 3,
    allow: isLookAlike,
    anchors: keywordAnchors
  },
  {
    id: "generic-secret-assignment-quoted",
    description: "Quoted values assigned to password, secret, token, api key and access key names (JSON, YAML, code); gated by length and entropy.",
    pattern: new RegExp(`${keyThenSeparator}(["'])((?:(?!\\1)[^\\\\\\r\\n]|\\\\[^\\r\\n]){8,4096})\\1`, "i"),
    group: 2,
    minEntropy: 3,
    allow: isLookAlike,
    anchors: keywordAnchors
  }
]
