/**
 * Reads enough of a shell line to tell what it does to the shell that runs
 * it: every simple command with its command word and arguments, whether it
 * runs in a subshell (`( )`, `$( )`, backticks, `<( )`), background jobs,
 * function definitions and assignments hidden in expansions. It follows
 * quotes, escapes, comments, substitutions, here-documents and `case`
 * patterns. What it cannot follow is reported as a `doubt`, so the caller
 * leaves the line alone. Plain code with no dependencies.
 *
 * @since 0.1.0
 */

/** A word: its text as written, and its value once quotes are removed (undefined when it holds an expansion). */
export interface Word {
  readonly raw: string
  readonly value: string | undefined
}

/** One simple command as it will run. */
export interface SimpleCommand {
  /** Leading `NAME=value` words. */
  readonly assignments: ReadonlyArray<Word>
  /** The command word, or undefined for assignments alone. */
  readonly name: Word | undefined
  readonly args: ReadonlyArray<Word>
  /** True inside `( )`, `$( )`, backticks or `<( )`: its effect ends with that subshell. */
  readonly subshell: boolean
  /** True when its stdin is redirected or comes from a pipe. */
  readonly stdinGiven: boolean
}

/** What a line holds. */
export interface Scan {
  readonly commands: ReadonlyArray<SimpleCommand>
  /** Why the line cannot be wrapped in a new shell (a job sent to the background, a function definition, ...). */
  readonly blockers: ReadonlyArray<string>
  /** Why the reading is unsure (unbalanced quotes, syntax it does not follow). */
  readonly doubts: ReadonlyArray<string>
  /** True when the line holds a substitution, a here-document or more than one command. */
  readonly compound: boolean
}

type Token =
  | { readonly t: "word"; readonly word: Word }
  | { readonly t: "op"; readonly op: string }
  | { readonly t: "redir"; readonly op: string }

interface Found {
  readonly commands: Array<SimpleCommand>
  readonly blockers: Array<string>
  readonly doubts: Array<string>
  compound: boolean
}

const META = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"])

/** `${name=...}`, `${name:=...}`: an expansion that assigns in the calling shell. */
const ASSIGNING_EXPANSION = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?:?=/

/** An arithmetic expression that assigns (`x=1`, `x+=1`, `x++`), not a comparison. */
const assignsArithmetic = (text: string): boolean => /\+\+|--|(^|[^=!<>])=(?!=)/.test(text)

class Lexer {
  i = 0
  readonly tokens: Array<Token> = []
  private readonly heredocs: Array<{ delimiter: string; strip: boolean }> = []

  constructor(
    readonly src: string,
    readonly found: Found,
    /** Depth of substitutions this lexer is nested in (bounded, so hostile input cannot exhaust the stack). */
    readonly depth: number
  ) {}

  doubt(why: string): void {
    this.found.doubts.push(why)
  }

  /** Reads tokens until the end, or until the `)` that closes a substitution when `closing`. Returns false on a doubt. */
  run(closing: boolean): boolean {
    const s = this.src
    let parens = 0
    while (this.i < s.length) {
      const c = s[this.i]!
      if (c === " " || c === "\t") {
        this.i++
      } else if (c === "\\" && s[this.i + 1] === "\n") {
        this.i += 2
      } else if (c === "#") {
        while (this.i < s.length && s[this.i] !== "\n") this.i++
      } else if (c === "\n") {
        this.i++
        this.tokens.push({ t: "op", op: "\n" })
        if (!this.readHeredocs()) return false
      } else if (c === ")" && closing && parens === 0) {
        return true
      } else if (META.has(c)) {
        const op = this.operator()
        if (op === undefined) return false
        if (op === "(") parens++
        if (op === ")") parens--
      } else {
        const word = this.word()
        if (word === undefined) return false
        // `2>file`, `{fd}>file`: the word names a descriptor of the redirection that follows
        const next = s[this.i]
        if ((next === "<" || next === ">") && (/^\d+$/.test(word.raw) || /^\{[A-Za-z_]\w*\}$/.test(word.raw))) continue
        this.tokens.push({ t: "word", word })
      }
    }
    if (closing) this.doubt("a substitution is not closed")
    else if (this.heredocs.length > 0) this.readHeredocs()
    return !closing
  }

