"""The search page: ``/stealsearch``, a panel of the scheduler's Dask dashboard.

A :class:`SearchMonitor` scheduler plugin (registered once per client, idempotent)
keeps, per search, a bounded history of snapshots that the client pushes, and per
sweep its progress; it serves them as

* ``/stealsearch``       a bokeh document of the dashboard, linked from the navigation
                         bar of every Dask page (:mod:`stealsearch.engine.deploy.monitor_page`:
                         the incumbent, bound and gap, the search's estimated progress,
                         nodes and values over time, per-worker totals, the sweeps);
* ``/stealsearch/json``  ``{"time", "searches": [...], "sweeps": [...]}`` (what the panel
                         draws, for scripts and tests).

The client side is two calls (each one round trip to the scheduler, bounded by a
timeout; a failure is logged at debug level and never stops a search)::

    from stealsearch.engine.deploy import monitor
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

``nodes`` are the search's totals so far: all workers', and per worker its own over the
whole search (every epoch, not the current one).  ``incumbent`` (the best value found
so far, in the problem's own sense) and ``bound`` (the proven bound) are states: a
snapshot without them keeps the last known values, so a page always shows the best so
far and the last bound; ``gap`` is computed from them.  Per worker, ``nodes`` (its
nodes/s is drawn from two snapshots), ``local`` and ``shared`` (its stack's two portions)
and ``idle`` are shown when present.  A sweep's
entry holds its items done / ok / failed / timeout / running / remaining.

The page is served wherever the scheduler's dashboard is: for a LocalCluster of ours,
127.0.0.1 only (see :func:`stealsearch.engine.deploy.cluster.local_cluster`).
"""
from __future__ import annotations

import json
import logging
import math
import time
from collections import OrderedDict, deque

from ..core.progress import MIN_FRACTION, gap

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
WORKER_FIELDS = ("nodes", "local", "shared")


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
    """The snapshot's ETA, or the estimated remaining nodes over the node rate; none
    while the estimate is below the live line's ``MIN_FRACTION`` (it means nothing yet)."""
    if last["eta"] is not None or last["state"] != "running":
        return last["eta"]
    f, nodes = last["fraction_done"], last["nodes"]
    if f is None or not MIN_FRACTION <= f < 1 or not rate or rate <= 0 or nodes is None:
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
        elif entry["history"]:
            # states, not events: a snapshot without them keeps the last known values
            last = entry["history"][-1]
            for k in ("incumbent", "bound", "label"):
                if snap[k] is None:
                    snap[k] = last[k]
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
                "gap": gap(last["incumbent"], last["bound"]),
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

        from .monitor_page import add_panel

        monitor = self

        class Json(web.RequestHandler):
            def get(self):
                self.set_header("Content-Type", "application/json")
                self.set_header("Cache-Control", "no-store")
                self.write(json.dumps(monitor.current().state.as_json(), allow_nan=False))

        prefix = _http_prefix(app)
        app.add_handlers(r".*", [(prefix + "stealsearch/json", Json)])
        scheduler._stealsearch_routes = True
        try:
            add_panel(scheduler, lambda: monitor.current().state.as_json(), prefix)
        except Exception as exc:  # noqa: BLE001 - the JSON stays; watching never stops a search
            log.warning("the stealsearch dashboard panel could not be added: %r", exc)

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

    def last(self, **figures) -> dict | None:
        """The last snapshot updated with ``figures`` (None when none was shown)."""
        return None if self._last is None else {**self._last, **figures}

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
