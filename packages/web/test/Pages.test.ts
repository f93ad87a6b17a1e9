import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Access, Manifests, Spill } from "@spillway/core"
import { NodeBodies, NodeSpill, SqlManifests } from "@spillway/node"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { keep, serveHere } from "./fixtures.js"

const me = "alice"
const secret = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
const ESC = "\x1b"

let small: string
let big: string
let servers: Array<Awaited<ReturnType<typeof serveHere>>> = []
let few: Awaited<ReturnType<typeof serveHere>>
let page: Awaited<ReturnType<typeof serveHere>>
let pageDir: string
let many: Awaited<ReturnType<typeof serveHere>>
let coloured: string
let matches: string
let failing: string
let evidence: string
let recorded: string

/** A day of a busy host: `count` saved outputs' manifests, each of its own command, written straight to the store. */
const fill = (directory: string, template: Manifests.Manifest, count: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const store = yield* Manifests.Manifests
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      store.insert({
        ...template,
        id: `2026-12-01T00-00-00-000Z-${String(i).padStart(6, "0")}.log`,
        createdAt: template.createdAt - count + i,
        origin: { _tag: "Tool", command: `build-${i} --target=x86` }
      }), { discard: true })
  }).pipe(Effect.provide(SqlManifests.layerFor(NodeBodies.manifestsOf({ directory })))))

beforeAll(async () => {
  small = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-pages-"))
  big = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-pages-big-"))
  for (let i = 0; i < 10; i++) await keep(small, [`output ${i}\n`], { owner: me, command: `make step-${i}` })
  const template = await keep(big, ["one line\n"], { owner: me, command: "first" })
  await fill(big, template, 10_000)
  pageDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-pages-one-"))
  await fill(pageDir, await keep(pageDir, ["one line\n"], { owner: me, command: "first" }), 150)
  coloured = (await keep(small, [
    `${ESC}[32mINFO${ESC}[0m ready\n`,
    `${ESC}[1;4mbold and underlined${ESC}[0m ${ESC}[38;5;208morange${ESC}[0m ${ESC}[38;2;255;0;0mtrue red${ESC}[0m\n`,
    `${ESC}]0;a window title\x07progress 10%\rprogress 50%\rprogress 100%\n`,
    `plain ${ESC}[Kline with ${ESC}(Bother escapes\n`
  ], { owner: me, command: "npm test --color" })).id
  matches = (await keep(small, [Array.from({ length: 1000 }, (_, i) => `row ${i + 1}${i % 2 === 0 ? " hit" : ""}\n`).join("")], { owner: me })).id
  failing = (await keep(small, [
    Array.from({ length: 3000 }, (_, i) => i === 1499 ? "src/app.ts:12:3: error TS2304: Cannot find name 'x'.\n" : `compiling unit ${i + 1}\n`).join("")
  ], { owner: me, status: "exit 2", command: "tsc -b" })).id
  evidence = (await keep(small, [Array.from({ length: 2000 }, (_, i) => `"quoted" line ${i + 1}\twith a tab\n`).join("")], {
    owner: me,
    profile: "evidence",
    tool: "bash",
    status: "ok"
  })).id
  // kept through the write capability, as `spillway run` and run_command keep a command's output
  recorded = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const write = yield* Spill.SpillWrite
    const capture = yield* write.capture({ command: `curl -H "token: ${secret}" https://example.test` })
    yield* capture.write(new TextEncoder().encode("fetched\n".repeat(1000)))
    return (yield* capture.finish(0)).filename ?? ""
  })).pipe(Effect.provideService(Access.CurrentCaller, { owner: me, channel: "cli" }), Effect.provide(NodeSpill.layer({ directory: small }))))
  // a test process's heap is larger than a server's own budget: collect only past a budget of its size
  few = await serveHere(small, { owner: me, heapBudgetMiB: 4096 })
  many = await serveHere(big, { owner: me, heapBudgetMiB: 4096 })
  page = await serveHere(pageDir, { owner: me, heapBudgetMiB: 4096 })
  servers = [few, many, page]
}, 120_000)

afterAll(async () => {
  for (const s of servers) await s.close()
  Fs.rmSync(small, { recursive: true, force: true })
  Fs.rmSync(big, { recursive: true, force: true })
  Fs.rmSync(pageDir, { recursive: true, force: true })
})

const text = async (base: string, path: string) => {
  const r = await fetch(`${base}${path}`)
  return { status: r.status, headers: r.headers, body: await r.text() }
}

const timeOf = async (base: string, path: string) => {
  const times: Array<number> = []
  for (let k = 0; k < 7; k++) {
    const started = performance.now()
    const r = await fetch(`${base}${path}`)
    await r.text()
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)[3]!
}

