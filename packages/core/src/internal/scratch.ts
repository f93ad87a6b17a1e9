import { Effect, Scope } from "effect"
import type * as Access from "../Access.js"
import type * as Body from "../Body.js"
import { nameProblem } from "../BodyFiles.js"
import { InvalidRequest, NotFound, quote } from "../Errors.js"
import type { Manifest } from "../Manifests.js"
import type { Collector, ReadOptions, ScratchOwner, ScratchPage } from "../ToolOutput.js"
import * as Utf8 from "../Utf8.js"
import * as Read from "./read.js"

/** What a capture left: a body (whole, or a part with why), or why there is none. @internal */
export type Saved =
  | { readonly path: string; readonly complete: boolean; readonly note?: string | undefined }
  | { readonly error: string }

/** What the captures are made with. @internal */
export interface Settings {
  readonly paths: (tool: string, owner: ScratchOwner) => string
  readonly maxCaptureBytes: number
  readonly maxPageBytes: number
  readonly maxLines: number
}

/** What one delivery asks to capture. @internal */
export interface Request {
  readonly caller: Access.Caller
  readonly tool: string
  readonly owner: ScratchOwner
  /** The whole raw output so far, as UTF-8. */
  readonly raw: Uint8Array
  readonly final: boolean
}

/** A command's collector as the profile sees it: one body, written across deliveries. */
interface CollectorState {
  readonly scope: Scope.Scope
  readonly lock: Effect.Semaphore
  writer: Body.Writer | undefined
  path: string | undefined
  /** Raw bytes of the output already written to the body. */
  fed: number
  failed: string | undefined
  sealed: Manifest | undefined
}

const states = new WeakMap<Collector, CollectorState>()

const noCopy = (reason: string) => ({ error: `no complete copy was saved: ${reason}` }) satisfies Saved

const SCRATCH = "scratch"

/** What every capture and read works with: the one store and the profile's settings. */
interface Captures {
  readonly bodies: Body.Service
  readonly settings: Settings
}

/**
 * Captures as bodies of the one store, in the `scratch` pool: one body per
 * snapshot or received result, one per command for a collector, masked by
 * the body's writer, within the per-capture limit and the pool's quota, and
 * never claimed whole when any of it is missing.
 *
 * @internal
 */
export const make = (bodies: Body.Service, settings: Settings) => {
  const captures: Captures = { bodies, settings }

  /** A new collector, living as long as the scope it is made in. */
  const collector: Effect.Effect<Collector, never, Scope.Scope> = Effect.gen(function*() {
    const scope = yield* Effect.scope
    const state: CollectorState = {
      scope,
      lock: yield* Effect.makeSemaphore(1),
      writer: undefined,
      path: undefined,
      fed: 0,
      failed: undefined,
      sealed: undefined
    }
    const handle: Collector = { path: () => state.path, fed: () => state.fed }
    states.set(handle, state)
    return handle
  })

  /** True when a collector already keeps a body, which every later delivery goes on feeding. */
  const collecting = (c: Collector | undefined): boolean => c !== undefined && states.get(c)?.writer !== undefined

  /** Captures one delivery, as its policy says; a failure is a reason, never a claimed copy. */
  const capture = (request: Request, collectorOf: Collector | undefined): Effect.Effect<Saved> => {
    const state = collectorOf !== undefined ? states.get(collectorOf) : undefined
    return state !== undefined ? cumulative(captures, state, request) : once(captures, request)
  }

  const built: Read.IndexCache = new Map()
  /** A page of a capture for a caller, after `Access` has passed it. */
  const read = (caller: Access.Caller, path: string, options: ReadOptions = {}) =>
    readPage(captures, built, caller, path, options)

  return { capture, collecting, collector, read }
}

/** Why a part is all there is, in the words a model reads. */
const partNote = (settings: Settings, m: Manifest): string =>
  m.captureError !== null
    ? `the saved copy holds only its first ${m.bytes} of ${m.sourceBytes} bytes: ${m.captureError}`
    : `the saved copy holds only lines 1-${m.lines} (${m.bytes} of ${m.sourceBytes} bytes): the output passed the ${settings.maxCaptureBytes}-byte limit per capture`

