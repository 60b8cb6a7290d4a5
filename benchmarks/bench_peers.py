"""Peer comparison: stealsearch's sequential kernels against native solvers, same run, one core.

Peers (built from their public sources in a scratch folder OUTSIDE the repository; never
committed):

* ``glasgow_clique_solver`` (github ciaranm/glasgow-subgraph-solver; CMake Release build,
  -O3 -march=native): bitset colour-order branch and bound, MCS-like.  Its own
  ``runtime =`` (ms, solve only) and ``nodes =`` are taken.
* ``MoMC`` (Li, Jiang, Manyà 2017; ``MoMC2016.c`` built with ``gcc -O3 -DMOMC``):
  incremental MaxSAT reasoning over colour classes.  Its own ``Time`` and ``Branching``.
* the UTS C reference, sequential depth-first (UTS 2.1 code with the BRG SHA-1, as kept in
  github shwestrick/mini-uts, ``make dfs``: g++ -O3 -march=native).  Its own wall-clock time.

Where the peers are: ``$STEALSEARCH_PEERS`` (default ``../scratch/peers`` relative to the
repository root), laid out as ``glasgow-subgraph-solver/build/src/glasgow_clique_solver``
(or ``.../build/glasgow_clique_solver``), ``momc/MoMC`` and ``mini-uts/dfs``; each binary
can also be named directly with ``$GLASGOW_CLIQUE_SOLVER``, ``$MOMC``, ``$UTS_DFS``
(``--peers DIR`` overrides the folder).  A
peer's commit is read from a ``COMMIT`` file in its folder (written when it was fetched).
A missing peer is skipped with the reason printed in the table.  DIMACS files: the repo's
``tests/clique/data`` (quick) plus ``--dimacs DIR`` / ``$STEALSEARCH_DIMACS`` (default
``../shared/data/dimacs`` relative to the repository root) in full mode; a missing folder
is named in the table's notes.

Every ω a peer reports is compared with ours (and ours is verified by the problem's
independent verifier inside ``solve``); a disagreement aborts the benchmark.  Figures
are medians of ``--runs`` runs of CPU seconds (ours: the searching thread over building
the problem and the search; a peer's: its process, from ``getrusage``), with each
program's wall time beside; the load average before each instance is recorded, since the
machine is shared.  ``--ablation`` measures our vertex orders x initial clique instead.

    python -m stealsearch.benchmarks.bench_peers --quick          # G(500,.5), G(1000,.35), tests' DIMACS, UTS T1/T3
    python -m stealsearch.benchmarks.bench_peers                  # the G(n, p) grid and all DIMACS files
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from stealsearch.engine import solve
from stealsearch.problems.clique import CliqueProblem, read_dimacs
from stealsearch.problems.clique.generators import gnp
from stealsearch.problems.clique.io import write_dimacs
from stealsearch.problems.uts import PRESETS, UTSProblem

from .common import machine_header, write_section

REPO = Path(__file__).resolve().parents[1]
TESTS_DIMACS = REPO / "tests" / "clique" / "data"
QUICK_GNP = [(500, 0.5), (1000, 0.35)]
FULL_GNP = ([(n, p) for n in (250, 500, 1000, 2000) for p in (0.2, 0.35, 0.5)]
            + [(200, 0.7), (300, 0.7), (200, 0.8), (300, 0.8), (200, 0.9), (300, 0.9)])
QUICK_UTS = ["T1", "T3"]


#: set by --peers / --dimacs (they win over the environment variables)
PATHS: dict = {}


def peers_dir() -> Path:
    return Path(PATHS.get("peers") or os.environ.get("STEALSEARCH_PEERS",
                                                     REPO.parent / "scratch" / "peers"))


def dimacs_dir() -> Path:
    return Path(PATHS.get("dimacs") or os.environ.get("STEALSEARCH_DIMACS",
                                                      REPO.parent / "shared" / "data" / "dimacs"))


class Peer:
    """A native program: where it is, its commit, or why it is missing."""

    def __init__(self, name: str, env: str, candidates: list[str]):
        self.name = name
        given = os.environ.get(env)
        paths = [Path(given)] if given else [peers_dir() / c for c in candidates]
        self.path = next((p for p in paths if p.is_file() and os.access(p, os.X_OK)), None)
        self.missing = None if self.path else (
            f"{name}: no executable at {', '.join(str(p) for p in paths)} (set ${env})")
        self.commit = "unknown"
        if self.path:
            for folder in [self.path.parent, *self.path.parents][:4]:
                f = folder / "COMMIT"
                if f.is_file():
                    self.commit = f.read_text().strip()[:12]
                    break

    def __bool__(self):
        return self.path is not None


def find_peers() -> dict:
    return {
        "glasgow": Peer("glasgow_clique_solver", "GLASGOW_CLIQUE_SOLVER",
                        ["glasgow-subgraph-solver/build/src/glasgow_clique_solver",
                         "glasgow-subgraph-solver/build/glasgow_clique_solver"]),
        "momc": Peer("MoMC", "MOMC", ["momc/MoMC"]),
        "uts": Peer("UTS C reference (dfs)", "UTS_DFS", ["mini-uts/dfs"]),
    }


def child_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def with_cpu(fn):
    """Run ``fn`` and add the CPU seconds its child process consumed (reading the file
    included: a small bias against the peers on tiny instances)."""
    def run(*a, **kw):
        c0 = child_cpu()
        rec = fn(*a, **kw)
        rec["cpu"] = child_cpu() - c0
        return rec
    return run


#: a run's wall-clock cap is WALL_FACTOR x the CPU limit (the machine is shared: a run
#: cut by the wall cap before its CPU limit is recorded as "limit (wall)")
WALL_FACTOR = 3.0


def cpu_capped(limit: float):
    """preexec_fn: the child may use ``limit`` CPU seconds (then SIGXCPU, SIGKILL at +1 s):
    a peer's limit counts CPU, like the figures compared."""
    soft = max(1, int(round(limit)))

    def cap():
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    return cap


