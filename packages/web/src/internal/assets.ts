/**
 * The page's style sheet and its one small script, served as they are.
 * The pages work without the script (every view is a link or a form); the
 * script loads more lines as one scrolls, follows a job's output live, and
 * adds keyboard shortcuts.
 *
 * @internal
 */
import * as Ansi from "./ansi.js"

/** The style sheet: readable on a phone, visible focus, light and dark. */
export const css = `html{overflow-anchor:none}
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--mute:#57606a;--line:#d0d7de;--soft:#f6f8fa;--accent:#0550ae;--ok:#116329;--bad:#a40e26;--mark:#fff8c5;--omit:#eef2f6}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mute:#9198a1;--line:#30363d;--soft:#161b22;--accent:#79c0ff;--ok:#3fb950;--bad:#ff7b72;--mark:#5a4a00;--omit:#1c2330}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,pre:focus-visible,main:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
code,pre,.body,input[type=search]{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:2}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
header{display:flex;flex-wrap:wrap;gap:4px 16px;align-items:center;justify-content:space-between;padding:8px 16px;border-bottom:1px solid var(--line);background:var(--soft)}
nav{display:flex;gap:12px;flex-wrap:wrap;align-items:center}
nav a{text-decoration:none;padding:6px 4px}nav a[aria-current=page]{font-weight:600;border-bottom:2px solid var(--accent)}
.brand{font-weight:700;color:var(--fg)}
.who{color:var(--mute);font-size:14px}
main{padding:12px 16px 48px;max-width:1400px;margin:0 auto}
h1{font-size:1.35rem;margin:8px 0 12px;overflow-wrap:anywhere}h1 code{font-size:1.1rem}
h2{font-size:1.1rem;margin:20px 0 8px}
.lede,.note{color:var(--mute)}.note{font-size:14px}
.empty{color:var(--mute);font-style:italic}
.error{color:var(--bad);font-weight:600}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:15px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--soft);white-space:nowrap}
td.num{text-align:right;white-space:nowrap}
td.cmd code,td.name{overflow-wrap:anywhere}
.state{display:inline-block;padding:0 8px;border-radius:10px;border:1px solid var(--line);white-space:nowrap}
.state.running{color:var(--accent);border-color:var(--accent)}.state.ok{color:var(--ok);border-color:var(--ok)}.state.failed{color:var(--bad);border-color:var(--bad)}
.facts{display:flex;flex-wrap:wrap;gap:4px 20px;margin:0 0 8px;font-size:14px}
.facts div{display:flex;gap:6px}.facts dt{color:var(--mute)}.facts dd{margin:0}
.tools{display:flex;flex-wrap:wrap;gap:8px 24px;margin:12px 0;padding:8px;background:var(--soft);border:1px solid var(--line);border-radius:6px}
.tools form{display:flex;flex-wrap:wrap;gap:6px;align-items:center}
input,button{font:inherit;padding:6px 8px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);min-height:40px}
input[type=number]{width:9em}input[type=search]{width:min(28em,70vw)}
button{cursor:pointer;background:var(--accent);color:var(--bg);border-color:var(--accent)}
.check{display:flex;gap:4px;align-items:center;font-size:14px}.check input{min-height:auto}
.body{display:table;width:100%;border:1px solid var(--line);border-radius:6px;font-size:13px;line-height:1.45}
.body>.edge,.body>.empty{display:table-caption;caption-side:bottom}.body>.edge{height:1px}.body>.edge:first-child{caption-side:top}
.status-bar{position:fixed;right:12px;bottom:12px;margin:0;padding:4px 10px;border:1px solid var(--line);border-radius:6px;background:var(--soft);color:var(--mute);font-size:13px}
.l{display:table-row}.l:target,.l.target{background:var(--mark)}
.l .n{display:table-cell;width:1%;padding:0 8px;text-align:right;color:var(--mute);text-decoration:none;user-select:none;border-right:1px solid var(--line);background:var(--soft);white-space:nowrap}
.l .n:focus-visible{outline-offset:-3px}
.l .t{display:table-cell;padding:0 8px;white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word}
@media (max-width:640px){
.list table,.list thead,.list tbody,.list tr,.list td{display:block}.list thead{position:absolute;left:-9999px}
.list tr{border-bottom:1px solid var(--line);padding:6px 0}.list td{border:0;padding:2px 0;text-align:left}
.list td[data-label]::before{content:attr(data-label) " ";color:var(--mute);font-size:13px}
.list td.num{text-align:left}}
mark{background:var(--mark);color:inherit;outline:1px solid #d4a72c}
.matches,.salient{padding-left:0;list-style:none;font-size:14px}
.matches li,.salient li{padding:2px 0;overflow-wrap:anywhere}
.matches .n,.salient .n{display:inline-block;min-width:6ch;text-align:right}
.salient li.reports code{color:var(--bad)}.salient li.context code{color:var(--mute)}
.cut{color:var(--mute);font-size:12px}
.pager{display:flex;justify-content:space-between}
.status{margin:0 0 8px}
.beside{display:grid;grid-template-columns:1fr;gap:16px}
@media (min-width:1000px){.beside{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}}
.preview{margin:0;padding:8px;border:1px solid var(--line);border-radius:6px;background:var(--soft);white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px}
.l.omitted{background:var(--omit)}.l.omitted .t{padding:6px 8px;border-top:1px dashed var(--line);border-bottom:1px dashed var(--line)}
.loading{color:var(--mute);padding:4px 8px;font-size:13px}
kbd{border:1px solid var(--line);border-radius:4px;padding:0 4px;font-size:12px}
.name{color:var(--mute);font-size:13px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
h1 .name{font-weight:400}
.l.failure{background:var(--mark)}
.filter{align-items:center}
.raw{white-space:nowrap}
${Ansi.css}
`

