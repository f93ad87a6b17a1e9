/**
 * The bundled opencode plugin, copied where `spillway init opencode` puts it
 * and loaded as opencode loads a plugin file: `import()` the module, call each
 * export with a `PluginInput`, then call the returned `tool.execute.before`
 * hook with the `(input, output)` pair opencode passes before a tool runs.
 * opencode itself runs on Bun, which this machine lacks, so the host's loop is
 * played here with its documented shapes and its own SDK client.
 */
import type { Hooks, PluginInput } from "@opencode-ai/plugin"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { install, root, runMerged, scratch, type Scratch, spillwayOnPath } from "./harness.js"

type Client = PluginInput["client"]
type Before = NonNullable<Hooks["tool.execute.before"]>

/** The opencode SDK's client factory, from the copy the plugin package depends on. */
const loadClientFactory = async (): Promise<(config: { baseUrl: string; fetch: (request: Request) => Promise<Response> }) => Client> => {
  const plugin = Fs.realpathSync(Path.join(root, "integrations", "node_modules", "@opencode-ai", "plugin"))
  const sdk = await import(pathToFileURL(Path.join(plugin, "..", "sdk", "dist", "client.js")).href)
  return sdk.createOpencodeClient
}

/** A request the plugin sent through opencode's client. */
interface Sent {
  readonly url: string
  readonly body: unknown
}

let space: Scratch
let env: Record<string, string | undefined>
let pluginFile: string
let createClient: Awaited<ReturnType<typeof loadClientFactory>>
let before: Before
let moduleKeys: ReadonlyArray<string>
const logged: Array<Sent> = []

/** opencode's SDK client, its requests recorded into `into` instead of sent to a server. */
const recordingClient = (into: Array<Sent>): Client =>
  createClient({
    baseUrl: "http://localhost:4096",
    fetch: async (request) => {
      into.push({ url: request.url, body: await request.clone().json().catch(() => undefined) })
      return new Response("true", { status: 200, headers: { "content-type": "application/json" } })
    }
  })

/** Loads the installed plugin file as opencode does and returns the hooks of its one plugin. */
const load = async (client: Client): Promise<Hooks> => {
  const mod = await import(pathToFileURL(pluginFile).href) as Record<string, unknown>
  moduleKeys = Object.keys(mod)
  const hooks: Array<Hooks> = []
  for (const plugin of Object.values(mod)) {
    if (typeof plugin !== "function") throw new TypeError("Plugin export is not a function")
    hooks.push(await plugin(pluginInput(client, Path.dirname(Path.dirname(Path.dirname(pluginFile)))), {}))
  }
  expect(hooks).toHaveLength(1)
  return hooks[0]!
}

/** Calls the hook as opencode does before a tool runs, and returns the args the tool would run with. */
const call = async (tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
  const output = { args }
  await before({ tool, sessionID: "ses_test", callID: `call_${Math.random()}` }, output)
  return output.args
}

/** A `PluginInput` as opencode builds one (`$` is undefined when opencode does not run on Bun). */
const pluginInput = (client: Client, directory: string): PluginInput => ({
  client,
  project: { id: "test-project", worktree: directory, time: { created: Date.now() } },
  directory,
  worktree: directory,
  experimental_workspace: { register: () => {} },
  serverUrl: new URL("http://localhost:4096"),
  $: undefined as unknown as PluginInput["$"]
})

beforeAll(async () => {
  space = scratch("spillway-opencode-")
  pluginFile = install("opencode", Path.join(space.dir, "project"), Path.join(".opencode", "plugins", "spillway.js"))
  env = { ...process.env, ...spillwayOnPath(space.dir) }
  delete env.SPILLWAY_HOOK
  // the rewrite reads the process's environment (PATH, SPILLWAY_HOOK) when the hook runs
  vi.stubEnv("PATH", env.PATH!)
  vi.stubEnv("SPILLWAY_OUTPUT_DIR", env.SPILLWAY_OUTPUT_DIR!)
  vi.stubEnv("SPILLWAY_HOOK", undefined)
  createClient = await loadClientFactory()
  const hooks = await load(recordingClient(logged))
  await hooks.config!({})
  before = hooks["tool.execute.before"]!
  expect(typeof before).toBe("function")
}, 60_000)

