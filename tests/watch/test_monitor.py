"""The search page on the scheduler's dashboard: snapshots in, figures out (real HTTP)."""
import json
import urllib.request

import pytest

from stealsearch.engine import monitor
from stealsearch.engine.cluster import dashboard_link


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

    from stealsearch.engine.cluster import announce_dashboard

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
        "workers": {w[0]: {"nodes": 600, "stack": 30, "shared": 4},
                    w[1]: {"nodes": 400, "stack": 10, "shared": 0}}})
    assert monitor.publish(cluster4, "s-test", {
        "time": 102.0, "nodes": 5000, "steals": 7, "incumbent": 12, "bound": 15,
        "state": "done",
        "workers": {w[0]: {"nodes": 2600, "stack": 0, "shared": 0},
                    w[1]: {"nodes": 2400, "stack": 0, "shared": 0}}})
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
    assert s["workers"][w[0]] == {"nodes": 2600, "stack": 0, "shared": 0}
    assert s["series"] == {"t": [0.0, 2.0], "nodes": [1000, 5000], "steals": [2, 7],
                           "incumbent": [10, 12], "bound": [20, 15],
                           "fraction_done": [None, None]}
    status, ctype, html = get(base)
    assert status == 200 and ctype.startswith("text/html")
    assert "s-test" in html and "<script" in html    # the figures are in the page at once
    assert "<b>on</b>" not in html                   # the label is data, not markup
    assert "src=" not in html and "<link" not in html   # nothing fetched from elsewhere


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
    html = monitor.page_html(state.as_json())
    for piece in ("workerTable", "ETA", "estimated fraction done", '"idle"'):
        assert piece in html
