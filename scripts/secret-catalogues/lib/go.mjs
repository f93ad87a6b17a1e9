// A small reader and evaluator for the Go that secret scanners write their
// rule catalogues in: string literals (raw and interpreted), `+`, composite
// literals (`[]string{...}`, `map[string]string{...}`, structs), calls,
// local variables, `append`, `for ... range` over slices and maps, and
// package-level `var`/`const`. What it cannot evaluate becomes an unknown
// value that carries the reason, so a caller can report it instead of
// guessing. Library calls are supplied by the caller as builtins.

const OPERATORS = [
  "<<=", ">>=", "&^=", "...", "&&", "||", "<-", "++", "--", "==", "!=", "<=", ">=", ":=", "+=", "-=", "*=", "/=", "%=",
  "&=", "|=", "^=", "<<", ">>", "&^"
]

/** A value the evaluator could not compute, with the reason. */
export const unknown = (reason) => ({ unknown: reason })
export const isUnknown = (v) => v !== null && typeof v === "object" && "unknown" in v

const unescape = (body, line) => {
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c !== "\\") {
      out += c
      continue
    }
    const n = body[++i]
    const simple = { n: "\n", t: "\t", r: "\r", "\\": "\\", "\"": "\"", "'": "'", a: "\x07", b: "\b", f: "\f", v: "\v" }
    if (n in simple) out += simple[n]
    else if (n === "x") {
      out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16))
      i += 2
    } else if (n === "u" || n === "U") {
      const len = n === "u" ? 4 : 8
      out += String.fromCodePoint(parseInt(body.slice(i + 1, i + 1 + len), 16))
      i += len
    } else if (n >= "0" && n <= "7") {
      out += String.fromCharCode(parseInt(body.slice(i, i + 3), 8))
      i += 2
    } else throw new Error(`line ${line}: unknown escape \\${n}`)
  }
  return out
}

/** Splits Go source into tokens, inserting semicolons where Go's grammar does. */
export const lex = (src) => {
  const tokens = []
  let line = 1
  const needsSemicolon = () => {
    const last = tokens[tokens.length - 1]
    if (last === undefined) return false
    if (last.k === "id") return !["break", "continue", "fallthrough", "return"].includes(last.v) ? !isKeyword(last.v) : true
    if (last.k === "str" || last.k === "num" || last.k === "chr") return true
    return last.k === "op" && [")", "]", "}", "++", "--"].includes(last.v)
  }
  const newline = () => {
    if (needsSemicolon()) tokens.push({ k: ";", v: ";", line })
    line++
  }
  let i = 0
  while (i < src.length) {
    const c = src[i]
    if (c === "\n") {
      newline()
      i++
    } else if (c === " " || c === "\t" || c === "\r") i++
    else if (src.startsWith("//", i)) {
      while (i < src.length && src[i] !== "\n") i++
    } else if (src.startsWith("/*", i)) {
      const end = src.indexOf("*/", i + 2)
      const text = src.slice(i, end)
      for (const ch of text) if (ch === "\n") newline()
      i = end + 2
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i, i + 200))[0]
      tokens.push({ k: "id", v: m, line })
      i += m.length
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1]))) {
      const m = /^[0-9.][0-9A-Za-z_.]*/.exec(src.slice(i, i + 100))[0]
      tokens.push({ k: "num", v: m, line })
      i += m.length
    } else if (c === "`") {
      const end = src.indexOf("`", i + 1)
      const body = src.slice(i + 1, end)
      tokens.push({ k: "str", v: body.replace(/\r/g, ""), line })
      for (const ch of body) if (ch === "\n") line++
      i = end + 1
    } else if (c === "\"" || c === "'") {
      let j = i + 1
      while (src[j] !== c) j += src[j] === "\\" ? 2 : 1
      const v = unescape(src.slice(i + 1, j), line)
      tokens.push({ k: c === "\"" ? "str" : "chr", v, line })
      i = j + 1
    } else {
      const op = OPERATORS.find((o) => src.startsWith(o, i)) ?? c
      tokens.push({ k: "op", v: op, line })
      i += op.length
    }
  }
  newline()
  return tokens
}

