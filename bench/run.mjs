// Benchmarks `spillway` against the tools a user would otherwise pick, each
// figure a ratio against its anchor measured in the same run: many
// alternating pairs (each side first in half of them), the median of the
// pairs' own ratios, and a confidence interval for that median printed beside
// it (bench/estimate.mjs). A row is met when the interval's upper end is at or
// under its target, not met when its lower end is over it, and undecided
// otherwise; pairs are added until the row decides or its time runs out. Not
// part of the tests.
//
//   pnpm bench                 all benchmarks
//   SIZE_MIB=64 pnpm bench     smaller files for a quick look
//   ROW_SECONDS=300 pnpm bench more time for each row to decide (120 by default)
//   MIN_PAIRS=20 MAX_PAIRS=96 pnpm bench  the pairs a row starts with and ends at (12, 384)
//   PAIR_SECONDS=60 pnpm bench the longest a pair may take before the run stops (600)
//   MEM_RUNS=5 pnpm bench      runs of the peak memory row (3 by default)
//   ONLY=spool,lease pnpm bench  some of them: capture, read, grep, startup,
//                              memory, mcp, salience, evidence, spool, lease,
//                              masking, serve
/* global fetch */
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { estimate, formatInterval, formatVerdict, looksOf, medianOf } from "./estimate.mjs"

const root = Path.dirname(fileURLToPath(import.meta.url))
const data = Path.join(root, ".data")
const spill = Path.join(data, "spill")
const bin = Path.join(root, "..", "packages", "cli", "bin", "spillway.cjs")
const MiB = 1024 * 1024
const size = Number(process.env.SIZE_MIB ?? 256) * MiB
const deepLines = Number(process.env.DEEP_LINES ?? 2_000_000)
const memGiB = Number(process.env.MEM_GIB ?? 1)
const MEM_RUNS = Number(process.env.MEM_RUNS ?? 3)
const env = { ...process.env, SPILLWAY_OUTPUT_DIR: spill }

Fs.mkdirSync(spill, { recursive: true })

