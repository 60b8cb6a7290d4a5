"""Record the shape of a real search tree's top levels, for ``stealsearch.benchmarks.simulate``.

The profile is the tree's first levels *exactly* as the real engine expands them:
starting from ``problem.root_frontier()``, every node is expanded with the engine's
own kernel (``make_stack(problem)``, ``stack.run(1, incumbent)``: one expansion
leaves exactly the node's children on the stack, bottom-to-top, the way
``stealsearch.engine.transports.dask._deal`` expands the root), level after level while the next
level has at most ``--max-frontier`` nodes.  Every node of the deepest level is then
searched to exhaustion by the same kernel, which gives its exact subtree size;
shallower sizes are 1 + the sum of their children's.  The sum over the profile
equals the real tree's node count (checked against the sequential backend's count
for UTS, printed for cliques).

Cliques (optimise mode): the profile is the *proof* tree: every node is expanded with
the incumbent set to omega (from a sequential solve), i.e. the tree the workers
search once the optimum is known (in the real runs it is found early and broadcast).
Its total is printed next to the sequential count (which also holds the nodes
searched before the optimum was found).

Output: ``benchmarks/profiles/<case>.npz`` (compressed): ``parent`` (int32, -1 for
roots), ``size`` (int64), ``depth`` (int16), nodes in level order, children of one
parent contiguous and in stack order (bottom first, i.e. the last one is expanded
first); plus ``meta`` (JSON string).

    python -m stealsearch.benchmarks.record_profile T1 T3 G500_0.5 G1000_0.35 T1L
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from stealsearch.engine import solve
from stealsearch.engine.core.problem import IMPROVED, Mode
from stealsearch.engine.core.stack import make_stack

from .calibrate_model import make_problem
from .common import commit, cpu_model


def expand(problem, row, incumbent):
    stack = make_stack(problem)
    stack.push(row[None, :])
    stack.run(1, incumbent)
    return stack.take_all()


def subtree_size(problem, row, incumbent):
    stack = make_stack(problem)
    stack.push(row[None, :])
    inc = incumbent
    while len(stack):
        status, value = stack.run(1_000_000, inc)
        if status == IMPROVED:
            inc = max(inc, value)
    return stack.nodes


def record(case: str, max_frontier: int, max_depth: int) -> dict:
    problem = make_problem(case)
    t0 = time.time()
    seq = solve(problem, backend="sequential")
    incumbent = int(problem.initial_incumbent())
    if problem.mode is Mode.OPTIMISE:
        incumbent = int(seq.objective)
    roots = np.ascontiguousarray(problem.root_frontier(), dtype=np.int64)
    parent = [-1] * len(roots)
    depth = [0] * len(roots)
    level_rows = list(roots)
    level_ids = list(range(len(roots)))
    d = 0
    while d < max_depth:
        nxt_rows, nxt_ids = [], []
        for pid, row in zip(level_ids, level_rows):
            kids = expand(problem, row, incumbent)
            for kid in kids:
                nxt_ids.append(len(parent))
                parent.append(pid)
                depth.append(d + 1)
                nxt_rows.append(kid.copy())
        if not nxt_rows or len(nxt_rows) > max_frontier:
            # keep the level only if it is small enough; otherwise stop one level up
            if len(nxt_rows) > max_frontier:
                del parent[len(parent) - len(nxt_rows):]
                del depth[len(depth) - len(nxt_rows):]
            break
        level_rows, level_ids = nxt_rows, nxt_ids
        d += 1
    parent = np.array(parent, dtype=np.int32)
    size = np.zeros(len(parent), dtype=np.int64)
    for pid, row in zip(level_ids, level_rows):
        size[pid] = subtree_size(problem, row, incumbent)
    depth = np.array(depth, dtype=np.int16)
    for i in range(len(parent) - 1, -1, -1):   # level order: children after parents
        if depth[i] < d:
            size[i] += 1
        if parent[i] >= 0:
            size[parent[i]] += size[i]
    total = int(size[parent < 0].sum())
    meta = {"case": case, "levels": int(d), "profile_nodes": int(len(parent)),
            "tree_nodes": total, "sequential_nodes": int(seq.nodes),
            "sequential_seconds": float(seq.search_seconds),
            "incumbent": incumbent, "record_seconds": round(time.time() - t0, 1),
            "cpu": cpu_model(), "commit": commit(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    return {"parent": parent, "size": size, "depth": depth, "meta": meta}


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--max-frontier", type=int, default=3000)
    ap.add_argument("--max-depth", type=int, default=8)
    ap.add_argument("--out-dir", default="benchmarks/profiles")
    args = ap.parse_args(argv)
    for case in args.cases:
        p = record(case, args.max_frontier, args.max_depth)
        np.savez_compressed(f"{args.out_dir}/{case}.npz", parent=p["parent"], size=p["size"],
                            depth=p["depth"], meta=json.dumps(p["meta"]))
        print(json.dumps(p["meta"]), flush=True)


if __name__ == "__main__":
    main()
