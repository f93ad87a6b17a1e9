/**
 * The pattern worker: runs block scans and highlighting for `NodePattern`
 * on a thread of its own, so a long scan holds up nothing else and can be
 * ended by terminating the thread.
 *
 * @internal
 */
import * as Scan from "@spillway/core/BlockScan"
import { parentPort } from "node:worker_threads"

/** A scan to run, or, with `lines`, lines to highlight (`limit` spans each). */
export interface Request {
  readonly id: number
  readonly source: string
  readonly ignoreCase: boolean
  readonly text: string
  readonly limit: number
  readonly maxLineChars: number
  readonly lines?: ReadonlyArray<string> | undefined
}

/** Its result, or why it failed. */
export type Reply =
  | { readonly id: number; readonly matches: Array<number>; readonly clipped: number; readonly more: boolean }
  | { readonly id: number; readonly spans: Array<Array<readonly [number, number]>> }
  | { readonly id: number; readonly error: string }

const cache = new Map<string, Scan.Compiled>()

const compiled = (source: string, ignoreCase: boolean): Scan.Compiled => {
  const key = `${ignoreCase ? "i" : "-"}${source}`
  let c = cache.get(key)
  if (c === undefined) {
    c = Scan.compile(source, ignoreCase)
    if (cache.size >= 16) cache.delete(cache.keys().next().value!)
    cache.set(key, c)
  }
  return c
}

parentPort?.on("message", (request: Request) => {
  let reply: Reply
  try {
    const c = compiled(request.source, request.ignoreCase)
    if (request.lines !== undefined) {
      const max = request.maxLineChars
      reply = { id: request.id, spans: request.lines.map((l) => Scan.spans(c, l.length > max ? l.slice(0, max) : l, request.limit)) }
    } else {
      const found = Scan.scan(c, request.text, request.limit, request.maxLineChars)
      reply = { id: request.id, matches: found.matches, clipped: found.clipped, more: found.more }
    }
  } catch (e) {
    reply = { id: request.id, error: e instanceof Error ? e.message : String(e) }
  }
  parentPort!.postMessage(reply)
})
