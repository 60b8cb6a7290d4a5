"""UTS in ``stealsearch demo``: the engine's exact oracle, sequential against the stealstack."""
from __future__ import annotations

from stealsearch.engine.solve import solve
from stealsearch.engine.app.timing import speedup_text, warm_up

from .problem import PRESETS, UTSProblem


def tour(client, workers: int, tree: str = "T1") -> bool:
    problem = UTSProblem.preset(tree)
    published = PRESETS[problem.label][1]
    print(f"== UTS {problem.label}: the stealstack engine on an unbalanced tree ==")
    warm_up(problem, client, workers)       # no clock below includes loading a kernel
    seq = solve(problem, backend="sequential")
    par = solve(problem, client=client, workers=workers)
    ok = True
    for r in (seq, par):
        match = r.count == published[0]
        ok &= match
        per_worker = r.nodes_per_second / max(1, len(r.workers))
        print(f"  {r.backend:<11} {r.count:>11,} nodes  {r.search_seconds:6.2f} s  "
              f"{r.nodes_per_second / 1e6:5.2f} M nodes/s ({per_worker / 1e6:.2f} M per worker)"
              f"  {'= published' if match else '!= published ' + str(published[0])}")
    print(f"  speed-up on {workers} workers: "
          f"{speedup_text(seq.search_seconds, par.search_seconds, workers)} (search time, "
          f"kernels warm; wall incl. start-up "
          f"{speedup_text(seq.wall_seconds, par.wall_seconds, workers)})")
    steals = sum(w.steals_succeeded for w in par.workers)
    print(f"  per-worker nodes {[w.nodes for w in par.workers]}, std dev "
          f"{par.node_balance_stddev:,.0f}, {steals} steals, rows conserved: "
          f"{par.conservation()['holds']}")
    return ok
