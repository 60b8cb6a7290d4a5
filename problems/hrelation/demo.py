"""The hrelation section of ``stealsearch demo``: the 5/4 gap of seed 001 and a sweep."""
from __future__ import annotations

from .algorithms import direct, forwarding
from .bounds import three_cycle_lower_bound
from .generators import three_cycle_family
from .sweep import run_sweep, summarise
from .verify import verify_schedule


def tour(client, workers: int) -> bool:
    print("== h-relations with helpers (Sanders, Solis-Oba): two 3-cycles, P = 6, h = 100 ==")
    m = three_cycle_family(2, 100)
    ok = True
    for name, algorithm in (("direct", direct), ("forwarding", forwarding)):
        s = algorithm(m)
        v = verify_schedule(s, m)
        ok &= v.ok
        print(f"  {name:<10} length {s.length:6.1f} packet times  verified: {v.ok}")
    print(f"  lower bound for any schedule: {three_cycle_lower_bound(6, 100):.1f} (6h/5)")
    rows = run_sweep(client, [16, 17], [32], [0.0, 1.5], 2, ("direct", "forwarding", "weighted"))
    ok &= all(r["verified"] for r in rows)
    means = {}
    for s in summarise(rows):
        means.setdefault(s["algorithm"], []).append(s["mean_length_over_h"])
    print(f"  sweep of {len(rows)} verified schedules as Dask tasks, mean length/h: "
          + ", ".join(f"{a} {sum(v) / len(v):.3f}" for a, v in sorted(means.items())))
    return ok
