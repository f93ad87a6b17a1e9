// Reads gitleaks' rule catalogue from a checkout: each rule's regex from
// config/gitleaks.toml, and its true and false samples from the Go that
// generates that file (cmd/generate/config/rules/*.go, with the sample
// contexts of cmd/generate/config/utils/generate.go), evaluated here with
// random secrets drawn from a seeded generator. Writes
// packages/core/test/catalogues/gitleaks.json, and, to
// packages/core/src/internal/secrets/publishedValues.ts, the credentials the
// catalogue keeps by exact value because they are published.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import RandExp from "randexp"
import { RE2JS } from "re2js"
import { parse as parseToml } from "smol-toml"
import { Evaluator, isUnknown, parsePackage, unknown } from "./lib/go.mjs"

const OUTPUT = "packages/core/test/catalogues/gitleaks.json"

/** A seeded PRNG (mulberry32), so the same checkout gives the same samples. */
const seeded = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const seedOf = (text) => createHash("sha256").update(text).digest().readInt32LE(0)

const POSIX = {
  alnum: "A-Za-z0-9", alpha: "A-Za-z", digit: "0-9", xdigit: "0-9A-Fa-f", upper: "A-Z", lower: "a-z",
  space: " \\t\\r\\n\\v\\f", punct: "!-\\/:-@\\[-`{-~", word: "A-Za-z0-9_", blank: " \\t"
}

