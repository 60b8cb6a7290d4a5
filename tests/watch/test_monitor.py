"""The search panel of the Dask dashboard: snapshots in, figures out (real HTTP; the
bokeh panel built and updated without a browser; in a browser: test_page_browser.py)."""
import json
import urllib.request

import pytest

from stealsearch.engine.deploy import monitor
from stealsearch.engine.deploy.cluster import dashboard_link


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def test_dashboard_is_on_loopback_and_the_link_is_its_port(cluster4):
    link = dashboard_link(cluster4)
    assert link.startswith("http://127.0.0.1:") and link.endswith("/status")
    port = int(link.split(":")[2].split("/")[0])
    info = cluster4.scheduler_info()
    assert info["services"]["dashboard"] == port
    status, _, _ = get(f"http://127.0.0.1:{port}/health")
    assert status == 200


def test_announced_link_is_the_dashboard_port(cluster4):
    import io

    from stealsearch.engine.deploy.cluster import announce_dashboard

    out = io.StringIO()
    link = announce_dashboard(cluster4, file=out)
    printed = out.getvalue()
    assert printed.count("\n") == 1 and printed.startswith(f"dashboard: {link}")
    port = cluster4.scheduler_info()["services"]["dashboard"]
    assert link == f"http://127.0.0.1:{port}/status"
    assert get(link)[0] == 200                        # bokeh serves the status page


def test_two_snapshots_show_on_the_json_and_the_page(cluster4):
    assert monitor.ensure_monitor(cluster4)
    assert monitor.ensure_monitor(cluster4)          # once per client; idempotent
    w = ["tcp://127.0.0.1:1", "tcp://127.0.0.1:2"]
    assert monitor.publish(cluster4, "s-test", {
        "time": 100.0, "nodes": 1000, "steals": 2, "incumbent": 10, "bound": 20,
        "label": "clique <b>on</b> 2 workers",
        "workers": {w[0]: {"nodes": 600, "local": 30, "shared": 4},
                    w[1]: {"nodes": 400, "local": 10, "shared": 0}}})
    assert monitor.publish(cluster4, "s-test", {
        "time": 102.0, "nodes": 5000, "steals": 7, "incumbent": 12, "bound": 15,
        "state": "done",
        "workers": {w[0]: {"nodes": 2600, "local": 0, "shared": 0},
                    w[1]: {"nodes": 2400, "local": 0, "shared": 0}}})
    base = monitor.page_url(cluster4)
    assert base.startswith("http://127.0.0.1:") and base.endswith("/stealsearch")
    status, ctype, body = get(base + "/json")
    assert status == 200 and ctype.startswith("application/json")
    d = json.loads(body)
    s = next(s for s in d["searches"] if s["id"] == "s-test")
    assert s["nodes"] == 5000 and s["steals"] == 7 and s["state"] == "done"
    assert s["incumbent"] == 12 and s["bound"] == 15 and s["snapshots"] == 2
    assert s["nodes_per_s"] == pytest.approx(2000.0)
    assert s["worker_rates"] == {w[0]: pytest.approx(1000.0), w[1]: pytest.approx(1000.0)}
    assert s["workers"][w[0]] == {"nodes": 2600, "local": 0, "shared": 0}
    assert s["series"] == {"t": [0.0, 2.0], "nodes": [1000, 5000], "steals": [2, 7],
                           "incumbent": [10, 12], "bound": [20, 15],
                           "fraction_done": [None, None]}
    assert s["gap"] == pytest.approx(3 / 15)
    status, ctype, html = get(base)
    assert status == 200 and ctype.startswith("text/html")
    assert "Dask" in html and "bokeh" in html.lower()   # a bokeh document of the dashboard
    assert 'href="stealsearch"' in html                 # in the navigation bar
    # every Dask page links to it
    status, _, status_page = get(base.rsplit("/", 1)[0] + "/status")
    assert status == 200 and 'href="stealsearch"' in status_page


