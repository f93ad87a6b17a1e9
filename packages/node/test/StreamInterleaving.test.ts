/**
 * stdout and stderr are masked each as a stream of its own before they
 * meet: a token a command writes in pieces on stdout, with stderr lines
 * written between the pieces, is masked whole in every body that keeps the
 * output (a `run_command`'s saved output, a job's spool), and so is a
 * private key whose lines have stderr lines between them. Real `bash`
 * children, real files.
 */
import { NodeCommandExecutor, NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Child } from "@spillway/core"
import { NodeChild, Spillway } from "@spillway/node"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("spillway-interleave-")
const owner = { owner: "alice", channel: "build" }

/** Upper-case letters and digits from a fixed seed: no run of them occurs in the lower-case lines around. */
const seeded = (seed: number, length: number, alphabet: string) =>
  Array.from({ length }, () => {
    seed = (seed * 16807) % 2147483647
    return alphabet[seed % alphabet.length]
  }).join("")
const UPPER = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
const token = "ghp_" + seeded(11, 36, UPPER)
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
const keyLines = Array.from({ length: 12 }, (_, i) => seeded(100 + i, i === 11 ? 24 : 64, B64))

/** Every run of four characters of `secret` that occurs in `text`. */
const fragments = (text: string, secret: string): Array<string> => {
  const found = new Set<string>()
  for (let i = 0; i + 4 <= secret.length; i++) {
    const run = secret.slice(i, i + 4)
    if (text.includes(run)) found.add(run)
  }
  return [...found]
}

/** Every file under `dir` whose name is `name`, or that starts with `prefix`. */
const filesIn = (dir: string, match: (name: string) => boolean): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && match(e.name))
    .map((e) => Path.join(e.parentPath, e.name))

/**
 * A bash script: for every split point of the token, a stdout line, then
 * the token's first part on stdout, a stderr line, its second part and the
 * line break on stdout; then a private key whose every line is followed
 * by a stderr line.
 */
const script = (dir: string): string => {
  const lines = ["#!/bin/bash", `T='${token}'`]
  for (let k = 1; k < token.length; k++) {
    lines.push(`echo "step ${k} begins"`, `printf 'token=%s' "\${T:0:${k}}"`, "sleep 0.005", `echo "warning: step ${k} is slow" >&2`, "sleep 0.005", `printf '%s\\n' "\${T:${k}}"`)
  }
  const key = ["-----BEGIN RSA PRIVATE KEY-----", ...keyLines, "-----END RSA PRIVATE KEY-----"]
  key.forEach((line, i) => lines.push(`echo '${line}'`, "sleep 0.003", `echo "progress: line ${i} of the key" >&2`))
  lines.push(`echo "all done"`)
  const file = Path.join(dir, "interleave.sh")
  Fs.writeFileSync(file, lines.join("\n") + "\n")
  return file
}

/** Checks a body: no part of the token or of a key line, the lines of each stream all there and in their order. */
const checkBody = (text: string) => {
  expect(fragments(text, token)).toEqual([])
  for (const line of keyLines) expect(fragments(text, line)).toEqual([])
  const lines = text.split("\n")
  const steps = lines.flatMap((l) => /^step (\d+) begins$/.exec(l)?.[1] ?? []).map(Number)
  const warnings = lines.flatMap((l) => /^warning: step (\d+) is slow$/.exec(l)?.[1] ?? []).map(Number)
  const expected = Array.from({ length: token.length - 1 }, (_, i) => i + 1)
  expect(steps).toEqual(expected)
  expect(warnings).toEqual(expected)
  // each token line whole, and masked whole
  expect(lines.filter((l) => l.startsWith("token="))).toEqual(expected.map(() => `token=${"*".repeat(token.length)}`))
  const progress = lines.flatMap((l) => /^progress: line (\d+) of the key$/.exec(l)?.[1] ?? []).map(Number)
  expect(progress).toEqual(Array.from({ length: keyLines.length + 2 }, (_, i) => i))
  expect(lines).toContain("-----BEGIN RSA PRIVATE KEY-----")
  expect(lines).toContain("-----END RSA PRIVATE KEY-----")
  expect(lines.at(-2)).toBe("all done")
}

