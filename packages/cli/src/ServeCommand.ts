/**
 * What `spillway serve` was asked for, as `serve.ts` (its program of its
 * own) reads it from the arguments.
 *
 * @since 0.1.0
 */
import type { Option } from "effect"

/** What `spillway serve` was asked for. */
export interface ServeOptions {
  readonly port: number
  readonly bind: string
  readonly dir: Option.Option<string>
  readonly channel: Option.Option<string>
  readonly tokenFile: Option.Option<string>
}
