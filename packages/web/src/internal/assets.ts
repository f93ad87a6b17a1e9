/**
 * The page's style sheet and its one small script, served as they are.
 * The pages work without the script (every view is a link or a form); the
 * script loads more lines as one scrolls, follows a job's output live, and
 * adds keyboard shortcuts.
 *
 * @internal
 */

/** The style sheet: readable on a phone, visible focus, light and dark. */
export const css = `:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--mute:#57606a;--line:#d0d7de;--soft:#f6f8fa;--accent:#0550ae;--ok:#116329;--bad:#a40e26;--mark:#fff8c5;--omit:#eef2f6}
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
.body>.loading,.body>.empty{display:table-caption;caption-side:bottom}.body>.loading:first-child{caption-side:top}
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
`

/** The script: more lines as one scrolls, the live follow of a job, and shortcuts (`/` search, `g` go to a line). */
export const js = `"use strict";
(function () {
  var MAX_LINES = 1000, BATCH = 200;
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  function lineEl(name, n, text, spans) {
    var d = el("div", "l"); d.id = "L" + n;
    var a = el("a", "n", String(n)); a.href = "/view/" + encodeURIComponent(name) + "?line=" + n + "#L" + n;
    var t = el("span", "t"); var at = 0;
    (spans || []).forEach(function (s) {
      if (s[0] < at) return;
      t.appendChild(document.createTextNode(text.slice(at, s[0])));
      t.appendChild(el("mark", null, text.slice(s[0], s[1]))); at = s[1];
    });
    t.appendChild(document.createTextNode(text.slice(at)));
    d.appendChild(a); d.appendChild(t); return d;
  }

  // A window opened at a line (a form gives no #fragment): bring that line into sight.
  var target = document.querySelector(".l.target");
  if (target && !location.hash) { target.scrollIntoView({ block: "center" }); var tn = target.querySelector(".n"); if (tn) tn.focus({ preventScroll: true }); }

  // The page view: load the lines before and after the window as they scroll into sight; keep at most MAX_LINES in the page.
  var body = document.getElementById("body");
  if (body && body.dataset.name) {
    var name = body.dataset.name, total = Number(body.dataset.total), q = body.dataset.q, ic = body.dataset.i;
    var first = Number(body.dataset.from), count = body.querySelectorAll(".l").length, busy = false;
    var top = el("div", "loading", ""), bottom = el("div", "loading", "");
    body.insertBefore(top, body.firstChild); body.appendChild(bottom);
    var load = function (before) {
      if (busy) return;
      var from = before ? Math.max(1, first - BATCH) : first + count;
      var n = before ? first - from : Math.min(BATCH, total - from + 1);
      if (n <= 0) return;
      busy = true; (before ? top : bottom).textContent = "loading lines…";
      var url = "/api/view/" + encodeURIComponent(name) + "/lines?from=" + from + "&count=" + n + (q ? "&q=" + encodeURIComponent(q) + (ic ? "&i=1" : "") : "");
      fetch(url, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (page) {
        if (!page.lines) throw new Error(page.message || "could not load lines");
        var frag = document.createDocumentFragment();
        page.lines.forEach(function (text, k) { frag.appendChild(lineEl(name, page.from + k, text, page.marks && page.marks[k])); });
        if (before) {
          var h = document.documentElement.scrollHeight;
          body.insertBefore(frag, top.nextSibling); first = page.from; count += page.lines.length;
          window.scrollBy(0, document.documentElement.scrollHeight - h);
        } else { body.insertBefore(frag, bottom); count += page.lines.length; }
        // drop lines far from where the reader is
        while (count > MAX_LINES) {
          if (before) { body.removeChild(bottom.previousSibling); count--; }
          else { var h2 = document.documentElement.scrollHeight; body.removeChild(top.nextSibling); first++; count--; window.scrollBy(0, document.documentElement.scrollHeight - h2); }
        }
        top.textContent = ""; bottom.textContent = "";
      }).catch(function (e) { (before ? top : bottom).textContent = String(e.message || e); })
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
    var add = function (text) {
      var stick = atEnd(), parts = text.split("\\n");
      parts.forEach(function (part, k) {
        if (k === parts.length - 1 && part === "") return;
        if (open) { var t = open.querySelector(".t"); t.textContent += part; }
        else { open = lineEl(lname, next, part); live.appendChild(open); }
        if (k < parts.length - 1) { open = null; next++; }
      });
      if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
    };
    var source = new EventSource("/api/view/" + encodeURIComponent(lname) + "/follow?offset=" + live.dataset.offset);
    if (note) note.textContent = "following live…";
    source.addEventListener("output", function (e) { add(JSON.parse(e.data).text); });
    source.addEventListener("end", function (e) {
      source.close(); var d = JSON.parse(e.data), j = d.job;
      var word = !j ? d.status : j.signal ? "killed by " + j.signal : j.exitCode === null ? "ended (exit not seen)" : "exited " + j.exitCode;
      if (state) { state.textContent = word; state.className = "state " + (j && j.exitCode === 0 ? "ok" : "failed"); }
      if (note) note.textContent = "";
      live.dataset.state = "complete";
      // the failure lines are found once the output is whole
      fetch(location.pathname, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("section[aria-labelledby=sh]"), old = document.querySelector("section[aria-labelledby=sh]");
        if (fresh && old) old.innerHTML = fresh.innerHTML;
        var ff = doc.querySelector(".facts"), of = document.querySelector(".facts");
        if (ff && of) of.innerHTML = ff.innerHTML;
      }).catch(function () {});
    });
    source.addEventListener("failed", function (e) { source.close(); if (note) note.textContent = JSON.parse(e.data).message; });
    source.onerror = function () { if (note && source.readyState !== 2) note.textContent = "reconnecting…"; };
    source.onopen = function () { if (note) note.textContent = "following live…"; };
  }

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
