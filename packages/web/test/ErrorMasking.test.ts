import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { keep, serveHere } from "./fixtures.js"

const TOKEN = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

/**
 * The view's errors go through the one error-to-text path: a secret an
 * error quotes (a name, a pattern asked for) is masked in the API's JSON and
 * on the error page.
 */
describe("the web view: error words are masked", () => {
  let directory: string
  let server: Awaited<ReturnType<typeof serveHere>>
  let name: string
  beforeAll(async () => {
    directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-view-errors-"))
    name = (await keep(directory, ["one\ntwo\n"], { owner: "alice" })).id
    server = await serveHere(directory, { owner: "alice" })
  })
  afterAll(async () => {
    await server?.close()
    Fs.rmSync(directory, { recursive: true, force: true })
  })

  it("the API's error for a name holding a token has the token masked", async () => {
    const res = await fetch(`${server.base}/api/view/${TOKEN}.log${server.token !== undefined ? `?token=${server.token}` : ""}`)
    expect(res.status).toBeGreaterThanOrEqual(400)
    const text = await res.text()
    expect(text).not.toContain(TOKEN)
    expect(JSON.parse(text)).toMatchObject({ error: expect.any(String), message: expect.any(String) })
  })

  it("the API's error for a search pattern holding a token has the token masked", async () => {
    const query = new URLSearchParams({ pattern: `${TOKEN}(`, ...(server.token !== undefined ? { token: server.token } : {}) })
    const res = await fetch(`${server.base}/api/view/${name}/search?${query}`)
    const text = await res.text()
    expect(text).not.toContain(TOKEN)
  })

  it("the error page for a name holding a token has the token masked", async () => {
    const res = await fetch(`${server.base}/view/${TOKEN}.log${server.token !== undefined ? `?token=${server.token}` : ""}`, { headers: { accept: "text/html" } })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(await res.text()).not.toContain(TOKEN)
  })
})
