import { Effect, ExecutionStrategy, Exit, Fiber, Queue, Scope } from "effect"
import type * as BodyFiles from "../../BodyFiles.js"
import { QuotaExceeded, StoreFailed } from "../../Errors.js"
import * as LineIndex from "../../LineIndex.js"
import type { Checkpoint, Manifest, Origin } from "../../Manifests.js"
import type * as Retention from "../../Retention.js"
import type * as Secrets from "../../Secrets.js"
import * as Slabs from "../../Slabs.js"
import * as Utf8 from "../../Utf8.js"
import { concat, copyOf } from "../bytes.js"
import { newlines as countNewlines } from "../kernel/kernel.js"
import * as CodePoints from "./codePoints.js"

/** How a body's limit cuts: after whole lines, after whole code points, or at the byte. @internal */
export type Cut = "line" | "code-point" | "byte"

/** What a writer is asked to make. @internal */
export interface Spec {
  readonly profile: string
  readonly name: string
  readonly owner: string
  readonly channel: string
  readonly channelBound: boolean
  readonly tool: string
  readonly status: string
  readonly origin: Origin
  readonly createdAt: number
  readonly maxBytes: number
  readonly cut: Cut
  readonly visible: boolean
  readonly failure: "abandon" | "keep-prefix"
  /** Keep what was written when the scope closes before `seal` (a spool whose manager stops), instead of removing it. */
  readonly keepOnClose: boolean
  readonly reserve: number
  readonly deferBytes: number
  readonly checkpointEvery: number
  readonly lineEvery: number
  readonly watch: Secrets.Watch | undefined
  readonly masked: boolean
  readonly onMasked: ((bytes: Uint8Array, offset: number, newlines: number) => void) | undefined
  readonly maskInto: ((length: number) => Uint8Array) | undefined
  readonly onWritten: (() => void) | undefined
  readonly admit: ((name: string) => Effect.Effect<void, string>) | undefined
}

/** How far a writer has got. @internal */
export interface Progress {
  /** Raw bytes the source produced. */
  readonly sourceBytes: number
  /** Masked bytes let out so far (the masker holds back the rest of an unsettled token). */
  readonly maskedBytes: number
  /** Masked bytes taken into the body (within the limit and the quota). */
  readonly keptBytes: number
  /** Bytes the store has confirmed written. */
  readonly writtenBytes: number
  /** The last (up to 3) bytes written, to tell a code point cut short at the end. */
  readonly lastBytes: Uint8Array
  readonly lines: number
  readonly captureError: string | undefined
  /** True once the limit was reached: later output is counted, not kept. */
  readonly full: boolean
  /** True once `end` has let everything out of the masker. */
  readonly ended: boolean
}

/** What the body service gives a writer. @internal */
export interface Services {
  readonly files: BodyFiles.Service
  readonly masker: Secrets.Masker
  readonly reservation: Retention.Reservation
  readonly quotaLimit: number
  readonly insert: (manifest: Manifest) => Effect.Effect<void, StoreFailed>
  readonly update: (manifest: Manifest) => Effect.Effect<void, StoreFailed>
  readonly remove: (name: string) => Effect.Effect<void>
  readonly expiresAt: (anchor: number) => number | null
}

/** A body being written. @internal */
export interface Writer {
  readonly name: string
  /**
   * Takes raw bytes of one of the source's streams (0 by default; a child's
   * stdout and stderr, 1 and 2): each stream is masked on its own, so what
   * another writes between its parts cannot cut a secret in it, and what
   * each lets out goes into the body in the order it was let out.
   */
  readonly write: (raw: Uint8Array, stream?: number) => Effect.Effect<void>
  /** Lets out what the masker still holds; later writes start a new stream. */
  readonly end: Effect.Effect<void>
  readonly progress: () => Progress
  /** Records a visible body's progress in its manifest now. */
  readonly save: (patch?: Patch) => Effect.Effect<void, StoreFailed>
  /** Writes everything out, publishes the body and records its final manifest. */
  readonly seal: (patch?: Patch) => Effect.Effect<Manifest, StoreFailed | QuotaExceeded>
  /** Drops the body: nothing stays (a short output shown whole). */
  readonly discard: Effect.Effect<void>
  /** The masked bytes still held in memory because nothing was stored yet (`deferBytes`); undefined once stored. */
  readonly deferred: () => Uint8Array | undefined
}