  /** Skips the bodies of the here-documents the line just ended started. */
  private readHeredocs(): boolean {
    const s = this.src
    while (this.heredocs.length > 0) {
      const { delimiter, strip } = this.heredocs.shift()!
      for (;;) {
        if (this.i >= s.length) return true
        const end = s.indexOf("\n", this.i)
        const line = s.slice(this.i, end === -1 ? s.length : end)
        this.i = end === -1 ? s.length : end + 1
        if ((strip ? line.replace(/^\t+/, "") : line) === delimiter) break
      }
    }
    return true
  }

  private operator(): string | undefined {
    const s = this.src
    const three = s.slice(this.i, this.i + 3)
    const two = s.slice(this.i, this.i + 2)
    const c = s[this.i]!
    if ((c === "<" || c === ">") && s[this.i + 1] === "(") {
      // a process substitution is part of a word
      const word = this.word()
      if (word === undefined) return undefined
      this.tokens.push({ t: "word", word })
      return "word"
    }
    for (const op of [";;&", "&>>", "<<<", "<<-"]) {
      if (three === op) return this.emit(op, 3)
    }
    for (const op of ["&&", "||", ";;", ";&", "|&", "&>", "<<", "<&", "<>", ">>", ">&", ">|"]) {
      if (two === op) return this.emit(op, 2)
    }
    return this.emit(c, 1)
  }

