/**
 * The bytes of bodies on the real file system, under one directory (mode
 * 0700; files 0600). A body published at commit is written to an exclusive
 * hidden temporary file and published with a hard link, which never
 * replaces an existing file; a body visible while it grows is created under
 * its own name exclusively. Bodies are opened with `O_NOFOLLOW | O_NONBLOCK`
 * and checked on the open descriptor (a regular file with one link, owned by
 * this user), and every folder on the way to a nested name (a scratch
 * capture's) is checked not to be a symbolic link. Temporary files left by
 * writers that are gone (a crash mid-write) are removed by `sweepDebris`.
 *
 * @since 0.1.0
 */
import { BodyFiles, Errors } from "@spillway/core"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { directoryFrom, isSymlinkError, OPEN_FLAGS, reasonOf, refusal } from "./FileChecks.js"

/** The directory used when neither an option nor `SPILLWAY_OUTPUT_DIR` names one: `~/.spillway/tool-output`. */
export const defaultDirectoryFromEnv = (): string => directoryFrom(process.env)

const TEMP = /^\.tmp-(\d+)-[0-9a-f]+-/

const failed = (operation: string, name: string) => (e: unknown) =>
  e instanceof Errors.StoreFailed ? e : new Errors.StoreFailed({ operation: `${operation} ${name}`, reason: reasonOf(e) })