/** What a save or seal changes. @internal */
export interface Patch {
  readonly status?: string | undefined
  readonly origin?: Origin | undefined
  /** The anchor of expiry (epoch ms): creation by default, a job's exit for spools. */
  readonly anchor?: number | undefined
  /** Set for a job still running: no expiry yet. */
  readonly noExpiry?: boolean | undefined
}

const QUEUE_PARTS = 64
/**
 * Most bytes queued for the store at once. A producer faster than the disk
 * (or than the fiber writing, which runs between its chunks) waits here
 * rather than holding its output in memory. Two batches of the runner: a
 * larger queue measured no faster, and holds more of a run's peak memory.
 */
const QUEUED_BYTES = 2 * 1024 * 1024
/**
 * The writer's first slab (most bodies are short), and the later ones: a
 * large slab holds a masking window of a 1 MiB batch with its context and
 * held line, so the masker builds it there and the masked bytes are queued
 * in place.
 */
const FIRST_SLAB = 16 * 1024
const LARGE_SLAB = 1280 * 1024
/**
 * Large slabs of writers that finished, for the next writers: a body's
 * first megabytes otherwise land in fresh memory (page faults, and the
 * collections its memory brings on), which cost a 1 MiB body 1.5 ms of its
 * 6 ms. They hold masked output only, and a writer reads only bytes it
 * copied in itself. At most four are kept.
 */
const spareSlabs = Slabs.spares(4)
const slabAllocate = (size: number): Uint8Array => (size === LARGE_SLAB ? spareSlabs.take(LARGE_SLAB) : new Uint8Array(size))
const slabRecycle = (bytes: Uint8Array): void => {
  if (bytes.length === LARGE_SLAB) spareSlabs.keep(bytes)
}
/** A part is split where a slab ends, unless the slab has less room than this left (or than the part), when the next slab takes it. */
const MIN_PIECE = 64 * 1024
/**
 * Free slabs kept: as many as the queue holds, and the one the masker fills
 * meanwhile, so a flood allocates three slabs in all (with one fewer, it
 * dropped and made again eight over 1 GiB, whose memory lingered until
 * collected and moved a run's peak by several MiB).
 */
const SPARE_SLABS = Math.ceil(QUEUED_BYTES / LARGE_SLAB) + 1
/** The room a queued part takes: its length, no more than all of it. */
const weight = (part: Uint8Array): number => Math.min(part.length, QUEUED_BYTES)

/** One source stream's masking: its own stream state and holdback. */
interface Lane {
  readonly masker: Secrets.StreamMasker
  /** Bytes it let out so far, in its own coordinates (where its watched literals' marks are). */
  emitted: number
  /** Marks of watched literals in what the current call lets out, in the lane's coordinates. */
  readonly marks: Array<number>
  /** When it started holding back what it holds now (see `State.holds`); -1 while it holds nothing. */
  heldSince: number
}

