/**
 * The web view served on Node: `@effect/platform-node`'s HTTP server over
 * the same directory and stores the command and the MCP server use
 * (`SPILLWAY_OUTPUT_DIR`, or `~/.spillway/tool-output`), with the read
 * capabilities alone. Searches and their highlighting run on a pool of two
 * pattern workers of the view's own, each request within its deadline, so
 * no search holds up another request. Bound to 127.0.0.1 by default; bound
 * anywhere else, it needs a token of at least 16 characters, and makes one
 * when none is given.
 *
 * @since 0.1.0
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Access, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { BodyRead, WebView } from "@spillway/web"
import { Data, Duration, Effect, Layer, Schedule, type Scope } from "effect"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import * as NodeBodies from "./NodeBodies.js"
import * as NodePattern from "./NodePattern.js"

/** Where the view reads, where it listens, and for whom. */
export interface Options {
  /** The directory of kept output; `SPILLWAY_OUTPUT_DIR` or `~/.spillway/tool-output` by default. */
  readonly directory?: string | undefined
  /** The port; 0 (the default) takes any free one. */
  readonly port?: number | undefined
  /** The address to bind; 127.0.0.1 by default. */
  readonly host?: string | undefined
  /** The token requests from elsewhere than loopback need; `SPILLWAY_VIEW_TOKEN` by default, made at random when binding elsewhere. */
  readonly token?: string | undefined
  /** The person; `SPILLWAY_OWNER` (the user's name by default) by default. */
  readonly owner?: string | undefined
  /** Only this channel's jobs and agents; every channel of the owner's by default. */
  readonly channel?: string | undefined
  /** How each tool's previews said to read on and search, by tool name. */
  readonly hints?: Readonly<Record<string, WebView.Hints>> | undefined
  /** A follow stream ends after this long and the browser resumes it. */
  readonly followMaxMillis?: number | undefined
  /** The JavaScript heap the server lets garbage fill before it collects it; 24 MiB by default. */
  readonly heapBudgetMiB?: number | undefined
  /** Limits on searches: time and bytes per request, highlighted lines, searches at once (`WebView.Options`). */
  readonly search?: Pick<WebView.Options, "searchMillis" | "searchScanBytes" | "maxHighlighted" | "maxReplyChars" | "maxSearches" | "maxSearchesPerClient"> | undefined
}

/** Shortest token the view accepts, in characters (`openssl rand -hex 16` makes 32). */
export const MIN_TOKEN_CHARS = WebView.MIN_TOKEN_CHARS

/** The view's token is too weak to guard it; nothing was started. */
export class WeakToken extends Data.TaggedError("WeakToken")<{ readonly source: string; readonly problem: string }> {
  override get message() {
    return `${this.source}: ${this.problem}`
  }
}

/** Where a started view answers. */
export interface Started {
  /** The address to open, with `?token=` when a token is needed. */
  readonly url: string
  readonly host: string
  readonly port: number
  readonly token: string | undefined
}

/**
 * The read capabilities over the directory: the read-only grant of the
 * store, reading saved output by name, and the pattern engine the view's
 * searches and highlighting run on.
 */
export const layerRead = (options: Pick<Options, "directory"> = {}) =>
  Layer.merge(BodyRead.layer, Spill.layerRead({ maxPageBytes: 512 * 1024 })).pipe(
    Layer.provide(Layer.mergeAll(
      NodeBodies.layerWithout({ directory: options.directory }).pipe(
        Layer.provide(Access.allowOwners)
      ),
      SpillPolicy.allowAll
    )),
    // searches are a few people's at a time: two workers with small heaps, the view's own
    Layer.provideMerge(NodePattern.layer({ maxWorkers: 2, maxWorkerHeapMiB: 64 })),
    // the masker stays in the view's context: its error replies are masked with it (`ErrorText`)
    Layer.provideMerge(Secrets.layerFromEnv)
  )

/**
 * Keeps the JavaScript heap within a budget. Reading a large body's
 * manifest and pages leaves short-lived garbage that V8 would let grow the
 * heap by a hundred MiB or more before collecting it; a full collection
 * whenever the heap passes the budget (looked at every 100 ms) keeps the
 * server's memory flat whatever the bodies' size.
 */
const heapBudget = (budgetMiB: number): Effect.Effect<Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const gc = (() => {
      try {
        V8.setFlagsFromString("--expose-gc")
        return Vm.runInNewContext("gc") as () => void
      } catch {
        return undefined
      }
    })()
    if (gc === undefined) return Effect.void
    const budget = budgetMiB * 1024 * 1024
    const check = Effect.sync(() => {
      if (V8.getHeapStatistics().used_heap_size > budget) gc()
    })
    // after every request, and every 100 ms for the long ones (a follow, a search)
    yield* Effect.forkScoped(Effect.repeat(check, Schedule.spaced(Duration.millis(100))))
    return check
  })

const isLoopback = (host: string) => host === "localhost" || WebView.isLoopback(host)

/** Starts the view for as long as the scope lasts; fails when the address cannot be bound. */
export const serve = (options: Options = {}): Effect.Effect<Started, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const fromEnv = process.env.SPILLWAY_VIEW_TOKEN
    const given = options.token !== undefined
      ? { source: "the token", token: options.token }
      : fromEnv !== undefined && fromEnv !== ""
      ? { source: "SPILLWAY_VIEW_TOKEN", token: fromEnv }
      : undefined
    // a weak token is refused whatever the address: the same view may be bound elsewhere tomorrow
    const problem = given === undefined ? undefined : WebView.tokenProblem(given.token)
    if (given !== undefined && problem !== undefined) return yield* new WeakToken({ source: given.source, problem })
    const token = given?.token ?? (isLoopback(host) ? undefined : Crypto.randomBytes(24).toString("base64url"))
    const owner = options.owner ?? NodeBodies.callerFromEnv("view").owner
    const app = yield* WebView.app({
      owner,
      channel: options.channel,
      token,
      followMaxMillis: options.followMaxMillis,
      hints: options.hints,
      ...options.search
    })
    const context = yield* Layer.build(Layer.merge(
      NodeHttpServer.layer(() => Http.createServer(), { port: options.port ?? 0, host }),
      layerRead(options)
    ))
    const collect = yield* heapBudget(options.heapBudgetMiB ?? 24)
    yield* HttpServer.serveEffect(Effect.ensuring(app, collect)).pipe(Effect.provide(context))
    const address = yield* HttpServer.addressWith((a) => Effect.succeed(a)).pipe(Effect.provide(context))
    const port = address._tag === "TcpAddress" ? address.port : 0
    const shown = host.includes(":") ? `[${host}]` : host
    return {
      url: `http://${shown}:${port}/${token !== undefined && !isLoopback(host) ? `?token=${token}` : ""}`,
      host,
      port,
      token
    }
  })
