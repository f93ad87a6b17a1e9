/**
 * The evidence profile wired for Node: bodies in the spill directory with
 * their manifests beside them (`NodeBodies`), cursors signed with a key
 * kept in a 0600 file there (so cursors survive a restart), masking from
 * the default rules and the environment's secrets, and only owners reading
 * their evidence.
 *
 * @since 0.1.0
 */
import { Cursor, Errors, Evidence } from "@spillway/core"
import { Config, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { reasonOf } from "./FileChecks.js"
import * as NodeBodies from "./NodeBodies.js"

/** Where evidence lives, and the profile's limits. */
export interface Options extends Evidence.Options, NodeBodies.Options {}

/**
 * A cursor key read from a file, made (32 random bytes, mode 0600) when
 * missing, so that cursors handed out before a restart still decode after it.
 */
export const layerKeyFile = (file: string): Layer.Layer<Cursor.CursorKey> =>
  Layer.unwrapEffect(Effect.sync(() => {
    try {
      Fs.mkdirSync(Path.dirname(file), { recursive: true, mode: 0o700 })
      try {
        Fs.writeFileSync(file, globalThis.crypto.getRandomValues(new Uint8Array(32)), { flag: "wx", mode: 0o600 })
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
      }
      return Cursor.layerKey(new Uint8Array(Fs.readFileSync(file)))
    } catch (e) {
      // a defect that says what failed and why (a full disk, a folder that cannot be written), for whoever starts the server
      throw new Errors.StoreFailed({ operation: `make the cursor key ${file}`, reason: reasonOf(e) })
    }
  }))

/** The cursor key file of a directory: `.cursor.key` in it. */
export const keyFileOf = (options: NodeBodies.Options = {}): string => Path.join(NodeBodies.directoryOf(options), ".cursor.key")

/**
 * The delivery budget from configuration, `tools.tool_output_max_chars`
 * (in the environment `TOOLS_TOOL_OUTPUT_MAX_CHARS`, or
 * `tools_tool_output_max_chars` as Effect's environment provider spells the
 * path), read once when the layer is built; 12,000 characters when unset,
 * and at least 2,000, which a result's facts, marker and cursors need
 * beside any content.
 */
export const budgetConfig: Config.Config<number> = Config.integer("tool_output_max_chars").pipe(
  Config.nested("tools"),
  Config.orElse(() => Config.integer("TOOLS_TOOL_OUTPUT_MAX_CHARS")),
  Config.withDefault(12_000),
  Config.validate({ message: `must be at least ${Evidence.MIN_BUDGET_CHARS.toLocaleString("en-US")} characters`, validation: (n) => n >= Evidence.MIN_BUDGET_CHARS })
)

/** The profile over the bodies in context, the budget from configuration unless given. */
export const layerWithout = (options: Evidence.Options = {}) =>
  options.budgetChars !== undefined
    ? Evidence.layer(options)
    : Layer.unwrapEffect(Effect.map(Effect.orDie(budgetConfig), (budgetChars) => Evidence.layer({ ...options, budgetChars })))

/** The evidence profile over its own body store in the directory, with the key file there. */
export const layer = (options: Options = {}) =>
  layerWithout(options).pipe(
    Layer.provide(NodeBodies.layer(options)),
    Layer.provide(layerKeyFile(keyFileOf(options)))
  )
