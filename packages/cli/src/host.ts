/**
 * `spillway host (--stdio | --listen PORT | --listen-ws PORT) [--bind ADDR]
 * --dir DIR --credentials FILE [limits]`: runs commands for controllers and
 * keeps their output on this machine, answering the host RPC group on stdin
 * and stdout (for `ssh somehost spillway host --stdio`), on a TCP port, or
 * on a WebSocket port, with limits on frames, connections and leases. Its
 * own entry point, like `mcp`.
 *
 * @since 0.1.0
 */
import { Host } from "@spillway/remote"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import * as Help from "./Help.js"
import * as Parse from "./Parse.js"
import { causeText, maskPrinted } from "./Printed.js"
import * as Usage from "./Usage.js"

const usage = Help.page(Usage.spec("host")!)

/** The numeric flags: what each sets, and in what unit. */
const numeric = {
  "--max-frame-bytes": { key: "maxFrameBytes", scale: 1 },
  "--max-unauthenticated": { key: "maxUnauthenticated", scale: 1 },
  "--max-connections": { key: "maxConnections", scale: 1 },
  "--handshake-timeout": { key: "handshakeMillis", scale: 1000 },
  "--idle-timeout": { key: "idleMillis", scale: 1000 },
  "--lease-ttl": { key: "leaseTtlMillis", scale: 1000 },
  "--max-waits": { key: "maxWaitsPerScope", scale: 1 }
} as const

interface Parsed {
  readonly stdio: boolean
  readonly websocket: boolean
  readonly port: number | undefined
  readonly bind: string | undefined
  readonly directory: string
  readonly credentials: string
  readonly limits: Partial<Host.Limits>
  readonly leaseTtlMillis: number | undefined
  readonly spoolPoolBytes: number | undefined
}

const UNITS: Readonly<Record<string, number>> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }

/** A size in bytes, with an optional unit (`512M`, `2GiB`, `1.5g`); a mistake's words otherwise. */
const sizeOf = (flag: string, raw: string): number | string => {
  const m = /^(\d{1,12}(?:\.\d{1,3})?)\s*([kmgt]?)(?:i?b)?$/i.exec(raw.trim())
  const n = m === null ? NaN : Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!)
  if (!Number.isSafeInteger(n) || n < 1) return `${flag} expects a size such as 512M or 2G (bytes, or K, M, G, T for KiB, MiB, GiB, TiB), got ${Parse.quoted(raw)}`
  return n
}

const parse = (args: ReadonlyArray<string>): Parsed | string => {
  let stdio = false
  let websocket = false
  let listen: number | undefined
  let bind: string | undefined
  let directory: string | undefined
  let credentials: string | undefined
  const limits: Record<string, number> = {}
  let leaseTtlMillis: number | undefined
  let spoolPoolBytes: number | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const value = () => (i + 1 < args.length ? args[++i]! : "")
    const port = (flag: string) => {
      const n = Parse.count(flag, value(), 0, 65535)
      return typeof n === "number" ? n : n.mistake
    }
    if (arg === "--stdio") stdio = true
    else if (arg === "--listen" || arg === "--listen-ws") {
      const n = port(arg)
      if (typeof n === "string") return n
      listen = n
      websocket = arg === "--listen-ws"
    }
    else if (arg === "--bind") bind = value()
    else if (arg === "--dir") directory = value()
    else if (arg === "--credentials") credentials = value()
    else if (arg === "--spool-pool") {
      const n = sizeOf(arg, value())
      if (typeof n === "string") return n
      spoolPoolBytes = n
    }
    else if (Object.hasOwn(numeric, arg)) {
      const { key, scale } = numeric[arg as keyof typeof numeric]
      const raw = value()
      const n = /^\d{1,12}(\.\d{1,3})?$/.test(raw) ? Math.round(Number(raw) * scale) : NaN
      if (!Number.isSafeInteger(n) || n < 1) return `${arg} expects a positive number${scale === 1000 ? " of seconds" : ""}, got ${Parse.quoted(raw)}`
      if (key === "leaseTtlMillis") leaseTtlMillis = n
      else limits[key] = n
    }
    else if (arg === "--help" || arg === "-h") return usage
    else return arg.startsWith("-") ? `unknown flag ${arg.length <= 60 ? arg : `${arg.slice(0, 60)}…`}` : `unexpected argument ${Parse.quoted(arg)}; see spillway host --help`
  }
  if (stdio === (listen !== undefined)) return "give --stdio, --listen PORT or --listen-ws PORT; see spillway host --help"
  if (directory === undefined || directory === "" || credentials === undefined || credentials === "") return "--dir and --credentials are required; see spillway host --help"
  return { stdio, websocket, port: listen, bind, directory, credentials, limits, leaseTtlMillis, spoolPoolBytes }
}

const main = (args: ReadonlyArray<string>): Promise<number> => {
  const parsed = parse(args)
  if (typeof parsed === "string") {
    // --help is an answer, on stdout; anything else is a mistake, on stderr
    if (parsed === usage) process.stdout.write(usage)
    else process.stderr.write(maskPrinted(`spillway host: ${parsed}\n`))
    return Promise.resolve(parsed === usage ? 0 : 2)
  }
  const options = {
    directory: parsed.directory,
    credentials: parsed.credentials,
    limits: parsed.limits,
    leaseTtlMillis: parsed.leaseTtlMillis,
    spoolPoolBytes: parsed.spoolPoolBytes
  }
  const layer = parsed.stdio
    ? Host.layerStdio(options)
    : parsed.websocket
    ? Host.layerWebSocket({ ...options, port: parsed.port!, host: parsed.bind })
    : Host.layerTcp({ ...options, port: parsed.port!, host: parsed.bind })
  const fiber = Effect.runFork(Effect.scoped(Effect.gen(function*() {
    yield* Layer.build(layer)
    // said only once the port is bound, so a controller that waits for it can connect
    if (!parsed.stdio) {
      process.stderr.write(maskPrinted(`spillway: host listening on ${parsed.websocket ? "ws://" : ""}${parsed.bind ?? "127.0.0.1"}:${parsed.port}\n`))
    }
    return yield* Effect.never
  })))
  const stop = () => void Effect.runFork(Fiber.interrupt(fiber))
  // a stdio host lives as long as its controller's connection
  if (parsed.stdio) process.stdin.once("end", stop)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, stop)
  return Effect.runPromise(Fiber.await(fiber)).then((exit) => {
    if (Exit.isSuccess(exit) || Exit.isInterrupted(exit)) return 0
    // a host configured unsafely (a short credential or cursor key) never starts, and says so
    const failure = Cause.failureOption(exit.cause)
    const start = failure._tag === "Some" && (failure.value as { readonly _tag?: unknown })._tag === "HostStartError"
    process.stderr.write(maskPrinted(`spillway host: ${start ? "cannot start: " : "the host stopped: "}${causeText(exit.cause)}\n`))
    return 1
  })
}

main(process.argv.slice(3)).then((code) => {
  process.exitCode = code
  // a stopped host reads no more: an open stdin (a controller that is still there) must not keep it alive
  process.stdin.destroy()
})
