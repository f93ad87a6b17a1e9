/**
 * The host's listeners: the RPC protocol over TCP (NDJSON lines) and over
 * WebSocket (NDJSON in messages), with limits that hold before a
 * connection has shown who it is. Every connection counts as
 * unauthenticated until a handler reports a credential or a lease it
 * accepted; those are few, have a deadline, and may send only small frames.
 * When they are as many as allowed, a new one takes the place of the oldest
 * with no call in flight, from the address that holds the most: a flood
 * pushes out its own connections first and never a controller's that has
 * authenticated, which count against no limit but the total.
 * Every close says why: a `Defect` frame with the reason, then, on
 * WebSocket, a close code and reason.
 *
 * @internal
 */
import * as RpcServer from "@effect/rpc/RpcServer"
import type { FromClientEncoded, FromServerEncoded } from "@effect/rpc/RpcMessage"
import { Context, Effect, Layer, Mailbox, Queue, Runtime, Schema, type Scope } from "effect"
import * as Http from "node:http"
import * as Net from "node:net"
import { WebSocketServer, type WebSocket } from "ws"

/** Limits on connections and frames; each has a default. */
export interface Limits {
  /** Longest frame (a line on TCP, a message or a line on WebSocket), in bytes. */
  readonly maxFrameBytes: number
  /** Connections at once that have not yet shown a credential or a lease; a new one past them closes the oldest. */
  readonly maxUnauthenticated: number
  /** Connections at once in all. */
  readonly maxConnections: number
  /** Time a connection has to show a credential or a lease. */
  readonly handshakeMillis: number
  /** A connection with no traffic either way and no call in progress is closed after this long. */
  readonly idleMillis: number
}

/** The defaults: 1 MiB frames, 32 connections waiting to authenticate, 10 seconds to do it, 1,024 in all, 5 minutes idle. */
export const defaultLimits: Limits = {
  maxFrameBytes: 1024 * 1024,
  maxUnauthenticated: 32,
  maxConnections: 1024,
  handshakeMillis: 10_000,
  idleMillis: 5 * 60_000
}

/** Told by the handlers when a connection has shown a credential or lease the host accepted. */
export class Sessions extends Context.Tag("@spillway/remote/Host/Sessions")<Sessions, {
  readonly authenticated: (clientId: number) => void
}>() {}

/** The listener could not start. */
export class ListenError extends Schema.TaggedError<ListenError>()("ListenError", { address: Schema.String, reason: Schema.String }) {
  override get message() {
    return `cannot listen on ${this.address}: ${this.reason}`
  }
}

/** One end of a connection, whatever the transport. */
interface Transport {
  readonly write: (text: string) => void
  /** Bytes written and not yet sent. */
  readonly buffered: () => number
  /** Sends the reason, then closes (WebSocket: with `code`). */
  readonly close: (code: number, reason: string) => void
  readonly pause: () => void
  readonly resume: () => void
}

interface Connection {
  readonly id: number
  /** The peer's address, which connections are counted by. */
  readonly address: string
  transport: Transport | undefined
  authenticated: boolean
  closed: boolean
  inFlight: number
  /** Calls handed to the server and not yet answered. */
  running: number
  /** Calls handed to the server since the event loop last turned for this connection. */
  turn: number
  /** Open while the connection may hand the server another call. */
  readonly room: Effect.Latch
  pending: number
  paused: boolean
  chunks: Array<Buffer>
  length: number
  handshake: ReturnType<typeof setTimeout> | undefined
  idle: ReturnType<typeof setTimeout> | undefined
  readonly queue: Queue.Queue<FromClientEncoded>
}

const DIGITS = /^\d{1,24}$/