/** The script: more lines as one scrolls, the live follow of a job, and shortcuts (`/` search, `g` go to a line). */
export const js = `"use strict";
(function () {
  var MAX_LINES = 1000, BATCH = 200;
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  // a line's text, its colour runs [start, end, classes] as spans and its marks [start, end] as <mark>, as the server paints them
  function paint(t, text, runs, spans) {
    runs = runs || []; spans = spans || [];
    var cuts = [0, text.length];
    runs.concat(spans).forEach(function (s) { cuts.push(s[0], s[1]); });
    cuts = cuts.filter(function (n, k) { return n >= 0 && n <= text.length && cuts.indexOf(n) === k; }).sort(function (a, b) { return a - b; });
    var r = 0, m = 0, mark = null;
    for (var k = 0; k + 1 < cuts.length; k++) {
      var a = cuts[k], b = cuts[k + 1];
      while (r < runs.length && runs[r][1] <= a) r++;
      while (m < spans.length && spans[m][1] <= a) m++;
      var cls = r < runs.length && runs[r][0] <= a ? runs[r][2] : "";
      var marked = m < spans.length && spans[m][0] <= a;
      if (marked && !mark) { mark = el("mark"); t.appendChild(mark); }
      if (!marked) mark = null;
      var piece = cls ? el("span", cls, text.slice(a, b)) : document.createTextNode(text.slice(a, b));
      (mark || t).appendChild(piece);
    }
  }
  function lineEl(name, n, text, runs, spans) {
    var d = el("div", "l"); d.id = "L" + n;
    var a = el("a", "n", String(n)); a.href = "/view/" + encodeURIComponent(name) + "?line=" + n + "#L" + n;
    var t = el("span", "t"); paint(t, text, runs, spans);
    d.appendChild(a); d.appendChild(t); return d;
  }
  // the first line at or below the top of the viewport, and where it is: the reader's place, kept while lines come and go
  function place(box) {
    var ls = box.querySelectorAll(".l");
    for (var k = 0; k < ls.length; k++) { var r = ls[k].getBoundingClientRect(); if (r.bottom > 0) return { el: ls[k], top: r.top }; }
    return null;
  }
  function keep(p) { if (p && p.el.isConnected) window.scrollBy(0, p.el.getBoundingClientRect().top - p.top); }

  // The page view: load the lines before and after the window as they scroll into sight; keep at most MAX_LINES in the page.
  // The edges it watches have a fixed height, and what it is doing shows in a status that takes no room, so nothing moves.
  var body = document.getElementById("body");
  var status = el("p", "status-bar", ""); status.setAttribute("role", "status"); status.hidden = true;
  document.body.appendChild(status);
  function say(text) { status.textContent = text; status.hidden = text === ""; }
  if (body && body.dataset.name) {
    var name = body.dataset.name, total = Number(body.dataset.total), q = body.dataset.q, ic = body.dataset.i;
    var first = Number(body.dataset.from), count = body.querySelectorAll(".l").length, busy = false;
    var top = el("div", "edge"), bottom = el("div", "edge");
    body.insertBefore(top, body.firstChild); body.appendChild(bottom);
  }

  // A window opened at a line: that line at the top of the viewport (a form gives no #fragment to do it).
  var target = document.querySelector(".l.target");
  if (target) { target.scrollIntoView({ block: "start" }); var tn = target.querySelector(".n"); if (tn) tn.focus({ preventScroll: true }); }

  if (body && body.dataset.name) {
    var load = function (before) {
      if (busy) return;
      var from = before ? Math.max(1, first - BATCH) : first + count;
      var n = before ? first - from : Math.min(BATCH, total - from + 1);
      if (n <= 0) return;
      busy = true; say("loading lines " + from + "–" + (from + n - 1) + "…");
      var url = "/api/view/" + encodeURIComponent(name) + "/lines?from=" + from + "&count=" + n + (q ? "&q=" + encodeURIComponent(q) + (ic ? "&i=1" : "") : "");
      fetch(url, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (page) {
        if (!page.lines) throw new Error(page.message || "could not load lines");
        var frag = document.createDocumentFragment();
        page.lines.forEach(function (text, k) { frag.appendChild(lineEl(name, page.from + k, text, page.runs && page.runs[k], page.marks && page.marks[k])); });
        // the page's own scroll anchoring is off (overflow-anchor: none): the line under the reader's eye is kept in place here, once
        var p = place(body);
        if (before) { body.insertBefore(frag, top.nextSibling); first = page.from; }
        else body.insertBefore(frag, bottom);
        count += page.lines.length;
        // drop lines far from where the reader is
        while (count > MAX_LINES) {
          if (before) body.removeChild(bottom.previousSibling);
          else { body.removeChild(top.nextSibling); first++; }
          count--;
        }
        keep(p);
        say("");
      }).catch(function (e) { say(String(e.message || e)); })
        .then(function () { busy = false; });
    };
    if ("IntersectionObserver" in window) {
      var seen = new IntersectionObserver(function (entries) {
        entries.forEach(function (x) { if (x.isIntersecting) load(x.target === top); });
      }, { rootMargin: "600px 0px" });
      setTimeout(function () { seen.observe(top); seen.observe(bottom); }, 300);
    }
  }

  // A job's page: follow its output live from the byte after the lines shown; the browser resumes from the last event's id after a reconnect.
  var live = document.getElementById("live");
  if (live && live.dataset.name) {
    var lname = live.dataset.name, next = Number(live.dataset.line), open = null, note = document.getElementById("follow-note"), state = document.getElementById("state");
    var atEnd = function () { return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 40; };
    // whole lines, each with its colours; a line longer than one read comes in pieces, the last left open
    var add = function (d) {
      var stick = atEnd();
      d.lines.forEach(function (line, k) {
        if (open) paint(open.querySelector(".t"), line.text, line.runs);
        else { open = lineEl(lname, next, line.text, line.runs); live.appendChild(open); }
        if (k < d.lines.length - 1 || !d.open) { open = null; next++; }
      });
      if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
    };
    var source = new EventSource("/api/view/" + encodeURIComponent(lname) + "/follow?offset=" + live.dataset.offset);
    if (note) note.textContent = "following live…";
    source.addEventListener("output", function (e) { add(JSON.parse(e.data)); });
    source.addEventListener("end", function () {
      source.close();
      if (note) note.textContent = "";
      live.dataset.state = "complete";
      refresh(lname, true);
    });
    source.addEventListener("failed", function (e) { source.close(); if (note) note.textContent = JSON.parse(e.data).message; });
    source.onerror = function () { if (note && source.readyState !== 2) note.textContent = "reconnecting…"; };
    source.onopen = function () { if (note) note.textContent = "following live…"; };
  }

  // The facts, the state and the failure lines of a body, from the server, every 2 s while it is written and once when it ends.
  var timer = null;
  function refresh(name, last) {
    fetch("/api/view/" + encodeURIComponent(name) + "/live", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (d) {
      if (d.facts === undefined) return;
      var facts = document.querySelector(".facts"), fails = document.getElementById("failures"), state = document.getElementById("state");
      // what changes is above the lines: the line the reader is on stays where it is, unless the page is at its top
      var p = window.scrollY > 0 ? place(document) : null;
      if (facts) facts.outerHTML = d.facts;
      if (fails) { var h = fails.querySelector("h2"); fails.innerHTML = ""; if (h) fails.appendChild(h); fails.insertAdjacentHTML("beforeend", d.failures); }
      keep(p);
      if (state && d.job) { state.textContent = d.word.word; state.className = "state " + d.word.cls; }
      if (d.state === "complete" && timer !== null) { clearInterval(timer); timer = null; }
    }).catch(function () {});
    if (!last && timer === null) timer = setInterval(function () { if (!document.hidden) refresh(name, true); }, 2000);
  }
  var fl = document.getElementById("failures");
  var followed = live && live.dataset.name;
  if (followed) { if (live.dataset.state === "writing") refresh(live.dataset.name, false); }
  else if (fl && fl.dataset.name) refresh(fl.dataset.name, fl.dataset.state !== "writing");

  // The jobs list refreshes itself while a job runs.
  if (location.pathname === "/jobs" && document.querySelector(".state.running")) {
    setInterval(function () {
      fetch("/jobs", { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html"), fresh = doc.querySelector("main"), old = document.querySelector("main");
        if (fresh && old && !old.contains(document.activeElement)) old.innerHTML = fresh.innerHTML;
      }).catch(function () {});
    }, 3000);
  }

  // Shortcuts: "/" to search, "g" to go to a line.
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target; if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    var target = e.key === "/" ? document.getElementById("q") : e.key === "g" ? document.getElementById("line") : null;
    if (target) { e.preventDefault(); target.focus(); }
  });
})();
`