/** A log-like file of about `bytes` bytes, with a few planted failures. */
const makeLog = (file, bytes) => {
  if (Fs.existsSync(file) && Fs.statSync(file).size >= bytes) return
  const fd = Fs.openSync(file, "w")
  const words = ["compiling", "linking", "resolving", "fetching", "checking", "bundling", "testing", "caching"]
  let written = 0
  let i = 0
  while (written < bytes) {
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

/** Logfmt lines (`key=value` pairs, as structured loggers print them) of about `bytes` bytes. */
const makeLogfmt = (file, bytes) => {
  if (Fs.existsSync(file) && Fs.statSync(file).size >= bytes) return
  const fd = Fs.openSync(file, "w")
  let written = 0
  let i = 0
  while (written < bytes) {
    let chunk = ""
    for (let k = 0; k < 10_000; k++, i++) {
      chunk += `time=2024-05-01T12:${String(i % 60).padStart(2, "0")}:33.${i % 1000}Z level=info msg="request done" ` +
        `method=GET path=/api/v1/items/${i % 997} status=200 duration_ms=${i % 250} bytes=${i % 65536} request_id=req-${i} user=alice\n`
    }
    Fs.writeSync(fd, chunk)
    written += Buffer.byteLength(chunk)
  }
  Fs.closeSync(fd)
}

const makeLines = (file, n) => {
  if (Fs.existsSync(file)) return
  const fd = Fs.openSync(file, "w")
  for (let i = 1; i <= n; i += 10_000) {
    let chunk = ""
    for (let k = i; k < Math.min(n + 1, i + 10_000); k++) chunk += `line ${k}: the quick brown fox jumps over the lazy dog\n`
    Fs.writeSync(fd, chunk)
  }
  Fs.closeSync(fd)
}

/** Runs a shell line and returns wall time in ms and the child's peak RSS in KiB (GNU time). */
const timed = (line) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn("/usr/bin/time", ["-f", "%M", "sh", "-c", line], { env, stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    child.stderr.on("data", (d) => (err += d))
    child.on("exit", (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      const kib = Number(err.trim().split("\n").pop())
      // a run that failed measured something else: never report it
      if (code !== 0 || !Number.isFinite(kib)) reject(new Error(`${line} (exit ${code}): ${err}`))
      else resolve({ ms, kib })
    })
  })

const median = medianOf

/** The pairs and the time a row may take to decide. */
const MIN_PAIRS = Number(process.env.MIN_PAIRS ?? 12)
const MAX_PAIRS = Number(process.env.MAX_PAIRS ?? 384)
const ROW_SECONDS = Number(process.env.ROW_SECONDS ?? 120)
/** A pair that takes longer than this has hung: the run stops with an error rather than wait. */
const PAIR_SECONDS = Number(process.env.PAIR_SECONDS ?? 600)
/** A reference row decides nothing: this many pairs, for its interval. */
const REFERENCE_PAIRS = 10

/** Runs `a` and `b` in the order the estimator asks; resolves to `{ ours, theirs }`. */
const inOrder = async (oursFirst, a, b) => {
  if (oursFirst) {
    const ours = await a()
    return { ours, theirs: await b() }
  }
  const theirs = await b()
  return { ours: await a(), theirs }
}

/** A pair of whole processes: each side's wall time; `after` runs untimed after each of ours. */
const processPair = (ours, theirs, after = () => {}) => (oursFirst) =>
  inOrder(oursFirst, async () => {
    const { ms } = await timed(ours)
    after()
    return ms
  }, async () => (await timed(theirs)).ms)

/** Estimates a row of pairs until it decides against `target` (none for a reference), within the row's limits. */
const estimateRow = (pair, target, options = {}) =>
  estimate({
    pair,
    target,
    minPairs: target === undefined ? REFERENCE_PAIRS : MIN_PAIRS,
    maxPairs: MAX_PAIRS,
    maxMillis: ROW_SECONDS * 1000,
    pairTimeoutMillis: PAIR_SECONDS * 1000,
    ...options
  })

/**
 * Runs `use(run)` in a scope of its own, where `run(effect)` runs an effect to
 * a promise and keeps what it acquires (a layer's services, a server) open
 * until `use` is done; the scope closes after.
 */
const withScope = async (use) => {
  const { Effect, Exit, Scope } = await import("effect")
  const scope = Effect.runSync(Scope.make())
  try {
    return await use((effect) => Effect.runPromise(Scope.extend(effect, scope)))
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The time of `node -e 0`, the machine's pace: the median of 9 runs. */
const nodePace = async () => {
  const runs = []
  for (let i = 0; i < 9; i++) runs.push((await timed(`${q(process.execPath)} -e 0`)).ms)
  return median(runs)
}

/**
 * Capture runs keep their output in a directory of their own, removed after
 * each run so that its dirty pages do not slow the next (cat overwrites one
 * file); the files read and searched stay in `spill` with their manifests.
 */
const captures = Path.join(data, `captures-${process.pid}`)
const dropCaptured = () => Fs.rmSync(captures, { recursive: true, force: true })

const saveWithSpillway = (file) => {
  const out = execFileSync(process.execPath, [bin, "run", "--json", "--", "cat", file], { env, maxBuffer: 16 * MiB })
  return JSON.parse(out.toString()).filename
}

const q = (s) => `'${s.replace(/'/g, "'\\''")}'`
const node = q(process.execPath)
const spillway = `${node} ${q(bin)}`
/** The command, keeping what it captures apart from the files read back. */
const capturing = `SPILLWAY_OUTPUT_DIR=${q(captures)} ${spillway}`

const log = Path.join(data, `log-${size / MiB}m.txt`)
const logfmt = Path.join(data, `logfmt-${size / MiB}m.txt`)
const lines = Path.join(data, `lines-${deepLines}.txt`)
console.error(`preparing files in ${Path.relative(process.cwd(), data)} ...`)
makeLog(log, size)
makeLogfmt(logfmt, size)
makeLines(lines, deepLines)
const logName = saveWithSpillway(log)
const linesName = saveWithSpillway(lines)
const out = Path.join(data, "cat-out.txt")
const deep = deepLines - 1000

const only = (process.env.ONLY ?? "").split(",").filter((x) => x !== "")
const want = (name) => only.length === 0 || only.includes(name)

const rows = []
/** A row of pairs: the estimator's result, its target in words, the unit of its two sides, and more to say beside it. */
const addPairs = (name, result, target, unit = "ms", note = "") => {
  rows.push({ name, result, target, unit, note })
  const own = result.decideBy === "ours" ? `${formatInterval(result.own, ` ${unit}`)}, ` : ""
  console.error(`${name}: ${own}${formatInterval(result.ratio)} in ${result.pairs} pairs, ${formatVerdict(result.verdict)}`)
}
/** A row of one figure of ours (a throughput, a peak): the figure, the runs it came from (for their range), its goal, the verdict. */
const addFigure = (name, value, values, target, state, unit, note = "") => {
  rows.push({ name, value, values, target, state, unit, note })
  console.error(`${name}: ${value.toFixed(1)} ${unit}, ${state}`)
}

// the machine's pace and load as the run starts, for the summary
const startedAt = { pace: await nodePace(), load: Os.loadavg() }

if (want("serve")) {
  // The web view: the page showing the last line of a 256 MiB saved output
  // against the page showing its first, from a real `spillway serve`.
  const server = spawn(process.execPath, [bin, "serve", "--port", "0"], { env, stdio: ["ignore", "pipe", "inherit"] })
  const url = await new Promise((resolve, reject) => {
    let out = ""
    server.stdout.on("data", (d) => {
      out += d
      if (out.includes("\n")) resolve(out.split("\n")[0].trim().replace(/\/$/, ""))
    })
    server.once("exit", (code) => reject(new Error(`spillway serve exited ${code}`)))
  })
  const total = (await (await fetch(`${url}/api/view/${logName}`)).json()).lines
  const show = async (line) => {
    const started = performance.now()
    const page = await (await fetch(`${url}/view/${logName}?line=${line}`)).text()
    const ms = performance.now() - started
    if (!page.includes(`id="L${line}"`)) throw new Error(`the page for line ${line} does not show it`)
    return ms
  }
  for (let i = 0; i < 3; i++) {
    await show(1)
    await show(total)
  }
  try {
    const r = await estimateRow((oursFirst) => inOrder(oursFirst, () => show(total), () => show(1)), 2, { minPairs: 20 })
    addPairs(`spillway serve, ${size / MiB} MiB output: page at its last line (${total}) vs at its first`, r, "≤ 2x")
  } finally {
    server.kill("SIGTERM")
  }
}
if (want("capture")) {
  const r = await estimateRow(processPair(`${capturing} run -- cat ${q(log)} > /dev/null`, `cat ${q(log)} > ${q(out)}`, dropCaptured), 2.5)
  addPairs(`capture ${size / MiB} MiB: spillway run -- cat F > /dev/null vs cat F > out`, r, "≤ 2.5x")
}
if (want("capture")) {
  const r = await estimateRow(processPair(`${capturing} run -- cat ${q(logfmt)} > /dev/null`, `cat ${q(logfmt)} > ${q(out)}`, dropCaptured), 2.5)
  addPairs(`capture ${size / MiB} MiB of logfmt lines: spillway run -- cat F > /dev/null vs cat F > out`, r, "≤ 2.5x")
}
if (want("capture")) {
  // the floor under both: a Node program that only copies the pipe to a file (no masking, no index, no Effect)
  const copy = q(Path.join(root, "pipe-copy.cjs"))
  const r = await estimateRow(processPair(`${node} ${copy} ${q(log)} ${q(out)}.copy`, `cat ${q(log)} > ${q(out)}`), undefined)
  Fs.rmSync(`${out}.copy`, { force: true })
  addPairs(`floor of capture ${size / MiB} MiB: a Node pipe-to-file copy vs cat F > out`, r, "reference")
  // what a pipe alone costs, with no Node at all: a second cat between the command and the file
  const piped = await estimateRow(processPair(`cat ${q(log)} | cat > ${q(out)}.piped`, `cat ${q(log)} > ${q(out)}`), undefined)
  Fs.rmSync(`${out}.piped`, { force: true })
  addPairs(`a pipe alone, ${size / MiB} MiB: cat F piped to cat > out vs cat F > out`, piped, "reference")
}
if (want("masking")) {
  // The masker alone, on one thread, over the same files in 1 MiB chunks: the
  // best of 7 runs, in processor time (the wall clock counts other work on the machine).
  const { Secrets } = await import("@spillway/core")
  const masker = Secrets.unsafeMakeMasker()
  // `seen` goes through the stream first, untimed: lines whose secrets the stream then remembers
  const throughput = (file, using = masker, seen = new Uint8Array(0)) => {
    const body = Fs.readFileSync(file)
    const rates = []
    for (let i = 0; i < 7; i++) {
      // as the body store masks: the output buffer reused, so the time is the masking, not collecting buffers
      const stream = using.stream(undefined, { reuseOutput: true })
      stream.push(seen)
      const started = process.cpuUsage()
      for (let at = 0; at < body.length; at += MiB) stream.push(body.subarray(at, at + MiB))
      stream.end()
      const used = process.cpuUsage(started)
      rates.push(body.length / MiB / ((used.user + used.system) / 1e6))
    }
    return rates
  }
  /** A masking row: the best of its 7 runs against the goal, with their range. */
  const addRate = (name, rates) => {
    const best = Math.max(...rates)
    addFigure(name, best, rates, "≥ 1000 MB/s (best of 7)", best >= 1000 ? "met" : "not met", "MB/s")
  }
  addRate("masking throughput, log lines (one thread)", throughput(log))
  addRate("masking throughput, logfmt lines (one thread)", throughput(logfmt))

  // the same values every run: a small generator with a fixed seed
  let seed = 0x2545f491
  const random = (alphabet, length) => {
    let out = ""
    for (let i = 0; i < length; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      out += alphabet[(seed >>> 8) % alphabet.length]
    }
    return out
  }
  const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
  // values as an environment holds them: tokens, keys and passwords of 12 to 40 bytes
  const knownValues = [
    `ghp_${random(alnum, 36)}`,
    `sk_live_${random(alnum, 24)}`,
    `xoxb-${random("0123456789", 12)}-${random(alnum, 16)}`,
    random(alnum, 32),
    `AKIA${random("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)}`,
    `Pa55-${random(alnum, 9)}!`,
    `correct-horse-${random("abcdefghijklmnopqrstuvwxyz", 8)}`,
    random("0123456789abcdef", 40),
    `${random(alnum, 10)}%${random(alnum, 10)}`,
    `db-p@ss_${random(alnum, 14)}`
  ]
  const knowing = Secrets.unsafeMakeMasker({ knownValues })
  // a masker that masks nothing is fast: check that it masks them first
  for (const value of knownValues) {
    if (knowing.maskText(`value: ${value}`).includes(value)) throw new Error(`the known value ${value} was not masked`)
  }
  addRate("masking throughput with 10 known values, log lines (one thread)", throughput(log, knowing))

  // 50 distinct secrets masked under their keys early in the stream, remembered for the rest of it
  const secrets = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? `ghp_${random(alnum, 36)}` : random(alnum, 24)))
  const seen = new TextEncoder().encode(
    secrets.map((secret, i) => (i % 2 === 0 ? `export SERVICE_${i}_TOKEN=${secret}\n` : `export SERVICE_${i}_PASSWORD="${secret}"\n`)).join("")
  )
  // ... and looked for again: a bare copy of the last one after them is masked
  const check = masker.stream()
  const shown = new TextDecoder().decode(Buffer.concat([check.push(seen), check.push(new TextEncoder().encode(`echo ${secrets[49]}\n`)), check.end()]))
  if (secrets.some((secret) => shown.includes(secret))) throw new Error("a secret seen earlier in the stream was not masked")
  addRate("masking throughput after 50 secrets were seen, log lines (one thread)", throughput(log, masker, seen))
}
if (want("read")) {
  const r = await estimateRow(processPair(
    `${spillway} read ${q(linesName)} --offset ${deep} --limit 50 > /dev/null`,
    `sed -n '${deep},${deep + 49}p' ${q(lines)} > /dev/null`
  ), 1)
  addPairs(`deep read, line ${deep} of ${deepLines}: spillway read vs sed -n`, r, "faster than sed (≤ 1x)")
}
if (want("grep")) {
  const r = await estimateRow(processPair(
    // both exit 1 when nothing matches (a small SIZE_MIB plants no failure), 2 on an error
    `${spillway} grep 'error: unit [0-9]+ failed' ${q(logName)} > ${q(out)} || [ $? -eq 1 ]`,
    `grep -nE 'error: unit [0-9]+ failed' ${q(log)} > ${q(out)} || [ $? -eq 1 ]`
  ), 1.5)
  addPairs(`grep ${size / MiB} MiB: spillway grep vs grep -n`, r, "≤ 1.5x")
  // a pattern whose longest literal (` failed`) is common in the log and whose other (`unit 4`) is rare
  const rarer = await estimateRow(processPair(
    `${spillway} grep 'unit 4[0-9]{2} failed' ${q(logName)} > ${q(out)} || [ $? -eq 1 ]`,
    `grep -nE 'unit 4[0-9]{2} failed' ${q(log)} > ${q(out)} || [ $? -eq 1 ]`
  ), 1.5)
  addPairs(`grep ${size / MiB} MiB, the rarer of two literals (unit 4[0-9]{2} failed): spillway grep vs grep -n`, rarer, "≤ 1.5x")
  // a literal on every line (`.ts`) that no line matches: blocks are tested whole by RE2
  const dense = await estimateRow(processPair(
    `${spillway} grep '[0-9]{7}[.]ts' ${q(logName)} > ${q(out)} || [ $? -eq 1 ]`,
    `grep -nE '[0-9]{7}[.]ts' ${q(log)} > ${q(out)} || [ $? -eq 1 ]`
  ), undefined, { maxPairs: 12 })
  addPairs(`grep ${size / MiB} MiB, a literal on every line and no match ([0-9]{7}[.]ts): spillway grep vs grep -n`, dense, "reference")
}
if (want("startup")) {
  const r = await estimateRow(processPair(`${capturing} run -- true`, `${node} -e 0`, dropCaptured), 1.8, { minPairs: 20 })
  addPairs("start-up: spillway run -- true vs node -e 0", r, "≤ 1.8x")
  // nearly every command prints something: a short output is masked before it is shown
  const shown = await estimateRow(processPair(`${capturing} run -- echo hi`, `${node} -e 0`, dropCaptured), 1.8, { minPairs: 20 })
  addPairs("start-up with a short output: spillway run -- echo hi vs node -e 0", shown, "≤ 1.8x")
  // a long output's fixed cost: the run program, the store, the masker's tables and the manifest, for 2 MiB
  const long = await estimateRow(processPair(`${capturing} run -- head -c ${2 * MiB} ${q(log)} > /dev/null`, `${node} -e 0`, dropCaptured), undefined, { minPairs: 20 })
  addPairs(`start of a long output: spillway run -- head -c 2 MiB F vs node -e 0`, long, "reference")
}
if (want("memory")) {
  const parts = Array.from({ length: Math.ceil((memGiB * 1024 * MiB) / size) }, () => q(log)).join(" ")
  // an absolute row: the peak of each run, met when every run stays under the limit, not met when none does
  const peaks = []
  for (let i = 0; i < MEM_RUNS; i++) {
    peaks.push((await timed(`${capturing} run -- cat ${parts} > /dev/null`)).kib / 1024)
    dropCaptured()
  }
  const cat = (await timed(`cat ${parts} > /dev/null`)).kib / 1024
  const state = Math.max(...peaks) < 100 ? "met" : Math.min(...peaks) >= 100 ? "not met" : `undecided: runs on both sides of the limit`
  addFigure(`peak memory, spillway run on ${memGiB} GiB of output (${MEM_RUNS} runs)`, median(peaks), peaks, "< 100 MiB", state, "MiB", `cat alone: ${cat.toFixed(1)} MiB`)
}

if (want("mcp")) {
  // A short tool call through MCP: `run_command` of `echo hi` from the official
  // client, to `spillway mcp` and to mcp-server-commands (a server that keeps
  // nothing), calls alternating between the two. The row holds our median to
  // 4 ms; the ratio to theirs is printed beside it.
  const { connect } = await import("./mcp-call.mjs")
  const dir = Path.join(data, "mcp")
  Fs.rmSync(dir, { recursive: true, force: true })
  const ours = await connect("spillway", Path.join(dir, "spillway"))
  const theirs = await connect("commands", Path.join(dir, "commands"))
  try {
    const first = { ours: await ours.call("echo hi", "hi"), theirs: await theirs.call("echo hi", "hi") }
    const r = await estimateRow(
      (oursFirst) => inOrder(oursFirst, () => ours.call("echo hi", "hi"), () => theirs.call("echo hi", "hi")),
      4,
      { decideBy: "ours", minPairs: 50, maxPairs: 1600, warmup: 5 }
    )
    addPairs(
      "run_command of echo hi through MCP: spillway mcp vs mcp-server-commands (median ≤ 4 ms)",
      r,
      "≤ 4 ms",
      "ms",
      `first call ${first.ours.toFixed(1)} ms (theirs ${first.theirs.toFixed(1)} ms); connected in ${ours.connectMs.toFixed(0)} ms (theirs ${theirs.connectMs.toFixed(0)} ms)`
    )
  } finally {
    await ours.close()
    await theirs.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

if (want("salience")) {
  // The salience pass rides on the masker's scan; measure capture in-process
  // (no child process, so less noise) with and without it.
  const { Effect, Layer } = await import("effect")
  const { Access, Secrets, Spill, SpillPolicy } = await import("@spillway/core")
  const { NodeSpill } = await import("@spillway/node")
  const body = Fs.readFileSync(log)
  const chunks = []
  for (let i = 0; i < body.length; i += 65536) chunks.push(body.subarray(i, i + 65536))
  const directory = Path.join(data, "capture")
  const capture = async (salience) => {
    const layer = NodeSpill.layerWithout({ directory, ...(salience ? {} : { salience: false }) }).pipe(
      Layer.provide(Layer.mergeAll(SpillPolicy.allowAll, Secrets.layer({}), Access.allowOwners))
    )
    const started = process.cpuUsage()
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const c = yield* (yield* Spill.SpillWrite).capture()
      for (const chunk of chunks) yield* c.write(chunk)
      return yield* c.finish(0)
    })).pipe(Effect.provide(layer)))
    const used = process.cpuUsage(started)
    Fs.rmSync(directory, { recursive: true, force: true })
    return (used.user + used.system) / 1000
  }
  // The cost of the section is the processor time it adds: both sides write
  // 256 MiB each time, and the disk's write-back makes their wall times vary
  // by more than the difference. The median of each pair's own ratio: the
  // machine's pace drifts between pairs more than within one.
  const r = await estimateRow((oursFirst) => inOrder(oursFirst, () => capture(true), () => capture(false)), 1.1)
  addPairs(`capture ${size / MiB} MiB in-process: with vs without salient lines (processor time)`, r, "≤ 1.1x")
}

