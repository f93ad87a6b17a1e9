/**
 * `spillway host (--stdio | --listen PORT | --listen-ws PORT) [--bind ADDR]
 * --dir DIR --credentials FILE`: runs commands for controllers and keeps
 * their output on this machine, answering the host RPC group on stdin and
 * stdout (for `ssh somehost spillway host --stdio`), on a TCP port, or on
 * a WebSocket port. Its own entry
 * point, like `mcp`.
 *
 * @since 0.1.0
 */
import { Host } from "@spillway/remote"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import { maskPrinted } from "./Printed.js"

const usage = "usage: spillway host (--stdio | --listen PORT | --listen-ws PORT) [--bind ADDR] --dir DIR --credentials FILE"

interface Parsed {
  readonly stdio: boolean
  readonly websocket: boolean
  readonly port: number | undefined
  readonly bind: string | undefined
  readonly directory: string
  readonly credentials: string
}

const parse = (args: ReadonlyArray<string>): Parsed | string => {
  let stdio = false
  let websocket = false
  let port: number | undefined
  let bind: string | undefined
  let directory: string | undefined
  let credentials: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const value = () => (i + 1 < args.length ? args[++i]! : "")
    if (arg === "--stdio") stdio = true
    else if (arg === "--listen") port = Number(value())
    else if (arg === "--listen-ws") {
      port = Number(value())
      websocket = true
    }
    else if (arg === "--bind") bind = value()
    else if (arg === "--dir") directory = value()
    else if (arg === "--credentials") credentials = value()
    else if (arg === "--help" || arg === "-h") return usage
    else return `unknown argument ${JSON.stringify(arg)}; ${usage}`
  }
  if (stdio === (port !== undefined)) return `give --stdio, --listen PORT or --listen-ws PORT; ${usage}`
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) return `--listen needs a port from 0 to 65535`
  if (directory === undefined || directory === "" || credentials === undefined || credentials === "") return `--dir and --credentials are required; ${usage}`
  return { stdio, websocket, port, bind, directory, credentials }
}

const main = (args: ReadonlyArray<string>): Promise<number> => {
  const parsed = parse(args)
  if (typeof parsed === "string") {
    // --help is an answer, on stdout; anything else is a mistake, on stderr
    if (parsed === usage) process.stdout.write(`${usage}\n`)
    else process.stderr.write(maskPrinted(`spillway: ${parsed}\n`))
    return Promise.resolve(parsed === usage ? 0 : 2)
  }
  const options = { directory: parsed.directory, credentials: parsed.credentials }
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
    process.stderr.write(maskPrinted(`spillway: the host stopped: ${Cause.pretty(exit.cause).split("\n")[0]}\n`))
    return 1
  })
}

main(process.argv.slice(3)).then((code) => {
  process.exitCode = code
})