def _limit_record(t0: float, why: str) -> dict:
    return {"status": "limit", "why": why, "seconds": time.perf_counter() - t0, "nodes": 0,
            "omega": 0}


@with_cpu
def run_glasgow(peer: Peer, clq: Path, limit: float) -> dict:
    t0 = time.perf_counter()
    wall = limit * WALL_FACTOR
    try:
        p = subprocess.run([str(peer.path), "--timeout", str(int(wall) + 1), str(clq)],
                           capture_output=True, text=True, timeout=wall + 30,
                           preexec_fn=cpu_capped(limit))
    except subprocess.TimeoutExpired:
        return _limit_record(t0, "wall")
    if p.returncode < 0:                       # SIGXCPU / SIGKILL: the CPU limit
        return _limit_record(t0, "cpu")
    kv = dict(re.findall(r"(?m)^(\w+) = (.*)$", p.stdout))
    if kv.get("status") == "aborted":
        return {"status": "limit", "why": "wall", "seconds": float(kv.get("runtime", 0)) / 1e3,
                "nodes": int(kv.get("nodes", 0)), "omega": int(kv.get("omega", 0))}
    if "omega" not in kv:
        raise RuntimeError(f"glasgow gave no omega on {clq}: {p.stdout[-500:]} {p.stderr[-500:]}")
    return {"status": "optimal", "seconds": float(kv["runtime"]) / 1e3,
            "nodes": int(kv["nodes"]), "omega": int(kv["omega"])}


@with_cpu
def run_momc(peer: Peer, clq: Path, limit: float) -> dict:
    t0 = time.perf_counter()
    try:
        p = subprocess.run([str(peer.path), str(clq)], capture_output=True, text=True,
                           timeout=limit * WALL_FACTOR, preexec_fn=cpu_capped(limit))
    except subprocess.TimeoutExpired:
        return _limit_record(t0, "wall")
    m = re.search(r"Max_CLQ (\d+) Branching (\d+) Time ([0-9.eE+-]+)", p.stdout)
    if p.returncode < 0 and not m:
        return _limit_record(t0, "cpu")
    if not m:
        raise RuntimeError(f"MoMC gave no result on {clq}: {p.stdout[-500:]}")
    return {"status": "optimal", "seconds": float(m.group(3)), "nodes": int(m.group(2)),
            "omega": int(m.group(1))}