if (want("evidence")) {
  // Serving a page deep in kept evidence must not cost more than at its
  // start: the code-point checkpoints find the byte to read from.
  const { Effect, Layer } = await import("effect")
  const { Evidence } = await import("@spillway/core")
  const { NodeEvidence } = await import("@spillway/node")
  const directory = Path.join(data, "evidence")
  const body = Fs.readFileSync(log).subarray(0, 64 * MiB)
  const me = { owner: "bench", channel: "bench" }
  const layer = NodeEvidence.layer({ directory, maxResultBytes: 64 * MiB, budgetChars: 12_000, pools: { evidence: { bytes: 128 * MiB } } })
  const r = await withScope(async (run) => {
    const context = await run(Layer.build(layer))
    const use = (effect) => run(Effect.provide(effect, context))
    const evidence = await use(Evidence.Evidence)
    const kept = await use(evidence.retain({ ...me, tool: "cat", status: "ok", body }))
    const start = evidence.cursorFor(kept.evidence, 0)
    const end = evidence.cursorFor(kept.evidence, kept.first.total_code_points - 5000)
    const serve = async (cursor) => {
      const t = performance.now()
      await use(evidence.getToolOutput(cursor, me))
      return performance.now() - t
    }
    return estimateRow((oursFirst) => inOrder(oursFirst, () => serve(end), () => serve(start)), 2, { minPairs: 20 })
  }).finally(() => Fs.rmSync(directory, { recursive: true, force: true }))
  addPairs(`evidence page at the end of ${Math.min(64, size / MiB)} MiB vs at its start`, r, "≤ 2x")
}

