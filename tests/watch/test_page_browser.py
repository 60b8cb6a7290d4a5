"""The search panel of the Dask dashboard in a real headless Chromium, during a real
search: a clique search on two workers of the session's LocalCluster; the panel (a bokeh
document, drawn over its websocket) shows the incumbent, the proven bound and the gap
while it runs, and then the very incumbent and bound the result reports.  A screenshot
is taken (in the test's tmp dir; STEALSEARCH_DASHBOARD_PNG=PATH keeps it).

Chromium comes from ``make chromium`` (Debian's package, installed when missing and we
are root); without it this test skips and says why."""
import os
import shutil
import threading
import urllib.request

import pytest

from stealsearch.engine.deploy import monitor
from stealsearch.engine import solve
from stealsearch.problems.clique.generators import gnp
from stealsearch.problems.clique.problem import CliqueProblem

from browser import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="no chromium: run `make chromium` (Debian, as root)")


def figure(texts: dict, name: str):
    """An ``ss-NAME`` headline figure as a number (None while it shows '-')."""
    v = texts.get(f"ss-{name}", "-").strip()
    return None if v in ("-", "") else v


def test_the_panel_shows_the_incumbent_and_bound_the_result_reports(tmp_path, cluster4):
    assert monitor.ensure_monitor(cluster4)       # (the first search would do it)
    url = monitor.page_url(cluster4)
    with urllib.request.urlopen(url.rsplit("/", 1)[0] + "/status", timeout=30) as r:
        assert 'href="stealsearch"' in r.read().decode()    # linked from Dask's pages
    problem = CliqueProblem(gnp(900, 0.5, seed=3))
    out = {}

    def search():
        try:
            out["result"] = solve(problem, backend="dask", client=cluster4, workers=2,
                                  time_limit=8, checkpoint_every=1.0, progress=False)
        except BaseException as exc:          # reaches the assertion below
            out["error"] = exc

    runner = threading.Thread(target=search)
    with Browser(tmp_path) as b:
        b.open(url)
        b.wait_for(lambda t: "sweeps" in t["_text"], what="the panel")
        runner.start()
        try:
            running = b.wait_for(
                lambda t: figure(t, "state") == "running" and "clique" in t.get("ss-search", "")
                and figure(t, "incumbent") is not None and figure(t, "bound") is not None
                and figure(t, "gap") is not None
                # per-worker rows: they come with the workers' first reports, which may
                # follow the incumbent and bound (known from the set-up) under load
                and ("busy" in t.get("ss-workers-table", "")
                     or "idle" in t.get("ss-workers-table", "")),
                what="the running search's figures and its worker rows")
            assert int(figure(running, "incumbent")) <= int(figure(running, "bound"))
            assert figure(running, "gap").endswith("%")
            # the screenshot a few seconds in, the charts drawn
            b.wait_for(lambda t: figure(t, "state") != "running"
                       or (figure(t, "elapsed") or "00:00") >= "00:04", what="a later snapshot")
            b.screenshot(tmp_path / "dashboard.png")
        finally:
            runner.join(timeout=120)
        assert not runner.is_alive() and "error" not in out, out
        r = out["result"]
        assert r.objective is not None and r.bound is not None
        final = b.wait_for(lambda t: figure(t, "state") in ("done", "interrupted"),
                           what="the finished search")
        assert (int(figure(final, "incumbent")), int(figure(final, "bound"))) == \
            (r.objective, r.bound), final
        assert figure(final, "state") == ("done" if r.status == "optimal" else "interrupted")
    shot = tmp_path / "dashboard.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    if os.environ.get("STEALSEARCH_DASHBOARD_PNG"):
        shutil.copy(shot, os.environ["STEALSEARCH_DASHBOARD_PNG"])
