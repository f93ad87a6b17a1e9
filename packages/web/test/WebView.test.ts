import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { growing, keep, serveHere } from "./fixtures.js"

const me = "alice"
const secret = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
let directory: string
let server: Awaited<ReturnType<typeof serveHere>>
let log: string
let secretLog: string
let other: string
let evidence: string

beforeAll(async () => {
  directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-view-"))
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1} of the build${i === 4000 ? " error: unit 4001 failed" : ""}\n`)
  log = (await keep(directory, [lines.join("")], { owner: me, status: "exit 2" })).id
  secretLog = (await keep(directory, [`${"step\n".repeat(600)}export GITHUB_TOKEN=${secret}\ndone\n`], { owner: me })).id
  other = (await keep(directory, ["bob's own output\n".repeat(700)], { owner: "bob" })).id
  evidence = (await keep(directory, [`${"x".repeat(100)}\n`.repeat(400)], { owner: me, profile: "evidence", tool: "bash", status: "ok" })).id
  server = await serveHere(directory, { owner: me, followMaxMillis: 60_000 })
})

afterAll(async () => {
  await server?.close()
  Fs.rmSync(directory, { recursive: true, force: true })
})

const json = (r: Response): Promise<any> => r.json() as Promise<any>

/** A GET naming any Host, which fetch does not let a caller set. */
const withHost = (port: number, path: string, host: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: Http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = Http.request({ host: "127.0.0.1", port, path, headers: { ...headers, host } }, (res) => {
      let body = ""
      res.on("data", (d) => (body += d))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end()
  })

const get = (path: string, init: RequestInit = {}) => fetch(`${server.base}${path}`, { redirect: "manual", ...init })

const routes = () => [
  "/",
  "/jobs",
  "/outputs",
  `/jobs/${log}`,
  `/view/${log}`,
  `/view/${log}/seen`,
  "/api/jobs",
  "/api/outputs",
  `/api/view/${log}`,
  `/api/view/${log}/lines?from=1&count=10`,
  `/api/view/${log}/search?q=error`,
  `/api/view/${log}/follow?offset=0`,
  `/api/view/${log}/live`,
  `/view/${log}/raw`,
  "/outputs?filter=build",
  `/api/outputs?filter=build`,
  "/assets/app.js",
  "/assets/style.css",
  "/no/such/page"
]

/** Everything in the directory, with sizes and times, to show that nothing changed. */
const snapshot = () =>
  Fs.readdirSync(directory).sort().map((f) => {
    const st = Fs.statSync(Path.join(directory, f))
    return `${f} ${st.size} ${st.mtimeMs}`
  })

// Many requests each, one after another: on a machine busy with other work a test can take tens of seconds without hanging.
describe("spillway serve over HTTP", { timeout: 120_000 }, () => {
  it("refuses every method but GET on every route with 405, and changes nothing", async () => {
    const before = snapshot()
    for (const path of routes()) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        const r = await get(path, { method, body: method === "DELETE" ? null : "x" })
        expect(r.status, `${method} ${path}`).toBe(405)
        expect(r.headers.get("allow")).toBe("GET")
        expect((await json(r)).message).toMatch(/only reads \(GET\)/)
      }
    }
    expect(snapshot()).toEqual(before)
  })

  it("answers every GET route, and no answer names the directory or a cursor", async () => {
    for (const path of routes().filter((p) => !p.includes("/follow") && p !== "/no/such/page")) {
      const r = await get(path)
      expect([200, 303], path).toContain(r.status)
      const body = await r.text()
      expect(body).not.toContain(directory)
      expect(body).not.toContain(Os.tmpdir() + "/")
      expect(body).not.toMatch(/spw1[A-Za-z0-9_-]{20}/)
    }
    const seen = await (await get(`/view/${evidence}/seen`)).text()
    expect(seen).toContain("a signed cursor; not shown here")
    expect(seen).not.toMatch(/spw1[A-Za-z0-9_-]{20}/)
  })

  it("refuses bad ranges with what was wrong", async () => {
    const cases: Array<[string, RegExp]> = [
      [`/api/view/${log}/lines?from=0`, /from: must be a whole number from 1/],
      [`/api/view/${log}/lines?from=abc`, /from: must be a whole number/],
      [`/api/view/${log}/lines?from=-5`, /from: must be a whole number/],
      [`/api/view/${log}/lines?from=1&count=0`, /count: must be a whole number from 1 to 2000/],
      [`/api/view/${log}/lines?from=1&count=2001`, /count: must be a whole number from 1 to 2000/],
      [`/api/view/${log}/lines?from=5001`, /line 5001 is past the end: .* has 5000 lines/],
      [`/api/view/${log}/lines?from=99999999999999999999`, /from: must be a whole number/],
      [`/api/view/${log}/follow?offset=-1`, /offset: must be a whole number/],
      [`/api/view/${log}/follow?offset=999999999`, /byte 999999999 is past the end/],
      [`/api/view/${log}/search?q=(a)\\1`, /backreference/],
      [`/api/view/${log}/search?q=`, /empty/],
      [`/api/view/${log}/search?q=x&max=0`, /max: must be a whole number from 1/]
    ]
    for (const [path, message] of cases) {
      const r = await get(path)
      expect(r.status, path).toBe(400)
      expect((await json(r)).message, path).toMatch(message)
    }
    const page = await get(`/view/${log}?line=5001`)
    expect(page.status).toBe(400)
    expect(await page.text()).toMatch(/line 5001 is past the end/)
    const pattern = await get(`/view/${log}?q=${encodeURIComponent("(?=x)")}`)
    expect(pattern.status).toBe(400)
    expect(await pattern.text()).toMatch(/lookahead/)
  })

  it("says what is unknown, and refuses names that are paths or hidden files before looking", async () => {
    const unknown = await get("/api/view/2026-01-01T00-00-00-000Z-abcdef.log")
    expect(unknown.status).toBe(404)
    expect((await json(unknown)).message).toMatch(/no saved output "2026-01-01T00-00-00-000Z-abcdef.log"/)
    expect((await get("/view/nothing-here.log")).status).toBe(404)
    const tricks = [
      "..%2F..%2Fetc%2Fpasswd",
      "%2E%2E%2F.manifests.sqlite",
      ".manifests.sqlite",
      `.${log}.idx`,
      "a%00b.log",
      "a%5Cb.log",
      "x".repeat(200),
      "%252e%252e"
    ]
    for (const name of tricks) {
      for (const path of [`/view/${name}`, `/api/view/${name}/lines`, `/api/view/${name}/follow`, `/view/${name}/raw`, `/api/view/${name}/live`]) {
        const r = await get(path)
        expect(r.status, path).toBe(400)
        const text = await r.text()
        expect(text, path).toMatch(/refused/)
        expect(text).not.toContain("root:")
      }
    }
    // a raw request line the browser would have normalized: matched by no route
    const raw = await new Promise<string>((resolve) => {
      const socket = Net.connect(server.port, "127.0.0.1", () => {
        socket.write(`GET /view/../../../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`)
      })
      let data = ""
      socket.on("data", (d) => (data += d))
      socket.on("end", () => resolve(data))
    })
    expect(raw).toMatch(/^HTTP\/1\.1 (400|404)/)
    expect(raw).not.toContain("root:")
    for (const path of ["/assets/..%2f..%2fpackage.json", "/assets/%2e%2e/%2e%2e/package.json"]) {
      const r = await get(path)
      expect([400, 404], path).toContain(r.status)
      expect(await r.text()).not.toContain("@spillway")
    }
  })

  it("passes every request through Access: another owner's output is refused and never listed", async () => {
    const r = await get(`/api/view/${other}/lines`)
    expect(r.status).toBe(403)
    expect((await json(r)).message).toMatch(/you may not read saved output/)
    expect((await get(`/view/${other}`)).status).toBe(403)
    expect((await get(`/api/view/${other}/follow`)).status).toBe(403)
    expect((await get(`/view/${other}/raw`)).status).toBe(403)
    expect((await get(`/api/view/${other}/live`)).status).toBe(403)
    expect((await get(`/outputs?filter=${encodeURIComponent("bob's")}`).then((x) => x.text()))).toContain("No output matches")
    const listed = (await json(await get("/api/outputs"))).items.map((i: { id: string }) => i.id)
    expect(listed).toContain(log)
    expect(listed).not.toContain(other)
  })

  it("answers loopback only for loopback host names, and elsewhere only with the token", async () => {
    const rebound = await withHost(server.port, "/jobs", "attacker.example")
    expect(rebound.status).toBe(403)
    const guarded = await serveHere(directory, { owner: me, token: "t".repeat(32) })
    try {
      const base = `http://127.0.0.1:${guarded.port}`
      expect((await fetch(`${base}/jobs`)).status).toBe(200)
      // a request naming another host stands for one from elsewhere: it needs the token
      const foreign = (path: string, headers: Record<string, string> = {}) => withHost(guarded.port, path, "view.example", headers)
      expect((await foreign("/api/outputs")).status).toBe(401)
      expect((await foreign("/api/outputs", { authorization: `Bearer ${"x".repeat(32)}` })).status).toBe(401)
      expect((await foreign("/api/outputs", { authorization: `Bearer ${"t".repeat(32)}` })).status).toBe(200)
      for (const path of [`/view/${log}/raw`, `/api/view/${log}/live`, "/outputs?filter=x"]) {
        expect((await foreign(path)).status, path).toBe(401)
        expect((await foreign(path, { authorization: `Bearer ${"t".repeat(32)}` })).status, path).toBe(200)
      }
      // ?token= once sets an HttpOnly cookie and leaves the address
      const first = await foreign(`/jobs?token=${"t".repeat(32)}`)
      expect(first.status).toBe(303)
      expect(first.headers.location).toBe("/jobs")
      expect(String(first.headers["set-cookie"])).toMatch(/HttpOnly; SameSite=Strict/)
      const cookie = String(first.headers["set-cookie"]).split(";")[0]!
      const page = await foreign("/jobs", { cookie })
      expect(page.status).toBe(200)
      expect(page.body).not.toContain("t".repeat(32))
    } finally {
      await guarded.close()
    }
  })

  it("keeps masked text masked in pages, lines, searches and the preview", async () => {
    for (const path of [`/view/${secretLog}?line=601`, `/api/view/${secretLog}/lines?from=590&count=20`, `/view/${secretLog}/seen`, `/api/view/${secretLog}/search?q=TOKEN`]) {
      const body = await (await get(path)).text()
      expect(body, path).toContain("GITHUB_TOKEN=****")
      expect(body, path).not.toContain(secret)
      expect(body, path).not.toContain("ghp_")
    }
    const searched = await json(await get(`/api/view/${secretLog}/search?q=ghp_`))
    expect(searched.matches).toEqual([])
  })

  it("pages any window of lines and marks search matches in them", async () => {
    const page = await json(await get(`/api/view/${log}/lines?from=3999&count=3&q=${encodeURIComponent("unit [0-9]+")}`))
    expect(page).toMatchObject({ from: 3999, count: 3, total: 5000 })
    expect(page.lines[2]).toBe("line 4001 of the build error: unit 4001 failed")
    expect(page.marks).toEqual([[], [], [[30, 39]]])
    const found = await json(await get(`/api/view/${log}/search?q=${encodeURIComponent("error: unit [0-9]+ failed")}`))
    expect(found.matches).toEqual([{ line: 4001, text: "line 4001 of the build error: unit 4001 failed", runs: [], cut: false, spans: [[23, 46]] }])
    const html = await (await get(`/view/${log}?line=5000`)).text()
    expect(html).toContain('id="L5000"')
    expect(html).toContain("line 5000 of the build")
    expect(html.match(/class="l( target)?" id=/g)!.length).toBe(200)
  })

  it("follows a growing body live, resumes from the last event id, and ends when it is complete", async () => {
    const job = await growing(directory, { owner: me, command: "make all" })
    const events = async (init: RequestInit, until: (text: string) => boolean) => {
      const controller = new AbortController()
      const r = await fetch(`${server.base}/api/view/${job.name}/follow?offset=0`, { ...init, signal: controller.signal })
      expect(r.status).toBe(200)
      expect(r.headers.get("content-type")).toMatch(/text\/event-stream/)
      const reader = r.body!.getReader()
      let text = ""
      while (!until(text)) {
        const { done, value } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      controller.abort()
      return [...text.matchAll(/(?:id: (\d+)\n)?event: (\w+)\ndata: (.*)\n\n/g)].map((m) => ({ id: m[1], event: m[2]!, data: JSON.parse(m[3]!) }))
    }
    await job.write("first line\n")
    const first = await events({}, (t) => t.includes("first line"))
    const texts = (es: typeof first) => es.filter((e) => e.event === "output").flatMap((e) => e.data.lines.map((l: { text: string }) => `${l.text}\n`)).join("")
    expect(texts(first)).toBe("first line\n")
    const last = first.at(-1)!.id!
    expect(Number(last)).toBe(11)
    await job.write("second line ✓\nthird line\n")
    setTimeout(() => void job.seal(0), 300)
    const rest = await events({ headers: { "last-event-id": last } }, (t) => t.includes("event: end"))
    expect(texts(rest)).toBe("second line ✓\nthird line\n")
    const end = rest.find((e) => e.event === "end")!
    expect(end.data).toMatchObject({ status: "exit 0", job: { command: "make all", exitCode: 0 } })
    const html = await (await get(`/jobs/${job.name}`)).text()
    expect(html).toContain("exited 0")
    expect(html).toContain("third line")
  })
})
