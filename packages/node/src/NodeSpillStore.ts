/**
 * The spill directory on the real file system. New files are written through
 * `@effect/platform`'s `FileSystem` to an exclusive temp file and published
 * with a hard link (which never replaces an existing file). Saved files are
 * opened with `O_NOFOLLOW | O_NONBLOCK` and checked on the open descriptor:
 * a regular file with one link, owned by this user.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import { LineIndex, SpillStore } from "@spillway/core"
import { Config, Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { directoryFrom, indexName, isSymlinkError, OPEN_FLAGS, refusal } from "./internal/fileChecks.js"

/** The directory used when neither an option nor `SPILLWAY_OUTPUT_DIR` names one. */
export const defaultDirectory = (): string => directoryFrom({})

/** The spill directory from the process environment's `SPILLWAY_OUTPUT_DIR`, or the default. */
export const defaultDirectoryFromEnv = (): string => directoryFrom(process.env)

/** The spill directory from `SPILLWAY_OUTPUT_DIR`, or `~/.spillway/tool-output`. */
export const directoryConfig: Config.Config<string> = Config.string("SPILLWAY_OUTPUT_DIR").pipe(
  Config.option,
  Config.map(Option.getOrElse(defaultDirectory))
)

const reasonOf = (e: PlatformError | NodeJS.ErrnoException | unknown): string => {
  if (typeof e === "object" && e !== null) {
    const err = e as { _tag?: string; reason?: string; description?: string; message?: string; code?: string }
    if (err._tag === "SystemError") return `${err.reason ?? "error"}: ${err.description ?? err.message ?? ""}`.trim()
    if (err.code) return `${err.code}: ${err.message ?? ""}`
    if (err.message) return err.message
  }
  return String(e)
}

const ioError = (operation: string, filename: string | undefined) => (e: unknown) =>
  new SpillStore.SpillIoError({ operation, reason: reasonOf(e), ...(filename !== undefined ? { filename } : {}) })

/** Opens a file in the directory without following links or blocking, and checks what it is. */
const openChecked = (directory: string, filename: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        Fs.promises.open(Path.join(directory, filename), OPEN_FLAGS),
      catch: (e) => {
        const code = (e as NodeJS.ErrnoException).code
        if (code === "ENOENT" || code === "ENOTDIR") return new SpillStore.SpillNotFound({ filename })
        if (isSymlinkError(code)) {
          return new SpillStore.SpillFileRefused({ filename, reason: "it is a symbolic link" })
        }
        return ioError("open", filename)(e)
      }
    }),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  ).pipe(
    Effect.tap((handle) =>
      Effect.tryPromise({ try: () => handle.stat(), catch: ioError("stat", filename) }).pipe(
        Effect.flatMap((st) => {
          const reason = refusal(st)
          if (reason !== undefined) return Effect.fail(new SpillStore.SpillFileRefused({ filename, reason }))
          return Effect.succeed(st.size)
        })
      )
    )
  )

const readAt = (handle: Fs.promises.FileHandle, filename: string, size: number) =>
(position: number, length: number, into?: Uint8Array): Effect.Effect<Uint8Array, SpillStore.SpillIoError> =>
  Effect.tryPromise({
    try: async () => {
      const want = Math.max(0, Math.min(length, size - position, into ? into.length : Infinity))
      const buffer = into ? Buffer.from(into.buffer, into.byteOffset, want) : Buffer.allocUnsafe(want)
      let got = 0
      while (got < want) {
        const { bytesRead } = await handle.read(buffer, got, want - got, position + got)
        if (bytesRead === 0) break
        got += bytesRead
      }
      return got === want ? buffer : buffer.subarray(0, got)
    },
    catch: ioError("read", filename)
  })

