"""The Swiss-T1 study (seed 000, §2 Figs. 5-6, §4 Fig. 9).

All 5^8 = 390,625 node allocations (0..4 nodes in front of each of the 8 switches),
their all-to-all traffics, grouped into the paper's "363 different sub-topologies".

**Which equivalence gives 363.**  The paper says that "because of various symmetries
within the network, many of these node allocations yield an identical liquid
throughput" and that "each of these sub-topologies is characterized by its liquid
throughput and the number of allocated nodes".  We computed the candidates
(:func:`equivalence_counts` reproduces them):

===============================================================  ============
equivalence on the 390,625 allocations                           classes
===============================================================  ============
same number of nodes N and same duration Λ (= same liquid          **363**
throughput N²/Λ), the empty allocation included
the same, non-empty allocations only                                 362
orbits under the permutations of switches preserving the routing      390,625
table of Fig. 4 (only the identity does)
orbits under the automorphisms of the cable graph (1,152)            2,485
same sorted allocation (multiset of counts)                          495
same (N, Λ, number of bottleneck cables)                           1,029
===============================================================  ============

So the 363 classes are the distinct pairs (number of nodes, liquid throughput); we
use that equivalence, with the empty allocation counted as one class (as the count
363 requires) but not searched (it has no transfer).  The representative of a class
is its first allocation in the order A1..A8 = 0..4 (``itertools.product`` order).

Per class (one item of the sweep runner, :mod:`stealsearch.engine.app.sweep`: an ordinary Dask task, the
search on the sequential engine inside; the schedule checked by the verifier):
N, #X = N², Λ, liquid throughput (86 MB/s links), round-robin steps and throughput,
whether a liquid schedule was found, search time and nodes.

The durations of all allocations are computed at once from a 64 × 32 table (switch
pair → directed cables of its route): the load of cable c is Σ a_i a_j over the
switch pairs (i, j) routed through c, and every tx/rx link carries N transfers.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .topology import swiss_t1

NODE_LIMIT = 2_000_000


def all_allocations(max_per_switch: int = 4, switches: int = 8) -> np.ndarray:
    """Every allocation vector, shape (5^8, 8), in ``itertools.product`` order (A1 the
    most significant digit).

    >>> all_allocations(1, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    base = max_per_switch + 1
    codes = np.arange(base ** switches, dtype=np.int64)
    return (codes[:, None] // base ** np.arange(switches - 1, -1, -1, dtype=np.int64)) % base


def route_cable_table(topology=None) -> tuple[np.ndarray, list[str]]:
    """``M[i*S + j, c]`` = 1 if the route from switch i to switch j uses directed cable c."""
    t = topology or swiss_t1()
    sw = t.switches
    cables = []
    for a, b in t.cables:
        cables += [f"{a}>{b}", f"{b}>{a}"]
    idx = {c: k for k, c in enumerate(cables)}
    s = len(sw)
    m = np.zeros((s * s, len(cables)), dtype=np.int64)
    for i, a in enumerate(sw):
        for j, b in enumerate(sw):
            r = t.routes[(a, b)]
            for u, v in zip(r, r[1:]):
                m[i * s + j, idx[f"{u}>{v}"]] += 1
    return m, cables


def nodes_and_durations(allocs: np.ndarray, topology=None) -> tuple[np.ndarray, np.ndarray]:
    """(N, Λ) of the all-to-all traffic of every allocation (vectorised).

    >>> n, lam = nodes_and_durations(np.array([[4] * 8, [1, 1, 0, 0, 0, 0, 0, 0]]))
    >>> n.tolist(), lam.tolist()
    ([32, 2], [48, 2])
    """
    m, _ = route_cable_table(topology)
    s = allocs.shape[1]
    n = allocs.sum(axis=1)
    lam = n.copy()
    for c in range(m.shape[1]):
        # load of cable c = sum of a_i * a_j over the switch pairs (i, j) routed through it
        load = np.zeros(len(allocs), dtype=np.int64)
        for ij in np.flatnonzero(m[:, c]):
            load += m[ij, c] * allocs[:, ij // s] * allocs[:, ij % s]
        np.maximum(lam, load, out=lam)
    return n, lam


def equivalence_classes(allocs: np.ndarray | None = None) -> list[dict]:
    """The classes of equal (N, Λ), sorted by N then liquid throughput (the axis of
    Figs. 6 and 9): ``{"nodes", "duration", "representative", "members"}``."""
    allocs = all_allocations() if allocs is None else allocs
    n, lam = nodes_and_durations(allocs)
    keys = n * (int(lam.max()) + 1) + lam
    _, first, members = np.unique(keys, return_index=True, return_counts=True)
    classes = [{"nodes": int(n[k]), "duration": int(lam[k]),
                "representative": [int(v) for v in allocs[k]], "members": int(m)}
               for k, m in zip(first, members)]
    return sorted(classes,
                  key=lambda c: (c["nodes"], c["nodes"] ** 2 / c["duration"] if c["duration"] else 0))


def equivalence_counts() -> dict[str, int]:
    """The class counts of the candidate equivalences in the module docstring."""
    import networkx as nx

    t = swiss_t1()
    allocs = all_allocations()
    n, lam = nodes_and_durations(allocs)
    out = {"nodes_and_duration": len(set(zip(n.tolist(), lam.tolist()))),
           "nodes_and_duration_nonempty": len({p for p in zip(n.tolist(), lam.tolist()) if p[0] > 0}),
           "sorted_allocation": len({tuple(sorted(a)) for a in allocs.tolist()})}
    sw = t.switches
    g = nx.Graph()
    g.add_edges_from(t.cables)
    graph_auts = [tuple(sw.index(iso[s]) for s in sw)
                  for iso in nx.algorithms.isomorphism.GraphMatcher(g, g).isomorphisms_iter()]
    # a permutation preserving the routing table preserves the cables, so only the
    # cable-graph automorphisms need checking against the table
    routing_auts = [p for p in graph_auts
                    if all([sw[p[sw.index(x)]] for x in t.routes[(a, b)]] ==
                           t.routes[(sw[p[i]], sw[p[j]])]
                           for i, a in enumerate(sw) for j, b in enumerate(sw))]
    out["routing_automorphisms"] = len(routing_auts)
    out["cable_graph_automorphisms"] = len(graph_auts)
    out["orbits_routing_automorphisms"] = _orbits(allocs, routing_auts)
    out["orbits_cable_graph_automorphisms"] = _orbits(allocs, graph_auts)
    m, cables = route_cable_table(t)
    s = allocs.shape[1]
    nb = np.zeros(len(allocs), dtype=np.int64)
    for c in range(m.shape[1]):
        load = np.zeros(len(allocs), dtype=np.int64)
        for ij in np.flatnonzero(m[:, c]):
            load += m[ij, c] * allocs[:, ij // s] * allocs[:, ij % s]
        nb += load == lam
    out["nodes_duration_bottleneck_cables"] = len(set(zip(n.tolist(), lam.tolist(), nb.tolist())))
    return out


def _orbits(allocs: np.ndarray, perms) -> int:
    base = 5 ** np.arange(allocs.shape[1] - 1, -1, -1)
    canon = None
    for p in perms:
        moved = np.zeros_like(allocs)
        moved[:, list(p)] = allocs
        code = moved @ base
        canon = code if canon is None else np.minimum(canon, code)
    return len(np.unique(canon))


_WARM = False


def warm_kernels() -> None:
    """Load the kernels (numba's on-disk cache) in this process once, so that the first
    item's search time does not include it."""
    global _WARM
    if not _WARM:
        from .problem import schedule_traffic
        from .topology import fig1_traffic

        schedule_traffic(fig1_traffic(), backend="sequential")
        _WARM = True


def evaluate_allocation(allocation, node_limit: int = NODE_LIMIT, colour: bool = False) -> dict:
    """One study item: the all-to-all traffic of ``allocation`` on the Swiss-T1, its
    liquid figures, round robin, and the liquid-schedule search on the sequential engine
    (``node_limit`` caps it; status ``unknown`` then).  A schedule found is checked by the
    independent verifier (:func:`stealsearch.problems.liquid.verify.verify_schedule`, which raises).

    >>> r = evaluate_allocation([1, 1, 0, 0, 0, 0, 0, 0])
    >>> r["transfers"], r["duration"], r["status"], r["round_robin_steps"], r["verified"]
    (4, 2, 'liquid', 2, True)
    """
    from stealsearch.engine.core.problem import SolutionError

    from .problem import schedule_traffic
    from .verify import verify_schedule

    warm_kernels()
    t0 = time.perf_counter()
    x = swiss_t1().all_to_all(list(allocation))
    build = time.perf_counter() - t0
    r = schedule_traffic(x, backend="sequential", node_limit=node_limit, colour_if_not_liquid=colour)
    wall = time.perf_counter() - t0
    verified = None
    if r.get("schedule") is not None:
        check = verify_schedule(x, r["schedule"], require_liquid=r["status"] == "liquid")
        if check["length"] != r["length"]:
            raise SolutionError(f"the schedule has {check['length']} steps, the search said "
                                f"{r['length']}")
        verified = True
    return {"allocation": [int(a) for a in allocation], "nodes": int(sum(allocation)),
            "transfers": x.size, "duration": x.duration(),
            "liquid_throughput": x.liquid_throughput(),
            "round_robin_steps": r["round_robin_steps"],
            "round_robin_throughput": r["round_robin_throughput"],
            "status": r["status"], "length": r["length"],
            "schedule_throughput": r.get("schedule_throughput"),
            "search_nodes": int(r.get("nodes", 0)),
            "search_seconds": float(r.get("search_seconds", 0.0)),
            "build_seconds": build, "wall_seconds": wall, "verified": verified}


#: The item kind of the study (stealsearch.engine.app.sweep resolves it where an item runs).
KINDS = {"liquid_t1": "stealsearch.problems.liquid.sweep_items:liquid_t1"}

#: the name of the study's sweep table: OUT/t1_study_runs.csv
GRID_NAME = "t1_study_runs"


def study_grid(allocations, *, node_limit: int = NODE_LIMIT, colour: bool = False,
               name: str = GRID_NAME) -> dict:
    """The grid for :mod:`stealsearch.engine.app.sweep`: one ``liquid_t1`` item per allocation (written
    ``"4 4 0 0 0 0 0 0"``: a readable, stable column of the table)."""
    allocs = [" ".join(str(int(v)) for v in a) for a in allocations]
    return {"name": name, "items": [{
        "kind": "liquid_t1", "instance": {"allocation": allocs},
        "settings": {"node_limit": int(node_limit), "colour": bool(colour)}}]}


def records(outcomes) -> list[dict]:
    """The finished items of a study sweep as the rows :func:`summarise`,
    :func:`write_study` and :func:`plot_study` read."""
    rows = []
    for o in outcomes:
        if o.ok:
            r = dict(o.figures)
            r["allocation"] = [int(v) for v in str(o.item.columns["allocation"]).split()]
            rows.append(r)
    return rows


def evaluate_allocations(allocations, client=None, *, node_limit: int = NODE_LIMIT,
                         colour: bool = False, time_limit: float | None = None,
                         progress: bool = False) -> list[dict]:
    """:func:`evaluate_allocation` over many allocations through the sweep runner: one
    Dask task each with a ``client``, in this process without.  With ``time_limit`` the
    allocations not done by then are left out (the caller sees fewer rows than
    allocations).  A failing item raises."""
    from stealsearch.engine.app.sweep import run_grid

    run = run_grid(study_grid(allocations, node_limit=node_limit, colour=colour), KINDS,
                   client=client, progress=progress, time_limit=time_limit)
    if run.failed:
        o = run.failed[0]
        raise RuntimeError(f"allocation {o.item.columns['allocation']} {o.status}: {o.error}")
    return records(run.outcomes)


def sample_allocations(k: int, seed: int = 0) -> np.ndarray:
    """``k`` distinct non-empty allocations drawn uniformly (seeded) from the 5^8."""
    allocs = all_allocations()
    rng = np.random.default_rng(seed)
    pick = rng.choice(np.arange(1, len(allocs)), size=k, replace=False)  # row 0 is empty
    return allocs[np.sort(pick)]


def run_study(client=None, *, node_limit: int = NODE_LIMIT, every: bool = False,
              limit: int | None = None, out: str | Path | None = None, colour: bool = False,
              time_limit: float | None = None, progress: bool = False) -> dict:
    """The whole study: classes, one sweep item per representative (``every``: per
    allocation), results sorted on the axis of Figs. 6/9; with ``out``, the sweep's table
    ``t1_study_runs.csv`` (a re-run resumes), ``t1_study.json``, ``t1_study.csv`` and
    the plots.  ``client``: a distributed.Client (None = here).  A failing item is listed
    in ``summary["failed"]`` and the others finish."""
    from stealsearch.engine.app.sweep import run_grid

    t0 = time.perf_counter()
    classes = equivalence_classes()
    searched = [c for c in classes if c["nodes"] > 0]
    if every:
        items = [list(map(int, a)) for a in all_allocations() if a.sum() > 0]
    else:
        items = [c["representative"] for c in searched]
    if limit is not None:
        items = items[:limit]
    run = run_grid(study_grid(items, node_limit=node_limit, colour=colour), KINDS, out=out,
                   client=client, progress=progress, time_limit=time_limit)
    rows = records(run.outcomes)
    by_alloc = {tuple(c["representative"]): c for c in classes}
    for r in rows:
        c = by_alloc.get(tuple(r["allocation"]))
        if c is not None:
            r["class_members"] = c["members"]
    rows.sort(key=lambda r: (r["nodes"], r["liquid_throughput"] or 0))
    summary = summarise(rows)
    summary.update(classes=len(classes), classes_searched=len(searched), items=len(rows),
                   items_planned=len(items), interrupted=bool(run.not_run),
                   items_done_before=run.summary.done_before,
                   failed=[{"allocation": o.item.columns["allocation"], "status": o.status,
                            "error": o.error} for o in run.failed],
                   table=run.summary.table or None,
                   wall_seconds=time.perf_counter() - t0, node_limit=node_limit)
    result = {"summary": summary, "rows": rows}
    if out is not None:
        write_study(result, out)
    return result


def summarise(rows: list[dict]) -> dict:
    times = np.array([r["search_seconds"] for r in rows]) if rows else np.zeros(1)
    ratios = np.array([r["liquid_throughput"] / r["round_robin_throughput"] for r in rows
                       if r["round_robin_throughput"]]) if rows else np.zeros(1)
    return {"liquid_found": sum(r["status"] == "liquid" for r in rows),
            "not_liquid": sum(r["status"] in ("optimal, not liquid", "not liquid", "no liquid schedule")
                              for r in rows),
            "unknown": sum(r["status"] == "unknown" for r in rows),
            "search_seconds_median": float(np.median(times)),
            "search_seconds_p97": float(np.percentile(times, 97)),
            "search_seconds_max": float(times.max()),
            "under_0_1_s": int((times < 0.1).sum()) if rows else 0,
            "search_nodes_max": max((r["search_nodes"] for r in rows), default=0),
            "liquid_over_round_robin_min": float(ratios.min()),
            "liquid_over_round_robin_median": float(np.median(ratios)),
            "liquid_over_round_robin_max": float(ratios.max())}


def write_study(result: dict, out: str | Path) -> list[Path]:
    import csv
    import json

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "t1_study.json").write_text(json.dumps(result, indent=1))
    keys = ["allocation", "nodes", "transfers", "duration", "liquid_throughput", "round_robin_steps",
            "round_robin_throughput", "status", "length", "search_nodes", "search_seconds"]
    with open(out / "t1_study.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(keys)
        for r in result["rows"]:
            w.writerow([" ".join(map(str, r["allocation"])) if k == "allocation" else r[k] for k in keys])
    return [out / "t1_study.json", out / "t1_study.csv"] + plot_study(result["rows"], out)


def plot_study(rows: list[dict], out: str | Path) -> list[Path]:
    """Fig. 5 (liquid throughput vs number of nodes) and Fig. 6/9 (liquid, liquid
    schedule found and round robin over the sorted sub-topologies), PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    n = [r["nodes"] for r in rows]
    liquid = [r["liquid_throughput"] for r in rows]
    rr = [r["round_robin_throughput"] for r in rows]
    sched = [r["schedule_throughput"] if r["status"] == "liquid" else np.nan for r in rows]
    files = []
    fig, ax = plt.subplots(figsize=(6, 4), dpi=80)
    ax.scatter(n, liquid, s=8, color="k")
    ax.set_xlabel("number of nodes")
    ax.set_ylabel("liquid throughput (MB/s)")
    ax.set_title("Swiss-T1 sub-topologies: liquid throughput (cf. Fig. 5)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    p = out / "liquid_fig5_throughput_vs_nodes.png"
    fig.savefig(p)
    plt.close(fig)
    files.append(p)
    fig, ax = plt.subplots(figsize=(8, 4), dpi=80)
    xs = np.arange(len(rows))
    ax.plot(xs, liquid, color="0.6", lw=2, label="liquid throughput (theory)")
    ax.plot(xs, sched, "k.", ms=3, label="liquid schedule found (model)")
    ax.plot(xs, rr, color="tab:red", lw=1, label="round robin (model)")
    starts = [i for i in range(len(rows)) if i == 0 or n[i] != n[i - 1]]
    ticks: list[int] = []
    for i in starts:  # label a node count where it starts, if not crowding the last label
        if not ticks or i - ticks[-1] >= max(1, len(rows) // 40):
            ticks.append(i)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(n[i]) for i in ticks], fontsize=7)
    ax.set_xlabel("sub-topologies, sorted by number of nodes then liquid throughput")
    ax.set_ylabel("aggregate throughput (MB/s)")
    ax.set_title("Liquid vs round robin over the sub-topologies (cf. Figs. 6 and 9)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    p = out / "liquid_fig6_liquid_vs_round_robin.png"
    fig.savefig(p)
    plt.close(fig)
    files.append(p)
    return files