/** A Go (RE2) pattern as randexp reads it: inline flags, named groups, `\z` and POSIX classes translated. */
export const goToRandexp = (pattern) => {
  let flags = ""
  let source = pattern
  const leading = /^\(\?([imsU]+)\)/.exec(source)
  if (leading !== null) {
    if (leading[1].includes("i")) flags = "i"
    source = source.slice(leading[0].length)
  }
  source = source
    .replace(/\(\?P?<[A-Za-z_][A-Za-z0-9_]*>/g, "(")
    .replace(/\(\?-?[imsU]+(?:-[imsU]+)?:/g, "(?:")
    .replace(/\(\?[imsU]+\)/g, "")
    .replace(/(?<!\\)((?:\\\\)*)\\z/g, "$1$")
    .replace(/(?<!\\)((?:\\\\)*)\\A/g, "$1^")
    .replace(/\[:([a-z]+):\]/g, (_, name) => POSIX[name] ?? `[:${name}:]`)
  return { source, flags }
}

/** A random string the pattern matches, from `random`. */
const randomMatch = (pattern, random) => {
  const { source, flags } = goToRandexp(pattern)
  const r = new RandExp(source, flags)
  r.max = 16
  r.defaultRange.subtract(0, 31)
  r.defaultRange.subtract(127, 65535)
  r.randInt = (a, b) => a + Math.floor(random() * (1 + b - a))
  return r.gen()
}

const base64 = (text, url, pad) => {
  let out = Buffer.from(text, "utf8").toString(url ? "base64url" : "base64")
  if (url && pad) out += "=".repeat((4 - (out.length % 4)) % 4)
  if (!pad) out = out.replace(/=+$/, "")
  return out
}

const sprintf = (format, args) => {
  let n = 0
  return format.replace(/%([-+# 0]*\d*(?:\.\d+)?)([%svdqxXt])/g, (whole, _flags, verb) => {
    if (verb === "%") return "%"
    const a = args[n++]
    if (verb === "q") return JSON.stringify(String(a))
    if (verb === "x") return Buffer.from(String(a)).toString("hex")
    return typeof a === "object" && a !== null ? JSON.stringify(a) : String(a)
  })
}

/** Builtins shared by both packages: the Go standard library calls the catalogue uses. */
const standard = {
  "fmt.Sprintf": ([format, ...args]) => sprintf(format, args),
  "strings.Repeat": ([s, n]) => s.repeat(n),
  "strings.ToUpper": ([s]) => s.toUpperCase(),
  "strings.ToLower": ([s]) => s.toLowerCase(),
  "strings.Join": ([list, sep]) => list.map(String).join(sep),
  "strings.ReplaceAll": ([s, a, b]) => s.split(a).join(b),
  "strings.NewReplacer": (pairs) => ({
    methods: {
      Replace: ([s]) => {
        let out = ""
        for (let i = 0; i < s.length;) {
          let hit = -1
          for (let k = 0; k + 1 < pairs.length; k += 2) {
            if (pairs[k] !== "" && s.startsWith(pairs[k], i)) {
              hit = k
              break
            }
          }
          if (hit === -1) out += s[i++]
          else {
            out += pairs[hit + 1]
            i += pairs[hit].length
          }
        }
        return out
      }
    }
  }),
  "base64.StdEncoding.EncodeToString": ([s]) => base64(s, false, true),
  "base64.RawStdEncoding.EncodeToString": ([s]) => base64(s, false, false),
  "base64.URLEncoding.EncodeToString": ([s]) => base64(s, true, true),
  "base64.RawURLEncoding.EncodeToString": ([s]) => base64(s, true, false),
  "regexp.MustCompile": ([s]) => s,
  append: ([list, ...items]) => [...(list ?? []), ...items],
  make: () => [],
  len: ([v]) => (typeof v === "string" ? Buffer.byteLength(v) : Array.isArray(v) ? v.length : v?.map?.length ?? 0),
  string: ([v]) => v
}

const goFiles = (dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".go") && !f.endsWith("_test.go"))
    .sort()
    .map((file) => ({ file, src: readFileSync(join(dir, file), "utf8") }))

/** A sample: its text, and where it came from when a generator made it. */
const textOf = (v) => (typeof v === "string" ? v : v?.text)

/** Evaluates every rule function of the catalogue; returns, by function name, its rule id and samples or why they could not be built. */
const evaluateRules = (checkout) => {
  const base = join(checkout, "cmd/generate/config")
  const utils = new Evaluator(parsePackage(goFiles(join(base, "utils"))), standard)
  const secretsPkg = parsePackage(goFiles(join(checkout, "cmd/generate/secrets")))
  if (!secretsPkg.funcs.has("NewSecret")) throw new Error("cmd/generate/secrets has no NewSecret: the catalogue's layout changed")
  const pkg = parsePackage(goFiles(join(base, "rules")))
  const counters = new Map()
  const randomFor = (ctx) => {
    const n = (counters.get(ctx.func) ?? 0) + 1
    counters.set(ctx.func, n)
    return seeded(seedOf(`${ctx.func}#${n}`))
  }
  const newSecret = ([pattern], ctx) => {
    try {
      return randomMatch(pattern, randomFor(ctx))
    } catch (error) {
      return unknown(`line ${ctx.line}: randexp cannot generate from ${pattern}: ${error.message}`)
    }
  }
  let rules
  const builtins = {
    ...standard,
    "secrets.NewSecret": newSecret,
    // generic.go's helper: a secret with a digit and no stop word, drawn until one fits
    newPlausibleSecret: ([pattern], ctx) => {
      const stop = rules.global("DefaultStopWords")
      if (!Array.isArray(stop)) return unknown("DefaultStopWords cannot be read")
      for (let tries = 0; tries < 1000; tries++) {
        const secret = newSecret([pattern], ctx)
        if (isUnknown(secret)) return secret
        const lower = secret.toLowerCase()
        if (/[1-9]/.test(secret) && !stop.some((w) => lower.includes(w))) return secret
      }
      return unknown(`no plausible secret for ${pattern} in 1000 tries`)
    },
    "utils.GenerateSampleSecrets": (args, ctx) => {
      const cases = utils.call("GenerateSampleSecrets", args, ctx)
      const samples = utils.lastScope?.get("samples")
      if (!Array.isArray(cases)) return cases
      const labels = samples?.map?.map(([k]) => k)
      return cases.map((text, i) => ({ text, context: labels?.length === cases.length ? labels[i] : undefined }))
    },
    "utils.Validate": ([rule, tps, fps]) => ({ rule, tps: tps ?? [], fps: fps ?? [] }),
    "utils.ValidateWithPaths": ([rule, tps, fps]) => ({
      rule,
      tps: (tps?.map ?? []).map(([path, text]) => ({ text, path })),
      fps: (fps?.map ?? []).map(([path, text]) => ({ text, path }))
    })
  }
  for (const name of utils.pkg.funcs.keys()) {
    if (!(`utils.${name}` in builtins)) builtins[`utils.${name}`] = (args, ctx) => utils.call(name, args, ctx)
  }
  rules = new Evaluator(pkg, builtins)
  const main = readFileSync(join(base, "main.go"), "utf8").replace(/\/\/[^\n]*/g, "")
  const order = [...main.matchAll(/rules\.([A-Za-z0-9_]+)\(\)/g)].map((m) => m[1])
  return order.map((func) => {
    const result = rules.call(func, [], { func })
    return { func, result }
  })
}

/** Splits a list of evaluated samples into built ones and the reasons the others could not be built. */
const collect = (list, what) => {
  const built = []
  const unbuilt = []
  if (isUnknown(list)) return { built, unbuilt: [{ what, reason: list.unknown }] }
  for (const item of list) {
    const text = textOf(item)
    if (typeof text !== "string") unbuilt.push({ what, reason: isUnknown(item) ? item.unknown : isUnknown(text) ? text.unknown : "not a string" })
    else built.push(typeof item === "string" ? { text } : { ...item })
  }
  return { built, unbuilt }
}

const shannon = (s) => {
  const counts = new Map()
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1)
  let h = 0
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length)
  return h
}

