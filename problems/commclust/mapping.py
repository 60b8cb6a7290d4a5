"""Mapping the best partition's clusters to groups of machines (seed 002, sections 1 and 5).

The paper's purpose for the best partition is to "map groups of processes to processors"
where bandwidth differs between groups (e.g. the nodes of a cluster).  It gives no mapping
algorithm; the rule asked of this package is "largest cluster to largest group".  Rule implemented:

1. clusters sorted by size (descending; ties: more intra-cluster traffic first, then the
   cluster's listing order), groups sorted by capacity (descending; ties: group index);
2. each cluster goes, whole, to a group with room for it: the one with which it exchanges
   the most traffic (with the processes already placed there), ties -> the most free slots.
   The first (largest) cluster thus goes to the largest group, and clusters that talk to
   each other share a group when they can;
3. a cluster larger than every free space is split: its processes (most-communicating first,
   by traffic with the rest of the cluster) fill the group with the most free slots, the rest
   continue with the next one.

The capacities must add up to at least ``N``.  "Before" is the default placement (processes
``0..N-1`` filling groups ``0, 1, ...`` in order, as an MPI launcher places ranks); "after" is
the mapping.  Traffic is reported as messages (table units) between distinct processes of the
same group (``intra_group``), between groups (``inter_group``), and to self (``self``).
"""
from __future__ import annotations

import numpy as np

from .model import CommTableError, validate_table


#: The most groups, and the largest group, ``--groups`` accepts.
MAX_GROUPS = 1 << 20


def parse_groups(text: str) -> list[int]:
    """``"4,4"`` -> ``[4, 4]``; also ``"2x8"`` (2 groups of 8).

    >>> parse_groups("4,4"), parse_groups("2x8")
    ([4, 4], [8, 8])
    """
    s = str(text).strip().lower()
    try:
        if "x" in s:
            count, size = s.split("x", 1)
            groups = [int(size)] * min(int(count), MAX_GROUPS + 1)   # checked below
        else:
            groups = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise CommTableError(f"--groups: expected sizes like 4,4 or 2x8, got {text!r}") from None
    if not groups or any(g <= 0 for g in groups):
        raise CommTableError(f"--groups: sizes must be positive integers, got {text!r}")
    if len(groups) > MAX_GROUPS or max(groups) > MAX_GROUPS:
        # a table has at most 16384 processes: larger figures are typos (and 10^11
        # groups ran out of memory)
        raise CommTableError(f"--groups: at most {MAX_GROUPS} groups of at most "
                             f"{MAX_GROUPS} processes, got {text!r}")
    return groups


def group_traffic(table, placement) -> dict:
    """Intra-group, inter-group and self traffic of a placement (group index per process).

    >>> group_traffic(np.array([[1, 2], [3, 4]]), [0, 1])
    {'intra_group': 0.0, 'inter_group': 5.0, 'self': 5.0, 'inter_fraction': 1.0}
    """
    t = np.asarray(table, dtype=np.float64)
    g = np.asarray(placement)
    same = g[:, None] == g[None, :]
    diag = float(np.trace(t))
    intra = float(t[same].sum()) - diag
    inter = float(t[~same].sum())
    moving = intra + inter
    return {"intra_group": intra, "inter_group": inter, "self": diag,
            "inter_fraction": inter / moving if moving > 0 else 0.0}


def default_placement(n: int, groups) -> np.ndarray:
    """Processes 0..N-1 fill the groups in order.

    >>> default_placement(5, [2, 3]).tolist()
    [0, 0, 1, 1, 1]
    """
    if sum(groups) < n:
        raise CommTableError(f"--groups: capacities add up to {sum(groups)} < {n} processes")
    out = np.empty(n, dtype=np.int64)
    pos = 0
    for gi, cap in enumerate(groups):
        take = min(cap, n - pos)
        out[pos:pos + take] = gi
        pos += take
        if pos == n:
            break
    return out


def map_clusters_to_groups(table, clusters, groups) -> dict:
    """Map clusters (lists of processes) to machine groups; traffic before and after.

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> r = map_clusters_to_groups(paper_table1(), [[0, 1, 2, 3], [4, 5, 6, 7]], [4, 4])
    >>> r["placement"], r["after"]["inter_group"], r["before"]["inter_group"]
    ([0, 0, 0, 0, 1, 1, 1, 1], 1681.0, 1681.0)
    """
    t = validate_table(table)
    n = t.shape[0]
    groups = [int(g) for g in groups]
    if any(g <= 0 for g in groups):
        raise CommTableError("--groups: sizes must be positive")
    if sum(groups) < n:
        raise CommTableError(f"--groups: capacities add up to {sum(groups)} < {n} processes")
    seen = sorted(p for c in clusters for p in c)
    if seen != list(range(n)):
        raise CommTableError("clusters do not form a partition of the processes")
    e = t + t.T
    np.fill_diagonal(e, 0.0)

    def intra(c):
        return float(e[np.ix_(c, c)].sum())

    order = sorted(range(len(clusters)),
                   key=lambda i: (-len(clusters[i]), -intra(clusters[i]), i))
    free = list(groups)
    placement = np.full(n, -1, dtype=np.int64)
    assignment = []
    for ci in order:
        procs = list(clusters[ci])
        fits = [g for g in range(len(free)) if free[g] >= len(procs)]
        if fits:
            to_group = [float(e[np.ix_(procs, np.flatnonzero(placement == g))].sum()) for g in fits]
            pick = max(range(len(fits)), key=lambda i: (to_group[i], free[fits[i]], groups[fits[i]], -fits[i]))
            pick = fits[pick]
            placement[procs] = pick
            free[pick] -= len(procs)
            assignment.append({"cluster": sorted(procs), "groups": [pick]})
            continue
        weight = e[np.ix_(procs, procs)].sum(axis=1)
        procs = [p for _, p in sorted(zip(-weight, procs))]
        used = []
        while procs:
            pick = max(range(len(free)), key=lambda g: (free[g], groups[g], -g))
            take = min(free[pick], len(procs))
            placement[procs[:take]] = pick
            free[pick] -= take
            procs = procs[take:]
            used.append(pick)
        assignment.append({"cluster": sorted(clusters[ci]), "groups": used})
    before = group_traffic(t, default_placement(n, groups))
    after = group_traffic(t, placement)
    return {"groups": groups, "placement": placement.tolist(), "assignment": assignment,
            "before": before, "after": after}
