"""The ``twolevel`` item of parameter sweeps (:mod:`stealsearch.engine.app.sweep`): 2LVDSOPT on one
random DAG, checked by the independent verifier; Theorem 1 says the makespan equals the
lower bound, so a schedule that is infeasible or longer raises.

>>> r = twolevel(n=50, kind="layered", seed=0)
>>> r["verified"], r["makespan"] == r["lower_bound"]
(True, True)
"""
from __future__ import annotations

import time

from stealsearch.engine.core.problem import SolutionError


def twolevel(*, n: int, kind: str = "layered", seed: int = 0, c2_extra: int = 10,
             trivial: bool = False) -> dict:
    """``c2_extra``: c(2) is drawn as c(1) + U{0..c2_extra} before clipping to conditions
    (2)-(3); 0 makes both levels equal.  ``trivial``: also build and verify seed 004's
    *trivial solution* (every critical sequence in one cluster, §2.1: the same makespan,
    more processors per cluster), the comparison of ``stealsearch twolevel sweep``."""
    import numpy as np

    from .algorithms import two_level_opt
    from .generators import random_instance
    from .verify import verify_schedule

    inst = random_instance(n, seed=seed, kind=kind, c2_extra=(0, int(c2_extra)))
    t0 = time.perf_counter()
    sched = two_level_opt(inst)
    seconds = time.perf_counter() - t0
    rep = verify_schedule(inst, sched)
    if not rep.feasible:
        raise SolutionError(f"infeasible schedule: {(rep.errors or ['?'])[0]}")
    if rep.makespan != rep.lower_bound:
        raise SolutionError(f"makespan {rep.makespan} above the lower bound {rep.lower_bound}")
    ppc = sched.processors_per_cluster()
    out = {"arcs": inst.m, "makespan": rep.makespan, "lower_bound": rep.lower_bound,
           "clusters": sched.n_clusters, "processors": sched.n_processors,
           "max_processors_per_cluster": int(ppc.max()),
           "mean_processors_per_cluster": float(ppc.mean()),
           "copies": sched.n_copies, "duplication_ratio": sched.n_copies / inst.n,
           "messages": sched.n_messages,
           "inter_cluster_messages": int(np.count_nonzero(sched.msg_level == 2)),
           "verified": True, "algorithm_seconds": seconds}
    if trivial:
        one = two_level_opt(inst, one_cluster=True)
        rep_one = verify_schedule(inst, one)
        if not rep_one.feasible:
            raise SolutionError(f"infeasible trivial solution: {(rep_one.errors or ['?'])[0]}")
        out.update(trivial_processors_per_cluster=one.n_processors,
                   trivial_makespan=rep_one.makespan, trivial_verified=True)
    return out


def _warmup() -> None:
    """Load 2LVDSOPT's kernels in this process on a 12-task DAG."""
    from .algorithms import two_level_opt
    from .generators import random_instance

    two_level_opt(random_instance(12, seed=0))


twolevel.warmup = _warmup


def twolevel_table1() -> dict:
    """2LVDSOPT on the Table 1 instance (our reconstruction of the paper's 16-task DAG):
    makespan and the lower bound (Theorem 1: equal), checked by the verifier."""
    from .algorithms import two_level_opt
    from .generators import table1_instance
    from .verify import verify_schedule

    inst = table1_instance()
    sched = two_level_opt(inst)
    rep = verify_schedule(inst, sched)
    if not rep.feasible:
        raise SolutionError(f"infeasible schedule: {(rep.errors or ['?'])[0]}")
    return {"tasks": inst.n, "arcs": inst.m, "makespan": rep.makespan,
            "lower_bound": rep.lower_bound, "clusters": sched.n_clusters,
            "processors": sched.n_processors, "copies": sched.n_copies, "verified": True}


twolevel_table1.warmup = _warmup