/** A compiled allowlist of the config: what keeps a finding out. */
const allowlist = (list) => ({
  regexes: (list.regexes ?? []).map((r) => RE2JS.compile(r)),
  target: list.regexTarget ?? "secret",
  stopwords: (list.stopwords ?? []).map((w) => w.toLowerCase()),
  and: list.condition === "AND",
  paths: (list.paths ?? []).length > 0
})

const allowed = (lists, secret, match, line) => lists.some((a) => {
  const checks = []
  if (a.regexes.length > 0) {
    const target = a.target === "match" ? match : a.target === "line" ? line : secret
    checks.push(a.regexes.some((r) => r.matcher(target).find()))
  }
  if (a.stopwords.length > 0) checks.push(a.stopwords.some((w) => secret.toLowerCase().includes(w)))
  if (a.paths) checks.push(false)
  if (checks.length === 0) return false
  return a.and ? checks.every(Boolean) : checks.some(Boolean)
})

/** A rule of gitleaks.toml compiled to find what gitleaks reports: each secret's byte span in a text. */
const compileRule = (rule, global) => {
  const re = rule.regex === undefined ? undefined : RE2JS.compile(rule.regex)
  // a rule without groups whose regex ends with a boundary it consumes (`(?:[^a-z]|\z)`): the secret is the match without that character
  const boundary = /\(\?:\[\^[^\]]*\]\|\\z\)$/
  const core = re !== undefined && re.groupCount() === 0 && boundary.test(rule.regex)
    ? RE2JS.compile(`^(?:${rule.regex.replace(boundary, "")})`)
    : undefined
  const lists = [...(rule.allowlists ?? []).map(allowlist), global]
  const entropy = rule.entropy ?? 0
  return {
    id: rule.id,
    spans: (text) => {
      if (re === undefined) return []
      const found = []
      const m = re.matcher(text)
      while (m.find()) {
        let start = m.start()
        let end = m.end()
        if (end === start) continue
        while (text[start] === "\n") start++
        while (end > start && text[end - 1] === "\n") end--
        const match = text.slice(start, end)
        const inner = re.matcher(match)
        if (!inner.find()) continue
        let s = inner.start()
        let e = inner.end()
        if (rule.secretGroup !== undefined && rule.secretGroup > 0) {
          if (inner.groupCount() < rule.secretGroup || inner.start(rule.secretGroup) < 0) continue
          s = inner.start(rule.secretGroup)
          e = inner.end(rule.secretGroup)
        } else {
          for (let g = 1; g <= inner.groupCount(); g++) {
            if (inner.start(g) >= 0 && inner.end(g) > inner.start(g)) {
              s = inner.start(g)
              e = inner.end(g)
              break
            }
          }
        }
        if (core !== undefined) {
          const m2 = core.matcher(match)
          if (m2.find()) e = m2.end()
        }
        const secret = match.slice(s, e)
        if (secret.length === 0 || shannon(secret) < entropy) continue
        const lineStart = text.lastIndexOf("\n", start - 1) + 1
        const lineEnd = text.indexOf("\n", end)
        if (allowed(lists, secret, match, text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd))) continue
        const at = start + s
        found.push([Buffer.byteLength(text.slice(0, at)), Buffer.byteLength(text.slice(0, at + secret.length))])
      }
      return found
    }
  }
}

