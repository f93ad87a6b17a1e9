/**
 * The one rewrite an agent's shell command goes through before it runs:
 * `spillway run --stdin -- bash -c '<the command>'`, so the model sees a
 * bounded preview (with the end, the exit status, the failure lines and
 * the saved name) instead of whatever its host keeps. The command itself
 * runs unchanged: the same text, by bash, with the same stdin, its output
 * and exit status passed on as they are. A line whose effect is on the
 * calling shell, or that cannot be wrapped in a new one, passes through
 * with the reason. Plain code with no dependencies but Node's file system,
 * so the agent plugins bundle it too.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { scan, type SimpleCommand, type Word } from "./hooks/ShellScan.js"

/** What to do with a command: run this line instead, or leave it as it is (and why). */
export type Decision =
  | { readonly _tag: "Rewrite"; readonly command: string }
  | { readonly _tag: "PassThrough"; readonly reason: string }

/** Where the rewrite looks things up. */
export interface RewriteOptions {
  /** The environment: the escape hatch (`SPILLWAY_HOOK`) and `PATH`; `process.env` by default. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** How the rewritten line invokes the command; "spillway" by default. */
  readonly spillway?: string
}

/** Longest command rewritten, in UTF-8 bytes. */
export const MAX_COMMAND_BYTES = 64 * 1024

/**
 * Commands whose effect is on the shell that runs them. `exit` is not one: the
 * wrapped shell exits with the same status, and what runs after the line in the
 * agent's own shell sees that status as before.
 */
const SHELL_STATE = new Set([
  "cd", "pushd", "popd", "dirs", "export", "source", ".", "alias", "unalias", "set", "shopt", "unset", "declare",
  "typeset", "local", "readonly", "eval", "exec", "trap", "ulimit", "umask", "hash", "return", "logout",
  "let", "shift", "getopts", "mapfile", "readarray", "enable", "bind", "complete", "compopt", "fc", "history",
  "jobs", "fg", "wait", "suspend", "builtin", "setopt", "unsetopt", "autoload", "zmodload", "rehash", "emulate"
])

/** Commands that leave something running in the background. */
const BACKGROUND = new Set(["nohup", "disown", "setsid", "bg", "daemonize"])

/** Programs that take over a terminal: editors, pagers, monitors, multiplexers. */
const INTERACTIVE = new Set([
  "vi", "vim", "nvim", "view", "vimdiff", "nano", "pico", "emacs", "emacsclient", "joe", "micro", "hx", "helix", "kak",
  "mcedit", "ed", "less", "more", "most", "man", "info", "top", "htop", "btop", "atop", "iotop", "nmon", "watch",
  "tmux", "screen", "mc", "ranger", "nnn", "lf", "vifm", "fzf", "tig", "lazygit", "lazydocker", "k9s", "ncdu",
  "visudo", "vipe", "passwd", "su", "login", "telnet", "ftp", "nmtui", "whiptail", "dialog", "ipython", "bpython"
])

/** Interpreters and clients that open a prompt when given no arguments and no input. */
const REPLS = new Set([
  "python", "python2", "python3", "node", "deno", "bun", "irb", "ruby", "ghci", "R", "julia", "lua", "luajit", "php",
  "perl", "scala", "clj", "clojure", "erl", "iex", "ocaml", "guile", "racket", "sbcl", "swift", "bash", "sh", "zsh",
  "fish", "dash", "ksh", "csh", "tcsh", "sqlite3", "psql", "mysql", "mariadb", "mongo", "mongosh", "redis-cli",
  "bc", "dc", "gdb", "lldb", "pdb", "jshell", "kotlinc", "sftp", "cqlsh", "duckdb", "nc", "ncat", "openssl"
])

/** Shell builtins and keywords: they need no file on PATH. */
const BUILTINS = new Set([
  ":", "[", "test", "echo", "printf", "true", "false", "pwd", "read", "type", "command", "kill", "times", "caller",
  "help", "exit", "ulimit", "umask", "wait", "alias", "getopts", "let", "shift", "trap", ...SHELL_STATE
])

const off = (value: string | undefined): boolean => value !== undefined && /^(off|0|false|no)$/i.test(value.trim())