/** What a sealed body is worth: the whole output, a part of it, or nothing (an empty part is removed). */
const outcome = (captures: Captures, m: Manifest): Effect.Effect<Saved> =>
  Effect.gen(function*() {
    if (m.kept === "whole" && m.captureError === null) return { path: m.id, complete: true }
    if (m.bytes === 0) {
      yield* Effect.ignore(captures.bodies.remove(m.id))
      return noCopy(m.captureError ?? "nothing of it could be kept")
    }
    return { path: m.id, complete: false, note: partNote(captures.settings, m) }
  })

/**
 * A fresh path from the factory, checked: a generated path already taken
 * is never overwritten, so another is made (and the store still refuses
 * one it finds taken when it publishes).
 */
const freshPath = ({ bodies, settings }: Captures, request: Request) =>
  Effect.gen(function*() {
    let path = settings.paths(request.tool, request.owner)
    for (let tries = 1; tries < 4 && (yield* bodies.manifest(path)) !== undefined; tries++) {
      path = settings.paths(request.tool, request.owner)
    }
    const problem = nameProblem(path)
    if (problem !== undefined) {
      return yield* new InvalidRequest({ argument: "path", reason: `the capture path ${quote(path)} is refused: ${problem}` })
    }
    return path
  })

/** A scratch body for a request's output: hidden until sealed for a snapshot, visible while it runs for a collector. */
const create = ({ bodies, settings }: Captures, request: Request, path: string, visible: boolean) =>
  bodies.create({
    profile: SCRATCH,
    owner: request.caller.owner,
    channel: request.caller.channel,
    tool: request.tool,
    name: path,
    status: visible ? "running" : "ok",
    maxBytes: settings.maxCaptureBytes,
    cut: "line",
    visible,
    onFailure: "keep-prefix"
  })

/** One body holding the output as it is now: a snapshot, or a received result. */
const once = (captures: Captures, request: Request): Effect.Effect<Saved> =>
  Effect.scoped(Effect.gen(function*() {
    const path = yield* freshPath(captures, request)
    const writer = yield* create(captures, request, path, false)
    yield* writer.write(request.raw)
    return yield* writer.seal()
  })).pipe(
    Effect.matchEffect({
      onFailure: (e) => Effect.succeed(noCopy(e.message)),
      onSuccess: (m) => outcome(captures, m)
    })
  )

/** Marks a collector as failed for good, with why; every later delivery reports the same. */
const fail = (state: CollectorState, reason: string): Saved => {
  state.failed = noCopy(reason).error
  return { error: state.failed }
}

/**
 * Makes a collector's one body at its first delivery, or says why it could
 * not; once made, closing the collector before the last delivery seals what
 * it holds as unfinished.
 */
const start = (captures: Captures, state: CollectorState, request: Request): Effect.Effect<Saved | undefined> =>
  Effect.gen(function*() {
    const made = yield* Effect.either(Effect.gen(function*() {
      const path = yield* freshPath(captures, request)
      const writer = yield* create(captures, request, path, true).pipe(Effect.provideService(Scope.Scope, state.scope))
      return { path, writer }
    }))
    if (made._tag === "Left") return fail(state, made.left.message)
    // a visible body is created at once: one that could not be (a path taken, a link on the way) is no capture
    const refused = made.right.writer.progress().captureError
    if (refused !== undefined) {
      yield* made.right.writer.discard
      return fail(state, refused)
    }
    state.writer = made.right.writer
    state.path = made.right.path
    // added after the writer's own finalizer, so it runs first
    yield* Scope.addFinalizer(
      state.scope,
      Effect.suspend(() =>
        state.sealed !== undefined || state.failed !== undefined || state.writer === undefined
          ? Effect.void
          : Effect.ignore(state.writer.seal({ status: "unfinished: no last delivery" }))
      )
    )
    return undefined
  })

