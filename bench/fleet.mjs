// A fleet, simulated and measured: a private PostgreSQL, H hosts
// (`spillway host --listen`, each behind a TCP proxy that can cut it off)
// and C controller processes (bench/fleet-controller.mjs) sharing the
// PostgreSQL records, driven by a load shaped like agents, with faults
// injected while it runs. Every byte read is checked against what the job
// printed (known content, masked where a line holds a secret).
//
//   node bench/fleet.mjs --quick                 3 hosts, 2 controllers: for CI
//   node bench/fleet.mjs --hosts 32 --controllers 4 --conversations 64 --build-kib 1024
//
// Options: --hosts H, --controllers C, --conversations N (conversations in
// all), --build-kib K (size of a build log), --call-ms T (the controllers'
// call timeout), --max-seconds S (no conversation starts after it),
// --no-faults. Needs PostgreSQL's server programs (initdb, pg_ctl:
// scripts/postgres-for-tests.sh installs them). The line before the
// figures' end counts the controllers' answers about which hosts are up and
// the reads served while PostgreSQL was down. The last line it
// prints is the summary; it exits 0 only when no byte was lost, duplicated
// or wrong and every fault was survived. Everything it starts is stopped at
// the end, also on failure or Ctrl-C.
import { execFileSync, fork, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { clearInterval, setInterval, setTimeout } from "node:timers"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const bin = Path.join(here, "..", "packages", "cli", "bin", "spillway.cjs")

// ---- options ---------------------------------------------------------------

const argv = process.argv.slice(2)
const flag = (name) => argv.includes(name)
const option = (name, fallback) => {
  const at = argv.indexOf(name)
  if (at === -1) return fallback
  const value = Number(argv[at + 1])
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} takes a whole number of 1 or more, got ${argv[at + 1]}`)
  return value
}
const quick = flag("--quick")
const H = option("--hosts", quick ? 3 : 32)
const C = option("--controllers", quick ? 2 : 4)
const conversations = option("--conversations", quick ? 12 : H * 3)
const buildKiB = option("--build-kib", quick ? 512 : 2048)
const callMs = option("--call-ms", 5000)
const faultsOn = !flag("--no-faults")
const deadline = Date.now() + option("--max-seconds", quick ? 240 : 1500) * 1000

const log = (...words) => console.log(...words)

// ---- what a job prints, known in advance -------------------------------------

/** The Park-Miller generator awk runs too: the same secret on both sides. */
const secretOf = (seed) => {
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
  let x = (seed % 2147483646) + 1
  let s = "ghp_"
  for (let i = 0; i < 36; i++) {
    x = (x * 16807) % 2147483647
    s += letters[x % 62]
  }
  return s
}

const AWK = `
function secret(seed,   x, s, i, letters) {
  letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
  x = (seed % 2147483646) + 1; s = "ghp_"
  for (i = 0; i < 36; i++) { x = (x * 16807) % 2147483647; s = s substr(letters, (x % 62) + 1, 1) }
  return s
}
BEGIN {
  tok = secret(seed)
  for (i = 1; i <= n; i++) {
    if (i % 997 == 0) printf "[%s %d] step %d/%d deploy with token %s accepted\\n", kind, seed, i, n, tok
    else if (i % 1499 == 0) printf "[%s %d] step %d/%d error: module-%d.ts failed its check, retried\\n", kind, seed, i, n, i
    else printf "[%s %d] step %d/%d compiling src/module-%d.ts ok (%d ms)\\n", kind, seed, i, n, i, (i * 7) % 1000
  }
  printf "[%s %d] done\\n", kind, seed
}`

/** The lines a `short` or `build` job prints, the secret replaced by as many `*` (where any mask may stand). */
const expectedOf = (kind, seed, n) => {
  const tok = secretOf(seed)
  const parts = []
  const secrets = []
  let at = 0
  for (let i = 1; i <= n; i++) {
    let line
    if (i % 997 === 0) {
      const head = `[${kind} ${seed}] step ${i}/${n} deploy with token `
      secrets.push([at + head.length, at + head.length + tok.length])
      line = `${head}${tok} accepted\n`
    } else if (i % 1499 === 0) line = `[${kind} ${seed}] step ${i}/${n} error: module-${i}.ts failed its check, retried\n`
    else line = `[${kind} ${seed}] step ${i}/${n} compiling src/module-${i}.ts ok (${(i * 7) % 1000} ms)\n`
    parts.push(line)
    at += line.length
  }
  parts.push(`[${kind} ${seed}] done\n`)
  return { text: parts.join(""), secrets, secret: tok }
}

/** Lines in a build log of about `kib` KiB. */
const linesFor = (kib) => Math.max(1, Math.round((kib * 1024) / 58))

// ---- processes we start, and how they are all stopped ------------------------

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-fleet-"))
const started = new Set()
let stopping = false

const stopAll = () => {
  if (stopping) return
  stopping = true
  for (const child of started) {
    try {
      child.kill("SIGTERM")
    } catch {
      // already gone
    }
  }
  // jobs the hosts started that outlived a SIGKILLed host: only those whose command names this run's directory
  for (const pid of Fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
      if (cmd.includes(root) && Number(pid) !== process.pid) process.kill(Number(pid), "SIGKILL")
    } catch {
      // gone, or not ours to read
    }
  }
  pg?.stop()
  for (const proxy of proxies) proxy.close()
}
const cleanup = () => {
  stopAll()
  const until = Date.now() + 3000
  while ([...started].some((c) => c.exitCode === null && c.signalCode === null) && Date.now() < until) {
    execFileSync("sleep", ["0.1"])
  }
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  try {
    Fs.rmSync(root, { recursive: true, force: true })
  } catch {
    // a job's file still open; the system's temporary directory keeps it
  }
}
process.on("uncaughtException", (e) => {
  console.error(`fleet: ${e?.stack ?? e}`)
  cleanup()
  process.exit(2)
})
process.on("SIGINT", () => {
  cleanup()
  process.exit(130)
})
process.on("SIGTERM", () => {
  cleanup()
  process.exit(143)
})

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

// ---- PostgreSQL: a private cluster, so restarting it disturbs nobody else ----

let pg
const startPostgres = async () => {
  const versions = Fs.existsSync("/usr/lib/postgresql") ? Fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(a) - Number(b)) : []
  const found = versions.length > 0 ? `/usr/lib/postgresql/${versions.at(-1)}/bin` : safe(() => Path.dirname(execFileSync("sh", ["-c", "command -v pg_ctl"]).toString().trim()))
  if (found === "?" || !Fs.existsSync(Path.join(found, "initdb"))) {
    throw new Error("PostgreSQL's server programs (initdb, pg_ctl) are not installed: scripts/postgres-for-tests.sh installs them")
  }
  const binDir = found
  const data = Path.join(root, "pg")
  const port = await freePort()
  const asRoot = process.getuid?.() === 0
  const run = (program, args) =>
    asRoot ? execFileSync("runuser", ["-u", "postgres", "--", Path.join(binDir, program), ...args], { stdio: ["ignore", "pipe", "pipe"] })
      : execFileSync(Path.join(binDir, program), args, { stdio: ["ignore", "pipe", "pipe"] })
  const runAsync = (program, args) =>
    new Promise((resolve, reject) => {
      const [file, rest] = asRoot ? ["runuser", ["-u", "postgres", "--", Path.join(binDir, program), ...args]] : [Path.join(binDir, program), args]
      const child = spawn(file, rest, { stdio: "ignore" })
      child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${program} ${args.join(" ")} exited with ${code}`))))
    })
  Fs.mkdirSync(data, { recursive: true })
  if (asRoot) {
    Fs.chmodSync(root, 0o755)
    execFileSync("chown", ["postgres:postgres", data])
  }
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
  const options = `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400`
  const start = () => run("pg_ctl", ["-D", data, "-o", options, "-l", Path.join(data, "log"), "-w", "start"])
  start()
  pg = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** Stops the server, leaves it down for `downMs`, starts it again; without blocking the calls going on meanwhile. */
    restart: async (downMs) => {
      await runAsync("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
      await sleep(downMs)
      await runAsync("pg_ctl", ["-D", data, "-o", options, "-l", Path.join(data, "log"), "-w", "start"])
    },
    psql: (sql) =>
      execFileSync(Path.join(binDir, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-At", "-c", sql], {
        stdio: ["ignore", "pipe", "pipe"]
      }).toString().trim(),
    stop: () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
      } catch {
        // not running
      }
    }
  }
}

