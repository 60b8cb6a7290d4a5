"""The clique section of ``stealsearch demo``: a DIMACS benchmark and a G(n, p) graph on
the stealstack, and the seed's Fano plane found as a clique (decide mode)."""
from __future__ import annotations

from pathlib import Path

from stealsearch.engine.solve import solve
from stealsearch.engine.app.timing import warm_up

from .generators import decode_design, design_graph, gnp
from .io import read_dimacs
from .problem import CliqueProblem

#: a DIMACS instance (ω = 11), shipped with the package (data/, gzipped)
KELLER4 = Path(__file__).resolve().parent / "data" / "keller4.clq.gz"


def tour(client, workers: int) -> bool:
    print(f"== Maximum clique (Thimm, Kreher, Merkey) on {workers} workers ==")
    ok = True
    cases = [("DIMACS keller4", read_dimacs(KELLER4), 11),
             ("G(300, 0.5), seed 1", gnp(300, 0.5, seed=1), None)]
    for i, (label, graph, known) in enumerate(cases):
        if i == 0:
            warm_up(CliqueProblem(graph), client, workers)   # (no search below loads a kernel)
        seq = solve(CliqueProblem(graph), backend="sequential")
        par = solve(CliqueProblem(graph), client=client, workers=workers)
        agree = seq.objective == par.objective and par.verified and seq.verified
        if known is not None:
            agree &= par.objective == known
        ok &= agree
        print(f"  {label:<22} ω = {par.objective} (sequential {seq.objective}), verified: "
              f"{par.verified}; nodes {seq.nodes:,} on one thread, {par.nodes:,} on "
              f"{par.backend}")
    g = design_graph(2, 7, 3)
    r = solve(CliqueProblem(g, mode="decide", k=7), client=client, workers=workers)
    design = decode_design(r.solution, 2, 7) if r.solution is not None else {"is_design": False}
    ok &= r.status == "found" and design["is_design"]
    print(f"  2-(7,3,1) design graph (35 vertices): clique of size 7 {r.status}; "
          f"a Fano plane: {design['is_design']} {design.get('blocks', '')}")
    return ok
