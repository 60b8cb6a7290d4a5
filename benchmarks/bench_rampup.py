"""What the ramp-up default costs and buys (issue #13 item 1): wall time of the whole
``stealsearch`` command, as a user sees it, with no place flag (``auto``: this process
first, a LocalCluster of 2 only if the search lasts), with ``--sequential`` and with
``--workers 2``.

Target: the default within 10% of ``--sequential`` on every search that lasts < 1 s
sequentially, and never more than 0.2 s above it; long searches keep the parallel speed.

Every run is a fresh process (imports, kernel load from numba's cache, cluster start and
close included); medians of ``--repeats`` runs, the three modes interleaved so that load
drifts hit them alike.  Every result is checked: UTS counts against the published sizes,
and every mode's answer against the ``--sequential`` one of the same script run.

``python -m stealsearch.benchmarks.bench_rampup`` (~15 min on 2 cores; ``--quick``: the short ones only).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from .common import machine_header, write_section

HERE = os.path.dirname(__file__)
STEALSEARCH = os.path.join(os.path.dirname(sys.executable), "stealsearch")

#: (label, argv, published count or None, long)
INSTANCES = [
    ("UTS default (1,732 nodes)", ["uts"], 1732, False),
    ("README: UTS -d 8 (257,042 nodes)",
     ["uts", "--options", "-t 1 -a 3 -d 8 -b 4 -r 19", "--victims", "richest",
      "--no-steal-half", "--steal-k", "16"], 257042, False),
    ("clique G(500, 0.5)", ["clique", "--gnp", "500", "0.5", "--seed", "1"], None, False),
    ("UTS T3", ["uts", "--tree", "T3"], 4112897, False),
    ("UTS T1", ["uts", "--tree", "T1"], 4130071, False),
    ("UTS T1L", ["uts", "--tree", "T1L"], 102181082, True),
]
MODES = [("--sequential", ["--sequential"]), ("default", []), ("--workers 2", ["--workers", "2"])]


def run(argv: list[str], timeout: float = 900.0) -> tuple[float, dict]:
    t0 = time.perf_counter()
    proc = subprocess.run([STEALSEARCH, *argv, "--json", "--quiet"], capture_output=True,
                          text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-500:]}")
    return wall, json.loads(proc.stdout)


def answer(res: dict):
    return res["count"] if res["mode"] == "enumerate" else res["objective"]


def phases_text(res: dict) -> str:
    ph = res.get("phases") or []
    if len(ph) <= 1:
        cluster = ph[0].get("cluster") if ph else None
        return res["backend"] + (f" (cluster {cluster})" if cluster else "")
    total = max(1, res["nodes"])
    return " → ".join(f"{p['phase']} {100 * p['nodes'] / total:.0f}% in {p['seconds']:.1f} s"
                      for p in ph)


def measure(label, argv, published, repeats) -> dict:
    walls = {m: [] for m, _ in MODES}
    searches = {m: [] for m, _ in MODES}
    last = {}
    for _ in range(repeats):
        for mode, flags in MODES:
            wall, res = run(argv + flags)
            walls[mode].append(wall)
            searches[mode].append(res["search_seconds"])
            last[mode] = res
            if published is not None and res["count"] != published:
                raise AssertionError(f"{label} {mode}: count {res['count']} != {published}")
    reference = answer(last["--sequential"])
    for mode, res in last.items():
        if answer(res) != reference:
            raise AssertionError(f"{label} {mode}: {answer(res)} != {reference} (sequential)")
    med = {m: statistics.median(w) for m, w in walls.items()}
    return {"label": label, "wall": med, "search": {m: statistics.median(s) for m, s in searches.items()},
            "phases": phases_text(last["default"]), "answer": reference, "repeats": repeats}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs per mode and instance")
    ap.add_argument("--long-repeats", type=int, default=3, help="runs per mode of the long one")
    ap.add_argument("--quick", action="store_true", help="skip the long instance")
    ap.add_argument("--only", nargs="*", default=None, metavar="TEXT",
                    help="only the instances whose label contains one of these")
    ap.add_argument("--title", default="Ramp-up: the default against --sequential and --workers 2")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "rampup.md"))
    args = ap.parse_args(argv)
    header = machine_header()
    rows = []
    for label, inst_argv, published, long in INSTANCES:
        if long and args.quick or args.only and not any(t in label for t in args.only):
            continue
        r = measure(label, inst_argv, published, args.long_repeats if long else args.repeats)
        rows.append(r)
        w = r["wall"]
        print(f"{label}: seq {w['--sequential']:.2f} s, default {w['default']:.2f} s, "
              f"workers 2 {w['--workers 2']:.2f} s; {r['phases']}", flush=True)
        write(args.out, args.title, header, rows)      # after every instance: a long run stopped early keeps them
    return 0


def write(path: str, title: str, header: str, rows: list[dict]) -> None:
    load_end = os.getloadavg()[0]
    lines = [header + f" Load average when written {load_end:.2f}.", "",
             "Wall time of the whole `stealsearch ... --json --quiet` process (imports, kernel "
             "load, cluster start and close included), median of N runs per mode, the modes "
             "interleaved. *default* = no place flag: the ramp-up (`engine/transports/rampup.py`, grace "
             "1 s, then a LocalCluster of 2 in the background). *search s* = the search time "
             "`--sequential` reports (the target applies to searches under 1 s). Every answer "
             "was checked against the published size (UTS) and against `--sequential`.", "",
             "| instance | N | search s (seq) | --sequential | default | --workers 2 | "
             "default / seq | default − seq | default / workers 2 | default ran |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        w = r["wall"]
        lines.append(
            f"| {r['label']} | {r['repeats']} | {r['search']['--sequential']:.2f} | "
            f"{w['--sequential']:.2f} s | {w['default']:.2f} s | {w['--workers 2']:.2f} s | "
            f"{w['default'] / w['--sequential']:.2f} | {w['default'] - w['--sequential']:+.2f} s | "
            f"{w['default'] / w['--workers 2']:.2f} | {r['phases']} |")
    write_section(path, title, lines)


if __name__ == "__main__":
    sys.exit(main())
