import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Process } from "@spillway/core"
import { NodeProcess } from "@spillway/node"
import { type Context, Effect, Exit, Layer, Scope } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { artifacts, bin, keep, logChunks, serveProcess } from "./fixtures.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = Fs.existsSync(CHROMIUM)
const MiB = 1024 * 1024
const owner = "alice"
const secret = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

if (!hasChromium) {
  console.warn(`browser tests skipped: ${CHROMIUM} is absent (install Debian's chromium: apt-get install -y chromium)`)
}

describe.skipIf(!hasChromium)(`the web view in Chromium (${CHROMIUM})`, () => {
  let directory: string
  let browser: Browser
  let server: Awaited<ReturnType<typeof serveProcess>>
  let big: { id: string; lines: number }
  let masked: string
  let jobs: Scope.CloseableScope
  let context: Context.Context<any>

  const shot = (page: Page, name: string) => page.screenshot({ path: Path.join(artifacts, `${name}.png`), fullPage: false })

  beforeAll(async () => {
    directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-browser-"))
    Fs.mkdirSync(artifacts, { recursive: true })
    // a 256 MiB saved output with failures planted in it
    const m = await keep(directory, logChunks(256 * MiB, (i) => (i % 1_000_003 === 500_000 ? `src/module_${i}.c:${i % 997}:7: error: unit ${i} failed to compile\n` : undefined)), {
      owner,
      alreadyMasked: true,
      status: "exit 2"
    })
    big = { id: m.id, lines: m.lines }
    // a command's output with a credential in it, kept by spillway run as a user runs it
    const run = execFileSync(process.execPath, [bin, "run", "--json", "-c", `for i in $(seq 1 400); do echo "step $i"; done; echo "export GITHUB_TOKEN=${secret}"; echo done`], {
      env: { ...process.env, SPILLWAY_OUTPUT_DIR: directory, SPILLWAY_OWNER: owner }
    })
    masked = JSON.parse(run.toString()).filename
    jobs = Effect.runSync(Scope.make())
    context = await Effect.runPromise(Layer.buildWithScope(NodeProcess.layer({ directory }), jobs))
    server = await serveProcess(directory, owner)
    // Playwright starts it with a fresh, empty profile of its own
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    })
  }, 600_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    if (jobs !== undefined) await Effect.runPromise(Scope.close(jobs, Exit.void))
    Fs.rmSync(directory, { recursive: true, force: true })
  })

  const start = (command: string) =>
    Effect.runPromise(Process.start({ owner, channel: "conversation-7" }, { command, shell: true }).pipe(Effect.provide(context)) as Effect.Effect<Process.Started>)

  const open = async (path: string, viewport = { width: 1280, height: 860 }) => {
    const page = await browser.newPage({ viewport })
    await page.goto(`${server.url.replace(/\/$/, "")}${path}`)
    return page
  }

  it("lists the jobs, running and finished, readable on a phone", async () => {
    await start("echo built; exit 3")
    const { pid } = await start("for i in $(seq 1 600); do echo \"waiting $i\"; sleep 0.1; done")
    const page = await open("/jobs")
    const rows = page.locator("tbody tr")
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(2)
    await expect.poll(() => page.locator("tbody").innerText()).toContain("exited 3")
    expect(await page.locator("tbody").innerText()).toContain("running")
    await shot(page, "jobs")
    const phone = await open("/jobs", { width: 390, height: 844 })
    // nothing wider than the screen but the table's own scroller
    expect(await phone.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    await shot(phone, "jobs-phone")
    await Effect.runPromise(Effect.flatMap(Process.ProcessControl, (c) => c.cancel({ owner, channel: "conversation-7" }, pid)).pipe(Effect.provide(context)) as Effect.Effect<void>)
    await page.close()
    await phone.close()
  }, 120_000)

  it("follows a running job's output live while it prints, without reloading", async () => {
    const { pid } = await start("for i in $(seq 1 40); do echo \"tick $i\"; sleep 0.15; done; echo 'a.c:3:5: error: x undeclared'; exit 1")
    const page = await open("/jobs")
    await page.locator("a", { hasText: "tick" }).first().click()
    await page.waitForURL(/\/jobs\/job-/)
    await page.evaluate("window.loadedOnce = true")
    const live = page.locator("#live")
    await expect.poll(() => live.innerText(), { timeout: 15_000 }).toContain("tick 3")
    const name = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!)
    // the job is still being written while its lines appear
    const during = (await (await fetch(`${server.url}api/view/${name}`)).json()) as { state: string }
    expect(during.state).toBe("writing")
    expect(await page.locator("#state").innerText()).toBe("running")
    await expect.poll(() => live.innerText(), { timeout: 20_000 }).toContain("tick 25")
    await shot(page, "job-live")
    await expect.poll(() => page.locator("#state").innerText(), { timeout: 20_000 }).toBe("exited 1")
    expect(await live.innerText()).toContain("tick 40")
    // the lines came in live: the page was never loaded again, and none is shown twice
    expect(await page.evaluate("window.loadedOnce")).toBe(true)
    const numbers = await live.locator(".l .n").allInnerTexts()
    expect(numbers).toEqual(numbers.map((_, k) => String(k + 1)))
    // once it ended, its failure line is linked to its line
    const salient = page.locator("ol.salient a")
    await expect.poll(() => salient.count(), { timeout: 10_000 }).toBe(1)
    expect(await salient.getAttribute("href")).toBe(`/view/${name}?line=41#L41`)
    await page.evaluate("window.scrollTo(0, 0)")
    await shot(page, "job-ended")
    expect(pid).toBeGreaterThan(0)
    await page.close()
  }, 120_000)

  it("opens a 256 MiB saved output and jumps to its last line", async () => {
    const page = await open("/outputs")
    await page.locator(`a[href="/view/${big.id}"]`).click()
    await page.waitForURL(new RegExp(`/view/${big.id}$`))
    expect(await page.locator("#L1 .t").innerText()).toContain("[000000001]")
    // never the whole body: one window of lines
    expect(await page.locator("#body .l").count()).toBe(200)
    await shot(page, "output-first")
    // with the keyboard: g focuses the line box
    await page.keyboard.press("g")
    await page.keyboard.type(String(big.lines))
    const started = Date.now()
    await page.keyboard.press("Enter")
    await page.waitForURL(new RegExp(`line=${big.lines}`))
    const last = page.locator(`#L${big.lines}`)
    await last.waitFor()
    const took = Date.now() - started
    expect(await last.locator(".t").innerText()).toContain(`[${String(big.lines).padStart(9, "0")}]`)
    // brought into sight, not just into the page
    const box = await last.boundingBox()
    expect(box!.y).toBeGreaterThanOrEqual(0)
    expect(box!.y + box!.height).toBeLessThanOrEqual(860)
    console.log(`the last line of a 256 MiB body (line ${big.lines}) shown in ${took} ms`)
    await shot(page, "output-last")
    // scrolling up loads earlier lines lazily, and the page never holds more than a window's worth
    const before = await page.locator("#body .l").count()
    await page.evaluate("window.scrollTo(0, 0)")
    await expect.poll(() => page.locator("#body .l").count(), { timeout: 10_000 }).toBeGreaterThan(before)
    expect(await page.locator("#body .l").count()).toBeLessThanOrEqual(1000)
    await page.close()
  }, 120_000)

  it("searches the 256 MiB output with matches highlighted and linked to their lines", async () => {
    const page = await open(`/view/${big.id}`)
    await page.keyboard.press("/")
    await page.keyboard.type("error: unit [0-9]+ failed")
    await page.keyboard.press("Enter")
    await page.waitForURL(/q=error/)
    const matches = page.locator("ol.matches li")
    expect(await matches.count()).toBe(4)
    expect(await matches.first().locator("mark").innerText()).toMatch(/^error: unit \d+ failed$/)
    await shot(page, "search")
    const first = matches.first().locator("a")
    const line = Number(await first.locator(".n").innerText())
    await first.click()
    await page.waitForURL(new RegExp(`line=${line}`))
    const target = page.locator(`#L${line}`)
    expect(await target.getAttribute("class")).toContain("target")
    expect(await target.locator("mark").innerText()).toMatch(/^error: unit \d+ failed$/)
    await shot(page, "search-line")
    await page.close()
  }, 120_000)

  it("keeps a masked secret masked in the page, in search and beside what the model saw", async () => {
    const page = await open(`/view/${masked}?line=401`)
    const line = await page.locator("#L401 .t").innerText()
    expect(line).toBe(`export GITHUB_TOKEN=${"*".repeat(secret.length)}`)
    expect(await page.content()).not.toContain(secret)
    await shot(page, "masked")
    await page.locator("#q").fill("ghp_")
    await page.locator("#q").press("Enter")
    await page.waitForURL(/q=ghp_/)
    expect(await page.locator("section.results h2").innerText()).toContain("No line matches")
    const seen = await open(`/view/${masked}/seen`)
    const preview = await seen.locator("pre.preview").innerText()
    expect(preview).toContain(`GITHUB_TOKEN=${"*".repeat(secret.length)}`)
    expect(preview).toMatch(/\[Showing lines 1-\d+, \d+-402 of 402\. Full output: /)
    expect(await seen.locator(".omitted").count()).toBe(1)
    expect(await seen.content()).not.toContain(secret)
    await shot(seen, "seen")
    await page.close()
    await seen.close()
  }, 120_000)
})