if (want("spool")) {
  // A process job's spool against the shell's own redirect of the same
  // stream, and the status view of a job whose 4 MiB spool is full against
  // `tail -n 50` of the same bytes.
  const { Effect, Layer } = await import("effect")
  const { Process } = await import("@spillway/core")
  const { NodeProcess } = await import("@spillway/node")
  const directory = Path.join(data, "spools")
  const me = { owner: "bench", channel: "bench" }
  const logBytes = Fs.statSync(log).size
  /** Wall time and this process's processor time of one job from start to the view of its end. */
  const spoolOnce = (options) =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(NodeProcess.layer({ directory, pools: { spool: { bytes: 2 * logBytes } }, ...options }))
      const started = performance.now()
      const cpu = process.cpuUsage()
      const { pid } = yield* Process.start(me, { command: "cat", args: [log] }).pipe(Effect.provide(context))
      const v = yield* Process.wait(me, { pid, timeoutMillis: 600_000 }).pipe(Effect.provide(context))
      if (v.retention.emitted_bytes !== logBytes) throw new Error("the spool did not count every byte")
      if (options.captureLimitBytes === logBytes && v.retention.retained_bytes !== logBytes) throw new Error("the spool did not keep every byte")
      const used = process.cpuUsage(cpu)
      return { ms: performance.now() - started, cpu: (used.user + used.system) / 1000 }
    }))).finally(() => Fs.rmSync(directory, { recursive: true, force: true }))
  const spooled = await estimateRow((oursFirst) =>
    inOrder(oursFirst, async () => (await spoolOnce({ captureLimitBytes: logBytes })).ms, async () => (await timed(`cat ${q(log)} > ${q(out)}`)).ms), 2)
  addPairs(`spool ${size / MiB} MiB: process job vs cat F > out`, spooled, "≤ 2x")
  // the default head (4 MiB), with and without the 1 MiB window of newest output: the processor time the window adds
  const windowed = await estimateRow((oursFirst) =>
    inOrder(oursFirst, async () => (await spoolOnce({ tailBytes: MiB })).cpu, async () => (await spoolOnce({ tailBytes: 0 })).cpu), 1.1)
  addPairs(`spool ${size / MiB} MiB past a 4 MiB head: 1 MiB window of newest output vs none (processor time)`, windowed, "≤ 1.1x")

  const head4 = Path.join(data, "head-4m.txt")
  Fs.writeFileSync(head4, Fs.readFileSync(log).subarray(0, 4 * MiB))
  const status = await withScope(async (run) => {
    const context = await run(Layer.build(NodeProcess.layer({ directory })))
    const use = (effect) => run(Effect.provide(effect, context))
    // exactly the capture limit, so the spool is full and the view reads its newest lines
    const { pid } = await use(Process.start(me, { command: "head", args: ["-c", String(4 * MiB), log] }))
    const v = await use(Process.wait(me, { pid, timeoutMillis: 600_000 }))
    if (v.retention.retained_bytes !== 4 * MiB || v.retention.shown_intervals.length !== 1) throw new Error("the spool is not full")
    const poll = async () => {
      const t = performance.now()
      await use(Process.poll(me, { pid }))
      return performance.now() - t
    }
    return estimateRow((oursFirst) => inOrder(oursFirst, poll, async () => (await timed(`tail -n 50 ${q(head4)} > /dev/null`)).ms), 1, { minPairs: 20 })
  }).finally(() => Fs.rmSync(directory, { recursive: true, force: true }))
  addPairs("status view of a full 4 MiB spool vs tail -n 50", status, "faster than tail (≤ 1x)")
}

