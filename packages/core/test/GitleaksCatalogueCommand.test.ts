import { describe, expect, it } from "@effect/vitest"
import * as Secrets from "@spillway/core/Secrets"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type FalseSample, isKept, isLookAlike, isMasked, readCatalogue, type TrueSample } from "./catalogues/gitleaks.js"

// The gitleaks catalogue's samples written into files, several to a file
// between ordinary lines, and run through the built command
// (`spillway run -- cat FILE`): what it saves must be the library's masking
// of the file byte for byte, and the figures must hold on it. Build the
// command first (`npx tsc -b tsconfig.build.json && pnpm --filter
// @spillway/cli bundle`).

const root = fileURLToPath(new URL("../../..", import.meta.url))
const command = Path.join(root, "packages/cli/bin/spillway.cjs")
const catalogue = readCatalogue()
const masker = Secrets.unsafeMakeMasker()
const encoder = new TextEncoder()

interface Placed<S> {
  readonly rule: string
  readonly sample: S
  readonly offset: number
}

/** Writes samples into one text, each after an ordinary log line; returns the text and where each sample starts (in bytes). */
const layout = <S extends { readonly text: string }>(samples: ReadonlyArray<{ rule: string; sample: S }>): { text: string; placed: Array<Placed<S>> } => {
  let text = ""
  let bytes = 0
  const placed: Array<Placed<S>> = []
  samples.forEach(({ rule, sample }, index) => {
    const line = `[build ${index}] step finished in ${(index * 37) % 1000} ms\n`
    text += line
    bytes += encoder.encode(line).length
    placed.push({ rule, sample, offset: bytes })
    const body = `${sample.text}\n`
    text += body
    bytes += encoder.encode(body).length
  })
  return { text, placed }
}

/** Runs `spillway run -- cat FILE` with its outputs in a fresh directory; returns the body it saved. */
const runCommand = (dir: string, name: string, text: string): Uint8Array => {
  const file = Path.join(dir, `${name}.txt`)
  Fs.writeFileSync(file, text)
  const outputs = Path.join(dir, `${name}-outputs`)
  execFileSync(process.execPath, [command, "run", "--", "cat", file], {
    env: { ...process.env, SPILLWAY_OUTPUT_DIR: outputs },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024
  })
  const saved = Fs.readdirSync(outputs).filter((f) => !f.startsWith("."))
  expect(saved.length, `one saved output in ${outputs}`).toBe(1)
  return new Uint8Array(Fs.readFileSync(Path.join(outputs, saved[0]!)))
}

describe("gitleaks catalogue, through the command on files", () => {
  it("saves the library's masking byte for byte, and the figures hold", () => {
    expect(Fs.existsSync(command), `${command} is missing: build the command first`).toBe(true)
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-gitleaks-"))
    try {
      const truths = catalogue.rules.flatMap((rule) => rule.tps.map((sample) => ({ rule: rule.id, sample })))
      const falses = catalogue.rules.flatMap((rule) => rule.fps.filter(isLookAlike).map((sample) => ({ rule: rule.id, sample })))
      // three files of true samples and one of look-alikes: a few processes, not one per sample
      const third = Math.ceil(truths.length / 3)
      const groups: Array<{ name: string; truths: typeof truths; falses: typeof falses }> = [
        { name: "truths-1", truths: truths.slice(0, third), falses: [] },
        { name: "truths-2", truths: truths.slice(third, 2 * third), falses: [] },
        { name: "truths-3", truths: truths.slice(2 * third), falses: [] },
        { name: "look-alikes", truths: [], falses }
      ]
      let masked = 0
      let kept = 0
      for (const group of groups) {
        const { placed, text } = group.truths.length > 0 ? layout<TrueSample>(group.truths) : layout<FalseSample>(group.falses)
        const saved = runCommand(dir, group.name, text)
        const library = masker.maskBytes(encoder.encode(text))
        expect(saved.length, group.name).toBe(library.length)
        expect(Buffer.compare(Buffer.from(saved), Buffer.from(library)), `${group.name}: the command saved what the library masks`).toBe(0)
        for (const { offset, rule, sample } of placed) {
          if ("spans" in sample) masked += isMasked(rule, sample as TrueSample, saved, offset) ? 1 : 0
          else kept += isKept(sample, saved, offset) ? 1 : 0
        }
      }
      expect(masked / truths.length).toBeGreaterThanOrEqual(0.99)
      expect(kept / falses.length).toBeGreaterThanOrEqual(0.97)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