def test_incumbent_and_bound_are_states():
    """A snapshot without them keeps the last values: the best so far, the last bound."""
    state = monitor.MonitorState()
    state.add_search("k", {"time": 1.0, "nodes": 10, "incumbent": 14, "bound": 20})
    state.add_search("k", {"time": 2.0, "nodes": 20, "incumbent": None})
    state.add_search("k", {"time": 3.0, "nodes": 30, "incumbent": 15, "bound": 18})
    s = state.as_json()["searches"][0]
    assert s["series"]["incumbent"] == [14, 14, 15] and s["series"]["bound"] == [20, 20, 18]
    assert (s["incumbent"], s["bound"]) == (15, 18) and s["gap"] == pytest.approx(3 / 18)


def test_the_panel_draws_the_state():
    from stealsearch.engine.deploy.monitor_page import SearchPanel

    state = monitor.MonitorState()
    w = ["tcp://127.0.0.1:1", "tcp://127.0.0.1:2"]
    state.add_search("p", {"time": 5.0, "nodes": 1000, "incumbent": 30, "bound": 40,
                           "label": "clique <b>on</b> 2 workers", "fraction_done": 0.2,
                           "workers": {w[0]: {"nodes": 600, "local": 3, "shared": 1},
                                       w[1]: {"nodes": 400, "local": 0, "shared": 0,
                                              "idle": True}}})
    state.add_search("p", {"time": 7.0, "nodes": 3000, "incumbent": 31, "bound": 34,
                           "fraction_done": 0.5, "idle_workers": 1,
                           "workers": {w[0]: {"nodes": 2000, "idle": False},
                                       w[1]: {"nodes": 1000, "idle": True}}})
    state.add_sweep("g", {"name": "grid", "total": 8, "done": 3, "ok": 3})
    panel = SearchPanel(state.as_json)
    panel.update()
    head = panel.head.text
    assert "clique &lt;b&gt;on&lt;/b&gt; 2 workers" in head   # the label is data, not markup
    for cls, shown in (("ss-incumbent", "31"), ("ss-bound", "34"), ("ss-gap", "8.8%"),
                       ("ss-done", "~50%"), ("ss-nodes", "3000"), ("ss-workers", "1 busy, 1 idle")):
        assert f'class="{cls}" style="font-size:18px">{shown}<' in head, (cls, head)
    assert panel.series.data["t"] == [0.0, 2.0]
    assert panel.series.data["incumbent"] == [30, 31] and panel.series.data["bound"] == [40, 34]
    assert panel.workers.data["nodes"] == [2000, 1000]          # totals, per worker
    assert panel.workers.data["state"] == ["busy", "idle"]
    assert ">2000<" in panel.worker_table.text and ">idle<" in panel.worker_table.text
    assert list(panel.worker_fig.y_range.factors) == ["127.0.0.1:1", "127.0.0.1:2"]
    assert panel.progress_src.data["right"] == [50.0]
    assert "~50%" in panel.progress.title.text and "ETA" in panel.progress.title.text
    assert panel.sweeps.data["name"] == ["grid"] and panel.sweeps.data["done"] == ["3"]
    assert ">grid<" in panel.sweep_table.text
    # axes with labels (the old page had none)
    assert panel.nodes_fig.xaxis[0].axis_label.startswith("seconds")
    assert panel.value_fig.yaxis[0].axis_label == "objective"
    # choosing a search
    state.add_search("q", {"time": 8.0, "nodes": 5, "label": "second"})
    panel.update()
    assert "second" in panel.head.text                        # the newest by default
    panel.select.value = "p"
    assert "clique" in panel.head.text


