/**
 * The evidence profile wired for Node: bodies in the spill directory,
 * manifests in a SQLite file beside them, cursors signed with a key kept in
 * a 0600 file (so cursors survive a restart), masking from the default rules
 * and the environment's secrets, and only owners reading their evidence.
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Cursor, Evidence, Secrets } from "@spillway/core"
import { Config, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as NodeSpillStore from "./NodeSpillStore.js"
import * as SqlBackend from "./SqlBackend.js"
import * as SqlManifestStore from "./SqlManifestStore.js"

/** Where evidence lives, and the profile's limits. */
export interface Options extends Evidence.Options {
  /** The spill directory; `SPILLWAY_OUTPUT_DIR` or `~/.spillway/tool-output` by default. */
  readonly directory?: string | undefined
  /**
   * Where manifests live: a `postgres://` URL, or a SQLite file; by default
   * `SPILLWAY_MANIFESTS_URL`, else `.evidence/manifests.sqlite` in the directory.
   */
  readonly manifests?: string | undefined
}

/**
 * A cursor key read from a file, made (32 random bytes, mode 0600) when
 * missing, so that cursors handed out before a restart still decode after it.
 */
export const layerKeyFile = (file: string): Layer.Layer<Cursor.CursorKey> =>
  Layer.unwrapEffect(Effect.sync(() => {
    Fs.mkdirSync(Path.dirname(file), { recursive: true, mode: 0o700 })
    try {
      Fs.writeFileSync(file, randomBytes(32), { flag: "wx", mode: 0o600 })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    return Cursor.layerKey(new Uint8Array(Fs.readFileSync(file)))
  }))

/**
 * The delivery budget from configuration, `tools.tool_output_max_chars`
 * (environment: `TOOLS_TOOL_OUTPUT_MAX_CHARS`), read once when the layer is
 * built; 12,000 characters when unset.
 */
export const budgetConfig: Config.Config<number> = Config.integer("tool_output_max_chars").pipe(
  Config.nested("tools"),
  Config.withDefault(12_000),
  Config.validate({ message: "must be at least 200 characters", validation: (n) => n >= 200 })
)

/** The evidence profile; manifests and the key go in a hidden `.evidence` folder of the spill directory. */
export const layer = (options: Options = {}) => {
  const directory = Path.resolve(options.directory ?? NodeSpillStore.defaultDirectoryFromEnv())
  const meta = Path.join(directory, ".evidence")
  const profile = options.budgetChars !== undefined
    ? Evidence.layer(options)
    : Layer.unwrapEffect(Effect.map(Effect.orDie(budgetConfig), (budgetChars) => Evidence.layer({ ...options, budgetChars })))
  return profile.pipe(
    Layer.provide(NodeSpillStore.layer({ directory })),
    Layer.provide(NodeFileSystem.layer),
    Layer.provide(SqlManifestStore.layerFor(options.manifests ?? SqlBackend.urlFromEnv() ?? Path.join(meta, "manifests.sqlite"))),
    Layer.provide(layerKeyFile(Path.join(meta, "cursor.key"))),
    Layer.provide(Secrets.layerFromEnv),
    Layer.provide(Evidence.ownerOnly)
  )
}
