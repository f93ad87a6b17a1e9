/**
 * Kept output, one way for every profile: a body is masked as it is
 * written, cut only where its profile's limit says (after masking, so no
 * secret is ever cut in two), counted in its retention pool before a byte is
 * stored, published whole (or, for a running job's spool, readable as it
 * grows) and described by one manifest. Every view (a preview, a page by
 * line, by code point or by byte, a search, a job's status) reads a body
 * through `open`, which asks `Access` first, by name or by cursor alike.
 *
 * Spill files, evidence, job spools, scratch captures and agent results are
 * all bodies; what tells them apart is their profile's limits and the views
 * over them.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer, type Scope } from "effect"
import * as Access from "./Access.js"
import { BodyFiles, nameProblem, refuseName } from "./BodyFiles.js"
import type { AccessDenied, Expired, InvalidRequest, QuotaExceeded } from "./Errors.js"
import { NotFound, type Resource as ResourceKind, StoreFailed } from "./Errors.js"
import * as Writer from "./internal/body/writer.js"
import type * as LineIndex from "./LineIndex.js"
import { type Filter, type Manifest, Manifests, type Origin } from "./Manifests.js"
import { Retention } from "./Retention.js"
import { Secrets, type Watch } from "./Secrets.js"
import * as Permission from "./Permission.js"
import { makeFilename } from "./SpillName.js"

export type { Cut, Patch, Progress, Writer } from "./internal/body/writer.js"

/** What a new body is, and how it is kept. Only `profile`, `owner`, `channel` and `tool` are required. */
export interface CreateOptions {
  /** The profile, which is also the retention pool: spill, evidence, spool, scratch, agent. */
  readonly profile: string
  readonly owner: string
  readonly channel: string
  /** True when only this channel may reach it (jobs, agents). */
  readonly channelBound?: boolean | undefined
  readonly tool: string
  /** The name; a fresh `YYYY-MM-DDTHH-MM-SS-mmmZ-xxxxxx.log` (with `extension`) by default. */
  readonly name?: string | undefined
  readonly extension?: string | undefined
  /** When it was made (epoch ms), when not now: the start of the job whose output it keeps. */
  readonly createdAt?: number | undefined
  /** How the operation stands ("running") or ended ("exit 1"); "ok" by default. */
  readonly status?: string | undefined
  readonly origin?: Origin | undefined
  /** Most bytes kept; the rest is counted, not kept. No limit by default. */
  readonly maxBytes?: number | undefined
  /** Where the limit cuts: after whole lines (the default), after whole code points, or at the byte. */
  readonly cut?: Writer.Cut | undefined
  /** True for a body readable while it grows (a running job's spool); by default it is published whole when sealed. */
  readonly visible?: boolean | undefined
  /**
   * On a failure to keep it all (a quota, a full disk): "abandon" (the
   * default) removes what was written and makes `seal` fail; "keep-prefix"
   * keeps what was written and records why in `captureError`.
   */
  readonly onFailure?: "abandon" | "keep-prefix" | undefined
  /**
   * True to keep what was written when the scope closes before `seal` (a
   * running job's spool when its manager stops), with its manifest left
   * "writing" for `recover`; by default such a body is removed.
   */
  readonly keepOnClose?: boolean | undefined
  /** Bytes reserved before anything is written (a body whose size is known): more is asked for as it grows. */
  readonly reserve?: number | undefined
  /** Holds up to this many masked bytes in memory before storing anything, so a short output never touches the store. */
  readonly deferBytes?: number | undefined
  /** Code points between checkpoints; 65,536 by default. */
  readonly checkpointEvery?: number | undefined
  /** Lines between line checkpoints; 1,024 by default. */
  readonly lineEvery?: number | undefined
  /** Literals whose positions in the masked output to report, found in the masker's own pass. */
  readonly watch?: Watch | undefined
  /** True when the bytes written are masked already (by a masker the caller runs); they are then stored as they are. */
  readonly alreadyMasked?: boolean | undefined
  /**
   * Sees every masked byte in order, kept or not, with its offset and the
   * line breaks it holds (counted once, by the body's line index when the
   * bytes are kept): for previews and tails. The bytes are lent for the
   * call only (the masker builds its next output in the same memory): copy
   * what you keep.
   */
  readonly onMasked?: ((bytes: Uint8Array, offset: number, newlines: number) => void) | undefined
  /**
   * Where the masker builds each output it gives `onMasked` (see
   * `Secrets.StreamOptions.into`): an `onMasked` that keeps output whole
   * may then keep the buffer it handed out instead of a copy.
   */
  readonly maskInto?: ((length: number) => Uint8Array) | undefined
  /** Told each time a batch of bytes is in the store (or failed to get there): readers of a visible body can look again. */
  readonly onWritten?: (() => void) | undefined
  /** Asked once, just before anything is stored; a reason refuses the body. */
  readonly admit?: ((name: string) => Effect.Effect<void, string>) | undefined
}

