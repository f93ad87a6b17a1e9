/**
 * Applies agents' targets to the disk: `install` merges Spillway's entries
 * into each file (a backup first, an atomic write, the record updated),
 * `uninstall` takes them out again (the original bytes back when the file is
 * as Spillway left it, else only Spillway's entries removed). Each file
 * gives one line of the report; a file that cannot be read or edited safely
 * is refused and left untouched while the others proceed.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { Target } from "./Agent.js"
import * as Files from "./Files.js"

/** What happened to one file (or, for `skipped`, to an agent). */
export type Status =
  | "created"
  | "changed"
  | "unchanged"
  | "removed"
  | "restored"
  | "refused"
  | "skipped"
  | "would create"
  | "would change"
  | "would remove"
  | "would restore"

/** One line of the report. */
export interface Line {
  readonly agent: string
  readonly status: Status
  readonly file?: string
  readonly detail: string
}

/** What a run decided and the record as it now stands. */
export interface Outcome {
  readonly lines: ReadonlyArray<Line>
  readonly record: Files.Record
}

interface Options {
  readonly dryRun: boolean
  /** Saves the record after each file, so an interrupted run still knows what it changed. */
  readonly save: (record: Files.Record) => void
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e))

const installOne = (target: Target, record: Files.Record, options: Options): { line: Line; record: Files.Record } => {
  const { agent, file } = target
  const line = (status: Status, detail: string): Line => ({ agent, status, file, detail })
  let current: string | undefined
  try {
    current = Files.read(file)
  } catch (e) {
    return { line: line("refused", `cannot read it: ${message(e)}; left untouched`), record }
  }
  const owned = Object.hasOwn(record.files, file)
  const edit = target.add(current, owned)
  if (edit._tag === "Refused") return { line: line("refused", `${edit.reason}; left untouched`), record }
  if (edit.text === current) return { line: line("unchanged", target.what), record }
  if (options.dryRun) return { line: line(current === undefined ? "would create" : "would change", `add ${target.what}`), record }
  try {
    const folders = Files.makeFolders(Path.dirname(file))
    const backup = current === undefined ? undefined : Files.backupOnce(file)
    Files.writeAtomic(file, edit.text)
    const earlier = record.files[file]
    const entry = {
      agent,
      existed: earlier?.existed ?? current !== undefined,
      ...(earlier?.backup ?? backup) !== undefined ? { backup: (earlier?.backup ?? backup)! } : {},
      digest: Files.digest(edit.text)
    }
    const next: Files.Record = {
      ...record,
      files: { ...record.files, [file]: entry },
      folders: [...record.folders, ...folders.filter((f) => !record.folders.includes(f))]
    }
    options.save(next)
    const kept = backup !== undefined ? ` (the original is kept in ${Path.basename(backup)})` : ""
    return { line: line(current === undefined ? "created" : "changed", `added ${target.what}${kept}`), record: next }
  } catch (e) {
    return { line: line("refused", `cannot write it: ${message(e)}`), record }
  }
}

/** Applies `one` to each target in turn, each seeing the record the one before left. */
const eachTarget = (
  targets: ReadonlyArray<Target>,
  record: Files.Record,
  options: Options,
  one: (target: Target, record: Files.Record, options: Options) => { readonly line: Line; readonly record: Files.Record }
): Outcome => {
  const lines: Array<Line> = []
  let now = record
  for (const target of targets) {
    const done = one(target, now, options)
    lines.push(done.line)
    now = done.record
  }
  return { lines, record: now }
}

/** Merges each target's entries into its file. */
export const install = (targets: ReadonlyArray<Target>, record: Files.Record, options: Options): Outcome =>
  eachTarget(targets, record, options, installOne)

const forget = (record: Files.Record, file: string): Files.Record => {
  const { [file]: _gone, ...files } = record.files
  return { ...record, files }
}

const uninstallOne = (target: Target, record: Files.Record, options: Options): { line: Line; record: Files.Record } => {
  const { agent, file } = target
  const line = (status: Status, detail: string): Line => ({ agent, status, file, detail })
  const entry = record.files[file]
  let current: string | undefined
  try {
    current = Files.read(file)
  } catch (e) {
    return { line: line("refused", `cannot read it: ${message(e)}; left untouched`), record }
  }
  if (current === undefined) {
    if (entry !== undefined && !options.dryRun) options.save(forget(record, file))
    return { line: line("unchanged", "not there"), record: entry === undefined ? record : forget(record, file) }
  }
  // as Spillway left it: put the original bytes back (or remove the file Spillway created)
  if (entry !== undefined && Files.digest(current) === entry.digest) {
    const backup = entry.backup !== undefined ? readBackup(entry.backup) : undefined
    if (!entry.existed || backup !== undefined) {
      if (options.dryRun) return { line: line(entry.existed ? "would restore" : "would remove", "as it was before spillway init"), record }
      try {
        if (entry.existed) {
          Files.writeAtomic(file, backup!)
          Fs.rmSync(entry.backup!, { force: true })
        } else Fs.rmSync(file, { force: true })
      } catch (e) {
        return { line: line("refused", `cannot write it: ${message(e)}`), record }
      }
      const next = forget(record, file)
      options.save(next)
      return { line: line(entry.existed ? "restored" : "removed", "as it was before spillway init"), record: next }
    }
  }
  // edited since (or no record of it): take out only Spillway's entries, keeping everything else
  const edit = target.remove(current)
  if (edit._tag === "Refused") return { line: line("refused", `${edit.reason}; left untouched`), record }
  const createdByUs = entry !== undefined && !entry.existed && target.empty(edit.text)
  if (edit.text === current && !createdByUs) {
    const next = entry === undefined ? record : forget(record, file)
    if (entry !== undefined && !options.dryRun) options.save(next)
    return { line: line("unchanged", "holds no Spillway entries"), record: next }
  }
  if (options.dryRun) return { line: line(createdByUs ? "would remove" : "would change", `remove ${target.what}`), record }
  try {
    if (createdByUs) Fs.rmSync(file, { force: true })
    else Files.writeAtomic(file, edit.text)
  } catch (e) {
    return { line: line("refused", `cannot write it: ${message(e)}`), record }
  }
  const next = entry === undefined ? record : forget(record, file)
  options.save(next)
  const kept = entry?.backup !== undefined && Fs.existsSync(entry.backup) ? `; the copy from before spillway init stays in ${Path.basename(entry.backup)}` : ""
  return {
    line: line(createdByUs ? "removed" : "changed", createdByUs ? `removed ${target.what}` : `removed ${target.what}, kept the rest${kept}`),
    record: next
  }
}

const readBackup = (file: string): string | undefined => {
  try {
    return Files.read(file)
  } catch {
    return undefined
  }
}

/** Takes each target's entries out of its file, then removes the folders `install` created that are now empty. */
export const uninstall = (targets: ReadonlyArray<Target>, record: Files.Record, options: Options): Outcome => {
  const { lines, record: now } = eachTarget(targets, record, options, uninstallOne)
  if (!options.dryRun) {
    // a folder is Spillway's to remove once no recorded file is left in it
    const stillUsed = (folder: string) => Object.keys(now.files).some((f) => f.startsWith(folder + Path.sep))
    const candidates = now.folders.filter((f) => !stillUsed(f))
    Files.removeEmptyFolders(candidates)
    const next = { ...now, folders: now.folders.filter((f) => stillUsed(f) || Fs.existsSync(f)) }
    if (next.folders.length !== now.folders.length) options.save(next)
    return { lines, record: next }
  }
  return { lines, record: now }
}
