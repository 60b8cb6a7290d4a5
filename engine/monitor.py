"""The search page: ``/stealsearch`` on the scheduler's dashboard (its HTTP server).

A :class:`SearchMonitor` scheduler plugin (registered once per client, idempotent)
keeps, per search, a bounded history of snapshots that the client pushes, and per
sweep its progress; it serves them as

* ``/stealsearch``       a plain HTML page (no CDN, no external script: inline SVG drawn
                         by a few lines of JS polling the JSON below once a second);
* ``/stealsearch/json``  ``{"time", "searches": [...], "sweeps": [...]}``.

The client side is two calls (each one round trip to the scheduler, bounded by a
timeout; a failure is logged at debug level and never stops a search)::

    from stealsearch.engine import monitor
    monitor.publish(client, search_id, {
        "time": time.time(), "nodes": 12345, "steals": 17,
        "incumbent": 31, "bound": 34,                 # optimise mode; else omit/None
        "fraction_done": 0.42, "eta": 75.0,           # engine.estimate; else omit/None
        "idle_workers": 1,
        "workers": {addr: {"nodes": 6000, "local": 112, "shared": 8, "idle": False}, ...},
        "label": "clique on 4 workers", "state": "running",   # "done" at the end
    })
    monitor.publish_sweep(client, sweep_id, {"name": "grid", "total": 40, "done": 12,
                                             "ok": 11, "failed": 1, "running": 4})

Per worker, ``nodes`` (its nodes/s is drawn from two snapshots), ``local`` and
``shared`` (its stack's two portions; ``stack`` is the old name of ``local``) and ``idle``
are shown when present; a field absent from every worker is left out.  A sweep's card
shows its items done / ok / failed / timeout / running / remaining.

The page is served wherever the scheduler's dashboard is: for a LocalCluster of ours,
127.0.0.1 only (see :func:`stealsearch.engine.cluster.local_cluster`).
"""
from __future__ import annotations

import json
import logging
import math
import time
from collections import OrderedDict, deque

log = logging.getLogger(__name__)

PLUGIN_NAME = "stealsearch-monitor"
#: scheduler handlers the client calls
PUBLISH_OP = "stealsearch_monitor_publish"
#: snapshots kept per search (at one per ~0.5 s: the last few minutes)
HISTORY = 600
#: searches and sweeps kept (the oldest are forgotten first)
MAX_SEARCHES = 32
MAX_SWEEPS = 16
#: at most this many per-worker entries are kept per snapshot
MAX_WORKERS = 1024
#: seconds a publish may take before it is given up
PUBLISH_TIMEOUT = 5.0
#: the numbers kept per worker (and ``idle``, a flag), when a snapshot carries them
WORKER_FIELDS = ("nodes", "stack", "local", "shared")


def _number(v):
    """A finite int/float or None (what JSON and the page can show)."""
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(f):
        return None
    return int(f) if f == int(f) and abs(f) < 2**53 else f


def _text(v, limit: int = 200) -> str | None:
    return None if v is None else str(v)[:limit]


def clean_snapshot(snapshot: dict) -> dict:
    """The fields of a search snapshot the monitor keeps, as plain JSON values."""
    out = {k: _number(snapshot.get(k)) for k in
           ("time", "nodes", "steals", "incumbent", "bound", "fraction_done", "eta",
            "idle_workers")}
    if out["fraction_done"] is not None:
        out["fraction_done"] = min(1.0, max(0.0, float(out["fraction_done"])))
    if out["time"] is None:
        out["time"] = time.time()
    out["label"] = _text(snapshot.get("label"))
    out["state"] = _text(snapshot.get("state") or "running", 40)
    workers = {}
    for addr, w in list((snapshot.get("workers") or {}).items())[:MAX_WORKERS]:
        w = w if isinstance(w, dict) else {"nodes": w}
        entry = {k: _number(w.get(k)) for k in WORKER_FIELDS if k in w}
        if "idle" in w:
            entry["idle"] = None if w["idle"] is None else bool(w["idle"])
        workers[_text(addr)] = entry
    out["workers"] = workers
    return out


def clean_sweep(progress: dict) -> dict:
    out = {k: _number(progress.get(k)) for k in
           ("time", "total", "done", "ok", "failed", "timeout", "running", "remaining",
            "done_before")}
    if out["time"] is None:
        out["time"] = time.time()
    out["name"] = _text(progress.get("name"))
    out["state"] = _text(progress.get("state") or "running", 40)
    return out


def _rates(prev: dict | None, last: dict) -> dict:
    """Per-worker nodes/s between two snapshots."""
    if prev is None or last["time"] is None or prev["time"] is None:
        return {}
    dt = last["time"] - prev["time"]
    if dt <= 0:
        return {}
    rates = {}
    for addr, w in last["workers"].items():
        p = prev["workers"].get(addr)
        if p and w.get("nodes") is not None and p.get("nodes") is not None:
            rates[addr] = max(0.0, (w["nodes"] - p["nodes"]) / dt)
    return rates


