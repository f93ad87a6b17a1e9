// Reads detect-secrets' plugins from a checkout of github.com/Yelp/detect-secrets
// (Apache-2.0): each plugin's test cases, the `@pytest.mark.parametrize`
// lists of (line, should_flag) in tests/plugins/<plugin>_test.py, evaluated by
// a small reader of Python literals (strings and their concatenation,
// `.format(...)`, `*` and slices of module constants, tuples, lists, booleans).
// A case that should flag is a true sample; its secret is the longest run of
// token characters in the line that is not a key (a URL's password for URLs
// with credentials), since detect-secrets' tests say whether a line is
// flagged, not where.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { commitOf, formatCatalogue } from "./lib/catalogue.mjs"

// ---- a reader of Python literals ----

const unknown = (reason) => ({ unknown: reason })
const isUnknown = (v) => v !== null && typeof v === "object" && "unknown" in v

const lex = (src) => {
  const tokens = []
  let i = 0
  let line = 1
  while (i < src.length) {
    const c = src[i]
    if (c === "\n") {
      line++
      i++
    } else if (c === " " || c === "\t" || c === "\r" || c === "\\") i++
    else if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++
    } else {
      const str = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(src.slice(i, i + 5))
      if (str !== null && (str[1] === "" || /^[a-zA-Z_]/.test(c))) {
        const prefix = str[1].toLowerCase()
        const quote = str[2]
        let j = i + str[0].length
        let body = ""
        while (j < src.length && !src.startsWith(quote, j)) {
          if (src[j] === "\\" && !prefix.includes("r")) {
            const n = src[j + 1]
            const simple = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", "\"": "\"", "\n": "" }
            if (n in simple) body += simple[n]
            else if (n === "x") {
              body += String.fromCharCode(parseInt(src.slice(j + 2, j + 4), 16))
              j += 2
            } else body += "\\" + n
            j += 2
          } else if (src[j] === "\\") {
            body += src[j] + src[j + 1]
            j += 2
          } else {
            if (src[j] === "\n") line++
            body += src[j++]
          }
        }
        tokens.push({ k: "str", v: body, f: prefix.includes("f"), line })
        i = j + quote.length
      } else if (/[A-Za-z_]/.test(c)) {
        const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))[0]
        tokens.push({ k: "id", v: m, line })
        i += m.length
      } else if (/[0-9]/.test(c)) {
        const m = /^[0-9]+/.exec(src.slice(i))[0]
        tokens.push({ k: "num", v: Number(m), line })
        i += m.length
      } else {
        tokens.push({ k: "op", v: c, line })
        i++
      }
    }
  }
  return tokens
}

