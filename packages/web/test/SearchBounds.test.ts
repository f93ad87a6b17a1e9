import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { keep, memoryOf, serveHere, serveProcess } from "./fixtures.js"

const me = "alice"
const encoder = new TextEncoder()

/**
 * A pattern that every line matches at once (`s`), and whose other branch
 * keeps RE2 busy at every offset: marking where it matches in one
 * 2,000-character line takes about a fifth of a second.
 */
const HOSTILE = "s|(?:\\w+\\W+){1,800}QQQ"

/** `count` lines of 2,000 characters, in chunks of about 1 MiB. */
function* wideLines(count: number): Generator<Uint8Array> {
  const line = "compiling packages/pkg-1/src/file-2.ts ok (17 ms) ".repeat(41).slice(0, 1999) + "\n"
  for (let done = 0; done < count;) {
    const n = Math.min(500, count - done)
    yield encoder.encode(line.repeat(n))
    done += n
  }
}

let directory: string
let wide: string

beforeAll(async () => {
  directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-view-search-"))
  // 10,000 lines of 2,000 characters: 20 MB
  wide = (await keep(directory, wideLines(10_000), { owner: me, alreadyMasked: true })).id
}, 60_000)

afterAll(() => {
  Fs.rmSync(directory, { recursive: true, force: true })
})

/** A GET from a loopback address of the caller's choosing (127.0.0.0/8), so one machine can be several clients. */
const getFrom = (localAddress: string, port: number, path: string) =>
  new Promise<{ status: number; headers: Http.IncomingHttpHeaders; body: string; millis: number }>((resolve, reject) => {
    const started = Date.now()
    const req = Http.request({ host: "127.0.0.1", port, path, localAddress, agent: false }, (res) => {
      let body = ""
      res.on("data", (d) => (body += d))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body, millis: Date.now() - started }))
    })
    req.on("error", reject)
    req.end()
  })

