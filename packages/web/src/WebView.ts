/**
 * A web view for people over kept output: the jobs and their output,
 * followed live while it is written; saved outputs and evidence, paged
 * lazily by line, searched with the bounded engine `spillway grep` uses,
 * and set beside the preview a model got. It holds read capabilities only
 * (`BodyRead` and `Spill.SpillRead`), so it can never run, write, signal or
 * delete anything, and every request reaches a body through `Access`, as
 * the tools do. Served by `@effect/platform`'s HTTP router; the pages are
 * plain HTML with one small script, and no page shows a path, a cursor or
 * a credential.
 *
 * @since 0.1.0
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ErrorText, Secrets, type Spill } from "@spillway/core"
import { Effect, Option } from "effect"
import type { BodyRead } from "./BodyRead.js"
import * as Ansi from "./internal/ansi.js"
import * as Assets from "./internal/assets.js"
import * as Gate from "./internal/gate.js"
import * as Html from "./internal/html.js"
import * as Views from "./internal/views.js"

/** How a host's tools told a model to read on and search, so a re-derived preview says the same. */
export type Hints = Views.Hints

/** Whom the view is for and how it behaves; only `owner` is required. */
export interface Options {
  /** The person: the view shows what this owner may read. */
  readonly owner: string
  /** Only this channel's jobs and agents; by default every channel of the owner's. */
  readonly channel?: string | undefined
  /**
   * A token a request must carry (an `Authorization: Bearer` header, or
   * `?token=` once, which sets a cookie) unless it comes from loopback.
   * Without one, only loopback requests are answered.
   */
  readonly token?: string | undefined
  /** How each tool's previews said to read on and search, by tool name; the library's own by default. */
  readonly hints?: Readonly<Record<string, Hints>> | undefined
  /** The cap a re-derived preview is made with; 2,000 characters by default. */
  readonly previewChars?: number | undefined
  /** How often a followed body is looked at; 250 ms by default. */
  readonly followPollMillis?: number | undefined
  /** A follow stream ends after this long and the browser resumes it; 5 minutes by default. */
  readonly followMaxMillis?: number | undefined
  /** Most matches one page of a search shows ("next matches" goes on); 200 by default. */
  readonly maxSearchResults?: number | undefined
  /** Time one request's search and its highlighting may take together; 5 seconds by default. */
  readonly searchMillis?: number | undefined
  /** Bytes of a body one request's search reads before it stops and says where to go on; 512 MiB by default. */
  readonly searchScanBytes?: number | undefined
  /** Most lines one reply highlights; 1,000 by default. */
  readonly maxHighlighted?: number | undefined
  /** Characters of matching lines one search reply holds; the rest are on the next page. 1,000,000 by default. */
  readonly maxReplyChars?: number | undefined
  /** Searches running at once in all; more are answered 503 with `Retry-After`. 4 by default. */
  readonly maxSearches?: number | undefined
  /** Searches running at once for one client (one address); more are answered 429 with `Retry-After`. 2 by default. */
  readonly maxSearchesPerClient?: number | undefined
}

/** Shortest token the view accepts, in characters: 16 (96 bits or more when random). */
export const MIN_TOKEN_CHARS = 16

/** Why a token is too short to guard the view, or undefined when it will do (`MIN_TOKEN_CHARS` or more). */
export const tokenProblem = (token: string): string | undefined =>
  token.length < MIN_TOKEN_CHARS
    ? `the token is ${token.length} characters long; it must be at least ${MIN_TOKEN_CHARS} (make a random one with \`openssl rand -hex 16\`)`
    : undefined

/** What the view needs: the read-only grant over the store, and reading saved output by name. */
export type Requirements = BodyRead | Spill.SpillRead

const configOf = (o: Options): Views.Config => ({
  owner: o.owner,
  channel: o.channel,
  previewChars: o.previewChars ?? 2000,
  hints: o.hints ?? {},
  followPollMillis: o.followPollMillis ?? 250,
  followMaxMillis: o.followMaxMillis ?? 5 * 60 * 1000,
  maxSearchResults: o.maxSearchResults ?? 200,
  windowLines: 200,
  maxApiLines: 2000,
  jobLines: 500,
  salienceScanBytes: 64 * 1024 * 1024,
  listPageSize: 100,
  maxListLooked: 5000,
  searchMillis: o.searchMillis ?? 5000,
  searchScanBytes: o.searchScanBytes ?? 512 * 1024 * 1024,
  maxHighlighted: o.maxHighlighted ?? 1000,
  maxHighlightChars: 4096,
  maxReplyChars: o.maxReplyChars ?? 1_000_000
})