  private emit(op: string, length: number): string | undefined {
    this.i += length
    const redirection = op.startsWith("<") || op.startsWith(">") || op === "&>" || op === "&>>"
    this.tokens.push(redirection ? { t: "redir", op } : { t: "op", op })
    if (op === "<<" || op === "<<-") {
      while (this.src[this.i] === " " || this.src[this.i] === "\t") this.i++
      const start = this.i
      const word = this.word()
      if (word === undefined || this.i === start) {
        this.doubt("a here-document has no delimiter")
        return undefined
      }
      // the delimiter is the word with its quotes removed
      const delimiter = word.raw.replace(/\\(.)/g, "$1").replace(/["']/g, "")
      this.heredocs.push({ delimiter, strip: op === "<<-" })
      this.tokens.push({ t: "word", word })
      this.found.compound = true
    }
    return op
  }

  /** Reads one word; its value is undefined when it holds an expansion. */
  private word(): Word | undefined {
    const s = this.src
    const start = this.i
    let value: string | undefined = ""
    const expand = () => {
      value = undefined
    }
    const add = (text: string) => {
      if (value !== undefined) value += text
    }
    while (this.i < s.length) {
      const c = s[this.i]!
      if ((c === "<" || c === ">") && s[this.i + 1] === "(" && this.i === start) {
        this.i += 2
        if (!this.nested()) return undefined
        expand()
        continue
      }
      if (META.has(c)) break
      if (c === "\\") {
        if (s[this.i + 1] === "\n") this.i += 2
        else {
          add(s[this.i + 1] ?? "")
          this.i += 2
        }
      } else if (c === "'") {
        const end = s.indexOf("'", this.i + 1)
        if (end === -1) return this.fail("a single quote is not closed")
        add(s.slice(this.i + 1, end))
        this.i = end + 1
      } else if (c === "\"") {
        this.i++
        const inner = this.doubleQuoted()
        if (inner === undefined) return undefined
        if (inner === null) expand()
        else add(inner)
      } else if (c === "$") {
        if (s[this.i + 1] === "'") {
          // $'...': backslash escapes, read but not decoded
          let j = this.i + 2
          while (j < s.length && s[j] !== "'") j += s[j] === "\\" ? 2 : 1
          if (j >= s.length) return this.fail("a $'...' quote is not closed")
          this.i = j + 1
          expand()
        } else if (s[this.i + 1] === "\"") {
          this.i += 2
          if (this.doubleQuoted() === undefined) return undefined
          expand()
        } else {
          if (!this.dollar()) return undefined
          expand()
        }
      } else if (c === "`") {
        if (!this.backquoted()) return undefined
        expand()
      } else {
        add(c)
        this.i++
      }
    }
    return { raw: s.slice(start, this.i), value }
  }

  private fail(why: string): undefined {
    this.doubt(why)
    return undefined
  }

  /** After an opening `"`: its text, null when it holds an expansion, undefined on a doubt. */
  private doubleQuoted(): string | null | undefined {
    const s = this.src
    let text: string | null = ""
    while (this.i < s.length) {
      const c = s[this.i]!
      if (c === "\"") {
        this.i++
        return text
      }
      if (c === "\\") {
        const n = s[this.i + 1] ?? ""
        if (text !== null) text += "$`\"\\\n".includes(n) ? (n === "\n" ? "" : n) : c + n
        this.i += 2
      } else if (c === "$") {
        if (!this.dollar()) return undefined
        text = null
      } else if (c === "`") {
        if (!this.backquoted()) return undefined
        text = null
      } else {
        if (text !== null) text += c
        this.i++
      }
    }
    return this.fail("a double quote is not closed")
  }

  /** At a `$`: skips the expansion (parameter, arithmetic or command substitution). */
  private dollar(): boolean {
    const s = this.src
    const n = s[this.i + 1]
    if (n === "(" && s[this.i + 2] === "(") {
      const end = this.balanced(this.i + 1, "(", ")")
      if (end === -1) return this.fail("an arithmetic expansion is not closed") ?? false
      if (assignsArithmetic(s.slice(this.i + 3, end - 1))) this.found.blockers.push("an arithmetic expansion assigns a variable")
      this.i = end + 1
      return true
    }
    if (n === "(") {
      this.i += 2
      return this.nested()
    }
    if (n === "{") {
      const end = this.balanced(this.i + 1, "{", "}")
      if (end === -1) return this.fail("a ${...} expansion is not closed") ?? false
      if (ASSIGNING_EXPANSION.test(s.slice(this.i + 2, end))) this.found.blockers.push("a ${name:=value} expansion assigns a variable")
      this.i = end + 1
      return true
    }
    this.i++
    if (n !== undefined && /[A-Za-z_]/.test(n)) {
      while (this.i < s.length && /[A-Za-z0-9_]/.test(s[this.i]!)) this.i++
    } else if (n !== undefined && /[0-9@*#?$!-]/.test(n)) {
      this.i++
    }
    return true
  }

  /** The index of the close matching the open at `from`, skipping quoted text; -1 when there is none. */
  private balanced(from: number, open: string, close: string): number {
    const s = this.src
    let depth = 0
    for (let j = from; j < s.length; j++) {
      const c = s[j]!
      if (c === "\\") j++
      else if (c === "'" && open === "{") {
        const end = s.indexOf("'", j + 1)
        if (end === -1) return -1
        j = end
      } else if (c === open) depth++
      else if (c === close && --depth === 0) return j
    }
    return -1
  }

  /** At a backquote: reads the command inside as a subshell. */
  private backquoted(): boolean {
    const s = this.src
    let j = this.i + 1
    let inner = ""
    while (j < s.length && s[j] !== "`") {
      if (s[j] === "\\" && j + 1 < s.length) {
        inner += "$`\\".includes(s[j + 1]!) ? s[j + 1] : s[j]! + s[j + 1]!
        j += 2
      } else inner += s[j++]
    }
    if (j >= s.length) return this.fail("a backquote is not closed") ?? false
    this.i = j + 1
    this.found.compound = true
    return scanInto(inner, this.found, this.depth + 1, true)
  }

  /** After `$(` or `<(`: reads the command up to its `)` as a subshell. */
  private nested(): boolean {
    if (this.depth >= MAX_DEPTH) return this.fail("substitutions are nested too deeply") ?? false
    this.found.compound = true
    const inner = new Lexer(this.src, this.found, this.depth + 1)
    inner.i = this.i
    if (!inner.run(true)) return false
    this.i = inner.i + 1
    return parse(inner.tokens, this.found, true)
  }
}

/** Deepest nesting of substitutions read. */
const MAX_DEPTH = 32

const scanInto = (src: string, found: Found, depth: number, subshell: boolean): boolean => {
  if (depth > MAX_DEPTH) {
    found.doubts.push("substitutions are nested too deeply")
    return false
  }
  const lexer = new Lexer(src, found, depth)
  if (!lexer.run(false)) return false
  return parse(lexer.tokens, found, subshell)
}

/** Reserved words after which a command word follows. */
const LEADING = new Set(["!", "{", "then", "do", "else", "elif", "if", "while", "until", "time"])
/** Reserved words that end a compound command. */
const CLOSING = new Set(["}", "fi", "done", "esac"])

const isAssignment = (w: Word): boolean => /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(w.raw)

/** Groups tokens into simple commands; false on a doubt. */
const parse = (tokens: ReadonlyArray<Token>, found: Found, subshell: boolean): boolean => {
  let depth = 0
  let atStart = true
  let assignments: Array<Word> = []
  let name: Word | undefined
  let args: Array<Word> = []
  let stdinGiven = false
  let piped = false
  /** `case` state: 0 none, 1 subject next, 2 `in` next, 3 in patterns. */
  const cases: Array<number> = []
  let skipUntil: string | undefined

  const end = () => {
    if (name !== undefined || assignments.length > 0) {
      found.commands.push({ assignments, name, args, subshell: subshell || depth > 0, stdinGiven: stdinGiven || piped })
    }
    assignments = []
    name = undefined
    args = []
    stdinGiven = false
    piped = false
    atStart = true
  }

  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k]!
    // a `for` header up to its `do`, a `[[ ]]` test: nothing in them runs as a command
    if (skipUntil !== undefined) {
      if (tok.t === "word" && tok.word.value === skipUntil) {
        atStart = skipUntil === "do"
        skipUntil = undefined
      }
      continue
    }
    const caseState = cases.length > 0 ? cases[cases.length - 1]! : 0
    if (tok.t === "redir") {
      const target = tokens[k + 1]
      if (target === undefined || target.t !== "word") {
        found.doubts.push(`a ${tok.op} redirection has no target`)
        return false
      }
      if (tok.op.startsWith("<")) stdinGiven = true
      k++
      continue
    }
    if (tok.t === "op") {
      const op = tok.op
      if (caseState === 3 && op === ")") {
        atStart = true
        cases[cases.length - 1] = 4
        continue
      }
      if (caseState === 3 && (op === "(" || op === "|" || op === "\n")) continue
      if (op === ";;" || op === ";&" || op === ";;&") {
        end()
        if (cases.length > 0) cases[cases.length - 1] = 3
        continue
      }
      if (op === "&") {
        found.blockers.push("it sends a job to the background (&)")
        end()
        continue
      }
      if (op === "(") {
        if (name !== undefined && args.length === 0 && tokens[k + 1]?.t === "op" && (tokens[k + 1] as { op: string }).op === ")") {
          found.blockers.push("it defines a function")
          return true
        }
        if (!atStart || name !== undefined || assignments.length > 0) {
          found.doubts.push("a ( where a command cannot start")
          return false
        }
        if (tokens[k + 1]?.t === "op" && (tokens[k + 1] as { op: string }).op === "(") {
          found.blockers.push("an arithmetic command (( )) may assign a variable")
          return true
        }
        depth++
        found.compound = true
        continue
      }
      if (op === ")") {
        if (depth === 0) {
          found.doubts.push("a ) without its (")
          return false
        }
        end()
        depth--
        atStart = false
        continue
      }
      // ; && || | |& and newlines end a simple command
      const wasPipe = op === "|" || op === "|&"
      end()
      piped = wasPipe
      continue
    }
    const w = tok.word
    if (caseState === 1) {
      cases[cases.length - 1] = 2
      continue
    }
    if (caseState === 2) {
      if (w.value !== "in") {
        found.doubts.push("a case without in")
        return false
      }
      cases[cases.length - 1] = 3
      continue
    }
    if (caseState === 3) {
      if (w.value === "esac") {
        cases.pop()
        atStart = false
      }
      continue
    }
    if (atStart && name === undefined) {
      if (isAssignment(w)) {
        assignments.push(w)
        continue
      }
      if (w.value !== undefined && assignments.length === 0) {
        if (LEADING.has(w.value)) continue
        if (CLOSING.has(w.value)) {
          if (w.value === "esac" && cases.length > 0) cases.pop()
          end()
          atStart = false
          continue
        }
        if (w.value === "case") {
          cases.push(1)
          found.compound = true
          continue
        }
        if (w.value === "for" || w.value === "select") {
          skipUntil = "do"
          found.compound = true
          continue
        }
        if (w.value === "[[") {
          skipUntil = "]]"
          continue
        }
        if (w.value === "function") {
          found.blockers.push("it defines a function")
          return true
        }
        if (w.value === "coproc") {
          found.blockers.push("it starts a coprocess in the background")
          return true
        }
      }
      name = w
      atStart = false
      continue
    }
    args.push(w)
  }
  end()
  if (depth !== 0) {
    found.doubts.push("a ( is not closed")
    return false
  }
  if (skipUntil !== undefined || cases.length > 0) {
    found.doubts.push("a compound command is not closed")
    return false
  }
  return true
}

/** Reads a shell line (see the module's comment). */
export const scan = (line: string): Scan => {
  const found: Found = { commands: [], blockers: [], doubts: [], compound: false }
  scanInto(line, found, 0, false)
  if (found.commands.length > 1) found.compound = true
  return found
}