if (want("lease")) {
  // Paging a 4 MiB spool through a lease (a host over stdio, one RPC per
  // page) against paging the same spool locally, both 8,000-byte pages.
  const { Effect, Layer } = await import("effect")
  const { Access, Cursor, Process, Secrets } = await import("@spillway/core")
  const { NodeBodies, NodeChild } = await import("@spillway/node")
  const { Controller } = await import("@spillway/remote")
  const root = Path.join(data, "remote")
  Fs.rmSync(root, { recursive: true, force: true })
  Fs.mkdirSync(root, { recursive: true })
  const credentials = Path.join(root, "credentials.json")
  // a host refuses credentials shorter than 16 characters
  const credential = "bench-credential-0123456789"
  Fs.writeFileSync(credentials, JSON.stringify({ credentials: { [credential]: "bench" } }))
  const hostDir = Path.join(root, "host")
  const me = { owner: "bench", channel: "bench" }
  const pageAll = (poll, first) =>
    Effect.gen(function*() {
      let cursor = first
      let bytes = 0
      const started = performance.now()
      while (cursor !== undefined) {
        const page = yield* poll(cursor)
        bytes += page.shown_bytes
        cursor = page.truncated ? page.next_cursor : undefined
      }
      return { ms: performance.now() - started, bytes }
    })
  const r = await withScope(async (run) => {
    const remote = await run(Layer.build(Controller.layer().pipe(
      Layer.provideMerge(Controller.layerStdio(process.execPath, [bin, "host", "--stdio", "--dir", hostDir, "--credentials", credentials]))
    )))
    const leased = await run(Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(remote)))
    const job = await run(leased.start({ command: `head -c ${4 * MiB} '${log}'` }))
    const view = await run(leased.wait(job.pid, 600_000))
    // the same spool, read here: the host's records, spools and cursor key
    // built in this scope, so the manager's store stays open while it pages
    const localContext = await run(Layer.build(Layer.mergeAll(
      NodeChild.layer(),
      Cursor.layerKey(new Uint8Array(Fs.readFileSync(Path.join(hostDir, "cursor.key"))))
    ).pipe(
      Layer.provideMerge(NodeBodies.layerWithout({ directory: Path.join(hostDir, "spools") })),
      Layer.provideMerge(Layer.mergeAll(Secrets.layer({}), Access.allowOwners))
    )))
    const local = await run(Process.make().pipe(Effect.provide(localContext)))
    const caller = { owner: me.owner, channel: JSON.stringify([leased.scope, me.channel]) }
    /** The time of paging the whole spool one way, after checking it read every byte. */
    const paging = (poll) => async () => {
      const { ms, bytes } = await run(pageAll(poll, view.retention.cursor))
      if (bytes !== 4 * MiB) throw new Error("a paging did not read the whole spool")
      return ms
    }
    return estimateRow((oursFirst) =>
      inOrder(
        oursFirst,
        paging((cursor) => leased.poll(job.pid, { cursor, limit: 8_000 })),
        paging((cursor) => local.poll(caller, { pid: job.pid, cursor, limit: 8_000 }))
      ), 3)
  }).finally(() => Fs.rmSync(root, { recursive: true, force: true }))
  addPairs("paging a 4 MiB spool: through a lease (stdio host) vs locally", r, "≤ 3x")
}