// ---- hosts, each behind a proxy the bench can cut ---------------------------

const proxies = []
/** A TCP proxy to `target`; `cut()` stops every byte both ways (and holds new connections) until `mend()`. */
const proxy = (port, target) => {
  let cut = false
  const waiting = []
  const sockets = new Set()
  const pipe = (from, to, held) => {
    from.on("data", (d) => {
      if (cut) held.push([to, d])
      else to.write(d)
    })
  }
  const held = []
  const join = (client) => {
    const upstream = Net.connect({ host: "127.0.0.1", port: target() })
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("error", () => {})
      s.on("close", () => {
        sockets.delete(s)
        client.destroy()
        upstream.destroy()
      })
    }
    pipe(client, upstream, held)
    pipe(upstream, client, held)
  }
  const server = Net.createServer((client) => {
    client.on("error", () => {})
    if (cut) waiting.push(client)
    else join(client)
  })
  server.listen(port, "127.0.0.1")
  const handle = {
    cut: () => void (cut = true),
    mend: () => {
      cut = false
      for (const [to, d] of held.splice(0)) if (!to.destroyed) to.write(d)
      for (const c of waiting.splice(0)) if (!c.destroyed) join(c)
    },
    close: () => {
      server.close()
      for (const s of sockets) s.destroy()
    }
  }
  proxies.push(handle)
  return handle
}