/** Everything a writer knows and keeps as it goes, shared by the steps below. */
interface State {
  readonly spec: Spec
  readonly services: Services
  /** The writer's own scope, for the store's sink and the writing fiber; its finalizer closes it last. */
  readonly scope: Scope.CloseableScope
  /** The masking streams, one per source stream, each started by its first bytes (a body that gets none never builds the rules). */
  readonly lanes: Map<number, Lane>
  /** Counts lanes starting to hold bytes back, to let them out in that order at the end. */
  holds: number
  readonly lines: LineIndex.Builder
  readonly codePoints: CodePoints.CodePointCounter
  /** Kept bytes on their way to the store: built there by the masker, or copied in (see `Slabs`). */
  readonly slabs: Slabs.Pool
  /** The slab's free part the masker last built a window in (see `windowFor`), until its output is queued. */
  window: Uint8Array | undefined
  /** Where the masker builds a window larger than a slab; what is kept of it is copied into the slabs. */
  scratch: Uint8Array
  readonly queue: Queue.Queue<Slabs.Region | null>
  /** Room in the queue, in bytes (see `QUEUED_BYTES`). */
  readonly room: Effect.Semaphore
  sourceBytes: number
  maskedBytes: number
  keptBytes: number
  writtenBytes: number
  lastBytes: Uint8Array
  /** Kept bytes up to and including the last line break. */
  lastBreak: number
  /** The last byte kept. */
  lastKept: number
  full: boolean
  ended: boolean
  captureError: string | undefined
  failure: StoreFailed | QuotaExceeded | undefined
  /** After a failed write nothing more is written: the body must stay one contiguous prefix. */
  ioFailed: boolean
  deferred: Array<Uint8Array> | undefined
  deferredBytes: number
  sink: BodyFiles.Sink | undefined
  sinkScope: Scope.CloseableScope | undefined
  ioFiber: Fiber.RuntimeFiber<void> | undefined
  inserted: boolean
  status: string
  origin: Origin
  sealed: boolean
}

const fail = (w: State, e: StoreFailed | QuotaExceeded, note: string) => {
  w.failure ??= e
  w.captureError ??= note
}

/** The manifest as the body stands: "writing" (counts so far) or "complete" (sealed, checkpoints and all). */
const manifestOf = (w: State, state: Manifest["state"], patch: Patch = {}): Manifest => {
  const { spec } = w
  const index = w.lines.result()
  const cps = state === "complete" ? w.codePoints.end() : { codePoints: w.codePoints.count(), checkpoints: [] as ReadonlyArray<Checkpoint> }
  const whole = w.captureError === undefined && !w.full && w.keptBytes === w.maskedBytes && w.sourceBytes === w.maskedBytes
  return {
    id: spec.name,
    profile: spec.profile,
    owner: spec.owner,
    channel: spec.channel,
    channelBound: spec.channelBound,
    tool: spec.tool,
    status: w.status,
    state,
    createdAt: spec.createdAt,
    expiresAt: patch.noExpiry === true ? null : w.services.expiresAt(patch.anchor ?? spec.createdAt),
    bytes: state === "complete" ? w.writtenBytes : w.keptBytes,
    codePoints: cps.codePoints,
    lines: index.lines,
    sourceBytes: w.sourceBytes,
    kept: whole ? "whole" : "head",
    captureError: w.captureError ?? null,
    checkpoints: cps.checkpoints,
    lineIndex: { every: index.every, starts: index.checkpoints },
    origin: w.origin
  }
}

/** Writes queued parts behind the producer, in batches: a flood goes out in large writes, a trickle at once. */
const drain = (w: State, sink: BodyFiles.Sink) =>
  Effect.gen(function*() {
    for (;;) {
      const parts = [...(yield* Queue.takeBetween(w.queue, 1, QUEUE_PARTS))]
      const stop = parts.indexOf(null)
      const batch = (stop === -1 ? parts : parts.slice(0, stop)) as Array<Slabs.Region>
      const writing = batch.length > 0 && !w.ioFailed
      // parts that follow each other in one slab are one write, never copied
      for (const bytes of writing ? Slabs.views(batch) : []) {
        if (w.ioFailed) break
        const wrote = yield* Effect.either(sink.write(bytes))
        if (wrote._tag === "Left") {
          w.ioFailed = true
          fail(w, wrote.left, `writing the body failed (${wrote.left.reason}); later output is counted, not kept`)
        } else {
          w.writtenBytes += bytes.length
          const joined = w.lastBytes.length + bytes.length <= 3 ? concat([w.lastBytes, bytes]) : bytes
          w.lastBytes = Uint8Array.from(joined.subarray(Math.max(0, joined.length - 3)))
        }
      }
      if (writing) w.spec.onWritten?.()
      // written (or never to be): the slabs may take other bytes
      for (const part of batch) Slabs.giveBack(part)
      yield* w.room.release(batch.reduce((n, part) => n + weight(part.bytes), 0))
      if (stop !== -1) return
    }
  })

