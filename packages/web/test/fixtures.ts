import { Body, type Manifests } from "@spillway/core"
import { NodeBodies, NodeWeb } from "@spillway/node"
import { Effect, Exit, Layer, Scope } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"

/** The command's bin, as a user runs it (built by `pnpm --filter @spillway/cli bundle`). */
export const bin = fileURLToPath(new URL("../../cli/bin/spillway.cjs", import.meta.url))

/** Where screenshots go (gitignored). */
export const artifacts = fileURLToPath(new URL("../../../test-artifacts/web/", import.meta.url))

const encoder = new TextEncoder()

/** What a body is kept as. */
export interface KeepOptions {
  readonly owner: string
  readonly channel?: string
  readonly profile?: string
  readonly tool?: string
  readonly status?: string
  readonly name?: string
  /** True when the chunks are masked already (large generated bodies); masked as written otherwise. */
  readonly alreadyMasked?: boolean
  /** The command recorded beside the output, as `spillway run` records it. */
  readonly command?: string
}

/** Keeps a body in the directory's store, as the command and the tools do. */
export const keep = (directory: string, chunks: Iterable<Uint8Array | string>, options: KeepOptions): Promise<Manifests.Manifest> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const bodies = yield* Body.Bodies
    const w = yield* bodies.create({
      profile: options.profile ?? "spill",
      owner: options.owner,
      channel: options.channel ?? "cli",
      tool: options.tool ?? "command",
      name: options.name,
      alreadyMasked: options.alreadyMasked,
      ...(options.command !== undefined ? { origin: { _tag: "Tool" as const, command: options.command } } : {})
    })
    for (const chunk of chunks) yield* w.write(typeof chunk === "string" ? encoder.encode(chunk) : chunk)
    return yield* w.seal({ status: options.status ?? "exit 0" })
  })).pipe(Effect.provide(NodeBodies.layer({ directory }))))

/** A body that grows while a test runs, as a running job's output does, written by this process. */
export const growing = async (directory: string, options: KeepOptions & { readonly command: string }) => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(NodeBodies.layer({ directory }), scope))
  const origin = (exitCode: number | null): Manifests.Origin => ({
    _tag: "Job",
    pid: 4242,
    generation: "g1",
    command: options.command,
    exitedAt: exitCode === null ? null : Date.now(),
    exitCode,
    signal: null
  })
  const writer = await Effect.runPromise(Effect.gen(function*() {
    const bodies = yield* Body.Bodies
    return yield* bodies.create({
      profile: "spool",
      owner: options.owner,
      channel: options.channel ?? "conversation-1",
      channelBound: true,
      tool: "manage_process",
      name: options.name,
      status: "running",
      origin: origin(null),
      visible: true,
      cut: "byte"
    })
  }).pipe(Effect.provide(context), Scope.extend(scope)))
  return {
    name: writer.name,
    write: (text: string) => Effect.runPromise(Effect.zipRight(writer.write(encoder.encode(text)), writer.save({ noExpiry: true }))),
    seal: (exitCode: number) =>
      Effect.runPromise(Effect.zipRight(writer.seal({ status: `exit ${exitCode}`, origin: origin(exitCode) }), Scope.close(scope, Exit.void)))
  }
}

/** Lines `[000000001] ...` of about 90 bytes, in chunks of about 1 MiB, `bytes` in all. */
export function* logChunks(bytes: number, plant: (line: number) => string | undefined = () => undefined): Generator<Uint8Array> {
  const words = ["compiling", "linking", "resolving", "fetching", "checking", "bundling", "testing", "caching"]
  let written = 0
  let i = 1
  while (written < bytes) {
    const parts: Array<string> = []
    let size = 0
    while (size < 1 << 20 && written + size < bytes) {
      const line = plant(i) ?? `[${String(i).padStart(9, "0")}] ${words[i % 8]} packages/pkg-${i % 313}/src/file-${i % 71}.ts ok (${i % 1000} ms)\n`
      parts.push(line)
      size += line.length
      i++
    }
    const chunk = encoder.encode(parts.join(""))
    written += chunk.length
    yield chunk
  }
}

/** The view served in this process, for as long as the test needs it. */
export const serveHere = async (directory: string, options: Omit<NodeWeb.Options, "directory"> & { readonly owner: string }) => {
  const scope = Effect.runSync(Scope.make())
  const started = await Effect.runPromise(NodeWeb.serve({ directory, ...options }).pipe(Scope.extend(scope)))
  return { ...started, base: `http://127.0.0.1:${started.port}`, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** `spillway serve` as its own process, as a user starts it; resolves with the URL it prints. */
export const serveProcess = (directory: string, owner: string, extraEnv: Record<string, string> = {}) =>
  new Promise<{ readonly url: string; readonly pid: number; readonly stop: () => Promise<void> }>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "serve", "--port", "0"], {
      env: { ...process.env, SPILLWAY_OUTPUT_DIR: directory, SPILLWAY_OWNER: owner, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    const stop = () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done()
        child.once("exit", () => done())
        child.kill("SIGTERM")
      })
    child.stderr.on("data", (d) => (err += d))
    child.stdout.on("data", (d) => {
      out += d
      const line = out.split("\n")[0]!
      if (out.includes("\n")) resolve({ url: line.trim(), pid: child.pid!, stop })
    })
    child.once("exit", (code) => reject(new Error(`spillway serve exited ${code}: ${err}`)))
  })

/** Peak and current resident memory of a process, in MiB, from /proc. */
export const memoryOf = (pid: number) => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN)
  return { peakMiB: kib("VmHWM") / 1024, rssMiB: kib("VmRSS") / 1024 }
}
