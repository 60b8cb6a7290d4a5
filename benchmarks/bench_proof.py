"""What a proof of optimality costs (``--prove``) on one stack and on lanes: search
time with and without the proof on each, the parallel speed-up with and without it,
the time to the finished proof file (search, then the elaboration of the scaffold into
VeriPB steps), the proof's size per node, and the time of our checker (``stealsearch
check-proof``) and of VeriPB to accept it.

Instances: the DIMACS graphs (``--dimacs DIR``, ``$STEALSEARCH_DIMACS_SET`` or a
``shared/data/dimacs`` above the repository; none: the section says so) that the colour
bound solves in at most 200,000 nodes (the proof's search uses the colour bound: the
same search is timed with and without the proof), each with the clique number of the
folder's ``omega.tsv`` checked where listed, the node counts of the two one-stack
searches compared (the same nodes), and every proof's record count checked against its
search's nodes.  The runs without and with the proof alternate ``--repeats`` times on
each backend; medians.  The lanes' proof is checked by our checker (skipped, with the
reason, above ``--ours-max-mb``) and by VeriPB where one is found (``--veripb`` or
``veripb`` on PATH; absent, or above ``--veripb-max-mb``: skipped, with the reason).  A
proof either checker rejects fails the benchmark.

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
TITLE = "Proofs of optimality: cost on one stack and on lanes"
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


def timed_pair(solve, problem, backend: str, threads: int, prefix: str, repeats: int):
    """``repeats`` alternating runs without and with the proof on one backend: (plain
    results, proved results, seconds to the proof file of each proved run)."""
    kw = {"threads_per_worker": threads}
    plain, proved, to_file = [], [], []
    for _ in range(repeats):
        plain.append(solve(problem, backend=backend, **kw))
        t0 = time.perf_counter()
        proved.append(solve(problem, backend=backend, proof=prefix, **kw))
        to_file.append(time.perf_counter() - t0)
    return plain, proved, to_file


def median_of(results, key="search_seconds") -> float:
    return statistics.median(getattr(r, key) for r in results)


def main(argv=None) -> int:
    from stealsearch.check_proof import ProofRejected, check_files
    from stealsearch.engine.deploy.cores import usable_cores
    from stealsearch.engine.solve import solve
    from stealsearch.problems.clique import CliqueProblem, read_dimacs

    ap = argparse.ArgumentParser(allow_abbrev=False, prog="bench_proof", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    ap.add_argument("--instances", nargs="*", default=None, help="DIMACS names")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None,
                    help="lanes of the parallel runs (default: the usable cores)")
    ap.add_argument("--veripb", default=None, help="VeriPB's command (default: on PATH)")
    ap.add_argument("--veripb-version", default="",
                    help="what to call that VeriPB in the section (e.g. its commit)")
    ap.add_argument("--ours-max-mb", type=float, default=64.0,
                    help="check with our checker only proofs up to this size")
    ap.add_argument("--veripb-max-mb", type=float, default=1024.0,
                    help="check with VeriPB only proofs up to this size")
    ap.add_argument("--dimacs", default=None, help="folder of the DIMACS graphs")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    threads = args.threads or max(2, usable_cores())
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
            for t in (1, threads):                                   # kernels loaded
                solve(problem, backend="sequential", threads_per_worker=t, proof=prefix)
            seq0, seq1, _ = timed_pair(solve, problem, "sequential", 1, prefix, args.repeats)
            lan0, lan1, to_file = timed_pair(solve, problem, "sequential", threads, prefix,
                                             args.repeats)
            known = omega.get(name, seq0[0].objective)
            for r in seq0 + seq1 + lan0 + lan1:
                if r.objective != known:
                    failed.append(f"{name}: objective {r.objective} on {r.backend} "
                                  f"(omega {known})")
            for r0, r1 in zip(seq0, seq1):       # one stack: the same search
                if r0.nodes != r1.nodes:
                    failed.append(f"{name}: sequential nodes {r0.nodes}/{r1.nodes}")
            for r in seq1 + lan1:
                if r.info["proof"]["records"] != r.nodes:
                    failed.append(f"{name}: {r.info['proof']['records']} records for "
                                  f"{r.nodes} nodes on {r.backend}")
            r1 = lan1[-1]                         # the lanes' last proof is checked
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
                    failed.append(f"{name}: our checker rejected the lanes' proof: {exc}")
            if veripb is None:
                theirs = "skipped (no veripb)"
            elif size > args.veripb_max_mb * 2 ** 20:
                theirs = f"skipped (> {args.veripb_max_mb:g} MB)"
            else:
                ok, seconds, last = veripb_verdict(veripb, opb, pbp)
                theirs = f"{seconds:.2f} s" if ok else "REJECTED"
                if not ok:
                    failed.append(f"{name}: VeriPB rejected the lanes' proof: {last}")
            s0, s1 = median_of(seq0), median_of(seq1)
            l0, l1 = median_of(lan0), median_of(lan1)
            nodes = max(1, r1.nodes)
            speed = (lambda a, b: "(< 10 ms)" if min(a, b) < 0.01 else f"{a / b:.2f}")
            rows.append(
                f"| {name} | {r1.objective} | {seq0[0].nodes:,} | {median_of(lan1, 'nodes'):,.0f} | "
                f"{s0:.3f} | {s1:.3f} | {ratio_text(s0, s1)} | {l0:.3f} | {l1:.3f} | "
                f"{ratio_text(l0, l1)} | {speed(s0, l0)} | {speed(s1, l1)} | "
                f"{statistics.median(to_file):.3f} | {size / 2 ** 20:.1f} | "
                f"{size / nodes:,.0f} | {info['scaffold_bytes'] / nodes:.0f} | {ours} | {theirs} |")
            print(rows[-1], flush=True)
            for path in (opb, pbp):
                os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    lines = [header + f" Load average at the end {load:.2f}.", "",
             "`python -m stealsearch.benchmarks.bench_proof` " + " ".join(argv or sys.argv[1:])
             + f"; colour bound, medians of {args.repeats} alternating runs without / with "
             f"the proof on each backend: *seq* one stack, *lanes* {threads} lanes in this "
             "process (the no-flag default here).  *ratio*: with / without the proof; "
             "*speed-up*: seq / lanes search seconds, without and with the proof; *to file*: "
             "the whole lanes `solve(..., proof=)` call (search, elaboration, writing the "
             "model and the proof); B/node: proof bytes per expanded node (scaffold: the "
             "scaffold's), of the lanes' proof, which both checkers check: "
             "`stealsearch check-proof` (ours, pure Python) and "
             + (f"VeriPB {args.veripb_version}".rstrip() if veripb else "VeriPB (not found: skipped)") + ".", "",
             "| graph | ω | nodes seq | nodes lanes | seq s | seq+proof s | ratio | lanes s | "
             "lanes+proof s | ratio | speed-up | speed-up with proof | to file s | proof MB | "
             "B/node | scaffold B/node | ours | VeriPB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", *rows]
    lines += [""] + [f"- {n}" for n in notes]
    if failed:
        lines += ["", "**Failures:**"] + [f"- {f}" for f in failed]
    write_section(args.out, TITLE, lines)
    for f in failed:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
