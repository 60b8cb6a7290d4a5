"""The liquid section of ``stealsearch demo``: Fig. 1, the 32-node Swiss-T1 and a slice of
the T1 study (seed 000).  Everything printed is computed and verified now."""
from __future__ import annotations

from stealsearch.engine.solve import solve

from .roundrobin import round_robin_schedule
from .problem import LiquidScheduleProblem, schedule_traffic
from .sweep import evaluate_allocations, equivalence_classes
from .topology import fig1_traffic, no_team_traffic, swiss_t1
from .verify import verify_schedule


def tour(client, workers: int) -> bool:
    ok = True
    print("== Liquid schedules (Gabrielyan, Hersch): Fig. 1, 25 transfers over l1..l12 ==")
    x = fig1_traffic()
    r = solve(LiquidScheduleProblem(x), client=client, workers=workers)
    info = verify_schedule(x, r.solution, require_liquid=True)
    ok &= r.status == "found" and info["liquid"]
    rr = round_robin_schedule(x)
    print(f"  Λ = {x.duration()} (bottlenecks {', '.join(x.bottlenecks())}), liquid throughput "
          f"{x.liquid_throughput():.2f} MB/s; round robin {len(rr)} steps; liquid schedule of "
          f"{info['length']} steps found on {r.backend}, verified: {info['liquid']}")
    y = no_team_traffic()
    s = schedule_traffic(y, backend="sequential")
    ok &= s["status"] == "optimal, not liquid" and s["length"] == 3
    print(f"  {{a,b}} {{b,c}} {{a,c}}: Λ = {y.duration()}, no team; {s['status']}, {s['length']} steps")

    t1 = swiss_t1()
    z = t1.all_to_all([4] * 8)
    edges = len(z.congestion_edges())
    r = solve(LiquidScheduleProblem(z), client=client, workers=workers)
    info = verify_schedule(z, r.solution, require_liquid=True)
    ok &= z.size == 1024 and edges == 48704 and info["liquid"]
    print(f"  Swiss-T1, 32 nodes: {z.size} transfers, {edges:,} congestion edges, Λ = {z.duration()}, "
          f"liquid {z.liquid_throughput():.1f} MB/s vs round robin "
          f"{z.throughput_of_length(len(round_robin_schedule(z))):.1f} MB/s; schedule verified: "
          f"{info['liquid']}")

    classes = [c for c in equivalence_classes() if c["nodes"] > 0]
    picks = classes[::36]
    rows = evaluate_allocations([c["representative"] for c in picks], client)
    ok &= all(row["status"] == "liquid" for row in rows)
    print(f"  T1 study: {len(classes) + 1} classes of equal (nodes, Λ); {len(rows)} of them as Dask tasks: "
          + ", ".join(f"N={row['nodes']} {row['liquid_throughput']:.0f}/{row['round_robin_throughput']:.0f}"
                      for row in rows) + " MB/s (liquid/round robin), all liquid schedules found")
    return ok
