"""The search panel of the Dask dashboard: ``/stealsearch``, a bokeh document beside
Dask's own pages and linked from their navigation bar.

:class:`SearchPanel` draws what :class:`stealsearch.engine.deploy.monitor.MonitorState` holds
(its ``as_json()`` dict), redrawn every ``REFRESH_MS``:

* the headline of the search chosen (the newest by default): state, nodes, node rate,
  the incumbent (best so far), the proven bound and their gap, the workers busy and
  idle, steals, elapsed time;
* the search's own progress: the estimated fraction of the tree done and the ETA
  (:mod:`stealsearch.engine.core.estimate`), not Dask's count of epoch tasks;
* nodes over time, and the incumbent and the bound over time (seconds since the
  search started, on axes with ticks);
* per worker: its total nodes over the whole search (a bar each), its node rate, the
  two portions of its stack and whether it is idle;
* every sweep's items: done, ok, failed, timed out, running, remaining.

:func:`add_panel` registers the document with the scheduler's HTTP server (a bokeh
application like Dask's own, under the dashboard's prefix, with Dask's page template)
and adds ``stealsearch`` to the navigation bar of every dashboard page.  It needs the
dashboard (bokeh); without one the JSON of :mod:`stealsearch.engine.deploy.monitor` is served alone.
"""
from __future__ import annotations

import logging
import math
import time

from ..core import progress

log = logging.getLogger(__name__)

#: the panel's path under the dashboard's prefix, and its name in the navigation bar
PAGE = "stealsearch"
#: milliseconds between redraws of an open page
REFRESH_MS = 500

_EMPTY_SERIES = {"t": [], "nodes": [], "incumbent": [], "bound": []}
_EMPTY_WORKERS = {"worker": [], "nodes": [], "nodes_text": [], "rate": [], "local": [],
                  "shared": [], "state": []}
_EMPTY_SWEEPS = {"name": [], "state": [], "done": [], "total": [], "ok": [], "failed": [],
                 "timeout": [], "running": [], "remaining": []}


def fmt(v) -> str:
    """A number as the panel shows it (1.23M, 45.6k, 17), '-' for None."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if not isinstance(v, (int, float)):
        return str(v)
    a = abs(v)
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e4)):
        if a >= scale:
            s = 1e3 if unit == "k" else scale
            return f"{v / s:.3g}{unit}"
    return str(int(v)) if float(v).is_integer() else f"{v:.3g}"


def clock(seconds) -> str:
    """Seconds as the live line writes them, '-' for None."""
    return "-" if seconds is None else progress.clock(seconds)


def percent(fraction) -> str:
    """The fraction done as the live line writes it, '-' for None and below the line's
    ``MIN_FRACTION`` (an estimate that means nothing yet)."""
    if fraction is None or fraction < progress.MIN_FRACTION:
        return "-"
    return progress.percent_done(fraction)


def _nan(v):
    return float("nan") if v is None else v


def headline(s: dict) -> dict:
    """The figures of a search's headline (strings, as shown), from its JSON entry."""
    workers = s.get("workers") or {}
    idle = s.get("idle_workers")
    return {
        "search": s.get("label") or f"search {s.get('id')}",
        "state": s.get("state") or "-",
        "nodes": fmt(s.get("nodes")),
        "nodes/s": fmt(s.get("nodes_per_s")),
        "incumbent": fmt(s.get("incumbent")),
        "bound": fmt(s.get("bound")),
        "gap": "-" if s.get("gap") is None else f"{100 * s['gap']:.1f}%",
        "done": percent(s.get("fraction_done")),
        "ETA": clock(s.get("eta")) if s.get("state") == "running" else "-",
        "workers": (f"{len(workers) - idle} busy, {idle} idle" if idle is not None and workers
                    else fmt(len(workers)) if workers else "-"),
        "steals": fmt(s.get("steals")),
        "elapsed": clock(None if s.get("updated") is None or s.get("started") is None
                         else s["updated"] - s["started"]),
    }


def _headline_html(h: dict) -> str:
    from html import escape

    cells = "".join(
        f'<td style="padding:2px 14px 2px 0"><div style="color:#777;font-size:11px">'
        f'{escape(k)}</div><div class="ss-{escape(k.replace("/", "-"))}" '
        f'style="font-size:18px">{escape(v)}</div></td>'
        for k, v in h.items() if k != "search")
    return (f'<div style="font-size:15px;margin:4px 0"><b class="ss-search">'
            f'{escape(h["search"])}</b></div><table><tr>{cells}</tr></table>')