describe("stdout and stderr masked each on its own", () => {
  it("a token cut by stderr writes, at every split point, leaves no fragment in run_command's saved output", async () => {
    const dir = tempDir()
    const file = script(dir)
    await using sw = await Spillway.open({ dir, owner })
    const run = await sw.tool("run_command", { command: `bash ${file}`, max_chars: 400 }) as unknown as {
      readonly text: string
      readonly filename: string | null
    }
    expect(fragments(run.text, token)).toEqual([])
    expect(run.filename).not.toBeNull()
    const [saved] = filesIn(dir, (name) => name === run.filename)
    checkBody(Fs.readFileSync(saved!, "utf8"))
  }, 30_000)

  it("a token cut by stderr writes, at every split point, leaves no fragment in a job's spool", async () => {
    const dir = tempDir()
    const file = script(dir)
    await using sw = await Spillway.open({ dir, owner })
    const { pid } = await sw.start(["bash", file])
    const done = await sw.wait(pid, { timeoutMs: 20_000 })
    expect(done.retention.status).toContain("exit")
    expect(fragments(done.text, token)).toEqual([])
    const spools = filesIn(dir, (name) => name.startsWith("job-"))
    expect(spools).toHaveLength(1)
    checkBody(Fs.readFileSync(spools[0]!, "utf8"))
  }, 30_000)

  it("finds the failure lines of stderr between stdout's held lines, and quotes them whole in the preview", async () => {
    const dir = tempDir()
    const file = Path.join(dir, "fail.sh")
    Fs.writeFileSync(file, [
      "for i in $(seq 1 2000); do",
      "  printf 'compiling unit %s' \"$i\"",
      "  if [ $((i % 500)) -eq 0 ]; then echo \"error: unit $i failed to build\" >&2; fi",
      "  printf ' ok\\n'",
      "done",
      "exit 2"
    ].join("\n") + "\n")
    await using sw = await Spillway.open({ dir, owner })
    const run = await sw.tool("run_command", { command: `bash ${file}` }) as unknown as { readonly text: string; readonly filename: string | null }
    for (const i of [500, 1000, 1500, 2000]) expect(run.text).toContain(`error: unit ${i} failed to build\n`)
    const [saved] = filesIn(dir, (name) => name === run.filename)
    const lines = Fs.readFileSync(saved!, "utf8").split("\n")
    expect(lines.filter((l) => /^compiling unit \d+ ok$/.test(l))).toHaveLength(2000)
    // each error line whole, never inside a stdout line
    expect(lines.filter((l) => l.includes("error:"))).toEqual([500, 1000, 1500, 2000].map((i) => `error: unit ${i} failed to build`))
  }, 30_000)

  it("keeps the order of lines written a while apart on the two streams", async () => {
    const dir = tempDir()
    await using sw = await Spillway.open({ dir, owner })
    const command = "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; sleep 0.2; echo four >&2"
    const run = await sw.tool("run_command", { command }) as unknown as { readonly text: string }
    expect(run.text).toContain("one\ntwo\nthree\nfour\n")
    const { pid } = await sw.start(command)
    await sw.wait(pid, { timeoutMs: 20_000 })
    const spools = filesIn(dir, (name) => name.startsWith("job-"))
    expect(Fs.readFileSync(spools[0]!, "utf8")).toBe("one\ntwo\nthree\nfour\n")
  }, 30_000)
})

const runners: ReadonlyArray<readonly [string, Layer.Layer<Child.ChildRunner>]> = [
  ["Node", NodeChild.layer()],
  ["Node, a fresh buffer per read", NodeChild.layer({ reuseBuffers: false })],
  ["CommandExecutor", Child.layerExecutor.pipe(Layer.provide(NodeCommandExecutor.layer), Layer.provide(NodeFileSystem.layer))]
]

describe("the pipe each chunk came from", () => {
  for (const [name, layer] of runners) {
    it.live(`${name}: stdout's chunks as 1, stderr's as 2, never one chunk of both; with mergeStderr, all as 1`, () =>
      Effect.gen(function*() {
        const command = "for i in $(seq 1 200); do echo out$i; echo err$i >&2; done"
        const text: Record<number, string> = { 1: "", 2: "" }
        yield* Child.run({ command, shell: true }, (chunk, source) => Effect.sync(() => void (text[source] += Buffer.from(chunk).toString())))
        expect(text[1]).toBe(Array.from({ length: 200 }, (_, i) => `out${i + 1}\n`).join(""))
        expect(text[2]).toBe(Array.from({ length: 200 }, (_, i) => `err${i + 1}\n`).join(""))
        const merged: Array<number> = []
        yield* Child.run({ command, shell: true, mergeStderr: true }, (_, source) => Effect.sync(() => void merged.push(source)))
        expect(new Set(merged)).toEqual(new Set([1]))
      }).pipe(Effect.provide(layer)))
  }
})