/** Whether `part` lies within `buffer`. */
const within = (part: Uint8Array, buffer: Uint8Array): boolean =>
  part.buffer === buffer.buffer && part.byteOffset >= buffer.byteOffset && part.byteOffset + part.length <= buffer.byteOffset + buffer.length

/**
 * Where a lane's masker builds its windows (see `Secrets.StreamOptions`):
 * the current slab's free part, so that `enqueue` queues the masked output
 * where it is; a window larger than a slab goes to a buffer the writer
 * keeps, and what is kept of it is copied.
 */
const windowFor = (w: State) => (need: number): Uint8Array => {
  if (need <= LARGE_SLAB) return (w.window = w.slabs.free(need))
  w.window = undefined
  if (w.scratch.length < need) w.scratch = new Uint8Array(need)
  return w.scratch
}

/** The part as a region in place, when the masker built it in the slab's free part `windowFor` last gave (once). */
const inPlace = (w: State, part: Uint8Array): Slabs.Region | undefined => {
  const window = w.window
  w.window = undefined
  return window === undefined || !within(part, window) ? undefined : w.slabs.lend(part)
}

/**
 * Queues a part for the store once there is room: where it is when the
 * masker built it in the writer's slabs, else copied into them at once
 * (what it was lent from may change after this call), filling each slab
 * before the next.
 */
const enqueue = (w: State, part: Uint8Array) => {
  const built = inPlace(w, part)
  const regions: Array<Slabs.Region> = built === undefined ? [] : [built]
  for (let at = built === undefined ? 0 : part.length; at < part.length;) {
    const room = w.slabs.free(Math.min(part.length - at, MIN_PIECE))
    const n = Math.min(part.length - at, room.length)
    room.set(part.subarray(at, at + n))
    regions.push(w.slabs.claim(n))
    at += n
  }
  return Effect.forEach(regions, (region) => Effect.zipRight(w.room.take(weight(region.bytes)), Queue.offer(w.queue, region)), { discard: true })
}

/** Creates the body in the store (and its manifest, when visible), then writes what was held back. */
const materialize = (w: State) =>
  Effect.gen(function*() {
    const { services, spec } = w
    if (w.sink !== undefined || w.ioFailed || (w.failure !== undefined && spec.failure === "abandon")) return
    if (spec.admit !== undefined) {
      const admitted = yield* Effect.either(spec.admit(spec.name))
      if (admitted._tag === "Left") {
        w.ioFailed = true
        fail(w, new StoreFailed({ operation: `keep ${spec.name}`, reason: admitted.left }), admitted.left)
        return
      }
    }
    w.sinkScope = yield* Scope.fork(w.scope, ExecutionStrategy.sequential)
    const created = yield* Effect.either(
      services.files.create(spec.name, spec.visible ? "while-writing" : "on-commit").pipe(Scope.extend(w.sinkScope))
    )
    if (created._tag === "Left") {
      w.ioFailed = true
      const e = created.left._tag === "StoreFailed" ? created.left : new StoreFailed({ operation: `create ${spec.name}`, reason: created.left.message })
      fail(w, e, `the body could not be created (${e.reason})`)
      return
    }
    w.sink = created.right
    if (spec.visible) {
      const recorded = yield* Effect.either(services.insert(manifestOf(w, "writing", { noExpiry: true })))
      if (recorded._tag === "Left") {
        w.ioFailed = true
        fail(w, recorded.left, `its manifest could not be recorded (${recorded.left.reason})`)
        return
      }
      w.inserted = true
    }
    w.ioFiber = yield* Effect.forkIn(drain(w, w.sink), w.scope)
    const held = w.deferred ?? []
    w.deferred = undefined
    w.deferredBytes = 0
    for (const part of held) yield* enqueue(w, part)
  })