/** What a collector's body holds while its command runs, in the words a model reads. */
const runningNote = (settings: Settings, progress: Body.Progress): string =>
  progress.captureError !== undefined
    ? `the saved copy holds only its first ${progress.keptBytes} bytes: ${progress.captureError}`
    : progress.full
    ? `the saved copy holds only its first ${progress.keptBytes} bytes: the output passed the ${settings.maxCaptureBytes}-byte limit per capture`
    : "the saved copy holds the output only up to what was settled; the command has not ended"

/** Writes what the command printed since the last delivery into its one body; seals it at the last. */
const cumulative = (captures: Captures, state: CollectorState, request: Request): Effect.Effect<Saved> =>
  state.lock.withPermits(1)(Effect.gen(function*() {
    if (state.failed !== undefined) return { error: state.failed }
    if (state.sealed !== undefined) return yield* outcome(captures, state.sealed)
    if (state.writer === undefined) {
      const refused = yield* start(captures, state, request)
      if (refused !== undefined) return refused
    }
    const writer = state.writer!
    if (request.raw.length > state.fed) {
      yield* writer.write(request.raw.subarray(state.fed))
      state.fed = request.raw.length
    }
    if (request.final) {
      const sealed = yield* Effect.either(writer.seal({ status: "ended" }))
      if (sealed._tag === "Left") return fail(state, writer.progress().captureError ?? sealed.left.message)
      state.sealed = sealed.right
      return yield* outcome(captures, sealed.right)
    }
    yield* Effect.ignore(writer.save({ status: "running" }))
    return { path: state.path!, complete: false, note: runningNote(captures.settings, writer.progress()) }
  }))

/** A read option that counts lines: a whole number of 0 or more, 0 when left out. */
const count = (argument: string, value: number | undefined) =>
  value === undefined || (Number.isSafeInteger(value) && value >= 0)
    ? Effect.succeed(value ?? 0)
    : Effect.fail(new InvalidRequest({ argument, reason: `must be a whole number of 0 or more, got ${value}` }))

/** A page of a capture for a caller, after `Access` has passed it: whole lines from `offset`, within the page limits. */
const readPage = (
  { bodies, settings }: Captures,
  built: Read.IndexCache,
  caller: Access.Caller,
  path: string,
  options: ReadOptions
) =>
  Effect.scoped(Effect.gen(function*() {
    const offset = yield* count("offset", options.offset)
    const limit = yield* count("limit", options.limit)
    const problem = nameProblem(path)
    if (problem !== undefined) {
      return yield* new InvalidRequest({
        argument: "path",
        reason: `refused ${quote(path)}: ${problem}; pass the path a marker names, such as conv-1/outputs/fetch-<uuid>.txt`
      })
    }
    const body = yield* bodies.open(caller, path)
    const m = body.manifest
    if (m.profile !== SCRATCH) return yield* new NotFound({ resource: "scratch", id: path })
    const file: Read.SpillFile = { filename: path, size: body.size, read: body.read, index: body.lineIndex }
    const index = yield* Read.indexOf(file, built)
    const first = Math.max(1, offset)
    if (first > Math.max(index.lines, 1)) {
      return yield* new InvalidRequest({ argument: "offset", reason: `line ${first} is past the end: ${path} has ${index.lines} lines` })
    }
    const lines = limit === 0 ? settings.maxLines : Math.min(limit, settings.maxLines)
    const end = Math.min(first + lines, index.lines + 1)
    const start = yield* Read.locate(file, index, first)
    const stop = yield* Read.locate(file, index, end)
    const page = yield* Read.linePage(file, index, { first, end, start, stop }, settings.maxPageBytes)
    const next = first + page.lines
    return {
      path,
      text: Utf8.decodeLossy(page.bytes),
      offset: first,
      lines: page.lines,
      totalLines: index.lines,
      totalBytes: file.size,
      complete: m.state === "complete" && m.kept === "whole" && m.captureError === null,
      ...(next <= index.lines ? { nextOffset: next } : {}),
      ...(page.cutLine !== undefined ? { cutLine: page.cutLine } : {})
    } satisfies ScratchPage
  }))