/** A request the view cannot answer as asked. */
class Refused {
  readonly _tag = "Refused"
  constructor(readonly status: number, readonly message: string, readonly headers: Readonly<Record<string, string>> = {}) {}
}

/** What an error of a view means to a browser: a status and a message that shows no path. */
const statusOf = (e: { readonly _tag: string; readonly message: string }): { status: number; message: string } => {
  switch (e._tag) {
    case "Refused":
      return { status: (e as Refused).status, message: e.message }
    case "InvalidRequest":
    case "GrepPatternError":
      return { status: 400, message: e.message }
    case "NotFound":
      return { status: 404, message: e.message }
    case "AccessDenied":
    case "SpillPolicyRefused":
      return { status: 403, message: e.message }
    case "Expired":
      return { status: 410, message: e.message }
    default:
      return { status: 500, message: "the store could not be read; the server's log says why" }
  }
}

/**
 * `statusOf`, its message through the one error-to-text path (`ErrorText`):
 * bounded and masked with the `Secrets` in context, since an error quotes
 * what was asked (a name, a pattern) and that may hold a secret.
 */
const maskedStatusOf = (e: { readonly _tag: string; readonly message: string }) =>
  Effect.map(Effect.serviceOption(Secrets.Secrets), (masker) => {
    const { message, status } = statusOf(e)
    return { status, message: ErrorText.safe(message, { masker: Option.getOrUndefined(masker) }) }
  })

/** The headers a refusal carries (`Retry-After` for a busy view). */
const headersOf = (e: { readonly _tag: string }): Readonly<Record<string, string>> => (e._tag === "Refused" ? (e as Refused).headers : {})

const htmlResponse = (body: string, status = 200) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8" })

type Failure = { readonly _tag: string; readonly message: string }

/** Runs a page's effect; an error becomes an error page with its status. */
const page = <E extends Failure, R>(owner: string, title: string, make: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.catchAll(make, (e) =>
    Effect.gen(function*() {
      const { message, status } = yield* maskedStatusOf(e)
      if (status >= 500 && status !== 503) yield* Effect.logError(`${title}: ${e.message}`)
      return HttpServerResponse.setHeaders(htmlResponse(Html.layout(title, owner, Html.error(status, message)), status), headersOf(e))
    }))

/** Runs an API call's effect; an error becomes `{ error, message }` with its status. */
const api = <A, E extends Failure, R>(make: Effect.Effect<A, E, R>) =>
  Effect.matchEffect(make, {
    onSuccess: (body) => Effect.succeed(HttpServerResponse.unsafeJson(body)),
    onFailure: (e) =>
      Effect.map(maskedStatusOf(e), ({ message, status }) => {
        const error = e._tag !== "Refused" ? e._tag : status === 429 || status === 503 ? "Busy" : "InvalidRequest"
        return HttpServerResponse.unsafeJson({ error, message }, { status, headers: headersOf(e) })
      })
  })

/** A whole number from a query parameter, within bounds; absent is undefined. */
const wholeNumber = (params: URLSearchParams, name: string, min: number, max: number) =>
  Effect.suspend(() => {
    const raw = params.get(name)
    if (raw === null || raw === "") return Effect.succeed(undefined)
    if (!/^\d{1,16}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      return Effect.fail(new Refused(400, `${name}: must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw.slice(0, 40))}`))
    }
    return Effect.succeed(Number(raw))
  })

/** A list page's options from its query: `after=createdAt~name` and `filter=text`, each bounded. */
const listOptions = (c: Views.Config, params: URLSearchParams) =>
  Effect.suspend((): Effect.Effect<{ filter: string; size: number; after: Views.ListKey | undefined }, Refused> => {
    const filter = params.get("filter") ?? ""
    if (filter.length > 200) return Effect.fail(new Refused(400, `filter: at most 200 characters, got ${filter.length}`))
    const raw = params.get("after")
    if (raw === null || raw === "") return Effect.succeed({ filter, size: c.listPageSize, after: undefined })
    const m = /^(\d{1,16})~([A-Za-z0-9._-]{1,255})$/.exec(raw)
    if (m === null) return Effect.fail(new Refused(400, `after: must be the key a list's "older" link gives, got ${JSON.stringify(raw.slice(0, 40))}`))
    return Effect.succeed({ filter, size: c.listPageSize, after: { createdAt: Number(m[1]), id: m[2]! } })
  })

const searchParams = Effect.map(HttpServerRequest.HttpServerRequest, (r) => new URL(r.url, "http://view").searchParams)

/**
 * Runs a search through the gate: a client (by address) over its limit is
 * answered 429, and any client while the view runs its most searches 503,
 * both with `Retry-After`; the slot is given back however the search ends.
 */
const gated = (gate: Gate.Gate, limits: { readonly max: number; readonly perClient: number }) =>
<A, E, R>(search: Effect.Effect<A, E, R>): Effect.Effect<A, E | Refused, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.acquireUseRelease(
      Effect.suspend(() => {
        const entry = gate.enter(Option.getOrElse(request.remoteAddress, () => "unknown"))
        if (entry._tag === "Entered") return Effect.succeed(entry.release)
        return Effect.fail(
          entry.limit === "client"
            ? new Refused(429, `this client has ${limits.perClient} searches running already, the most the view runs for one client; try again when one has ended`, { "retry-after": "1" })
            : new Refused(503, `the view is running ${limits.max} searches already, the most it runs at once; try again in a moment`, { "retry-after": "2" })
        )
      }),
      () => search,
      (release) => Effect.sync(release)
    ))

