"""What a proof of optimality costs on the sequential backend (``--prove``): search
time with and without the proof, the time to the finished proof file (search, then the
elaboration of the scaffold into VeriPB steps), the proof's size per node, and the time
of our checker (``stealsearch check-proof``) and of VeriPB to accept it.

Instances: the DIMACS graphs (``--dimacs DIR``, ``$STEALSEARCH_DIMACS_SET`` or a
``shared/data/dimacs`` above the repository; none: the section says so) that the colour
bound solves in at most 200,000 nodes (the proof's search uses the colour bound: the same search is timed
with and without the proof), each with the clique number of the folder's ``omega.tsv`` checked where listed, and
the node counts of the two searches compared (one stack: the same nodes).  The two runs
alternate ``--repeats`` times; medians.  The proof is checked by our checker (skipped,
with the reason, above ``--ours-max-mb``) and by VeriPB where one is found (``--veripb``
or ``veripb`` on PATH; absent: skipped, with the reason).  A proof either checker
rejects fails the benchmark.

    python -m stealsearch.benchmarks.bench_proof [--quick] [--veripb PATH]
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from stealsearch.benchmarks.common import machine_header, write_section

HERE = os.path.dirname(__file__)
OUT = os.path.join(HERE, "results", "proof.md")
TITLE = "Proofs of optimality: cost on the sequential backend"
NODE_CAP = 200_000
QUICK = ("johnson8-4-4", "MANN_a9", "brock200_2", "p_hat300-1", "keller4")


def dimacs_dir(given: str | None) -> str | None:
    """``--dimacs``, else ``$STEALSEARCH_DIMACS_SET``, else the ``shared/data/dimacs`` of
    a folder above the repository; None when there is none."""
    for path in (given, os.environ.get("STEALSEARCH_DIMACS_SET")):
        if path:
            return path
    here = HERE
    for _ in range(4):
        here = os.path.dirname(here)
        cand = os.path.join(here, "shared", "data", "dimacs")
        if os.path.isdir(cand):
            return cand
    return None


def ratio_text(plain: float, proved: float) -> str:
    """with / without; a search under 10 ms has no ratio worth printing."""
    if min(plain, proved) < 0.01:
        return "(< 10 ms)"
    return f"{proved / plain:.2f}"


def veripb_verdict(veripb: str, opb: str, pbp: str) -> tuple[bool, float, str]:
    """(accepted, seconds, the last line it printed): accepted only with a claimed
    contradiction (VeriPB also says "succeeded" after warning that none was claimed)."""
    t0 = time.perf_counter()
    out = subprocess.run([veripb, opb, pbp], capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - t0
    text = out.stdout + out.stderr
    ok = (out.returncode == 0 and "Verification succeeded" in text
          and "did not claim contradiction" not in text)
    last = (text.strip().splitlines() or [""])[-1]
    return ok, seconds, last


def main(argv=None) -> int:
    from stealsearch.check_proof import ProofRejected, check_files
    from stealsearch.engine.solve import solve
    from stealsearch.problems.clique import CliqueProblem, read_dimacs

    ap = argparse.ArgumentParser(allow_abbrev=False, prog="bench_proof", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    ap.add_argument("--instances", nargs="*", default=None, help="DIMACS names")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--veripb", default=None, help="VeriPB's command (default: on PATH)")
    ap.add_argument("--veripb-version", default="",
                    help="what to call that VeriPB in the section (e.g. its commit)")
    ap.add_argument("--ours-max-mb", type=float, default=64.0,
                    help="check with our checker only proofs up to this size")
    ap.add_argument("--dimacs", default=None, help="folder of the DIMACS graphs")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    folder = dimacs_dir(args.dimacs)
    if folder is None or not os.path.isdir(folder):
        write_section(args.out, TITLE, [machine_header(), "", "Skipped: no DIMACS folder "
                      "(give --dimacs DIR or $STEALSEARCH_DIMACS_SET)."])
        print("bench_proof: skipped: no DIMACS folder", file=sys.stderr)
        return 0
    omega = {}                          # the published clique numbers, where listed
    table = os.path.join(folder, "omega.tsv")
    if os.path.isfile(table):
        with open(table) as fh:
            omega = {r["instance"]: int(r["omega"])
                     for r in csv.DictReader(fh, delimiter="\t")}
    every = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".clq"))
    names = args.instances or (list(QUICK) if args.quick else every)
    veripb = args.veripb or shutil.which("veripb")
    header = machine_header()
    rows, notes, failed = [], [], []
    work = tempfile.mkdtemp(prefix="bench_proof-")
    try:
        for name in names:
            g = read_dimacs(os.path.join(folder, f"{name}.clq"))
            problem = CliqueProblem(g, bound="colour")
            first = solve(problem, backend="sequential", node_limit=NODE_CAP + 1)
            if first.status != "optimal":
                notes.append(f"{name}: more than {NODE_CAP:,} nodes with the colour bound; "
                             "not measured")
                continue
            prefix = os.path.join(work, name)
            solve(problem, backend="sequential", proof=prefix)        # kernels loaded
            plain, proved, to_file = [], [], []
            for _ in range(args.repeats):
                r0 = solve(problem, backend="sequential")
                plain.append(r0.search_seconds)
                t0 = time.perf_counter()
                r1 = solve(problem, backend="sequential", proof=prefix)
                to_file.append(time.perf_counter() - t0)
                proved.append(r1.search_seconds)
                known = omega.get(name, r0.objective)
                if (r0.objective, r1.objective) != (known, known) or r0.nodes != r1.nodes:
                    failed.append(f"{name}: objectives {r0.objective}/{r1.objective} (omega "
                                  f"{known}), nodes {r0.nodes}/{r1.nodes}")
            info = r1.info["proof"]
            opb, pbp = prefix + ".opb", prefix + ".pbp"
            size = os.path.getsize(pbp)
            if size > args.ours_max_mb * 2 ** 20:
                ours = f"skipped (> {args.ours_max_mb:g} MB)"
            else:
                t0 = time.perf_counter()
                try:
                    check_files(opb, pbp)
                    ours = f"{time.perf_counter() - t0:.2f} s"
                except ProofRejected as exc:
                    ours = "REJECTED"
                    failed.append(f"{name}: our checker rejected the proof: {exc}")
            if veripb is None:
                theirs = "skipped (no veripb)"
            else:
                ok, seconds, last = veripb_verdict(veripb, opb, pbp)
                theirs = f"{seconds:.2f} s" if ok else "REJECTED"
                if not ok:
                    failed.append(f"{name}: VeriPB: {last}")
            t_plain, t_proved = statistics.median(plain), statistics.median(proved)
            nodes = max(1, r1.nodes)
            rows.append(
                f"| {name} | {r1.objective} | {r1.nodes:,} | {t_plain:.3f} | {t_proved:.3f} | "
                f"{ratio_text(t_plain, t_proved)} | "
                f"{statistics.median(to_file):.3f} | {size / 2 ** 20:.1f} | "
                f"{info['pbp_lines']:,} | {size / nodes:,.0f} | "
                f"{info['scaffold_bytes'] / nodes:.0f} | {ours} | {theirs} |")
            print(rows[-1], flush=True)
            for path in (opb, pbp):
                os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    lines = [header + f" Load average at the end {load:.2f}.", "",
             "`python -m stealsearch.benchmarks.bench_proof` " + " ".join(argv or sys.argv[1:])
             + f"; sequential backend, colour bound, medians of {args.repeats} alternating "
             "runs.  *search*: the search proper without / with the scaffold; *to file*: "
             "the whole `solve(..., proof=)` call (search, elaboration, writing the model "
             "and the proof); B/node: proof bytes per expanded node (scaffold: the "
             "scaffold's).  Checkers: `stealsearch check-proof` (ours, pure Python) and "
             + (f"VeriPB {args.veripb_version}".rstrip() if veripb else "VeriPB (not found: skipped)") + ".", "",
             "| graph | ω | nodes | search s | with proof s | ratio | to file s | proof MB | "
             "lines | B/node | scaffold B/node | ours | VeriPB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|", *rows]
    lines += [""] + [f"- {n}" for n in notes]
    if failed:
        lines += ["", "**Failures:**"] + [f"- {f}" for f in failed]
    write_section(args.out, TITLE, lines)
    for f in failed:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
