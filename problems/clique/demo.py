"""The clique section of ``stealsearch demo``: a DIMACS benchmark and a G(n, p) graph on
the stealstack, and the seed's Fano plane found as a clique (decide mode)."""
from __future__ import annotations

import os

from engine.solve import solve
from engine.timing import warm_up

from .generators import decode_design, design_graph, gnp
from .io import read_dimacs
from .problem import CliqueProblem

#: a DIMACS instance shipped with the tests (ω = 11); the tour skips it in an
#: installation without the tests folder
KELLER4 = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "clique", "data",
                       "keller4.clq")


def tour(client, workers: int) -> bool:
    print(f"== Maximum clique (seed 003) on {workers} workers ==")
    ok = True
    cases = [("G(300, 0.5), seed 1", gnp(300, 0.5, seed=1), None)]
    if os.path.exists(KELLER4):
        cases.insert(0, ("DIMACS keller4", read_dimacs(KELLER4), 11))
    for i, (label, graph, known) in enumerate(cases):
        if i == 0:
            warm_up(CliqueProblem(graph), client, workers)   # the times below exclude loading kernels
        seq = solve(CliqueProblem(graph), backend="sequential")
        par = solve(CliqueProblem(graph), client=client, workers=workers)
        agree = seq.objective == par.objective and par.verified and seq.verified
        if known is not None:
            agree &= par.objective == known
        ok &= agree
        print(f"  {label:<22} ω = {par.objective} (sequential {seq.objective}), verified: "
              f"{par.verified}; nodes {seq.nodes:,} / {par.nodes:,}; "
              f"{seq.search_seconds:.2f} s / {par.search_seconds:.2f} s")
    g = design_graph(2, 7, 3)
    r = solve(CliqueProblem(g, mode="decide", k=7), client=client, workers=workers)
    design = decode_design(r.solution, 2, 7) if r.solution is not None else {"is_design": False}
    ok &= r.status == "found" and design["is_design"]
    print(f"  2-(7,3,1) design graph (35 vertices): clique of size 7 {r.status}; "
          f"a Fano plane: {design['is_design']} {design.get('blocks', '')}")
    return ok