const nameParam = Effect.map(HttpRouter.params, (p) => p.name ?? "")

/** The masked body whole as text/plain, named for a download; a refusal is an error page. */
const rawDownload = (c: Views.Config) =>
  Effect.gen(function*() {
    const name = yield* nameParam
    const stream = yield* Views.raw(c, name)
    return HttpServerResponse.stream(stream, {
      contentType: "text/plain; charset=utf-8",
      headers: { "content-disposition": `attachment; filename="${name}"` }
    })
  }).pipe(Effect.catchAll((e) => page(c.owner, "Download", Effect.fail(e))))

/** A body's facts and failure lines now, as data and as the page's own HTML, for a page that follows it. */
const liveFacts = (c: Views.Config) =>
  Effect.gen(function*() {
    const name = yield* nameParam
    const v = yield* Views.live(c, name)
    const s = v.summary
    return {
      state: s.state,
      status: s.status,
      bytes: s.bytes,
      lines: s.lines,
      job: s.job ?? null,
      word: Html.stateOf(s),
      facts: Html.factsOf(s),
      failures: Html.failures(s, v.salient),
      failureLines: v.salient.lines.map((l) => l.line)
    }
  })

/** The routes, every one a GET; anything else is refused with 405. */
export const router = (options: Options): HttpRouter.HttpRouter<never, Requirements> => {
  const c = configOf(options)
  const owner = c.owner
  const limits = { max: Math.max(1, options.maxSearches ?? 4), perClient: Math.max(1, options.maxSearchesPerClient ?? 2) }
  const searching = gated(Gate.make(limits.max, limits.perClient), limits)
  const layout = (title: string, main: string, current: "jobs" | "outputs" | "" = "") => Html.layout(title, owner, main, current)
  const query = Effect.map(searchParams, (p) => {
    const q = p.get("q") ?? ""
    return q === "" ? undefined : { pattern: q, ignoreCase: p.get("i") === "1" }
  })
  return HttpRouter.empty.pipe(
    HttpRouter.get("/", HttpServerResponse.redirect("/jobs", { status: 303 })),
    HttpRouter.get("/assets/style.css", Effect.succeed(HttpServerResponse.text(Assets.css, { contentType: "text/css; charset=utf-8" }))),
    HttpRouter.get("/assets/app.js", Effect.succeed(HttpServerResponse.text(Assets.js, { contentType: "text/javascript; charset=utf-8" }))),
    HttpRouter.get("/jobs", page(owner, "Jobs", Effect.map(Views.list(c, ["spool"]), (l) => htmlResponse(layout("Jobs", Html.jobs(l), "jobs"))))),
    HttpRouter.get(
      "/outputs",
      page(owner, "Saved outputs", Effect.gen(function*() {
        const params = yield* searchParams
        const options = yield* listOptions(c, params)
        const l = yield* Views.listPage(c, ["spill", "evidence"], options)
        return htmlResponse(layout("Saved outputs", Html.outputs(l, options.after === undefined), "outputs"))
      }))
    ),
    HttpRouter.get(
      "/jobs/:name",
      page(owner, "Job", Effect.gen(function*() {
        const name = yield* nameParam
        const s = yield* Views.summary(c, name)
        if (s.job === undefined) return HttpServerResponse.redirect(`/view/${encodeURIComponent(name)}`, { status: 303 })
        const v = yield* Views.job(c, name)
        return htmlResponse(layout(s.job.command, Html.job(v), "jobs"))
      }))
    ),
    HttpRouter.get(
      "/view/:name",
      page(owner, "Output", Effect.gen(function*() {
        const name = yield* nameParam
        const params = yield* searchParams
        const line = yield* wholeNumber(params, "line", 1, Number.MAX_SAFE_INTEGER)
        const fromLine = yield* wholeNumber(params, "from", 1, Number.MAX_SAFE_INTEGER)
        const q = yield* query
        const asked = Views.page(c, name, line, q === undefined ? undefined : { ...q, fromLine })
        const v = yield* (q === undefined ? asked : searching(asked))
        const current = v.summary.profile === "spool" ? "jobs" : "outputs"
        return htmlResponse(layout(name, Html.view(v), current), v.search?.error !== undefined ? 400 : 200)
      }))
    ),
    HttpRouter.get(
      "/view/:name/seen",
      page(owner, "What the model saw", Effect.gen(function*() {
        const name = yield* nameParam
        const v = yield* Views.seen(c, name)
        return htmlResponse(layout(`What the model saw of ${name}`, Html.seen(v), "outputs"))
      }))
    ),
    HttpRouter.get("/api/jobs", api(Effect.map(Views.list(c, ["spool"]), (items) => ({ items })))),
    HttpRouter.get(
      "/api/outputs",
      api(Effect.gen(function*() {
        const options = yield* listOptions(c, yield* searchParams)
        const l = yield* Views.listPage(c, ["spill", "evidence"], options)
        return { items: l.items, ...(l.next !== undefined ? { next: Html.listKey(l.next) } : {}) }
      }))
    ),
    HttpRouter.get("/view/:name/raw", rawDownload(c)),
    HttpRouter.get("/api/view/:name/live", api(liveFacts(c))),
    HttpRouter.get("/api/view/:name", api(Effect.flatMap(nameParam, (name) => Views.summary(c, name)))),
    HttpRouter.get(
      "/api/view/:name/lines",
      api(Effect.gen(function*() {
        const name = yield* nameParam
        const params = yield* searchParams
        const from = (yield* wholeNumber(params, "from", 1, Number.MAX_SAFE_INTEGER)) ?? 1
        const count = (yield* wholeNumber(params, "count", 1, c.maxApiLines)) ?? c.windowLines
        const w = yield* Views.lines(c, name, from, count)
        const q = yield* query
        const shown = w.lines.map(Ansi.render)
        const marked = q === undefined ? undefined : yield* searching(Views.marksOf(c, q, shown))
        return {
          from: w.from,
          count: shown.length,
          total: w.total,
          lines: shown.map((l) => l.text),
          runs: shown.map((l) => l.runs),
          ...(marked !== undefined ? { marks: marked.spans } : {}),
          // lines from this one on are not highlighted: the highlighting's deadline came first
          ...(marked !== undefined && marked.done < shown.length ? { marksStoppedAtLine: w.from + marked.done } : {}),
          ...(w.cut !== undefined ? { cut: w.cut } : {})
        }
      }))
    ),
    HttpRouter.get(
      "/api/view/:name/search",
      api(Effect.gen(function*() {
        const name = yield* nameParam
        const params = yield* searchParams
        const q = params.get("q") ?? ""
        const max = (yield* wholeNumber(params, "max", 1, 10_000)) ?? c.maxSearchResults
        const from = (yield* wholeNumber(params, "from", 1, Number.MAX_SAFE_INTEGER)) ?? 1
        return yield* searching(Views.search(c, name, q, params.get("i") === "1", max, from))
      }))
    ),
    HttpRouter.get(
      "/api/view/:name/follow",
      Effect.gen(function*() {
        const name = yield* nameParam
        const request = yield* HttpServerRequest.HttpServerRequest
        const params = yield* searchParams
        // after a reconnect the browser names the last event it got, and its id is the byte to resume from
        const lastId = request.headers["last-event-id"]
        const fromHeader = lastId !== undefined && lastId !== "" ? new URLSearchParams({ offset: lastId }) : params
        const from = (yield* wholeNumber(fromHeader, "offset", 0, Number.MAX_SAFE_INTEGER)) ?? 0
        const stream = yield* Views.follow(c, name, from)
        return HttpServerResponse.stream(stream, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
        })
      }).pipe(Effect.catchAll((e) => api(Effect.fail(e))))
    ),
    HttpRouter.all(
      "*",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (request.method !== "GET") {
          const message = `${request.method} is not allowed: this view only reads (GET), it never runs, writes, signals or deletes anything`
          return HttpServerResponse.unsafeJson({ error: "MethodNotAllowed", message }, { status: 405, headers: { allow: "GET" } })
        }
        const message = "no such page; the view has /jobs, /outputs and /view/NAME"
        return wantsJson(request)
          ? HttpServerResponse.unsafeJson({ error: "NotFound", message }, { status: 404 })
          : htmlResponse(layout("Not found", Html.error(404, message)), 404)
      })
    )
  )
}

