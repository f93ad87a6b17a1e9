// Reads TruffleHog's common detectors from a checkout of
// github.com/trufflesecurity/trufflehog (AGPL-3.0): only the sample strings
// of each detector's pattern test and the detector's name are kept, none of
// its code. A test case (`tests := []struct{ name, input string; want
// []string }`) with results is a true sample: each wanted string is found
// in the input (a result that joins several parts, `id:secret`, is found
// part by part, and the longest part that is not an id, a host or an
// address is the secret; a connection string's secret is its password, a
// signed URL's its signature, a key block's its body); a case that wants
// nothing is a false sample.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { commitOf, formatCatalogue } from "./lib/catalogue.mjs"
import { Evaluator, isUnknown, parsePackage, unknown } from "./lib/go.mjs"

/**
 * The detectors read, by directory under pkg/detectors. TruffleHog has 800
 * and more, most for small APIs found by a keyword near a bare hex or
 * base64 value; these are the services other public catalogues (gitleaks,
 * secretlint, detect-secrets) cover too, and the cloud, SaaS and AI
 * providers whose credentials turn up most in build and agent output.
 */
const DETECTORS = [
  // AI providers
  "openai", "openaiadmin", "anthropic", "groq", "huggingface", "xai", "deepseek", "googlegemini", "replicate", "elevenlabs",
  "langsmith", "nvapi", "openrouter", "pinecone", "weightsandbiases", "deepgram", "assemblyai",
  // cloud and hosting
  "aws/access_keys", "aws/session_keys", "gcp", "azure_storage", "azuresastoken", "azuredevopspersonalaccesstoken", "alibaba",
  "digitaloceantoken", "digitaloceanv2", "cloudflareapitoken", "cloudflarecakey", "cloudflareglobalapikey", "heroku", "flyio",
  "vercel", "netlify", "railwayapp", "supabasetoken", "planetscale", "databrickstoken", "scalewaykey", "vultrapikey",
  "tailscale", "ngrok", "terraformcloudpersonaltoken", "hashicorpvault", "doppler", "pulumi",
  // source control, packages and CI
  "github/v1", "github/v2", "gitlab/v1", "gitlab/v2", "gitlab/v3", "bitbucketapppassword", "npmtoken", "npmtokenv2", "pypi", "rubygems",
  "nugetapikey", "dockerhub", "artifactory", "circleci", "buildkite", "travisci", "sourcegraph", "sentrytoken", "sentryorgtoken",
  "snykkey", "sonarcloud", "postman", "jiratoken", "atlassian",
  // observability
  "datadogtoken", "datadogapikey", "newrelicpersonalapikey", "grafana", "grafanaserviceaccount",
  // work tools
  "linearapi", "notion", "figmapersonalaccesstoken", "asanapersonalaccesstoken", "airtablepersonalaccesstoken", "dropbox", "box",
  "hubspot_apikey", "intercom", "zendeskapi", "okta", "auth0managementapitoken",
  // messaging and payments
  "slack", "slackwebhook", "discordbottoken", "discordwebhook", "telegrambottoken", "microsoftteamswebhook", "twilio", "twilioapikey",
  "sendgrid", "mailgun", "mailchimp", "postmark", "sendinbluev2", "stripe", "square", "shopify", "paypaloauth", "plaidkey",
  // keys, tokens and connection strings of any service
  "privatekey", "jwt", "mongodb", "postgres", "redis", "jdbc", "uri", "ftp", "ldap"
]

