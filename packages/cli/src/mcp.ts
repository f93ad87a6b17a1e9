/**
 * `spillway mcp [--read-only] [--dir DIR] [--agents CATALOG.json]`: serves
 * the tools over MCP on stdin and stdout (with `--agents`, the agent tools too). Its own entry point, so the rest of the command never
 * loads the MCP SDK.
 *
 * @since 0.1.0
 */
import { NodeMcp } from "@spillway/node"
import { Cause, Effect, Exit, Fiber } from "effect"
import { maskPrinted } from "./Printed.js"

const usage = "usage: spillway mcp [--read-only] [--dir DIR] [--agents CATALOG.json]"

const parse = (args: ReadonlyArray<string>): NodeMcp.Options | string => {
  let readOnly = false
  let directory: string | undefined
  let agents: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--read-only") readOnly = true
    else if (arg === "--dir" && i + 1 < args.length) directory = args[++i]
    else if (arg.startsWith("--dir=")) directory = arg.slice("--dir=".length)
    else if (arg === "--agents" && i + 1 < args.length) agents = args[++i]
    else if (arg.startsWith("--agents=")) agents = arg.slice("--agents=".length)
    else if (arg === "--help" || arg === "-h") return usage
    else return `unknown argument ${JSON.stringify(arg)}; ${usage}`
  }
  if (readOnly && agents !== undefined) return "--agents serves the agent tools of a full server; leave out --read-only"
  return { readOnly, directory, agents }
}

/** Runs the server; resolves once the client has closed the connection. */
export const main = (args: ReadonlyArray<string>): Promise<number> => {
  const options = parse(args)
  if (typeof options === "string") {
    // --help is an answer, on stdout; anything else is a mistake, on stderr
    if (options === usage) process.stdout.write(`${usage}\n`)
    else process.stderr.write(maskPrinted(`spillway: ${options}\n`))
    return Promise.resolve(options === usage ? 0 : 2)
  }
  const fiber = Effect.runFork(NodeMcp.serveStdio(options))
  // a signal stops the server the same way the end of stdin does: jobs are stopped first
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => void Effect.runFork(Fiber.interrupt(fiber)))
  }
  return Effect.runPromise(Fiber.await(fiber)).then((exit) => {
    if (Exit.isSuccess(exit) || Exit.isInterrupted(exit)) return 0
    process.stderr.write(maskPrinted(`spillway: the MCP server stopped: ${Cause.pretty(exit.cause).split("\n")[0]}\n`))
    return 1
  })
}

main(process.argv.slice(3)).then((code) => {
  process.exitCode = code
})
