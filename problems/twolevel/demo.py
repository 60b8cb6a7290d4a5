"""The twolevel section of ``stealsearch demo``: 2LVDSOPT on the Table 1 DAG and a sweep."""
from __future__ import annotations


def tour(client, workers: int) -> bool:
    from .algorithms import two_level_opt
    from .generators import table1_instance
    from .sweep import run_sweep
    from .verify import verify_schedule

    print("== Two-level DAG scheduling (Colin, Nakechbandi): 2LVDSOPT on a DAG rebuilt from Table 1 ==")
    inst = table1_instance()
    sched = two_level_opt(inst)
    rep = verify_schedule(inst, sched)
    print(f"  {inst.n} tasks -> {sched.n_clusters} clusters, {sched.n_processors} processors, "
          f"{sched.n_copies} copies, {sched.n_messages} messages; makespan {rep.makespan:g} = "
          f"lower bound {rep.lower_bound:g}: {rep.optimal}; verified: {rep.feasible}")
    rows = run_sweep(client, ["layered", "forkjoin"], [200, 2000], range(2))
    ok = rep.feasible and rep.optimal and all(r["verified"] and r["optimal"] for r in rows)
    print(f"  sweep: {len(rows)} random DAGs as Dask tasks, all verified and at the lower bound: "
          f"{all(r['verified'] and r['optimal'] for r in rows)}; mean duplication "
          f"{sum(r['duplication_ratio'] for r in rows) / len(rows):.2f} copies per task")
    return ok