/** A body opened for reading, after the access check. */
export interface Reader {
  readonly manifest: Manifest
  /** Bytes readable now (for a growing spool, what the store holds at the open). */
  readonly size: number
  readonly read: (position: number, length: number, into?: Uint8Array) => Effect.Effect<Uint8Array, StoreFailed>
  /** The line index the manifest records. */
  readonly lineIndex: LineIndex.LineIndex
}

/** Everything opening a body for a caller can fail with. */
export type OpenError = NotFound | AccessDenied | Expired | InvalidRequest | StoreFailed

/** The body service. */
export interface Service {
  /** Where bodies live, for people. */
  readonly location: string
  /** Starts a body; closing the scope before `seal` leaves nothing behind. */
  readonly create: (options: CreateOptions) => Effect.Effect<Writer.Writer, QuotaExceeded | StoreFailed | InvalidRequest, Scope.Scope>
  /** The manifest, without any check: for the code that wrote the body, never for a caller's view. */
  readonly manifest: (id: string) => Effect.Effect<Manifest | undefined, StoreFailed>
  /**
   * Opens a body for a caller: the manifest is found, `Access.check` passes
   * (owner, channel, the authorizer, expiry), then the bytes are opened.
   * `resource` names the body as the caller knows it (a job by its pid).
   */
  readonly open: (
    caller: Access.Caller,
    id: string,
    options?: { readonly action?: Access.Action; readonly resource?: (manifest: Manifest) => Access.Resource }
  ) => Effect.Effect<Reader, OpenError, Scope.Scope>
  /** The check `open` runs, for views that act on a body without reading it. */
  readonly authorize: (caller: Access.Caller, resource: Access.Resource, action: Access.Action) => Effect.Effect<void, AccessDenied | Expired>
  /**
   * Every manifest of a profile, without any check: for the code that owns
   * the profile (a manager restoring its jobs). With `page`, one page of them,
   * newest first, for a listing that checks each.
   */
  readonly manifests: (
    profile: string,
    page?: Pick<Filter, "owner" | "before" | "text" | "limit">
  ) => Effect.Effect<ReadonlyArray<Manifest>, StoreFailed>
  /** The manifests of a profile that the caller may list. */
  readonly list: (caller: Access.Caller, profile?: string) => Effect.Effect<ReadonlyArray<Manifest>, StoreFailed>
  /** Records a body whose writer is gone (a restart mid-write) as complete, as it is on disk. */
  readonly recover: (id: string, patch?: { readonly status?: string; readonly origin?: Origin; readonly anchor?: number }) => Effect.Effect<Manifest | undefined, StoreFailed>
  /** Removes a body, its manifest and its room in the quota. */
  readonly remove: (id: string) => Effect.Effect<void, StoreFailed>
  /** Removes every expired body; returns how many. */
  readonly sweep: Effect.Effect<number, StoreFailed>
}

/** The body service. */
export class Bodies extends Context.Tag("@spillway/core/Bodies")<Bodies, Service>() {}

/** What kind of resource a body is, by its profile (`Permission.kindOf`). */
export const kindOf: (manifest: Manifest) => ResourceKind = Permission.kindOf

/** A body as `Access` sees it, named by its id (`Permission.resourceOf`). */
export const resourceOf: (manifest: Manifest) => Access.Resource = Permission.resourceOf

