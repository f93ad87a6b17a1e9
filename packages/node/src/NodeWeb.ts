/**
 * The web view served on Node: `@effect/platform-node`'s HTTP server over
 * the same directory and stores the command and the MCP server use
 * (`SPILLWAY_OUTPUT_DIR`, or `~/.spillway/tool-output`), with the read
 * capabilities alone. Searches run on the pattern engine's worker threads,
 * as `spillway grep`'s do. Bound to 127.0.0.1 by default; bound anywhere
 * else, it needs a token, and makes one when none is given.
 *
 * @since 0.1.0
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Access, Secrets, Spill, SpillPolicy } from "@spillway/core"
import { BodyRead, WebView } from "@spillway/web"
import { Effect, Layer, type Scope } from "effect"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
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
}

/** Where a started view answers. */
export interface Started {
  /** The address to open, with `?token=` when a token is needed. */
  readonly url: string
  readonly host: string
  readonly port: number
  readonly token: string | undefined
}

/** The read capabilities over the directory: the read-only grant of the store, and reading saved output by name. */
export const layerRead = (options: Pick<Options, "directory"> = {}) =>
  Layer.merge(BodyRead.layer, Spill.layerRead({ maxPageBytes: 512 * 1024 })).pipe(
    Layer.provide(Layer.mergeAll(
      NodeBodies.layerWithout({ directory: options.directory }).pipe(
        Layer.provide(Secrets.layerFromEnv),
        Layer.provide(Access.allowOwners)
      ),
      SpillPolicy.allowAll,
      NodePattern.layer()
    ))
  )

const isLoopback = (host: string) => host === "localhost" || WebView.isLoopback(host)

/** Starts the view for as long as the scope lasts; fails when the address cannot be bound. */
export const serve = (options: Options = {}): Effect.Effect<Started, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const fromEnv = process.env.SPILLWAY_VIEW_TOKEN
    const token = options.token ?? (fromEnv !== undefined && fromEnv !== "" ? fromEnv : isLoopback(host) ? undefined : Crypto.randomBytes(24).toString("base64url"))
    const owner = options.owner ?? NodeBodies.callerFromEnv("view").owner
    const app = yield* WebView.app({
      owner,
      channel: options.channel,
      token,
      followMaxMillis: options.followMaxMillis,
      hints: options.hints
    })
    const context = yield* Layer.build(Layer.merge(
      NodeHttpServer.layer(() => Http.createServer(), { port: options.port ?? 0, host }),
      layerRead(options)
    ))
    yield* HttpServer.serveEffect(app).pipe(Effect.provide(context))
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
