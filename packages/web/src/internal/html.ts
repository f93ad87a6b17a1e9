/**
 * The pages, as plain HTML strings: a layout with the navigation, and one
 * function per page. Every value from a body or a manifest goes through
 * `escape`; nothing here reads anything.
 *
 * @internal
 */
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

/** The saved outputs and evidence list. */
export const outputs = (list: ReadonlyArray<Views.Summary>): string => {
  const rows = list.map((o) =>
    `<tr>
<td class="name"><a href="/view/${seg(o.id)}">${escape(o.id)}</a></td>
<td data-label="Kind">${escape(o.profile === "spill" ? "saved output" : o.profile)}</td>
<td data-label="Tool">${escape(o.tool)}</td>
<td data-label="Status">${escape(o.status)}</td>
<td class="num" data-label="Size">${size(o.bytes)}</td>
<td class="num" data-label="Lines">${count(o.lines)}</td>
<td data-label="Owner">${escape(o.owner)}</td>
<td data-label="Created">${time(o.createdAt)}</td>
<td data-label="Expires">${time(o.expiresAt)}</td>
<td><a href="/view/${seg(o.id)}/seen">what the model saw</a></td>
</tr>`
  ).join("\n")
  return `<h1>Saved outputs and evidence</h1>
<p class="lede">Output kept whole after a model was shown a preview of it, newest first. Secrets were masked before anything was kept.</p>
${list.length === 0 ? `<p class="empty">Nothing is kept.</p>` : `<div class="scroll list"><table>
<caption class="sr">Saved outputs and evidence</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Tool</th><th scope="col">Status</th><th scope="col">Size</th><th scope="col">Lines</th><th scope="col">Owner</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col"><span class="sr">Preview</span></th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`}`
}

/** One line of a body, numbered and linked to its page view. */
const line = (name: string, n: number, text: string, marks: ReadonlyArray<readonly [number, number]> = [], target = false) =>
  `<div class="l${target ? " target" : ""}" id="L${n}"><a class="n" href="/view/${seg(name)}?line=${n}#L${n}">${n}</a><span class="t">${highlight(text, marks)}</span></div>`

/** Text with `[start, end)` spans wrapped in `<mark>`. */
export const highlight = (text: string, marks: ReadonlyArray<readonly [number, number]>): string => {
  let out = ""
  let at = 0
  for (const [s, e] of marks) {
    if (s < at) continue
    out += escape(text.slice(at, s)) + `<mark>${escape(text.slice(s, e))}</mark>`
    at = e
  }
  return out + escape(text.slice(at))
}

