/**
 * The records a controller has seen, keyed as the record store's lookup is
 * (caller, host, scope and pid), so that reads of a job it already looked
 * up go on while the store does not answer. A record is replaced by every
 * answer of the store (a lookup that finds none removes it), by what the
 * controller writes itself (a start, an observed exit) and removed when the
 * job is expired here. At most `max` records are kept, the one used least
 * recently given up first. It holds no authority: every call it serves
 * still goes to the host, which checks the lease (so a revoked credential
 * is refused) and the record's generation (so a later job with the same
 * pid is refused).
 */
import type * as RemoteRecords from "../RemoteRecords.js"

/** The most records a cache keeps. */
export const MAX_RECORDS = 10_000

/** A bounded cache of records. */
export interface RecordCache {
  readonly get: (key: RemoteRecords.Key, pid: number) => RemoteRecords.RemoteRecord | undefined
  /** Keeps a record, or, for `undefined` (the store has none), forgets the pid. */
  readonly set: (key: RemoteRecords.Key, pid: number, record: RemoteRecords.RemoteRecord | undefined) => void
  readonly size: () => number
}

const keyOf = (key: RemoteRecords.Key, pid: number) => JSON.stringify([key.owner, key.channel, key.host, key.scopeHash, pid])

/** An empty cache of at most `max` records. */
export const make = (max: number = MAX_RECORDS): RecordCache => {
  const records = new Map<string, RemoteRecords.RemoteRecord>()
  return {
    get: (key, pid) => {
      const k = keyOf(key, pid)
      const found = records.get(k)
      if (found !== undefined) {
        // the most recently used last: a Map iterates in insertion order
        records.delete(k)
        records.set(k, found)
      }
      return found
    },
    set: (key, pid, record) => {
      const k = keyOf(key, pid)
      records.delete(k)
      if (record === undefined) return
      records.set(k, record)
      while (records.size > max) records.delete(records.keys().next().value!)
    },
    size: () => records.size
  }
}