const sprintf = (format, args) => {
  let i = 0
  return format.replace(/%([-+# 0]*[0-9]*)([sdvqx%])/g, (all, _flags, verb) => {
    if (verb === "%") return "%"
    const a = args[i++]
    if (verb === "q") return JSON.stringify(String(a))
    if (verb === "x") return Buffer.from(String(a), "latin1").toString("hex")
    return Array.isArray(a) ? `[${a.join(" ")}]` : String(a)
  })
}

const builtins = {
  "fmt.Sprintf": ([format, ...args]) => sprintf(format, args),
  "strings.Repeat": ([s, n]) => s.repeat(n),
  "strings.Join": ([list, sep]) => list.map(String).join(sep),
  "strings.ToUpper": ([s]) => s.toUpperCase(),
  "strings.ToLower": ([s]) => s.toLowerCase(),
  "strings.ReplaceAll": ([s, a, b]) => s.split(a).join(b),
  "base64.StdEncoding.EncodeToString": ([s]) => Buffer.from(s, "latin1").toString("base64"),
  "string": ([s]) => (Array.isArray(s) ? s.join("") : String(s)),
  "[]byte": ([s]) => s
}

/** The end (exclusive) of the bracketed group that opens at `open` in Go source, skipping strings and comments. */
const groupEnd = (src, open) => {
  let depth = 0
  for (let i = open; i < src.length; i++) {
    const c = src[i]
    if (c === "\"" || c === "'") {
      for (i++; i < src.length && src[i] !== c; i++) if (src[i] === "\\") i++
    } else if (c === "`") {
      i = src.indexOf("`", i + 1)
    } else if (c === "/" && src[i + 1] === "/") {
      i = src.indexOf("\n", i)
    } else if (c === "/" && src[i + 1] === "*") {
      i = src.indexOf("*/", i) + 1
    } else if ("{([".includes(c)) depth++
    else if ("})]".includes(c) && --depth === 0) return i + 1
  }
  return -1
}

/**
 * The pattern tests of a test file, each as a Go function that returns its
 * cases: the test's statements up to its `tests := ...` literal, then `return tests`.
 */
const patternTests = (src) => {
  const out = []
  for (const m of src.matchAll(/func (Test\w*_?Pattern\w*)\(t \*testing\.T\) \{/g)) {
    const bodyStart = m.index + m[0].length
    const decl = /\btests\s*:?=\s*\[\]struct\s*\{/.exec(src.slice(bodyStart))
    if (decl === null) continue
    const typeOpen = bodyStart + decl.index + decl[0].length - 1
    const typeEnd = groupEnd(src, typeOpen)
    const litOpen = src.indexOf("{", typeEnd)
    const litEnd = groupEnd(src, litOpen)
    if (typeEnd < 0 || litEnd < 0) continue
    out.push({ name: m[1], src: `func ${m[1]}__cases() {${src.slice(bodyStart, litEnd)}\nreturn tests\n}\n` })
  }
  return out
}

const bytes = (text) => Buffer.byteLength(text, "utf8")

/** Every [start, end) byte span of `part` in `text`. */
const spansOf = (text, part) => {
  const spans = []
  for (let at = text.indexOf(part); at >= 0 && part.length > 0; at = text.indexOf(part, at + part.length)) {
    spans.push([bytes(text.slice(0, at)), bytes(text.slice(0, at + part.length))])
  }
  return spans
}

/**
 * The spans of a wanted result in the input: the secret in it (a
 * connection string's password, a signed URL's signature, a key block's
 * body), the whole result, or its longest part that the input holds; or
 * why there is no secret to look for.
 */
const locate = (input, want) => {
  // a connection string: its password is the secret (the user and host are not)
  const url = /^[a-z][a-z0-9+.:-]*:\/\/[^:/@\s]*:([^\s]+)@[^@\s]*$/i.exec(want)
  if (url !== null && input.includes(url[1])) return { spans: spansOf(input, url[1]) }
  const option = /[;&?]password=([^;&\s]+)/i.exec(want)
  if (option !== null && input.includes(option[1])) return { spans: spansOf(input, option[1]) }
  // a database connection string with neither: the detector reports where a database is, not a credential
  if (/^(?:jdbc:|(?:mongodb|postgres(?:ql)?|mysql|redis)(?:\+srv)?:\/\/)/i.test(want) && url === null && option === null) {
    return { reason: "the result is a connection string with no password in it: it names a database, not a credential", noSecret: true }
  }
  // a signed URL: its signature is the secret (the resource and the signed parameters are not)
  const sig = /[?&]sig=([^&\s"']+)/.exec(want)
  if (sig !== null && input.includes(`sig=${sig[1]}`)) return { spans: spansOf(input, `sig=${sig[1]}`).map(([a, b]) => [a + 4, b]) }
  // a key block: its body is the secret (the markers say what it is)
  const block = /^(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)\s*([\s\S]*?)\s*-----END /.exec(want)
  if (block !== null && input.includes(block[2]) && block[2].length > 0) return { spans: spansOf(input, block[2]) }
  const whole = spansOf(input, want)
  if (whole.length > 0) return { spans: whole }
  // not a host, a URL, an e-mail address, nor an account or key id (AC..., LTAI..., AKIA...): those name where or whose a secret is
  const secretLike = (p) => !/^(?:[\w-]+\.)+[a-z]{2,12}$|@|^\/\/|^(?:AC[0-9a-f]{16,32}|LTAI[A-Za-z0-9]{8,30}|A[KS]IA[A-Z0-9]{8,16})$/.test(p)
  const parts = want.split(/[^A-Za-z0-9+/=_.~-]+/).filter((p) => p.length >= 8 && secretLike(p) && input.includes(p)).sort((a, b) => b.length - a.length)
  if (parts.length > 0) return { spans: spansOf(input, parts[0]) }
  // parts joined with nothing between them (a token, then its host): the longest start or end the input holds
  for (let k = want.length - 1; k >= 16; k--) {
    const head = want.slice(0, k)
    const tail = want.slice(want.length - k)
    if (input.includes(head) && secretLike(head)) return { spans: spansOf(input, head) }
    if (input.includes(tail) && secretLike(tail)) return { spans: spansOf(input, tail) }
  }
  return { reason: `the result ${JSON.stringify(want.slice(0, 60))} is not in the input (the detector builds it)` }
}

const readDetector = (checkout, dir) => {
  const base = join(checkout, "pkg/detectors", dir)
  const rule = { id: dir.replace("/", "-"), tps: [], fps: [], unbuilt: [] }
  if (!existsSync(base)) {
    rule.unbuilt.push({ what: dir, reason: "no such detector at this commit" })
    return rule
  }
  // a detector's versions sit in directories of their own (v1, v2)
  const files = readdirSync(base, { recursive: true }).map(String).filter((f) => f.endsWith("_test.go") && !f.includes("integration")).sort()
  for (const file of files) {
    const src = readFileSync(join(base, file), "utf8")
    const tests = patternTests(src)
    if (tests.length === 0) continue
    // the file's own declarations (sample constants) and one function per pattern test
    const pkg = parsePackage([{ file, src: src + "\n" + tests.map((t) => t.src).join("\n") }])
    // a library call this reader does not know (the scanner's own setup) gives an unknown value
    const library = (name) => typeof name === "string" && name.includes(".")
    const evaluator = new Evaluator(pkg, new Proxy(builtins, {
      get: (own, name) => own[name] ?? (library(name) ? () => unknown(`${name} is not evaluated`) : undefined),
      has: (own, name) => name in own || library(name)
    }))
    for (const test of tests) {
      const cases = evaluator.call(`${test.name}__cases`, [], { func: test.name, file })
      if (isUnknown(cases) || !Array.isArray(cases)) {
        rule.unbuilt.push({ what: `${file} ${test.name}`, reason: isUnknown(cases) ? cases.unknown : "its cases are not a list" })
        continue
      }
      for (const c of cases) {
        const fields = c?.fields ?? {}
        const name = `${test.name}: ${typeof fields.name === "string" ? fields.name : "?"}`
        const input = fields.input ?? fields.data
        // most tests list the results; some say whether the input matches, and what
        const want = fields.want ?? (fields.shouldMatch === true ? [fields.match || input] : [])
        if (typeof input !== "string" || isUnknown(want) || !Array.isArray(want) || want.some((w) => typeof w !== "string")) {
          const why = [input, want, ...(Array.isArray(want) ? want : [])].find(isUnknown)
          rule.unbuilt.push({ what: name, reason: why?.unknown ?? "its input or results are not strings" })
          continue
        }
        if (want.length === 0) {
          rule.fps.push({ name, text: input })
          continue
        }
        // results that name no credential are left out; a case with only such results has nothing to mask
        const all = want.map((w) => locate(input, w))
        const located = all.filter((l) => l.noSecret !== true)
        const missing = located.find((l) => l.reason !== undefined) ?? (located.length === 0 ? all[0] : undefined)
        if (missing !== undefined) {
          rule.unbuilt.push({ what: name, reason: missing.reason })
          continue
        }
        const spans = [...new Map(located.flatMap((l) => l.spans).map((s) => [s.join(","), s])).values()].sort((a, b) => a[0] - b[0])
        rule.tps.push({ name, text: input, spans })
      }
    }
  }
  if (rule.tps.length + rule.fps.length + rule.unbuilt.length === 0) rule.unbuilt.push({ what: dir, reason: "the detector has no pattern test" })
  return rule
}

/** Reads the chosen detectors' pattern tests from `checkout` and writes packages/core/test/catalogues/trufflehog.json under `root`. */
export const generate = (checkout, root) => {
  const rules = DETECTORS.map((dir) => readDetector(checkout, dir))
  const dir = join(root, "packages/core/test/catalogues")
  mkdirSync(dir, { recursive: true })
  const path = join(dir, "trufflehog.json")
  writeFileSync(path, formatCatalogue({
    source: "TruffleHog (https://github.com/trufflesecurity/trufflehog), AGPL-3.0: only sample strings and detector names are kept",
    commit: commitOf(checkout),
    generatedBy: "node scripts/secret-catalogues.mjs trufflehog <checkout>",
    note: "The pattern tests (pkg/detectors/<name>/*_test.go, tests := []struct{ name, input, want }) of the detectors listed in selection: tps are cases with results (spans: byte ranges of each result in the input, or of its longest part when the detector joins parts), fps cases with none.",
    selection: `${DETECTORS.length} of TruffleHog's detectors: the services gitleaks, secretlint and detect-secrets cover too, and the cloud, SaaS and AI providers whose credentials turn up most in build and agent output (${DETECTORS.join(", ")}).`,
    rules
  }))
  return path
}
