import { describe, expect, it } from "@effect/vitest"
import { Secrets, Spill } from "@spillway/core"
import { NodeSecrets, NodeSpill } from "@spillway/node"
import { Effect, FastCheck as fc } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { tempDirs } from "./tempDirs.js"

// The worker runs the compiled masker: the build (`pnpm check`) puts it in dist.
const workerFile = fileURLToPath(new URL("../dist/internal/maskWorker.js", import.meta.url))
const knownValues = ["kn0wn-" + "value-9Zq"]

const token = () => "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
const keyBody = ["MIIEow" + "IBAAKCAQEA7x9", "BgkqhkiG" + "9w0BAQEFAASC"]
const pieces = [
  "plain line of build output\n",
  `export GITHUB_TOKEN=${token()}\n`,
  `password=${"Xy9!" + "k2Lq#p"}\n`,
  `echo ${knownValues[0]}\n`,
  "-----BEGIN RSA PRIVATE KEY-----\n",
  `${keyBody[0]}\n${keyBody[1]}\n`,
  "-----END RSA PRIVATE KEY-----\n",
  "error: something failed\n",
  "x".repeat(3000),
  "\n"
]

const run = (masker: Secrets.Masker, bytes: Uint8Array, cuts: ReadonlyArray<number>, literals: ReadonlyArray<string>, handedOn = false) => {
  const marks: Array<number> = []
  const stream = masker.stream(literals.length > 0 ? { literals, onMark: (p) => void marks.push(p) } : undefined)
  const out: Array<Uint8Array> = []
  let previous = 0
  for (const point of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    out.push(stream.push(bytes.subarray(previous, point)))
    previous = point
  }
  out.push(stream.push(bytes.subarray(previous)))
  if (handedOn) expect(stream.checkpoint()).toBeUndefined() // the worker holds the stream
  out.push(stream.end())
  return { text: Buffer.concat(out).toString("utf8"), marks }
}

describe("NodeSecrets.makeWorkerMasker", () => {
  const local = Secrets.unsafeMakeMasker({ knownValues })
  const worker = Effect.runSync(NodeSecrets.makeWorkerMasker({ knownValues, workerFile, handOffBytes: 64, maxInFlightBytes: 4096, shouldHandOff: () => true }))

  it("hands a long stream to the worker, and starts over after end", () => {
    const bytes = Buffer.from(pieces.join("").repeat(400))
    const stream = worker.stream()
    const fed: Array<Uint8Array> = []
    const out: Array<Uint8Array> = []
    const feed = (chunk: Uint8Array) => {
      fed.push(chunk)
      out.push(stream.push(chunk))
    }
    const pause = new Int32Array(new SharedArrayBuffer(4))
    const deadline = Date.now() + 20_000
    for (let i = 0; i < bytes.length; i += 1000) {
      feed(bytes.subarray(i, i + 1000))
      // the worker starts in the background; a line at a time until it has taken over
      while (i === 1000 && stream.checkpoint() !== undefined && Date.now() < deadline) {
        Atomics.wait(pause, 0, 0, 50)
        feed(Buffer.from("waiting\n"))
      }
    }
    expect(stream.checkpoint()).toBeUndefined() // handed on: the state lives in the worker
    out.push(stream.end())
    expect(Buffer.concat(out).toString("utf8")).toBe(local.maskText(Buffer.concat(fed).toString("utf8")))
    expect(Buffer.concat([stream.push(Buffer.from(`again ${token()}\n`)), stream.end()]).toString("utf8")).toBe(`again ${"*".repeat(40)}\n`)
  })

  it("masks a stream exactly as the masker on the calling thread does, whatever the chunking, watched literals included", () => {
    // the worker started above takes every stream once it has seen 64 bytes
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { minLength: 20, maxLength: 200 }), fc.array(fc.nat(), { maxLength: 60 }), (parts, cuts) => {
        const bytes = Buffer.from(parts.join(""))
        const expected = run(local, bytes, cuts, ["error"])
        const actual = run(worker, bytes, cuts, ["error"], true)
        expect(actual.text).toBe(expected.text)
        expect(actual.marks).toEqual(expected.marks)
        expect(actual.text).not.toContain(token())
      }),
      { numRuns: 25 }
    )
  })

  it("keeps a stream on the calling thread when a worker would not help", () => {
    const busy = Effect.runSync(NodeSecrets.makeWorkerMasker({ knownValues, workerFile, handOffBytes: 16, shouldHandOff: () => false }))
    const bytes = Buffer.from(pieces.join("").repeat(20))
    const stream = busy.stream()
    const out = [stream.push(bytes.subarray(0, 5000))]
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200)
    out.push(stream.push(bytes.subarray(5000)))
    expect(stream.checkpoint()).toBeDefined()
    out.push(stream.end())
    expect(Buffer.concat(out).toString("utf8")).toBe(local.maskText(bytes.toString("utf8")))
  })

  it("masks on the calling thread when the worker cannot start", () => {
    const broken = Effect.runSync(NodeSecrets.makeWorkerMasker({ knownValues, workerFile: "/nonexistent/worker.js", handOffBytes: 16, shouldHandOff: () => true }))
    const bytes = Buffer.from(pieces.join("").repeat(20))
    expect(run(broken, bytes, [5, 500, 5000], []).text).toBe(local.maskText(bytes.toString("utf8")))
  })
})

