/**
 * The host side: runs commands and keeps their spools on this machine
 * (through the process manager), and answers the host RPC group over stdio
 * (`ssh somehost spillway host --stdio`), TCP or WebSocket. Credentials come from a
 * JSON file (`{ "credentials": { "<credential>": "<scope>" } }`) read again
 * at every check, so removing or changing a credential revokes its leases at
 * once; a wait checks its lease while it runs and after. Jobs of one scope
 * are out of reach of another, and so is their load: a scope has at most
 * `maxWaitsPerScope` waits running at once. Over TCP and WebSocket,
 * connections are limited until they show a credential or a lease
 * (`Options.limits`). A host does not start with a credential shorter than
 * `MIN_CREDENTIAL_CHARS`, or a cursor key shorter than 32 bytes.
 *
 * @since 0.1.0
 */
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import { Access, Cursor, Errors, ErrorText, Process, type ProcessView, Retention, Secrets } from "@spillway/core"
import { NodeBodies, NodeChild, NodePattern } from "@spillway/node"
import { Clock, Data, Deferred, Effect, Either, FiberId, Layer, Schedule, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as HostIdentity from "./HostIdentity.js"
import { HostError, HostRpcs } from "./HostProtocol.js"
import * as Listener from "./internal/listener.js"
import * as Revocations from "./internal/revocations.js"
import * as Lease from "./Lease.js"

/** Where a host keeps its identity, spools and records, whom it trusts, and its limits. */
export interface Options extends Process.Options {
  /** The host's private directory: `identity` (0600), `cursor.key`, and the spools with their manifests in `spools`. */
  readonly directory: string
  /** The credentials file. */
  readonly credentials: string
  /** How long a lease lasts; controllers renew theirs before then. One hour by default. */
  readonly leaseTtlMillis?: number | undefined
  /** Limits on connections and frames (TCP and WebSocket; the frame limit on stdio too). */
  readonly limits?: Partial<Limits> | undefined
  /**
   * Bytes the kept output of all jobs may hold (`spillway host --spool-pool`);
   * 128 MiB by default. A job holds what it kept until it expires; a job
   * started once the pool is full keeps nothing, and its status says so.
   */
  readonly spoolPoolBytes?: number | undefined
}

/** Limits on a host's connections and frames, before and after authentication, and on each scope's waits. */
export interface Limits extends Listener.Limits {
  /** Waits one scope may have running at once; past them a wait is refused, saying so. */
  readonly maxWaitsPerScope: number
}

/**
 * The limits a host applies unless told otherwise: 1 MiB frames, 32
 * connections waiting to authenticate, 10 seconds to do it, 1,024 in all,
 * 5 minutes idle, 64 waits at once per scope.
 */
export const defaultLimits: Limits = { ...Listener.defaultLimits, maxWaitsPerScope: 64 }

/** A wait refused because its scope has as many running as the host allows; a controller receives it as a `HostError` with reason "WaitLimit". */
export class WaitLimit extends Data.TaggedError("WaitLimit")<{ readonly max: number }> {
  override get message() {
    return `this scope has ${this.max} waits running on this host already, the most it allows (spillway host --max-waits); let one end before waiting again, or wait on fewer jobs at once`
  }
}

/** Shortest credential a host accepts, in characters: 16 (96 bits or more when random; `openssl rand -hex 16` makes 32). */
export const MIN_CREDENTIAL_CHARS = 16

/** Why a host cannot start as configured; nothing was served. */
export class HostStartError extends Data.TaggedError("HostStartError")<{
  readonly reason: "weak-credential" | "weak-cursor-key"
  readonly file: string
  readonly detail: string
}> {
  override get message() {
    return `${this.file}: ${this.detail}`
  }
}

/** How often a lease is checked again while a wait runs. */
const RECHECK_MILLIS = 200

/** A failure as a controller receives it, its words through `ErrorText` (bounded, and masked with the host's masker). */
const hostError = (e: unknown, masker?: Secrets.Masker) => {
  // already described (a lease refused while a wait ran): the same words and reason as any later call's
  if (e instanceof HostError) return e
  const { message, tag } = ErrorText.describe(e, { masker })
  return new HostError({ reason: tag, detail: message })
}

/** The credentials file: each credential a controller may present, and the scope it grants. */
export const CredentialsFile = Schema.parseJson(Schema.Struct({
  credentials: Schema.Record({ key: Schema.String, value: Schema.String })
}))

const decodeCredentials = Schema.decodeUnknownEither(CredentialsFile)

/** Every credential of the credentials file with its scope, the weak ones too; undefined when it is missing, unreadable or malformed. */
const readAllCredentials = (file: string): ReadonlyArray<readonly [string, string]> | undefined => {
  let text: string
  try {
    text = Fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
  const decoded = decodeCredentials(text)
  return decoded._tag === "Right" ? Object.entries(decoded.right.credentials) : undefined
}

/**
 * Reads the credentials file (credential to scope), or undefined when it is
 * missing, unreadable or malformed (as while it is rewritten in place): then
 * the host trusts no one, but nothing is noted as revoked. A credential
 * shorter than `MIN_CREDENTIAL_CHARS` (written there after the host
 * started) is never accepted.
 */
const readCredentials = (file: string): ReadonlyMap<string, string> | undefined => {
  const all = readAllCredentials(file)
  return all === undefined ? undefined : new Map(all.filter(([credential]) => credential.length >= MIN_CREDENTIAL_CHARS))
}

/** Fails when the credentials file names a credential too short to be safe, naming its scope (never the credential). */
const checkCredentials = (file: string) =>
  Effect.suspend(() => {
    const weak = (readAllCredentials(file) ?? []).filter(([credential]) => credential.length < MIN_CREDENTIAL_CHARS)
    if (weak.length === 0) return Effect.void
    const scopes = weak.slice(0, 5).map(([, scope]) => JSON.stringify(scope)).join(", ")
    return Effect.fail(
      new HostStartError({
        reason: "weak-credential",
        file,
        detail: `${weak.length === 1 ? "a credential" : `${weak.length} credentials`} (for scope ${scopes}) ${weak.length === 1 ? "is" : "are"} shorter than ${MIN_CREDENTIAL_CHARS} characters; replace ${weak.length === 1 ? "it" : "them"} with random ones (make one with \`openssl rand -hex 16\`)`
      })
    )
  })

/** The characters of content after which a `Pages` call stops, whatever its count (well under a frame even with every character escaped). */
const PAGES_AHEAD_CHARS = 64 * 1024

/**
 * Pages in a row from a cursor, each as a poll would return it: at least the
 * first, and no more once the output ends, the job is still running, or the
 * pages hold `PAGES_AHEAD_CHARS`.
 */
const pagesFrom = (
  manager: Process.Manager,
  caller: Process.Caller,
  request: { readonly pid: number; readonly cursor: string; readonly limit: number | null | undefined; readonly count: number }
) =>
  Effect.gen(function*() {
    const pages: Array<ProcessView.Page> = []
    let cursor: string | undefined = request.cursor
    let chars = 0
    while (cursor !== undefined && pages.length < request.count && chars < PAGES_AHEAD_CHARS) {
      const view: ProcessView.PollResult = yield* manager.poll(caller, { pid: request.pid, cursor, limit: request.limit })
      // a poll by cursor answers with a page; anything else ends the run
      if (view._tag !== "Page") {
        if (pages.length === 0) return yield* new Errors.InvalidRequest({ argument: "cursor", reason: "this cursor does not start a page" })
        break
      }
      pages.push(view)
      chars += view.content.length
      cursor = view.truncated && view.status !== "running" ? view.next_cursor : undefined
    }
    return pages
  })

/** The handlers of the host's calls, over a process manager of its own. */
export const handlers = (options: Options) =>
  HostRpcs.toLayer(Effect.gen(function*() {
    yield* checkCredentials(options.credentials)
    const directory = Path.resolve(options.directory)
    const identity = yield* HostIdentity.loadOrCreate(Path.join(directory, "identity"))
    // a removed credential's leases stay revoked when it is put back; noticed at every check and every second
    const revocations = yield* Effect.try({
      try: () =>
        Revocations.make({
          stateFile: Path.join(directory, "revoked-credentials.json"),
          readCredentials: () => readCredentials(options.credentials),
          fenceOf: Lease.fenceOf,
          now: () => Date.now()
        }),
      catch: (e) => new HostError({ reason: "Unavailable", detail: `the host cannot keep its record of revoked credentials in ${directory}: ${String(e)}` })
    }).pipe(Effect.orDie)
    yield* Effect.forkScoped(Effect.repeat(Effect.sync(() => void revocations.read()), Schedule.spaced("1 second")))
    const manager = yield* Process.make(options)
    // every error a controller receives is masked as any output is
    const masker = yield* Secrets.Secrets
    const failed = (e: unknown) => hostError(e, masker)
    const ttl = options.leaseTtlMillis ?? Lease.DEFAULT_TTL_MILLIS
    // over TCP and WebSocket, a connection that shows an accepted credential or lease is let past the handshake limits
    const sessions = yield* Effect.serviceOption(Listener.Sessions)
    const authenticated = (clientId: number) =>
      Effect.sync(() => {
        if (sessions._tag === "Some") sessions.value.authenticated(clientId)
      })
    /** Verifies a lease now (not when the effect is built), as the caller it grants. */
    const check = (token: string, clientId: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Either.match(Lease.verify(identity.secret, identity.hash, revocations.read(), token, now, revocations.revokedAt), {
          onLeft: (e) => Effect.fail(failed(e)),
          onRight: (grant) => Effect.as(authenticated(clientId), Lease.callerOf(grant))
        }))
    const waits = yield* waitRegistry(revocations, identity, limitsOf(options).maxWaitsPerScope, failed)
    const run = <A, E>(token: string, clientId: number, f: (caller: Process.Caller) => Effect.Effect<A, E>) =>
      Effect.flatMap(check(token, clientId), (caller) => Effect.mapError(f(caller), failed))
    /** Like `run`, for a job the controller names by pid and, when it knows it, generation. */
    const onJob = <A, E>(
      token: string,
      clientId: number,
      pid: number,
      generation: string | undefined,
      f: (caller: Process.Caller) => Effect.Effect<A, E>
    ) =>
      run(token, clientId, (caller): Effect.Effect<A, E | Errors.InvalidRequest> =>
        generation === undefined
          ? f(caller)
          : Effect.flatMap(manager.list(caller), (jobs): Effect.Effect<A, E | Errors.InvalidRequest> =>
            jobs.some((j) => j.pid === pid && j.generation === generation)
              ? f(caller)
              : Effect.fail(new Errors.InvalidRequest({ argument: "generation", reason: `this call does not belong to the current job ${pid} (an earlier job with that pid, or one whose output is gone)` }))))
    return {
      Lease: ({ channel, credential, owner }, { clientId }) =>
        Effect.gen(function*() {
          const scope = Lease.scopeOf(revocations.read(), credential)
          if (scope === undefined) {
            return yield* failed(new Lease.LeaseRefused({ reason: "credential", detail: "this host does not know that credential" }))
          }
          const issuedAt = yield* Clock.currentTimeMillis
          const lease = Lease.issue(identity.secret, {
            scope,
            owner,
            channel,
            host: identity.hash,
            fence: Lease.fenceOf(credential),
            issuedAt,
            expiresAt: issuedAt + ttl
          })
          yield* authenticated(clientId)
          return { lease, scope, host: identity.hash, ttlMillis: ttl }
        }),
      Start: ({ command, cwd, keep, lease, stdin }, { clientId }) =>
        run(lease, clientId, (caller) =>
          Effect.map(
            manager.start(caller, { command, shell: true, cwd, stdin: stdin === true ? "pipe" : "closed", keep }),
            (s) => ({ pid: s.pid, generation: s.generation, started_at: s.started_at })
          )),
      Poll: ({ cursor, generation, lease, limit, line, lines, offset, pid }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) => manager.poll(caller, { pid, cursor, offset, limit, line, lines })),
      Pages: ({ count, cursor, generation, lease, limit, pid }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) => pagesFrom(manager, caller, { pid, cursor, limit, count })),
      Search: ({ cursor, generation, ignoreCase, lease, maxResults, pattern, pid }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) =>
          // a search runs up to its deadline: the lease is checked again before its matches are returned
          Effect.zipLeft(Effect.mapError(manager.search(caller, { pid, pattern, ignoreCase, maxResults, cursor }), failed), check(lease, clientId))),
      Wait: ({ fromLine, generation, lease, pattern, pid, timeoutMillis }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) =>
          // the lease is checked while the job is waited on and again once the wait is over:
          // output printed after a revocation is never returned
          Effect.zipLeft(
            waits.watched(lease, caller, Effect.mapError(manager.wait(caller, { pid, timeoutMillis, pattern, fromLine }), failed)),
            check(lease, clientId)
          )),
      Stdin: ({ close, data, generation, lease, pid }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) =>
          Effect.zipRight(
            data !== undefined ? manager.writeStdin(caller, pid, data) : Effect.void,
            close === true ? manager.closeStdin(caller, pid) : Effect.void
          )),
      Signal: ({ generation, lease, pid, signal }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) => manager.signal(caller, pid, signal)),
      Status: ({ generation, lease, pid }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) =>
          Effect.flatMap(manager.list(caller), (jobs) => {
            const job = jobs.find((j) => j.pid === pid)
            return job === undefined ? Effect.fail(new Errors.NotFound({ resource: "job", id: String(pid) })) : Effect.succeed(job)
          })),
      Delete: ({ generation, lease, pid }, { clientId }) =>
        onJob(lease, clientId, pid, generation, (caller) => manager.remove(caller, pid))
    }
  }))