/** Asks `path` every 100 ms until `until` settles; how long each answer took, and its status. */
const pollWhile = async (port: number, path: string, until: Promise<unknown>) => {
  const answers: Array<{ status: number; millis: number }> = []
  let over = false
  void until.finally(() => (over = true))
  while (!over) {
    const r = await getFrom("127.0.0.1", port, path)
    answers.push({ status: r.status, millis: r.millis })
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return answers
}

describe("spillway serve under a hostile search", () => {
  it("answers /api/jobs within 500 ms each time while a search highlights 10,000 wide lines; the search ends by its deadline, says where it stopped, and memory stays bounded", async () => {
    const server = await serveProcess(directory, me)
    try {
      const port = Number(new URL(server.url).port)
      // the view is warm: it has listed and read once
      expect((await getFrom("127.0.0.1", port, "/api/jobs")).status).toBe(200)
      expect((await getFrom("127.0.0.1", port, `/api/view/${wide}/search?q=ok&max=1`)).status).toBe(200)
      const before = memoryOf(server.pid).rssMiB
      const started = Date.now()
      const search = getFrom("127.0.0.1", port, `/api/view/${wide}/search?max=10000&q=${encodeURIComponent(HOSTILE)}`)
      const answers = await pollWhile(port, "/api/jobs", search)
      const searched = await search
      const took = Date.now() - started
      const reply = JSON.parse(searched.body)
      expect(searched.status).toBe(200)
      // the reply holds 1,000,000 characters of the 10,000 lines asked for, marks what its deadline allowed, and says so
      expect(reply.matches.length).toBe(500)
      expect(reply.nextLine).toBe(501)
      expect(reply.stopped).toEqual([
        { reason: "size", line: 501, message: "a reply holds at most 1,000,000 characters of matching lines; the next page goes on from line 501" },
        expect.objectContaining({ reason: "highlight", message: expect.stringMatching(/on are shown without highlighting: highlighting stopped at the search's deadline$/) })
      ])
      const marked = reply.matches.filter((m: { spans: Array<unknown> }) => m.spans.length > 0).length
      expect(marked).toBeLessThan(500)
      expect(reply.matches[marked].line).toBe(reply.stopped[1].line)
      // the view's deadline is 5 s
      expect(took).toBeLessThan(7000)
      expect(answers.length).toBeGreaterThan(10)
      for (const a of answers) {
        expect(a.status).toBe(200)
        expect(a.millis).toBeLessThan(500)
      }
      expect(memoryOf(server.pid).peakMiB - before).toBeLessThan(150)
    } finally {
      await server.stop()
    }
  }, 60_000)

  it("answers a client's third search at once 429 and others' past the view's limit 503, each with Retry-After; slots come back as searches end", async () => {
    const server = await serveHere(directory, { owner: me, search: { maxSearches: 3, maxSearchesPerClient: 2, searchMillis: 8000 } })
    try {
      const hostile = `/api/view/${wide}/search?max=10000&q=${encodeURIComponent(HOSTILE)}`
      const mine = [getFrom("127.0.0.1", server.port, hostile), getFrom("127.0.0.1", server.port, hostile)]
      await new Promise((resolve) => setTimeout(resolve, 300))
      const third = await getFrom("127.0.0.1", server.port, hostile)
      expect(third.status).toBe(429)
      expect(third.headers["retry-after"]).toBe("1")
      expect(JSON.parse(third.body)).toEqual({ error: "Busy", message: expect.stringContaining("this client has 2 searches running already") })
      // another client gets the last slot; a third client finds the view full
      const other = getFrom("127.0.0.2", server.port, hostile)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const full = await getFrom("127.0.0.3", server.port, hostile)
      expect(full.status).toBe(503)
      expect(full.headers["retry-after"]).toBe("2")
      expect(JSON.parse(full.body).message).toContain("the view is running 3 searches already")
      // a page with a search is gated the same way; a page without one is not
      expect((await getFrom("127.0.0.3", server.port, `/view/${wide}?q=ok`)).status).toBe(503)
      expect((await getFrom("127.0.0.3", server.port, `/view/${wide}`)).status).toBe(200)
      for (const r of await Promise.all([...mine, other])) expect(r.status).toBe(200)
      // every slot is free again
      const again = await getFrom("127.0.0.3", server.port, `/api/view/${wide}/search?q=ok&max=5`)
      expect(again.status).toBe(200)
      expect(JSON.parse(again.body).matches.length).toBe(5)
    } finally {
      await server.close()
    }
  }, 60_000)

  it("stops a search at its byte limit and at its deadline, saying where, and goes on from there", async () => {
    const server = await serveHere(directory, { owner: me, search: { searchScanBytes: 2 * 1024 * 1024, searchMillis: 3000 } })
    try {
      const none = JSON.parse((await getFrom("127.0.0.1", server.port, `/api/view/${wide}/search?q=nowhere`)).body)
      expect(none.matches).toEqual([])
      expect(none.stopped).toEqual([expect.objectContaining({ reason: "bytes", line: none.nextLine })])
      expect(none.stopped[0].message).toMatch(/^the search stopped after reading 2 MiB at line [\d,]+; the next page goes on from there$/)
      // about 2 MiB of 2,000-byte lines, in whole blocks of 1 MiB
      expect(none.nextLine).toBeGreaterThan(1000)
      expect(none.nextLine).toBeLessThan(2200)
      const next = JSON.parse((await getFrom("127.0.0.1", server.port, `/api/view/${wide}/search?q=nowhere&from=${none.nextLine}`)).body)
      expect(next.fromLine).toBe(none.nextLine)
      expect(next.nextLine).toBeGreaterThan(none.nextLine)
      // the page view says the same in words
      const page = await getFrom("127.0.0.1", server.port, `/view/${wide}?q=nowhere`)
      expect(page.status).toBe(200)
      expect(page.body).toMatch(/The search stopped after reading 2 MiB at line [\d,]+; the next page goes on from there\./)
    } finally {
      await server.close()
    }
  }, 60_000)
})
