import { describe, expect, it } from "@effect/vitest"
import { mcpServer, textOf } from "./mcpStdio.js"

const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

/** A tool's error goes through the one error-to-text path: a secret it quotes is masked in the text and in the structured error. */
describe("spillway mcp: error words are masked", () => {
  const server = mcpServer("spillway-mcp-errors-")

  it("read_spill of a name holding a token fails with the token masked", async () => {
    const r = await server.call("read_spill", { filename: `${TOKEN}.log` })
    expect(r.isError).toBe(true)
    expect(textOf(r)).not.toContain(TOKEN)
    expect(JSON.stringify(r.structuredContent)).not.toContain(TOKEN)
    expect(r.structuredContent!.error.kind).toMatch(/NotFound|InvalidRequest/)
  })

  it("a job search whose pattern holds a token and does not compile fails with the token masked", async () => {
    const started = await server.call("manage_process", { action: "start", command: "echo hi" })
    const pid = started.structuredContent!.pid as number
    const r = await server.call("manage_process", { action: "search", pid, pattern: `${TOKEN}(` })
    expect(r.isError).toBe(true)
    expect(textOf(r)).not.toContain(TOKEN)
    expect(JSON.stringify(r.structuredContent)).not.toContain(TOKEN)
  })
})