describe("the saved outputs list", () => {
  it("shows each output's command first, in pages whose HTML is bounded however many outputs there are", async () => {
    const first = await text(many.base, "/outputs")
    expect(first.status).toBe(200)
    const rows = first.body.match(/<tr>\n<td class="cmd">/g) ?? []
    expect(rows.length).toBe(100)
    expect(first.body.length).toBeLessThan(120_000)
    expect((first.body.match(/<a /g) ?? []).length).toBeLessThan(250)
    // newest first, the command as the first column
    expect(first.body).toMatch(/<td class="cmd"><a href="\/view\/2026-[^"]+"><code>first<\/code><\/a>/)
    expect(first.body).toContain("<code>build-9999 --target=x86</code>")
    const next = /<a rel="next" href="([^"]+)">older outputs<\/a>/.exec(first.body)![1]!.replace(/&amp;/g, "&")
    const second = await text(many.base, next)
    expect(second.status).toBe(200)
    const commands = [...second.body.matchAll(/<code>(build-\d+) --target=x86<\/code>/g)].map((m) => m[1])
    expect(commands.length).toBe(100)
    expect(commands[0]).toBe("build-9900")
    expect(new Set(commands).size).toBe(100)
    expect(first.body).not.toContain("<code>build-9900 ")
  })

  it("answers the first page of 10,000 outputs about as fast as the first of 10", async () => {
    for (const s of servers) await timeOf(s.base, "/outputs")
    const tenK = await timeOf(many.base, "/outputs")
    const onePage = await timeOf(page.base, "/outputs")
    const ten = await timeOf(few.base, "/outputs")
    console.log(`first page: ${ten.toFixed(1)} ms for 10 outputs, ${onePage.toFixed(1)} ms for 150, ${tenK.toFixed(1)} ms for 10,000`)
    // the same page of 100 rows, whatever the list's length; a list of 10 has fewer rows to show
    expect(tenK).toBeLessThan(onePage * 3 + 30)
  })

  it("filters on the server by command, and takes the filter's text literally", async () => {
    const found = await text(many.base, `/outputs?filter=${encodeURIComponent("BUILD-7777 ")}`)
    expect([...found.body.matchAll(/<code>(build-\d+) --target=x86<\/code>/g)].map((m) => m[1])).toEqual(["build-7777"])
    expect(found.body).toContain('value="BUILD-7777 "')
    const none = await text(many.base, `/outputs?filter=${encodeURIComponent("%_")}`)
    expect(none.body).toContain("No output matches")
    const api = await (await fetch(`${many.base}/api/outputs?filter=build-12`)).json() as { items: Array<{ command: string }>; next?: string }
    expect(api.items.length).toBe(100)
    expect(api.items.every((i) => i.command.startsWith("build-12"))).toBe(true)
    expect(api.next).toMatch(/^\d+~/)
    expect((await fetch(`${many.base}/outputs?filter=${"x".repeat(201)}`)).status).toBe(400)
    expect((await fetch(`${many.base}/outputs?after=../../etc`)).status).toBe(400)
  })

  it("records the command at write time, masked, and shows it on the output's page", async () => {
    const list = await text(few.base, "/outputs")
    expect(list.body).toContain("curl -H &quot;token: ")
    expect(list.body).not.toContain(secret)
    const page = await text(few.base, `/view/${recorded}`)
    expect(page.body).toMatch(/<h1><span class="sr">Output <\/span><code>curl -H &quot;token: \*+&quot; https:\/\/example.test<\/code>/)
    expect(page.body).toContain(`<span class="name">${recorded}</span>`)
  })
})

