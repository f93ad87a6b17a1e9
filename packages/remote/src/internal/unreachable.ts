/**
 * Why a call to a host did not complete, read out of what the RPC client
 * and the socket under it report: a cause word and words a person can act on.
 *
 * @since 0.1.0
 */

/** A cause word for a connection that failed. */
export type Reason = "refused" | "reset" | "timeout" | "closed" | "tls" | "dns" | "failed"

/** A connection failure: its cause word and what was seen. */
export interface Failure {
  readonly reason: Reason
  readonly detail: string
}

const MAX_DEPTH = 8

/** The chain of causes under an error, outermost first (bounded, so a cycle cannot loop). */
const chain = (e: unknown): ReadonlyArray<unknown> => {
  const out: Array<unknown> = []
  let current: unknown = e
  while (current !== undefined && current !== null && out.length < MAX_DEPTH && !out.includes(current)) {
    out.push(current)
    current = typeof current === "object" ? (current as { cause?: unknown }).cause : undefined
  }
  return out
}

const field = (e: unknown, name: string): string | undefined => {
  if (typeof e !== "object" || e === null) return undefined
  const value = (e as Record<string, unknown>)[name]
  return typeof value === "string" ? value : undefined
}

const reasonOfCode = (code: string): Reason | undefined => {
  if (code === "ECONNREFUSED") return "refused"
  if (code === "ECONNRESET" || code === "EPIPE" || code === "ECONNABORTED") return "reset"
  if (code === "ETIMEDOUT" || code === "EHOSTUNREACH" || code === "ENETUNREACH") return "timeout"
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "dns"
  if (/^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_OSSL)/.test(code)) return "tls"
  return undefined
}

const short = (text: string) => (text.length > 300 ? `${text.slice(0, 297)}...` : text)

/**
 * The cause word and detail of a failed call: a node error code where one is
 * found (`ECONNREFUSED` is `refused`, `ECONNRESET` is `reset`), a ping that
 * went unanswered `timeout`, a connection that ended `closed`, a host that
 * closed or refused the connection with its words.
 */
export const classify = (e: unknown): Failure => {
  const links = chain(e)
  for (const link of links) {
    const code = field(link, "code")
    const reason = code !== undefined ? reasonOfCode(code) : undefined
    if (reason !== undefined) return { reason, detail: short(`${field(link, "message") ?? code}`) }
  }
  for (const link of links) {
    const text = typeof link === "string" ? link : field(link, "message") ?? ""
    // the words a host sends as it closes or refuses a connection
    if (text.startsWith("the host refused the connection")) return { reason: "refused", detail: short(text) }
    if (text.startsWith("the host closed the connection")) return { reason: "closed", detail: short(text) }
    if (/ping timeout/i.test(text)) return { reason: "timeout", detail: "the host did not answer a ping within 10 seconds" }
    if (/\b(tls|ssl|certificate)\b/i.test(text)) return { reason: "tls", detail: short(text) }
    const tag = field(link, "_tag")
    const socketReason = field(link, "reason")
    if (tag === "SocketError" && socketReason === "Close") return { reason: "closed", detail: "the connection was closed" }
    if (tag === "SocketError" && socketReason === "OpenTimeout") return { reason: "timeout", detail: "the connection did not open in time" }
  }
  const last = links.at(-1)
  const text = typeof last === "string" ? last : field(last, "message") ?? String(last)
  return { reason: "failed", detail: short(text === "" ? "the call failed" : text) }
}

/** Whether a defect is a connection's failure (a socket's error, or a host closing or refusing the connection), not a fault of a call. */
export const isConnectionFailure = (e: unknown): boolean =>
  chain(e).some((link) => {
    const tag = field(link, "_tag")
    return tag === "SocketError" || tag === "RpcClientError"
  }) || classify(e).reason !== "failed"