const facts = (s: Views.Summary) => {
  const rows: Array<[string, string]> = [
    ["Kind", escape(s.profile === "spill" ? "saved output" : s.profile === "spool" ? "job output" : s.profile)],
    ["Tool", escape(s.tool)],
    ["Status", escape(s.state === "writing" ? "being written" : s.status)],
    ["Owner", escape(s.owner)],
    ["Created", time(s.createdAt)],
    ["Expires", time(s.expiresAt, s.state === "writing" ? "after it ends" : "never")],
    ["Size", `${size(s.bytes)} (${count(s.bytes)} bytes)`],
    ["Lines", count(s.lines)]
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
  const items = r.matches.map((m) =>
    `<li><a href="/view/${seg(name)}?line=${m.line}&amp;q=${encodeURIComponent(r.pattern)}${r.ignoreCase ? "&amp;i=1" : ""}#L${m.line}"><span class="n">${m.line}</span></a> <code>${highlight(m.text, m.spans)}</code>${m.cut ? ' <span class="cut">(line cut)</span>' : ""}</li>`
  ).join("\n")
  const more = r.more ? ` More lines match past the first ${r.matches.length}; narrow the pattern.` : ""
  const stopped = r.stoppedAtLine !== undefined ? ` The search stopped at its deadline at line ${r.stoppedAtLine}.` : ""
  return `<section class="results" aria-labelledby="rh">
<h2 id="rh">${r.matches.length === 0 ? "No line matches" : `${r.matches.length}${r.more ? "+" : ""} matching ${r.matches.length === 1 ? "line" : "lines"}`} <code>${escape(r.pattern)}</code></h2>
<p class="note">Searched with the same bounded engine as <code>spillway grep</code>.${more}${stopped}</p>
${items === "" ? "" : `<ol class="matches">\n${items}\n</ol>`}
</section>`
}

/** The page view of a body: facts, the forms, search results and a window of lines that the script extends as one scrolls. */
export const view = (v: Views.PageView): string => {
  const s = v.summary
  const lines = v.lines.map((t, k) => line(s.id, v.from + k, t, v.marks[k] ?? [], v.from + k === v.target)).join("\n")
  const isJob = s.job !== undefined
  return `<h1><span class="sr">Output </span><code>${escape(isJob ? s.job!.command : s.id)}</code></h1>
${facts(s)}
<p class="links">${isJob ? `<a href="/jobs/${seg(s.id)}">job page</a> · ` : ""}${s.profile === "spill" || s.profile === "evidence" ? `<a href="/view/${seg(s.id)}/seen">what the model saw</a>` : ""}</p>
${tools(s.id, s.lines, v.search?.pattern ?? "", v.search?.ignoreCase ?? false)}
${v.search !== undefined ? results(s.id, v.search) : ""}
<section aria-labelledby="bh">
<h2 id="bh">Lines ${v.lines.length === 0 ? "" : `${count(v.from)}–${count(v.from + v.lines.length - 1)} `}of ${count(s.lines)}</h2>
${v.cut !== undefined ? `<p class="note">Line ${v.cut.line} is ${count(v.cut.totalBytes)} bytes long; its first ${count(v.cut.shownBytes)} are shown.</p>` : ""}
<div class="body" id="body" data-name="${escape(s.id)}" data-from="${v.from}" data-total="${s.lines}" data-q="${escape(v.search?.error === undefined ? v.search?.pattern ?? "" : "")}" data-i="${v.search?.ignoreCase ? "1" : ""}" aria-live="off">
${v.lines.length === 0 ? `<p class="empty">This output is empty.</p>` : lines}
</div>
<p class="pager">${v.from > 1 ? `<a rel="prev" href="/view/${seg(s.id)}?line=${Math.max(1, v.from - 100)}#L${Math.max(1, v.from - 100)}">earlier lines</a>` : ""} ${v.from + v.lines.length <= s.lines ? `<a rel="next" href="/view/${seg(s.id)}?line=${v.from + v.lines.length}#L${v.from + v.lines.length}">later lines</a>` : ""}</p>
</section>`
}

/** A job's page: its facts, the lines that report failures, and the newest lines, which the script follows live. */
export const job = (v: Views.JobView): string => {
  const s = v.summary
  const st = jobState(s)
  const salient = v.salient.lines.length === 0
    ? `<p class="empty">No line reports an error or a failure${s.state === "writing" ? " yet" : ""}.</p>`
    : `<ol class="salient">${v.salient.lines.map((l) =>
      `<li class="${l.role ?? "explains"}"><a href="/view/${seg(s.id)}?line=${l.line}#L${l.line}"><span class="n">${l.line}</span></a> <code>${escape(l.text)}</code></li>`
    ).join("\n")}</ol>${v.salient.total > v.salient.lines.filter((l) => l.role !== "context").length ? `<p class="note">${v.salient.total} lines report errors or failures in all; the first are shown.</p>` : ""}`
  const lines = v.lines.map((t, k) => line(s.id, v.from + k, t)).join("\n")
  return `<h1><span class="sr">Job </span><code>${escape(s.job?.command ?? s.id)}</code></h1>
<p class="status"><span class="state ${st.cls}" id="state" role="status">${escape(st.word)}</span> <span id="follow-note" class="note"></span></p>
${facts(s)}
<p class="links"><a href="/view/${seg(s.id)}">page through its output</a> · <a href="/jobs">all jobs</a></p>
<section aria-labelledby="sh">
<h2 id="sh">Lines that report errors or failures</h2>
${salient}
</section>
<section aria-labelledby="oh">
<h2 id="oh">Output${v.from > 1 ? ` from line ${count(v.from)}` : ""}</h2>
<div class="body live" id="live" data-name="${escape(s.id)}" data-offset="${v.endOffset}" data-line="${v.from + v.lines.length}" data-state="${s.state}" aria-live="polite" aria-relevant="additions">
${lines}
</div>
</section>`
}

/** What the model saw beside the body it stands for. */
export const seen = (v: Views.SeenView): string => {
  const s = v.summary
  const parts = v.body.map((p) =>
    p.kind === "omitted"
      ? `<div class="l omitted"><span class="n" aria-hidden="true">⋯</span><span class="t"><a href="/view/${seg(s.id)}?line=${p.from}#L${p.from}">lines ${count(p.from)}–${count(p.to)} not shown to the model (${count(p.to - p.from + 1)} ${p.to === p.from ? "line" : "lines"})</a></span></div>`
      : p.lines.map((t, k) => line(s.id, p.from + k, t)).join("\n")
  ).join("\n")
  return `<h1><span class="sr">What the model saw of </span><code>${escape(s.id)}</code></h1>
${facts(s)}
<p class="note">${escape(v.note)}</p>
<div class="beside">
<section aria-labelledby="mh">
<h2 id="mh">What the model saw</h2>
<pre class="preview" tabindex="0">${escape(v.preview)}</pre>
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
