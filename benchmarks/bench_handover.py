"""The ramp-up's cost at the command line, two checkouts in the same run (issue #21 item 2:
"the CLI's wall within 1.5 s of the search"): ``--workers N`` (ramp-up), ``--workers N
--no-ramp-up`` and no place flag, each command of each checkout interleaved (the order
alternating every round); per run the search seconds (``--json``), the process's wall
and CPU seconds (``wait4``), wall minus search, the phases' nodes and the answer (every
run's answer and node count must equal the first's: a mismatch is printed and fails).

    python -m stealsearch.benchmarks.bench_handover BEFORE_CHECKOUT AFTER_CHECKOUT \\
        [--rounds 3] [--workers 2] [--gnp 1000 0.43] [--seed 1]

Each checkout needs its own ``make venv`` (``CHECKOUT/.venv/bin/stealsearch``); warm both
checkouts' kernels first (one run each), and hold the machine's lock (``flock -x``).
Takes about rounds x 6 x the search's seconds on N workers, plus the clusters' starts.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

from stealsearch.benchmarks.compare_checkouts import run   # one timed process


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gnp", nargs=2, default=["1000", "0.43"])
    ap.add_argument("--seed", default="1")
    a = ap.parse_args(argv)
    graph = ["clique", "--gnp", *a.gnp, "--seed", a.seed]
    w = str(a.workers)
    cases = [(f"--workers {w}", graph + ["--workers", w]),
             (f"--workers {w} --no-ramp-up", graph + ["--workers", w, "--no-ramp-up"]),
             ("no place flag", graph)]
    rows = {(name, tag): [] for name, _ in cases for tag in ("before", "after")}
    loads = [os.getloadavg()[0]]
    reference = None
    bad = 0
    for rep in range(a.rounds):
        for name, cmd in cases:
            order = [("before", a.before), ("after", a.after)]
            if rep % 2:
                order.reverse()
            for tag, root in order:
                r = run(root, cmd)
                key = (r["answer"], r["nodes"]) if "count" in cmd else (r["answer"],)
                reference = reference or key
                ok = r["rc"] == 0 and key == reference
                bad += not ok
                rows[(name, tag)].append(r)
                print(json.dumps({"case": name, "tag": tag, "rep": rep, "ok": ok, **r}), flush=True)
        loads.append(os.getloadavg()[0])
    print("load average (1 min) per round:", [round(x, 2) for x in loads])
    med = statistics.median
    print(f"{'case':32} {'checkout':7} {'search s':>9} {'wall s':>8} {'wall-search':>11} "
          f"{'cpu s':>7}  runs (search/wall)")
    for (name, tag), rs in rows.items():
        print(f"{name:32} {tag:7} {med(x['search'] for x in rs):9.2f} "
              f"{med(x['wall'] for x in rs):8.2f} {med(x['gap'] for x in rs):11.2f} "
              f"{med(x['cpu'] for x in rs):7.2f}  "
              + ", ".join(f"{x['search']:.2f}/{x['wall']:.2f}" for x in rs))
    for name, _ in cases:
        pairs = [y["wall"] / x["wall"] for x, y in zip(rows[(name, "before")], rows[(name, "after")])]
        print(f"{name}: after/before wall, median of the same-round pairs {med(pairs):.3f}")
    if bad:
        print(f"{bad} run(s) failed or disagreed with the first answer", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
