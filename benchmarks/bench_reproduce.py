"""Do ``stealsearch reproduce all --quick`` verdicts repeat?  Runs it twice, each into a
fresh folder on a LocalCluster of 2 workers (the command as a user types it, a child
process each), and compares the two runs' verdicts claim by claim.

Writes ``benchmarks/results/reproduce.md``: the machine, date and commit, the seconds of
each run, every claim's verdict in both runs, and whether all of them agree.  Exit
code 1 when a verdict differs between the runs (the item then fails in ``make bench``).

    python -m stealsearch.benchmarks.bench_reproduce            # all seeds, 2 workers
    python -m stealsearch.benchmarks.bench_reproduce --quick    # seed 002 only, sequential
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import machine_header, write_section

RESULTS = Path(__file__).resolve().parent / "results"


def run_once(seeds: str, sequential: bool, workers: int, out: Path) -> tuple[float, list]:
    """One ``reproduce SEEDS --quick --json`` in a child process: its seconds and its
    (seed, claim, verdict) lines."""
    argv = [sys.executable, "-m", "stealsearch", "reproduce", seeds, "--quick", "--json",
            "--out", str(out)]
    argv += ["--sequential"] if sequential else ["--workers", str(workers)]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"reproduce exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    verdicts = []
    for line in proc.stdout.splitlines():
        obj = json.loads(line)
        verdicts += [(obj["seed"], c["claim"], c["verdict"]) for c in obj["claims"]]
    return seconds, verdicts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seed 002 only, sequential (smoke)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    header = machine_header()
    seeds = "002" if args.quick else "all"
    runs = []
    with tempfile.TemporaryDirectory(prefix="stealsearch-bench-reproduce-") as tmp:
        for i in (1, 2):
            runs.append(run_once(seeds, args.quick, args.workers, Path(tmp) / f"run{i}"))
    (s1, v1), (s2, v2) = runs
    same = v1 == v2
    lines = [header, "",
             f"`stealsearch reproduce {seeds} --quick` run twice "
             + ("sequentially" if args.quick else f"on {args.workers} workers")
             + f", each into a fresh folder: {s1:.1f} s and {s2:.1f} s. "
             + (f"**The verdicts agree**: {sum(v == 'matched' for *_, v in v1)} of {len(v1)} "
                "claims matched both times." if same else
                "**The verdicts differ** between the two runs (the rows marked below)."), "",
             "| seed | claim | run 1 | run 2 |", "|---|---|---|---|"]
    by_key = {(s, c): v for s, c, v in v2}
    for s, c, v in v1:
        w = by_key.get((s, c), "—")
        mark = "" if v == w else " **(differs)**"
        lines.append(f"| {s} | {c.replace('|', '/')} | {v} | {w}{mark} |")
    write_section(str(RESULTS / "reproduce.md"), "Reproduce verdicts, run twice", lines)
    print(f"reproduce {seeds} --quick twice: {'same verdicts' if same else 'verdicts differ'}; "
          f"{s1:.1f} s, {s2:.1f} s")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