class SearchPanel:
    """The bokeh models of the panel and their update from the monitor's state.

    ``state``: a callable returning :meth:`MonitorState.as_json`'s dict.  Plain bokeh
    models: the panel can be built and updated without a server (the tests do)."""

    def __init__(self, state, *, width: int = 1180):
        from bokeh.layouts import column, row
        from bokeh.models import (ColumnDataSource, Div, FactorRange, NumeralTickFormatter,
                                  Range1d, Select)
        from bokeh.plotting import figure

        self.state = state
        self.chosen = ""             # "" = the newest search
        half = width // 2 - 10
        self.select = Select(title="search", value="", options=[("", "newest")], width=420)
        self.select.on_change("value", self._choose)
        self.updated = Div(text="", width=400)
        self.head = Div(text='<p style="color:#777">no search yet</p>', width=width)

        self.progress_src = ColumnDataSource({"y": ["done"], "right": [0.0]})
        self.progress = figure(title="search progress (estimated fraction of the tree "
                                     "done): no estimate yet",
                               height=90, width=width, y_range=FactorRange("done"),
                               x_range=Range1d(0, 100), toolbar_location=None, tools="")
        self.progress.hbar(y="y", right="right", height=0.7, color="#4a7",
                           source=self.progress_src)
        self.progress.xaxis.axis_label = "% of the tree (estimate)"
        self.progress.yaxis.visible = False

        self.series = ColumnDataSource(dict(_EMPTY_SERIES))
        self.nodes_fig = figure(title="nodes searched", height=260, width=half,
                                toolbar_location=None, tools="")
        self.nodes_fig.line(x="t", y="nodes", source=self.series, line_width=2, color="#47a")
        self.nodes_fig.xaxis.axis_label = "seconds since the search started"
        self.nodes_fig.yaxis.axis_label = "nodes"
        self.nodes_fig.yaxis.formatter = NumeralTickFormatter(format="0.[00]a")

        self.value_fig = figure(title="incumbent and proven bound", height=260, width=half,
                                toolbar_location=None, tools="")
        self.value_fig.step(x="t", y="incumbent", source=self.series, mode="after",
                            line_width=2, color="#2a6", legend_label="incumbent (best so far)")
        self.value_fig.step(x="t", y="bound", source=self.series, mode="after",
                            line_width=2, color="#c33", line_dash="dashed",
                            legend_label="bound")
        # below the plot: the two lines meet where the search closes the gap
        self.value_fig.add_layout(self.value_fig.legend[0], "below")
        self.value_fig.legend.orientation = "horizontal"
        self.value_fig.xaxis.axis_label = "seconds since the search started"
        self.value_fig.yaxis.axis_label = "objective"

        self.workers = ColumnDataSource(dict(_EMPTY_WORKERS))
        self.worker_fig = figure(title="nodes per worker (whole search)", height=260,
                                 width=half, y_range=FactorRange(), toolbar_location=None,
                                 tools="")
        self.worker_fig.hbar(y="worker", right="nodes", height=0.7, color="#47a",
                             source=self.workers)
        self.worker_fig.xaxis.axis_label = "nodes"
        self.worker_fig.xaxis.formatter = NumeralTickFormatter(format="0.[00]a")
        self.worker_fig.x_range.start = 0
        # the tables are Divs of plain HTML (escaped): redrawn whole with their source
        self.worker_table = Div(text="", width=half)
        self.sweeps = ColumnDataSource(dict(_EMPTY_SWEEPS))
        self.sweep_title = Div(text="<b>sweeps</b>", width=width)
        self.sweep_table = Div(text="", width=width)
        self.root = column(row(self.select, self.updated), self.head, self.progress,
                           row(self.nodes_fig, self.value_fig),
                           row(self.worker_fig, self.worker_table),
                           self.sweep_title, self.sweep_table)

    def _choose(self, attr, old, new) -> None:
        self.chosen = new
        self.update()

    def update(self) -> None:
        d = self.state()
        self.updated.text = (f'<span style="color:#777">updated '
                             f'{time.strftime("%H:%M:%S", time.localtime(d["time"]))}</span>')
        searches = d.get("searches") or []
        options = [("", "newest")] + [(s["id"], f"{s.get('label') or s['id']} ({s['state']})")
                                      for s in searches]
        if options != [tuple(o) for o in self.select.options]:
            self.select.options = options
        s = next((x for x in searches if x["id"] == self.chosen), None) \
            or (searches[0] if searches else None)
        self._sweeps(d.get("sweeps") or [])
        if s is None:
            return
        self.head.text = _headline_html(headline(s))
        f = s.get("fraction_done")
        _set(self.progress_src, {"y": ["done"], "right": [0.0 if f is None else 100 * f]})
        self.progress.title.text = (
            "search progress (estimated fraction of the tree done): "
            + ("no estimate yet" if f is None else
               f"{percent(f)}" + (f", ETA {clock(s.get('eta'))}"
                                  if s.get("eta") is not None and s["state"] == "running"
                                  else "")))
        ser = s["series"]
        _set(self.series, {"t": ser["t"], "nodes": [_nan(v) for v in ser["nodes"]],
                            "incumbent": [_nan(v) for v in ser["incumbent"]],
                            "bound": [_nan(v) for v in ser["bound"]]})
        workers = s.get("workers") or {}
        names = sorted(workers)
        rates = s.get("worker_rates") or {}
        short = [n.split("://")[-1] for n in names]
        self.worker_fig.y_range.factors = short
        _set(self.workers, {
            "worker": short,
            "nodes": [workers[n].get("nodes") or 0 for n in names],
            "nodes_text": [fmt(workers[n].get("nodes")) for n in names],
            "rate": [fmt(rates.get(n)) for n in names],
            "local": [fmt(workers[n].get("local")) for n in names],
            "shared": [fmt(workers[n].get("shared")) for n in names],
            "state": ["-" if workers[n].get("idle") is None else
                      "idle" if workers[n]["idle"] else "busy" for n in names]})
        d = self.workers.data
        self.worker_table.text = html_table(
            "ss-workers-table", ["worker", "nodes", "nodes/s", "local rows", "shared rows",
                                 "state"],
            zip(d["worker"], d["nodes_text"], d["rate"], d["local"], d["shared"], d["state"]))

    def _sweeps(self, sweeps: list) -> None:
        self.sweep_title.text = "<b>sweeps</b>" + ("" if sweeps else
                                                   ' <span style="color:#777">none</span>')
        _set(self.sweeps, {f: [fmt(x.get(f)) if f not in ("name", "state") else
                                (x.get(f) or "-") for x in sweeps] for f in _EMPTY_SWEEPS})
        d = self.sweeps.data
        self.sweep_table.text = html_table("ss-sweeps-table", list(_EMPTY_SWEEPS),
                                           zip(*(d[f] for f in _EMPTY_SWEEPS))) if sweeps else ""


