/**
 * The pages, as plain HTML strings: a layout with the navigation, and one
 * function per page. Every value from a body or a manifest goes through
 * `escape`; nothing here reads anything.
 *
 * @internal
 */
import * as Ansi from "./ansi.js"
import type * as Views from "./views.js"

/** Text safe inside an element or a quoted attribute. */
export const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"))

/** A name in a URL path (names are letters, digits, `.`, `_` and `-`, but encode anyway). */
const seg = (name: string) => encodeURIComponent(name)

const MiB = 1024 * 1024

/** A byte count for people. */
export const size = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < MiB ? `${(bytes / 1024).toFixed(1)} KiB` : bytes < 1024 * MiB ? `${(bytes / MiB).toFixed(1)} MiB` : `${(bytes / 1024 / MiB).toFixed(2)} GiB`

/** A time as `2026-09-04 01:02:03Z`, in a `<time>` element. */
export const time = (ms: number | null, never = "never"): string => {
  if (ms === null) return never
  const iso = new Date(ms).toISOString()
  return `<time datetime="${iso}">${iso.slice(0, 19).replace("T", " ")}Z</time>`
}

const count = (n: number) => n.toLocaleString("en-US")

/** The page around a body. */
export const layout = (title: string, owner: string, main: string, current: "jobs" | "outputs" | "" = ""): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)} · Spillway</title>
<link rel="stylesheet" href="/assets/style.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<nav aria-label="Sections">
<a class="brand" href="/">Spillway</a>
<a href="/jobs"${current === "jobs" ? ' aria-current="page"' : ""}>Jobs</a>
<a href="/outputs"${current === "outputs" ? ' aria-current="page"' : ""}>Saved outputs</a>
</nav>
<span class="who">read-only view for <b>${escape(owner)}</b></span>
</header>
<main id="main" tabindex="-1">
${main}
</main>
</body>
</html>
`

/** A job's state as a word and a class. */
const jobState = (j: Views.Summary) => {
  const job = j.job
  if (job === undefined) return { word: j.status, cls: "" }
  if (j.state === "writing") return { word: "running", cls: "running" }
  if (job.signal !== null) return { word: `killed by ${job.signal}`, cls: "failed" }
  if (job.exitCode === null) return { word: "ended (exit not seen)", cls: "" }
  return { word: `exited ${job.exitCode}`, cls: job.exitCode === 0 ? "ok" : "failed" }
}

/** The jobs list. */
export const jobs = (list: ReadonlyArray<Views.Summary>): string => {
  const rows = list.map((j) => {
    const s = jobState(j)
    return `<tr>
<td class="cmd"><a href="/jobs/${seg(j.id)}"><code>${escape(j.job?.command ?? j.id)}</code></a></td>
<td data-label="Status"><span class="state ${s.cls}">${escape(s.word)}</span></td>
<td class="num" data-label="Exit">${j.job?.exitCode ?? "–"}</td>
<td data-label="Started">${time(j.createdAt)}</td>
<td class="num" data-label="Size">${size(j.bytes)}</td>
<td data-label="Expires">${time(j.expiresAt, j.state === "writing" ? "after it ends" : "never")}</td>
</tr>`
  }).join("\n")
  return `<h1>Jobs</h1>
<p class="lede">Background jobs and their output, newest first. A running job's page follows its output as it is written.</p>
${list.length === 0 ? `<p class="empty">No jobs yet.</p>` : `<div class="scroll list"><table>
<caption class="sr">Jobs</caption>
<thead><tr><th scope="col">Command</th><th scope="col">Status</th><th scope="col">Exit</th><th scope="col">Started</th><th scope="col">Size</th><th scope="col">Expires</th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`}`
}

/** The key a list's next page starts after, as a query value: `createdAt~name`. */
export const listKey = (k: Views.ListKey): string => `${k.createdAt}~${k.id}`

/** What a saved output is, for its first column: its command or tool arguments, else its tool. */
const commandCell = (o: Views.Summary) =>
  o.command !== null ? `<code>${escape(o.command)}</code>` : `<span class="note">${escape(o.tool)}</span>`

/** The saved outputs and evidence list: one page, a filter, and a link to the next page. */
export const outputs = (page: Views.ListPage, first: boolean): string => {
  const list = page.items
  const rows = list.map((o) =>
    `<tr>
