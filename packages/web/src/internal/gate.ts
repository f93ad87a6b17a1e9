/**
 * How many searches run at once: at most `max` in all and `perClient` for
 * one client, counted as they start and end. Pure bookkeeping; the view
 * turns a refusal into 429 or 503 with `Retry-After`.
 *
 * @internal
 */

/** A gate's answer: a release for the slot taken, or which limit is reached. */
export type Entry = { readonly _tag: "Entered"; readonly release: () => void } | { readonly _tag: "Full"; readonly limit: "client" | "all" }

/** Counts of searches running, in all and by client. */
export interface Gate {
  /** Takes a slot for a search of `client`'s, or says which limit is reached. */
  readonly enter: (client: string) => Entry
}

/** A gate with room for `max` searches at once, `perClient` of them for one client. */
export const make = (max: number, perClient: number): Gate => {
  const byClient = new Map<string, number>()
  let running = 0
  return {
    enter: (client) => {
      const mine = byClient.get(client) ?? 0
      if (mine >= perClient) return { _tag: "Full", limit: "client" }
      if (running >= max) return { _tag: "Full", limit: "all" }
      running++
      byClient.set(client, mine + 1)
      let released = false
      return {
        _tag: "Entered",
        release: () => {
          if (released) return
          released = true
          running--
          const left = (byClient.get(client) ?? 1) - 1
          if (left <= 0) byClient.delete(client)
          else byClient.set(client, left)
        }
      }
    }
  }
}
