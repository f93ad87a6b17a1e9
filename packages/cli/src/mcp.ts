/**
 * `spillway mcp [--read-only] [--dir DIR] [--agents CATALOG.json]`: serves
 * the tools over MCP on stdin and stdout (with `--agents`, the agent tools too). Its own entry point, so the rest of the command never
 * loads the MCP SDK.
 *
 * @since 0.1.0
 */
import { NodeMcp } from "@spillway/node"
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import * as Help from "./Help.js"
import * as Parse from "./Parse.js"
import { causeText, maskPrinted } from "./Printed.js"
import * as Usage from "./Usage.js"

/** The server's options, the help, or the usage error. */
const parse = (args: ReadonlyArray<string>): NodeMcp.Options | "help" | Parse.Mistake => {
  const spec = Usage.spec("mcp")!
  const parsed = Parse.parse(spec, args)
  if (Parse.isMistake(parsed)) return parsed
  if (parsed.help) return "help"
  const extra = Parse.positionals(spec, parsed.positionals)
  if (Parse.isMistake(extra)) return extra
  const text = (name: string) => typeof parsed.flags[name] === "string" ? parsed.flags[name] as string : undefined
  const readOnly = parsed.flags["read-only"] === true
  const agents = text("agents")
  if (readOnly && agents !== undefined) return { mistake: "--agents serves the agent tools of a full server; leave out --read-only" }
  return { readOnly, directory: text("dir"), agents }
}

/** Runs the server; resolves once the client has closed the connection. */
export const main = (args: ReadonlyArray<string>): Promise<number> => {
  const options = parse(args)
  // --help is an answer, on stdout; a mistake is one line on stderr
  if (options === "help") {
    process.stdout.write(Help.page(Usage.spec("mcp")!))
    return Promise.resolve(0)
  }
  if (Parse.isMistake(options)) {
    process.stderr.write(maskPrinted(`spillway mcp: ${options.mistake}\n`))
    return Promise.resolve(2)
  }
  const fiber = Effect.runFork(NodeMcp.serveStdio(options))
  // a signal stops the server the same way the end of stdin does: jobs are stopped first
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => void Effect.runFork(Fiber.interrupt(fiber)))
  }
  return Effect.runPromise(Fiber.await(fiber)).then((exit) => {
    if (Exit.isSuccess(exit) || Exit.isInterrupted(exit)) return 0
    // a server that could not start says so in its own words; one that stopped later says it stopped
    const said = causeText(exit.cause)
    const notStarted = Option.exists(Cause.failureOption(exit.cause), (e) => e instanceof NodeMcp.ServerNotStarted)
    process.stderr.write(maskPrinted(`spillway mcp: ${notStarted ? said : `the MCP server stopped: ${said}`}\n`))
    return 1
  })
}

main(process.argv.slice(3)).then((code) => {
  process.exitCode = code
})