/**
 * The waits running on a host: how many each scope has (at most `max`;
 * past them a wait is refused, saying so), and the leases they run on,
 * which one fiber looks at again every `RECHECK_MILLIS` for all of them,
 * ending every wait on a lease once it is revoked. A wait costs a count
 * and a place in its lease's record, not a timer or a fiber of its own.
 */
const waitRegistry = (revocations: Revocations.Revocations, identity: HostIdentity.HostIdentity, max: number, failed: (e: unknown) => HostError) =>
  Effect.gen(function*() {
    const byScope = new Map<string, number>()
    const leases = new Map<string, { readonly revoked: Deferred.Deferred<never, HostError>; waits: number }>()
    const recheck = Effect.suspend(() => {
      if (leases.size === 0) return Effect.void
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const credentials = revocations.read()
        return Effect.forEach(leases, ([token, entry]) => {
          const verified = Lease.verify(identity.secret, identity.hash, credentials, token, now, revocations.revokedAt)
          return verified._tag === "Left" ? Deferred.fail(entry.revoked, failed(verified.left)) : Effect.void
        }, { discard: true })
      })
    })
    yield* Effect.forkScoped(Effect.repeat(recheck, Schedule.spaced(RECHECK_MILLIS)))
    /** Runs a wait counted against its scope, ended early with the lease's refusal once it is revoked. */
    const watched = <A>(token: string, caller: Process.Caller, wait: Effect.Effect<A, HostError>): Effect.Effect<A, HostError | WaitLimit> =>
      Effect.acquireUseRelease(
        Effect.suspend(() => {
          const scope = scopeOfCaller(caller)
          const running = byScope.get(scope) ?? 0
          if (running >= max) return Effect.fail(new WaitLimit({ max }))
          byScope.set(scope, running + 1)
          let entry = leases.get(token)
          if (entry === undefined) {
            entry = { revoked: Deferred.unsafeMake<never, HostError>(FiberId.none), waits: 0 }
            leases.set(token, entry)
          }
          entry.waits++
          return Effect.succeed({ scope, entry })
        }),
        ({ entry }) => Effect.raceFirst(wait, Deferred.await(entry.revoked)),
        ({ entry, scope }) =>
          Effect.sync(() => {
            const left = (byScope.get(scope) ?? 1) - 1
            if (left <= 0) byScope.delete(scope)
            else byScope.set(scope, left)
            if (--entry.waits === 0) leases.delete(token)
          })
      )
    return { watched }
  })