<td class="cmd"><a href="/view/${seg(o.id)}">${commandCell(o)}</a><br><span class="name">${escape(o.id)}</span></td>
<td data-label="Kind">${escape(o.profile === "spill" ? "saved output" : o.profile)}</td>
<td data-label="Tool">${escape(o.tool)}</td>
<td data-label="Status">${escape(o.status)}</td>
<td class="num" data-label="Size">${size(o.bytes)}</td>
<td class="num" data-label="Lines">${count(o.lines)}</td>
<td data-label="Created">${time(o.createdAt)}</td>
<td data-label="Expires">${time(o.expiresAt)}</td>
<td><a href="/view/${seg(o.id)}/seen">what the model saw</a></td>
</tr>`
  ).join("\n")
  const filter = page.filter
  const q = filter === "" ? "" : `&amp;filter=${encodeURIComponent(filter)}`
  const pager = `<p class="pager">${first ? "" : `<a href="/outputs${filter === "" ? "" : `?filter=${encodeURIComponent(filter)}`}">newest</a>`} ${
    page.next !== undefined ? `<a rel="next" href="/outputs?after=${encodeURIComponent(listKey(page.next))}${q}">older outputs</a>` : ""
  }</p>`
  return `<h1>Saved outputs and evidence</h1>
<p class="lede">Output kept whole after a model was shown a preview of it, newest first. Secrets were masked before anything was kept.</p>
<form class="tools filter" method="get" action="/outputs" role="search" aria-label="Filter saved outputs">
<label for="filter">Filter</label>
<input id="filter" name="filter" type="search" value="${escape(filter)}" maxlength="200" placeholder="command, tool, status or name" autocomplete="off" spellcheck="false">
<button type="submit">Filter</button>${filter !== "" ? ` <a href="/outputs">all outputs</a>` : ""}
</form>
${list.length === 0 ? `<p class="empty">${filter === "" ? (first ? "Nothing is kept." : "No older outputs.") : `No output matches ${escape(JSON.stringify(filter))}.`}</p>` : `<div class="scroll list"><table>
<caption class="sr">Saved outputs and evidence</caption>
<thead><tr><th scope="col">Command</th><th scope="col">Kind</th><th scope="col">Tool</th><th scope="col">Status</th><th scope="col">Size</th><th scope="col">Lines</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col"><span class="sr">Preview</span></th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`}
${pager}`
}

/** One line of a body, numbered and linked to its page view. */
const line = (name: string, n: number, text: Ansi.Rendered, marks: ReadonlyArray<readonly [number, number]> = [], cls = "") =>
  `<div class="l${cls === "" ? "" : ` ${cls}`}" id="L${n}"><a class="n" href="/view/${seg(name)}?line=${n}#L${n}">${n}</a><span class="t">${paint(text, marks)}</span></div>`

/** Text with `[start, end)` spans wrapped in `<mark>`. */
export const highlight = (text: string, marks: ReadonlyArray<readonly [number, number]>): string => paint({ text, runs: [] }, marks)

/** A line without escapes, its colour runs as classed spans and its marks as `<mark>`. */
export const paint = (line: Ansi.Rendered, marks: ReadonlyArray<readonly [number, number]>): string => {
  const { runs, text } = line
  if (runs.length === 0 && marks.length === 0) return escape(text)
  const cuts = new Set<number>([0, text.length])
  for (const [s, e] of marks) cuts.add(s).add(e)
  for (const [s, e] of runs) cuts.add(s).add(e)
  const points = [...cuts].filter((n) => n >= 0 && n <= text.length).sort((a, b) => a - b)
  let out = ""
  let r = 0
  let m = 0
  let open = false
  for (let k = 0; k + 1 < points.length; k++) {
    const a = points[k]!
    const b = points[k + 1]!
    while (r < runs.length && runs[r]![1] <= a) r++
    while (m < marks.length && marks[m]![1] <= a) m++
    const run = r < runs.length && runs[r]![0] <= a ? runs[r]![2] : ""
    const marked = m < marks.length && marks[m]![0] <= a
    const piece = escape(text.slice(a, b))
    if (marked !== open) out += marked ? "<mark>" : "</mark>"
    open = marked
    out += run !== "" ? `<span class="${run}">${piece}</span>` : piece
  }
  return open ? `${out}</mark>` : out
}

const facts = (s: Views.Summary) => {
  const rows: Array<[string, string]> = [
    ...(s.command !== null && s.job === undefined ? [["Command", `<code>${escape(s.command)}</code>`] as [string, string]] : []),
    ["Kind", escape(s.profile === "spill" ? "saved output" : s.profile === "spool" ? "job output" : s.profile)],
    ["Tool", escape(s.tool)],
    ["Status", escape(s.state === "writing" ? "being written" : s.status)],
    ["Owner", escape(s.owner)],
    ["Created", time(s.createdAt)],
    ["Expires", time(s.expiresAt, s.state === "writing" ? "after it ends" : "never")],
    ["Size", `<span data-fact="size">${size(s.bytes)} (${count(s.bytes)} bytes)</span>`],
    ["Lines", `<span data-fact="lines">${count(s.lines)}</span>`]
  ]
  if (s.kept === "head") rows.push(["Kept", `only the first ${count(s.bytes)} of ${count(s.sourceBytes)} bytes`])
  if (s.captureError !== null) rows.push(["Capture", escape(s.captureError)])
  return `<dl class="facts">${rows.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join("")}</dl>`
}

/** The forms to jump to a line and to search. */
const tools = (name: string, total: number, q: string, ignoreCase: boolean) =>
  `<div class="tools">