/** A frame as the client protocol allows it, for calls named in `tags`, or why not. */
const decodeFrame = (value: unknown, tags: ReadonlySet<string>): FromClientEncoded | string => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "a frame must be a JSON object"
  const v = value as Record<string, unknown>
  switch (v._tag) {
    case "Ping":
      return { _tag: "Ping" }
    case "Eof":
      return { _tag: "Eof" }
    case "Ack":
    case "Interrupt":
      if (typeof v.requestId !== "string" || !DIGITS.test(v.requestId)) return `${v._tag} needs a numeric requestId string`
      return { _tag: v._tag, requestId: v.requestId }
    case "Request": {
      if (typeof v.id !== "string" || !DIGITS.test(v.id)) return "Request needs a numeric id string"
      if (typeof v.tag !== "string" || !tags.has(v.tag)) return `Request needs the name of a call: one of ${[...tags].join(", ")}`
      const headers = v.headers ?? []
      if (
        !Array.isArray(headers) || headers.length > 64 ||
        !headers.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === "string" && typeof h[1] === "string")
      ) {
        return "Request headers must be at most 64 [name, value] string pairs"
      }
      return {
        _tag: "Request",
        id: v.id,
        tag: v.tag,
        payload: v.payload,
        headers: headers as ReadonlyArray<[string, string]>,
        ...(typeof v.traceId === "string" ? { traceId: v.traceId } : {}),
        ...(typeof v.spanId === "string" ? { spanId: v.spanId } : {}),
        ...(typeof v.sampled === "boolean" ? { sampled: v.sampled } : {})
      }
    }
    default:
      return "unknown frame tag"
  }
}

/** WebSocket close codes. */
const CLOSE = { normal: 1000, policy: 1008, tooBig: 1009, tryLater: 1013 } as const

/** Hands a connection's incoming bytes and its end to the protocol. */
type Feed = (onData: (chunk: Buffer) => void, onClose: () => void) => void

/**
 * How a server takes connections: `accept` admits one (or has `refuse`
 * turn it away, with the reason) and `attach` gives it a transport, again
 * when it changes (a WebSocket upgrade).
 */
type Listen = (
  accept: (address: string, refuse: (reason: string) => void) => Connection | undefined,
  attach: (connection: Connection, transport: Transport, feed: Feed) => void
) => Effect.Effect<void, ListenError, Scope.Scope>

/**
 * Splits a connection's bytes into newline-ended frames, carrying a partial
 * one to the next chunk; a frame over `maxFrameBytes` ends the split with
 * `tooBig` before it is ever held whole.
 */
const splitFrames = (c: Connection, chunk: Buffer, maxFrameBytes: number, onLine: (line: Buffer) => void, tooBig: () => void) => {
  let start = 0
  for (let nl = chunk.indexOf(10); nl !== -1 && !c.closed; nl = chunk.indexOf(10, start)) {
    const part = chunk.subarray(start, nl)
    if (c.length + part.length > maxFrameBytes) return tooBig()
    const line = c.chunks.length === 0 ? part : Buffer.concat([...c.chunks, part])
    c.chunks = []
    c.length = 0
    onLine(line)
    start = nl + 1
  }
  if (c.closed || start >= chunk.length) return
  const rest = chunk.subarray(start)
  if (c.length + rest.length > maxFrameBytes) return tooBig()
  // a copy, so a large chunk is not kept for a small remainder
  c.chunks.push(Buffer.from(rest))
  c.length += rest.length
}

/** A reply as one line; one that cannot be encoded becomes a defect the client can read. */
const encodeReply = (response: FromServerEncoded): string => {
  try {
    return `${JSON.stringify(response)}\n`
  } catch {
    return `${JSON.stringify({ _tag: "Defect", defect: "a reply could not be encoded" })}\n`
  }
}

/** A connection just accepted: not yet authenticated, with nothing in flight and its own queue of frames. */
const newConnection = (id: number, address: string): Connection => ({
  id,
  address,
  transport: undefined,
  authenticated: false,
  closed: false,
  inFlight: 0,
  running: 0,
  turn: 0,
  room: Effect.runSync(Effect.makeLatch(true)),
  pending: 0,
  paused: false,
  chunks: [],
  length: 0,
  handshake: undefined,
  idle: undefined,
  queue: Effect.runSync(Queue.unbounded<FromClientEncoded>())
})

/**
 * Calls one connection may have running on the server at once; its next
 * call waits (and, as its frames pile up, its reading stops) until one is
 * answered, so a burst of calls on one connection takes its turn beside
 * other connections' calls instead of ahead of them.
 */
export const MAX_CALLS_PER_CONNECTION = 128

/**
 * Calls one connection hands the server before the event loop turns: then
 * it waits for the next turn, so the other connections' bytes are read and
 * their calls start between one burst and the next.
 */
const CALLS_PER_TURN = 16

/** Resumes on the event loop's next turn, after its pending input has been read. */
const nextTurn = Effect.async<void>((resume) => {
  const t = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(t))
})