afterAll(() => {
  vi.unstubAllEnvs()
  space?.cleanup()
})

describe("the opencode plugin, bundled and loaded as opencode loads a plugin file", { timeout: 120_000 }, () => {
  it("exports the plugin function alone, as opencode calls every export", () => {
    expect(moduleKeys).toEqual(["default"])
  })

  it("rewrites a bash call, and bash runs it as the original: same output, same exit status", async () => {
    for (const command of ["echo hello", "printf 'a\\nb\\n'; (exit 3)", "echo out; echo err >&2; echo more; false", "ls /nonexistent-spillway-path", "false"]) {
      const args = await call("bash", { command, description: "Runs a test command" })
      expect(args.command).not.toBe(command)
      expect(args.command).toMatch(/\bspillway\b.*\brun\b/)
      expect(args.description).toBe("Runs a test command")
      expect(runMerged(args.command as string, env, space.dir)).toEqual(runMerged(command, env, space.dir))
    }
  })

  it("returns a long output bounded, with its last line and the saved name", async () => {
    const args = await call("bash", { command: "seq 1 200000", description: "Counts" })
    const ran = runMerged(args.command as string, env, space.dir)
    expect(ran.status).toBe(0)
    expect(ran.output.length).toBeLessThan(30_000)
    expect(ran.output.split("\n")).toContain("200000")
    expect(ran.output).toMatch(/spillway read \S+/)
  })

  it("leaves commands that change the shell's own state as written", async () => {
    for (const command of ["cd /tmp", "cd project", "export SPILLWAY_TEST=1", "set -e", "source ./env.sh"]) {
      const args = await call("bash", { command })
      expect(args.command).toBe(command)
    }
  })

  it("leaves every command as written when SPILLWAY_HOOK=off", async () => {
    vi.stubEnv("SPILLWAY_HOOK", "off")
    try {
      for (const command of ["seq 1 200000", "echo hello", "make test"]) {
        const args = await call("bash", { command })
        expect(args.command).toBe(command)
      }
    } finally {
      vi.stubEnv("SPILLWAY_HOOK", undefined)
    }
  })

  it("leaves other tools' calls as they were", async () => {
    for (const [tool, args] of [
      ["read", { filePath: "seq 1 200000" }],
      ["grep", { pattern: "x" }],
      ["task", { command: "seq 1 200000" }],
      ["Bash", { command: "seq 1 200000" }]
    ] as const) {
      const copy: Record<string, unknown> = { ...args }
      await call(tool, copy)
      expect(copy).toEqual(args)
    }
  })

  it("leaves the call as it was and logs one line through opencode's client when something inside fails", async () => {
    logged.length = 0
    const frozen = Object.freeze({ command: "seq 1 200000" })
    await expect(call("bash", frozen)).resolves.toBe(frozen)
    expect(frozen.command).toBe("seq 1 200000")
    const hostile = {
      get command(): string {
        throw new Error(`no command\nhere ${"x".repeat(1_000_000)}`)
      }
    }
    await expect(call("bash", hostile)).resolves.toBe(hostile)
    await vi.waitFor(() => expect(logged).toHaveLength(2))
    for (const entry of logged) {
      expect(new URL(entry.url).pathname).toBe("/log")
      expect(entry.body).toMatchObject({ service: "spillway", level: "warn" })
      const message = (entry.body as { message: string }).message
      expect(message).toMatch(/^spillway: /)
      expect(message).not.toContain("\n")
      expect(message.length).toBeLessThan(500)
    }
    const args = await call("bash", { command: "echo still working" })
    expect(runMerged(args.command as string, env, space.dir).output).toBe("still working\n")
  })

  it("reports on stderr when opencode hands no client, and never throws", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const mod = await import(pathToFileURL(pluginFile).href)
      const hooks: Hooks = await mod.default({ directory: space.dir } as PluginInput, {})
      const output = { args: Object.freeze({ command: "seq 1 200000" }) }
      await expect(hooks["tool.execute.before"]!({ tool: "bash", sessionID: "s", callID: "c" }, output)).resolves.toBeUndefined()
      expect(output.args.command).toBe("seq 1 200000")
      await expect(hooks["tool.execute.before"]!({ tool: "bash", sessionID: "s", callID: "c" }, { args: null })).resolves.toBeUndefined()
      expect(errors).toHaveBeenCalledTimes(1)
      expect(String(errors.mock.calls[0]![0])).toMatch(/^spillway: /)
    } finally {
      errors.mockRestore()
    }
  })

  it("leaves bash commands as written, and says so once, when opencode's configuration checks bash commands one by one", async () => {
    const configs: ReadonlyArray<unknown> = [
      { permission: { bash: { "rm *": "deny", "*": "allow" } } },
      { permission: { bash: "ask" } },
      { permission: "ask" },
      { permission: { "*": "ask" } },
      { agent: { build: { permission: { bash: { "*": "ask", "ls *": "allow" } } } } },
      { mode: { plan: { permission: { bash: "deny" } } } },
      { permission: [{ permission: "bash", pattern: "git push *", action: "ask" }] },
      { permission: { bash: 7 } },
      { agent: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`a${i}`, {}])) },
      Object.defineProperty({}, "permission", { enumerable: true, get: () => { throw new Error("unreadable") } })
    ]
    for (const config of configs) {
      const sent: Array<Sent> = []
      const hooks = await load(recordingClient(sent))
      await hooks.config!(config as never)
      for (const command of ["seq 1 200000", "rm -rf build", "git push"]) {
        const output = { args: { command } as Record<string, unknown> }
        await hooks["tool.execute.before"]!({ tool: "bash", sessionID: "s", callID: "c" }, output)
        expect(output.args.command).toBe(command)
      }
      await vi.waitFor(() => expect(sent).toHaveLength(1))
      expect((sent[0]!.body as { message: string }).message).toMatch(/^spillway: bash commands run as written/)
    }
  })

  it("rewrites when every configured bash permission allows every command", async () => {
    const configs: ReadonlyArray<unknown> = [
      {},
      { permission: { bash: "allow", edit: "deny" } },
      { permission: { bash: { "*": "allow" }, webfetch: "ask" } },
      { permission: "allow" },
      { agent: { build: { permission: { bash: "allow" } }, review: { model: "x" } } },
      { permission: [{ permission: "bash", pattern: "*", action: "allow" }, { permission: "edit", pattern: "*", action: "deny" }] }
    ]
    for (const config of configs) {
      const sent: Array<Sent> = []
      const hooks = await load(recordingClient(sent))
      await hooks.config!(config as never)
      const output = { args: { command: "seq 1 200000" } as Record<string, unknown> }
      await hooks["tool.execute.before"]!({ tool: "bash", sessionID: "s", callID: "c" }, output)
      expect(output.args.command).toMatch(/\bspillway\b.*\brun\b/)
      expect(sent).toEqual([])
    }
  })

  it("decides on a hostile command quickly", async () => {
    const huge = `echo ${"a".repeat(4 * 1024 * 1024)}`
    const weird = "echo \u0000\u001b[31m$(printf '%s' \"'\")`\\"
    for (const command of [huge, weird, "", " ", "\n\n"]) {
      const started = performance.now()
      const args = await call("bash", { command })
      expect(performance.now() - started).toBeLessThan(5_000)
      expect(typeof args.command).toBe("string")
    }
  })
})