<form class="jump" method="get" action="/view/${seg(name)}" role="search" aria-label="Go to a line">
<label for="line">Line</label>
<input id="line" name="line" type="number" inputmode="numeric" min="1" max="${Math.max(1, total)}" required>
<button type="submit">Go</button>
<a href="/view/${seg(name)}?line=1#L1">first</a>
<a href="/view/${seg(name)}?line=${Math.max(1, total)}#L${Math.max(1, total)}" data-key="last">last line</a>
<a class="raw" href="/view/${seg(name)}/raw" download="${escape(name)}">download (text)</a>
</form>
<form class="search" method="get" action="/view/${seg(name)}" role="search" aria-label="Search this output">
<label for="q">Search</label>
<input id="q" name="q" type="search" value="${escape(q)}" placeholder="regular expression" autocomplete="off" spellcheck="false">
<label class="check"><input type="checkbox" name="i" value="1"${ignoreCase ? " checked" : ""}> ignore case</label>
<button type="submit">Search</button>
</form>
</div>`

/** The search results section. */
const results = (name: string, r: Views.SearchView) => {
  if (r.error !== undefined) return `<section class="results" aria-labelledby="rh"><h2 id="rh">Search</h2><p class="error" role="alert">${escape(r.error)}</p></section>`
  const q = `q=${encodeURIComponent(r.pattern)}${r.ignoreCase ? "&amp;i=1" : ""}`
  const items = r.matches.map((m) =>
    `<li><a href="/view/${seg(name)}?line=${m.line}&amp;${q}#L${m.line}"><span class="n">${m.line}</span></a> <code>${paint(m, m.spans)}</code>${m.cut ? ' <span class="cut">(line cut)</span>' : ""}</li>`
  ).join("\n")
  const from = r.fromLine > 1 ? ` from line ${count(r.fromLine)}` : ""
  const stopped = (r.stopped ?? []).map((x) => ` ${escape(x.message.charAt(0).toUpperCase() + x.message.slice(1))}.`).join("")
  const next = r.nextLine !== undefined
    ? `<a rel="next" href="/view/${seg(name)}?${q}&amp;from=${r.nextLine}">next matches, from line ${count(r.nextLine)}</a>`
    : ""
  const back = r.fromLine > 1 ? `<a href="/view/${seg(name)}?${q}">first matches</a>` : ""
  return `<section class="results" aria-labelledby="rh">