const utf8Bytes = (text: string, stopAt: number): number => {
  let n = 0
  for (let i = 0; i < text.length && n <= stopAt; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** Quotes a word for bash, zsh and sh alike: single quotes, each inner one as '\''. */
export const quote = (word: string): string => /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`

/** The file a bare name runs, found on PATH as a shell would, or undefined. */
const onPath = (name: string, path: string | undefined, cache: Map<string, boolean>): boolean => {
  const known = cache.get(name)
  if (known !== undefined) return known
  let found = false
  for (const dir of (path ?? "").split(":")) {
    try {
      const file = Path.join(dir === "" ? "." : dir, name)
      if (Fs.statSync(file).isFile()) {
        Fs.accessSync(file, Fs.constants.X_OK)
        found = true
        break
      }
    } catch {
      // not here
    }
  }
  cache.set(name, found)
  return found
}

const has = (args: ReadonlyArray<Word>, test: (arg: string) => boolean): boolean => args.some((a) => a.value !== undefined && test(a.value))

/** Why a program with these arguments would wait for a person, or undefined. */
const waitsForPerson = (name: string, c: SimpleCommand): string | undefined => {
  const args = c.args
  if (INTERACTIVE.has(name)) return `${name} is interactive`
  if (REPLS.has(name) && args.length === 0 && !c.stdinGiven) return `${name} with no arguments opens a prompt`
  if (name === "sudo" && !has(args, (a) => a === "-n" || a === "--non-interactive" || /^-[A-Za-z]*n[A-Za-z]*$/.test(a))) {
    return "sudo may ask for a password"
  }
  if (name === "ssh" && sshOpensShell(args)) return "ssh without a remote command opens a shell"
  if (name === "git") {
    const sub = args.find((a) => a.value !== undefined && !a.value.startsWith("-"))?.value
    if ((sub === "rebase" || sub === "add" || sub === "checkout" || sub === "reset" || sub === "restore" || sub === "stash") &&
      has(args, (a) => a === "-i" || a === "--interactive" || a === "-p" || a === "--patch")) {
      return `git ${sub} ${"--interactive"} waits for a person`
    }
    if (sub === "commit" && !has(args, (a) => /^(-[A-Za-z]*[mFC]|--message|--file|--reuse-message|--no-edit|--fixup|--squash)/.test(a))) {
      return "git commit without a message opens an editor"
    }
  }
  if ((name === "docker" || name === "podman" || name === "kubectl" || name === "nerdctl") &&
    has(args, (a) => a === "-it" || a === "-ti" || a === "--tty" || a === "-t" || a === "--interactive")) {
    return `${name} with a terminal is interactive`
  }
  if (name === "crontab" && has(args, (a) => a === "-e")) return "crontab -e opens an editor"
  if (name === "script" || name === "expect") return `${name} drives a terminal`
  return undefined
}

/** ssh options that take a value. */
const SSH_VALUED = new Set("BbcDEeFIiJLlmOoPpQRSWw".split(""))

const sshOpensShell = (args: ReadonlyArray<Word>): boolean => {
  let positional = 0
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!.value
    if (a === undefined) return false
    if (a.startsWith("-") && a.length > 1) {
      const flag = a[a.length - 1]!
      if (a.length === 2 && SSH_VALUED.has(flag)) i++
      continue
    }
    positional++
  }
  return positional <= 1
}

/**
 * Decides whether to run `command` through `spillway run`, and how. The
 * rewritten line works in bash, zsh and sh; the command inside it runs by
 * bash, as written.
 */
export const rewrite = (command: string, options: RewriteOptions = {}): Decision => {
  const env = options.env ?? process.env
  const spillway = options.spillway ?? "spillway"
  const pass = (reason: string): Decision => ({ _tag: "PassThrough", reason })
  if (off(env.SPILLWAY_HOOK)) return pass("SPILLWAY_HOOK is off")
  if (command.trim() === "") return pass("the command is empty")
  if (command.includes("\0")) return pass("the command holds a NUL byte")
  if (utf8Bytes(command, MAX_COMMAND_BYTES) > MAX_COMMAND_BYTES) return pass(`the command is over ${MAX_COMMAND_BYTES} bytes`)
  const cache = new Map<string, boolean>()
  const runnable = (name: string) => name.includes("/") ? Fs.existsSync(name) : onPath(name, env.PATH, cache)
  if (!runnable(spillway)) return pass(`${spillway} is not on PATH`)
  if (!runnable("bash")) return pass("bash is not on PATH")
  const read = scan(command)
  if (read.blockers.length > 0) return pass(read.blockers[0]!)
  if (read.doubts.length > 0) return pass(`the line is not read with certainty: ${read.doubts[0]}`)
  for (const c of read.commands) {
    if (c.name === undefined) {
      if (!c.subshell) return pass("it only assigns variables")
      continue
    }
    const name = c.name.value
    if (name === undefined) return pass(`the command word ${c.name.raw} is not plain text`)
    const base = name.includes("/") ? Path.basename(name) : name
    if (base === "spillway" || base === Path.basename(spillway)) return pass("it runs spillway already")
    if (BACKGROUND.has(base)) return pass(`${base} leaves a job in the background`)
    if (!c.subshell && SHELL_STATE.has(name)) return pass(`${name} changes the calling shell`)
    if (name === "printf" && !c.subshell && has(c.args, (a) => a === "-v")) return pass("printf -v assigns a variable")
    const waits = waitsForPerson(base, c)
    if (waits !== undefined) return pass(waits)
    if (!BUILTINS.has(name) && !name.includes("/") && !runnable(name)) {
      return pass(`${name} is not a builtin nor on PATH (an alias or a function of the calling shell?)`)
    }
  }
  return { _tag: "Rewrite", command: `${quote(spillway)} run --stdin -- bash -c ${quote(command)}` }
}