@with_cpu
def run_uts_c(peer: Peer, tree: str) -> dict:
    p = subprocess.run([str(peer.path), *PRESETS[tree][0].split()], capture_output=True,
                       text=True, timeout=600)
    out = p.stdout + p.stderr          # the UTS code prints its statistics on stderr
    size = int(re.search(r"Tree size = (\d+)", out).group(1))
    secs = float(re.search(r"Wallclock time = ([0-9.]+)", out).group(1))
    return {"status": "optimal", "seconds": secs, "nodes": size}


def warm_kernels(bounds) -> None:
    """Load (or, in a fresh checkout, compile) every clique kernel a timed run may call, so
    that no timed run's CPU includes numba's: a solve per bound on G(60, 0.5), and
    ``class_of_vertices``, which only a graph whose greedy colouring beats its
    independent-set partition reaches (G(60, 0.5) does not; in a fresh worktree the first
    such graph of a run, p_hat300-2, paid 0.2-0.3 s of compiling in its CPU)."""
    from stealsearch.problems.clique.kernels.colour_classes import class_of_vertices, greedy_colour_classes
    solve(CliqueProblem(gnp(40, 0.5, 1)), backend="sequential")
    for spec in bounds:                 # a bound, or B+inc (bench_dimacs's variants)
        b, *options = spec.split("+")
        solve(CliqueProblem(gnp(60, 0.5, 1), bound=b, incremental="inc" in options),
              backend="sequential")
    graph = gnp(60, 0.5, 1)
    adj = graph.rows.view("int64")
    class_of_vertices(greedy_colour_classes(adj, graph.n), graph.n)


def run_ours(graph, bound: str, limit: float, wall_factor: float | None = None, **kw) -> dict:
    """Our time = building the problem (vertex order, initial clique: what the peers
    count in their own runtime) + the search."""
    c0 = time.thread_time()           # the sequential backend searches in this thread
    t0 = time.perf_counter()
    problem = CliqueProblem(graph, bound=bound, **kw)
    build = time.perf_counter() - t0
    r = solve(problem, backend="sequential",
              time_limit=limit * (WALL_FACTOR if wall_factor is None else wall_factor))
    cpu = time.thread_time() - c0
    # the same rule as the peers': more than `limit` CPU seconds is not finished
    status = "optimal" if r.status == "optimal" and cpu <= limit else "limit"
    return {"status": status, "why": "wall" if r.status != "optimal" else "cpu",
            "seconds": build + r.search_seconds, "cpu": cpu,
            "nodes": r.nodes, "branched": r.counters.get("branched", 0),
            **({"finished_pruned": r.counters["finished_pruned"]}
               if "finished_pruned" in r.counters else {}),
            "omega": r.objective, "initial": len(problem.start_clique),
            "initial_seconds": problem.initial_seconds, "root_bound": problem.root_bound,
            "resolved": problem.bound, "order": problem.order_name}


#: runs longer than this (CPU seconds) are not repeated: the grid's total must fit
REPEAT_BELOW = 5.0


def median_of(fn, runs: int) -> dict:
    """Median of ``runs`` runs; a run that hit the limit or took over REPEAT_BELOW CPU
    seconds is not repeated (``runs`` in the record says how many were taken)."""
    recs = [fn()]
    if recs[0]["status"] == "optimal" and recs[0].get("cpu", 0) < REPEAT_BELOW:
        recs += [fn() for _ in range(runs - 1)]
    if any(r["status"] != "optimal" for r in recs):
        out = dict(next(r for r in recs if r["status"] != "optimal"))
        out["runs"] = len(recs)
        return out
    out = dict(recs[0])
    for key in ("seconds", "cpu"):
        out[key] = statistics.median(r[key] for r in recs)
    out["runs"] = len(recs)
    return out