<h2 id="rh">${r.matches.length === 0 ? "No line matches" : `${r.matches.length}${r.more ? "+" : ""} matching ${r.matches.length === 1 ? "line" : "lines"}`}${from} <code>${escape(r.pattern)}</code></h2>
<p class="note">Searched with the same bounded engine as <code>spillway grep</code>.${stopped}</p>
${items === "" ? "" : `<ol class="matches" start="1">\n${items}\n</ol>`}
${next !== "" || back !== "" ? `<p class="pager">${back} ${next}</p>` : ""}
</section>`
}

/** The page view of a body: facts, the forms, search results and a window of lines that the script extends as one scrolls. */
export const view = (v: Views.PageView): string => {
  const s = v.summary
  const lines = v.lines.map((t, k) => line(s.id, v.from + k, t, v.marks[k] ?? [], v.from + k === v.target ? "target" : "")).join("\n")
  const isJob = s.job !== undefined
  return `<h1><span class="sr">Output </span><code>${escape(s.command ?? s.id)}</code>${s.command !== null ? ` <span class="name">${escape(s.id)}</span>` : ""}</h1>
${facts(s)}
<p class="links">${isJob ? `<a href="/jobs/${seg(s.id)}">job page</a> · ` : ""}${s.profile === "spill" || s.profile === "evidence" ? `<a href="/view/${seg(s.id)}/seen">what the model saw</a>` : ""}</p>
${tools(s.id, s.lines, v.search?.pattern ?? "", v.search?.ignoreCase ?? false)}
${v.search !== undefined ? results(s.id, v.search) : ""}
<section aria-labelledby="sh" id="failures" data-name="${escape(s.id)}" data-state="${s.state}">
<h2 id="sh">Lines that report errors or failures</h2>
<p class="note">Looking for them…<noscript> Without the script, they are at <a href="/api/view/${seg(s.id)}/live">this address</a>, as data.</noscript></p>
</section>
<section aria-labelledby="bh">
<h2 id="bh">Lines ${v.lines.length === 0 ? "" : `${count(v.from)}–${count(v.from + v.lines.length - 1)} `}of ${count(s.lines)}</h2>
${v.cut !== undefined ? `<p class="note">Line ${v.cut.line} is ${count(v.cut.totalBytes)} bytes long; its first ${count(v.cut.shownBytes)} are shown.</p>` : ""}
<div class="body" id="body" data-name="${escape(s.id)}" data-from="${v.from}" data-total="${s.lines}" data-q="${escape(v.search?.error === undefined ? v.search?.pattern ?? "" : "")}" data-i="${v.search?.ignoreCase ? "1" : ""}" aria-live="off">
${v.lines.length === 0 ? `<p class="empty">This output is empty.</p>` : lines}
</div>
<p class="pager">${v.from > 1 ? `<a rel="prev" href="/view/${seg(s.id)}?line=${Math.max(1, v.from - 100)}#L${Math.max(1, v.from - 100)}">earlier lines</a>` : ""} ${v.from + v.lines.length <= s.lines ? `<a rel="next" href="/view/${seg(s.id)}?line=${v.from + v.lines.length}#L${v.from + v.lines.length}">later lines</a>` : ""}</p>
</section>`
}

/** The lines that report failures, linked to their lines: on a job's page and a saved output's. */
export const failures = (s: Views.Summary, found: Views.JobView["salient"]): string =>
  found.lines.length === 0
    ? `<p class="empty">No line reports an error or a failure${s.state === "writing" ? " yet" : ""}.</p>`
    : `<ol class="salient">${found.lines.map((l) =>
      `<li class="${l.role ?? "explains"}"><a href="/view/${seg(s.id)}?line=${l.line}#L${l.line}"><span class="n">${l.line}</span></a> <code>${escape(l.text)}</code></li>`
    ).join("\n")}</ol>${found.total > found.lines.filter((l) => l.role !== "context").length ? `<p class="note">${found.total} lines report errors or failures in all; the first are shown.</p>` : ""}`

/** A job's state as a word and a class, for the live facts. */
export const stateOf = (s: Views.Summary): { readonly word: string; readonly cls: string } => jobState(s)

/** The facts of a body, for the live facts. */
export const factsOf = (s: Views.Summary): string => facts(s)

/** A job's page: its facts, the lines that report failures, and the newest lines, which the script follows live. */
export const job = (v: Views.JobView): string => {
  const s = v.summary
  const st = jobState(s)
  const lines = v.lines.map((t, k) => line(s.id, v.from + k, Ansi.render(t))).join("\n")
  return `<h1><span class="sr">Job </span><code>${escape(s.job?.command ?? s.id)}</code></h1>