/** The scope a lease's caller acts in (its channel is `[scope, channel]` as JSON). */
const scopeOfCaller = (caller: Process.Caller): string => {
  try {
    const parsed: unknown = JSON.parse(caller.channel)
    return Array.isArray(parsed) && typeof parsed[0] === "string" ? parsed[0] : caller.channel
  } catch {
    return caller.channel
  }
}

/** Everything the handlers need on Node, with records and the cursor key in the host's directory. */
const services = (options: Options) => {
  const directory = Path.resolve(options.directory)
  Fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
  return Layer.mergeAll(
    NodeChild.layerForJobs(),
    NodeBodies.layerWithout({
      directory: Path.join(directory, "spools"),
      ...(options.spoolPoolBytes !== undefined ? { pools: { spool: { ...Retention.defaultPools.spool, bytes: options.spoolPoolBytes } } } : {})
    }),
    Secrets.layerFromEnv,
    cursorKey(Path.join(directory, "cursor.key")),
    Access.allowOwners,
    // wait patterns run on worker threads, each ended at its wait's deadline
    NodePattern.layer()
  ).pipe(Layer.provideMerge(Layer.merge(Secrets.layerFromEnv, Access.allowOwners)))
}

/** The cursor key kept in the host's directory, made on the first start; a key file too short stops the start. */
const cursorKey = (file: string) =>
  Layer.unwrapEffect(Effect.suspend(() => {
    const key = new Uint8Array(Fs.readFileSync(ensureKey(file)))
    if (key.length >= Cursor.MIN_KEY_BYTES) return Effect.succeed(Cursor.layerKey(key))
    return Effect.fail(
      new HostStartError({
        reason: "weak-cursor-key",
        file,
        detail: `the cursor key is ${key.length} bytes; it must be ${Cursor.MIN_KEY_BYTES} random bytes or more. Remove the file and the host makes a new one (cursors signed with the old key stop working)`
      })
    )
  }))

