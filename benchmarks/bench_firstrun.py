"""A command's first run against its later runs: what compiling the kernels costs.

Each case runs ``stealsearch clique ... --json`` three times in fresh processes that share
one empty numba cache and one empty driver cache (``NUMBA_CACHE_DIR``,
``STEALSEARCH_CACHE``: a fresh install's state; the ``.pyc`` files are kept, as pip
writes them at install time): the first run compiles what it needs, the next two load it.
Each case runs with the default tier (a small graph: plain Python, nothing to compile) and
with ``--tier compiled`` (the numba kernels), in the same run, interleaved, so their ratio
holds on a loaded machine.  ``--compiles`` lists, for the compiled tier's first run, every
function numba compiles (its outermost compilations) and their seconds.

    python -m benchmarks.bench_firstrun [--reps 3] [--compiles]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CASES = {"8-vertex graph": ["clique", "--gnp", "8", "0.5", "--seed", "2"],
         "G(30, 0.5)": ["clique", "--gnp", "30", "0.5"]}
TIERS = ("auto", "compiled")

#: a child that lists numba's outermost compilations of one command, then runs it
LIST_COMPILES = """
import sys, time
from numba.core import event
from stealsearch.cli import main
depth, rows = [0], []
class Compiles(event.Listener):
    def on_start(self, ev):
        depth[0] += 1
        if depth[0] == 1:
            d = ev.data["dispatcher"].py_func
            rows.append([d.__module__ + "." + d.__qualname__, time.perf_counter()])
    def on_end(self, ev):
        depth[0] -= 1
        if depth[0] == 0:
            rows[-1][1] = time.perf_counter() - rows[-1][1]
event.register("numba:compile", Compiles())
code = main(sys.argv[1:])
for name, seconds in rows:
    print(f"{seconds:7.2f} s  {name}", file=sys.stderr)
sys.exit(code)
"""


def caches(folder: str) -> dict:
    return dict(os.environ, NUMBA_CACHE_DIR=os.path.join(folder, "numba"),
                STEALSEARCH_CACHE=os.path.join(folder, "drivers"))


def run(argv: list, env: dict) -> dict:
    """One ``stealsearch`` process: its wall seconds and what its JSON says."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "stealsearch", *argv, "--json"], env=env,
                          capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-500:]}")
    result = json.loads(proc.stdout)
    return {"wall": wall, "reported": result["wall_seconds"], "tier": result["info"]["tier"],
            "compile": result["info"].get("compile_seconds", 0.0),
            "notice": "compiling kernels" in proc.stderr, "objective": result["objective"]}


def measure(reps: int) -> dict:
    rows: dict = {}
    for _ in range(reps):
        for name, argv in CASES.items():
            answers = set()
            for tier in TIERS:
                folder = tempfile.mkdtemp(prefix="bench-firstrun-")
                try:
                    env = caches(folder)
                    argv_t = argv + ([] if tier == "auto" else ["--tier", "compiled"])
                    load = os.getloadavg()[0]
                    runs = [run(argv_t, env) for _ in range(3)]
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                answers.update(r["objective"] for r in runs)
                # the notice on the first run exactly when it compiled, never later
                assert runs[0]["notice"] == (runs[0]["compile"] > 0), runs[0]
                assert not any(r["notice"] for r in runs[1:]), runs
                rows.setdefault((name, tier), []).append((runs, load))
            assert len(answers) == 1, (name, answers)       # both tiers, every run: one answer
    return rows


def report(rows: dict) -> list[str]:
    lines = ["| graph | tier | first run s | later run s | first run's reported wall s | "
             "compiled s | tier that ran | load |", "|---|---|---:|---:|---:|---:|---|---|"]
    for (name, tier), reps in rows.items():
        med = lambda f: statistics.median(f(runs) for runs, _ in reps)  # noqa: E731
        lines.append(
            f"| {name} | {tier} | {med(lambda r: r[0]['wall']):.2f} | "
            f"{med(lambda r: min(r[1]['wall'], r[2]['wall'])):.2f} | "
            f"{med(lambda r: r[0]['reported']):.2f} | {med(lambda r: r[0]['compile']):.2f} | "
            f"{reps[0][0][0]['tier']} | {', '.join(f'{load:.1f}' for _, load in reps)} |")
    return lines


def list_compiles(argv: list) -> None:
    folder = tempfile.mkdtemp(prefix="bench-firstrun-")
    try:
        subprocess.run([sys.executable, "-c", LIST_COMPILES, *argv, "--tier", "compiled"],
                       env=caches(folder), stdout=subprocess.DEVNULL, timeout=900, check=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--compiles", action="store_true",
                    help="list what the compiled tier's first run compiles")
    args = ap.parse_args()
    from .common import machine_header

    print(machine_header())
    print("\n".join(report(measure(args.reps))))
    if args.compiles:
        list_compiles(CASES["8-vertex graph"])


if __name__ == "__main__":
    main()