/** Writes the JSON with one sample per line: small, and a diff shows which sample changed. */
const format = (data) => {
  const lines = ["{"]
  const top = Object.entries(data).filter(([k]) => k !== "rules")
  for (const [k, v] of top) lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(v)},`)
  lines.push("  \"rules\": [")
  data.rules.forEach((rule, r) => {
    lines.push("    {")
    const entries = Object.entries(rule)
    entries.forEach(([k, v], i) => {
      const comma = i + 1 < entries.length ? "," : ""
      if (Array.isArray(v) && v.length > 0 && typeof v[0] === "object") {
        lines.push(`      ${JSON.stringify(k)}: [`)
        v.forEach((item, j) => lines.push(`        ${JSON.stringify(item)}${j + 1 < v.length ? "," : ""}`))
        lines.push(`      ]${comma}`)
      } else lines.push(`      ${JSON.stringify(k)}: ${JSON.stringify(v)}${comma}`)
    })
    lines.push(`    }${r + 1 < data.rules.length ? "," : ""}`)
  })
  lines.push("  ]", "}", "")
  return lines.join("\n")
}

const commitOf = (checkout) => {
  try {
    return execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    const file = join(checkout, ".commit")
    return existsSync(file) ? readFileSync(file, "utf8").trim() : "unknown"
  }
}

const PUBLISHED = "packages/core/src/internal/secrets/publishedValues.ts"

/** A pattern that is plain text once its escaped punctuation is read as itself: the text, or undefined. */
const literalOf = (pattern) => {
  // `\\+` is a plus; anything else that is not a letter or a digit, and any other escape, is an operator
  if (/[\\[\](){}*+?|^$.]/.test(pattern.replace(/\\[^A-Za-z0-9]/g, ""))) return undefined
  return pattern.replace(/\\([^A-Za-z0-9])/g, "$1")
}

/**
 * Credentials the catalogue keeps by their exact value, because they are
 * published (SDK examples, documentation samples): the literal patterns of
 * each rule's allowlist on the secret, and its stop words, that have a
 * credential's shape (eight characters or more, letters and digits).
 */
const publishedValues = (config) => {
  const found = new Map()
  const shaped = (v) => v.length >= 8 && /[A-Za-z]/.test(v) && /[0-9]/.test(v) && !/\s/.test(v)
  const take = (value, rule) => {
    if (value !== undefined && shaped(value) && !found.has(value)) found.set(value, rule)
  }
  const lists = [
    ...config.rules.flatMap((rule) => (rule.allowlists ?? []).map((list) => ({ rule: rule.id, list }))),
    { rule: "(global)", list: config.allowlist ?? {} }
  ]
  for (const { list, rule } of lists) {
    if ((list.regexTarget ?? "secret") === "secret") for (const pattern of list.regexes ?? []) take(literalOf(pattern), rule)
    for (const word of list.stopwords ?? []) take(word, rule)
  }
  return [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The TypeScript module of published values, in core: data only, one value a line. */
const publishedModule = (values, commit) =>
  [
    "// Generated by `node scripts/secret-catalogues.mjs gitleaks <checkout>` from",
    "// gitleaks' config/gitleaks.toml (MIT License, Copyright (c) 2019 Zachary Rice)",
    `// at ${commit}:`,
    "// the credentials its rules keep by exact value because they are published",
    "// (SDK examples, documentation samples). Do not edit by hand.",
    "",
    "/** Published credentials, each with the gitleaks rule that lists it: public, so a masker keeps them visible. */",
    "export const publishedValueList: ReadonlyArray<readonly [value: string, rule: string]> = [",
    ...values.map(([value, rule], i) => `  [${JSON.stringify(value)}, ${JSON.stringify(rule)}]${i + 1 < values.length ? "," : ""}`),
    "]",
    "",
    "/** The published credentials, for exact lookups. */",
    "export const publishedValues: ReadonlySet<string> = new Set(publishedValueList.map(([value]) => value))",
    ""
  ].join("\n")

