// Benchmarks `spillway` against the tools a user would otherwise pick, as
// ratios measured in one run on the same files. Not part of the tests.
//
//   pnpm bench                 all benchmarks
//   SIZE_MIB=64 pnpm bench     smaller files for a quick look
//   ROUNDS=60 pnpm bench       more rounds for the two overhead rows (40 by default)
//   ONLY=spool,lease pnpm bench  some of them: capture, read, grep, startup,
//                              memory, salience, evidence, spool, lease,
//                              masking, serve
/* global fetch */
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.dirname(fileURLToPath(import.meta.url))
const data = Path.join(root, ".data")
const spill = Path.join(data, "spill")
const bin = Path.join(root, "..", "packages", "cli", "bin", "spillway.cjs")
const MiB = 1024 * 1024
const size = Number(process.env.SIZE_MIB ?? 256) * MiB
const deepLines = Number(process.env.DEEP_LINES ?? 2_000_000)
const memGiB = Number(process.env.MEM_GIB ?? 1)
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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Rounds of the two overhead rows (failure lines, a job's window): each side once a round, the order alternating. */
const ROUNDS = Number(process.env.ROUNDS ?? 40)

/** Median wall time of `runs` alternating runs of two commands; `after` runs untimed after each of ours. */
const compare = async (ours, theirs, runs, after = () => {}) => {
  const a = []
  const b = []
  for (let i = 0; i < runs; i++) {
    a.push((await timed(ours)).ms)
    after()
    b.push((await timed(theirs)).ms)
  }
  return { ours: median(a), theirs: median(b) }
}

/**
 * Capture runs keep their output in a directory of their own, removed after
 * each run so that its dirty pages do not slow the next (cat overwrites one
 * file); the files read and searched stay in `spill` with their manifests.
 */
const captures = Path.join(data, "captures")
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
/** A row; `ratio` when it is not ours / theirs (the median of paired ratios, say). */
const add = (name, ours, theirs, target, ok, unit = "ms", ratio = undefined) => rows.push({ name, ours, theirs, target, ok, unit, ratio })

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
  const first = []
  const last = []
  for (let i = 0; i < 21; i++) {
    first.push(await show(1))
    last.push(await show(total))
  }
  server.kill("SIGTERM")
  const a = median(last)
  const b = median(first)
  add(`spillway serve, ${size / MiB} MiB output: page at its last line vs at its first`, a, b, "within 2x", a / b <= 2)
  console.log(`spillway serve: the last line (${total}) of ${size / MiB} MiB shown in ${a.toFixed(1)} ms, the first in ${b.toFixed(1)} ms (${(a / b).toFixed(2)}x)`)
}
if (want("capture")) {
  const r = await compare(`${capturing} run -- cat ${q(log)} > /dev/null`, `cat ${q(log)} > ${q(out)}`, 5, dropCaptured)
  add(`capture ${size / MiB} MiB: spillway run -- cat F vs cat F > out`, r.ours, r.theirs, "within 2x", r.ours / r.theirs <= 2)
}
if (want("capture")) {
  const r = await compare(`${capturing} run -- cat ${q(logfmt)} > /dev/null`, `cat ${q(logfmt)} > ${q(out)}`, 5, dropCaptured)
  add(`capture ${size / MiB} MiB of logfmt lines: spillway run -- cat F vs cat F > out`, r.ours, r.theirs, "within 2x", r.ours / r.theirs <= 2)
}
if (want("capture")) {
  // the floor under both: a Node program that only copies the pipe to a file (no masking, no index, no Effect)
  const copy = q(Path.join(root, "pipe-copy.cjs"))
  const r = await compare(`${node} ${copy} ${q(log)} ${q(out)}.copy`, `cat ${q(log)} > ${q(out)}`, 5)
  Fs.rmSync(`${out}.copy`, { force: true })
  add(`floor of capture ${size / MiB} MiB: a Node pipe-to-file copy vs cat F > out`, r.ours, r.theirs, "reference", undefined)
  // what a pipe alone costs, with no Node at all: a second cat between the command and the file
  const piped = await compare(`cat ${q(log)} | cat > ${q(out)}.piped`, `cat ${q(log)} > ${q(out)}`, 5)
  Fs.rmSync(`${out}.piped`, { force: true })
  add(`a pipe alone, ${size / MiB} MiB: cat F piped to cat > out vs cat F > out`, piped.ours, piped.theirs, "reference", undefined)
}
if (want("masking")) {
  // The masker alone, on one thread, over the same files in 1 MiB chunks: the
  // best of 7 runs, in processor time (the wall clock counts other work on the machine).
  const { Secrets } = await import("@spillway/core")
  const masker = Secrets.unsafeMakeMasker()
  // `seen` goes through the stream first, untimed: lines whose secrets the stream then remembers
  const throughput = (file, using = masker, seen = new Uint8Array(0)) => {
    const body = Fs.readFileSync(file)
    let best = Infinity
    for (let i = 0; i < 7; i++) {
      // as the body store masks: the output buffer reused, so the time is the masking, not collecting buffers
      const stream = using.stream(undefined, { reuseOutput: true })
      stream.push(seen)
      const started = process.cpuUsage()
      for (let at = 0; at < body.length; at += MiB) stream.push(body.subarray(at, at + MiB))
      stream.end()
      const used = process.cpuUsage(started)
      best = Math.min(best, (used.user + used.system) / 1e6)
    }
    return body.length / MiB / best
  }
  const plain = throughput(log)
  add("masking throughput, log lines (one thread)", plain, undefined, "goal 1000 MB/s", plain >= 1000, "MB/s")
  const pairs = throughput(logfmt)
  add("masking throughput, logfmt lines (one thread)", pairs, undefined, "goal 1000 MB/s", pairs >= 1000, "MB/s")

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
  const known = throughput(log, knowing)
  add("masking throughput with 10 known values, log lines (one thread)", known, undefined, "goal 1000 MB/s", known >= 1000, "MB/s")

  // 50 distinct secrets masked under their keys early in the stream, remembered for the rest of it
  const secrets = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? `ghp_${random(alnum, 36)}` : random(alnum, 24)))
  const seen = new TextEncoder().encode(
    secrets.map((secret, i) => (i % 2 === 0 ? `export SERVICE_${i}_TOKEN=${secret}\n` : `export SERVICE_${i}_PASSWORD="${secret}"\n`)).join("")
  )
  // ... and looked for again: a bare copy of the last one after them is masked
  const check = masker.stream()
  const shown = new TextDecoder().decode(Buffer.concat([check.push(seen), check.push(new TextEncoder().encode(`echo ${secrets[49]}\n`)), check.end()]))
  if (secrets.some((secret) => shown.includes(secret))) throw new Error("a secret seen earlier in the stream was not masked")
  const remembered = throughput(log, masker, seen)
  add("masking throughput after 50 secrets were seen, log lines (one thread)", remembered, undefined, "goal 1000 MB/s", remembered >= 1000, "MB/s")
}
if (want("read")) {
  const r = await compare(
    `${spillway} read ${q(linesName)} --offset ${deep} --limit 50 > /dev/null`,
    `sed -n '${deep},${deep + 49}p' ${q(lines)} > /dev/null`,
    7
  )
  add(`deep read, line ${deep} of ${deepLines}: spillway read vs sed -n`, r.ours, r.theirs, "faster than sed", r.ours < r.theirs)
}
if (want("grep")) {
  const r = await compare(
    // both exit 1 when nothing matches (a small SIZE_MIB plants no failure), 2 on an error
    `${spillway} grep 'error: unit [0-9]+ failed' ${q(logName)} > ${q(out)} || [ $? -eq 1 ]`,
    `grep -nE 'error: unit [0-9]+ failed' ${q(log)} > ${q(out)} || [ $? -eq 1 ]`,
    5
  )
  add(`grep ${size / MiB} MiB: spillway grep vs grep -n`, r.ours, r.theirs, "within 3x", r.ours / r.theirs <= 3)
}
if (want("startup")) {
  const r = await compare(`${capturing} run -- true`, `${node} -e 0`, 15, dropCaptured)
  add("startup: spillway run -- true vs node -e 0", r.ours, r.theirs, "within 2.5x", r.ours / r.theirs <= 2.5)
}
if (want("memory")) {
  const parts = Array.from({ length: Math.ceil((memGiB * 1024 * MiB) / size) }, () => q(log)).join(" ")
  const m = await timed(`${capturing} run -- cat ${parts} > /dev/null`)
  dropCaptured()
  const c = await timed(`cat ${parts} > /dev/null`)
  add(`peak memory, spillway run on ${memGiB} GiB of output`, m.kib / 1024, c.kib / 1024, "under 150 MiB", m.kib / 1024 < 150, "MiB")
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
  // by more than the difference. The median of the ratios of ROUNDS
  // alternating pairs, each side first in half of them, after one of each to warm up.
  const without = []
  const withSalience = []
  await capture(false)
  await capture(true)
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      without.push(await capture(false))
      withSalience.push(await capture(true))
    } else {
      withSalience.push(await capture(true))
      without.push(await capture(false))
    }
  }
  // the ratio is the median of each round's own ratio: the machine's pace drifts between rounds more than within one
  const a = median(withSalience)
  const b = median(without)
  const ratio = median(withSalience.map((w, i) => w / without[i]))
  add(`capture ${size / MiB} MiB in-process: with vs without salient lines (processor time)`, a, b, "within 1.1x", ratio <= 1.1, "ms", ratio)
}

