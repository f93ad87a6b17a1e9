import { describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { bin } from "./fixtures.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 30_000 })

describe("spillway serve, the command", () => {
  it("is listed by spillway --help, with its options", () => {
    const help = run(["--help"])
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^ {2}serve {2}serve a read-only web view/m)
    const own = run(["serve", "--help"])
    expect(own.status).toBe(0)
    expect(own.stdout).toContain("serve a read-only web view")
    expect(own.stdout).toContain("usage: spillway serve [--port N] [--bind ADDR] [--dir DIR] [--channel NAME] [--token-file FILE]")
  })

  it("refuses a bad port or token file with one line saying what is wrong", () => {
    const port = run(["serve", "--port", "70000"])
    expect(port.status).toBe(2)
    expect(port.stderr).toBe("spillway serve: --port must be from 0 to 65535, got '70000'\n")
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-serve-"))
    try {
      Fs.writeFileSync(Path.join(dir, "token"), "short\n")
      const token = run(["serve", "--token-file", Path.join(dir, "token")])
      expect(token.status).toBe(2)
      expect(token.stderr).toMatch(/^spillway serve: the token in .* must be 16 or more/)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("refuses to start with a SPILLWAY_VIEW_TOKEN or token file shorter than 16 characters, saying the minimum and how to make one", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-serve-"))
    try {
      for (const bind of ["0.0.0.0", "127.0.0.1"]) {
        const weak = run(["serve", "--bind", bind, "--port", "0"], { SPILLWAY_OUTPUT_DIR: dir, SPILLWAY_VIEW_TOKEN: "a" })
        expect(weak.status).toBe(2)
        expect(weak.stdout).toBe("")
        expect(weak.stderr).toBe(
          "spillway serve: SPILLWAY_VIEW_TOKEN: the token is 1 characters long; it must be at least 16 (make a random one with `openssl rand -hex 16`); nothing was served\n"
        )
      }
      Fs.writeFileSync(Path.join(dir, "token"), "fifteen-chars-x\n")
      const file = run(["serve", "--bind", "0.0.0.0", "--token-file", Path.join(dir, "token")], { SPILLWAY_OUTPUT_DIR: dir })
      expect(file.status).toBe(2)
      expect(file.stderr).toMatch(/must be 16 or more letters, digits or \. _ ~ \+ \/ = - \(make a random one with `openssl rand -hex 16`\)\n$/)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("bound beyond loopback without a token, makes one and prints it in its address; ends on SIGTERM", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-serve-"))
    const child = spawn(process.execPath, [bin, "serve", "--bind", "0.0.0.0"], {
      env: { ...process.env, SPILLWAY_OUTPUT_DIR: dir, SPILLWAY_VIEW_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.on("data", (d) => {
          out += d
          if (out.includes("\n")) resolve(out.split("\n")[0]!)
        })
        child.once("exit", (code) => reject(new Error(`exited ${code}`)))
      })
      expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/\?token=[A-Za-z0-9_-]{32}$/)
      const port = new URL(url).port
      expect((await fetch(`http://127.0.0.1:${port}/jobs`)).status).toBe(200)
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        child.once("exit", (c) => resolve(c))
        child.kill("SIGTERM")
      })
      expect(code).toBe(0)
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