def _eta(last: dict, rate: float | None) -> float | None:
    """The snapshot's ETA, or the estimated remaining nodes over the node rate."""
    if last["eta"] is not None or last["state"] != "running":
        return last["eta"]
    f, nodes = last["fraction_done"], last["nodes"]
    if f is None or not 0 < f < 1 or not rate or rate <= 0 or nodes is None:
        return None
    return nodes * (1 - f) / f / rate


class MonitorState:
    """What the page shows; lives in the scheduler (plain Python, testable alone)."""

    def __init__(self, history: int = HISTORY):
        self.history = history
        self.searches: OrderedDict[str, dict] = OrderedDict()
        self.sweeps: OrderedDict[str, dict] = OrderedDict()

    def add_search(self, search_id: str, snapshot: dict) -> None:
        snap = clean_snapshot(snapshot)
        entry = self.searches.get(search_id)
        if entry is None:
            entry = {"id": search_id, "started": snap["time"],
                     "history": deque(maxlen=self.history)}
            self.searches[search_id] = entry
            while len(self.searches) > MAX_SEARCHES:
                self.searches.popitem(last=False)
        entry["history"].append(snap)

    def add_sweep(self, sweep_id: str, progress: dict) -> None:
        entry = clean_sweep(progress)
        entry["id"] = sweep_id
        entry.setdefault("started", entry["time"])
        if sweep_id in self.sweeps:
            entry["started"] = self.sweeps[sweep_id]["started"]
        self.sweeps[sweep_id] = entry
        while len(self.sweeps) > MAX_SWEEPS:
            self.sweeps.popitem(last=False)

    def as_json(self) -> dict:
        searches = []
        for entry in reversed(self.searches.values()):       # newest first
            hist = list(entry["history"])
            last = hist[-1]
            prev = hist[-2] if len(hist) > 1 else None
            t0 = entry["started"]
            rate = (None if prev is None or last["time"] <= prev["time"]
                    or last["nodes"] is None or prev["nodes"] is None else
                    (last["nodes"] - prev["nodes"]) / (last["time"] - prev["time"]))
            searches.append({
                "id": entry["id"], "label": last["label"], "state": last["state"],
                "started": t0, "updated": last["time"], "snapshots": len(hist),
                "nodes": last["nodes"], "steals": last["steals"],
                "incumbent": last["incumbent"], "bound": last["bound"],
                "fraction_done": last["fraction_done"], "eta": _eta(last, rate),
                "idle_workers": last["idle_workers"],
                "workers": last["workers"], "worker_rates": _rates(prev, last),
                "nodes_per_s": rate,
                "series": {
                    "t": [round(s["time"] - t0, 3) for s in hist],
                    "nodes": [s["nodes"] for s in hist],
                    "steals": [s["steals"] for s in hist],
                    "incumbent": [s["incumbent"] for s in hist],
                    "bound": [s["bound"] for s in hist],
                    "fraction_done": [s["fraction_done"] for s in hist],
                },
            })
        sweeps = [dict(s) for s in reversed(self.sweeps.values())]
        return {"time": time.time(), "searches": searches, "sweeps": sweeps}


# --------------------------------------------------------------------------- scheduler side

try:
    from distributed.diagnostics.plugin import SchedulerPlugin
except ImportError:  # pragma: no cover - distributed is a dependency
    SchedulerPlugin = object


def _http_prefix(app) -> str:
    """The prefix the scheduler's routes are under ('/' unless --dashboard-prefix)."""
    try:
        for rule in app.wildcard_router.rules:
            path = getattr(rule.matcher, "_path", None)
            if path and path.rstrip("$").endswith("/health"):
                return path.rstrip("$")[: -len("health")]
    except AttributeError:
        pass
    return "/"


