"""Threads inside workers (lanes, issue #13 item 2): on this machine's cores, is a
search faster as processes, as threads of one process, or both?

Configurations (``--configs``): ``seq`` (the sequential backend, the baseline);
``seqT`` = the sequential backend with T search threads (lanes) in this process, no
Dask at all (:mod:`stealsearch.engine.transports.lanes`); ``PxT`` = P Dask worker processes x T lanes each
(``threads_per_worker=T``): by default ``seq2``, ``2x1`` (two processes, the stealstack
between them), ``1x2`` (one worker process, two lanes on one shared portion: no
messages), ``2x2``.  Problems (``--problems``): UTS T1L
(published 102,181,082 nodes; the count is checked) and maximum clique on G(1000, 0.5)
seed 1 (omega checked against the sequential answer of the same run).

Each configuration of a problem runs ``--runs`` times in a row on a LocalCluster of P
workers started for it (start-up excluded; *search* = the search proper, *wall* adds
dealing, set-up and result gathering); medians, and speed-ups as the sequential median
of the same invocation over this median.  ``--lock FILE`` holds FILE exclusively
(``flock``) for each block of runs, so that a shared machine's tests wait meanwhile and
every block stays short; the load average is recorded before every run.

    python -m stealsearch.benchmarks.bench_threads [--lock FILE]
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import statistics
import time

from stealsearch.benchmarks.common import machine_header, write_section
from stealsearch.engine import solve
from stealsearch.engine.deploy.cluster import dask_client

HERE = os.path.dirname(__file__)
OUT = os.path.join(HERE, "results", "threads.md")
RAW = os.path.join(HERE, "results", "threads_raw.json")
T1L_NODES = 102_181_082


def problem(name):
    if name == "t1l":
        from stealsearch.problems.uts import UTSProblem
        return UTSProblem.preset("T1L"), "UTS T1L"
    if name == "clique":
        from stealsearch.problems.clique.generators import gnp
        from stealsearch.problems.clique.problem import CliqueProblem
        return CliqueProblem(gnp(1000, 0.5, seed=1)), "clique G(1000, 0.5) seed 1"
    raise SystemExit(f"unknown problem {name!r}; known: t1l, clique")


def parse_config(c: str):
    if c == "seq":
        return None
    if c.startswith("seq") and c[3:].isdigit() and int(c[3:]) >= 1:
        return 0, int(c[3:])
    try:
        p, t = (int(x) for x in c.split("x"))
    except ValueError:
        raise SystemExit(f"a configuration is 'seq' or PxT, e.g. 2x1; got {c!r}") from None
    if p < 1 or t < 1:
        raise SystemExit(f"a configuration needs P, T >= 1; got {c!r}")
    return p, t


@contextlib.contextmanager
def machine_lock(path):
    if path is None:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def one(prob, **kw):
    load = os.getloadavg()[0]
    r = solve(prob, **kw)
    return {"search": r.search_seconds, "wall": r.wall_seconds, "nodes": r.nodes,
            "objective": r.objective, "status": r.status, "load": round(load, 2),
            "steals": sum(w.steals_succeeded for w in r.workers)}


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="+", default=["t1l", "clique"])
    ap.add_argument("--configs", nargs="+", default=["seq", "seq2", "2x1", "1x2", "2x2"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lock", default=None, help="hold this file (flock -x) per block of runs")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other problems of results/threads_raw.json (a problem is "
                         "always re-run whole: its speed-ups stay same-run)")
    args = ap.parse_args(argv)
    configs = [(c, parse_config(c)) for c in args.configs]
    header = machine_header()
    rows = {}
    for name in args.problems:
        prob, label = problem(name)
        res = {}
        for c, pt in configs:
            with machine_lock(args.lock):
                if pt is None:
                    res[c] = [one(prob, backend="sequential") for _ in range(args.runs)]
                elif pt[0] == 0:         # T lanes in this process, no Dask (stealsearch.engine.transports.lanes)
                    res[c] = [one(prob, backend="sequential", threads_per_worker=pt[1])
                              for _ in range(args.runs)]
                else:
                    p, t = pt
                    with dask_client(workers=p) as client:
                        solve(prob, client=client, workers=p, threads_per_worker=t,
                              node_limit=1000)              # kernels loaded everywhere
                        res[c] = [one(prob, client=client, workers=p, threads_per_worker=t)
                                  for _ in range(args.runs)]
            print(name, c, [round(x["search"], 2) for x in res[c]], flush=True)
        rows[name] = (label, res)
    raw = {"header": header, "runs": args.runs, "time": time.time(), "results": {}}
    if args.merge and os.path.exists(RAW):
        with open(RAW) as f:
            old = json.load(f)
        for n, entry in old["results"].items():
            entry.setdefault("header", old["header"])
            entry.setdefault("runs", old["runs"])
            raw["results"][n] = entry
    for n, (lab, r) in rows.items():
        raw["results"][n] = {"label": lab, "configs": r, "header": header, "runs": args.runs}
    with open(RAW, "w") as f:
        json.dump(raw, f, indent=1)
    write(raw)


def write(raw):
    med = statistics.median
    headers = sorted({e.get("header", raw["header"]) for e in raw["results"].values()})
    if len(headers) > 1:       # problems measured in different invocations (--merge)
        headers = [f"{e['label']}: {e.get('header', raw['header'])}  "
                   for e in raw["results"].values()]
    runs = sorted({e.get("runs", raw["runs"]) for e in raw["results"].values()})
    lines = headers + ["",
             f"Median of {'/'.join(map(str, runs))} runs per line, run one block after another (each block "
             "on its own LocalCluster, start-up excluded).  *search* = the search proper, "
             "*wall* adds dealing, set-up and result gathering; speed-ups = the sequential "
             "median of the same run over this median.  PxT = P worker processes x T search "
             "threads (lanes) each on a LocalCluster; seqT = T lanes in the client process, no "
             "Dask.  Load = the 1-minute load average before each run "
             "(min-max): the machine is shared.", "",
             "| problem | config | nodes | objective | search s | wall s | speed-up (search) "
             "| speed-up (wall) | steals | load |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, entry in raw["results"].items():
        cfg = entry["configs"]
        seq = cfg.get("seq")
        s0 = med([x["search"] for x in seq]) if seq else None
        w0 = med([x["wall"] for x in seq]) if seq else None
        for c, runs in cfg.items():
            s, w = med([x["search"] for x in runs]), med([x["wall"] for x in runs])
            nodes = sorted({x["nodes"] for x in runs})
            objs = sorted({x["objective"] for x in runs}, key=lambda v: (v is None, v))
            if name == "t1l":
                assert all(x["nodes"] == T1L_NODES for x in runs), (c, nodes)
            if seq and name == "clique":
                assert objs == [seq[0]["objective"]], (c, objs)
            loads = [x["load"] for x in runs]
            lines.append(
                f"| {entry['label']} | {c} | {' / '.join(f'{n:,}' for n in nodes)} | "
                f"{', '.join(str(o) for o in objs)} | {s:.2f} | {w:.2f} | "
                f"{'' if s0 is None else f'{s0 / s:.2f}x'} | "
                f"{'' if w0 is None else f'{w0 / w:.2f}x'} | "
                f"{med([x['steals'] for x in runs]):.0f} | {min(loads):.1f}-{max(loads):.1f} |")
    write_section(OUT, "Threads inside workers (lanes): processes x threads on this machine", lines)
    print(open(OUT).read())


if __name__ == "__main__":
    main()
