/**
 * `spillway init [AGENT] [--dry-run] [--uninstall]`: connects coding agents
 * to Spillway by merging its hook, MCP server or plugin into each agent's own
 * configuration files, and takes them out again. Each agent's files and
 * shapes live in `init/<agent>.ts`; merging, backups and the record of what
 * was added in `init/Apply.ts` and `init/Files.ts`.
 *
 * @since 0.1.0
 */
import { Effect, Either } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Agent, type Environment, launcherFor, type Name, names, onPath } from "./init/Agent.js"
import * as Apply from "./init/Apply.js"
import * as claude from "./init/claude.js"
import * as codex from "./init/codex.js"
import * as cursor from "./init/cursor.js"
import * as Files from "./init/Files.js"
import * as gemini from "./init/gemini.js"
import * as opencode from "./init/opencode.js"
import * as pi from "./init/pi.js"
import { Exit2, OutputTag } from "./Output.js"

/** Every agent, in the order the report lists them. */
export const agents: ReadonlyArray<Agent> = [claude.agent, codex.agent, gemini.agent, opencode.agent, pi.agent, cursor.agent]

/** What `spillway init` was asked for. */
export interface InitOptions {
  /** The agents named, or every agent found installed. */
  readonly agents: ReadonlyArray<Name> | "all"
  readonly dryRun: boolean
  readonly uninstall: boolean
}

/** The report to print, and whether any file was refused. */
export interface Report {
  readonly text: string
  readonly refused: number
}

/** Whether an agent is installed, and the evidence either way. */
export const detect = (agent: Agent, environment: Environment): { readonly installed: boolean; readonly evidence: string } => {
  const folder = agent.folders(environment).find((f) => Fs.existsSync(f))
  if (folder !== undefined) return { installed: true, evidence: `found ${tilde(folder, environment)}` }
  const binary = agent.binaries.find((b) => onPath(environment.env, b) !== undefined)
  if (binary !== undefined) return { installed: true, evidence: `found ${binary} on PATH` }
  const looked = [...agent.folders(environment).map((f) => `no ${tilde(f, environment)}`), ...agent.binaries.map((b) => `no ${b} on PATH`)]
  return { installed: false, evidence: looked.join(", ") }
}

const tilde = (file: string, environment: Environment) =>
  file === environment.home ? "~" : file.startsWith(environment.home + Path.sep) ? "~" + file.slice(environment.home.length) : file

const format = (lines: ReadonlyArray<Apply.Line>, environment: Environment): string => {
  const width = Math.max(...lines.map((l) => l.status.length))
  const files = Math.max(0, ...lines.map((l) => (l.file === undefined ? 0 : tilde(l.file, environment).length)))
  return lines
    .map((l) => [l.agent.padEnd(8), l.status.padEnd(width), (l.file === undefined ? "" : tilde(l.file, environment)).padEnd(files), l.detail].join("  "))
    .join("\n")
}

const changedSomething = (status: Apply.Status) => ["created", "changed", "removed", "restored"].includes(status)

/** Runs `spillway init` against the disk and returns what to print. */
export const run = (options: InitOptions, environment: Environment): Report => {
  const lines: Array<Apply.Line> = []
  const record = Files.readRecord(environment.home)
  if (Either.isLeft(record)) return { text: `spillway init: ${record.left}\n`, refused: 1 }
  const recorded = new Set(Object.values(record.right.files).map((f) => f.agent))
  const chosen: Array<Agent> = []
  for (const agent of agents) {
    if (options.agents !== "all") {
      if (options.agents.includes(agent.name)) chosen.push(agent)
      continue
    }
    const found = detect(agent, environment)
    if (found.installed || (options.uninstall && recorded.has(agent.name))) chosen.push(agent)
    else lines.push({ agent: agent.name, status: "skipped", detail: `not installed (${found.evidence})` })
  }
  const targets = chosen.flatMap((a) => a.targets(environment))
  const applyOptions = {
    dryRun: options.dryRun,
    save: (r: Files.Record) => Files.writeRecord(environment.home, r)
  }
  const outcome = options.uninstall
    ? Apply.uninstall(targets, record.right, applyOptions)
    : Apply.install(targets, record.right, applyOptions)
  lines.push(...outcome.lines)
  if (!options.uninstall) {
    for (const agent of chosen) if (agent.note !== undefined) lines.push({ agent: agent.name, status: "skipped", detail: agent.note })
  }
  const order = (l: Apply.Line) => names.indexOf(l.agent as Name)
  lines.sort((a, b) => order(a) - order(b))
  const refusedCount = lines.filter((l) => l.status === "refused").length
  const touched = chosen.filter((a) => outcome.lines.some((l) => l.agent === a.name && changedSomething(l.status)))
  const last = options.dryRun
    ? "dry run: nothing was written; run the same command without --dry-run to apply it"
    : touched.length === 0
    ? chosen.length === 0
      ? "no agent found: name one, e.g. spillway init claude"
      : `nothing to change${options.uninstall ? "" : ": every file already holds Spillway's entries"}`
    : options.uninstall
    ? `next: restart ${touched.map((a) => a.title).join(", ")} so ${touched.length === 1 ? "it drops" : "they drop"} Spillway`
    : `next: ${touched.map((a) => a.next).join("; ")}`
  const refusal = refusedCount === 0 ? "" : `\n${refusedCount} file${refusedCount === 1 ? " was" : "s were"} refused and left untouched; fix ${refusedCount === 1 ? "it" : "them"} and run the command again`
  return { text: `${format(lines, environment)}\n${last}${refusal}\n`, refused: refusedCount }
}

/** The environment of this process: `HOME`, PATH and the agents' overrides, and this bin. */
export const processEnvironment = (): Environment => {
  const bin = process.argv[1] ?? "spillway"
  const home = process.env.HOME !== undefined && process.env.HOME !== "" ? process.env.HOME : Os.homedir()
  return {
    env: process.env,
    home,
    launcher: launcherFor(process.env, bin, process.execPath),
    // the bin is bin/spillway.cjs; the bundles, and the plugin bundles under integrations/, are in dist/
    bundles: Path.join(Path.dirname(Path.resolve(bin)), "..", "dist")
  }
}

/** Runs `spillway init` for the command: prints the report, and fails with status 1 when a file was refused. */
export const handler = (options: { readonly agent: string; readonly dryRun: boolean; readonly uninstall: boolean }) =>
  Effect.gen(function*() {
    const out = yield* OutputTag
    const report = run({ agents: options.agent === "all" ? "all" : [options.agent as Name], dryRun: options.dryRun, uninstall: options.uninstall }, processEnvironment())
    yield* out.stdout(report.text)
    if (report.refused > 0) {
      return yield* Effect.fail(new Exit2({ message: `${report.refused} file(s) refused`, status: 1, tag: "Refused" }))
    }
  })