def html_table(cls: str, header: list, rows) -> str:
    """A small HTML table (every cell escaped: labels and addresses are data)."""
    from html import escape

    cell = 'style="padding:2px 12px 2px 0;text-align:{}"'
    head = "".join(f"<th {cell.format('left')}>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td {cell.format('left' if i == 0 else 'right')}>"
                                    f"{escape(str(v))}</td>" for i, v in enumerate(r)) + "</tr>"
                   for r in rows)
    return (f'<table class="{cls}" style="border-collapse:collapse;font-size:13px">'
            f"<tr>{head}</tr>{body}</table>")


def _set(source, data: dict) -> None:
    """New columns for a data source, as Dask's own panels set theirs (in place, and
    not at all when nothing changed: an open page redraws only what moved)."""
    if source.data != data:
        source.data.update(data)


def _doc(state, extra, doc) -> None:
    """The bokeh document of one browser session (Dask's template and theme)."""
    from distributed.dashboard.components.scheduler import BOKEH_THEME, env

    panel = SearchPanel(state)
    panel.update()
    doc.title = "Dask: stealsearch"
    doc.add_root(panel.root)
    doc.add_periodic_callback(panel.update, REFRESH_MS)
    doc.template = env.get_template("simple.html")
    doc.template_variables.update(extra)
    doc.theme = BOKEH_THEME


def add_panel(scheduler, state, prefix: str) -> bool:
    """Serve the panel at ``PREFIX/stealsearch`` on ``scheduler``'s dashboard and link it
    from the navigation bar; False when the scheduler has no bokeh dashboard."""
    app = scheduler.http_application
    try:
        from bokeh.server.server import BokehTornado
        from tornado.ioloop import IOLoop

        from distributed.dashboard.core import BokehApplication
        from distributed.dashboard.scheduler import template_variables
    except ImportError as exc:          # bokeh missing or of a version Dask refuses
        log.debug("no dashboard panel: %r", exc)
        return False
    if not any(isinstance(a, BokehTornado) for a in getattr(app, "applications", [])):
        return False           # started without a dashboard: respect that
    variables = template_variables(scheduler)
    bokeh_app = BokehApplication({"/" + PAGE: lambda server, extra, doc: _doc(state, extra, doc)},
                                 scheduler, prefix=prefix, template_variables=variables)
    app.add_application(bokeh_app)
    bokeh_app.initialize(IOLoop.current())
    bokeh_app.start()
    # every page's navigation bar (Dask's template) lists variables["pages"]; the list
    # is shared by the pages' documents, so the link shows on the pages opened from now
    if PAGE not in variables["pages"]:
        pages = variables["pages"]
        pages.insert(pages.index("info") if "info" in pages else len(pages), PAGE)
    return True