/** Waits for room for one more call of the connection, and every `CALLS_PER_TURN` calls for the event loop's next turn. */
const admit = (c: Connection) =>
  Effect.suspend(() => {
    if (++c.turn < CALLS_PER_TURN) return c.room.await
    c.turn = 0
    return Effect.zipRight(c.room.await, nextTurn)
  })

/**
 * Hands a connection's frames to the server one at a time, so they reach it
 * in order, with at most `MAX_CALLS_PER_CONNECTION` calls running; a paused
 * connection resumes once few frames wait. Runs until the queue is shut down.
 */
const forward = (c: Connection, write: (clientId: number, message: FromClientEncoded) => Effect.Effect<void>) =>
  Queue.take(c.queue).pipe(
    Effect.flatMap((message) =>
      Effect.ensuring(
        message._tag !== "Request" ? write(c.id, message) : Effect.zipRight(
          admit(c),
          Effect.suspend(() => {
            if (c.closed) return Effect.void
            if (++c.running >= MAX_CALLS_PER_CONNECTION) c.room.unsafeClose()
            return write(c.id, message)
          })
        ),
        Effect.sync(() => {
          c.pending--
          if (c.paused && c.pending < 16) {
            c.paused = false
            c.transport?.resume()
          }
        })
      )
    ),
    Effect.forever,
    Effect.catchAllCause(() => Effect.void)
  )

/** The frame a line holds: undefined for a blank line, or why it is refused. */
const parseLine = (line: Buffer, tags: ReadonlySet<string>): FromClientEncoded | string | undefined => {
  const text = line.toString("utf8").trim()
  if (text === "") return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return "a frame is not JSON"
  }
  const frame = decodeFrame(value, tags)
  return typeof frame === "string" ? `malformed frame: ${frame}` : frame
}