def test_history_is_bounded():
    state = monitor.MonitorState(history=5)
    for i in range(20):
        state.add_search("x", {"time": i, "nodes": i * 10})
    for i in range(monitor.MAX_SEARCHES + 3):
        state.add_search(f"y{i}", {"time": i, "nodes": 1})
    d = state.as_json()
    assert len(d["searches"]) == monitor.MAX_SEARCHES
    assert "x" not in {s["id"] for s in d["searches"]}
    state = monitor.MonitorState(history=5)
    for i in range(20):
        state.add_search("x", {"time": i, "nodes": i * 10, "bound": float("nan")})
    s = state.as_json()["searches"][0]
    assert s["series"]["nodes"] == [150, 160, 170, 180, 190] and s["bound"] is None
    json.dumps(state.as_json(), allow_nan=False)


def test_search_watch_throttles_and_ends_with_the_state(cluster4):
    watch = monitor.SearchWatch(cluster4, "s-watch", label="uts on 2 workers", interval=3600)
    watch.update({"time": 1.0, "nodes": 10, "steals": 0})
    watch.update({"time": 2.0, "nodes": 20, "steals": 1})     # within the interval: kept
    watch.close("interrupted")                                 # sends the last one
    watch.update({"time": 3.0, "nodes": 30})                   # closed: ignored
    with urllib.request.urlopen(monitor.page_url(cluster4) + "/json", timeout=10) as r:
        d = json.loads(r.read())
    s = next(s for s in d["searches"] if s["id"] == "s-watch")
    assert s["snapshots"] == 2 and s["series"]["nodes"] == [10, 20]
    assert s["state"] == "interrupted" and s["label"] == "uts on 2 workers"


def test_estimate_and_per_worker_portions_and_idle_flags():
    state = monitor.MonitorState()
    w = ["tcp://127.0.0.1:1", "tcp://127.0.0.1:2"]
    state.add_search("e", {"time": 10.0, "nodes": 1000, "fraction_done": 0.1,
                           "workers": {w[0]: {"nodes": 500, "local": 12, "shared": 3, "idle": False},
                                       w[1]: {"nodes": 500, "local": 0, "shared": 0, "idle": True}}})
    state.add_search("e", {"time": 12.0, "nodes": 3000, "fraction_done": 0.25, "idle_workers": 1,
                           "workers": {w[0]: {"nodes": 2500, "local": 9, "shared": 1, "idle": False},
                                       w[1]: {"nodes": 500, "local": 0, "shared": 0, "idle": True}}})
    s = state.as_json()["searches"][0]
    assert s["fraction_done"] == 0.25 and s["idle_workers"] == 1
    # no ETA in the snapshot: estimated nodes left (3000 * 3) over the rate (1000/s)
    assert s["eta"] == pytest.approx(9.0)
    assert s["workers"][w[1]] == {"nodes": 500, "local": 0, "shared": 0, "idle": True}
    assert s["series"]["fraction_done"] == [0.1, 0.25]
    state.add_search("e", {"time": 13.0, "nodes": 3100, "fraction_done": 7, "eta": 4.5})
    s = state.as_json()["searches"][0]
    assert s["fraction_done"] == 1.0 and s["eta"] == 4.5          # clipped; given ETA kept


def test_no_eta_and_no_fraction_on_the_page_while_the_estimate_means_nothing():
    """Below the live line's MIN_FRACTION the page shows no ETA and no fraction done, as
    the line does (the first node of a Dask search gave an ETA of thousands of hours)."""
    from stealsearch.engine.core.progress import MIN_FRACTION
    from stealsearch.engine.deploy.monitor_page import headline

    state = monitor.MonitorState()
    state.add_search("t", {"time": 10.0, "nodes": 1, "fraction_done": 1e-9})
    state.add_search("t", {"time": 15.0, "nodes": 2, "fraction_done": 2e-9})
    s = state.as_json()["searches"][0]
    assert s["eta"] is None
    assert headline(s)["done"] == "-" and headline(s)["ETA"] == "-"
    state.add_search("t", {"time": 16.0, "nodes": 1002, "fraction_done": MIN_FRACTION})
    s = state.as_json()["searches"][0]
    assert s["eta"] == pytest.approx(1002 * 99 / 1000)
    assert headline(s)["done"] == "~1%"
