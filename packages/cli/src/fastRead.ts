/**
 * `spillway read NAME [--offset N] [--limit M | --all]` without loading the rest of
 * the command: a small program for the common case that hands over to the
 * full command for anything else (other flags, a refused name or file, a
 * body that is not the caller's or has expired, manifests kept elsewhere
 * than the directory's SQLite file, an offset past the end), so errors are
 * reported in one place. It finds the body's manifest with the store's own
 * statement and asks the access check's own rules (`Permission`: the owner,
 * the channel, expiry) before it reads a byte. The bin skips
 * it when `SPILLWAY_QUICK=0`.
 *
 * @since 0.1.0
 */
import type * as LineIndex from "@spillway/core/LineIndex"
import { checkFilename } from "@spillway/core/SpillName"
import * as Permission from "@spillway/core/Permission"
import { directoryFrom, OPEN_FLAGS, refusal } from "@spillway/node/FileChecks"
import * as ManifestRows from "@spillway/node/ManifestRows"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { READ_LIMIT, readHint } from "./Hints.js"

/** `read NAME [--offset N] [--limit N | --all]`, each flag once; undefined for anything else. */
const parseArgs = (args: ReadonlyArray<string>) => {
  if (args[0] !== "read" || args.length < 2) return undefined
  let name: string | undefined
  const numbers: Record<string, number> = {}
  let all = false
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!
    const flag = /^--(offset|limit)(?:=(.*))?$/.exec(a)
    if (flag) {
      const raw = flag[2] ?? args[++i]
      if (raw === undefined || !/^\d{1,15}$/.test(raw) || flag[1]! in numbers) return undefined
      numbers[flag[1]!] = Number(raw)
    } else if (a === "--all" && !all) all = true
    else if (!a.startsWith("-") && name === undefined) name = a
    else return undefined
  }
  // --all with a --limit other than 0 is a usage error the full command words
  if (name === undefined || (all && numbers.limit !== undefined && numbers.limit !== 0)) return undefined
  return { name, offset: numbers.offset ?? 0, limit: all ? 0 : numbers.limit ?? READ_LIMIT }
}

/** Reads into `buffer` from `position` until it is full or the file ends; returns the bytes read. */
export const readFully = (fd: number, buffer: Buffer, position: number): number => {
  let got = 0
  while (got < buffer.length) {
    const n = Fs.readSync(fd, buffer, got, buffer.length - got, position + got)
    if (n === 0) break
    got += n
  }
  return got
}

/** Opens a file the way the store does; undefined when the full command should report why not. */
export const openChecked = (directory: string, name: string): { fd: number; size: number } | undefined => {
  let fd: number
  try {
    fd = Fs.openSync(Path.join(directory, name), OPEN_FLAGS)
  } catch {
    return undefined
  }
  const st = Fs.fstatSync(fd)
  if (refusal(st) !== undefined) {
    Fs.closeSync(fd)
    return undefined
  }
  return { fd, size: st.size }
}

/** Byte offset where line `n` starts, found from the nearest checkpoint. */
export const locate = (fd: number, size: number, index: LineIndex.LineIndex, n: number): number => {
  if (n <= 1) return 0
  if (n > index.lines) return size
  const k = Math.min(Math.floor((n - 1) / index.every), index.checkpoints.length - 1)
  let pos = index.checkpoints[k]!
  let line = k * index.every + 1
  const chunk = Buffer.allocUnsafe(1 << 16)
  while (line < n && pos < size) {
    const got = readFully(fd, chunk.subarray(0, Math.min(chunk.length, size - pos)), pos)
    let at = chunk.indexOf(10)
    while (at !== -1 && at < got) {
      line++
      if (line === n) return pos + at + 1
      at = chunk.indexOf(10, at + 1)
    }
    pos += got
  }
  return pos
}

let wrote = false
/** Writes all of `data` to `fd`, waiting out a non-blocking pipe's EAGAIN. */
export const write = (fd: number, data: Uint8Array | string) => {
  wrote = true
  const bytes = typeof data === "string" ? Buffer.from(data) : data
  let done = 0
  while (done < bytes.length) {
    try {
      done += Fs.writeSync(fd, bytes, done, bytes.length - done)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e
    }
  }
}

/** Serves the read if it is the common case; returns false to hand over to the full command. */
export const tryFastRead = (args: ReadonlyArray<string>, env: Record<string, string | undefined>): boolean => {
  try {
    return serve(args, env)
  } catch (e) {
    if (!wrote) return false
    write(2, `spillway: read failed: ${(e as Error).message}\n`)
    process.exitCode = 2
    return true
  }
}