/** The part of masked output the limit lets in. */
const withinLimit = (w: State, out: Uint8Array): Uint8Array => {
  const { spec } = w
  if (w.full) return out.subarray(0, 0)
  if (w.keptBytes + out.length <= spec.maxBytes) return out
  w.full = true
  const room = out.subarray(0, spec.maxBytes - w.keptBytes)
  if (spec.cut === "byte") return room
  if (spec.cut === "code-point") return room.subarray(0, Utf8.byteBoundary(room, room.length))
  // whole lines up to the limit; a single line longer than the whole limit keeps its start
  const br = room.lastIndexOf(10)
  if (br !== -1) return room.subarray(0, br + 1)
  return w.lastBreak === 0 && w.keptBytes === 0 ? room.subarray(0, Utf8.byteBoundary(room, room.length)) : room.subarray(0, 0)
}

/** The part of what the limit lets in that the quota has room for, taking more room when it needs it. */
const withinQuota = (w: State, out: Uint8Array, part: Uint8Array): Uint8Array => {
  const { reservation, quotaLimit } = w.services
  const room = reservation.held() - w.keptBytes
  if (part.length <= room) return part
  const got = reservation.grow(part.length - room)
  if (got >= part.length - room) return part
  fail(
    w,
    new QuotaExceeded({ pool: reservation.pool, unit: "bytes", wanted: out.length, available: room + got, limit: quotaLimit }),
    `the ${quotaLimit}-byte ${reservation.pool} retention quota is used up; later output is counted, not kept`
  )
  return part.subarray(0, room + got)
}

/** Takes masked output: keeps what the limit and the quota let in, shows it all to `onMasked`, and queues the kept part for the store. */
const accept = (w: State, out: Uint8Array): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (out.length === 0) return Effect.void
    const at = w.maskedBytes
    w.maskedBytes += out.length
    const storing = w.failure === undefined && w.captureError === undefined
    const limited = storing ? withinLimit(w, out) : out.subarray(0, 0)
    const part = limited.length === 0 ? limited : withinQuota(w, out, limited)
    // the line index counts the kept part's breaks; what it does not see is counted for `onMasked` alone
    const keptNewlines = part.length === 0 ? 0 : w.lines.push(part)
    if (w.spec.onMasked !== undefined) w.spec.onMasked(out, at, part.length === out.length ? keptNewlines : countNewlines(out))
    if (part.length === 0) return Effect.void
    w.keptBytes += part.length
    // the line index saw whether these bytes are ASCII in its pass
    w.codePoints.push(part, w.lines.ascii() ? true : undefined)
    const br = part.lastIndexOf(10)
    if (br !== -1) w.lastBreak = w.keptBytes - part.length + br + 1
    w.lastKept = part[part.length - 1]!
    if (w.deferred !== undefined) {
      // a copy: the masker lends its output only until its next push
      w.deferred.push(copyOf(part))
      w.deferredBytes += part.length
      return w.deferredBytes <= w.spec.deferBytes ? Effect.void : materialize(w)
    }
    return w.sink === undefined ? Effect.void : enqueue(w, part)
  })

/** Waits until everything queued is written. */
const flush = (w: State) =>
  Effect.gen(function*() {
    if (w.ioFiber === undefined) return
    yield* Queue.offer(w.queue, null)
    yield* Fiber.join(w.ioFiber)
    w.ioFiber = undefined
  })

/** Removes everything: the bytes, the manifest, the room in the quota. */
const drop = (w: State) =>
  Effect.gen(function*() {
    yield* Queue.shutdown(w.queue)
    // a producer waiting for room is let go: nothing it queues is written now
    yield* w.room.releaseAll
    if (w.ioFiber !== undefined) yield* Fiber.interrupt(w.ioFiber)
    if (w.sinkScope !== undefined) yield* Scope.close(w.sinkScope, Exit.void)
    if (w.inserted) yield* w.services.remove(w.spec.name)
    yield* w.services.reservation.release
    w.deferred = undefined
  })