const make = (limits: Limits, tags: ReadonlySet<string>, listen: Listen) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const fork = Runtime.runFork(runtime)
    const disconnects = yield* Mailbox.make<number>()
    const connections = new Map<number, Connection>()
    let nextId = 0
    // connections waiting to authenticate, oldest first, and how many each address holds
    const waiting = new Set<Connection>()
    const waitingBy = new Map<string, number>()
    const unwait = (c: Connection) => {
      if (!waiting.delete(c)) return
      const n = (waitingBy.get(c.address) ?? 1) - 1
      if (n <= 0) waitingBy.delete(c.address)
      else waitingBy.set(c.address, n)
    }
    let writeRequest!: (clientId: number, message: FromClientEncoded) => Effect.Effect<void>

    const armIdle = (c: Connection) => {
      clearTimeout(c.idle)
      c.idle = setTimeout(() => {
        if (c.inFlight > 0) armIdle(c)
        else close(c, CLOSE.normal, `idle for ${Math.round(limits.idleMillis / 1000)} s`)
      }, limits.idleMillis)
    }

    /** Closes with a reason and forgets the connection, releasing what it held. */
    const close = (c: Connection, code: number, reason: string) => {
      if (c.closed) return
      c.closed = true
      c.chunks = []
      c.length = 0
      clearTimeout(c.handshake)
      clearTimeout(c.idle)
      unwait(c)
      // a call waiting for room goes no further
      c.room.unsafeOpen()
      connections.delete(c.id)
      c.transport?.close(code, reason)
      fork(Effect.zipRight(Queue.shutdown(c.queue), disconnects.offer(c.id)))
    }

    /** The oldest waiting connection with no call in flight, of the address that holds the most. */
    const evictable = (): Connection | undefined => {
      let most: string | undefined
      for (const [address, n] of waitingBy) if (most === undefined || n > waitingBy.get(most)!) most = address
      let fallback: Connection | undefined
      for (const c of waiting) {
        if (c.inFlight > 0) continue
        if (c.address === most) return c
        fallback ??= c
      }
      return fallback
    }

    const accept = (address: string, refuse: (reason: string) => void): Connection | undefined => {
      if (waiting.size >= limits.maxUnauthenticated || connections.size >= limits.maxConnections) {
        // room for the newcomer: the connection that has waited longest makes way
        const oldest = evictable()
        if (oldest !== undefined) {
          close(oldest, CLOSE.tryLater, `it had not authenticated when newer connections came (${limits.maxUnauthenticated} may wait at once); connect again and present a credential or lease at once`)
        }
      }
      if (connections.size >= limits.maxConnections) {
        refuse(`it has ${limits.maxConnections} connections already; try again later`)
        return undefined
      }
      if (waiting.size >= limits.maxUnauthenticated) {
        refuse(`${limits.maxUnauthenticated} connections are authenticating already; try again in a moment`)
        return undefined
      }
      const c = newConnection(nextId++, address)
      waiting.add(c)
      waitingBy.set(address, (waitingBy.get(address) ?? 0) + 1)
      connections.set(c.id, c)
      c.handshake = setTimeout(() =>
        close(c, CLOSE.policy, `no credential or lease within ${Math.round(limits.handshakeMillis / 1000)} s`), limits.handshakeMillis)
      armIdle(c)
      fork(forward(c, (clientId, message) => writeRequest(clientId, message)))
      return c
    }

    const onLine = (c: Connection, line: Buffer) => {
      const frame = parseLine(line, tags)
      if (frame === undefined) return
      if (typeof frame === "string") return close(c, CLOSE.policy, frame)
      if (frame._tag === "Request") c.inFlight++
      c.pending++
      if (c.pending > 64 && !c.paused) {
        c.paused = true
        c.transport?.pause()
      }
      Queue.unsafeOffer(c.queue, frame)
    }

    const tooBig = (c: Connection) => close(c, CLOSE.tooBig, `a frame is longer than ${limits.maxFrameBytes} bytes`)

    const onData = (c: Connection, chunk: Buffer) => {
      if (c.closed) return
      armIdle(c)
      splitFrames(c, chunk, limits.maxFrameBytes, (line) => onLine(c, line), () => tooBig(c))
    }

    const attach = (c: Connection, transport: Transport, feed: Feed) => {
      c.transport = transport
      feed((chunk) => onData(c, chunk), () => close(c, CLOSE.normal, "the connection ended"))
    }

    yield* listen(accept, attach)
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      for (const c of [...connections.values()]) close(c, 1001, "the host is stopping")
    }))

    const protocol = yield* RpcServer.Protocol.make((write) => {
      writeRequest = write
      return Effect.succeed({
        disconnects,
        send: (clientId: number, response: FromServerEncoded) =>
          Effect.sync(() => {
            const c = connections.get(clientId)
            if (c === undefined || c.closed || c.transport === undefined) return
            if (response._tag === "Exit") {
              c.inFlight = Math.max(0, c.inFlight - 1)
              c.running = Math.max(0, c.running - 1)
              if (c.running < MAX_CALLS_PER_CONNECTION) c.room.unsafeOpen()
            }
            // a client that does not read its replies is not kept waiting for
            if (c.transport.buffered() > 8 * limits.maxFrameBytes) return close(c, CLOSE.policy, "replies are not being read")
            c.transport.write(encodeReply(response))
            armIdle(c)
          }),
        end: () => Effect.void,
        clientIds: Effect.sync(() => new Set(connections.keys())),
        initialMessage: Effect.succeedNone,
        supportsAck: true,
        supportsTransferables: false,
        supportsSpanPropagation: true
      })
    })

    const sessions: Sessions["Type"] = {
      authenticated: (clientId) => {
        const c = connections.get(clientId)
        if (c === undefined || c.authenticated || c.closed) return
        c.authenticated = true
        unwait(c)
        clearTimeout(c.handshake)
      }
    }
    return { protocol, sessions }
  })

/** What a listener is told: where, with what limits, for which calls. */
export interface ListenOptions {
  readonly port: number
  readonly host: string
  readonly limits: Limits
  /** The calls of the RPC group served; a request for any other is a malformed frame. */
  readonly tags: ReadonlySet<string>
}

/** The protocol and the sessions it keeps, over a listener. */
const layerOver = (options: ListenOptions, listen: Listen) =>
  Layer.scopedContext(Effect.map(make(options.limits, options.tags, listen), ({ protocol, sessions }) =>
    Context.make(RpcServer.Protocol, protocol).pipe(Context.add(Sessions, sessions))))

const listening = (server: Net.Server, port: number, host: string) =>
  Effect.async<void, ListenError>((resume) => {
    const onError = (e: Error) => resume(Effect.fail(new ListenError({ address: `${host}:${port}`, reason: e.message })))
    server.once("error", onError)
    server.listen(port, host, () => {
      server.off("error", onError)
      resume(Effect.void)
    })
  })

const closing = (server: Net.Server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))