const wantsJson = (request: HttpServerRequest.HttpServerRequest) =>
  new URL(request.url, "http://view").pathname.startsWith("/api/") || (request.headers.accept ?? "").includes("application/json")

/** True for a loopback address, IPv4, IPv6 or IPv4 mapped into IPv6. */
export const isLoopback = (address: string): boolean =>
  /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address) || address === "::1" || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address)

/** True for a Host header naming this machine's loopback (with any port). */
const isLoopbackHost = (host: string): boolean => {
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "")
  return name === "localhost" || name === "[::1]" || isLoopback(name)
}

/** Compares two strings in time that depends only on their lengths. */
const sameToken = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

const COOKIE = "spillway_view"

const security = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY"
}

/**
 * The view as an app: the routes behind the guard. A request from loopback
 * that names a loopback host is answered; any other needs the token (a
 * request from elsewhere without one is refused with 401, and with no token
 * set, it is refused outright). A page from another site that resolved its
 * own name to 127.0.0.1 names its own host, and is refused.
 */
export const app = (options: Options): Effect.Effect<HttpApp.Default<never, Requirements>> =>
  // names longer than the route matcher's default are still refused by the name check, with its reason
  Effect.map(HttpRouter.toHttpApp(router(options)).pipe(HttpRouter.withRouterConfig({ maxParamLength: 1024 })), (routes) => guard(options, routes))