/** A spill store over a directory. */
export const make = (directory: string): Effect.Effect<SpillStore.Service, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    let prepared = false
    const prepare = Effect.suspend(() =>
      prepared ? Effect.void : fs.makeDirectory(directory, { recursive: true, mode: 0o700 }).pipe(
        Effect.zipRight(fs.chmod(directory, 0o700)),
        Effect.tap(() => Effect.sync(() => (prepared = true)))
      )
    )

    const create = (filename: string) =>
      Effect.gen(function*() {
        const tag = `${process.pid}-${Math.random().toString(16).slice(2, 10)}`
        const tmp = Path.join(directory, `.tmp-${tag}-${filename}`)
        const tmpIndex = Path.join(directory, `.tmp-${tag}-${indexName(filename)}`)
        let committed = false
        yield* prepare.pipe(Effect.mapError(ioError("create directory", undefined)))
        yield* Effect.addFinalizer(() =>
          Effect.all([fs.remove(tmp), fs.remove(tmpIndex)], { mode: "either", discard: true }).pipe(
            Effect.when(() => !committed),
            Effect.ignore
          )
        )
        const file = yield* fs.open(tmp, { flag: "wx", mode: 0o600 }).pipe(Effect.mapError(ioError("create", filename)))
        return {
          filename,
          write: (bytes: Uint8Array) => file.writeAll(bytes).pipe(Effect.mapError(ioError("write", filename))),
          commit: (index: LineIndex.LineIndex) =>
            Effect.gen(function*() {
              yield* fs.writeFile(tmpIndex, LineIndex.encode(index), { flag: "wx", mode: 0o600 })
              yield* fs.link(tmpIndex, Path.join(directory, indexName(filename)))
              yield* fs.link(tmp, Path.join(directory, filename))
              committed = true
              yield* Effect.all([fs.remove(tmp), fs.remove(tmpIndex)], { discard: true })
            }).pipe(Effect.mapError(ioError("save", filename)))
        } satisfies SpillStore.SpillSink
      })

    const open = (filename: string) =>
      Effect.gen(function*() {
        const refused = SpillStore.checkFilename(filename)
        if (refused !== undefined) return yield* new SpillStore.SpillNameRefused({ filename, reason: refused })
        const handle = yield* openChecked(directory, filename)
        const { size } = yield* Effect.tryPromise({ try: () => handle.stat(), catch: ioError("stat", filename) })
        const index = Effect.scoped(
          Effect.gen(function*() {
            const name = indexName(filename)
            const h = yield* openChecked(directory, name)
            const st = yield* Effect.tryPromise({ try: () => h.stat(), catch: ioError("stat", name) })
            const decoded = LineIndex.decode(yield* readAt(h, name, st.size)(0, st.size))
            return decoded && decoded.bytes === size ? decoded : undefined
          })
        ).pipe(Effect.orElseSucceed(() => undefined))
        return { filename, size, read: readAt(handle, filename, size), index } satisfies SpillStore.SpillFile
      })

    const remove = (filename: string) =>
      Effect.gen(function*() {
        const refused = SpillStore.checkFilename(filename)
        if (refused !== undefined) return yield* new SpillStore.SpillNameRefused({ filename, reason: refused })
        for (const name of [filename, indexName(filename)]) {
          yield* Effect.tryPromise({
            try: () => Fs.promises.rm(Path.join(directory, name), { force: true }),
            catch: ioError("remove", filename)
          })
        }
      })

    return SpillStore.SpillStore.of({ directory, create, open, remove })
  })

/** The spill store as a layer; the directory comes from the option, `SPILLWAY_OUTPUT_DIR`, or the default. */
export const layer = (
  options: { readonly directory?: string | undefined } = {}
): Layer.Layer<SpillStore.SpillStore, never, FileSystem.FileSystem> =>
  Layer.effect(
    SpillStore.SpillStore,
    Effect.gen(function*() {
      const directory = options.directory ?? (yield* directoryConfig.pipe(Effect.orElseSucceed(defaultDirectory)))
      return yield* make(Path.resolve(directory))
    })
  )