/** NDJSON over TCP. */
export const layerTcp = (options: ListenOptions) =>
  layerOver(options, (accept, attach) =>
    Effect.gen(function*() {
      const server = Net.createServer((socket) => {
        socket.on("error", () => socket.destroy())
        const c = accept(socket.remoteAddress ?? "unknown", (reason) => {
          // a line the RPC client reads as the reason
          socket.end(`${JSON.stringify({ _tag: "Defect", defect: `the host refused the connection: ${reason}` })}\n`)
          setTimeout(() => socket.destroy(), 1000).unref()
        })
        if (c === undefined) return
        socket.setNoDelay(true)
        let corked = false
        attach(c, {
          // the replies of one turn of the event loop go out in one write, not a system call each
          write: (text) => {
            if (!corked) {
              corked = true
              socket.cork()
              setImmediate(() => {
                corked = false
                socket.uncork()
              })
            }
            socket.write(text)
          },
          buffered: () => socket.writableLength,
          close: (_code, reason) => {
            // what arrives after this is read and dropped
            socket.removeAllListeners("data")
            socket.on("data", () => {})
            socket.end(`${JSON.stringify({ _tag: "Defect", defect: `the host closed the connection: ${reason}` })}\n`)
            setTimeout(() => socket.destroy(), 1000).unref()
          },
          pause: () => void socket.pause(),
          resume: () => void socket.resume()
        }, (onData, onClose) => {
          socket.on("data", onData)
          socket.once("close", onClose)
        })
      })
      yield* Effect.acquireRelease(listening(server, options.port, options.host), () => closing(server))
    }))

/** NDJSON in WebSocket messages; the HTTP request before the upgrade counts against the handshake deadline. */
export const layerWebSocket = (options: ListenOptions) =>
  layerOver(options, (accept, attach) =>
    Effect.gen(function*() {
      const limits = options.limits
      const pending = new WeakMap<Net.Socket, Connection>()
      const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxFrameBytes, perMessageDeflate: false })
      const server = Http.createServer((_request, response) => {
        response.writeHead(426, { "content-type": "text/plain", connection: "close" })
        response.end("this port speaks WebSocket\n")
      })
      server.headersTimeout = limits.handshakeMillis
      server.requestTimeout = limits.handshakeMillis
      server.maxHeadersCount = 64
      server.on("connection", (socket: Net.Socket) => {
        socket.on("error", () => socket.destroy())
        const c = accept(socket.remoteAddress ?? "unknown", (reason) => {
          socket.end(`HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain\r\n\r\nthe host refused the connection: ${reason}\n`)
          setTimeout(() => socket.destroy(), 1000).unref()
        })
        if (c === undefined) return
        pending.set(socket, c)
        // until the upgrade, closing is ending the socket (Node answers a request that is too slow with 408)
        attach(c, {
          write: () => {},
          buffered: () => 0,
          close: () => void socket.destroy(),
          pause: () => {},
          resume: () => {}
        }, (_onData, onClose) => void socket.once("close", onClose))
      })
      server.on("upgrade", (request: Http.IncomingMessage, socket: Net.Socket, head: Buffer) => {
        const c = pending.get(socket)
        pending.delete(socket)
        if (c === undefined || c.closed) return void socket.destroy()
        wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
          attach(c, {
            write: (text) => ws.send(text),
            buffered: () => ws.bufferedAmount,
            close: (code, reason) => {
              ws.removeAllListeners("message")
              if (ws.readyState === ws.OPEN) {
                ws.send(`${JSON.stringify({ _tag: "Defect", defect: `the host closed the connection: ${reason}` })}\n`)
                // a close reason is at most 123 bytes
                ws.close(code, reason.length > 120 ? `${reason.slice(0, 117)}...` : reason)
              }
              setTimeout(() => ws.terminate(), 1000).unref()
            },
            pause: () => ws.pause(),
            resume: () => ws.resume()
          }, (onData, onClose) => {
            ws.on("message", (data: Buffer | ArrayBuffer | Array<Buffer>) =>
              onData(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)))
            // ws closes with a code of its own (1009 for a frame over the limit); the socket goes a moment later
            ws.on("error", () => void setTimeout(() => ws.terminate(), 1000).unref())
            ws.once("close", onClose)
          })
        })
      })
      yield* Effect.acquireRelease(listening(server, options.port, options.host), () =>
        Effect.zipRight(Effect.sync(() => {
          for (const ws of wss.clients) ws.terminate()
          server.closeAllConnections()
        }), closing(server)))
    }))
