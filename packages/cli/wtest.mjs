import { NodeSecrets } from "@spillway/node"
import { Effect } from "effect"
import * as Fs from "node:fs"
const body = Fs.readFileSync(process.argv[2])
const m = await Effect.runPromise(NodeSecrets.makeWorkerMasker({ shouldHandOff: () => true }))
const s = m.stream()
const t0 = performance.now()
let n = 0
for (let i = 0; i < body.length; i += 65536) { n += s.push(body.subarray(i, i + 65536)).length }
n += s.end().length
console.log(n, body.length, (performance.now() - t0).toFixed(0))