const lineIndexOf = (m: Manifest, size: number): LineIndex.LineIndex => ({
  bytes: Math.min(size, m.bytes),
  lines: m.lines,
  every: m.lineIndex.every,
  checkpoints: m.lineIndex.starts
})

/** Longest command recorded beside a tool's output; a longer one is kept by its start. */
const MAX_COMMAND_CHARS = 2000

/**
 * The origin as a body records it: a command beside a tool's output is
 * masked like the output, and bounded. It is masked when first read (a
 * manifest stored, a writer's result), so a short output that is never
 * stored never builds the masker's rules for its command alone.
 */
const maskedOrigin = (origin: Origin, masker: Context.Tag.Service<typeof Secrets>): Origin => {
  if (origin._tag !== "Tool" || origin.command === undefined) return origin
  const command = origin.command.slice(0, MAX_COMMAND_CHARS)
  let masked: string | undefined
  return Object.defineProperty({ ...origin }, "command", { enumerable: true, get: () => masked ??= masker.maskText(command) })
}

/** What a writer is told about a new body: the options, with each default filled in. */
const specOf = (options: CreateOptions, name: string, now: number): Writer.Spec => ({
  profile: options.profile,
  name,
  owner: options.owner,
  channel: options.channel,
  channelBound: options.channelBound ?? false,
  tool: options.tool,
  status: options.status ?? "ok",
  origin: options.origin ?? { _tag: "Tool" },
  createdAt: options.createdAt ?? now,
  maxBytes: options.maxBytes ?? Number.POSITIVE_INFINITY,
  cut: options.cut ?? "line",
  visible: options.visible ?? false,
  failure: options.onFailure ?? "abandon",
  keepOnClose: options.keepOnClose ?? false,
  reserve: options.reserve ?? 0,
  deferBytes: options.deferBytes ?? 0,
  checkpointEvery: options.checkpointEvery ?? 65_536,
  lineEvery: options.lineEvery ?? 1024,
  watch: options.watch,
  masked: options.alreadyMasked ?? false,
  onMasked: options.onMasked,
  maskInto: options.maskInto,
  onWritten: options.onWritten,
  admit: options.admit
})

/** What recovering a body works on: the stores, the quota, and the pools whose kept bodies are counted in it. */
interface Stores {
  readonly files: Context.Tag.Service<typeof BodyFiles>
  readonly manifests: Context.Tag.Service<typeof Manifests>
  readonly retention: Context.Tag.Service<typeof Retention>
  readonly counted: ReadonlySet<string>
}

/** Records a body whose writer is gone as complete, with the size it has in the store, and moves its room in the quota to match. */
const recoverBody = (
  { counted, files, manifests, retention }: Stores,
  id: string,
  patch: { readonly status?: string; readonly origin?: Origin; readonly anchor?: number }
) =>
  Effect.gen(function*() {
    const m = yield* manifests.get(id)
    if (m === undefined || m.state === "complete") return m
    const size = yield* Effect.scoped(files.open(id)).pipe(
      Effect.map((f) => f.size),
      Effect.orElseSucceed(() => 0)
    )
    const anchor = patch.anchor ?? m.createdAt
    const done: Manifest = {
      ...m,
      state: "complete",
      status: patch.status ?? m.status,
      origin: patch.origin ?? m.origin,
      bytes: size,
      kept: "head",
      expiresAt: retention.expiresAt(m.profile, anchor)
    }
    yield* manifests.update(done)
    if (size !== m.bytes && counted.has(m.profile)) {
      retention.free(m.profile, m.bytes, 0)
      retention.hold(m.profile, size, 0)
    }
    return done
  })