/** Reads the catalogue in `checkout` and writes its samples under `root`; returns what it wrote. */
export const generate = async (checkout, root) => {
  const config = parseToml(readFileSync(join(checkout, "config/gitleaks.toml"), "utf8"))
  const global = allowlist(config.allowlist ?? {})
  const byId = new Map(config.rules.map((rule) => [rule.id, rule]))
  const compiled = config.rules.map((rule) => compileRule(rule, global))
  const evaluated = evaluateRules(checkout)
  const rules = []
  const seen = new Set()
  for (const { func, result } of evaluated) {
    const id = result?.rule?.fields?.RuleID ?? result?.fields?.RuleID
    if (typeof id !== "string") throw new Error(`${func}: no RuleID could be read (${JSON.stringify(result).slice(0, 200)})`)
    seen.add(id)
    const config = byId.get(id)
    if (config === undefined) throw new Error(`${func}: rule ${id} is not in config/gitleaks.toml`)
    const own = compiled.find((c) => c.id === id)
    const tps = collect(result.tps ?? [], "true sample")
    const fps = collect(result.fps ?? [], "false sample")
    const unbuilt = [...tps.unbuilt, ...fps.unbuilt]
    const truths = []
    for (const sample of tps.built) {
      const spans = own.spans(sample.text)
      if (spans.length === 0) unbuilt.push({ what: "true sample", reason: "the rule's regex, run with re2js, finds no secret in it", text: sample.text })
      else truths.push({ ...sample, spans })
    }
    const falses = fps.built.map((sample) => {
      const others = compiled.filter((c) => c.id !== id && c.spans(sample.text).length > 0).map((c) => c.id)
      return others.length > 0 ? { ...sample, matchedBy: others } : sample
    })
    rules.push({
      id,
      description: config.description,
      regex: config.regex ?? null,
      ...(config.secretGroup === undefined ? {} : { secretGroup: config.secretGroup }),
      ...(config.entropy === undefined ? {} : { entropy: config.entropy }),
      ...(config.path === undefined ? {} : { path: config.path }),
      keywords: config.keywords ?? [],
      tps: truths,
      fps: falses,
      unbuilt
    })
  }
  const missing = config.rules.filter((rule) => !seen.has(rule.id)).map((rule) => rule.id)
  if (missing.length > 0) throw new Error(`rules in gitleaks.toml with no function in main.go: ${missing.join(", ")}`)
  const data = {
    source: "gitleaks (https://github.com/gitleaks/gitleaks), MIT License, Copyright (c) 2019 Zachary Rice",
    commit: commitOf(checkout),
    generatedBy: "node scripts/secret-catalogues.mjs gitleaks <checkout>",
    note: "Rules from config/gitleaks.toml; samples from cmd/generate/config/rules/*.go, evaluated with seeded random secrets. spans: byte ranges of each secret (the rule's secret group). matchedBy: other rules that find a secret in a false sample.",
    rules
  }
  const out = join(root, OUTPUT)
  mkdirSync(join(root, "packages/core/test/catalogues"), { recursive: true })
  writeFileSync(out, format(data))
  const published = publishedValues(config)
  mkdirSync(join(root, PUBLISHED, ".."), { recursive: true })
  writeFileSync(join(root, PUBLISHED), publishedModule(published, data.commit))
  const count = (key) => rules.reduce((n, r) => n + r[key].length, 0)
  return `${OUTPUT}: ${rules.length} rules, ${count("tps")} true samples, ${count("fps")} false samples, ${count("unbuilt")} not built\n` +
    `${PUBLISHED}: ${published.length} published values`
}