const alive = (pid: number): boolean => {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const check = (name: string) => {
  const problem = BodyFiles.nameProblem(name)
  return problem === undefined ? Effect.void : Effect.fail(BodyFiles.refuseName(name, problem))
}

/** The folder a name lives in under `root`, made when asked, with every folder on the way checked not to be a link. */
const folderOf = (root: string, name: string, makeFolders: boolean): string | undefined => {
  const parts = name.split("/")
  let dir = root
  for (const part of parts.slice(0, -1)) {
    dir = Path.join(dir, part)
    let st: Fs.Stats | undefined
    try {
      st = Fs.lstatSync(dir)
    } catch {
      st = undefined
    }
    if (st === undefined) {
      if (!makeFolders) return undefined
      Fs.mkdirSync(dir, { mode: 0o700 })
    } else if (st.isSymbolicLink() || !st.isDirectory()) {
      throw new Errors.StoreFailed({ operation: `open ${name}`, reason: `${Path.relative(root, dir)} is a symbolic link or not a folder` })
    }
  }
  return dir
}

/** A callback of `node:fs` as an effect: its error fails it, as it is. */
const call = <A>(start: (done: (e: NodeJS.ErrnoException | null, value?: A) => void) => void): Effect.Effect<A, NodeJS.ErrnoException> =>
  Effect.async<A, NodeJS.ErrnoException>((resume) => {
    start((e, value) => resume(e !== null ? Effect.fail(e) : Effect.succeed(value as A)))
  })

/** Writes all of `bytes` at the file's end, on the thread pool, as many writes as that takes. */
const writeAll = (fd: number, bytes: Uint8Array): Effect.Effect<void, NodeJS.ErrnoException> =>
  Effect.async<void, NodeJS.ErrnoException>((resume) => {
    const from = (at: number) =>
      Fs.write(fd, bytes, at, bytes.length - at, null, (e, n) => {
        if (e !== null) return resume(Effect.fail(e))
        if (at + n < bytes.length) return from(at + n)
        resume(Effect.void)
      })
    from(0)
  })

/** A new body: an exclusive temporary file published by a hard link, or (visible) the body's own name from the start. */
const create = (root: string, prepare: () => void): BodyFiles.Service["create"] => (name, visibility) =>
  Effect.gen(function*() {
    yield* check(name)
    const folder = yield* Effect.try({
      try: () => {
        prepare()
        return folderOf(root, name, true)!
      },
      catch: failed("create", name)
    })
    const base = Path.basename(name)
    const final = Path.join(folder, base)
    const target = visibility === "while-writing"
      ? final
      : Path.join(folder, `.tmp-${process.pid}-${Math.floor(Math.random() * 0xffffffff).toString(16)}-${base}`)
    let committed = false
    // callbacks, not `fs/promises`: a promise and a FileHandle call per write cost a flood of output processor
    // time, and a long output's first write would load that module
    const fd = yield* Effect.acquireRelease(
      call<number>((done) => Fs.open(target, "wx", 0o600, done)).pipe(Effect.mapError(failed("create", name))),
      (fd) =>
        Effect.zipRight(
          Effect.ignore(call<void>((done) => Fs.close(fd, done))),
          !committed || visibility === "on-commit" ? Effect.ignore(call<void>((done) => Fs.rm(target, { force: true }, done))) : Effect.void
        )
    )
    return {
      name,
      write: (bytes) => writeAll(fd, bytes).pipe(Effect.mapError(failed("write", name))),
      commit: Effect.gen(function*() {
        if (visibility === "on-commit") {
          const linked = yield* Effect.either(call<void>((done) => Fs.link(target, final, done)))
          if (linked._tag === "Left") {
            if ((linked.left as NodeJS.ErrnoException).code === "EEXIST") {
              return yield* new Errors.StoreFailed({ operation: `save ${name}`, reason: "a body with that name exists; bodies are never replaced" })
            }
            return yield* Effect.fail(linked.left)
          }
          // one link only: a published body is refused while its temporary name still points at it
          yield* call<void>((done) => Fs.rm(target, { force: true }, done))
        }
        committed = true
      }).pipe(Effect.mapError(failed("save", name)))
    } satisfies BodyFiles.Sink
  })

/**
 * Reads of at most this many bytes are made at once on the calling thread:
 * a view's page or newest lines, from a file the page cache nearly always
 * holds, take less time than handing the read to the thread pool and back.
 * Longer reads go to the pool, so they never hold up the event loop.
 */
const SYNC_READ_BYTES = 64 * 1024

/** Reads up to `length` bytes at `position` of an open file, into `into` when given. */
const readAt = (fd: number, name: string) =>
(position: number, length: number, into?: Uint8Array): Effect.Effect<Uint8Array, Errors.StoreFailed> => {
  const want = Math.max(0, into !== undefined ? Math.min(length, into.length) : length)
  const buffer = () => into !== undefined ? Buffer.from(into.buffer, into.byteOffset, want) : Buffer.allocUnsafe(want)
  const filled = (b: Buffer, got: number) => got === want ? b : b.subarray(0, got)
  if (want <= SYNC_READ_BYTES) {
    return Effect.try({
      try: () => {
        const b = buffer()
        let got = 0
        while (got < want) {
          const n = Fs.readSync(fd, b, got, want - got, position + got)
          if (n === 0) break
          got += n
        }
        return filled(b, got)
      },
      catch: failed("read", name)
    })
  }
  return Effect.gen(function*() {
    const b = buffer()
    let got = 0
    while (got < want) {
      const n = yield* call<number>((done) => Fs.read(fd, b, got, want - got, position + got, done))
      if (n === 0) break
      got += n
    }
    return filled(b, got)
  }).pipe(Effect.mapError(failed("read", name)))
}

/** Opens a body without following links or blocking, and checks what the open descriptor is. */
const open = (root: string): BodyFiles.Service["open"] => (name) =>
  Effect.gen(function*() {
    yield* check(name)
    const folder = yield* Effect.try({ try: () => folderOf(root, name, false), catch: failed("open", name) })
    if (folder === undefined) return yield* new Errors.NotFound({ resource: "output", id: name })
    // opening and checking a local file takes microseconds: done here, not on the thread pool
    const fd = yield* Effect.acquireRelease(
      Effect.try({
        try: () => Fs.openSync(Path.join(folder, Path.basename(name)), OPEN_FLAGS),
        catch: (e) => {
          const code = (e as NodeJS.ErrnoException).code
          if (code === "ENOENT" || code === "ENOTDIR") return new Errors.NotFound({ resource: "output", id: name })
          if (isSymlinkError(code)) {
            return new Errors.StoreFailed({ operation: `open ${name}`, reason: "it is a symbolic link; only regular files written by Spillway are read" })
          }
          return failed("open", name)(e)
        }
      }),
      (fd) => Effect.ignore(Effect.try(() => Fs.closeSync(fd)))
    )
    const st = yield* Effect.try({ try: () => Fs.fstatSync(fd), catch: failed("stat", name) })
    const refused = refusal(st)
    if (refused !== undefined) {
      return yield* new Errors.StoreFailed({ operation: `open ${name}`, reason: `${refused}; only regular files written by Spillway are read` })
    }
    return { name, size: st.size, read: readAt(fd, name) } satisfies BodyFiles.File
  })

/** Hidden temporary files whose writer's process is gone, in the directory and the folders under it; bytes freed. */
const sweepDebris = (root: string) =>
  Effect.try({
    try: () => {
      let freed = 0
      const walk = (dir: string, depth: number) => {
        let entries: Array<Fs.Dirent>
        try {
          entries = Fs.readdirSync(dir, { withFileTypes: true })
        } catch {
          return
        }
        for (const entry of entries) {
          const full = Path.join(dir, entry.name)
          if (entry.isDirectory() && !entry.name.startsWith(".") && depth < 8) walk(full, depth + 1)
          const temp = TEMP.exec(entry.name)
          if (temp === null || !entry.isFile() || alive(Number(temp[1]))) continue
          try {
            freed += Fs.lstatSync(full).size
            Fs.rmSync(full, { force: true })
          } catch {
            // gone already
          }
        }
      }
      walk(root, 0)
      return freed
    },
    catch: failed("sweep", root)
  })

/** The bytes store over a directory (made, mode 0700, at the first write). */
export const make = (directory: string): BodyFiles.Service => {
  const root = Path.resolve(directory)
  let prepared = false
  const prepare = () => {
    if (prepared) return
    Fs.mkdirSync(root, { recursive: true, mode: 0o700 })
    Fs.chmodSync(root, 0o700)
    prepared = true
  }
  const remove: BodyFiles.Service["remove"] = (name) =>
    Effect.gen(function*() {
      yield* check(name)
      const folder = yield* Effect.try({ try: () => folderOf(root, name, false), catch: failed("remove", name) })
      if (folder === undefined) return
      yield* call<void>((done) => Fs.rm(Path.join(folder, Path.basename(name)), { force: true }, done)).pipe(Effect.mapError(failed("remove", name)))
    })
  return { location: root, create: create(root, prepare), open: open(root), remove, sweepDebris: sweepDebris(root) }
}

/** The bytes store as a layer, over a directory (`SPILLWAY_OUTPUT_DIR` or `~/.spillway/tool-output` by default). */
export const layer = (options: { readonly directory?: string | undefined } = {}): Layer.Layer<BodyFiles.BodyFiles> =>
  Layer.sync(BodyFiles.BodyFiles, () => make(options.directory ?? defaultDirectoryFromEnv()))