/** Evaluates Python expressions over tokens, with module-level names in `names`. */
class Reader {
  constructor(tokens, names) {
    this.t = tokens
    this.i = 0
    this.names = names
  }
  peek(n = 0) {
    return this.t[this.i + n]
  }
  is(v) {
    return this.peek()?.v === v && this.peek()?.k === "op"
  }
  next() {
    return this.t[this.i++]
  }
  expect(v) {
    const t = this.next()
    if (t?.v !== v) throw new Error(`line ${t?.line}: expected ${v}, got ${t?.v}`)
  }
  /** A comma-separated list up to `close`, as values. */
  list(close) {
    const out = []
    while (!this.is(close)) {
      out.push(this.expr())
      if (this.is(",")) this.next()
    }
    this.next()
    return out
  }
  expr() {
    let v = this.term()
    for (;;) {
      if (this.is("+")) {
        this.next()
        const w = this.term()
        v = isUnknown(v) ? v : isUnknown(w) ? w : typeof v === typeof w ? v + w : unknown("+ of mixed values")
      } else if (this.is("%")) {
        this.next()
        const w = this.term()
        const args = Array.isArray(w) ? w : [w]
        let k = 0
        v = typeof v === "string" && !args.some(isUnknown) ? v.replace(/%[sdr]/g, () => String(args[k++])) : unknown("% of unknown values")
      } else return v
    }
  }
  term() {
    let v = this.atom()
    for (;;) {
      if (this.is("*")) {
        this.next()
        const n = this.atom()
        v = typeof v === "string" && typeof n === "number" ? v.repeat(n) : unknown("* of values that are not a string and a count")
      } else if (this.is("[")) {
        this.next()
        const a = this.is(":") ? 0 : this.expr()
        let b
        const slice = this.is(":")
        if (slice) {
          this.next()
          b = this.is("]") ? undefined : this.expr()
        }
        this.expect("]")
        if (typeof v === "string" || Array.isArray(v)) v = slice ? v.slice(a, b) : v[a < 0 ? v.length + a : a]
        else v = unknown("an index into an unknown value")
      } else if (this.is(".") && this.peek(1)?.v === "format") {
        this.next()
        this.next()
        this.expect("(")
        const args = []
        const named = {}
        while (!this.is(")")) {
          if (this.peek().k === "id" && this.peek(1)?.v === "=" && this.peek(2)?.v !== "=") {
            const key = this.next().v
            this.next()
            named[key] = this.expr()
          } else args.push(this.expr())
          if (this.is(",")) this.next()
        }
        this.next()
        let k = 0
        const all = [...args, ...Object.values(named)]
        v = typeof v !== "string" || all.some(isUnknown)
          ? unknown("format of unknown values")
          : v.replace(/\{\{|\}\}|\{([A-Za-z_0-9]*)(?::[^}]*)?\}/g, (m, name) =>
            m === "{{" ? "{" : m === "}}" ? "}" : String(name === "" ? args[k++] : /^[0-9]+$/.test(name) ? args[Number(name)] : named[name]))
      } else if (this.is(".") && this.peek(1)?.k === "id" && this.peek(2)?.v === "(") {
        // a method this reader does not run
        const name = this.peek(1).v
        this.next()
        this.next()
        this.next()
        this.list(")")
        v = unknown(`.${name}() is not evaluated`)
      } else return v
    }
  }
  atom() {
    const t = this.next()
    if (t === undefined) throw new Error("unexpected end")
    if (t.k === "str") {
      let s = t.f ? unknown("an f-string") : t.v
      while (this.peek()?.k === "str") {
        const u = this.next()
        s = isUnknown(s) || u.f ? unknown("an f-string") : s + u.v
      }
      return s
    }
    if (t.k === "num") return t.v
    if (t.k === "id") {
      if (t.v === "True") return true
      if (t.v === "False") return false
      if (t.v === "None") return null
      if (this.is("(")) {
        this.next()
        this.list(")")
        return unknown(`${t.v}() is not evaluated`)
      }
      let name = t.v
      while (this.is(".") && this.peek(1)?.k === "id" && this.peek(2)?.v !== "(" && this.peek(1).v !== "format") {
        this.next()
        name += "." + this.next().v
      }
      return this.names.has(name) ? this.names.get(name) : unknown(`${name} is not a constant of the test module`)
    }
    if (t.v === "(") {
      const items = this.list(")")
      return items.length === 1 && this.t[this.i - 2]?.v !== "," ? items[0] : items
    }
    if (t.v === "[") return this.list("]")
    if (t.v === "-") {
      const n = this.atom()
      return typeof n === "number" ? -n : unknown("- of a value that is not a number")
    }
    throw new Error(`line ${t.line}: unexpected ${t.v}`)
  }
}

/** The module's top-level `NAME = <expr>` constants and those of its classes (`self.x` is not read). */
const constants = (tokens) => {
  const names = new Map()
  for (let i = 0; i + 2 < tokens.length; i++) {
    const [a, b] = [tokens[i], tokens[i + 1]]
    if (a.k === "id" && /^[A-Z_][A-Z0-9_]*$/.test(a.v) && b.v === "=" && tokens[i + 2].v !== "=" && tokens[i - 1]?.v !== ".") {
      try {
        const r = new Reader(tokens, names)
        r.i = i + 2
        names.set(a.v, r.expr())
      } catch {
        names.set(a.v, unknown(`${a.v} cannot be read`))
      }
    }
  }
  return names
}

/** The evaluated parametrize lists of a test module: their parameter names and cases. */
const parametrized = (src) => {
  const tokens = lex(src)
  const names = constants(tokens)
  const out = []
  for (let i = 0; i + 4 < tokens.length; i++) {
    if (tokens[i].v !== "parametrize" || tokens[i - 1]?.v !== "." || tokens[i + 1].v !== "(") continue
    const r = new Reader(tokens, names)
    r.i = i + 2
    const params = r.expr()
    if (r.is(",")) r.next()
    let cases
    try {
      cases = r.expr()
    } catch (error) {
      cases = unknown(error.message)
    }
    out.push({ params: typeof params === "string" ? params.split(",").map((p) => p.trim()) : [], cases, line: tokens[i].line })
  }
  return out
}

// ---- samples ----

const bytes = (text) => Buffer.byteLength(text, "utf8")

