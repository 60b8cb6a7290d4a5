"""The search page in a real browser: headless Chromium loads /stealsearch twice while a
sweep runs on the session's LocalCluster, and the sweep's figures move between the two.
It also takes a screenshot (in the test's tmp dir; set STEALSEARCH_DASHBOARD_PNG=PATH to
keep it, e.g. benchmarks/results/dashboard.png for the README).

Chromium comes from ``make chromium`` (Debian's package, installed when missing and we
are root); without it this test skips and says why."""
import json
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from stealsearch.engine import monitor
from stealsearch.engine.sweep import load_grid, run_sweep

from procutil import end_processes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="no chromium: run `make chromium` (Debian, as root)")


def nap(*, seconds: float, n: int) -> dict:
    time.sleep(seconds)
    return {"n": n}


def chromium(tmp_path: Path, url: str, *, screenshot: Path | None = None) -> str:
    """``chromium --headless ... --dump-dom URL`` (or a screenshot); every process it
    starts is ended by PID if it runs past its time."""
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1000"]
    argv += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    proc = subprocess.Popen(argv + [url], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        try:
            kids = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            kids = []
        proc.kill()
        end_processes(kids, grace=1)
        proc.communicate(timeout=10)
        pytest.fail(f"chromium did not finish within 60 s: {url}")
    return out


def sweep_done(dom: str, name: str) -> int:
    """The 'done' cell of the sweep card named ``name`` in a dumped DOM."""
    card = dom.split(f"sweep {name} (", 1)[1]
    cells = re.findall(r"<td>([^<]*)</td>", card)
    return int(cells[1])                 # total, done, ok, ...


def json_done(url: str, name: str) -> int:
    with urllib.request.urlopen(url + "/json", timeout=10) as r:
        d = json.loads(r.read())
    return next((s["done"] for s in d["sweeps"] if s["name"] == name), -1)


def wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail("the page's figures did not change in time")
        time.sleep(0.05)


def test_page_figures_move_in_a_browser(tmp_path, cluster4):
    url = monitor.page_url(cluster4)
    name = f"browser{time.monotonic_ns() % 10**6}"
    grid = load_grid({"name": name, "items": [
        {"kind": "nap", "instance": {"seconds": 0.4, "n": list(range(48))}}]}, {"nap": nap})
    # a search's snapshots beside it, so the charts have something to draw
    w = [f"tcp://127.0.0.1:{p}" for p in (40001, 40002, 40003, 40004)]
    for i in range(12):
        monitor.publish(cluster4, "browser-search", {
            "time": 1000.0 + i, "nodes": 40_000 * i, "steals": 3 * i,
            "incumbent": 20 + min(i, 6), "bound": 40 - i, "label": "example snapshots",
            "fraction_done": 0.035 * i, "idle_workers": 1,
            "workers": {a: {"nodes": (9_000 + 500 * j) * i, "local": 10 + j, "shared": 2,
                            "idle": j == 3}
                        for j, a in enumerate(w)}})
    result = {}
    runner = threading.Thread(target=lambda: result.update(
        summary=run_sweep(grid, tmp_path, client=cluster4, progress=False)))
    runner.start()
    try:
        wait_for(lambda: json_done(url, name) >= 1)
        dom = chromium(tmp_path, url)
        first = sweep_done(dom, name)
        # the search card: the estimate, its ETA, and per worker local/shared/idle
        # (up to the next card: other tests' searches on this cluster have cards too)
        card = dom.split("example snapshots", 1)[1].split('<div class="card', 1)[0]
        assert "~38%" in card and "ETA" in card
        assert "<th>local</th>" in card and "<th>shared</th>" in card and "<th>idle</th>" in card
        assert card.count(">idle</td>") == 1 and card.count(">busy</td>") == 3
        wait_for(lambda: json_done(url, name) >= first + 4)
        second = sweep_done(chromium(tmp_path, url), name)
        assert 1 <= first < second <= 48
        shot = tmp_path / "dashboard.png"
        chromium(tmp_path, url, screenshot=shot)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
        if os.environ.get("STEALSEARCH_DASHBOARD_PNG"):
            shutil.copy(shot, os.environ["STEALSEARCH_DASHBOARD_PNG"])
    finally:
        runner.join(timeout=120)
    assert not runner.is_alive() and result["summary"].ok == 48
