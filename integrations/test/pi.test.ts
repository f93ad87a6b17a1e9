/**
 * The bundled pi extension, copied where `spillway init pi` puts it and loaded
 * by pi's own resource loader into a real pi agent (its SDK). A scripted model (pi's
 * faux provider) asks for `bash` calls; pi's own bash tool runs them.
 */
import {
  AuthStorage,
  createAgentSession,
  type CreateAgentSessionOptions,
  DefaultResourceLoader,
  type ExtensionAPI,
  SessionManager,
  SettingsManager,
  type ToolCallEvent
} from "@mariozechner/pi-coding-agent"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest"
import { install, root, runMerged, scratch, type Scratch, spillwayOnPath } from "./harness.js"

type Model = NonNullable<CreateAgentSessionOptions["model"]>
type Session = Awaited<ReturnType<typeof createAgentSession>>["session"]

/** The part of pi's faux provider (in `@mariozechner/pi-ai`, pi's own dependency) these tests use. */
interface Faux {
  readonly registerFauxProvider: (options: { provider: string; models: Array<{ id: string }> }) => {
    getModel(): Model
    setResponses(responses: ReadonlyArray<unknown>): void
    unregister(): void
  }
  readonly fauxAssistantMessage: (content: unknown, options?: { stopReason?: "toolUse" | "stop" }) => unknown
  readonly fauxToolCall: (name: string, args: Record<string, unknown>) => unknown
}

/** pi's model library, the copy pi itself loads (a dependency of pi, beside it in the store). */
const loadFaux = async (): Promise<Faux> => {
  const pi = Fs.realpathSync(Path.join(root, "integrations", "node_modules", "@mariozechner", "pi-coding-agent"))
  return await import(pathToFileURL(Path.join(pi, "..", "pi-ai", "dist", "index.js")).href) as Faux
}

/** What one `bash` call became: the command pi's tool ran, and the result the model read. */
interface Call {
  readonly ran: string
  readonly text: string
  readonly isError: boolean
}

let space: Scratch
let faux: Faux
let provider: ReturnType<Faux["registerFauxProvider"]>
let session: Session
const ran: Array<string> = []
const saved: Record<string, string | undefined> = {}

/** Records the command each tool call ran, through pi's own `tool_result` event. */
const recorder = (pi: ExtensionAPI): void => {
  pi.on("tool_result", (event) => {
    const command = event.input.command
    if (typeof command === "string") ran.push(command)
  })
}

/** Has the scripted model ask for one `bash` call and returns what it ran and what the model read. */
const callBash = async (command: string): Promise<Call> => {
  ran.length = 0
  const before = session.messages.length
  provider.setResponses([
    faux.fauxAssistantMessage(faux.fauxToolCall("bash", { command }), { stopReason: "toolUse" }),
    faux.fauxAssistantMessage("done")
  ])
  await session.prompt("run it")
  const result = session.messages.slice(before).find((m) => m.role === "toolResult")
  if (result === undefined || result.role !== "toolResult") throw new Error("pi recorded no tool result")
  const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("")
  expect(ran).toHaveLength(1)
  return { ran: ran[0]!, text, isError: result.isError }
}

/** A `tool_call` event as pi builds one, sent through the agent's own extension runner. */
const emit = (toolName: string, input: Record<string, unknown>) =>
  session.extensionRunner.emitToolCall({ type: "tool_call", toolCallId: `call-${Math.random()}`, toolName, input } as ToolCallEvent)

/** Sets an environment variable for the test's process (pi's bash tool and the rewrite read it), restored after all. */
const setEnv = (name: string, value: string | undefined): void => {
  if (!(name in saved)) saved[name] = process.env[name]
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}

beforeAll(async () => {
  space = scratch("spillway-pi-")
  const agentDir = Path.join(space.dir, "agent")
  const cwd = Path.join(space.dir, "project")
  Fs.mkdirSync(cwd, { recursive: true })
  install("pi", agentDir, Path.join("extensions", "spillway.js"))
  for (const [name, value] of Object.entries(spillwayOnPath(space.dir))) setEnv(name, value)
  setEnv("PI_CODING_AGENT_DIR", agentDir)
  setEnv("SPILLWAY_HOOK", undefined)

  faux = await loadFaux()
  provider = faux.registerFauxProvider({ provider: "spillway-test", models: [{ id: "scripted" }] })
  const model = provider.getModel()
  const authStorage = AuthStorage.inMemory()
  authStorage.setRuntimeApiKey(model.provider, "unused")
  const settingsManager = SettingsManager.inMemory()
  const resourceLoader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    extensionFactories: [recorder],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true
  })
  await resourceLoader.reload()
  const loaded = resourceLoader.getExtensions()
  expect(loaded.errors).toEqual([])
  expect(loaded.extensions.map((e) => e.path)).toContain(Path.join(agentDir, "extensions", "spillway.js"))
  ;({ session } = await createAgentSession({
    cwd,
    agentDir,
    model,
    authStorage,
    settingsManager,
    resourceLoader,
    sessionManager: SessionManager.inMemory(),
    tools: ["bash"]
  }))
}, 60_000)

