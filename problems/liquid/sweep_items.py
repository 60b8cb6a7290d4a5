"""The ``liquid`` item of parameter sweeps (:mod:`stealsearch.engine.app.sweep`): one liquid schedule.

The traffic is the all-to-all exchange of an ``allocation`` of the Swiss-T1 (8 numbers
0..4, as a list or a string ``"4 4 0 0 0 0 0 0"``) or ``traffic: example`` (the
25-transfer traffic of Fig. 1).  The schedule found is checked by the independent
verifier of :mod:`stealsearch.problems.liquid.verify`, which raises when it is not a schedule.

>>> r = liquid(traffic="example")
>>> r["transfers"], r["duration"], r["liquid"], r["verified"]
(25, 6, True, True)
"""
from __future__ import annotations

from .model import LiquidInputError

TRAFFICS = ("example",)


def _allocation(value) -> list:
    parts = value.split() if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)) or len(parts) != 8:
        raise LiquidInputError(f"allocation must be 8 numbers 0..4, got {value!r}")
    try:
        return [int(a) for a in parts]
    except (TypeError, ValueError):
        raise LiquidInputError(f"allocation must be 8 numbers 0..4, got {value!r}") from None


def liquid(*, traffic: str | None = None, allocation: str | list | None = None,
           colouring: bool = True, anchor: bool = True,
           solve_kwargs: dict | None = None) -> dict:
    from .problem import schedule_traffic
    from .topology import fig1_traffic, swiss_t1
    from .verify import verify_schedule

    if (traffic is None) == (allocation is None):
        raise LiquidInputError("a liquid item needs 'traffic: example' or an 'allocation', "
                               "not both")
    if traffic is not None:
        if traffic not in TRAFFICS:
            raise LiquidInputError(f"unknown traffic {traffic!r}; expected one of "
                                   f"{', '.join(TRAFFICS)} (or an allocation)")
        x = fig1_traffic()
    else:
        t1 = swiss_t1()
        alloc = t1.check_allocation(_allocation(allocation))
        if sum(alloc) == 0:
            raise LiquidInputError("allocation: no node allocated, the traffic is empty")
        x = t1.all_to_all(alloc)
    r = schedule_traffic(x, colour_if_not_liquid=colouring, anchor=anchor,
                         **(solve_kwargs or {"backend": "sequential"}))
    verified = None
    if r.get("schedule") is not None:
        check = verify_schedule(x, r["schedule"], require_liquid=r["status"] == "liquid")
        verified = check["length"] == r["length"]
    return {"transfers": x.size, "duration": r["duration"], "status_schedule": r["status"],
            "length": r.get("length"), "liquid": r.get("liquid"),
            "liquid_throughput": r.get("liquid_throughput"),
            "round_robin_steps": r.get("round_robin_steps"), "nodes": r.get("nodes", 0),
            "verified": verified, "search_seconds": r.get("search_seconds", 0.0)}


def _warmup() -> None:
    """Load the search kernels in this process on the Fig. 1 traffic."""
    from .problem import schedule_traffic
    from .topology import fig1_traffic

    schedule_traffic(fig1_traffic(), backend="sequential")


liquid.warmup = _warmup


def liquid_model(*, allocation: str | list) -> dict:
    """The model figures of one Swiss-T1 all-to-all traffic, no search: transfers,
    edges of the congestion graph (pairs of transfers sharing a link; Annex), duration
    and liquid throughput.

    >>> liquid_model(allocation="1 1 0 0 0 0 0 0")["transfers"]
    4
    """
    from .topology import swiss_t1

    t1 = swiss_t1()
    x = t1.all_to_all(t1.check_allocation(_allocation(allocation)))
    return {"nodes": int(sum(_allocation(allocation))), "transfers": x.size,
            "congestion_edges": len(x.congestion_edges()), "duration": x.duration(),
            "liquid_throughput": x.liquid_throughput()}


_CLASSES: list = []


def _classes() -> list:
    if not _CLASSES:
        from .sweep import equivalence_classes

        _CLASSES.extend(equivalence_classes())
    return _CLASSES


def liquid_class(*, index: int, node_limit: int = 2_000_000) -> dict:
    """One of the 363 Swiss-T1 sub-topologies (:mod:`stealsearch.problems.liquid.sweep`; index 0 is
    the empty allocation, 1..362 are searched), on the axis of Figs. 6 and 9: its
    representative's liquid throughput, round robin, and the liquid-schedule search."""
    from .sweep import evaluate_allocation

    classes = _classes()
    if not 0 < int(index) < len(classes):
        raise LiquidInputError(f"class index must be in 1..{len(classes) - 1}, got {index}")
    c = classes[int(index)]
    r = evaluate_allocation(c["representative"], node_limit=node_limit)
    return {"classes": len(classes), "allocation": " ".join(map(str, c["representative"])),
            "members": c["members"], "nodes": r["nodes"], "transfers": r["transfers"],
            "duration": r["duration"], "liquid_throughput": r["liquid_throughput"],
            "round_robin_steps": r["round_robin_steps"],
            "round_robin_throughput": r["round_robin_throughput"],
            "status_schedule": r["status"], "length": r["length"],
            "schedule_throughput": r["schedule_throughput"], "search_nodes": r["search_nodes"],
            "search_seconds": r["search_seconds"]}


liquid_class.warmup = _warmup


def liquid_t1(*, allocation: str | list, node_limit: int = 2_000_000,
              colour: bool = False) -> dict:
    """One allocation of the Swiss-T1 study (``stealsearch liquid t1-study``): its
    all-to-all traffic's liquid figures, round robin, and the liquid-schedule search on
    the sequential engine (``node_limit`` caps it: status ``unknown``), the schedule
    checked by the verifier (:func:`stealsearch.problems.liquid.sweep.evaluate_allocation`).

    >>> r = liquid_t1(allocation="1 1 0 0 0 0 0 0")
    >>> r["status"], r["length"], r["verified"]
    ('liquid', 2, True)
    """
    from .sweep import evaluate_allocation
    from .topology import swiss_t1

    t1_alloc = swiss_t1().check_allocation(_allocation(allocation))
    if sum(t1_alloc) == 0:
        raise LiquidInputError("allocation: no node allocated, the traffic is empty")
    r = evaluate_allocation(t1_alloc, node_limit=node_limit, colour=colour)
    r.pop("allocation")            # the item's own parameter, as the grid wrote it
    return r


liquid_t1.warmup = _warmup