def instances(quick: bool):
    for n, p in (QUICK_GNP if quick else FULL_GNP + [g for g in QUICK_GNP if g not in FULL_GNP]):
        yield f"G({n},{p:g})", "gnp", gnp(n, p, seed=1)
    files = sorted(TESTS_DIMACS.glob("*.clq"))
    if not quick and dimacs_dir().is_dir():
        have = {f.name for f in files}
        files += sorted(f for f in dimacs_dir().glob("*.clq") if f.name not in have)
    for f in files:
        yield f.stem, "dimacs", read_dimacs(f)


def cell(rec) -> str:
    if rec is None:
        return "—"
    if rec["status"] != "optimal":
        if rec.get("why") == "wall":
            return f"> limit (wall {rec['seconds']:.0f} s, {rec.get('cpu', 0):.1f} s CPU)"
        return f"> limit ({rec.get('cpu', rec['seconds']):.1f} s CPU)"
    cpu = f"{rec['cpu']:.3f} ({rec['seconds']:.3f})" if "cpu" in rec else f"{rec['seconds']:.3f}"
    return f"{cpu}, {rec['nodes']:,}"


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the quick subset (the suite's smoke test uses it)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--limit", type=float, default=60.0, help="per-run time limit (s)")
    ap.add_argument("--bounds", nargs="+", default=None,
                    help="our bounds to run (default: every clique bound with an MCS order)")
    ap.add_argument("--only", nargs="*", default=None, help="instance names to run")
    ap.add_argument("--no-uts", action="store_true")
    ap.add_argument("--ablation", action="store_true",
                    help="instead: our bounds x vertex orders x initial heuristic per instance "
                         "(nodes and time), written to results/peers_ablation.md")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "peers.md"))
    ap.add_argument("--peers", default=None, help="folder of the built peers "
                    "(default $STEALSEARCH_PEERS, else ../scratch/peers from the repository)")
    ap.add_argument("--dimacs", default=None, help="extra DIMACS .clq folder in full mode "
                    "(default $STEALSEARCH_DIMACS, else ../shared/data/dimacs)")
    args = ap.parse_args(argv)
    PATHS.clear()
    PATHS.update({k: v for k, v in (("peers", args.peers), ("dimacs", args.dimacs)) if v})
    from stealsearch.problems.clique.problem import FAST_BOUNDS
    bounds = args.bounds or ["auto", *FAST_BOUNDS]
    peers = find_peers()
    header = machine_header()
    if args.ablation:
        return run_ablation(args, bounds, header)
    for p in peers.values():
        print(f"peer {p.name}: {p.path or p.missing} (commit {p.commit})", flush=True)
    warm_kernels(bounds)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, family, graph in instances(args.quick):
            if args.only and name not in args.only:
                continue
            clq = Path(tmp) / f"{re.sub(r'[^A-Za-z0-9_.]', '_', name)}.clq"
            write_dimacs(graph, clq)
            load = os.getloadavg()[0]
            row = {"instance": name, "family": family, "n": graph.n, "m": graph.m, "load": load}
            for b in bounds:
                # a bound that resolves to a kernel already run here (auto -> colour or
                # maxsat) is not run twice: the same record
                want = CliqueProblem(graph, bound=b).bound if b == "auto" else b
                same = next((k for k in row if k in bounds and row[k].get("resolved") == want),
                            None)
                if same:
                    row[b] = dict(row[same], same_as=same)
                    continue
                row[b] = median_of(lambda: run_ours(graph, b, args.limit), args.runs)
            if peers["glasgow"]:
                row["glasgow"] = median_of(lambda: run_glasgow(peers["glasgow"], clq, args.limit),
                                           args.runs)
            if peers["momc"]:
                row["momc"] = median_of(lambda: run_momc(peers["momc"], clq, args.limit), args.runs)
            omegas = {k: row[k]["omega"] for k in [*bounds, "glasgow", "momc"]
                      if k in row and row[k]["status"] == "optimal"}
            if len(set(omegas.values())) > 1:
                raise AssertionError(f"{name}: the solvers disagree on omega: {omegas}")
            row["omega"] = next(iter(omegas.values()), None)
            rows.append(row)
            print(name, f"ω={row['omega']}", " | ".join(f"{k}: {cell(row.get(k))}"
                                                       for k in [*bounds, "glasgow", "momc"]), flush=True)
        uts_rows = []
        if not args.no_uts:
            for tree in QUICK_UTS:
                prob = UTSProblem.preset(tree)
                solve(prob, backend="sequential", node_limit=10_000)
                load = os.getloadavg()[0]

                def ours():
                    c0 = time.thread_time()
                    r = solve(prob, backend="sequential")
                    assert r.count == PRESETS[tree][1][0], (r.count, tree)
                    return {"status": "optimal", "seconds": r.search_seconds, "nodes": r.count,
                            "cpu": time.thread_time() - c0}
                rec = {"tree": tree, "load": load, "ours": median_of(ours, args.runs)}
                if peers["uts"]:
                    rec["c"] = median_of(lambda: run_uts_c(peers["uts"], tree), args.runs)
                    assert rec["c"]["nodes"] == PRESETS[tree][1][0]
                uts_rows.append(rec)
                print(tree, "ours", cell(rec["ours"]), "C", cell(rec.get("c")), flush=True)
    write_markdown(rows, uts_rows, bounds, peers, header, args)
    return rows


