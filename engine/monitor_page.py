"""The /stealsearch page itself: one HTML document with its style and a few lines of JS
that poll ``/stealsearch/json`` once a second and draw inline SVG (no CDN, no external
script).  :mod:`stealsearch.engine.monitor` serves it and the JSON.
"""
from __future__ import annotations

import json


def page_html(initial: dict) -> str:
    """The page, with the current state embedded so it shows figures at once."""
    data = json.dumps(initial, allow_nan=False).replace("<", "\\u003c")
    return _PAGE.replace("/*INITIAL*/null", data)


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>stealsearch</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.2em;color:#222;background:#fafafa}
h1{font-size:1.3em;margin:0 0 .6em} h2{font-size:1.1em;margin:.2em 0}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em;margin:0 0 1em}
table{border-collapse:collapse} td,th{padding:2px 10px;text-align:right}
th{color:#666;font-weight:normal} .charts{display:flex;flex-wrap:wrap;gap:1em}
svg{background:#fff;border:1px solid #eee} .muted{color:#888}
.bar{height:10px;background:#eee;width:300px;display:inline-block}
.bar span{display:block;height:10px;background:#4a7}
table.workers{margin:.4em 0} tr.idle td{color:#b60}
</style></head><body>
<h1>stealsearch <span class="muted" id="updated"></span></h1>
<div id="sweeps"></div><div id="searches"><p class="muted">no search yet</p></div>
<script>
"use strict";
const INITIAL = /*INITIAL*/null;
const NS = "http://www.w3.org/2000/svg";
function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4))
                                   : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function fmt(v) {
  if (v === null || v === undefined) return "-";
  if (typeof v !== "number") return String(v);
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toPrecision(3) + "G";
  if (a >= 1e6) return (v / 1e6).toPrecision(3) + "M";
  if (a >= 1e4) return (v / 1e3).toPrecision(3) + "k";
  return Number.isInteger(v) ? String(v) : v.toPrecision(3);
}
function lines(title, t, series, w, h) {
  const svg = el("svg:svg", {width: w, height: h});
  svg.appendChild(el("svg:text", {x: 6, y: 14, "font-size": 12}, title));
  const all = series.flatMap(s => s.v).filter(v => v !== null);
  if (!all.length || t.length < 1) return svg;
  let lo = Math.min(...all), hi = Math.max(...all);
  if (hi === lo) { hi += 1; lo -= 1; }
  const tmax = Math.max(t[t.length - 1], 1e-9), pad = 22;
  const X = x => pad + (w - 2 * pad) * x / tmax, Y = y => h - pad - (h - 2 * pad) * (y - lo) / (hi - lo);
  series.forEach((s, i) => {
    const pts = [];
    t.forEach((x, j) => { if (s.v[j] !== null) pts.push(X(x).toFixed(1) + "," + Y(s.v[j]).toFixed(1)); });
    svg.appendChild(el("svg:polyline", {points: pts.join(" "), fill: "none", stroke: s.c, "stroke-width": 2}));
    svg.appendChild(el("svg:text", {x: w - 110, y: 14 + 14 * i, "font-size": 11, fill: s.c},
                       s.n + " " + fmt(s.v[s.v.length - 1])));
  });
  svg.appendChild(el("svg:text", {x: pad, y: h - 4, "font-size": 10, fill: "#888"},
                     fmt(lo) + " .. " + fmt(hi) + " over " + tmax.toFixed(1) + " s"));
  return svg;
}
function bars(title, rates, w) {
  const names = Object.keys(rates).sort(), bh = 16, h = 24 + bh * names.length;
  const svg = el("svg:svg", {width: w, height: Math.max(h, 40)});
  svg.appendChild(el("svg:text", {x: 6, y: 14, "font-size": 12}, title));
  const mx = Math.max(1e-9, ...names.map(n => rates[n]));
  names.forEach((n, i) => {
    const y = 20 + i * bh, bw = (w - 200) * rates[n] / mx;
    svg.appendChild(el("svg:text", {x: 6, y: y + 11, "font-size": 10}, n.replace(/^.*:\\/\\//, "")));
    svg.appendChild(el("svg:rect", {x: 130, y: y + 2, width: Math.max(bw, 0.5), height: bh - 4, fill: "#47a"}));
    svg.appendChild(el("svg:text", {x: 134 + bw, y: y + 11, "font-size": 10, "class": "rate"}, fmt(rates[n]) + "/s"));
  });
  return svg;
}
function pct(f, state) {
  if (f === null || f === undefined) return "-";
  return f >= 1 ? "100%" : "~" + Math.min(99, Math.floor(100 * f)) + "%";
}
function clock(sec) {
  sec = Math.max(0, Math.floor(sec));
  const h = Math.floor(sec / 3600), m = Math.floor(sec / 60) % 60, x = sec % 60;
  const two = v => (v < 10 ? "0" : "") + v;
  return h ? h + ":" + two(m) + ":" + two(x) : m + ":" + two(x);
}
// per worker: nodes, nodes/s, local and shared stack sizes, idle; a column only when some
// worker's entry carries it (the snapshot says what the backend knows)
function workerTable(s) {
  const t = el("table", {"class": "workers"});
  const names = Object.keys(s.workers).sort();
  const has = k => names.some(n => s.workers[n][k] !== undefined && s.workers[n][k] !== null);
  const cols = [["nodes", "nodes"], ["local", "local"], ["stack", "stack"], ["shared", "shared"]]
    .filter(([k]) => has(k) && !(k === "stack" && has("local")));
  row(t, ["worker", "nodes/s"].concat(cols.map(c => c[1]), has("idle") ? ["idle"] : []), true);
  names.forEach(n => {
    const w = s.workers[n], r = s.worker_rates[n];
    const cells = [n.replace(/^.*:\\/\\//, ""), r === undefined ? "-" : fmt(r)]
      .concat(cols.map(c => fmt(w[c[0]])));
    if (has("idle")) cells.push(w.idle === true ? "idle" : w.idle === false ? "busy" : "-");
    const tr = el("tr", w.idle === true ? {"class": "idle"} : {});
    cells.forEach(x => tr.appendChild(el("td", {}, x)));
    t.appendChild(tr);
  });
  return t;
}
function row(table, cells, head) {
  const tr = el("tr");
  cells.forEach(c => tr.appendChild(el(head ? "th" : "td", {}, c)));
  table.appendChild(tr);
}
function render(d) {
  document.getElementById("updated").textContent = "updated " + new Date(d.time * 1000).toLocaleTimeString();
  const sw = document.getElementById("sweeps");
  sw.replaceChildren();
  d.sweeps.forEach(s => {
    const c = el("div", {"class": "card sweep", "data-id": s.id});
    c.appendChild(el("h2", {}, "sweep " + (s.name || s.id) + " (" + s.state + ")"));
    const t = el("table");
    row(t, ["total", "done", "ok", "failed", "timeout", "running", "remaining"], true);
    row(t, [s.total, s.done, s.ok, s.failed, s.timeout, s.running, s.remaining].map(fmt));
    c.appendChild(t);
    const b = el("div", {"class": "bar"}), f = el("span");
    f.style.width = (100 * (s.done || 0) / Math.max(1, s.total || 0)) + "%";
    b.appendChild(f); c.appendChild(b);
    sw.appendChild(c);
  });
  const se = document.getElementById("searches");
  if (!d.searches.length) return;
  se.replaceChildren();
  d.searches.forEach(s => {
    const c = el("div", {"class": "card search", "data-id": s.id});
    c.appendChild(el("h2", {}, (s.label || "search " + s.id) + " (" + s.state + ")"));
    const t = el("table", {"class": "figures"});
    const est = s.fraction_done !== null && s.fraction_done !== undefined;
    row(t, ["nodes", "nodes/s", "steals", "incumbent", "bound", "workers", "idle", "done", "ETA",
            "snapshots"], true);
    row(t, [fmt(s.nodes), fmt(s.nodes_per_s), fmt(s.steals), fmt(s.incumbent), fmt(s.bound),
            fmt(Object.keys(s.workers).length), fmt(s.idle_workers), pct(s.fraction_done, s.state),
            est && s.eta !== null && s.eta !== undefined ? clock(s.eta) : "-", fmt(s.snapshots)]);
    c.appendChild(t);
    if (est) {
      const b = el("div", {"class": "bar done"}), f = el("span");
      f.style.width = (100 * s.fraction_done) + "%";
      b.appendChild(f); c.appendChild(b);
    }
    c.appendChild(workerTable(s));
    const ch = el("div", {"class": "charts"});
    ch.appendChild(bars("nodes/s per worker", s.worker_rates, 460));
    ch.appendChild(lines("steals", s.series.t, [{n: "steals", c: "#a54", v: s.series.steals}], 360, 160));
    if (s.series.incumbent.some(v => v !== null) || s.series.bound.some(v => v !== null))
      ch.appendChild(lines("incumbent / bound", s.series.t,
        [{n: "incumbent", c: "#2a6", v: s.series.incumbent}, {n: "bound", c: "#c33", v: s.series.bound}], 360, 160));
    if ((s.series.fraction_done || []).some(v => v !== null))
      ch.appendChild(lines("estimated fraction done", s.series.t,
        [{n: "done", c: "#47a", v: s.series.fraction_done}], 360, 160));
    c.appendChild(ch);
    se.appendChild(c);
  });
}
async function poll() {
  try {
    const r = await fetch("stealsearch/json".replace(/^/, location.pathname.replace(/stealsearch\\/?$/, "")),
                          {cache: "no-store"});
    if (r.ok) render(await r.json());
  } catch (e) { /* the scheduler went away: keep the last figures */ }
  setTimeout(poll, 1000);
}
if (INITIAL) render(INITIAL);
setTimeout(poll, 1000);
</script></body></html>
"""