<p class="status"><span class="state ${st.cls}" id="state" role="status">${escape(st.word)}</span> <span id="follow-note" class="note"></span></p>
${facts(s)}
<p class="links"><a href="/view/${seg(s.id)}">page through its output</a> · <a href="/view/${seg(s.id)}/raw" download="${escape(s.id)}">download (text)</a> · <a href="/jobs">all jobs</a></p>
<section aria-labelledby="sh" id="failures">
<h2 id="sh">Lines that report errors or failures</h2>
${failures(s, v.salient)}
</section>
<section aria-labelledby="oh">
<h2 id="oh">Output${v.from > 1 ? ` from line ${count(v.from)}` : ""}</h2>
<div class="body live" id="live" data-name="${escape(s.id)}" data-offset="${v.endOffset}" data-line="${v.from + v.lines.length}" data-state="${s.state}" aria-live="off">
${lines}
</div>
</section>`
}

/** What the model saw beside the body it stands for. */
export const seen = (v: Views.SeenView): string => {
  const s = v.summary
  const failed = new Set(v.failures)
  const parts = v.body.map((p) =>
    p.kind === "omitted"
      ? `<div class="l omitted"><span class="n" aria-hidden="true">⋯</span><span class="t"><a href="/view/${seg(s.id)}?line=${p.from}#L${p.from}">lines ${count(p.from)}–${count(p.to)} not shown to the model (${count(p.to - p.from + 1)} ${p.to === p.from ? "line" : "lines"})</a></span></div>`
      : p.lines.map((t, k) => line(s.id, p.from + k, Ansi.render(t), [], failed.has(p.from + k) ? "failure" : "")).join("\n")
  ).join("\n")
  const shownFailures = v.failures.length === 0
    ? ""
    : `<p class="note">Lines the model was shown as reporting failures: ${v.failures.map((n) => `<a href="#L${n}">${count(n)}</a>`).join(", ")}.</p>`
  return `<h1><span class="sr">What the model saw of </span><code>${escape(s.id)}</code></h1>
${facts(s)}
<p class="note">${escape(v.note)}</p>
<div class="beside">
<section aria-labelledby="mh">
<h2 id="mh">What the model saw</h2>
<pre class="preview" tabindex="0">${escape(v.preview)}</pre>
${shownFailures}
</section>
<section aria-labelledby="kh">
<h2 id="kh">The body it stands for</h2>
<div class="body">
${parts}
</div>
</section>
</div>`
}

/** An error page. */
export const error = (status: number, message: string): string =>
  `<h1>${status === 404 ? "Not found" : status === 403 ? "Not allowed" : status === 410 ? "Expired" : status === 401 ? "Token needed" : status >= 500 ? "Something failed" : "Bad request"}</h1>
<p class="error" role="alert">${escape(message)}</p>
<p><a href="/jobs">Jobs</a> · <a href="/outputs">Saved outputs</a></p>`
