// Capture with and without the salience tracker, in-process, on the
// benchmark's build-like log: the same measurement as the salience case of
// run.mjs, alone and with more runs, since on a shared machine single runs
// vary by more than the difference.
//
//   pnpm build && node bench/salience.mjs      RUNS=15 SIZE_MIB=64 to change
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer } from "effect"
import { Access, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { NodeSpill } from "@spillway/node"

const root = Path.dirname(fileURLToPath(import.meta.url))
const data = Path.join(root, ".data")
const MiB = 1024 * 1024
const size = Number(process.env.SIZE_MIB ?? 256) * MiB
const runs = Number(process.env.RUNS ?? 11)
const log = Path.join(data, `log-${size / MiB}m.txt`)
Fs.mkdirSync(data, { recursive: true })

if (!Fs.existsSync(log) || Fs.statSync(log).size < size) {
  // the same lines as run.mjs writes
  const fd = Fs.openSync(log, "w")
  const words = ["compiling", "linking", "resolving", "fetching", "checking", "bundling", "testing", "caching"]
  let written = 0
  let i = 0
  while (written < size) {
    let chunk = ""
    for (let k = 0; k < 10_000; k++, i++) {
      chunk += i % 1_000_003 === 500_000
        ? `src/module_${i}.c:${i % 997}:7: error: unit ${i} failed to compile\n`
        : `[${String(i).padStart(9, "0")}] ${words[i % words.length]} packages/pkg-${i % 313}/src/file-${i % 71}.ts ok (${i % 1000} ms)\n`
    }
    Fs.writeSync(fd, chunk)
    written += Buffer.byteLength(chunk)
  }
  Fs.closeSync(fd)
}

const body = Fs.readFileSync(log)
const chunks = []
for (let i = 0; i < body.length; i += 65536) chunks.push(body.subarray(i, i + 65536))
const directory = Path.join(data, "capture")
const capture = async (salience) => {
  const layer = NodeSpill.layerWithout({ directory, ...(salience ? {} : { salience: false }) }).pipe(
    Layer.provide(Layer.mergeAll(SpillPolicy.allowAll, Secrets.layer({}), Access.allowOwners))
  )
  const started = performance.now()
  const cpu = process.cpuUsage()
  const kept = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const c = yield* (yield* Spill.SpillWrite).capture()
    for (const chunk of chunks) yield* c.write(chunk)
    return yield* c.finish(1)
  })).pipe(Effect.provide(layer)))
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  Fs.rmSync(directory, { recursive: true, force: true })
  return { ms, cpu: (used.user + used.system) / 1000, salient: kept.salient?.total ?? 0 }
}

// wall time, and this process's CPU time, which other processes on a shared
// machine disturb less
const without = []
const withSalience = []
const cpuWithout = []
const cpuWith = []
let found = 0
// each side goes first in half the rounds, so neither always follows the other's dirty pages
const takeWithout = async () => {
  const a = await capture(false)
  without.push(a.ms)
  cpuWithout.push(a.cpu)
}
const takeWith = async () => {
  const w = await capture(true)
  withSalience.push(w.ms)
  cpuWith.push(w.cpu)
  found = w.salient
}
for (let i = 0; i < runs; i++) {
  if (i % 2 === 0) {
    await takeWithout()
    await takeWith()
  } else {
    await takeWith()
    await takeWithout()
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (x) => `${x.toFixed(0)} ms`
console.log(`capture ${size / MiB} MiB in-process, ${runs} alternating runs each; ${found} salient lines found`)
console.log(`  without salience: fastest ${fmt(Math.min(...without))}, median ${fmt(median(without))}`)
console.log(`  with salience:    fastest ${fmt(Math.min(...withSalience))}, median ${fmt(median(withSalience))}`)
console.log(`  CPU time: without fastest ${fmt(Math.min(...cpuWithout))}, median ${fmt(median(cpuWithout))}; with fastest ${fmt(Math.min(...cpuWith))}, median ${fmt(median(cpuWith))}; ratio fastest ${(Math.min(...cpuWith) / Math.min(...cpuWithout)).toFixed(3)}x, median ${(median(cpuWith) / median(cpuWithout)).toFixed(3)}x`)
console.log(`  ratio: fastest ${(Math.min(...withSalience) / Math.min(...without)).toFixed(3)}x, median ${(median(withSalience) / median(without)).toFixed(3)}x`)
