import { Controller } from "@spillway/remote"
import { Effect, Layer } from "effect"
import * as ChildProcess from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const bin = fileURLToPath(new URL("../../cli/bin/spillway.cjs", import.meta.url))

/** A host's directory and credentials file (credential to scope). */
export const hostFiles = (credentials: Record<string, string>) => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spillway-host-"))
  const file = Path.join(directory, "credentials.json")
  Fs.writeFileSync(file, JSON.stringify({ credentials }))
  return { directory: Path.join(directory, "host"), credentials: file, root: directory }
}

/** A host listening on a loopback port (TCP, or WebSocket), as a process of its own, stopped with the scope. */
export const hostProcess = (
  files: { readonly directory: string; readonly credentials: string },
  flag: "--listen" | "--listen-ws" = "--listen",
  extra: ReadonlyArray<string> = [],
  /** A port to listen on (a host started again where it was); a random one by default. */
  onPort?: number
) =>
  Effect.gen(function*() {
    const port = onPort ?? 20_000 + Math.floor(Math.random() * 20_000)
    const host = ChildProcess.spawn(
      process.execPath,
      [bin, "host", flag, String(port), "--dir", files.directory, "--credentials", files.credentials, ...extra],
      { stdio: ["ignore", "ignore", "pipe"] }
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => void host.kill("SIGTERM")))
    yield* Effect.async<void>((resume) => {
      let said = ""
      host.stderr!.on("data", (d: Buffer) => {
        said += d.toString()
        if (said.includes("listening")) resume(Effect.void)
      })
      host.once("exit", (code) => resume(Effect.dieMessage(`the host exited (${code}) before it listened: ${said}`)))
    })
    return { host, port }
  })

/** Resident memory of a process, in MiB. */
export const rssMiB = (pid: number): number => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024
}

/** What a raw client saw: the lines (TCP) or text messages (WebSocket) it was sent, and how the connection ended. */
export interface Seen {
  readonly lines: Array<string>
  /** The WebSocket close frame, when there was one. */
  close?: { readonly code: number; readonly reason: string }
  /** The HTTP status line, for WebSocket connections refused before the upgrade. */
  status?: string
  readonly ended: Promise<void>
}

/** A TCP connection that speaks raw bytes and collects the lines it is sent until the host closes it. */
export const rawTcp = (port: number) => {
  const socket = Net.connect({ port, host: "127.0.0.1" })
  socket.on("error", () => {})
  let text = ""
  const seen: Seen = {
    lines: [],
    ended: new Promise<void>((resolve) => socket.once("close", () => resolve()))
  }
  socket.on("data", (d: Buffer) => {
    text += d.toString("utf8")
    const parts = text.split("\n")
    text = parts.pop()!
    seen.lines.push(...parts)
  })
  const connected = new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  return { socket, seen, connected }
}

/**
 * A WebSocket connection made by hand over TCP, so a test can declare a
 * frame of any size and send its payload in pieces without holding it.
 * Frames it sends are masked with a zero key (the payload goes as is).
 */
export const rawWs = (port: number) => {
  const socket = Net.connect({ port, host: "127.0.0.1" })
  socket.on("error", () => {})
  const seen: Seen = {
    lines: [],
    ended: new Promise<void>((resolve) => socket.once("close", () => resolve()))
  }
  let upgraded = false
  let buffer = Buffer.alloc(0)
  const upgrade = new Promise<boolean>((resolve) => {
    socket.once("connect", () => {
      socket.write(
        `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`
      )
    })
    socket.once("close", () => resolve(false))
    socket.on("data", (d: Buffer) => {
      buffer = Buffer.concat([buffer, d])
      if (!upgraded) {
        const end = buffer.indexOf("\r\n\r\n")
        if (end === -1) return
        const head = buffer.subarray(0, end).toString("latin1")
        seen.status = head.split("\r\n")[0]
        buffer = buffer.subarray(end + 4)
        if (!head.startsWith("HTTP/1.1 101")) {
          seen.lines.push(buffer.toString("utf8"))
          return resolve(false)
        }
        upgraded = true
        resolve(true)
      }
      // unmasked frames from the server
      while (buffer.length >= 2) {
        const opcode = buffer[0]! & 0x0f
        let length = buffer[1]! & 0x7f
        let at = 2
        if (length === 126) {
          if (buffer.length < 4) return
          length = buffer.readUInt16BE(2)
          at = 4
        } else if (length === 127) {
          if (buffer.length < 10) return
          length = Number(buffer.readBigUInt64BE(2))
          at = 10
        }
        if (buffer.length < at + length) return
        const payload = buffer.subarray(at, at + length)
        buffer = buffer.subarray(at + length)
        if (opcode === 1) seen.lines.push(...payload.toString("utf8").split("\n").filter((l) => l !== ""))
        if (opcode === 8) seen.close = { code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005, reason: payload.subarray(2).toString("utf8") }
      }
    })
  })
  /** The header of one masked frame (text, final) with a zero key, declaring `length` bytes. */
  const header = (length: number, opcode = 1) => {
    const mask = Buffer.alloc(4)
    if (length < 126) return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | length]), mask])
    if (length < 65536) {
      const h = Buffer.from([0x80 | opcode, 0x80 | 126, 0, 0])
      h.writeUInt16BE(length, 2)
      return Buffer.concat([h, mask])
    }
    const h = Buffer.alloc(10)
    h[0] = 0x80 | opcode
    h[1] = 0x80 | 127
    h.writeBigUInt64BE(BigInt(length), 2)
    return Buffer.concat([h, mask])
  }
  const sendText = (text: string) => {
    const payload = Buffer.from(text, "utf8")
    socket.write(Buffer.concat([header(payload.length), payload]))
  }
  return { socket, seen, upgrade, header, sendText }
}

/** Writes `total` bytes of `chunk` repeated, as fast as the socket takes them, until done or the socket closes. */
export const pour = (socket: Net.Socket, chunk: Buffer, total: number) =>
  new Promise<number>((resolve) => {
    let sent = 0
    const go = () => {
      while (sent < total && !socket.destroyed) {
        const piece = chunk.subarray(0, Math.min(chunk.length, total - sent))
        sent += piece.length
        if (!socket.write(piece)) return void socket.once("drain", go)
      }
      resolve(sent)
    }
    socket.once("close", () => resolve(sent))
    go()
  })

/** The caller the load and limit tests lease as. */
export const me = { owner: "controller-1", channel: "conv-1" }

/** A controller over TCP or WebSocket, leased with `credential`. */
export const controllerOn = (port: number, transport: "tcp" | "ws", credential: string) =>
  Effect.gen(function*() {
    const connection = transport === "tcp"
      ? Controller.layerTcp({ host: "127.0.0.1", port })
      : Controller.layerWebSocket(`ws://127.0.0.1:${port}`)
    const context = yield* Layer.build(Controller.layer({ callTimeout: "20 seconds" }).pipe(Layer.provideMerge(connection)))
    return yield* Effect.flatMap(Controller.RemoteLease, (r) => r.lease(credential, me)).pipe(Effect.provide(context))
  })

/** Samples a process's resident memory every 50 ms while `during` runs; the peak, in MiB. */
export const peakWhile = <A, E>(pid: number, during: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    let peak = rssMiB(pid)
    const timer = setInterval(() => {
      try {
        peak = Math.max(peak, rssMiB(pid))
      } catch {
        // the process is gone; the test says so below
      }
    }, 50)
    const result = yield* Effect.ensuring(during, Effect.sync(() => clearInterval(timer)))
    return { result, peak }
  })
