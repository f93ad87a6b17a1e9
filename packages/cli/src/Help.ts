/**
 * The help pages, written from `Usage`: the top-level list of commands and
 * one page per command (what it does, its arguments and flags, the
 * environment it reads, its exit statuses and examples). Plain text, with
 * no terminal escape codes, so it reads the same in a terminal, a pipe or
 * a model's context.
 *
 * @since 0.1.0
 */
import * as Usage from "./Usage.js"

const WIDTH = 100

/** Wraps text to the page width, every line after the first indented by `indent`. */
const wrap = (text: string, indent: number, first = 0): string => {
  const lines: Array<string> = []
  let line = ""
  let room = WIDTH - first
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > room) {
      lines.push(line)
      line = word
      room = WIDTH - indent
    } else line = line === "" ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.join("\n" + " ".repeat(indent))
}

/** Rows of a two-column table: the first column padded, the second wrapped under itself. */
const table = (rows: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => {
  const width = Math.min(28, Math.max(...rows.map(([l]) => l.length)))
  return rows.map(([left, right]) => {
    const pad = left.length > width ? `${left}\n${" ".repeat(width + 4)}` : left.padEnd(width)
    return `  ${pad}  ${wrap(right, width + 4, width + 4)}`
  })
}

/** A flag's left column: `--max-chars N`, `-i, --ignore-case`. */
export const flagLabel = (flag: Usage.Flag): string => {
  const name = Usage.typed(flag)
  const alias = flag.alias !== undefined ? `-${flag.alias}, ` : ""
  return `${alias}${name}${flag.value._tag === "switch" ? "" : ` ${flag.placeholder ?? "VALUE"}`}`
}

/** A flag's description with its default. */
export const flagText = (flag: Usage.Flag): string => flag.default !== undefined ? `${flag.description} (default: ${flag.default})` : flag.description

/** A positional's description with its choices. */
export const positionalText = (p: Usage.Positional): string =>
  p.choices !== undefined ? `${p.description}: ${p.choices.join(", ")}` : p.description

/** One command's help page. */
export const page = (spec: Usage.Spec): string => {
  const out: Array<string> = []
  spec.usage.forEach((u, k) => out.push(`${k === 0 ? "usage" : "   or"}: ${u}`))
  out.push("", `spillway ${spec.name}: ${spec.summary}.`, "", wrap(spec.description, 0))
  if (spec.positionals.length > 0) out.push("", "Arguments:", ...table(spec.positionals.map((p) => [p.name, positionalText(p)])))
  out.push(
    "",
    "Flags:",
    ...table([...spec.flags.map((f) => [flagLabel(f), flagText(f)] as const), ["-h, --help", "print this help"]])
  )
  if (spec.environment.length > 0) out.push("", "Environment:", ...table(spec.environment))
  out.push("", "Exit status:", ...table(spec.exits))
  out.push("", "Examples:")
  for (const [line, what] of spec.examples) out.push(`  ${line}`, `      ${wrap(what, 6, 6)}`)
  return out.join("\n") + "\n"
}

/** The top-level help: every command, one line each, and how to learn more. */
export const top = (): string => {
  const width = Math.max(...Usage.specs.map((c) => c.name.length))
  return [
    "usage: spillway COMMAND [ARGUMENTS]",
    "",
    Usage.about,
    "",
    "Commands:",
    ...Usage.specs.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Flags:",
    "  -h, --help     print this help",
    "  --version      print the version",
    "",
    "Environment:",
    ...table(Usage.topEnvironment),
    "",
    "Exit status: a command's own (see spillway help COMMAND); 2 for a usage error.",
    "",
    "spillway help COMMAND (or spillway COMMAND --help) shows a command's arguments, flags and examples."
  ].join("\n") + "\n"
}

/** The version `spillway --version` prints. */
export const VERSION = "0.1.0"

const cell = (text: string) => text.replace(/\|/g, "\\|")

/** One command's section of the reference page (docs/cli.md), in Markdown, from the same data as its help page. */
export const section = (spec: Usage.Spec): string => {
  const out: Array<string> = [`## spillway ${spec.name}`, "", `${spec.summary[0]!.toUpperCase()}${spec.summary.slice(1)}.`, "", "```text", ...spec.usage, "```", "", spec.description]
  if (spec.positionals.length > 0) {
    out.push("", "| Argument | Meaning |", "| --- | --- |", ...spec.positionals.map((p) => `| \`${p.name}\` | ${cell(positionalText(p))} |`))
  }
  out.push("", "| Flag | Meaning |", "| --- | --- |", ...spec.flags.map((f) => `| \`${flagLabel(f)}\` | ${cell(flagText(f))} |`), "| `-h, --help` | print the help |")
  if (spec.environment.length > 0) {
    out.push("", "| Environment variable | Meaning |", "| --- | --- |", ...spec.environment.map(([n, m]) => `| \`${n}\` | ${cell(m)} |`))
  }
  out.push("", "| Exit status | Meaning |", "| --- | --- |", ...spec.exits.map(([s, m]) => `| ${cell(s)} | ${cell(m)} |`))
  out.push("", "```sh", ...spec.examples.map(([line, what]) => `${line}   # ${what}`), "```")
  return out.join("\n") + "\n"
}

/** The command reference of docs/cli.md: every command's section, in the order the help lists them. */
export const reference = (): string => Usage.specs.map(section).join("\n")
