/**
 * `spillway hook <agent>` as a program of its own: an agent runs it before
 * every shell command, so it loads no Effect runtime and nothing of the rest
 * of the command. It reads at most 1 MiB of stdin within a deadline
 * (`SPILLWAY_HOOK_TIMEOUT_MS`, 5 seconds by default), prints the answer, and
 * exits 0 whatever happened.
 *
 * @since 0.1.0
 */
import { agents, answer, isAgent, MAX_INPUT_BYTES } from "./AgentHook.js"

const usage = `usage: spillway hook ${agents.join("|")}  (reads the agent's hook JSON on stdin; SPILLWAY_HOOK=off turns it off)`

/** Reads stdin up to `limit` bytes or `timeoutMs`; undefined text says why it stopped. */
const readInput = (limit: number, timeoutMs: number): Promise<{ text?: string; problem?: string }> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let settled = false
    const finish = (result: { text?: string; problem?: string }) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      process.stdin.removeAllListeners("data")
      process.stdin.destroy()
      resolve(result)
    }
    const timer = setTimeout(() => finish({ problem: `no whole input within ${timeoutMs} ms` }), timeoutMs)
    process.stdin.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) return finish({ problem: `the input is over ${limit} bytes` })
      chunks.push(chunk)
    })
    process.stdin.once("end", () => finish({ text: Buffer.concat(chunks).toString("utf8") }))
    process.stdin.once("error", (e) => finish({ problem: `stdin cannot be read (${e.message})` }))
  })

const main = async (args: ReadonlyArray<string>): Promise<number> => {
  const agent = args[0]
  if (agent === "--help" || agent === "-h") {
    process.stdout.write(`${usage}\n`)
    return 0
  }
  if (agent === undefined || !isAgent(agent) || args.length > 1) {
    // 1, not 2: an agent reads 2 as "block the call"
    process.stderr.write(`spillway hook: ${agent === undefined ? "name the agent" : `unknown agent ${JSON.stringify(agent)}`}; ${usage}\n`)
    return 1
  }
  const timeout = Number(process.env.SPILLWAY_HOOK_TIMEOUT_MS)
  const input = await readInput(MAX_INPUT_BYTES, Number.isFinite(timeout) && timeout > 0 ? timeout : 5000)
  const result = input.text === undefined
    ? { stdout: agent === "gemini" ? "{}\n" : "", stderr: `spillway hook ${agent}: ${input.problem}; the call is left as it is\n` }
    : answer(agent, input.text)
  process.stderr.write(result.stderr)
  // let stdout drain before the process ends
  await new Promise<void>((resolve) => result.stdout === "" ? resolve() : process.stdout.write(result.stdout, () => resolve()))
  return 0
}

main(process.argv.slice(3)).then((code) => {
  process.exitCode = code
})