const ensureKey = (file: string) => {
  try {
    Fs.writeFileSync(file, randomBytes(32), { flag: "wx", mode: 0o600 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
  }
  return file
}

const limitsOf = (options: Options): Limits => ({ ...defaultLimits, ...options.limits })

/** The host's calls, by name. */
const tags: ReadonlySet<string> = new Set(HostRpcs.requests.keys())

/** NDJSON whose lines are at most the frame limit. */
const serialization = (options: Options) =>
  Layer.succeed(RpcSerialization.RpcSerialization, RpcSerialization.makeNdjson({ maxBufferSize: limitsOf(options).maxFrameBytes }))

/** The host answering on this process's stdin and stdout. */
export const layerStdio = (options: Options) =>
  RpcServer.layer(HostRpcs).pipe(
    Layer.provide(handlers(options)),
    Layer.provide(RpcServer.layerProtocolStdio({ stdin: NodeStream.stdin, stdout: NodeSink.stdout })),
    Layer.provide(serialization(options)),
    Layer.provide(services(options))
  )

/** The host answering the connections of a listener, which limits them until they authenticate. */
const overListener = <E>(options: Options, listener: Layer.Layer<RpcServer.Protocol | Listener.Sessions, E>) =>
  RpcServer.layer(HostRpcs).pipe(
    Layer.provide(handlers(options)),
    Layer.provideMerge(listener),
    Layer.provide(services(options))
  )

/** The host answering on a TCP port (loopback by default). */
export const layerTcp = (options: Options & { readonly port: number; readonly host?: string | undefined }) =>
  overListener(options, Listener.layerTcp({ port: options.port, host: options.host ?? "127.0.0.1", limits: limitsOf(options), tags }))

/** The host answering WebSocket connections on a port (loopback by default), for fleets behind HTTP infrastructure. */
export const layerWebSocket = (options: Options & { readonly port: number; readonly host?: string | undefined }) =>
  overListener(options, Listener.layerWebSocket({ port: options.port, host: options.host ?? "127.0.0.1", limits: limitsOf(options), tags }))