interface Statement {
  readonly get: (...params: ReadonlyArray<unknown>) => unknown
}
interface Database {
  readonly prepare: (sql: string) => Statement
  readonly close: () => void
}

interface Driver {
  readonly Sqlite: new(file: string, options: object) => Database
  readonly addon: unknown
}

/**
 * The SQLite driver where this program runs as the bundled command
 * (undefined elsewhere: the full command reads). Its JavaScript is bundled
 * into this program (the command pins the driver's version), and its native
 * addon is loaded from the installed package's build and handed to it:
 * finding and loading the driver's own modules, and its search for the
 * addon, cost more than the query. Undefined when the addon is not where
 * the driver builds it, so the full command reads.
 */
const driver = (): Driver | undefined => {
  if (typeof require !== "function") return undefined
  let addon: unknown
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a native addon has no import form here
    addon = require(Path.join(Path.dirname(require.resolve("better-sqlite3/package.json")), "build", "Release", "better_sqlite3.node"))
  } catch {
    return undefined
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a literal require, so the bundler inlines the driver
  return { Sqlite: require("better-sqlite3") as Driver["Sqlite"], addon }
}

/**
 * The line index of a complete body the caller may read now, from the
 * directory's manifests; undefined whenever the full command should decide.
 * The row is found with the store's own statement and read with its own
 * reader (`ManifestRows`), and the caller is checked with the access
 * check's own rules (`Permission`): the caller the command acts for (see
 * `Program.cliCaller`), its owner, its channel when pinned, and expiry.
 * Only the host's authorizer is left out: the command has none of its own.
 */
export const allowedIndex = (directory: string, name: string, size: number, env: Record<string, string | undefined>): LineIndex.LineIndex | undefined => {
  if (env.SPILLWAY_MANIFESTS_URL !== undefined && env.SPILLWAY_MANIFESTS_URL !== "") return undefined
  const file = Path.join(directory, ".manifests.sqlite")
  if (!Fs.existsSync(file)) return undefined
  const sqlite = driver()
  if (sqlite === undefined) return undefined
  const db = new sqlite.Sqlite(file, { readonly: true, fileMustExist: true, nativeBinding: sqlite.addon })
  let row: Record<string, unknown> | undefined
  try {
    row = db.prepare(ManifestRows.SELECT_BY_ID).get(name) as typeof row
  } finally {
    db.close()
  }
  const facts = ManifestRows.readFacts(row)
  if (facts === undefined || !facts.complete || facts.bytes !== size) return undefined
  const owner = env.SPILLWAY_OWNER !== undefined && env.SPILLWAY_OWNER !== "" ? env.SPILLWAY_OWNER : Os.userInfo().username
  const channel = env.SPILLWAY_CHANNEL !== undefined && env.SPILLWAY_CHANNEL !== "" ? env.SPILLWAY_CHANNEL : undefined
  const caller: Permission.Caller = channel !== undefined ? { owner, channel } : { owner, channel: "cli", readsEveryChannel: true }
  if (!Permission.mayAct(caller, facts.resource, "read") || Permission.expired(facts.resource, Date.now())) return undefined
  return facts.lineIndex
}

const serve = (args: ReadonlyArray<string>, env: Record<string, string | undefined>): boolean => {
  const parsed = parseArgs(args)
  if (parsed === undefined || checkFilename(parsed.name) !== undefined) return false
  const directory = Path.resolve(directoryFrom(env))
  const body = openChecked(directory, parsed.name)
  if (body === undefined) return false
  try {
    const index = allowedIndex(directory, parsed.name, body.size, env)
    if (index === undefined) return false
    const first = Math.max(1, parsed.offset)
    if (first > Math.max(index.lines, 1)) return false
    const end = parsed.limit === 0 ? index.lines + 1 : Math.min(first + parsed.limit, index.lines + 1)
    const start = locate(body.fd, body.size, index, first)
    const stop = locate(body.fd, body.size, index, end)
    const chunk = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, stop - start)))
    for (let at = start; at < stop;) {
      const got = readFully(body.fd, chunk.subarray(0, Math.min(chunk.length, stop - at)), at)
      if (got === 0) break
      write(1, chunk.subarray(0, got))
      at += got
    }
    write(2, readHint(parsed.name, {
      offset: first,
      lines: end - first,
      totalLines: index.lines,
      ...(end <= index.lines ? { nextOffset: end } : {})
    }, parsed.limit))
    return true
  } finally {
    Fs.closeSync(body.fd)
  }
}
