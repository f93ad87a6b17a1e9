/**
 * The disk side of `spillway init`: reading a configuration file, writing it
 * atomically with its mode kept, the one backup taken before the first
 * change, and the record of what was added (`~/.spillway/init.json`), read
 * back through a Schema.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** The suffix of the copy of a file as it was before Spillway first changed it. */
export const backupSuffix = ".spillway-backup"

/** A configuration file larger than this is refused: no agent's settings come near it. */
export const maxBytes = 16 * 1024 * 1024

/** The file's text, or undefined when it does not exist. Throws for anything else (a folder, no permission, too large). */
export const read = (file: string): string | undefined => {
  let stat: Fs.Stats
  try {
    stat = Fs.statSync(file)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw e
  }
  if (!stat.isFile()) throw new Error("it is not a regular file")
  if (stat.size > maxBytes) throw new Error(`it is larger than ${maxBytes} bytes`)
  return Fs.readFileSync(file, "utf8")
}

/** The SHA-256 of a text, as hex: how the record knows a file is still as Spillway left it. */
export const digest = (content: string): string => Crypto.createHash("sha256").update(content, "utf8").digest("hex")

/**
 * Creates the missing folders of `dir` and returns those it created, outermost
 * first, so that undoing can remove them again.
 */
export const makeFolders = (dir: string): ReadonlyArray<string> => {
  const missing: Array<string> = []
  for (let here = Path.resolve(dir); !Fs.existsSync(here); here = Path.dirname(here)) missing.unshift(here)
  for (const folder of missing) Fs.mkdirSync(folder)
  return missing
}

/**
 * Writes `content` to `file` through a temporary file beside it and a rename,
 * so a reader never sees half a file; the file keeps its mode (`mode` for a
 * new one).
 */
export const writeAtomic = (file: string, content: string, mode = 0o644): void => {
  let keep = mode
  try {
    keep = Fs.statSync(file).mode & 0o7777
  } catch {
    // a new file
  }
  const temp = Path.join(Path.dirname(file), `.${Path.basename(file)}.spillway-${process.pid}-${Date.now()}.tmp`)
  try {
    Fs.writeFileSync(temp, content, { mode: keep, flag: "wx" })
    Fs.chmodSync(temp, keep)
    Fs.renameSync(temp, file)
  } catch (e) {
    Fs.rmSync(temp, { force: true })
    throw e
  }
}

/** Copies `file` to its backup beside it, keeping its mode, unless a backup is already there. Returns the backup's path. */
export const backupOnce = (file: string): string => {
  const backup = file + backupSuffix
  if (!Fs.existsSync(backup)) {
    Fs.copyFileSync(file, backup, Fs.constants.COPYFILE_EXCL)
    Fs.chmodSync(backup, Fs.statSync(file).mode & 0o7777)
  }
  return backup
}

/** What the record keeps of one file Spillway changed. */
export const FileEntry = Schema.Struct({
  agent: Schema.String,
  /** Whether the file was there before Spillway first changed it. */
  existed: Schema.Boolean,
  /** The copy of the file from before that first change, when there was a file. */
  backup: Schema.optional(Schema.String),
  /** The SHA-256 of the file as Spillway last wrote it. */
  digest: Schema.String
})

/** The record of what `spillway init` added: per file, and the folders it created. */
export const Record = Schema.Struct({
  version: Schema.Literal(1),
  files: Schema.Record({ key: Schema.String, value: FileEntry }),
  folders: Schema.Array(Schema.String)
})

/** The record's type. */
export type Record = typeof Record.Type

/** Where the record is kept. */
export const recordFile = (home: string): string => Path.join(home, ".spillway", "init.json")

/** An empty record. */
export const emptyRecord: Record = { version: 1, files: {}, folders: [] }

/** The record, or why it cannot be read (a missing record is an empty one). */
export const readRecord = (home: string): Either.Either<Record, string> => {
  const file = recordFile(home)
  let content: string | undefined
  try {
    content = read(file)
  } catch (e) {
    return Either.left(`cannot read ${file}: ${(e as Error).message}`)
  }
  if (content === undefined) return Either.right(emptyRecord)
  return Schema.decodeUnknownEither(Schema.parseJson(Record))(content).pipe(
    Either.mapLeft((e) => `${file} is not a record spillway init wrote (${e.message.split("\n")[0]}); move it away and run the command again`)
  )
}

/** Saves the record, or removes its file when it holds nothing. */
export const writeRecord = (home: string, record: Record): void => {
  const file = recordFile(home)
  if (Object.keys(record.files).length === 0 && record.folders.length === 0) {
    Fs.rmSync(file, { force: true })
    return
  }
  makeFolders(Path.dirname(file))
  writeAtomic(file, JSON.stringify(Schema.encodeSync(Record)(record), null, 2) + "\n")
}

/** Removes the folders (innermost first) that are empty; returns those it removed. */
export const removeEmptyFolders = (folders: ReadonlyArray<string>): ReadonlyArray<string> => {
  const removed: Array<string> = []
  for (const folder of [...folders].sort((a, b) => b.length - a.length)) {
    try {
      if (Fs.readdirSync(folder).length === 0) {
        Fs.rmdirSync(folder)
        removed.push(folder)
      }
    } catch {
      // already gone, or not a folder any more
    }
  }
  return removed
}
