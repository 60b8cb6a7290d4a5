"""A real sweep on the session's LocalCluster publishes its progress to /stealsearch."""
import json
import time
import urllib.request

from stealsearch.engine import monitor
from stealsearch.engine.sweep import load_grid, run_sweep


def cube(*, x: int) -> dict:
    """x**3; 7 fails."""
    if x == 7:
        raise ValueError("seven")
    return {"cube": x ** 3}


def test_sweep_progress_on_the_page(tmp_path, cluster4):
    grid = load_grid({"name": "watched", "items": [
        {"kind": "cube", "instance": {"x": [1, 2, 3, 7, 5]}}]}, {"cube": cube})
    summary = run_sweep(grid, tmp_path, client=cluster4, progress=False)
    assert (summary.total, summary.ok, summary.failed) == (5, 4, 1)
    with urllib.request.urlopen(monitor.page_url(cluster4) + "/json", timeout=10) as r:
        d = json.loads(r.read())
    sweep = next(s for s in d["sweeps"] if s["name"] == "watched")
    assert sweep["state"] == "done"
    assert (sweep["total"], sweep["done"], sweep["ok"], sweep["failed"], sweep["running"],
            sweep["remaining"]) == (5, 5, 4, 1, 0, 0)
    # leave the shared cluster idle for the next test
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(cluster4.processing().values()):
        time.sleep(0.05)