/** Leaves a visible body as far as it got, its manifest still "writing", for a later `recover`. */
const keepAsIs = (w: State) =>
  Effect.gen(function*() {
    yield* flush(w).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    // only slabs whose copies were all written are recycled
    w.slabs.release()
    if (w.sink !== undefined && !w.ioFailed) yield* Effect.ignore(w.sink.commit)
    if (w.inserted) yield* Effect.ignore(w.services.update(manifestOf(w, "writing", { noExpiry: true })))
    w.services.reservation.settle(w.writtenBytes)
    if (w.sinkScope !== undefined) yield* Scope.close(w.sinkScope, Exit.void)
  })

/** Starts the lane of a source stream: a masking stream whose watched literals' marks wait for `letOut`. */
const laneOf = (w: State, stream: number): Lane => {
  let lane = w.lanes.get(stream)
  if (lane !== undefined) return lane
  const { spec } = w
  const marks: Array<number> = []
  const watch = spec.watch === undefined ? undefined : { literals: spec.watch.literals, onMark: (at: number) => void marks.push(at) }
  // without a buffer of the caller's, windows are built in the writer's slabs, and what is kept is queued from there
  const into = spec.maskInto ?? windowFor(w)
  lane = { masker: w.services.masker.stream(watch, { reuseOutput: true, into }), emitted: 0, marks, heldSince: -1 }
  w.lanes.set(stream, lane)
  return lane
}

/** Takes what a lane let out: its marks moved to the body's coordinates (where `out` will start), then the bytes. */
const letOut = (w: State, lane: Lane, out: Uint8Array): Effect.Effect<void> => {
  if (lane.marks.length > 0) {
    const onMark = w.spec.watch!.onMark
    for (const mark of lane.marks) onMark(w.maskedBytes + mark - lane.emitted)
    lane.marks.length = 0
  }
  lane.emitted += out.length
  if (lane.masker.heldBytes() === 0) lane.heldSince = -1
  else if (lane.heldSince === -1) lane.heldSince = w.holds++
  return accept(w, out)
}

const end = (w: State) =>
  Effect.suspend(() => {
    w.ended = true
    // what each stream still holds, in the order they began holding it; a stream never started holds nothing
    const lanes = [...w.lanes.values()].sort((a, b) => a.heldSince - b.heldSince)
    w.lanes.clear()
    return Effect.forEach(lanes, (lane) => letOut(w, lane, lane.masker.end()), { discard: true })
  })

/** Writes everything out, publishes the body and records its final manifest. */
const seal = (w: State, patch: Patch = {}) =>
  Effect.gen(function*() {
    const { spec } = w
    if (!w.ended) yield* end(w)
    if (w.sink === undefined) yield* materialize(w)
    yield* flush(w)
    // every copy is written: the slabs serve the next writers
    w.slabs.release()
    // a kept prefix is published even after a failed write: it is whole up to where the writes stopped
    let unpublished = false
    if (w.sink !== undefined && (spec.failure === "keep-prefix" || (!w.ioFailed && w.failure === undefined))) {
      const committed = yield* Effect.either(w.sink.commit)
      if (committed._tag === "Left") {
        fail(w, committed.left, `publishing the body failed (${committed.left.reason})`)
        unpublished = true
      }
    }
    // nothing published (a name taken meanwhile, a failed link) is never recorded, whatever the failure mode:
    // a manifest would describe bytes that are not there, or another body's
    if (w.failure !== undefined && (spec.failure === "abandon" || w.sink === undefined || unpublished)) {
      w.sealed = true
      yield* drop(w)
      return yield* Effect.fail(w.failure)
    }
    w.status = patch.status ?? w.status
    w.origin = patch.origin ?? w.origin
    const manifest = manifestOf(w, "complete", patch)
    const recorded = yield* Effect.either(w.inserted ? w.services.update(manifest) : w.services.insert(manifest))
    w.sealed = true
    if (recorded._tag === "Left") {
      yield* drop(w)
      return yield* Effect.fail(recorded.left)
    }
    w.services.reservation.settle(manifest.bytes)
    return manifest
  })