const KEYWORDS = new Set([
  "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func", "go", "goto",
  "if", "import", "interface", "map", "package", "range", "return", "select", "struct", "switch", "type", "var"
])
const isKeyword = (v) => KEYWORDS.has(v)

/** A cursor over tokens that builds expression trees and runs statements. */
class Parser {
  constructor(tokens, start = 0, end = tokens.length) {
    this.t = tokens
    this.i = start
    this.end = end
  }
  peek(o = 0) {
    return this.i + o < this.end ? this.t[this.i + o] : { k: "eof", v: "", line: -1 }
  }
  is(v, o = 0) {
    const t = this.peek(o)
    return (t.k === "op" || t.k === "id" || t.k === ";") && t.v === v
  }
  next() {
    return this.t[this.i++]
  }
  expect(v) {
    const t = this.next()
    if (t === undefined || t.v !== v) throw new Error(`line ${t?.line}: expected ${v}, found ${t?.v}`)
    return t
  }
  /** Skips a bracketed group starting at the current opening bracket. */
  skipGroup() {
    let depth = 0
    do {
      const t = this.next()
      if (t.k === "op" && "([{".includes(t.v)) depth++
      else if (t.k === "op" && ")]}".includes(t.v)) depth--
    } while (depth > 0 && this.i < this.end)
  }
  /** Reads a type and returns its text. */
  type() {
    const t = this.peek()
    if (this.is("[")) {
      this.next()
      let size = ""
      while (!this.is("]")) size += this.next().v
      this.next()
      return `[${size}]${this.type()}`
    }
    if (this.is("map")) {
      this.next()
      this.expect("[")
      const key = this.type()
      this.expect("]")
      return `map[${key}]${this.type()}`
    }
    if (this.is("*")) {
      this.next()
      return `*${this.type()}`
    }
    if (this.is("func") || this.is("struct") || this.is("interface")) {
      const word = this.next().v
      while (!this.is("{") && !this.is(";") && !this.is(")") && !this.is(",")) {
        if (this.is("(")) this.skipGroup()
        else this.next()
      }
      if (this.is("{") && word !== "func") this.skipGroup()
      return word
    }
    if (t.k !== "id") throw new Error(`line ${t.line}: expected a type, found ${t.v}`)
    let name = this.next().v
    if (this.is(".") && this.peek(1).k === "id") {
      this.next()
      name += "." + this.next().v
    }
    return name
  }
  expr(noBrace = false) {
    return this.binary(0, noBrace)
  }
  binary(minPrec, noBrace) {
    const prec = { "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4, "|": 4, "^": 4, "*": 5, "/": 5, "%": 5, "<<": 5, ">>": 5, "&": 5, "&^": 5 }
    let left = this.unary(noBrace)
    for (;;) {
      const t = this.peek()
      const p = t.k === "op" ? prec[t.v] : undefined
      if (p === undefined || p <= minPrec) return left
      this.next()
      const right = this.binary(p, noBrace)
      left = { t: "bin", op: t.v, l: left, r: right, line: t.line }
    }
  }
  unary(noBrace) {
    if (this.is("&")) {
      this.next()
      return this.unary(noBrace)
    }
    if (this.is("-") || this.is("!") || this.is("*") || this.is("^")) {
      const op = this.next()
      return { t: "unary", op: op.v, x: this.unary(noBrace), line: op.line }
    }
    return this.postfix(this.primary(), noBrace)
  }
  primary() {
    const t = this.peek()
    if (t.k === "str" || t.k === "num" || t.k === "chr") {
      this.next()
      return { t: t.k, v: t.v, line: t.line }
    }
    if (this.is("(")) {
      this.next()
      const x = this.expr()
      this.expect(")")
      return x
    }
    if (this.is("func")) {
      this.next()
      this.skipGroup()
      while (!this.is("{")) this.next()
      this.skipGroup()
      return { t: "unknown", reason: "a function literal", line: t.line }
    }
    if (this.is("[") || this.is("map")) {
      const type = this.type()
      if (this.is("{")) return this.composite(type, t.line)
      if (this.is("(")) {
        this.next()
        const x = this.expr()
        this.expect(")")
        return { t: "conv", type, x, line: t.line }
      }
      return { t: "type", type, line: t.line }
    }
    if (t.k === "id") {
      this.next()
      return { t: "ident", name: t.v, line: t.line }
    }
    throw new Error(`line ${t.line}: unexpected ${t.v}`)
  }
  postfix(x, noBrace) {
    for (;;) {
      if (this.is(".") && this.peek(1).k === "id") {
        this.next()
        x = { t: "sel", x, name: this.next().v, line: x.line }
      } else if (this.is(".") && this.peek(1).v === "(") {
        this.next()
        this.skipGroup()
        x = { t: "unknown", reason: "a type assertion", line: x.line }
      } else if (this.is("(")) {
        this.next()
        const args = []
        let spread = false
        while (!this.is(")")) {
          while (this.is(";")) this.next()
          if (this.is(")")) break
          args.push(this.expr())
          if (this.is("...")) {
            this.next()
            spread = true
          }
          while (this.is(";")) this.next()
          if (this.is(",")) this.next()
        }
        this.next()
        x = { t: "call", fn: x, args, spread, line: x.line }
      } else if (this.is("[")) {
        this.next()
        const index = this.is(":") ? undefined : this.expr()
        if (this.is(":")) {
          this.next()
          const high = this.is("]") ? undefined : this.expr()
          this.expect("]")
          x = { t: "slice", x, low: index, high, line: x.line }
        } else {
          this.expect("]")
          x = { t: "index", x, index, line: x.line }
        }
      } else if (this.is("{") && !noBrace && (x.t === "ident" || x.t === "sel")) {
        x = this.composite(nameOf(x), x.line)
      } else return x
    }
  }
  composite(type, line) {
    this.expect("{")
    const elems = []
    while (!this.is("}")) {
      if (this.is(";") || this.is(",")) {
        this.next()
        continue
      }
      let first = this.is("{") ? this.composite("", this.peek().line) : this.expr()
      if (this.is(":")) {
        this.next()
        const value = this.is("{") ? this.composite("", this.peek().line) : this.expr()
        elems.push({ key: first, value })
      } else elems.push({ value: first })
      first = undefined
    }
    this.next()
    return { t: "comp", type, elems, line }
  }
}

const nameOf = (x) => (x.t === "ident" ? x.name : `${nameOf(x.x)}.${x.name}`)

/** The declarations of a package: its functions (token ranges) and package-level variables and constants (expressions). */
export const parsePackage = (sources) => {
  const funcs = new Map()
  const vars = new Map()
  const imports = new Map()
  for (const { file, src } of sources) {
    const tokens = lex(src)
    const p = new Parser(tokens)
    while (p.i < p.end) {
      const t = p.next()
      if (t.k === ";") continue
      if (t.v === "package") {
        p.next()
      } else if (t.v === "import") {
        const one = () => {
          const alias = p.peek().k === "id" || p.is(".") ? p.next().v : undefined
          const path = p.next().v
          imports.set(`${file}:${alias ?? path.split("/").pop()}`, path)
        }
        if (p.is("(")) {
          p.next()
          while (!p.is(")")) {
            if (p.is(";")) p.next()
            else one()
          }
          p.next()
        } else one()
      } else if (t.v === "func") {
        if (p.is("(")) p.skipGroup() // a method's receiver
        const name = p.next().v
        const params = []
        p.expect("(")
        while (!p.is(")")) {
          const id = p.next()
          if (id.k === "id" && (p.is(",") || p.peek().k === "id" || p.is("[") || p.is("*") || p.is("..."))) {
            params.push(id.v)
            if (!p.is(",")) {
              if (p.is("...")) p.next()
              p.type()
            }
          }
          if (p.is(",")) p.next()
        }
        p.next()
        while (!p.is("{")) {
          if (p.is("(")) p.skipGroup()
          else p.next()
        }
        const start = p.i
        p.skipGroup()
        funcs.set(name, { file, params, tokens, start: start + 1, end: p.i - 1 })
      } else if (t.v === "var" || t.v === "const") {
        const one = () => {
          const names = [p.next().v]
          while (p.is(",")) {
            p.next()
            names.push(p.next().v)
          }
          if (!p.is("=")) p.type()
          if (p.is("=")) {
            p.next()
            const x = p.expr()
            for (const n of names) vars.set(n, { file, x })
          }
        }
        if (p.is("(")) {
          p.next()
          while (!p.is(")")) {
            if (p.is(";")) p.next()
            else one()
          }
          p.next()
        } else one()
      } else if (t.v === "type") {
        while (!p.is(";") && !p.is("{")) {
          if (p.is("(")) p.skipGroup()
          else p.next()
        }
        if (p.is("{")) p.skipGroup()
      }
    }
  }
  return { funcs, vars, imports }
}

class Return {
  constructor(value) {
    this.value = value
  }
}

/**
 * Evaluates functions of a parsed package. `builtins` maps a qualified name
 * (`fmt.Sprintf`, `base64.StdEncoding.EncodeToString`: the import path's last
 * element, then the names; `append`; or a
 * package function's own name to replace it) to a JS function of the
 * evaluated arguments and a context `{ func, line }`.
 */
export class Evaluator {
  constructor(pkg, builtins) {
    this.pkg = pkg
    this.builtins = builtins
    this.globals = new Map()
    this.depth = 0
  }
  global(name) {
    if (this.globals.has(name)) return this.globals.get(name)
    const decl = this.pkg.vars.get(name)
    if (decl === undefined) return undefined
    this.globals.set(name, unknown(`${name} refers to itself`))
    const value = this.eval(decl.x, new Map(), { func: name, file: decl.file })
    this.globals.set(name, value)
    return value
  }
  /** Calls a package function by name with evaluated arguments. */
  call(name, args = [], ctx = {}) {
    const own = this.builtins[name]
    if (own !== undefined) return own(args, { ...ctx, func: ctx.func ?? name })
    const fn = this.pkg.funcs.get(name)
    if (fn === undefined) return unknown(`no function ${name}`)
    if (++this.depth > 20) return unknown(`calls nest too deep at ${name}`)
    try {
      const scope = new Map(fn.params.map((p, i) => [p, args[i]]))
      const result = this.block(new Parser(fn.tokens, fn.start, fn.end), scope, { func: ctx.func ?? name, file: fn.file })
      /** The variables of the function last returned from, for a caller that wants more than its result. */
      this.lastScope = scope
      return result instanceof Return ? result.value : unknown(`${name} returns nothing`)
    } finally {
      this.depth--
    }
  }
  block(p, scope, ctx) {
    while (p.i < p.end) {
      if (p.is(";")) {
        p.next()
        continue
      }
      const result = this.statement(p, scope, ctx)
      if (result instanceof Return) return result
    }
    return undefined
  }
  /** Skips a statement this evaluator does not run; every variable it assigns becomes unknown. */
  skip(p, scope, reason) {
    let depth = 0
    while (p.i < p.end) {
      const t = p.next()
      if (t.k === "op" && "([{".includes(t.v)) depth++
      else if (t.k === "op" && ")]}".includes(t.v)) depth--
      else if (t.k === "id" && p.peek().k === "op" && ["=", ":=", "+="].includes(p.peek().v)) scope.set(t.v, unknown(reason))
      if (depth === 0 && (p.is(";") || p.i >= p.end)) {
        // an `if` block may go on with `else`
        if (p.is(";") && p.peek(1).v === "else") {
          p.next()
          continue
        }
        return
      }
    }
  }
  statement(p, scope, ctx) {
    const t = p.peek()
    const line = t.line
    if (t.v === "return") {
      p.next()
      return new Return(p.is(";") || p.i >= p.end ? undefined : this.eval(p.expr(), scope, ctx))
    }
    if (t.v === "var" || t.v === "const") {
      p.next()
      const spec = () => {
        const names = [p.next().v]
        while (p.is(",")) {
          p.next()
          names.push(p.next().v)
        }
        if (!p.is("=")) p.type()
        const values = []
        if (p.is("=")) {
          p.next()
          values.push(this.eval(p.expr(), scope, ctx))
          while (p.is(",")) {
            p.next()
            values.push(this.eval(p.expr(), scope, ctx))
          }
        }
        names.forEach((name, i) => scope.set(name, values.length === 0 ? undefined : values.length === names.length ? values[i] : unknown(`line ${line}: a call with several results`)))
      }
      if (p.is("(")) {
        p.next()
        while (!p.is(")")) {
          if (p.is(";")) p.next()
          else spec()
        }
        p.next()
      } else spec()
      return undefined
    }
    if (t.v === "for" && p.peek(1).k === "id" && (p.peek(2).v === "," || p.peek(2).v === ":=")) {
      const save = p.i
      p.next()
      const key = p.next().v
      let value
      if (p.is(",")) {
        p.next()
        value = p.next().v
      }
      if (p.is(":=") && p.is("range", 1)) {
        p.next()
        p.next()
        const over = this.eval(p.expr(true), scope, ctx)
        const start = p.i + 1
        p.skipGroup()
        const end = p.i - 1
        const entries = Array.isArray(over) ? over.map((v, i) => [i, v]) : over?.map
        if (entries === undefined) {
          p.i = start - 1
          this.skip(p, scope, `line ${line}: a range over ${isUnknown(over) ? over.unknown : "a value that is not a slice or a map"}`)
          return undefined
        }
        for (const [k, v] of entries) {
          const inner = new Map(scope)
          if (key !== "_") inner.set(key, k)
          if (value !== undefined && value !== "_") inner.set(value, v)
          const result = this.block(new Parser(p.t, start, end), inner, ctx)
          for (const [name, v2] of inner) if (scope.has(name) && name !== key && name !== value) scope.set(name, v2)
          if (result instanceof Return) return result
        }
        return undefined
      }
      p.i = save
    }
    if (isKeyword(t.v) && !["func", "map", "struct", "interface", "chan"].includes(t.v)) {
      this.skip(p, scope, `line ${line}: a ${t.v} statement, which this reader does not run`)
      return undefined
    }
    const save = p.i
    const targets = []
    try {
      const first = p.expr()
      targets.push(first)
      while (p.is(",")) {
        p.next()
        targets.push(p.expr())
      }
    } catch {
      p.i = save
      this.skip(p, scope, `line ${line}: a statement this reader cannot parse`)
      return undefined
    }
    if (p.is(":=") || p.is("=") || p.is("+=")) {
      const op = p.next().v
      const values = [this.eval(p.expr(), scope, ctx)]
      while (p.is(",")) {
        p.next()
        values.push(this.eval(p.expr(), scope, ctx))
      }
      targets.forEach((target, index) => {
        if (target.t !== "ident" || target.name === "_") return
        const value = targets.length === values.length ? values[index] : unknown(`line ${line}: a call with several results`)
        scope.set(target.name, op === "+=" ? concat(scope.get(target.name), value) : value)
      })
      return undefined
    }
    if (p.is("++") || p.is("--")) p.next()
    else for (const target of targets) this.eval(target, scope, ctx)
    return undefined
  }
  eval(x, scope, ctx) {
    try {
      return this.evalNode(x, scope, ctx)
    } catch (error) {
      return unknown(`line ${x.line}: ${error.message}`)
    }
  }
  evalNode(x, scope, ctx) {
    switch (x.t) {
      case "str":
        return x.v
      case "chr":
        return x.v.codePointAt(0)
      case "num":
        return Number(x.v.replace(/_/g, ""))
      case "unknown":
        return unknown(`line ${x.line}: ${x.reason}`)
      case "ident": {
        if (scope.has(x.name)) return scope.get(x.name)
        if (x.name === "nil") return undefined
        if (x.name === "true" || x.name === "false") return x.name === "true"
        const g = this.global(x.name)
        if (g !== undefined) return g
        if (this.pkg.funcs.has(x.name) || x.name in this.builtins) return { fn: x.name }
        return unknown(`line ${x.line}: ${x.name} is not defined`)
      }
      case "sel": {
        const name = this.qualified(x, ctx)
        if (name !== undefined) return name in this.builtins ? { fn: name } : { ref: name }
        const base = this.eval(x.x, scope, ctx)
        if (base?.struct !== undefined) return base.fields[x.name]
        if (base?.methods?.[x.name] !== undefined) return { method: base.methods[x.name] }
        return unknown(`line ${x.line}: .${x.name} of a value this reader does not know`)
      }
      case "bin": {
        if (x.op !== "+") return unknown(`line ${x.line}: the operator ${x.op}`)
        return concat(this.eval(x.l, scope, ctx), this.eval(x.r, scope, ctx))
      }
      case "unary":
        return unknown(`line ${x.line}: the operator ${x.op}`)
      case "conv": {
        const v = this.eval(x.x, scope, ctx)
        return v
      }
      case "index": {
        const base = this.eval(x.x, scope, ctx)
        const index = this.eval(x.index, scope, ctx)
        if (Array.isArray(base) && typeof index === "number") return base[index]
        if (base?.map !== undefined) return base.map.find(([k]) => k === index)?.[1]
        return unknown(`line ${x.line}: an index into a value this reader does not know`)
      }
      case "type":
        return { type: x.type }
      case "slice":
        return unknown(`line ${x.line}: a slice expression`)
      case "comp":
        return this.composite(x, scope, ctx)
      case "call":
        return this.callNode(x, scope, ctx)
    }
    return unknown(`line ${x.line}: ${x.t}`)
  }
  /** `pkg.Name.Member` with `pkg` an import of the file, as `import/path.Name.Member`. */
  qualified(x, ctx) {
    const parts = []
    let node = x
    while (node.t === "sel") {
      parts.unshift(node.name)
      node = node.x
    }
    if (node.t !== "ident") return undefined
    const path = this.pkg.imports.get(`${ctx.file}:${node.name}`)
    return path === undefined ? undefined : [path.split("/").pop(), ...parts].join(".")
  }
  composite(x, scope, ctx) {
    const type = x.type
    if (type.startsWith("map[")) {
      return {
        map: x.elems.map((e) => {
          const value = e.value.t === "comp" && e.value.type === "" ? { ...e.value, type: type.replace(/^map\[[^\]]*\]/, "") } : e.value
          return [this.eval(e.key, scope, ctx), this.eval(value, scope, ctx)]
        })
      }
    }
    if (type.startsWith("[")) {
      const inner = type.replace(/^\[[^\]]*\]/, "")
      return x.elems.map((e) => this.eval(e.value.t === "comp" && e.value.type === "" ? { ...e.value, type: inner } : e.value, scope, ctx))
    }
    const fields = {}
    x.elems.forEach((e, index) => {
      const key = e.key === undefined ? String(index) : e.key.t === "ident" ? e.key.name : String(this.eval(e.key, scope, ctx))
      fields[key] = this.eval(e.value, scope, ctx)
    })
    return { struct: type, fields }
  }
  callNode(x, scope, ctx) {
    let args = x.args.map((a) => this.eval(a, scope, ctx))
    if (x.spread) {
      const last = args[args.length - 1]
      if (!Array.isArray(last)) return unknown(`line ${x.line}: spread of a value that is not a slice`)
      args = [...args.slice(0, -1), ...last]
    }
    const fn = this.eval(x.fn, scope, ctx)
    const c = { ...ctx, line: x.line }
    if (fn?.fn !== undefined) {
      for (const a of args) if (isUnknown(a) && !(this.builtins[fn.fn]?.tolerant ?? false)) return a
      return this.call(fn.fn, args, c)
    }
    if (fn?.method !== undefined) {
      for (const a of args) if (isUnknown(a)) return a
      return fn.method(args, c)
    }
    if (fn?.ref !== undefined) return unknown(`line ${x.line}: ${fn.ref} is not supported by this reader`)
    if (isUnknown(fn)) return fn
    return unknown(`line ${x.line}: a call of a value that is not a function`)
  }
}

/** Go's `+` on strings; unknown when either side is. */
export const concat = (a, b) => {
  if (isUnknown(a)) return a
  if (isUnknown(b)) return b
  if (typeof a === "string" && typeof b === "string") return a + b
  if (typeof a === "number" && typeof b === "number") return a + b
  return unknown("+ of values that are not both strings")
}