describe("the Node body store", () => {
  const tempDir = tempDirs("spillway-mask-")

  it("masks a long output on the worker, the kept body and its preview as the calling thread would, the caller's chunks untouched", async () => {
    const dir = tempDir()
    let asked = 0
    const layer = NodeSpill.layer({
      directory: dir,
      maskWorker: { workerFile, handOffBytes: 4096, shouldHandOff: () => ++asked > 0 }
    })
    const text = pieces.join("").repeat(600)
    const bytes = Buffer.from(text)
    const total = bytes.length
    const pause = new Int32Array(new SharedArrayBuffer(4))
    const kept = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const capture = yield* (yield* Spill.SpillWrite).capture()
      for (let i = 0; i < total; i += 8192) {
        const chunk = bytes.subarray(i, i + 8192)
        yield* capture.write(chunk)
        // a chunk the stream took (and, on the worker, sent a copy of) is still the caller's, whole
        expect(chunk.length).toBe(Math.min(8192, total - i))
        // the worker starts in the background: give it a moment before the rest
        if (i === 8192) Atomics.wait(pause, 0, 0, 500)
      }
      return yield* capture.finish(0)
    })).pipe(Effect.provide(layer)))
    expect(asked).toBe(1)
    const saved = Fs.readFileSync(Path.join(dir, kept.filename!), "utf8")
    expect(saved).toBe(Secrets.unsafeMakeMasker().maskText(text))
    expect(saved).not.toContain(token().slice(4, 20))
    expect(bytes.toString("utf8")).toBe(text)
  })
})

describe("StreamMasker checkpoint and resume", () => {
  it("goes on from a checkpoint exactly as the stream would have", () => {
    const masker = Secrets.unsafeMakeMasker({ knownValues })
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 20 }), fc.nat(), (parts, cuts, at) => {
        const bytes = Buffer.from(parts.join(""))
        const split = at % (bytes.length + 1)
        const first = masker.stream()
        const head = first.push(bytes.subarray(0, split))
        const checkpoint = first.checkpoint()
        if (checkpoint === undefined) return // in the middle of cutting a long line
        const second = masker.resume(structuredClone(checkpoint))
        const out = [head]
        let previous = split
        for (const point of [...new Set(cuts.map((c) => split + (c % (bytes.length - split + 1))))].sort((a, b) => a - b)) {
          out.push(second.push(bytes.subarray(previous, point)))
          previous = point
        }
        out.push(second.push(bytes.subarray(previous)), second.end())
        expect(Buffer.concat(out).toString("utf8")).toBe(masker.maskText(bytes.toString("utf8")))
      }),
      { numRuns: 200 }
    )
  })
})