/** Builds the service over the bytes store, manifests, the quota, the masker and the authorizer; counts what is kept already. */
export const make = Effect.gen(function*() {
  const files = yield* BodyFiles
  const manifests = yield* Manifests
  const retention = yield* Retention
  const masker = yield* Secrets
  const authorizer = yield* Access.Authorizer

  // What is kept already counts against a pool's quota; it is counted at the pool's first write, so
  // a program that never writes (or writes only to pools without limits) never reads the manifests.
  const counted = new Set<string>()
  const lock = yield* Effect.makeSemaphore(1)
  const count = (pool: string) =>
    lock.withPermits(1)(Effect.gen(function*() {
      const limits = retention.pool(pool)
      if (counted.has(pool) || (limits.bytes === undefined && limits.entries === undefined)) return
      const kept = yield* manifests.list({ profile: pool })
      counted.add(pool)
      for (const m of kept) retention.hold(m.profile, m.bytes)
    }))

  // what writers that are gone left half-written (a crash mid-save) goes before the first body is stored, and at
  // every sweep: a short output held in memory and never stored reads nothing of the directory
  let debrisSwept = false
  const sweepDebrisOnce = Effect.suspend(() => {
    if (debrisSwept) return Effect.void
    debrisSwept = true
    return Effect.ignore(files.sweepDebris)
  })

  const create: Service["create"] = (options) =>
    Effect.gen(function*() {
      yield* count(options.profile)
      const now = yield* Clock.currentTimeMillis
      const name = options.name ?? makeFilename(new Date(now), undefined, options.extension ?? ".log")
      const problem = nameProblem(name)
      if (problem !== undefined) return yield* refuseName(name, problem)
      const reservation = yield* retention.reserve(options.profile, options.reserve ?? 0)
      const limit = retention.usage(options.profile).limit
      const spec = specOf(options, name, now)
      return yield* Writer.make({ ...spec, origin: maskedOrigin(spec.origin, masker) }, {
        files: { ...files, create: (id, mode) => Effect.zipRight(sweepDebrisOnce, files.create(id, mode)) },
        masker,
        reservation,
        quotaLimit: limit,
        insert: manifests.insert,
        update: manifests.update,
        remove: (id) => Effect.ignore(manifests.remove(id)),
        expiresAt: (anchor) => retention.expiresAt(options.profile, anchor)
      }).pipe(Effect.tapError(() => reservation.release))
    })

  const authorize: Service["authorize"] = (caller, resource, action) => Access.check(authorizer, caller, resource, action)

  const open: Service["open"] = (caller, id, options = {}) =>
    Effect.gen(function*() {
      const problem = nameProblem(id)
      if (problem !== undefined) return yield* refuseName(id, problem)
      const m = yield* manifests.get(id)
      if (m === undefined) return yield* new NotFound({ resource: "output", id })
      yield* authorize(caller, (options.resource ?? resourceOf)(m), options.action ?? "read")
      const file = yield* files.open(id).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(new NotFound({ resource: kindOf(m), id })))
      )
      return { manifest: m, size: file.size, read: file.read, lineIndex: lineIndexOf(m, file.size) } satisfies Reader
    })

  const list: Service["list"] = (caller, profile) =>
    Effect.gen(function*() {
      const out: Array<Manifest> = []
      for (const m of yield* manifests.list({ profile, owner: caller.owner })) {
        const allowed = yield* Effect.either(authorize(caller, resourceOf(m), "list"))
        if (allowed._tag === "Right") out.push(m)
      }
      return out
    })

  const remove: Service["remove"] = (id) =>
    Effect.gen(function*() {
      const m = yield* manifests.get(id)
      yield* files.remove(id).pipe(Effect.mapError((e) => e._tag === "StoreFailed" ? e : new StoreFailed({ operation: `remove ${id}`, reason: e.message })))
      if (m !== undefined) {
        yield* manifests.remove(id)
        if (counted.has(m.profile)) retention.free(m.profile, m.bytes)
      }
    })

  const recover: Service["recover"] = (id, patch = {}) => recoverBody({ files, manifests, retention, counted }, id, patch)

  const sweep: Service["sweep"] = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const expired = yield* manifests.takeExpired(now)
    for (const m of expired) {
      yield* Effect.ignore(files.remove(m.id))
      if (counted.has(m.profile)) retention.free(m.profile, m.bytes)
    }
    yield* Effect.ignore(files.sweepDebris)
    return expired.length
  })

  return Bodies.of({
    location: files.location,
    create,
    manifest: manifests.get,
    manifests: (profile, page) => manifests.list({ ...page, profile }),
    open,
    authorize,
    list,
    recover,
    remove,
    sweep
  })
})

/** The body service as a layer. */
export const layer: Layer.Layer<Bodies, never, BodyFiles | Manifests | Retention | Secrets | Access.Authorizer> =
  Layer.effect(Bodies, make)
