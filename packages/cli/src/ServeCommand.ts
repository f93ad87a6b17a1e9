/**
 * `spillway serve`: its options and help, for the command tree. Serving
 * itself is a service (`Serve`), so the command's own program never loads
 * the HTTP server: the bin starts `serve` as a program of its own
 * (`serve.ts`), which provides it.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Context, Effect, type Option } from "effect"
import type { Exit2 } from "./Output.js"
import * as Commands from "./Commands.js"

/** What `spillway serve` was asked for. */
export interface ServeOptions {
  readonly port: number
  readonly bind: string
  readonly dir: Option.Option<string>
  readonly channel: Option.Option<string>
  readonly tokenFile: Option.Option<string>
}

/** Starts the view and serves until interrupted. */
export class Serve extends Context.Tag("@spillway/cli/Serve")<Serve, (options: ServeOptions) => Effect.Effect<void, Exit2>>() {}

/** The `serve` subcommand. */
export const command = Command.make(
  "serve",
  {
    port: Options.integer("port").pipe(Options.withDefault(0), Options.withDescription("port to listen on (0 = any free port)")),
    bind: Options.text("bind").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("address to bind; anything but loopback needs a token")),
    dir: Options.text("dir").pipe(Options.optional, Options.withDescription("directory of kept output (SPILLWAY_OUTPUT_DIR by default)")),
    channel: Options.text("channel").pipe(Options.optional, Options.withDescription("show only this channel's jobs (every channel of yours by default)")),
    tokenFile: Options.text("token-file").pipe(
      Options.optional,
      Options.withDescription("file holding the token that requests from elsewhere than loopback need (SPILLWAY_VIEW_TOKEN, or a new one, by default)")
    )
  },
  (options) => Effect.flatMap(Serve, (serve) => serve(options))
).pipe(Command.withDescription(Commands.summary("serve")))