const guard = <E extends { readonly _tag: string }, R>(options: Options, routes: HttpApp.Default<E, R>): HttpApp.Default<never, R> => {
  const owner = options.owner
  const refuse = (status: number, message: string) =>
    Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      wantsJson(request)
        ? HttpServerResponse.unsafeJson({ error: status === 401 ? "TokenNeeded" : "Refused", message }, { status })
        : htmlResponse(Html.layout("Not allowed", owner, Html.error(status, message)), status))
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const remote = Option.getOrUndefined(request.remoteAddress)
    const local = remote !== undefined && isLoopback(remote) && isLoopbackHost(request.headers.host ?? "")
    const token = options.token
    if (!local) {
      if (token === undefined) {
        return yield* refuse(403, "this view answers loopback requests for this machine's own host names only; start it with a token to reach it otherwise")
      }
      const url = new URL(request.url, "http://view")
      const header = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1]
      const given = header ?? request.cookies[COOKIE] ?? url.searchParams.get("token") ?? ""
      if (!sameToken(given, token)) {
        return yield* refuse(401, "a token is needed: open the address `spillway serve` printed, with its token")
      }
      if (url.searchParams.has("token")) {
        // the token goes into an HttpOnly cookie and out of the address, so no page or history shows it
        url.searchParams.delete("token")
        const rest = url.searchParams.toString()
        return HttpServerResponse.redirect(`${url.pathname}${rest === "" ? "" : `?${rest}`}`, {
          status: 303,
          headers: { "set-cookie": `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` }
        })
      }
    }
    const routed = yield* routes.pipe(Effect.catchAll(() => refuse(404, "no such page")))
    return HttpServerResponse.setHeaders(routed, security)
  }).pipe(Effect.catchAllDefect((defect) =>
    Effect.zipRight(
      Effect.logError("the web view failed", defect),
      Effect.succeed(HttpServerResponse.text("the view failed; the server's log says why", { status: 500 }))
    )
  ))
}
