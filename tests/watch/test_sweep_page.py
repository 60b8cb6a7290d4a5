"""A real sweep on the session's LocalCluster publishes its progress to /stealsearch."""
import csv
import json
import os
import time
import urllib.request

from stealsearch.engine.deploy import monitor
from stealsearch.engine.app.sweep import load_grid, run_sweep


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


WARMED = []


def stamped(*, x: int) -> dict:
    return {"started": time.time(), "pid": os.getpid()}


stamped.warmup = lambda: WARMED.append((os.getpid(), time.time()))


def test_kernels_compile_once_here_before_the_items_start(tmp_path, cluster4, capsys):
    """A kind's warm-up (its kernels into numba's on-disk cache) runs once in the client,
    with a one-line note, before any of its items starts on a worker."""
    grid = load_grid({"name": "compiled", "items": [
        {"kind": "stamped", "instance": {"x": [1, 2, 3]}}]}, {"stamped": stamped})
    summary = run_sweep(grid, tmp_path, client=cluster4, progress=True)
    assert summary.ok == 3
    assert len(WARMED) == 1 and WARMED[0][0] == os.getpid()
    rows = list(csv.DictReader(open(summary.table)))
    assert all(float(r["started"]) >= WARMED[0][1] for r in rows)
    assert all(int(r["pid"]) != os.getpid() for r in rows)        # the items ran on workers
    err = capsys.readouterr().err
    assert err.count("compiling the kernels of stamped once") == 1
    run_sweep(load_grid({"name": "compiled2", "items": [
        {"kind": "stamped", "instance": {"x": [4]}}]}, {"stamped": stamped}),
        tmp_path, client=cluster4, progress=True)
    assert len(WARMED) == 1 and "compiling" not in capsys.readouterr().err   # once per process
