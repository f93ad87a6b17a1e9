import { Effect, ExecutionStrategy, Exit, Fiber, Queue, Scope } from "effect"
import type * as BodyFiles from "../../BodyFiles.js"
import { QuotaExceeded, StoreFailed } from "../../Errors.js"
import * as LineIndex from "../../LineIndex.js"
import type { Checkpoint, Manifest, Origin } from "../../Manifests.js"
import type * as Retention from "../../Retention.js"
import type * as Secrets from "../../Secrets.js"
import * as Utf8 from "../../Utf8.js"
import { concat } from "../bytes.js"
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
  readonly onMasked: ((bytes: Uint8Array, offset: number) => void) | undefined
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
  readonly write: (raw: Uint8Array) => Effect.Effect<void>
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

/** @internal */
export const make = (spec: Spec, services: Services): Effect.Effect<Writer, StoreFailed, Scope.Scope> =>
  Effect.gen(function*() {
    // The store's sink and the writing fiber live in a scope of the writer's own, which its finalizer
    // closes last: whatever the scope it is made in closes first, a body is kept or removed on purpose.
    const scope = yield* Scope.make()
    const stream = spec.masked ? undefined : services.masker.stream(spec.watch)
    const lines = LineIndex.builder(spec.lineEvery)
    const codePoints = CodePoints.counter(spec.checkpointEvery)
    let sourceBytes = 0
    let maskedBytes = 0
    let keptBytes = 0
    let writtenBytes = 0
    let lastBytes = new Uint8Array(0)
    let lastBreak = 0 // kept bytes up to and including the last line break
    let lastKept = -1 // the last byte kept
    let full = false
    let ended = false
    let captureError: string | undefined
    let failure: StoreFailed | QuotaExceeded | undefined
    // after a failed write nothing more is written: the body must stay one contiguous prefix
    let ioFailed = false
    let deferred: Array<Uint8Array> | undefined = spec.deferBytes > 0 ? [] : undefined
    let deferredBytes = 0
    let sink: BodyFiles.Sink | undefined
    let sinkScope: Scope.CloseableScope | undefined
    let inserted = false
    let status = spec.status
    let origin = spec.origin
    let sealed = false

    const queue = yield* Queue.bounded<Uint8Array | null>(QUEUE_PARTS)
    let ioFiber: Fiber.RuntimeFiber<void> | undefined

    const fail = (e: StoreFailed | QuotaExceeded, note: string) => {
      failure ??= e
      captureError ??= note
    }

    const manifestOf = (state: Manifest["state"], patch: Patch = {}): Manifest => {
      const index = lines.result()
      const cps = state === "complete" ? codePoints.end() : { codePoints: codePoints.count(), checkpoints: [] as ReadonlyArray<Checkpoint> }
      const anchor = patch.anchor ?? spec.createdAt
      return {
        id: spec.name,
        profile: spec.profile,
        owner: spec.owner,
        channel: spec.channel,
        channelBound: spec.channelBound,
        tool: spec.tool,
        status,
        state,
        createdAt: spec.createdAt,
        expiresAt: patch.noExpiry === true ? null : services.expiresAt(anchor),
        bytes: state === "complete" ? writtenBytes : keptBytes,
        codePoints: cps.codePoints,
        lines: index.lines,
        sourceBytes,
        kept: captureError === undefined && !full && keptBytes === maskedBytes && sourceBytes === maskedBytes ? "whole" : "head",
        captureError: captureError ?? null,
        checkpoints: cps.checkpoints,
        lineIndex: { every: index.every, starts: index.checkpoints },
        origin
      }
    }

    /** Writes queued parts behind the producer, in batches: a flood goes out in large writes, a trickle at once. */
    const drain = (s: BodyFiles.Sink) =>
      Effect.gen(function*() {
        for (;;) {
          const parts = [...(yield* Queue.takeBetween(queue, 1, QUEUE_PARTS))]
          const stop = parts.indexOf(null)
          const batch = (stop === -1 ? parts : parts.slice(0, stop)) as Array<Uint8Array>
          if (batch.length > 0 && !ioFailed) {
            const bytes = concat(batch)
            const wrote = yield* Effect.either(s.write(bytes))
            if (wrote._tag === "Left") {
              ioFailed = true
              fail(wrote.left, `writing the body failed (${wrote.left.reason}); later output is counted, not kept`)
            } else {
              writtenBytes += bytes.length
              const joined = lastBytes.length + bytes.length <= 3 ? concat([lastBytes, bytes]) : bytes
              lastBytes = Uint8Array.from(joined.subarray(Math.max(0, joined.length - 3)))
            }
            spec.onWritten?.()
          }
          if (stop !== -1) return
        }
      })

    /** Creates the body in the store (and its manifest, when visible), then writes what was held back. */
    const materialize = Effect.gen(function*() {
      if (sink !== undefined || ioFailed || (failure !== undefined && spec.failure === "abandon")) return
      if (spec.admit !== undefined) {
        const admitted = yield* Effect.either(spec.admit(spec.name))
        if (admitted._tag === "Left") {
          ioFailed = true
          fail(new StoreFailed({ operation: `keep ${spec.name}`, reason: admitted.left }), admitted.left)
          return
        }
      }
      sinkScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      const created = yield* Effect.either(
        services.files.create(spec.name, spec.visible ? "while-writing" : "on-commit").pipe(Scope.extend(sinkScope))
      )
      if (created._tag === "Left") {
        ioFailed = true
        const e = created.left._tag === "StoreFailed" ? created.left : new StoreFailed({ operation: `create ${spec.name}`, reason: created.left.message })
        fail(e, `the body could not be created (${e.reason})`)
        return
      }
      sink = created.right
      if (spec.visible) {
        const recorded = yield* Effect.either(services.insert(manifestOf("writing", { noExpiry: true })))
        if (recorded._tag === "Left") {
          ioFailed = true
          fail(recorded.left, `its manifest could not be recorded (${recorded.left.reason})`)
          return
        }
        inserted = true
      }
      ioFiber = yield* Effect.forkIn(drain(sink), scope)
      const held = deferred ?? []
      deferred = undefined
      deferredBytes = 0
      for (const part of held) yield* Queue.offer(queue, part)
    })

    /** The part of masked output the limit lets in. */
    const withinLimit = (out: Uint8Array): Uint8Array => {
      if (full) return out.subarray(0, 0)
      if (keptBytes + out.length <= spec.maxBytes) return out
      full = true
      const room = out.subarray(0, spec.maxBytes - keptBytes)
      if (spec.cut === "byte") return room
      if (spec.cut === "code-point") return room.subarray(0, Utf8.byteBoundary(room, room.length))
      // whole lines up to the limit; a single line longer than the whole limit keeps its start
      const br = room.lastIndexOf(10)
      if (br !== -1) return room.subarray(0, br + 1)
      return lastBreak === 0 && keptBytes === 0 ? room.subarray(0, Utf8.byteBoundary(room, room.length)) : room.subarray(0, 0)
    }

    const accept = (out: Uint8Array): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (out.length === 0) return Effect.void
        const at = maskedBytes
        maskedBytes += out.length
        spec.onMasked?.(out, at)
        if (failure !== undefined || captureError !== undefined) return Effect.void
        let part = withinLimit(out)
        if (part.length === 0) return Effect.void
        const room = services.reservation.held() - keptBytes
        if (part.length > room) {
          const got = services.reservation.grow(part.length - room)
          if (got < part.length - room) {
            part = part.subarray(0, room + got)
            const pool = services.reservation.pool
            fail(
              new QuotaExceeded({ pool, unit: "bytes", wanted: out.length, available: room + got, limit: services.quotaLimit }),
              `the ${services.quotaLimit}-byte ${pool} retention quota is used up; later output is counted, not kept`
            )
          }
        }
        if (part.length === 0) return Effect.void
        keptBytes += part.length
        lines.push(part)
        codePoints.push(part)
        const br = part.lastIndexOf(10)
        if (br !== -1) lastBreak = keptBytes - part.length + br + 1
        lastKept = part[part.length - 1]!
        if (deferred !== undefined) {
          deferred.push(part)
          deferredBytes += part.length
          if (deferredBytes <= spec.deferBytes) return Effect.void
          return materialize
        }
        return sink === undefined ? Effect.void : Queue.offer(queue, part)
      })

    const write = (raw: Uint8Array): Effect.Effect<void> =>
      Effect.suspend(() => {
        sourceBytes += raw.length
        // past the limit nothing more is kept; masking still runs for whoever watches the masked output
        if (spec.onMasked === undefined && (full || failure !== undefined) && stream !== undefined && stream.heldBytes() === 0) {
          maskedBytes += raw.length
          return Effect.void
        }
        return accept(stream !== undefined ? stream.push(raw) : raw)
      })

    const end = Effect.suspend(() => {
      ended = true
      return stream !== undefined ? accept(stream.end()) : Effect.void
    })

    /** Waits until everything queued is written. */
    const flush = Effect.gen(function*() {
      if (ioFiber === undefined) return
      yield* Queue.offer(queue, null)
      yield* Fiber.join(ioFiber)
      ioFiber = undefined
    })

    const save = (patch: Patch = {}) =>
      Effect.suspend(() => {
        if (!inserted || sealed) return Effect.void
        status = patch.status ?? status
        origin = patch.origin ?? origin
        return services.update(manifestOf("writing", { noExpiry: true, ...patch }))
      })

    const drop = Effect.gen(function*() {
      yield* Queue.shutdown(queue)
      if (ioFiber !== undefined) yield* Fiber.interrupt(ioFiber)
      if (sinkScope !== undefined) yield* Scope.close(sinkScope, Exit.void)
      if (inserted) yield* services.remove(spec.name)
      yield* services.reservation.release
      deferred = undefined
    })

    const seal = (patch: Patch = {}) =>
      Effect.gen(function*() {
        if (!ended) yield* end
        if (sink === undefined) yield* materialize
        yield* flush
        // a kept prefix is published even after a failed write: it is whole up to where the writes stopped
        let unpublished = false
        if (sink !== undefined && (spec.failure === "keep-prefix" || (!ioFailed && failure === undefined))) {
          const committed = yield* Effect.either(sink.commit)
          if (committed._tag === "Left") {
            fail(committed.left, `publishing the body failed (${committed.left.reason})`)
            unpublished = true
          }
        }
        // nothing published (a name taken meanwhile, a failed link) is never recorded, whatever the failure mode:
        // a manifest would describe bytes that are not there, or another body's
        if (failure !== undefined && (spec.failure === "abandon" || sink === undefined || unpublished)) {
          sealed = true
          yield* drop
          return yield* Effect.fail(failure)
        }
        status = patch.status ?? status
        origin = patch.origin ?? origin
        const manifest = manifestOf("complete", patch)
        const recorded = yield* Effect.either(inserted ? services.update(manifest) : services.insert(manifest))
        if (recorded._tag === "Left") {
          sealed = true
          yield* drop
          return yield* Effect.fail(recorded.left)
        }
        sealed = true
        services.reservation.settle(manifest.bytes)
        return manifest
      })

    /** Leaves a visible body as far as it got, its manifest still "writing", for a later `recover`. */
    const keepAsIs = Effect.gen(function*() {
      yield* flush.pipe(Effect.timeout("5 seconds"), Effect.ignore)
      if (sink !== undefined && !ioFailed) yield* Effect.ignore(sink.commit)
      if (inserted) yield* Effect.ignore(services.update(manifestOf("writing", { noExpiry: true })))
      services.reservation.settle(writtenBytes)
      if (sinkScope !== undefined) yield* Scope.close(sinkScope, Exit.void)
    })

    yield* Effect.addFinalizer(() => {
      const close = Scope.close(scope, Exit.void)
      if (sealed) return close
      sealed = true
      return Effect.zipRight(spec.keepOnClose && sink !== undefined ? keepAsIs : drop, close)
    })

    if (deferred === undefined) yield* materialize

    return {
      name: spec.name,
      write,
      end,
      progress: () => ({
        sourceBytes,
        maskedBytes,
        keptBytes,
        writtenBytes,
        lastBytes,
        lines: keptBytes === 0 ? 0 : lines.newlines() + (lastKept === 10 ? 0 : 1),
        captureError,
        full,
        ended
      }),
      save,
      seal,
      discard: Effect.suspend(() => {
        if (sealed) return Effect.void
        sealed = true
        return drop
      }),
      deferred: () => (deferred === undefined ? undefined : concat(deferred.length === 0 ? [new Uint8Array(0)] : deferred))
    } satisfies Writer
  })