/**
 * Where the secret of a flagged line is: a URL's password, or else the
 * longest run of token characters that is not a key (a run followed by
 * `:` or `=`, as `X-JFrog-Art-Api:` and `_authToken=` are) nor a URL's
 * host and path (of those, only the last path segment counts).
 */
const secretSpan = (line) => {
  const url = /[a-z][a-z0-9+.-]*:\/\/[^:/@\s'"]*:([^\s'"@]+)@/i.exec(line)
  if (url !== null) {
    const at = url.index + url[0].length - 1 - url[1].length
    return [bytes(line.slice(0, at)), bytes(line.slice(0, at + url[1].length))]
  }
  const runs = []
  for (const m of line.matchAll(/[A-Za-z0-9+/_.~-]+={0,2}/g)) {
    let text = m[0]
    let index = m.index
    if (text.startsWith("//")) {
      const segment = text.slice(text.lastIndexOf("/") + 1)
      if (segment.length === 0) continue
      index += text.length - segment.length
      text = segment
    }
    // a name before `:` or `=` (an address before its port is not one)
    const key = /[A-Za-z]/.test(text) && /^["']?[ \t]*[:=]/.test(line.slice(index + text.length))
    runs.push({ text, index, key })
  }
  const values = runs.some((r) => !r.key) ? runs.filter((r) => !r.key) : runs
  let best = null
  for (const r of values) if (best === null || r.text.length > best.text.length) best = r
  return best === null ? undefined : [bytes(line.slice(0, best.index)), bytes(line.slice(0, best.index + best.text.length))]
}

const readPlugin = (checkout, file) => {
  const rule = { id: file.replace(/_test\.py$/, ""), tps: [], fps: [], unbuilt: [] }
  const src = readFileSync(join(checkout, "tests/plugins", file), "utf8")
  for (const { cases, line, params } of parametrized(src)) {
    const lineAt = params.findIndex((p) => /^(?:payload|line|content|string)$/.test(p))
    const flagAt = params.findIndex((p) => /^should_(?:flag|be_caught)$/.test(p))
    const what = `line ${line} (${params.join(", ")})`
    if (lineAt < 0 || flagAt < 0) {
      rule.unbuilt.push({ what, reason: "not a list of (line, should_flag) cases: its cases are templates or verifier results, not lines" })
      continue
    }
    if (isUnknown(cases) || !Array.isArray(cases)) {
      rule.unbuilt.push({ what, reason: isUnknown(cases) ? cases.unknown : "its cases are not a list" })
      continue
    }
    cases.forEach((c, n) => {
      const text = c?.[lineAt]
      const flag = c?.[flagAt]
      const name = `${what} #${n}`
      if (typeof text !== "string" || typeof flag !== "boolean") {
        rule.unbuilt.push({ what: name, reason: isUnknown(text) ? text.unknown : "its line is not a string" })
        return
      }
      if (!flag) return rule.fps.push({ name, text })
      const span = secretSpan(text)
      if (span === undefined) rule.unbuilt.push({ what: name, reason: "no token in the flagged line" })
      else rule.tps.push({ name, text, spans: [span] })
    })
  }
  if (rule.tps.length + rule.fps.length + rule.unbuilt.length === 0) rule.unbuilt.push({ what: file, reason: "no parametrized cases" })
  return rule
}

/** Reads every plugin's tests from `checkout` and writes packages/core/test/catalogues/detect-secrets.json under `root`. */
export const generate = (checkout, root) => {
  const plugins = join(checkout, "tests/plugins")
  if (!existsSync(plugins)) throw new Error(`${plugins} does not exist: pass a checkout of detect-secrets`)
  const rules = readdirSync(plugins).filter((f) => f.endsWith("_test.py") && f !== "base_test.py").sort().map((f) => readPlugin(checkout, f))
  const dir = join(root, "packages/core/test/catalogues")
  mkdirSync(dir, { recursive: true })
  const path = join(dir, "detect-secrets.json")
  writeFileSync(path, formatCatalogue({
    source: "detect-secrets (https://github.com/Yelp/detect-secrets), Apache License 2.0, Copyright (c) 2018 Yelp, Inc.",
    commit: commitOf(checkout),
    generatedBy: "node scripts/secret-catalogues.mjs detect-secrets <checkout>",
    note: "Each plugin's @pytest.mark.parametrize cases of (line, should_flag) in tests/plugins/<plugin>_test.py: tps are lines that should flag (spans: a URL's password, or else the longest run of token characters that is not a key nor a URL's host and path), fps lines that should not.",
    rules
  }))
  return path
}