afterAll(() => {
  session?.dispose()
  provider?.unregister()
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  space?.cleanup()
})

beforeEach(() => {
  setEnv("SPILLWAY_HOOK", undefined)
})

describe("the pi extension, bundled and loaded by pi", { timeout: 120_000 }, () => {
  it("routes a bash call through spillway run, and the model reads what the original prints and how it exits", async () => {
    for (const command of ["echo hello", "printf 'a\\nb\\n'; (exit 3)", "echo warning >&2; (exit 4)", "ls /nonexistent-spillway-path"]) {
      setEnv("SPILLWAY_HOOK", "off")
      const plain = await callBash(command)
      expect(plain.ran).toBe(command)
      setEnv("SPILLWAY_HOOK", undefined)
      const routed = await callBash(command)
      expect(routed.ran).not.toBe(command)
      expect(routed.ran).toMatch(/\bspillway\b.*\brun\b/)
      expect({ text: routed.text, isError: routed.isError }).toEqual({ text: plain.text, isError: plain.isError })
    }
  })

  it("returns a long output bounded, with its last line and the saved name", async () => {
    const routed = await callBash("seq 1 200000")
    expect(routed.ran).not.toBe("seq 1 200000")
    expect(routed.text.length).toBeLessThan(30_000)
    expect(routed.text.split("\n")).toContain("200000")
    expect(routed.text).toMatch(/spillway read \S+/)
    expect(routed.isError).toBe(false)
  })

  it("runs the rewritten command in bash as the original: same output, same exit status", async () => {
    const space = scratch("spillway-pi-bash-")
    try {
      const env = { ...process.env }
      for (const command of ["echo hello", "printf 'a\\nb\\n'; (exit 3)", "echo out; echo err >&2; echo more; false", "false"]) {
        const input: Record<string, unknown> = { command }
        await emit("bash", input)
        expect(input.command).not.toBe(command)
        expect(runMerged(input.command as string, env, space.dir)).toEqual(runMerged(command, env, space.dir))
      }
      const input: Record<string, unknown> = { command: "seq 1 200000" }
      await emit("bash", input)
      const long = runMerged(input.command as string, env, space.dir)
      expect(long.status).toBe(0)
      expect(long.output.length).toBeLessThan(30_000)
      expect(long.output.split("\n")).toContain("200000")
    } finally {
      space.cleanup()
    }
  })

  it("leaves commands that change the shell's own state as written", async () => {
    for (const command of ["cd /tmp", "cd project", "export SPILLWAY_TEST=1", "set -e", "source ./env.sh"]) {
      const input: Record<string, unknown> = { command }
      await expect(emit("bash", input)).resolves.toBeUndefined()
      expect(input.command).toBe(command)
    }
    const through = await callBash("cd /tmp")
    expect(through.ran).toBe("cd /tmp")
  })

  it("leaves every command as written when SPILLWAY_HOOK=off", async () => {
    setEnv("SPILLWAY_HOOK", "off")
    for (const command of ["seq 1 200000", "echo hello", "make test"]) {
      const input: Record<string, unknown> = { command }
      await emit("bash", input)
      expect(input.command).toBe(command)
    }
  })

  it("leaves other tools' calls as they were", async () => {
    for (const [tool, input] of [
      ["read", { path: "seq 1 200000" }],
      ["grep", { pattern: "x", path: "." }],
      ["my_shell", { command: "seq 1 200000" }],
      ["Bash", { command: "seq 1 200000" }]
    ] as const) {
      const copy: Record<string, unknown> = { ...input }
      await expect(emit(tool, copy)).resolves.toBeUndefined()
      expect(copy).toEqual(input)
    }
  })

  it("leaves the call as it was, unblocked, and reports one line when something inside fails", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const frozen = Object.freeze({ command: "seq 1 200000" })
      await expect(emit("bash", frozen)).resolves.toBeUndefined()
      expect(frozen.command).toBe("seq 1 200000")
      const hostile = {
        get command(): string {
          throw new Error(`no command\nhere ${"x".repeat(1_000_000)}`)
        }
      }
      await expect(emit("bash", hostile)).resolves.toBeUndefined()
      expect(errors).toHaveBeenCalledTimes(2)
      for (const [line] of errors.mock.calls) {
        expect(String(line)).toMatch(/^spillway: /)
        expect(String(line)).not.toContain("\n")
        expect(String(line).length).toBeLessThan(500)
      }
    } finally {
      errors.mockRestore()
    }
    const after = await callBash("echo still working")
    expect(after.text.trim()).toBe("still working")
  })

  it("decides on a hostile command quickly and never blocks it", async () => {
    const huge = `echo ${"a".repeat(4 * 1024 * 1024)}`
    const weird = "echo \u0000\u001b[31m$(printf '%s' \"'\")`\\"
    for (const command of [huge, weird, "", " ", "\n\n"]) {
      const input: Record<string, unknown> = { command }
      const started = performance.now()
      await expect(emit("bash", input)).resolves.toBeUndefined()
      expect(performance.now() - started).toBeLessThan(5_000)
      expect(typeof input.command).toBe("string")
    }
  })
})