const fmt = (x, unit) =>
  x === undefined || Number.isNaN(x)
    ? "-"
    : unit === "MiB"
      ? `${x.toFixed(1)} MiB`
      : unit === "MB/s"
        ? `${x.toFixed(0)} MB/s`
        : x < 1
          ? `${x.toFixed(3)} ms`
          : x < 10
            ? `${x.toFixed(2)} ms`
            : `${x.toFixed(0)} ms`
/** A row's verdict: its state (met, not met, undecided, reference), and in words with the pairs it would need. */
const stateOf = (r) => (r.result === undefined ? r.state : r.result.verdict.state)
const verdictOf = (r) => (r.result === undefined ? r.state : formatVerdict(r.result.verdict))
/** A row's cells: our figure, the anchor's, the ratio with its interval, the target, the pairs, the verdict. */
const cells = (r) => {
  if (r.result === undefined) {
    const range = r.values.length > 1 ? ` [${fmt(Math.min(...r.values), r.unit)}–${fmt(Math.max(...r.values), r.unit)}]` : ""
    return [r.name, `${fmt(r.value, r.unit)}${range}`, "-", "-", r.target, `${r.values.length} runs`, r.state]
  }
  const x = r.result
  // a row held to an absolute target shows our median's own interval
  const ours = x.decideBy === "ours" ? `${fmt(x.own.median, r.unit)} [${fmt(x.own.lower, r.unit)}–${fmt(x.own.upper, r.unit)}]` : fmt(x.ours, r.unit)
  return [r.name, ours, fmt(x.theirs, r.unit), formatInterval(x.ratio), r.target, String(x.pairs), verdictOf(r)]
}
const header = ["benchmark", "spillway", "anchor", "ratio [interval]", "target", "pairs", "verdict"]
const table = rows.map(cells)
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)))
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`
console.log(line(header))
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`)
for (const row of table) console.log(line(row))
for (const r of rows.filter((r) => r.note !== "")) console.log(`${r.name}: ${r.note}`)