def run_ablation(args, bounds, header) -> list:
    """What the initial order and the initial clique buy, per instance and bound."""
    from stealsearch.problems.clique.problem import HEURISTICS, ORDERS
    solve(CliqueProblem(gnp(60, 0.5, 1)), backend="sequential")
    rows = []
    for name, family, graph in instances(args.quick):
        if args.only and name not in args.only:
            continue
        load = os.getloadavg()[0]
        cells = {}
        for b in bounds:
            for o in ORDERS:
                for h in HEURISTICS:
                    cells[(b, o, h)] = median_of(
                        lambda: run_ours(graph, b, args.limit, order=o, heuristic=h), args.runs)
        omegas = {c["omega"] for c in cells.values() if c["status"] == "optimal"}
        assert len(omegas) <= 1, (name, omegas)
        rows.append((name, graph, cells, load))
        print(name, {f"{b}/{o}/{h}": cell(c) for (b, o, h), c in cells.items()}, flush=True)
    from stealsearch.problems.clique.problem import HEURISTICS, ORDERS
    L = [header, "", f"Sequential, median of {args.runs}, limit {args.limit:.0f} s; time = build "
         "(order + initial clique) + search.  Cells: CPU seconds of the searching thread "
         "(wall seconds), nodes; *init* = size of the initial clique (degeneracy order).", ""]
    cols = [(o, h) for o in ORDERS for h in HEURISTICS]
    for b in bounds:
        L += [f"#### bound `{b}`", "",
              "| instance | density | ω | init | " + " | ".join(f"{o}, {h}" for o, h in cols) + " |",
              "|" + "---|" * (len(cols) + 4)]
        for name, graph, cells, load in rows:
            init = cells[(b, "degeneracy", "greedy")].get("initial", 0)
            omega = next((c["omega"] for c in cells.values() if c["status"] == "optimal"), "?")
            L.append(f"| {name} | {graph.density():.2f} | {omega} | {init} | "
                     + " | ".join(cell(cells[(b, o, h)]) for o, h in cols) + " |")
        L += [""]
    out = Path(args.out).with_name("peers_ablation.md")
    write_section(str(out), "Clique: vertex orders and the initial clique per instance (issue 14)", L)
    print("\n".join(L))
    return rows


def _better_peer(row):
    ts = [row[k]["cpu"] for k in ("glasgow", "momc") if k in row and row[k]["status"] == "optimal"]
    return min(ts) if ts else None


