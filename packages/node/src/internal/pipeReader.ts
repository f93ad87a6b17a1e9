/**
 * Reads a child's pipes into buffers that are used again, and hands what
 * arrived on as views into them: a flood of output then allocates nothing
 * per read, so the garbage collector has nothing to free and the process's
 * memory stays flat, and what one buffer received in a row is one view,
 * never a copy.
 *
 * Node reads a pipe into a fresh 64 KiB buffer each time, unless the socket
 * was made with `onread`, which `child_process` does not offer; so the
 * reader takes over the pipe's handle from the socket Node made (a
 * documented socket option over an undocumented field). Where the field is
 * not what it expects, it reads the socket's `data` events instead, each a
 * buffer of its own.
 *
 * @internal
 */
import * as Slabs from "@spillway/core/Slabs"
import * as Net from "node:net"
import type { Readable } from "node:stream"

/** Output that arrived: a view into a slab, or a buffer of its own (`slab` undefined). */
export type Region = Slabs.Region

/** What a reader tells its owner. */
export interface Sink {
  /** Output arrived; returns false to pause the pipe until `resume`. */
  readonly arrived: (region: Region) => boolean
  /** The pipe is closed: at its end, or after an error (`error` set; the pipe is closed after it). */
  readonly closed: (error?: Error) => void
}

/** One pipe being read. */
export interface Reader {
  readonly resume: () => void
  readonly destroy: () => void
  /** Whether it reads into reused buffers (false: the `data` events of Node's socket). */
  readonly pooled: boolean
}

/** The first buffer of a pipe, which most commands never fill; a pipe that floods gets larger ones. */
const FIRST_SLAB = 64 * 1024
const LARGE_SLAB = 1024 * 1024
/** A read is given at least this much room (a pipe delivers up to 64 KiB at once, a socket pair more). */
const MIN_READ = 64 * 1024

/**
 * First slabs kept from one child's pipes to the next: a server that runs
 * many short commands reads each one's output into buffers already made,
 * rather than two new ones a command for the collector to free.
 */
const firstSlabs = Slabs.spares(8)

/** The pipe handle inside a Node socket, as far as taking it over needs it. */
interface PipeHandle {
  reading: boolean
  readonly readStop: () => number
  readonly useUserBuffer: (buffer: Uint8Array) => void
}

const handleOf = (socket: Readable): PipeHandle | undefined => {
  const handle = (socket as unknown as { _handle?: Partial<PipeHandle> | null })._handle
  return handle !== null && handle !== undefined && typeof handle.readStop === "function" && typeof handle.useUserBuffer === "function" &&
      typeof handle.reading === "boolean"
    ? (handle as PipeHandle)
    : undefined
}

/** The rest of `region` past its first `at` bytes, as a region of its own: the part before it must be given back too. */
export const split = (region: Region, at: number): Region => {
  if (region.slab !== undefined) region.slab.lent++
  return { slab: region.slab, bytes: region.bytes.subarray(at) }
}

/**
 * Reads `socket` (a child's stdout or stderr, not yet read from: a socket
 * made by `spawn` in this turn of the event loop) into reused buffers,
 * or through its `data` events where its handle cannot be taken over.
 */
export const read = (socket: Readable, sink: Sink, options: { readonly pooled?: boolean } = {}): Reader => {
  const handle = options.pooled === false ? undefined : handleOf(socket)
  if (handle === undefined) return viaEvents(socket, sink)
  handle.readStop()
  handle.reading = false
  // the socket Node made lets go of the pipe: it never reads from it, and closing it leaves the pipe alone
  ;(socket as unknown as { _handle: unknown })._handle = null

  // two spares: a flood cycles through the slabs of the queue, the batch in the consumer's hands and these, and
  // allocates three in all over 1 GiB (a slab dropped and made again lingers until collected; a third spare would
  // only be a MiB more of a run's peak)
  const slabs = Slabs.pool({
    first: FIRST_SLAB,
    large: LARGE_SLAB,
    spares: 2,
    allocate: (size) => (size === FIRST_SLAB ? firstSlabs.take(FIRST_SLAB) : Buffer.allocUnsafe(size)),
    recycle: (bytes) => {
      if (bytes.length === FIRST_SLAB) firstSlabs.keep(bytes)
    }
  })
  let closed = false
  let received = 0
  const close = (error?: Error) => {
    if (closed) return
    closed = true
    sink.closed(error)
  }
  const reader = new Net.Socket({
    handle,
    readable: true,
    writable: false,
    onread: {
      // until the first slab is full, a read takes what is left of it: the read that finds the end of a short
      // output's pipe (libuv asks for room before every read) then costs no large slab
      buffer: () => slabs.free(received < FIRST_SLAB ? 1 : MIN_READ),
      callback: (nread: number) => {
        received += nread
        return sink.arrived(slabs.claim(nread))
      }
    }
  } as Net.SocketConstructorOpts)
  reader.on("error", (e) => close(e))
  reader.on("close", () => close())
  // the end of the pipe: closes the socket (it is not half open), which reports `close`
  reader.on("end", () => undefined)
  return {
    resume: () => reader.resume(),
    destroy: () => {
      reader.destroy()
      // the handle is closed and reads no more: a slab nothing borrows goes to the next pipe
      slabs.release()
    },
    pooled: true
  }
}

const viaEvents = (socket: Readable, sink: Sink): Reader => {
  let closed = false
  const close = (error?: Error) => {
    if (closed) return
    closed = true
    sink.closed(error)
  }
  socket.on("data", (chunk: Buffer) => {
    if (!sink.arrived({ slab: undefined, bytes: chunk })) socket.pause()
  })
  socket.once("error", (e) => close(e))
  socket.once("close", () => close())
  return { resume: () => socket.resume(), destroy: () => socket.destroy(), pooled: false }
}
