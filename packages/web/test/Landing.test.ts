import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { artifacts, growing, keep, serveHere } from "./fixtures.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = Fs.existsSync(CHROMIUM)
const owner = "alice"
const ESC = "\x1b"
const LINES = 200_000

/** `count` numbered lines, in chunks of about 1 MiB. */
function* numbered(count: number): Generator<string> {
  let parts: Array<string> = []
  for (let i = 1; i <= count; i++) {
    parts.push(`line ${i} of the long build log\n`)
    if (parts.length === 30_000) {
      yield parts.join("")
      parts = []
    }
  }
  if (parts.length > 0) yield parts.join("")
}

describe.skipIf(!hasChromium)(`landing where the page says, in Chromium (${CHROMIUM})`, () => {
  let directory: string
  let browser: Browser
  let server: Awaited<ReturnType<typeof serveHere>>
  let long: string
  let coloured: string
  let failing: string

  const shot = (page: Page, name: string) => page.screenshot({ path: Path.join(artifacts, `${name}.png`), fullPage: false })

  beforeAll(async () => {
    directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-landing-"))
    Fs.mkdirSync(artifacts, { recursive: true })
    long = (await keep(directory, numbered(LINES), { owner, alreadyMasked: true, command: "make -j8 all" })).id
    coloured = (await keep(directory, [`${ESC}[32mINFO${ESC}[0m server ready\n${ESC}[1;31mERROR${ESC}[0m disk ${ESC}[4mfull${ESC}[0m\nloading 10%\rloading 100%\n`], {
      owner,
      command: "npm start --color"
    })).id
    failing = (await keep(directory, [
      Array.from({ length: 3000 }, (_, i) => i === 1499 ? "src/app.ts:12:3: error TS2304: Cannot find name 'x'.\n" : `compiling unit ${i + 1}\n`).join("")
    ], { owner, status: "exit 2", command: "tsc -b" })).id
    server = await serveHere(directory, { owner, heapBudgetMiB: 4096 })
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    Fs.rmSync(directory, { recursive: true, force: true })
  })

  const open = async (path: string, viewport = { width: 1280, height: 860 }) => {
    const page = await browser.newPage({ viewport })
    await page.goto(`${server.base}${path}`)
    return page
  }

  /** Where a line is in the viewport, as the browser lays it out. */
  const rect = (page: Page, line: number) =>
    page.evaluate(`(() => { const r = document.getElementById("L${line}").getBoundingClientRect(); return { top: r.top, height: r.height } })()`) as Promise<{ top: number; height: number }>

  it("goes to line 150000 of 200,000 with that line at the top of the viewport, and it stays there", async () => {
    const page = await open(`/view/${long}`)
    await page.keyboard.press("g")
    await page.keyboard.type("150000")
    await page.keyboard.press("Enter")
    await page.waitForURL(/line=150000/)
    await page.locator("#L150000").waitFor()
    const at = await rect(page, 150000)
    expect(at.top).toBeGreaterThanOrEqual(-1)
    expect(at.top).toBeLessThanOrEqual(at.height)
    // after the script has looked at what is near (it loads lines within 600 px), the line has not moved
    await page.waitForTimeout(800)
    expect(Math.abs((await rect(page, 150000)).top - at.top)).toBeLessThanOrEqual(1)
    await shot(page, "jump-150000")
    // a link to a line lands the same way
    const linked = await open(`/view/${long}?line=123456#L123456`)
    await linked.waitForTimeout(500)
    const l = await rect(linked, 123456)
    expect(l.top).toBeGreaterThanOrEqual(-1)
    expect(l.top).toBeLessThanOrEqual(l.height)
    await page.close()
    await linked.close()
  }, 60_000)

  it("keeps the line under the reader's eye in place while earlier lines load above it", async () => {
    const page = await open(`/view/${long}?line=150000`)
    await page.waitForTimeout(400)
    for (let round = 0; round < 3; round++) {
      const first = Number(await page.evaluate(`document.querySelector("#body .l").id.slice(1)`))
      const watched = first + 5
      // the reader scrolls up until that line is 200 px from the top: the lines above it come into reach and load
      await page.evaluate(`document.getElementById("L${watched}").scrollIntoView({ block: "start" }); window.scrollBy(0, -200)`)
      const before = await rect(page, watched)
      await expect.poll(() => page.locator(`#L${first - 200}`).count(), { timeout: 10_000 }).toBe(1)
      await page.waitForTimeout(100)
      const after = await rect(page, watched)
      expect(Math.abs(after.top - before.top), `round ${round}: line ${watched} moved`).toBeLessThanOrEqual(1)
    }
    expect(await page.locator("#body .l").count()).toBeLessThanOrEqual(1000)
    await page.close()
  }, 60_000)

  it("renders colours and drops other escapes and carriage-return frames", async () => {
    const page = await open(`/view/${coloured}`)
    const info = page.locator("#L1 .t span.a-f2")
    expect(await info.innerText()).toBe("INFO")
    const style = (selector: string, property: string) => page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).${property}`)
    expect(await style("#L1 .t span.a-f2", "color")).toBe("rgb(13, 188, 121)")
    expect(await style("#L2 .t span.a-b.a-f1", "fontWeight")).toBe("700")
    expect(await style("#L2 .t span.a-u", "textDecorationLine")).toBe("underline")
    expect(await page.locator("#L3 .t").innerText()).toBe("loading 100%")
    const all = await page.locator("main").innerText()
    expect(all).not.toContain("[32m")
    expect(all).not.toContain(ESC)
    expect(all).not.toContain("\ufffd")
    await shot(page, "colours")
    await page.close()
  }, 60_000)

  it("updates a running job's size, lines and failure lines as it runs, and shows how it ended", async () => {
    const job = await growing(directory, { owner, command: "./deploy.sh --env staging" })
    await job.write(`${ESC}[36mstep 1${ESC}[0m starting\n`)
    const page = await open(`/jobs/${job.name}`)
    await page.evaluate("window.loadedOnce = true")
    const size = page.locator('[data-fact="size"]')
    const lines = page.locator('[data-fact="lines"]')
    const before = await size.innerText()
    expect(await page.locator("#failures").innerText()).toContain("No line reports an error or a failure yet")
    await job.write("step 2 uploading\nERROR: upload failed: connection reset by peer\nstep 3 retrying\n")
    await expect.poll(() => page.locator("#live").innerText(), { timeout: 10_000 }).toContain("step 3 retrying")
    await expect.poll(() => size.innerText(), { timeout: 10_000 }).not.toBe(before)
    await expect.poll(() => lines.innerText(), { timeout: 10_000 }).toBe("4")
    const failure = page.locator("#failures ol.salient a")
    await expect.poll(() => failure.count(), { timeout: 10_000 }).toBe(1)
    expect(await failure.getAttribute("href")).toBe(`/view/${job.name}?line=3#L3`)
    expect(await page.locator("#state").innerText()).toBe("running")
    expect(await page.locator("#live .l .t span.a-f6").innerText()).toBe("step 1")
    await shot(page, "job-running")
    await job.seal(1)
    await expect.poll(() => page.locator("#state").innerText(), { timeout: 10_000 }).toBe("exited 1")
    expect(await page.locator(".facts").innerText()).toContain("exit 1")
    expect(await page.evaluate("window.loadedOnce")).toBe(true)
    expect(await page.locator(`a[href="/view/${job.name}/raw"]`).count()).toBe(1)
    await page.evaluate("window.scrollTo(0, 0)")
    await shot(page, "job-ended")
    await page.close()
  }, 60_000)

  it("shows a saved output's failure lines like a job's, and links them beside what the model saw", async () => {
    const page = await open(`/view/${failing}`)
    const failure = page.locator("#failures ol.salient a")
    await expect.poll(() => failure.count(), { timeout: 10_000 }).toBe(1)
    expect(await failure.getAttribute("href")).toBe(`/view/${failing}?line=1500#L1500`)
    await failure.click()
    await page.waitForURL(/line=1500/)
    const at = await rect(page, 1500)
    expect(at.top).toBeGreaterThanOrEqual(-1)
    expect(at.top).toBeLessThanOrEqual(at.height)
    const seen = await open(`/view/${failing}/seen`)
    await seen.locator('a[href="#L1500"]').click()
    const shown = seen.locator("#L1500")
    expect(await shown.getAttribute("class")).toContain("failure")
    const box = await shown.boundingBox()
    expect(box!.y).toBeGreaterThanOrEqual(-1)
    expect(box!.y).toBeLessThanOrEqual(860)
    await shot(seen, "seen-failure")
    await page.close()
    await seen.close()
  }, 60_000)

  it("lists saved outputs by their command, filtered on the server", async () => {
    const page = await open("/outputs")
    const first = page.locator("tbody tr td.cmd").first()
    expect(await first.locator("code").innerText()).toBe("tsc -b")
    await shot(page, "outputs")
    await page.locator("#filter").fill("npm")
    await page.locator("#filter").press("Enter")
    await page.waitForURL(/filter=npm/)
    expect(await page.locator("tbody tr").count()).toBe(1)
    expect(await page.locator("tbody td.cmd code").innerText()).toBe("npm start --color")
    const phone = await open("/outputs", { width: 390, height: 844 })
    expect(await phone.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    await page.close()
    await phone.close()
  }, 60_000)
})