def write_markdown(rows, uts_rows, bounds, peers, header, args) -> None:
    L = [header, ""]
    L += ["Peers: " + "; ".join(
        f"{p.name} commit {p.commit}" if p else f"skipped — {p.missing}" for p in peers.values()), ""]
    L += [f"Single thread, same run, median of {args.runs}.  Cells: **CPU seconds** (wall "
          "seconds as the program reports them), nodes (MoMC: branches).  The machine is shared "
          "(load average before each instance in the last column, on 2 cores), so CPU time is "
          "the figure compared: ours = CPU of the searching thread over building the problem "
          "(vertex order, initial clique) and the search; a peer's = its process's user + system "
          "CPU, reading the file included (a small bias against the peers on instances of a "
          "few ms).  Wall: our build + `search_seconds`; the peers' own reported runtime. "
          f"Limit {args.limit:.0f} CPU seconds per run (the peers under RLIMIT_CPU; ours "
          f"counted as not finished above it), and a wall cap of {WALL_FACTOR:g}x that "
          "(`limit (wall)`: the shared machine's load stopped it first).  A run under "
          f"{REPEAT_BELOW:g} s CPU is the median of {args.runs}, a longer one a single run.  "
          "A bound that resolves to a kernel already in the row (auto = colour or maxsat) "
          "repeats that record.  *ratio* = CPU of our first bound / CPU of the "
          "better peer (< 1: we are faster).", ""]
    cols = [*bounds, "glasgow", "momc"]
    L += ["| instance | n | ω | " + " | ".join(cols) + " | ratio | load |",
          "|" + "---|" * (len(cols) + 5)]
    default = bounds[0]
    tot = {k: 0.0 for k in cols}
    worst = (0.0, None)
    unfinished = []
    for row in rows:
        best = _better_peer(row)
        ours = row[default]
        ratio = ours["cpu"] / best if best and ours["status"] == "optimal" else None
        if best and ours["status"] != "optimal":
            ratio = max(ours.get("cpu", 0), args.limit) / best     # at least this
        if ratio and ratio > worst[0]:
            worst = (ratio, row["instance"])
        if all(row[k]["status"] == "optimal" for k in cols if k in row):
            for k in cols:
                if k in row:
                    tot[k] += row[k]["cpu"]
        else:
            unfinished.append(row["instance"])
        omega = "—" if row["omega"] is None else row["omega"]
        L.append(f"| {row['instance']} | {row['n']} | {omega} | "
                 + " | ".join(cell(row.get(k)) for k in cols)
                 + f" | {('> ' if ours['status'] != 'optimal' else '') + '%.2f' % ratio if ratio else '—'}"
                 f" | {row['load']:.2f} |")
    if rows:
        L.append("| **total** (instances every solver finished) | | | " + " | ".join(
            f"{tot[k]:.2f} s" if any(k in r for r in rows) else "—" for k in cols)
                 + " | | |")
        L += [""]
        for k in ("glasgow", "momc"):
            if any(k in r for r in rows) and tot[k] > 0:
                L.append(f"- total CPU, `{default}` / {k}: {tot[default] / tot[k]:.2f} (target ≤ 0.67)")
        nobody = [r["instance"] for r in rows
                  if not any(r[k]["status"] == "optimal" for k in cols if k in r)]
        some = [i for i in unfinished if i not in nobody]
        if some:
            L.append(f"- not in the totals (a solver hit the limit): {', '.join(some)}")
        if nobody:
            L.append(f"- out of reach of every solver in the limit: {', '.join(nobody)}")
        if worst[1]:
            L.append(f"- worst instance against the better peer: {worst[1]} at {worst[0]:.2f}× "
                     "(target ≤ 1.10)")
    if uts_rows:
        L += ["", "UTS, sequential, single thread: nodes per CPU second of our kernel against the "
              "C reference (same run, median of runs; ours: CPU of the searching thread over "
              "`solve`; C: the process's CPU).", "",
              "| tree | nodes | ours CPU s | C reference CPU s | ours M nodes/s | C M nodes/s | ours/C rate | load |",
              "|---|---|---|---|---|---|---|---|"]
        for u in uts_rows:
            o, c = u["ours"], u.get("c")
            rate_o = o["nodes"] / o["cpu"] / 1e6
            rate_c = c["nodes"] / c["cpu"] / 1e6 if c else None
            L.append(f"| {u['tree']} | {o['nodes']:,} | {o['cpu']:.3f} | "
                     f"{'%.3f' % c['cpu'] if c else '—'} | {rate_o:.2f} | "
                     f"{'%.2f' % rate_c if c else '—'} | {'%.2f' % (rate_o / rate_c) if c else '—'} | "
                     f"{u['load']:.2f} |")
    write_section(args.out, "Against native solvers, one core (issue 14)", L)
    print("\n".join(L))


if __name__ == "__main__":
    main()
