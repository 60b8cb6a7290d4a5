"""What a proof of optimality costs (``--prove``) on one stack, on lanes and on Dask
workers: search time with and without the proof on each, the parallel speed-ups with
and without it, the time to the finished proof file (search, then the elaboration of
the scaffold into VeriPB steps), the proof's size per node, and the verdicts and times
of our checker (``stealsearch check-proof``) and of VeriPB on each backend's proof.

Instances: the DIMACS graphs (``--dimacs DIR``, ``$STEALSEARCH_DIMACS_SET`` or a
``shared/data/dimacs`` above the repository; none: the section says so) that the colour
bound solves in at most 200,000 nodes (the proof's search uses the colour bound: the
same search is timed with and without the proof), each with the clique number of the
folder's ``omega.tsv`` checked where listed, the node counts of the two one-stack
searches compared (the same nodes), and every proof's record count checked against its
search's nodes.  The runs without and with the proof alternate ``--repeats`` times on
each backend (``seq``: one stack; ``lanes``: ``--threads`` lanes in this process;
``dask``: ``--workers`` Dask worker processes of a LocalCluster started once, from the
first node, as ``--workers N --no-ramp-up``); medians.  ``--check`` says which
checkers run on each backend's last proof (our checker skipped, with the reason, above
``--ours-max-mb``; VeriPB, ``--veripb`` or ``veripb`` on PATH, above
``--veripb-max-mb``); ``--check none`` (a timing run) checks nothing and says so.  A
proof either checker rejects fails the benchmark.

``--faults NAME``: for that graph, a proof on the Dask workers through a forced kill
(one worker process kills itself inside a chunk after a third of the search's nodes:
:class:`KillingClique`) and a search stopped by a node limit with a checkpoint, then
finished by ``resume(..., proof=)``; both proofs checked as above.

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
TITLE = "Proofs of optimality: cost on one stack, lanes and Dask workers"
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


BACKENDS = ("seq", "lanes", "dask")
#: how a Dask worker's proof parts reach the client (``info["proof_pull"]``)
ROUTES = ("in_place", "pulled")


class KillingClique:
    """Mixin (first in the bases) of a clique problem whose proof kernel, in a Dask
    worker process (not the client's), kills that process once it has expanded
    ``kill_after`` nodes, in one process only (an O_EXCL file in ``folder``): a kill
    inside an epoch at a node count, whatever the machine's speed."""

    def killing(self, folder: str, kill_after: int):
        self.folder, self.kill_after, self.client_pid = folder, int(kill_after), os.getpid()
        return self

    @property
    def proof_kernel(self):
        import functools

        inner = super().proof_kernel
        if inner is None or os.getpid() == self.client_pid:
            return inner
        return functools.partial(_killing_chunk, inner, self)


def _killing_class():
    from stealsearch.problems.clique import CliqueProblem

    class KillingCliqueProblem(KillingClique, CliqueProblem):
        pass
    return KillingCliqueProblem


#: nodes the proof kernel expanded in this process
_expanded_here = [0]


def _killing_chunk(inner, problem, stack, top, budget, mode, incumbent, counters, solution,
                   *data):
    import signal

    from stealsearch.engine.core.problem import NODES

    before = int(counters[NODES])
    out = inner(stack, top, budget, mode, incumbent, counters, solution, *data)
    _expanded_here[0] += int(counters[NODES]) - before
    if _expanded_here[0] >= problem.kill_after:
        try:
            os.close(os.open(os.path.join(problem.folder, "killed"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return out
        os.kill(os.getpid(), signal.SIGKILL)
    return out


def timed_pair(solve, problem, prefix: str, repeats: int, **kw):
    """``repeats`` alternating runs without and with the proof on one backend (``kw``:
    solve's backend and place): (plain results, proved results, seconds to the proof
    file of each proved run)."""
    plain, proved, to_file = [], [], []
    for _ in range(repeats):
        plain.append(solve(problem, **kw))
        t0 = time.perf_counter()
        proved.append(solve(problem, proof=prefix, **kw))
        to_file.append(time.perf_counter() - t0)
    return plain, proved, to_file


def median_of(results, key="search_seconds") -> float:
    return statistics.median(getattr(r, key) for r in results)


def route_row(name: str, proved) -> str:
    """How the Dask workers' parts reached the client in the proved runs: the parts
    and megabytes of the last run by route, and the median seconds the client spent on
    them before its commits."""
    figures = [r.info.get("proof_pull", {}) for r in proved]
    last = figures[-1]
    mb = sum(last.get(f"{route}_bytes", 0) for route in ROUTES) / 2 ** 20
    ms = statistics.median(f.get("seconds", 0.0) for f in figures) * 1e3
    return (f"| {name} | " + " / ".join(str(last.get(route, 0)) for route in ROUTES)
            + f" | {mb:.1f} | {ms:.1f} | {sum(f.get('failed', 0) for f in figures)} |")


class Checks:
    """Both checkers on a proof, within the size caps; verdict texts and failures."""

    def __init__(self, which: str, veripb, ours_max_mb: float, veripb_max_mb: float):
        self.ours = which in ("ours", "both")
        self.theirs = which in ("veripb", "both")
        self.veripb, self.ours_max, self.veripb_max = veripb, ours_max_mb, veripb_max_mb
        self.failed: list[str] = []

    def __call__(self, what: str, opb: str, pbp: str) -> tuple[str, str]:
        from stealsearch.check_proof import ProofRejected, check_files

        size = os.path.getsize(pbp)
        if not self.ours:
            ours = "not run"
        elif size > self.ours_max * 2 ** 20:
            ours = f"skipped (> {self.ours_max:g} MB)"
        else:
            t0 = time.perf_counter()
            try:
                check_files(opb, pbp)
                ours = f"{time.perf_counter() - t0:.2f} s"
            except ProofRejected as exc:
                ours = "REJECTED"
                self.failed.append(f"{what}: our checker rejected the proof: {exc}")
        if not self.theirs:
            theirs = "not run"
        elif self.veripb is None:
            theirs = "skipped (no veripb)"
        elif size > self.veripb_max * 2 ** 20:
            theirs = f"skipped (> {self.veripb_max:g} MB)"
        else:
            ok, seconds, last = veripb_verdict(self.veripb, opb, pbp)
            theirs = f"{seconds:.2f} s" if ok else "REJECTED"
            if not ok:
                self.failed.append(f"{what}: VeriPB rejected the proof: {last}")
        return ours, theirs


def faults(solve, resume, client, workers: int, problem, name: str, work: str,
           check: Checks, known: int, nodes: int) -> list[str]:
    """The proofs of ``name`` through a forced kill and through a checkpointed stop and
    resume, on the Dask workers; a row each."""
    rows = []
    folder = tempfile.mkdtemp(dir=work)
    KillingCliqueProblem = _killing_class()
    hooked = KillingCliqueProblem(problem.graph, bound="colour").killing(
        folder, max(1, nodes // 3))
    prefix = os.path.join(work, f"{name}-kill")
    r = solve(hooked, backend="dask", client=client, workers=workers, proof=prefix,
              checkpoint_every=0.05)
    killed = os.path.exists(os.path.join(folder, "killed"))
    ours, theirs = check(f"{name} (kill)", prefix + ".opb", prefix + ".pbp")
    rows.append(f"| {name} | a worker killed after {max(1, nodes // 3):,} of its nodes | "
                f"{'yes' if killed else 'NO'} | {r.recoveries} | {r.nodes_redone:,} | "
                f"{r.nodes:,} | {r.info['proof']['records']:,} | {r.objective} | {ours} | "
                f"{theirs} |")
    if not killed or r.objective != known or r.info["proof"]["records"] != r.nodes:
        check.failed.append(f"{name} (kill): killed {killed}, objective {r.objective}, "
                            f"records {r.info['proof']['records']} / nodes {r.nodes}")
    ck = os.path.join(work, f"{name}-ck")
    stop = max(1, nodes // 2)
    first = solve(problem, backend="dask", client=client, workers=workers, checkpoint=ck,
                  node_limit=stop, proof=os.path.join(work, f"{name}-unused"))
    prefix = os.path.join(work, f"{name}-resumed")
    r = resume(ck, client=client, workers=workers, proof=prefix)
    ours, theirs = check(f"{name} (resume)", prefix + ".opb", prefix + ".pbp")
    rows.append(f"| {name} | stopped at a node limit of {stop:,} ({first.status}, "
                f"checkpointed), resumed | - | {r.recoveries} | {r.nodes_redone:,} | "
                f"{r.nodes:,} | {r.info['proof']['records']:,} | {r.objective} | {ours} | "
                f"{theirs} |")
    if first.status != "interrupted" or r.objective != known \
            or r.info["proof"]["records"] != r.nodes:
        check.failed.append(f"{name} (resume): first {first.status}, objective "
                            f"{r.objective}, records {r.info['proof']['records']} / "
                            f"nodes {r.nodes}")
    return rows


def main(argv=None) -> int:
    from stealsearch.engine import resume
    from stealsearch.engine.deploy.cluster import dask_client
    from stealsearch.engine.deploy.cores import usable_cores
    from stealsearch.engine.solve import solve
    from stealsearch.problems.clique import CliqueProblem, read_dimacs

    ap = argparse.ArgumentParser(allow_abbrev=False, prog="bench_proof", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    ap.add_argument("--instances", nargs="*", default=None, help="DIMACS names")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None,
                    help="lanes of the parallel runs (default: the usable cores)")
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes")
    ap.add_argument("--check", choices=("both", "ours", "veripb", "none"), default="both",
                    help="which checkers run on each backend's proof")
    ap.add_argument("--faults", nargs="*", default=(), metavar="NAME",
                    help="graphs proved through a kill and through a checkpointed resume")
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
    check = Checks(args.check, veripb, args.ours_max_mb, args.veripb_max_mb)
    header = machine_header()
    rows, sizes, routes, fault_rows, notes = [], [], [], [], []
    failed = check.failed
    work = tempfile.mkdtemp(prefix="bench_proof-")
    try:
        with dask_client(workers=args.workers) as client:
            places = {"seq": dict(backend="sequential", threads_per_worker=1),
                      "lanes": dict(backend="sequential", threads_per_worker=threads),
                      "dask": dict(backend="dask", client=client, workers=args.workers)}
            for name in names:
                g = read_dimacs(os.path.join(folder, f"{name}.clq"))
                problem = CliqueProblem(g, bound="colour")
                first = solve(problem, backend="sequential", node_limit=NODE_CAP + 1)
                if first.status != "optimal":
                    notes.append(f"{name}: more than {NODE_CAP:,} nodes with the colour "
                                 "bound; not measured")
                    continue
                known = omega.get(name, first.objective)
                runs = {}
                for b in BACKENDS:
                    prefix = os.path.join(work, f"{name}-{b}")
                    solve(problem, proof=prefix, **places[b])            # kernels loaded
                    runs[b] = timed_pair(solve, problem, prefix, args.repeats, **places[b])
                for b, (plain, proved, _) in runs.items():
                    for r in plain + proved:
                        if r.objective != known:
                            failed.append(f"{name}: objective {r.objective} on {r.backend} "
                                          f"(omega {known})")
                    for r in proved:
                        if r.info["proof"]["records"] != r.nodes:
                            failed.append(f"{name}: {r.info['proof']['records']} records "
                                          f"for {r.nodes} nodes on {r.backend}")
                for r0, r1 in zip(runs["seq"][0], runs["seq"][1]):   # one stack: the same search
                    if r0.nodes != r1.nodes:
                        failed.append(f"{name}: sequential nodes {r0.nodes}/{r1.nodes}")
                med = {b: (median_of(runs[b][0]), median_of(runs[b][1]),
                           statistics.median(runs[b][2])) for b in BACKENDS}
                (s0, s1, _), (l0, l1, _), (d0, d1, _) = (med[b] for b in BACKENDS)
                speed = (lambda a, b: "(< 10 ms)" if min(a, b) < 0.01 else f"{a / b:.2f}")
                rows.append(
                    f"| {name} | {known} | {first.nodes:,} | "
                    + " | ".join(f"{med[b][0]:.3f} | {med[b][1]:.3f} | "
                                 f"{ratio_text(med[b][0], med[b][1])}" for b in BACKENDS)
                    + f" | {speed(s0, l0)} / {speed(s1, l1)} | {speed(s0, d0)} / "
                    f"{speed(s1, d1)} | "
                    + " / ".join(f"{med[b][2]:.3f}" for b in BACKENDS) + " |")
                print(rows[-1], flush=True)
                routes.append(route_row(name, runs["dask"][1]))
                for b in BACKENDS:
                    r1 = runs[b][1][-1]
                    prefix = os.path.join(work, f"{name}-{b}")
                    opb, pbp = prefix + ".opb", prefix + ".pbp"
                    size = os.path.getsize(pbp)
                    ours, theirs = check(f"{name} ({b})", opb, pbp)
                    nodes = max(1, r1.nodes)
                    sizes.append(f"| {name} | {b} | {r1.nodes:,} | {size / 2 ** 20:.1f} | "
                                 f"{size / nodes:,.0f} | "
                                 f"{r1.info['proof']['scaffold_bytes'] / nodes:.0f} | "
                                 f"{ours} | {theirs} |")
                    print(sizes[-1], flush=True)
                    for path in (opb, pbp):
                        os.remove(path)
                if name in args.faults:
                    fault_rows += faults(solve, resume, client, args.workers, problem, name,
                                         work, check, known, first.nodes)
                    print("\n".join(fault_rows[-2:]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    checker = (f"VeriPB {args.veripb_version}".rstrip() if veripb else
               "VeriPB (not found: skipped)")
    lines = [header + f" Load average at the end {load:.2f}.", "",
             "`python -m stealsearch.benchmarks.bench_proof` " + " ".join(argv or sys.argv[1:])
             + f"; colour bound, medians of {args.repeats} alternating runs without / with "
             f"the proof on each backend: *seq* one stack, *lanes* {threads} lanes in this "
             f"process (the no-flag default here), *dask* {args.workers} Dask worker "
             "processes of a LocalCluster (`--workers N --no-ramp-up`).  *ratio*: with / "
             "without the proof; *speed-up*: seq / lanes (seq / dask) search seconds, "
             "without / with the proof; *to file*: the whole `solve(..., proof=)` call "
             "(search, the workers' parts to the client, elaboration, writing the model "
             "and the proof) on seq / lanes / dask.", "",
             "| graph | ω | nodes seq | seq s | seq+proof s | ratio | lanes s | "
             "lanes+proof s | ratio | dask s | dask+proof s | ratio | speed-up lanes | "
             "speed-up dask | to file s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", *rows, "",
             "How the Dask workers' parts reached the client (`result.info[\"proof_pull\"]`, "
             "docs/proof.md): parts written in the client's folder in place / pulled, "
             "and their MB, in the last proved run; the "
             "client's milliseconds on them before the commits (median); epochs rolled "
             "back for a part that did not arrive whole (all runs).", "",
             "| graph | parts in place / pulled | MB | ms before the commits | "
             "rolled back |", "|---|---|---|---|---|", *routes, "",
             "Each backend's last proof: its size, bytes per expanded node (scaffold: the "
             "scaffold's), and the time each checker took to accept it (`stealsearch "
             f"check-proof`, ours; {checker}); *not run*: that checker was "
             "not asked for in this run.", "",
             "| graph | backend | nodes | proof MB | B/node | scaffold B/node | ours | "
             "VeriPB |", "|---|---|---|---|---|---|---|---|", *sizes]
    if fault_rows:
        lines += ["", f"Faults on the {args.workers} Dask workers: a forced kill (the proof "
                  "kernel kills its worker process after the nodes given), and a search "
                  "stopped by a node limit with a checkpoint, then `resume(DIR, proof=)`.", "",
                  "| graph | fault | killed | rollbacks | nodes redone | nodes | records | "
                  "ω | ours | VeriPB |", "|---|---|---|---|---|---|---|---|---|---|",
                  *fault_rows]
    lines += [""] + [f"- {n}" for n in notes]
    if failed:
        lines += ["", "**Failures:**"] + [f"- {f}" for f in failed]
    write_section(args.out, TITLE, lines)
    for f in failed:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