if (want("evidence")) {
  // Serving a page deep in kept evidence must not cost more than at its
  // start: the code-point checkpoints find the byte to read from.
  const { Effect } = await import("effect")
  const { Evidence } = await import("@spillway/core")
  const { NodeEvidence } = await import("@spillway/node")
  const directory = Path.join(data, "evidence")
  const body = Fs.readFileSync(log).subarray(0, 64 * MiB)
  const me = { owner: "bench", channel: "bench" }
  const layer = NodeEvidence.layer({ directory, maxResultBytes: 64 * MiB, budgetChars: 12_000, pools: { evidence: { bytes: 128 * MiB } } })
  const times = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const evidence = yield* Evidence.Evidence
    const kept = yield* evidence.retain({ ...me, tool: "cat", status: "ok", body })
    const start = evidence.cursorFor(kept.evidence, 0)
    const end = evidence.cursorFor(kept.evidence, kept.first.total_code_points - 5000)
    const serve = (cursor) => Effect.gen(function*() {
      const t = performance.now()
      yield* evidence.getToolOutput(cursor, me)
      return performance.now() - t
    })
    const a = []
    const b = []
    for (let i = 0; i < 21; i++) {
      b.push(yield* serve(start))
      a.push(yield* serve(end))
    }
    return { end: median(a), start: median(b) }
  })).pipe(Effect.provide(layer)))
  Fs.rmSync(directory, { recursive: true, force: true })
  add("evidence page at the end of 64 MiB vs at its start", times.end, times.start, "within 2x", times.end / times.start <= 2)
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
  const ours = []
  const theirs = []
  for (let i = 0; i < 5; i++) {
    ours.push((await spoolOnce({ captureLimitBytes: logBytes })).ms)
    theirs.push((await timed(`cat ${q(log)} > ${q(out)}`)).ms)
  }
  const a = median(ours)
  const b = median(theirs)
  add(`spool ${size / MiB} MiB: process job vs cat F > out`, a, b, "within 2x", a / b <= 2)
  // the default head (4 MiB), with and without the 1 MiB window of newest output: the
  // processor time the window adds, the median ratio of ROUNDS alternating pairs after one of each
  const withWindow = []
  const withoutWindow = []
  await spoolOnce({ tailBytes: MiB })
  await spoolOnce({ tailBytes: 0 })
  for (let i = 0; i < ROUNDS; i++) {
    const runs = i % 2 === 0 ? [[withWindow, MiB], [withoutWindow, 0]] : [[withoutWindow, 0], [withWindow, MiB]]
    for (const [into, tailBytes] of runs) into.push((await spoolOnce({ tailBytes })).cpu)
  }
  const w = median(withWindow)
  const wo = median(withoutWindow)
  const ratio = median(withWindow.map((x, i) => x / withoutWindow[i]))
  add(`spool ${size / MiB} MiB past a 4 MiB head: 1 MiB window of newest output vs none (processor time)`, w, wo, "within 1.1x", ratio <= 1.1, "ms", ratio)

  const status = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(NodeProcess.layer({ directory }))
    // exactly the capture limit, so the spool is full and the view reads its newest lines
    const { pid } = yield* Process.start(me, { command: "head", args: ["-c", String(4 * MiB), log] }).pipe(Effect.provide(context))
    const v = yield* Process.wait(me, { pid, timeoutMillis: 600_000 }).pipe(Effect.provide(context))
    if (v.retention.retained_bytes !== 4 * MiB || v.retention.shown_intervals.length !== 1) throw new Error("the spool is not full")
    const times = []
    for (let i = 0; i < 51; i++) {
      const t = performance.now()
      yield* Process.poll(me, { pid }).pipe(Effect.provide(context))
      times.push(performance.now() - t)
    }
    return median(times)
  }))).finally(() => Fs.rmSync(directory, { recursive: true, force: true }))
  const head4 = Path.join(data, "head-4m.txt")
  Fs.writeFileSync(head4, Fs.readFileSync(log).subarray(0, 4 * MiB))
  const tails = []
  for (let i = 0; i < 15; i++) tails.push((await timed(`tail -n 50 ${q(head4)} > /dev/null`)).ms)
  const t = median(tails)
  add("status view of a full 4 MiB spool vs tail -n 50", status, t, "faster than tail", status < t)
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
  const times = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const remote = yield* Layer.build(Controller.layer().pipe(
      Layer.provideMerge(Controller.layerStdio(process.execPath, [bin, "host", "--stdio", "--dir", hostDir, "--credentials", credentials]))
    ))
    const leased = yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(remote))
    const job = yield* leased.start({ command: `head -c ${4 * MiB} '${log}'` })
    const view = yield* leased.wait(job.pid, 600_000)
    const through = []
    for (let i = 0; i < 5; i++) through.push(yield* pageAll((cursor) => leased.poll(job.pid, { cursor, limit: 8_000 }), view.retention.cursor))
    // the same spool, read here: the host's records, spools and cursor key
    // built in this scope, so the manager's store stays open while it pages
    const localContext = yield* Layer.build(Layer.mergeAll(
      NodeChild.layer(),
      Cursor.layerKey(new Uint8Array(Fs.readFileSync(Path.join(hostDir, "cursor.key"))))
    ).pipe(
      Layer.provideMerge(NodeBodies.layerWithout({ directory: Path.join(hostDir, "spools") })),
      Layer.provideMerge(Layer.mergeAll(Secrets.layer({}), Access.allowOwners))
    ))
    const local = yield* Process.make().pipe(Effect.provide(localContext))
    const caller = { owner: me.owner, channel: JSON.stringify([leased.scope, me.channel]) }
    const here = []
    for (let i = 0; i < 5; i++) here.push(yield* pageAll((cursor) => local.poll(caller, { pid: job.pid, cursor, limit: 8_000 }), view.retention.cursor))
    if (through[0].bytes !== 4 * MiB || here[0].bytes !== 4 * MiB) throw new Error("a paging did not read the whole spool")
    return { remote: median(through.map((t) => t.ms)), local: median(here.map((t) => t.ms)) }
  })))
  Fs.rmSync(root, { recursive: true, force: true })
  add("paging a 4 MiB spool: through a lease (stdio host) vs locally", times.remote, times.local, "within 3x", times.remote / times.local <= 3)
}

const fmt = (x, unit) =>
  x === undefined ? "-" : unit === "MiB" ? `${x.toFixed(1)} MiB` : unit === "MB/s" ? `${x.toFixed(0)} MB/s` : x < 1 ? `${x.toFixed(3)} ms` : x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(0)} ms`
const header = ["benchmark", "spillway", "other tool", "ratio", "target", "met"]
const table = rows.map((r) => [
  r.name,
  fmt(r.ours, r.unit),
  fmt(r.theirs, r.unit),
  r.unit === "MiB" || r.theirs === undefined ? "-" : `${(r.ratio ?? r.ours / r.theirs).toFixed((r.ratio ?? r.ours / r.theirs) < 0.1 ? 4 : 2)}x`,
  r.target,
  r.ok === undefined ? "-" : r.ok ? "yes" : "NO"
])
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)))
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`
console.log(line(header))
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`)
for (const row of table) console.log(line(row))
Fs.rmSync(out, { force: true })
for (const name of [logName, linesName]) {
  for (const f of [name, `.${name}.idx`]) Fs.rmSync(Path.join(spill, f), { force: true })
}