describe("an output's page", () => {
  it("downloads the masked body whole as text/plain with its name", async () => {
    const r = await fetch(`${few.base}/view/${coloured}/raw`)
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(r.headers.get("content-disposition")).toBe(`attachment; filename="${coloured}"`)
    // the kept body, escapes and all: only the page's view changes
    expect(await r.text()).toContain(`${ESC}[32mINFO${ESC}[0m ready\n`)
    expect((await fetch(`${few.base}/view/${recorded}/raw`)).status).toBe(200)
    expect((await fetch(`${few.base}/view/${recorded}/raw`).then((x) => x.text()))).toBe("fetched\n".repeat(1000))
    expect((await fetch(`${few.base}/view/no-such.log/raw`)).status).toBe(404)
    expect((await fetch(`${few.base}/view/${coloured}/raw`, { method: "POST" })).status).toBe(405)
    const page = await text(few.base, `/view/${coloured}`)
    expect(page.body).toContain(`href="/view/${coloured}/raw" download="${coloured}"`)
  })

  it("renders colours as classed spans and leaves no escape in any page", async () => {
    const page = await text(few.base, `/view/${coloured}`)
    expect(page.body).toContain('<span class="a-f2">INFO</span> ready')
    expect(page.body).toContain('<span class="a-b a-u">bold and underlined</span>')
    expect(page.body).toContain('<span class="a-f208">orange</span>')
    expect(page.body).toContain('<span class="a-f196">true red</span>')
    expect(page.body).toContain(">progress 100%</span>")
    expect(page.body).toContain("plain line with other escapes")
    for (const path of [`/view/${coloured}`, `/view/${coloured}/seen`, `/jobs/${coloured}`, `/view/${coloured}?q=INFO`, "/outputs"]) {
      const body = (await text(few.base, path)).body
      expect(body, path).not.toContain(ESC)
      expect(body, path).not.toContain("[32m")
      expect(body, path).not.toContain("\ufffd")
    }
    const lines = await (await fetch(`${few.base}/api/view/${coloured}/lines?from=1&count=4&q=INFO`)).json() as any
    expect(lines.lines[0]).toBe("INFO ready")
    expect(lines.runs[0]).toEqual([[0, 4, "a-f2"]])
    expect(lines.marks[0]).toEqual([[0, 4]])
    expect(lines.lines[2]).toBe("progress 100%")
    const css = await text(few.base, "/assets/style.css")
    expect(css.body).toContain(".a-f208{color:#ff8700}")
  })

  it("pages a search past its first 200 matches", async () => {
    const first = await text(few.base, `/view/${matches}?q=hit`)
    expect((first.body.match(/<li><a href/g) ?? []).length).toBe(200)
    const next = /<a rel="next" href="([^"]+)">next matches, from line 400<\/a>/.exec(first.body)![1]!.replace(/&amp;/g, "&")
    const second = await text(few.base, next)
    const lines = [...second.body.matchAll(/<li><a href="\/view\/[^?]+\?line=(\d+)/g)].map((m) => Number(m[1]))
    expect(lines.length).toBe(200)
    expect(lines[0]).toBe(401)
    expect(second.body).toContain("from line 400")
    const third = await text(few.base, /<a rel="next" href="([^"]+)">/.exec(second.body)![1]!.replace(/&amp;/g, "&"))
    expect((third.body.match(/<li><a href/g) ?? []).length).toBe(100)
    expect(third.body).not.toContain("next matches")
    const api = await (await fetch(`${few.base}/api/view/${matches}/search?q=hit&max=10&from=991`)).json() as any
    expect(api.matches.map((m: { line: number }) => m.line)).toEqual([991, 993, 995, 997, 999])
    expect(api.nextLine).toBeUndefined()
    expect((await fetch(`${few.base}/api/view/${matches}/search?q=hit&from=0`)).status).toBe(400)
  })

  it("shows a saved output's failure lines, found by the library's salience, and the live facts", async () => {
    const live = await (await fetch(`${few.base}/api/view/${failing}/live`)).json() as any
    expect(live).toMatchObject({ state: "complete", status: "exit 2", lines: 3000, failureLines: [1500] })
    expect(live.failures).toContain(`href="/view/${failing}?line=1500#L1500"`)
    expect(live.facts).toContain('data-fact="lines">3,000<')
    const page = await text(few.base, `/view/${failing}`)
    expect(page.body).toContain('id="failures"')
    expect((await fetch(`${few.base}/api/view/nope.log/live`)).status).toBe(404)
  })
})

describe("what the model saw", () => {
  it("links the failure lines the model was shown, and shows them as shown", async () => {
    const page = await text(few.base, `/view/${failing}/seen`)
    expect(page.body).toContain("1500: src/app.ts:12:3: error TS2304")
    expect(page.body).toContain('<a href="#L1500">1,500</a>')
    expect(page.body).toMatch(/<div class="l failure" id="L1500">/)
    // the ranges around it are marked as not shown, the line itself is not
    expect(page.body).toMatch(/lines [\d,]+–1,499 not shown/)
    expect(page.body).toMatch(/lines 1,501–[\d,]+ not shown/)
  })

  it("shows evidence as the text the model read, not as escaped JSON", async () => {
    const page = await text(few.base, `/view/${evidence}/seen`)
    const pre = /<pre class="preview" tabindex="0">([\s\S]*?)<\/pre>/.exec(page.body)![1]!
    expect(pre).toContain("head:\n&quot;quoted&quot; line 1\twith a tab\n")
    expect(pre).not.toContain("\\n")
    expect(pre).not.toContain("\\&quot;")
    expect(pre).toContain("next_cursor: (a signed cursor; not shown here)")
  })
})