class SearchMonitor(SchedulerPlugin):
    """Keeps the searches' snapshots and serves ``/stealsearch`` (see the module doc)."""

    name = PLUGIN_NAME
    idempotent = True

    def __init__(self):
        self.state = MonitorState()
        self.scheduler = None

    def start(self, scheduler) -> None:
        self.scheduler = scheduler
        scheduler.handlers[PUBLISH_OP] = self._publish
        app = getattr(scheduler, "http_application", None)
        if app is None or getattr(scheduler, "_stealsearch_routes", False):
            return
        from tornado import web

        monitor = self

        class Page(web.RequestHandler):
            def get(self):
                self.set_header("Content-Type", "text/html; charset=utf-8")
                self.set_header("Cache-Control", "no-store")
                self.write(page_html(monitor.current().state.as_json()))

        class Json(web.RequestHandler):
            def get(self):
                self.set_header("Content-Type", "application/json")
                self.set_header("Cache-Control", "no-store")
                self.write(json.dumps(monitor.current().state.as_json(), allow_nan=False))

        Page.monitor = Json.monitor = self
        prefix = _http_prefix(app)
        app.add_handlers(r".*", [(prefix + "stealsearch/?", Page),
                                 (prefix + "stealsearch/json", Json)])
        scheduler._stealsearch_routes = True

    def current(self) -> "SearchMonitor":
        """The plugin the scheduler holds now (routes are added once, by the first)."""
        if self.scheduler is not None:
            return self.scheduler.plugins.get(PLUGIN_NAME, self)
        return self

    def _publish(self, kind: str = "search", key: str = "", data: dict | None = None):
        state = self.current().state
        if kind == "sweep":
            state.add_sweep(str(key), data or {})
        else:
            state.add_search(str(key), data or {})
        return "OK"


# --------------------------------------------------------------------------- client side

_registered: "set[int]" = set()


def ensure_monitor(client) -> bool:
    """Register the :class:`SearchMonitor` on ``client``'s scheduler (once per client;
    the plugin is idempotent, so another client of the same scheduler reuses it).
    False if the scheduler would not take it (the page is then simply absent)."""
    key = id(client)
    if key in _registered and getattr(client, "_stealsearch_monitor", False):
        return True
    try:
        client.register_plugin(SearchMonitor(), name=PLUGIN_NAME)
    except Exception as exc:  # noqa: BLE001 - watching must never stop a search
        log.debug("the search monitor could not be registered: %r", exc)
        return False
    client._stealsearch_monitor = True
    _registered.add(key)
    return True


def _send(client, kind: str, key: str, data: dict) -> bool:
    if not ensure_monitor(client):
        return False
    try:
        client.sync(getattr(client.scheduler, PUBLISH_OP), kind=kind, key=key, data=data,
                    callback_timeout=PUBLISH_TIMEOUT)
        return True
    except Exception as exc:  # noqa: BLE001 - watching must never stop a search
        log.debug("publishing to the search monitor failed: %r", exc)
        return False


def publish(client, search_id: str, snapshot: dict) -> bool:
    """Push one snapshot of search ``search_id`` (see the module doc for its keys)."""
    return _send(client, "search", search_id, clean_snapshot(snapshot))


def publish_sweep(client, sweep_id: str, progress: dict) -> bool:
    """Push the progress of sweep ``sweep_id`` (total, done, ok, failed, running...)."""
    return _send(client, "sweep", sweep_id, clean_sweep(progress))


class SearchWatch:
    """The driver's side in three calls: publish a search's snapshots at most every
    ``interval`` seconds, and its last state at the end::

        watch = SearchWatch(client, search_id, label=f"{problem.name} on {n} workers")
        try:
            while searching:
                ...
                watch.update(snapshot)          # the dict of the module doc
        finally:
            watch.close(state)                  # "done", "interrupted", "failed"

    A failed publish is logged at debug level and never stops the search; after three
    failures in a row the watch gives up for this search (a scheduler that refuses it).
    """

    def __init__(self, client, search_id: str, label: str | None = None, *,
                 interval: float = 0.5, enabled: bool = True):
        self.client, self.search_id, self.label = client, str(search_id), label
        self.interval = interval
        self.enabled = bool(enabled) and client is not None
        self._last_sent = float("-inf")
        self._last: dict | None = None
        self._failures = 0

    def update(self, snapshot: dict, *, force: bool = False) -> None:
        if not self.enabled:
            return
        self._last = dict(snapshot)
        now = time.monotonic()
        if force or now - self._last_sent >= self.interval:
            self._last_sent = now
            self._send(self._last)

    def _send(self, snapshot: dict) -> None:
        if self.label is not None:
            snapshot.setdefault("label", self.label)
        if publish(self.client, self.search_id, snapshot):
            self._failures = 0
        else:
            self._failures += 1
            if self._failures >= 3:
                self.enabled = False

    def close(self, state: str = "done", snapshot: dict | None = None) -> None:
        if not self.enabled or (snapshot is None and self._last is None):
            return      # nothing was shown: no page entry to finish (and no call to a
                        # scheduler that may be gone, e.g. the reason the search ended)
        last = dict(snapshot if snapshot is not None else (self._last or {}))
        last["state"] = state
        last["time"] = time.time()
        self._send(last)
        self.enabled = False


def page_url(client) -> str | None:
    """``http://HOST:PORT/stealsearch`` of ``client``'s scheduler, or None."""
    from .cluster import dashboard_link

    link = dashboard_link(client)
    return None if link is None else link.rsplit("/status", 1)[0].rstrip("/") + "/stealsearch"


# --------------------------------------------------------------------------- the page

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
