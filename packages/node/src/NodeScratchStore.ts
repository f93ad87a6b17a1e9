/**
 * The scratch store on the real file system: one root for the device
 * (`SPILLWAY_SCRATCH_DIR`, or `~/.spillway/scratch`), directories 0700,
 * files 0600, created with `O_EXCL` and opened with `O_NOFOLLOW` after every
 * directory on the way has been checked not to be a symbolic link. Usage is
 * counted from what the root holds when the layer is built.
 *
 * @since 0.1.0
 */
import { ScratchStore } from "@spillway/core"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** Where the scratch root is, and its quotas. */
export interface Options {
  readonly directory?: string | undefined
  readonly quotas?: Partial<ScratchStore.Quotas> | undefined
}

/** The scratch root from the environment: `SPILLWAY_SCRATCH_DIR`, or `~/.spillway/scratch`. */
export const defaultDirectoryFromEnv = (): string =>
  process.env.SPILLWAY_SCRATCH_DIR ?? Path.join(Os.homedir(), ".spillway", "scratch")

const fail = (reason: ScratchStore.ScratchError["reason"], path: string, detail: string) =>
  new ScratchStore.ScratchError({ reason, path, detail })

const errnoText = (e: unknown) => (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))

/** Sizes and count of the files under a directory. */
const scan = (root: string): { bytes: number; entries: number } => {
  let bytes = 0
  let entries = 0
  const walk = (dir: string) => {
    let items: Array<Fs.Dirent>
    try {
      items = Fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const item of items) {
      const full = Path.join(dir, item.name)
      if (item.isDirectory()) walk(full)
      else if (item.isFile()) {
        entries++
        bytes += Fs.lstatSync(full).size
      }
    }
  }
  walk(root)
  return { bytes, entries }
}

/** The store over a root directory. */
export const make = (options: Options = {}): Effect.Effect<ScratchStore.Service> =>
  Effect.sync(() => {
    const root = Path.resolve(options.directory ?? defaultDirectoryFromEnv())
    const quotas = { ...ScratchStore.defaultQuotas, ...options.quotas }
    Fs.mkdirSync(root, { recursive: true, mode: 0o700 })
    const usage = scan(root)

    /** The absolute path of a scratch-relative one, with every directory on the way made (when asked) and checked. */
    const resolve = (path: string, makeDirs: boolean) => {
      const problem = ScratchStore.pathProblem(path)
      if (problem !== undefined) throw fail("path", path, problem)
      const parts = path.split("/")
      let dir = root
      for (const part of parts.slice(0, -1)) {
        dir = Path.join(dir, part)
        let stat: Fs.Stats | undefined
        try {
          stat = Fs.lstatSync(dir)
        } catch {
          stat = undefined
        }
        if (stat === undefined) {
          if (!makeDirs) throw fail("io", path, "no such file")
          Fs.mkdirSync(dir, { mode: 0o700 })
        } else if (stat.isSymbolicLink() || !stat.isDirectory()) {
          throw fail("path", path, `${Path.relative(root, dir)} is a symbolic link or not a directory`)
        }
      }
      const full = Path.join(dir, parts[parts.length - 1]!)
      // belt and braces: the joined path must still be inside the root
      if (!full.startsWith(root + Path.sep)) throw fail("path", path, "the path leaves the scratch root")
      return full
    }

    const attempt = <A>(path: string, body: () => A): Effect.Effect<A, ScratchStore.ScratchError> =>
      Effect.try({
        try: body,
        catch: (e) => e instanceof ScratchStore.ScratchError ? e : fail("io", path, errnoText(e))
      })

    const create = (path: string) =>
      attempt(path, () => {
        if (usage.entries + 1 > quotas.maxEntries) {
          throw fail("quota", path, `the scratch store holds ${usage.entries} files, its limit`)
        }
        const full = resolve(path, true)
        let fd: number
        try {
          fd = Fs.openSync(full, Fs.constants.O_CREAT | Fs.constants.O_EXCL | Fs.constants.O_WRONLY | Fs.constants.O_NOFOLLOW, 0o600)
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "EEXIST") throw fail("exists", path, "a file is already there; it is never overwritten")
          throw e
        }
        Fs.closeSync(fd)
        usage.entries++
        let size = 0
        const file: ScratchStore.ScratchFile = {
          path,
          size: () => size,
          append: (bytes) =>
            attempt(path, () => {
              if (size + bytes.length > quotas.maxFileBytes) {
                throw fail("quota", path, `${size + bytes.length} bytes would pass the ${quotas.maxFileBytes}-byte limit per file`)
              }
              if (usage.bytes + bytes.length > quotas.maxTotalBytes) {
                throw fail("quota", path, `the scratch store's ${quotas.maxTotalBytes}-byte quota is used up`)
              }
              const fd = Fs.openSync(resolve(path, false), Fs.constants.O_WRONLY | Fs.constants.O_APPEND | Fs.constants.O_NOFOLLOW)
              try {
                const stat = Fs.fstatSync(fd)
                if (!stat.isFile() || stat.size !== size) throw fail("io", path, "the file was changed by someone else")
                let at = 0
                while (at < bytes.length) at += Fs.writeSync(fd, bytes, at, bytes.length - at)
              } finally {
                Fs.closeSync(fd)
              }
              size += bytes.length
              usage.bytes += bytes.length
            })
        }
        return file
      })

    const read = (path: string) =>
      attempt(path, () => {
        const fd = Fs.openSync(resolve(path, false), Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW)
        try {
          if (!Fs.fstatSync(fd).isFile()) throw fail("path", path, "not a regular file")
          return new Uint8Array(Fs.readFileSync(fd))
        } finally {
          Fs.closeSync(fd)
        }
      })

    return { create, read, usage: Effect.sync(() => ({ ...usage })) }
  })

/** The scratch store as a layer. */
export const layer = (options: Options = {}): Layer.Layer<ScratchStore.ScratchStore> =>
  Layer.effect(ScratchStore.ScratchStore, make(options))