// the summary: every row's verdict, and the machine it was measured on
const endedAt = { pace: await nodePace(), load: Os.loadavg() }
const count = (state) => rows.filter((r) => stateOf(r).startsWith(state)).length
const load = (l) => l.map((x) => x.toFixed(2)).join(" ")
console.log("")
console.log(
  `intervals: the median of the pairs' own ratios, with an order-statistics interval for it; a row looks at its first pairs ` +
    `(${MIN_PAIRS} unless told) and again each time they double, up to ${MAX_PAIRS} (${looksOf(MIN_PAIRS, MAX_PAIRS)} looks), ` +
    `each look's interval at 1 - 5% / looks, so a row is called wrong in at most 5% of runs; ${ROW_SECONDS} s at most a row`
)
console.log(`summary: ${count("met")} met, ${count("not met")} not met, ${count("undecided")} undecided, ${count("reference")} references`)
for (const r of rows) console.log(`  ${r.name}: ${verdictOf(r)}`)
console.log(
  `environment: node ${process.version}, ${Os.cpus().length} cores; node -e 0 took ` +
    `${startedAt.pace.toFixed(0)} ms at the start, ${endedAt.pace.toFixed(0)} ms at the end; load average ${load(startedAt.load)} at the start, ${load(endedAt.load)} at the end`
)
Fs.rmSync(out, { force: true })
for (const name of [logName, linesName]) {
  for (const f of [name, `.${name}.idx`]) Fs.rmSync(Path.join(spill, f), { force: true })
}
