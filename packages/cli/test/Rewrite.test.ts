import { afterAll, describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { rewrite } from "../src/Rewrite.js"

const bin = fileURLToPath(new URL("../bin/spillway.cjs", import.meta.url))
const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-rewrite-"))
afterAll(() => Fs.rmSync(scratch, { recursive: true, force: true }))

// a `spillway` on PATH that runs this checkout's command
const shimDir = Path.join(scratch, "bin")
Fs.mkdirSync(shimDir)
Fs.writeFileSync(Path.join(shimDir, "spillway"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} "$@"\n`, { mode: 0o755 })
const env: Record<string, string> = {
  PATH: `${shimDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
  HOME: scratch,
  LANG: "C.UTF-8",
  SPILLWAY_OUTPUT_DIR: Path.join(scratch, "out")
}

interface Ran {
  readonly output: string
  readonly status: number
}

/** Runs a line with `bash -c`, stdout and stderr into one file (as 2>&1 gives), with `input` on stdin. */
const bash = (line: string, input = ""): Ran => {
  const file = Path.join(scratch, `run-${process.hrtime.bigint()}`)
  const fd = Fs.openSync(file, "w")
  try {
    const r = spawnSync("bash", ["-c", line], { env, input, stdio: ["pipe", fd, fd], timeout: 30_000, cwd: scratch })
    const signals = Os.constants.signals as Record<string, number>
    return { output: Fs.readFileSync(file, "utf8"), status: r.status ?? 128 + (signals[r.signal ?? ""] ?? 0) }
  } finally {
    Fs.closeSync(fd)
    Fs.rmSync(file, { force: true })
  }
}

const rewritten = (line: string): string => {
  const d = rewrite(line, { env })
  if (d._tag !== "Rewrite") throw new Error(`${JSON.stringify(line)} passed through: ${d.reason}`)
  return d.command
}

/** The line as run, and through the rewrite: same output byte for byte, same status. */
const same = (line: string, input = "") => {
  const before = bash(line, input)
  const after = bash(rewritten(line), input)
  expect(after, line).toEqual(before)
  return before
}

describe("rewrite: runs the command unchanged", () => {
  it("keeps output, order and status for fixed cases", () => {
    expect(same("cat <<'EOF'\nline $HOME `not run`\n  indented 'quoted' \"double\"\nEOF\necho after")).toMatchObject({ status: 0 })
    expect(same("cat <<EOF\nhome is $HOME, sum $((2+3))\nEOF")).toMatchObject({ output: `home is ${scratch}, sum 5\n` })
    expect(same("echo one\necho two >&2\nfor i in 1 2 3; do echo \"n=$i\"; done\nfalse")).toMatchObject({ status: 1 })
    expect(same("printf 'no final newline'")).toEqual({ output: "no final newline", status: 0 })
    expect(same("printf ''")).toEqual({ output: "", status: 0 })
    expect(same("echo 'héllo wörld 日本 😀'; echo \"it's\" 'say \"hi\"' $'tab\\there'")).toMatchObject({ status: 0 })
    expect(same("echo before; kill -9 $$")).toEqual({ output: "before\n", status: 137 })
    expect(same("echo out; (exit 201)")).toEqual({ output: "out\n", status: 201 })
    expect(same("echo out; exit 3; echo never")).toEqual({ output: "out\n", status: 3 })
    expect(same("make -v >/dev/null 2>&1 || exit 9; echo built")).toMatchObject({ status: 0 })
    expect(same("echo \"$(echo inner)\" `echo tick` | tr a-z A-Z; echo err >&2 || true")).toMatchObject({ status: 0 })
    expect(same("if [ -d / ]; then echo yes; else echo no; fi; case abc in a*) echo matched;; *) echo other;; esac")).toMatchObject({
      output: "yes\nmatched\n"
    })
  })

  it("passes stdin on to a command that reads it", () => {
    expect(same("cat; echo done", "piped in\nsecond line\n")).toEqual({ output: "piped in\nsecond line\ndone\n", status: 0 })
    expect(same("wc -l", "a\nb\nc\n")).toMatchObject({ status: 0 })
    expect(same("cat")).toEqual({ output: "", status: 0 })
  })

  it.prop(
    "prints and exits as the original for generated lines",
    [fc.array(fc.constantFrom(..."ab 'q\"$\\`é😀*\n\t;&|()<>#{}"), { maxLength: 12 }).map((cs) => cs.join("")),
      fc.integer({ min: 0, max: 255 }),
      fc.integer({ min: 0, max: 6 }),
      fc.integer({ min: 0, max: 6 })],
    ([text, code, first, second]) => {
      const q = `'${text.replace(/'/g, "'\\''")}'`
      const pieces = [
        `echo ${q}`,
        `printf '%s' ${q}`,
        `echo ${q} >&2`,
        `printf '%s\\n' "$(printf '%s' ${q} | tr a-z A-Z)"`,
        `(exit ${code})`,
        `cat <<'END'\n${text.replace(/^END$/gm, "")}\nEND`,
        `for w in ${q} x; do echo "[$w]"; done`
      ]
      const joins = ["; ", " && ", " || ", "\n", " | cat; "]
      const line = `${pieces[first]}${joins[code % joins.length]}${pieces[second]}`
      same(line, text)
    },
    { fastCheck: { numRuns: 20 } }
  )
})

describe("rewrite: passes through what it cannot wrap", () => {
  const passes = (line: string, extra: Record<string, string> = {}) => {
    const d = rewrite(line, { env: { ...env, ...extra } })
    expect(d._tag, line).toBe("PassThrough")
    return d._tag === "PassThrough" ? d.reason : ""
  }

  it("leaves shell-state commands anywhere in the line", () => {
    for (
      const line of [
        "cd /tmp", "cd x && make", "make; cd ..", "export A=1", "source ./env.sh", ". ./env.sh", "alias ll='ls -l'", "unalias ll",
        "set -e", "shopt -s globstar", "unset A", "pushd /tmp", "popd", "declare -x A=1", "typeset A", "local A", "readonly A=1",
        "eval \"$X\"", "exec bash", "trap 'echo' EXIT", "ulimit -n 100", "umask 022", "hash -r", "f() { echo; }", "function f { :; }",
        "X=1", "A=1 B=2", "return 0", "{ cd /tmp; }", "if true; then cd /; fi", "echo ${X:=1}", "echo $((n++))",
        "printf -v X '%s' 1", "((n=1))"
      ]
    ) passes(line)
  })

  it("leaves background jobs, interactive programs, spillway itself and odd input", () => {
    for (
      const line of [
        "sleep 1 &", "make & echo x", "nohup make", "setsid make", "make; disown", "vim file", "less log", "top", "python3",
        "node", "ssh host", "ssh -p 22 host", "sudo make", "git commit", "git rebase -i HEAD~2", "docker run -it alpine",
        "spillway run -- ls", "/usr/local/bin/spillway read x", "", "   \n ", "echo 'unclosed", "echo \"unclosed",
        "echo $(unclosed", "no-such-command-anywhere --flag", "ll -a"
      ]
    ) passes(line)
    expect(passes(`echo ${"x".repeat(70_000)}`)).toMatch(/over 65536 bytes/)
    expect(passes("echo a\0b")).toMatch(/NUL/)
    expect(passes("ls", { SPILLWAY_HOOK: "off" })).toMatch(/SPILLWAY_HOOK/)
    expect(passes("ls", { SPILLWAY_HOOK: "0" })).toMatch(/SPILLWAY_HOOK/)
    expect(passes("ls", { PATH: "/nonexistent" })).toMatch(/not on PATH/)
  })

  it("rewrites what runs in a subshell, reads input, or runs a remote command", () => {
    for (
      const line of [
        "(cd /tmp && ls)", "echo $(cd / && pwd)", "ssh host uptime", "python3 -c 'print(1)'", "echo 1 | python3",
        "git commit -m 'msg'", "ls 2>&1 | head", "echo a && echo b || echo c", "echo '&' \"|\" \\;"
      ]
    ) expect(rewrite(line, { env })._tag, line).toBe("Rewrite")
  })

  it("keeps the effect of what passes through for the next command", () => {
    Fs.mkdirSync(Path.join(scratch, "inner"), { recursive: true })
    const host = (line: string) => rewrite(line, { env })._tag === "Rewrite" ? rewritten(line) : line
    const r = bash([host("cd inner"), host("export MARK=kept"), host("pwd; echo \"$MARK\"")].join("\n"))
    expect(r).toEqual({ output: `${Path.join(scratch, "inner")}\nkept\n`, status: 0 })
    expect(host("pwd; echo \"$MARK\"")).toContain("spillway run --stdin -- bash -c")
  })

  it("bounds its work on hostile input", () => {
    const started = Date.now()
    expect(rewrite("$(".repeat(5_000), { env })._tag).toBe("PassThrough")
    expect(rewrite("echo \"".repeat(20_000), { env })._tag).toBe("PassThrough")
    expect(rewrite("`".repeat(60_000), { env })._tag).toBe("PassThrough")
    expect(rewrite(`${"echo x; ".repeat(7_000)}`, { env })._tag).toBe("Rewrite")
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})