const hosts = []
const startHost = (h) =>
  new Promise((resolve, reject) => {
    const host = hosts[h]
    const child = spawn(process.execPath, [bin, "host", "--listen", String(host.port), "--dir", host.dir, "--credentials", host.credentials], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    started.add(child)
    child.once("exit", () => started.delete(child))
    let said = ""
    const onData = (d) => {
      said += d.toString()
      if (said.includes("listening")) {
        child.stderr.off("data", onData)
        child.stderr.resume()
        host.child = child
        resolve(child)
      }
    }
    child.stderr.on("data", onData)
    child.once("exit", (code) => reject(new Error(`host ${h} exited (${code}) before it listened: ${said.slice(0, 500)}`)))
  })

const setUpHosts = async () => {
  for (let h = 0; h < H; h++) {
    const dir = Path.join(root, `host-${h}`)
    Fs.mkdirSync(dir, { recursive: true })
    const credential = `fleet-${h}-${randomBytes(12).toString("hex")}`
    const revocable = `fleet-rev-${h}-${randomBytes(12).toString("hex")}`
    const credentials = Path.join(dir, "credentials.json")
    const file = { credentials: { [credential]: "fleet", [revocable]: "fleet-revocable" } }
    Fs.writeFileSync(credentials, JSON.stringify(file))
    const host = { dir: Path.join(dir, "spool"), credentials, credential, revocable, file, port: await freePort(), proxyPort: await freePort() }
    hosts.push(host)
    host.proxy = proxy(host.proxyPort, () => host.port)
  }
  // a few at a time: each host is a Node process starting up on a shared machine
  for (let h = 0; h < H; h += 4) await Promise.all(hosts.slice(h, h + 4).map((_, i) => startHost(h + i)))
}

// ---- controllers -------------------------------------------------------------

const controllers = []
let nextId = 1
const forkController = (c) =>
  new Promise((resolve, reject) => {
    const child = fork(Path.join(here, "fleet-controller.mjs"), [], {
      env: {
        ...process.env,
        FLEET_PG_URL: pg.url,
        FLEET_CALL_MS: String(callMs),
        FLEET_HOSTS: JSON.stringify(hosts.map((x) => ({ port: x.proxyPort, credential: x.credential })))
      },
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    started.add(child)
    const pending = new Map()
    const controller = { c, child, pending, alive: true }
    child.on("message", (m) => {
      if (m.ready) return resolve(controller)
      const waiting = pending.get(m.id)
      pending.delete(m.id)
      waiting?.(m)
    })
    child.on("error", () => void (controller.alive = false))
    child.once("exit", () => {
      started.delete(child)
      controller.alive = false
      for (const [id, waiting] of pending) waiting({ id, ok: false, error: { tag: "ControllerGone", message: "the controller process ended" } })
      pending.clear()
      reject(new Error(`controller ${c} exited before it was ready`))
    })
    controllers[c] = controller
  })

/** One call through a controller (a given one, or any that is up, as a load balancer would pick). */
const callOnce = (message, via) =>
  new Promise((resolve) => {
    const up = controllers.filter((x) => x.alive)
    const controller = via !== undefined && controllers[via]?.alive ? controllers[via] : up[Math.floor(Math.random() * up.length)]
    if (controller === undefined) return resolve({ ok: false, error: { tag: "NoController", message: "no controller is up" } })
    const id = nextId++
    controller.pending.set(id, (reply) => resolve({ ...reply, via: controller.c }))
    // a controller killed a moment ago: the message cannot reach it, and the caller hears so
    const gone = () => {
      controller.pending.delete(id)
      resolve({ ok: false, error: { tag: "ControllerGone", message: "the controller process ended" }, via: controller.c })
    }
    try {
      controller.child.send({ ...message, id }, (error) => error && gone())
    } catch {
      gone()
    }
  })

/** Errors after which a caller tries again, as the error's words say: the host, the controller or the record store was away. */
const transient = new Set(["HostUnreachable", "ControllerGone", "NoController", "StoreFailed"])

/**
 * A call as an agent makes it: when the host or the controller was away, try
 * again (through any controller) for up to 30 seconds, backing off; each
 * failure is counted among the errors seen.
 */
const call = async (message, via) => {
  const until = Date.now() + 30_000
  let pause = 200
  for (;;) {
    const reply = await callOnce(message, via)
    if (reply.ok || !transient.has(reply.error.tag) || Date.now() > until || stopping) return reply
    noteError(`${message.op} (tried again)`, reply.error)
    await sleep(pause)
    pause = Math.min(pause * 2, 2000)
    via = undefined
  }
}

// ---- figures -------------------------------------------------------------------

const figures = {
  jobs: 0,
  reads: 0,
  lost: 0,
  duplicated: 0,
  wrong: 0,
  leaked: 0,
  pollMs: [],
  pageMs: [],
  waitMs: [],
  searchMs: [],
  startMs: [],
  errors: new Map(),
  pgConnections: 0,
  hostRss: 0,
  controllerRss: 0,
  /** Answers of the controllers' views of which hosts are up, and what they showed of the host killed. */
  liveness: { answers: 0, downMs: undefined, upMs: undefined },
  /** Reads of a job looked up before, asked and served while PostgreSQL was down. */
  pgDownReads: { asked: 0, served: 0 }
}
const noteError = (what, error) => {
  const key = `${what}: ${error.tag}`
  if (!figures.errors.has(key)) log(`  first ${key}: ${error.message ?? ""}${error.reason ? ` (${error.reason})` : ""}`)
  figures.errors.set(key, (figures.errors.get(key) ?? 0) + 1)
}
const percentile = (values, p) => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const rssMiB = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024
  } catch {
    return 0
  }
}
const sample = () => {
  for (const host of hosts) if (host.child?.exitCode === null) figures.hostRss = Math.max(figures.hostRss, rssMiB(host.child.pid))
  for (const c of controllers) if (c?.alive) figures.controllerRss = Math.max(figures.controllerRss, rssMiB(c.child.pid))
  try {
    figures.pgConnections = Math.max(figures.pgConnections, Number(pg.psql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")) - 1)
  } catch {
    // PostgreSQL is restarting
  }
}

// ---- checking what was read ---------------------------------------------------

/**
 * Pages against the known text: gaps are lost bytes, overlaps duplicated
 * ones, and a byte that differs from the text (outside a secret, or a secret
 * left unmasked) is wrong.
 */
const checkPages = (pages, expected) => {
  const sorted = [...pages].sort((a, b) => a.offset - b.offset)
  let at = 0
  let lost = 0
  let duplicated = 0
  let wrong = 0
  for (const p of sorted) {
    if (p.offset > at) lost += p.offset - at
    if (p.offset < at) duplicated += Math.min(at, p.next_offset) - p.offset
    const content = Buffer.from(p.content, "utf8")
    if (content.length !== p.next_offset - p.offset) wrong += Math.abs(content.length - (p.next_offset - p.offset))
    const want = expected.text.slice(p.offset, p.offset + content.length)
    for (let i = 0; i < content.length; i++) {
      const position = p.offset + i
      if (content[i] === want.charCodeAt(i)) {
        if (expected.secrets.some(([a, b]) => position >= a && position < b) && p.content.includes(expected.secret)) wrong += 1
        continue
      }
      if (!expected.secrets.some(([a, b]) => position >= a && position < b)) wrong += 1
    }
    at = Math.max(at, p.next_offset)
  }
  if (at < expected.text.length) lost += expected.text.length - at
  if (at > expected.text.length) wrong += at - expected.text.length
  return { lost, duplicated, wrong }
}

/** Pages a job's whole output, cursor after cursor, each page through any controller. */
const pageAll = async (job, options = {}) => {
  const pages = []
  // the status view's record holds the cursor to the start of the output, as a model would page it
  const status = await call({ op: "poll", host: job.host, conv: job.conv, pid: job.pid, credential: options.credential }, options.via)
  figures.reads++
  if (!status.ok) return { pages, error: status.error }
  figures.pollMs.push(status.ms)
  let reply = await call({ op: "page", host: job.host, conv: job.conv, pid: job.pid, cursor: status.value.retention.cursor, limit: 8000, credential: options.credential }, options.via)
  for (;;) {
    figures.reads++
    if (!reply.ok) return { pages, error: reply.error }
    figures.pageMs.push(reply.ms)
    const page = reply.value
    if (page._tag !== "Page") return { pages, error: { tag: "NotAPage", message: JSON.stringify(page).slice(0, 200) } }
    pages.push(page)
    if (page.next_cursor === undefined || page.next_offset >= job.expected.text.length || (!page.truncated && page.status !== "running")) break
    if (options.stopAfter !== undefined && pages.length >= options.stopAfter) return { pages, cursor: page.next_cursor }
    reply = await call({ op: "page", host: job.host, conv: job.conv, pid: job.pid, cursor: page.next_cursor, limit: 8000, credential: options.credential }, options.via)
  }
  return { pages }
}

/** Reads a finished job whole and counts what was lost, duplicated or wrong; an error is reported, never counted as bytes. */
const verify = async (job, options) => {
  const { pages, error } = await pageAll(job, options)
  if (error !== undefined) {
    // a job's output the caller could not read back, outside a fault, is output lost to it
    noteError("page", error)
    if (!options?.duringFault) {
      figures.lost += job.expected.text.length
      log(`  job ${job.kind} ${job.seed} on host ${job.host}: not read back (${error.tag}): ${job.expected.text.length} bytes lost`)
    }
    return { error }
  }
  const result = checkPages(pages, job.expected)
  figures.lost += result.lost
  figures.duplicated += result.duplicated
  figures.wrong += result.wrong
  if (result.lost + result.duplicated + result.wrong > 0) {
    log(`  job ${job.kind} ${job.seed} on host ${job.host}: lost ${result.lost}, duplicated ${result.duplicated}, wrong ${result.wrong}`)
  }
  return result
}

// ---- the load: conversations like agents ---------------------------------------

let seedCounter = 1
const jobsAll = []

const startJob = async (h, conv, kind, lines, via) => {
  const seed = seedCounter++
  const script = Path.join(root, "job.awk")
  const command = kind === "server"
    ? `echo "[server ${seed}] ready"; k=0; while :; do k=$((k+1)); echo "[server ${seed}] tick $k"; sleep 0.2; done # ${root}`
    : `awk -v kind=${kind} -v seed=${seed} -v n=${lines} -f ${script}${seed % 5 === 0 ? "; exit 1" : ""}`
  const reply = await call({ op: "start", host: h, conv, command, keep: "whole" }, via)
  if (!reply.ok) {
    noteError("start", reply.error)
    return undefined
  }
  figures.startMs.push(reply.ms)
  figures.jobs++
  const job = { host: h, conv, kind, seed, pid: reply.value.pid, expected: kind === "server" ? undefined : expectedOf(kind, seed, lines) }
  jobsAll.push(job)
  return job
}

/** Polls a job's status view until it has ended (or `limitMs` passed). */
const pollUntilEnded = async (job, limitMs = 60_000) => {
  const until = Date.now() + limitMs
  while (Date.now() < until) {
    const reply = await call({ op: "poll", host: job.host, conv: job.conv, pid: job.pid })
    figures.reads++
    if (!reply.ok) {
      noteError("poll", reply.error)
      await sleep(300)
      continue
    }
    figures.pollMs.push(reply.ms)
    if (reply.value.retention?.status !== "running") return reply.value
    await sleep(250)
  }
  return undefined
}

const conversation = async (i) => {
  const h = i % H
  const conv = `c${i}`
  // a short command, waited on
  const short = await startJob(h, conv, "short", 20)
  if (short !== undefined) {
    const w = await call({ op: "wait", host: h, conv, pid: short.pid, millis: Math.min(4000, callMs - 500) })
    figures.reads++
    if (w.ok) figures.waitMs.push(w.ms)
    else noteError("wait", w.error)
    await pollUntilEnded(short)
    await verify(short)
  }
  // a dev server that never exits: waited on for its ready line, polled, searched, then ended
  const server = await startJob(h, conv, "server", 0)
  // a build log of some MB
  const build = await startJob(h, conv, "build", linesFor(buildKiB))
  if (server !== undefined) {
    const w = await call({ op: "wait", host: h, conv, pid: server.pid, millis: Math.min(4000, callMs - 500), pattern: "ready" })
    figures.reads++
    if (w.ok) {
      figures.waitMs.push(w.ms)
      if (!w.value.output.includes(`[server ${server.seed}] ready`) && !w.value.retention) noteError("wait", { tag: "NoReadyLine" })
    } else noteError("wait", w.error)
  }
  if (build !== undefined) {
    await pollUntilEnded(build)
    const s = await call({ op: "search", host: h, conv, pid: build.pid, pattern: "deploy with token" })
    figures.reads++
    if (s.ok) {
      figures.searchMs.push(s.ms)
      // every matching line has its secret masked
      for (const m of s.value.matches) if (String(m.text ?? "").includes(build.expected.secret)) figures.wrong += build.expected.secret.length
      const want = Math.floor(linesFor(buildKiB) / 997)
      if (s.value.matches.length < Math.min(want, 20) && !s.value.more) {
        log(`  search on build ${build.seed}: ${s.value.matches.length} matches, ${want} expected`)
        figures.lost += 1
      }
    } else noteError("search", s.error)
    await verify(build)
  }
  if (server !== undefined) {
    for (let k = 0; k < 3; k++) {
      const p = await call({ op: "poll", host: h, conv, pid: server.pid })
      figures.reads++
      if (p.ok) figures.pollMs.push(p.ms)
      else noteError("poll", p.error)
      await sleep(100)
    }
    // any controller may signal it, also one that replaced the controller that started it
    const end = await call({ op: "signal", host: h, conv, pid: server.pid, signal: "SIGTERM" })
    if (!end.ok) {
      noteError("signal", end.error)
      const ex = await call({ op: "expire", host: h, conv, pid: server.pid })
      if (!ex.ok || ex.value.deleted !== true) {
        figures.leaked++
        noteError("expire of a server", ex.ok ? { tag: "NotDeleted", message: ex.value.note } : ex.error)
      }
    } else {
      const ended = await pollUntilEnded(server, 10_000)
      if (ended === undefined) figures.leaked++
    }
  }
}

/** Runs the conversations, `width` at a time. */
const runLoad = async (count, width, first = 0) => {
  let next = first
  const worker = async () => {
    while (next < first + count && Date.now() < deadline) await conversation(next++)
  }
  await Promise.all(Array.from({ length: width }, worker))
}

// ---- faults -------------------------------------------------------------------------

const faults = []
const fault = (name, survived, saw) => {
  faults.push({ name, survived, saw })
  log(`fault ${survived ? "survived" : "NOT survived"}: ${name}: ${saw}`)
}
const tagsOf = (replies) => {
  const counts = new Map()
  for (const r of replies) {
    const key = r.ok ? "ok" : r.error.tag
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([k, v]) => `${k} ${v}`).join(", ")
}
/** Calls again until one succeeds, or `ms` passed; how long it took. */
const until = async (message, ms) => {
  const began = Date.now()
  let last
  while (Date.now() - began < ms) {
    last = await callOnce(message)
    if (last.ok) return { ok: true, after: Date.now() - began }
    await sleep(250)
  }
  return { ok: false, after: Date.now() - began, last }
}

/**
 * Asks every controller up for its view of the hosts until each one that
 * dialled `h` shows it in `state`, for at most `ms`; how long that took, or
 * undefined.
 */
const livenessUntil = async (h, state, ms) => {
  const address = `127.0.0.1:${hosts[h].proxyPort}`
  const began = Date.now()
  while (Date.now() - began < ms) {
    const views = await Promise.all(controllers.filter((x) => x?.alive).map((x) => callOnce({ op: "hosts" }, x.c)))
    figures.liveness.answers += views.filter((v) => v.ok).length
    const seen = views.filter((v) => v.ok).map((v) => v.value.find((x) => x.address === address)).filter((x) => x !== undefined)
    if (seen.length > 0 && seen.every((x) => x.state === state)) return Date.now() - began
    await sleep(200)
  }
  return undefined
}

/** A host SIGKILLed with a server running and a build kept; callers meanwhile see HostUnreachable; restarted, its kept job reads back exact. */
const hostKill = async () => {
  const h = H - 1
  const conv = "fault-kill"
  const build = await startJob(h, conv, "build", linesFor(Math.min(buildKiB, 256)))
  const server = await startJob(h, conv, "server", 0)
  if (build === undefined || server === undefined) return fault("host SIGKILLed mid-job and restarted", false, "could not start the jobs")
  await pollUntilEnded(build)
  hosts[h].child.kill("SIGKILL")
  const killedAt = Date.now()
  // what the controllers' views of their hosts say, found by their pings and calls
  const downMs = await livenessUntil(h, "unreachable", 15_000).then((ms) => ms === undefined ? undefined : Date.now() - killedAt)
  const during = []
  for (let k = 0; k < 4; k++) {
    during.push(await callOnce({ op: "poll", host: h, conv, pid: build.pid }))
    during.push(await callOnce({ op: "page", host: h, conv, pid: build.pid, offset: 1, limit: 8000 }))
  }
  const wrongDuring = during.filter((r) => r.ok).length
  const slowest = Math.max(...during.map((r) => r.ms ?? 0))
  await startHost(h)
  const restartedAt = Date.now()
  const back = await until({ op: "poll", host: h, conv, pid: build.pid }, 20_000)
  const upMs = await livenessUntil(h, "up", 20_000).then((ms) => ms === undefined ? undefined : Date.now() - restartedAt)
  figures.liveness.downMs = downMs
  figures.liveness.upMs = upMs
  const read = back.ok ? await verify(build, { duringFault: true }) : { error: back.last?.error }
  const clear = during.every((r) => !r.ok && r.error.tag === "HostUnreachable")
  const exact = read.error === undefined && read.lost + read.duplicated + read.wrong === 0
  fault(
    "host SIGKILLed mid-job and restarted",
    clear && exact && wrongDuring === 0,
    `seen unreachable by the controllers ${downMs === undefined ? "never" : `${downMs} ms`} after the kill, up again ${upMs === undefined ? "never" : `${upMs} ms`} after the restart; ` +
      `while down: ${tagsOf(during)} (slowest ${Math.round(slowest)} ms); after restart: ${back.ok ? `reads again after ${back.after} ms` : `no read within 20 s (${back.last?.error?.tag}: ${back.last?.error?.message})`}, kept build ${exact ? "read back exact" : `not read back: ${read.error?.tag ?? "bytes differ"}`}`
  )
}

/** PostgreSQL restarted while starts go on: every start that succeeded has its record, and the controllers go on. */
const postgresRestart = async () => {
  const conv = "fault-pg"
  const replies = []
  let down = true
  // a build looked up through one controller before the restart: its reads go on while PostgreSQL is down
  const reader = controllers.findIndex((x) => x?.alive)
  const looked = await startJob(0, conv, "build", linesFor(Math.min(buildKiB, 64)), reader)
  if (looked !== undefined) await pollUntilEnded(looked)
  let pgDown = false
  const reads = looked === undefined ? Promise.resolve() : (async () => {
    while (down) {
      const r = await callOnce({ op: figures.pgDownReads.asked % 2 === 0 ? "poll" : "page", host: 0, conv, pid: looked.pid, offset: 1, limit: 8000 }, reader)
      if (pgDown && down) {
        figures.pgDownReads.asked++
        if (r.ok) figures.pgDownReads.served++
      }
      await sleep(100)
    }
  })()
  // four callers starting jobs all through the restart, and a little after it
  const load = Promise.all([0, 1, 2, 3].map(async (k) => {
    let after = 0
    while (down || after++ < 2) {
      const r = await callOnce({ op: "start", host: k % H, conv, command: `awk -v kind=short -v seed=${seedCounter++} -v n=5 -f ${Path.join(root, "job.awk")}`, keep: "whole" })
      replies.push(r.ok ? { host: k % H, pid: r.value.pid, ms: r.ms } : undefined)
      if (r.ok) figures.jobs++
      else noteError("start (PostgreSQL down)", r.error)
      await sleep(100)
    }
  }))
  await sleep(300)
  const began = Date.now()
  pgDown = true
  await pg.restart(1500)
  const restartMs = Date.now() - began
  down = false
  await Promise.all([load, reads])
  await sleep(500)
  const started = replies.filter((r) => r !== undefined)
  // the records are the controllers' own: list them through a controller, as a restarted one would
  let missing = 0
  for (const job of started) {
    const jobs = await call({ op: "jobs", host: job.host, conv })
    if (!jobs.ok || !jobs.value.some((j) => j.pid === job.pid)) missing++
  }
  const after = started.length > 0 ? await until({ op: "poll", host: started[0].host, conv, pid: started[0].pid }, 10_000) : { ok: false }
  const slowest = Math.max(0, ...started.map((r) => r.ms))
  fault(
    "PostgreSQL restarted",
    missing === 0 && after.ok,
    `down and up again in ${restartMs} ms; ${figures.pgDownReads.served} of ${figures.pgDownReads.asked} reads of a job looked up before served meanwhile; ${started.length} of ${replies.length} starts meanwhile answered success (the slowest in ${Math.round(slowest)} ms), ${missing} of them not found in the records afterwards; ${after.ok ? `calls go on (${after.after} ms)` : `calls did not go on (${after.last?.error?.tag}: ${after.last?.error?.message})`}`
  )
}

/** A controller SIGKILLed mid-read and replaced: its conversations go on from another controller with their cursors. */
const controllerKill = async () => {
  if (C < 2) return fault("controller killed and replaced", false, "needs two controllers or more")
  const conv = "fault-controller"
  const victim = 0
  const build = await startJob(0, conv, "build", linesFor(Math.min(buildKiB, 256)), victim)
  if (build === undefined) return fault("controller killed and replaced", false, "could not start the job")
  await pollUntilEnded(build)
  // half the pages through the victim, the rest (from its cursor) through another after it is killed
  const first = await pageAll(build, { via: victim, stopAfter: 3 })
  controllers[victim].alive = false
  controllers[victim].child.kill("SIGKILL")
  await sleep(200)
  const other = controllers.findIndex((x, c) => c !== victim && x?.alive)
  const pages = [...first.pages]
  let cursor = first.cursor
  let error = first.error
  while (cursor !== undefined && error === undefined) {
    const r = await callOnce({ op: "page", host: 0, conv, pid: build.pid, cursor, limit: 8000 }, other)
    figures.reads++
    if (!r.ok) error = r.error
    else {
      pages.push(r.value)
      cursor = r.value.truncated || r.value.status === "running" ? r.value.next_cursor : undefined
      if (r.value.next_offset >= build.expected.text.length) cursor = undefined
    }
  }
  await forkController(victim)
  const result = checkPages(pages, build.expected)
  figures.lost += result.lost
  figures.duplicated += result.duplicated
  figures.wrong += result.wrong
  const again = await verify(build, { via: victim, duringFault: true })
  const exact = error === undefined && result.lost + result.duplicated + result.wrong === 0 && again.error === undefined && again.lost + again.duplicated + again.wrong === 0
  fault(
    "controller killed and replaced",
    exact,
    `${first.pages.length} pages through controller ${victim}, then ${pages.length - first.pages.length} from its cursor through controller ${other}${error ? ` (${error.tag}: ${error.message})` : ""}; the replacement read the job ${again.error ? `with ${again.error.tag}` : "whole"}; ${result.lost} lost, ${result.duplicated} duplicated, ${result.wrong} wrong`
  )
}

/** A credential removed from a host's file: every read through it refused within a second. */
const credentialRevoke = async () => {
  const h = 0
  const conv = "fault-revoke"
  const host = hosts[h]
  const startReply = await call({ op: "start", host: h, conv, command: `awk -v kind=short -v seed=77 -v n=50 -f ${Path.join(root, "job.awk")}`, keep: "whole", credential: host.revocable })
  if (!startReply.ok) return fault("credential revoked", false, `could not start through it: ${startReply.error.tag}`)
  figures.jobs++
  const pid = startReply.value.pid
  const ready = await call({ op: "poll", host: h, conv, pid, credential: host.revocable })
  if (!ready.ok) return fault("credential revoked", false, `could not read through it: ${ready.error.tag}`)
  const { [host.revocable]: _removed, ...kept } = host.file.credentials
  // written beside it and renamed over it, so the host never reads half a file
  Fs.writeFileSync(`${host.credentials}.new`, JSON.stringify({ credentials: kept }))
  Fs.renameSync(`${host.credentials}.new`, host.credentials)
  const revokedAt = Date.now()
  const after = []
  let refusedAfter
  while (Date.now() - revokedAt < 2500) {
    const r = await callOnce({ op: after.length % 2 === 0 ? "poll" : "page", host: h, conv, pid, offset: 1, limit: 8000, credential: host.revocable })
    after.push({ ...r, at: Date.now() - revokedAt })
    if (!r.ok && refusedAfter === undefined) refusedAfter = Date.now() - revokedAt
    await sleep(50)
  }
  const servedLate = after.filter((r) => r.ok && r.at > 1000).length
  const wrongTags = after.filter((r) => !r.ok && r.error.tag !== "HostError" && r.error.tag !== "LeaseRefused")
  fault(
    "credential revoked",
    refusedAfter !== undefined && refusedAfter <= 1000 && servedLate === 0 && wrongTags.length === 0,
    `first refusal ${refusedAfter ?? "never"} ms after removal; after it: ${tagsOf(after)}; ${servedLate} reads served more than a second after${wrongTags.length ? `; unexpected: ${wrongTags[0].error.tag} ${wrongTags[0].error.message}` : ""}`
  )
}

/** One host's port cut off and restored: callers see HostUnreachable (never bytes that are not the job's), then read exact again. */
const partition = async () => {
  const h = H > 1 ? 1 : 0
  const conv = "fault-partition"
  const build = await startJob(h, conv, "build", linesFor(Math.min(buildKiB, 256)))
  if (build === undefined) return fault("host partitioned and restored", false, "could not start the job")
  await pollUntilEnded(build)
  hosts[h].proxy.cut()
  const during = await Promise.all([
    callOnce({ op: "poll", host: h, conv, pid: build.pid }),
    callOnce({ op: "page", host: h, conv, pid: build.pid, offset: 1, limit: 8000 }),
    callOnce({ op: "search", host: h, conv, pid: build.pid, pattern: "error" })
  ])
  hosts[h].proxy.mend()
  const back = await until({ op: "poll", host: h, conv, pid: build.pid }, 20_000)
  const read = back.ok ? await verify(build, { duringFault: true }) : { error: back.last?.error }
  const clear = during.every((r) => !r.ok && r.error.tag === "HostUnreachable")
  const exact = read.error === undefined && read.lost + read.duplicated + read.wrong === 0
  fault(
    "host partitioned and restored",
    clear && exact,
    `while cut off: ${tagsOf(during)} after ${Math.round(Math.max(...during.map((r) => r.ms ?? 0)))} ms; restored: ${back.ok ? `reads again after ${back.after} ms` : `no read within 20 s (${back.last?.error?.tag})`}, ${exact ? "read back exact" : `not read back: ${read.error?.tag ?? "bytes differ"}`}`
  )
}

// ---- the run --------------------------------------------------------------------------

const main = async () => {
  const began = Date.now()
  Fs.writeFileSync(Path.join(root, "job.awk"), AWK)
  await startPostgres()
  log(`fleet: PostgreSQL at ${pg.url.replace(/\/\/[^@]*@/, "//")}`)
  await setUpHosts()
  log(`fleet: ${H} hosts up (${Math.round((Date.now() - began) / 1000)} s)`)
  for (let c = 0; c < C; c++) await forkController(c)
  const sampler = setInterval(sample, 1000)
  const width = Math.min(conversations, Math.max(4, H))
  const loadBegan = Date.now()
  const load = runLoad(conversations, width)
  if (faultsOn) {
    await sleep(quick ? 3000 : 15_000)
    for (const inject of [credentialRevoke, partition, hostKill, controllerKill, postgresRestart]) {
      if (Date.now() > deadline) {
        fault(inject.name, false, "not run: out of time")
        continue
      }
      await inject()
    }
  }
  await load
  const loadSeconds = (Date.now() - loadBegan) / 1000
  clearInterval(sampler)
  sample()
  const survived = faults.filter((f) => f.survived).length
  log(`figures at ${H} hosts, ${C} controllers, ${conversations} conversations, builds of ${buildKiB} KiB, call timeout ${callMs} ms:`)
  log(`  load ${loadSeconds.toFixed(1)} s; jobs ${figures.jobs}; reads ${figures.reads}; wrong bytes ${figures.wrong}; jobs not ended ${figures.leaked}`)
  log(`  poll p50/p99 ${percentile(figures.pollMs, 50).toFixed(1)}/${percentile(figures.pollMs, 99).toFixed(1)} ms (${figures.pollMs.length})`)
  log(`  page p50/p99 ${percentile(figures.pageMs, 50).toFixed(1)}/${percentile(figures.pageMs, 99).toFixed(1)} ms (${figures.pageMs.length})`)
  log(`  start p50/p99 ${percentile(figures.startMs, 50).toFixed(1)}/${percentile(figures.startMs, 99).toFixed(1)} ms; wait p50 ${percentile(figures.waitMs, 50).toFixed(1)} ms; search p50/p99 ${percentile(figures.searchMs, 50).toFixed(1)}/${percentile(figures.searchMs, 99).toFixed(1)} ms`)
  log(`  peak RSS: host ${figures.hostRss.toFixed(0)} MiB, controller ${figures.controllerRss.toFixed(0)} MiB; PostgreSQL client connections ${figures.pgConnections}; records ${safe(() => pg.psql("SELECT count(*) FROM spillway_remote_jobs"))}`)
  log(`  liveness: ${figures.liveness.answers} answers of the controllers' views of their hosts; the host killed seen unreachable ${figures.liveness.downMs ?? "-"} ms after, up ${figures.liveness.upMs ?? "-"} ms after its restart; reads served while PostgreSQL was down ${figures.pgDownReads.served}/${figures.pgDownReads.asked}`)
  if (figures.errors.size > 0) log(`  errors seen: ${[...figures.errors].map(([k, v]) => `${k} ${v}`).join("; ")}`)
  const ok = figures.lost === 0 && figures.duplicated === 0 && figures.wrong === 0 && survived === faults.length
  cleanup()
  log(
    `fleet: ${H} hosts, ${C} controllers, ${figures.jobs} jobs, ${figures.reads} reads, lost ${figures.lost + figures.wrong} bytes, duplicated ${figures.duplicated}, ` +
      `p50/p99 poll ${percentile(figures.pollMs, 50).toFixed(1)}/${percentile(figures.pollMs, 99).toFixed(1)} ms, p99 page ${percentile(figures.pageMs, 99).toFixed(1)} ms, ` +
      `PG connections ${figures.pgConnections}, host RSS ${figures.hostRss.toFixed(0)} MiB, faults ${survived}/${faults.length} survived`
  )
  process.exitCode = ok ? 0 : 1
}
const safe = (f) => {
  try {
    return f()
  } catch {
    return "?"
  }
}

main().catch((e) => {
  console.error(`fleet: ${e?.stack ?? e}`)
  cleanup()
  process.exitCode = 2
}).finally(() => setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref())