/** @internal */
export const make = (spec: Spec, services: Services): Effect.Effect<Writer, StoreFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const w: State = {
      spec,
      services,
      // whatever scope the writer is made in closes first, a body is kept or removed on purpose, by the finalizer below
      scope: yield* Scope.make(),
      lanes: new Map(),
      holds: 0,
      lines: LineIndex.builder(spec.lineEvery),
      codePoints: CodePoints.counter(spec.checkpointEvery),
      slabs: Slabs.pool({ first: FIRST_SLAB, large: LARGE_SLAB, spares: SPARE_SLABS, allocate: slabAllocate, recycle: slabRecycle }),
      window: undefined,
      scratch: new Uint8Array(0),
      queue: yield* Queue.bounded<Slabs.Region | null>(QUEUE_PARTS),
      room: yield* Effect.makeSemaphore(QUEUED_BYTES),
      sourceBytes: 0,
      maskedBytes: 0,
      keptBytes: 0,
      writtenBytes: 0,
      lastBytes: new Uint8Array(0),
      lastBreak: 0,
      lastKept: -1,
      full: false,
      ended: false,
      captureError: undefined,
      failure: undefined,
      ioFailed: false,
      deferred: spec.deferBytes > 0 ? [] : undefined,
      deferredBytes: 0,
      sink: undefined,
      sinkScope: undefined,
      ioFiber: undefined,
      inserted: false,
      status: spec.status,
      origin: spec.origin,
      sealed: false
    }

    yield* Effect.addFinalizer(() => {
      const close = Scope.close(w.scope, Exit.void)
      if (w.sealed) return close
      w.sealed = true
      return Effect.zipRight(spec.keepOnClose && w.sink !== undefined ? keepAsIs(w) : drop(w), close)
    })

    if (w.deferred === undefined) yield* materialize(w)

    return {
      name: spec.name,
      write: (raw, stream = 0) =>
        Effect.suspend(() => {
          w.sourceBytes += raw.length
          if (raw.length === 0) return Effect.void
          if (spec.masked) return accept(w, raw)
          // the masker lends what it returns until its next push: `accept` copies what stays
          const lane = laneOf(w, stream)
          // past the limit nothing more is kept; masking still runs for whoever watches the masked output
          if (spec.onMasked === undefined && (w.full || w.failure !== undefined) && lane.masker.heldBytes() === 0) {
            w.maskedBytes += raw.length
            return Effect.void
          }
          return letOut(w, lane, lane.masker.push(raw))
        }),
      end: end(w),
      progress: () => ({
        sourceBytes: w.sourceBytes,
        maskedBytes: w.maskedBytes,
        keptBytes: w.keptBytes,
        writtenBytes: w.writtenBytes,
        lastBytes: w.lastBytes,
        lines: w.keptBytes === 0 ? 0 : w.lines.newlines() + (w.lastKept === 10 ? 0 : 1),
        captureError: w.captureError,
        full: w.full,
        ended: w.ended
      }),
      save: (patch = {}) =>
        Effect.suspend(() => {
          if (!w.inserted || w.sealed) return Effect.void
          w.status = patch.status ?? w.status
          w.origin = patch.origin ?? w.origin
          return services.update(manifestOf(w, "writing", { noExpiry: true, ...patch }))
        }),
      seal: (patch) => seal(w, patch),
      discard: Effect.suspend(() => {
        if (w.sealed) return Effect.void
        w.sealed = true
        return drop(w)
      }),
      deferred: () => (w.deferred === undefined ? undefined : concat(w.deferred.length === 0 ? [new Uint8Array(0)] : w.deferred))
    } satisfies Writer
  })
