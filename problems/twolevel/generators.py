"""Instance generators for 2LVDS (seed paper 004): random DAGs with small delays,
instances that break the paper's conditions, and a DAG consistent with Table 1.

* :func:`layered_dag`, :func:`series_parallel_dag`, :func:`fork_join_dag` give DAG
  shapes; :func:`small_delay_times` draws p, c(1), c(2) and then clips the delays so
  that conditions (2) and (3) hold by construction (c_ij(2) <= p_k for every other
  successor k of i; c_hj(1) <= p_g for every other predecessor g of j; c1 <= c2).
  :func:`random_instance` combines them; sizes up to 10^5 tasks and beyond.
* :func:`violating_instance` turns a valid instance into one that breaks exactly one
  rule (condition (2), condition (3), c1 > c2, a cycle, a non-positive time).
* :func:`table1_instance`: the paper's Fig. 2 DAG is lost with the figures.  This is a
  16-task DAG *built by us* to be consistent with everything the text says about it:
  Algorithm 1 gives exactly the b_i of Table 1; there are six critical sequences
  (Fig. 3) in two connected components; the schedule uses two clusters of three
  processors and duplicates exactly tasks 1, 2, 9 and 10, twice each (Fig. 4).  The
  processing times and delays themselves are our invention, not the paper's.
"""
from __future__ import annotations

import numpy as np

from .model import TwoLevelInstance

KINDS = ("layered", "sp", "forkjoin")


def _rng(seed):
    return np.random.default_rng(seed)


def layered_dag(n: int, seed=0, width: int | None = None, max_in: int = 3,
                skip: float = 0.1):
    """Arcs (src, dst) of a random layered DAG on n tasks.

    Layers of about ``width`` tasks (default ~sqrt(n)*2); each task of a later layer
    gets 1..max_in predecessors, from the previous layer or (with probability ``skip``)
    from any earlier layer.  Example::

        >>> src, dst = layered_dag(20, seed=1)
        >>> bool((src < dst).all())
        True
    """
    rng = _rng(seed)
    if width is None:
        width = max(2, int(2 * np.sqrt(n)))
    width = max(1, min(width, n))
    layer = np.arange(n) // width
    first_of_layer = np.arange(0, n, width)
    later = np.flatnonzero(layer > 0)
    k = rng.integers(1, max_in + 1, size=later.shape[0])
    dst = np.repeat(later, k)
    lay = layer[dst]
    from_prev = rng.random(dst.shape[0]) >= skip
    lo = np.where(from_prev, first_of_layer[lay - 1], 0)
    hi = first_of_layer[lay]  # exclusive
    src = lo + (rng.random(dst.shape[0]) * (hi - lo)).astype(np.int64)
    key = np.unique(src * n + dst)
    return (key // n).astype(np.int64), (key % n).astype(np.int64)


def series_parallel_dag(n: int, seed=0, p_series: float = 0.5):
    """Arcs of a random two-terminal series-parallel DAG on n >= 2 tasks.

    Start from one arc s -> t; repeatedly pick a random arc (u, v) and either subdivide
    it (u -> w -> v, series) or add a parallel path u -> w -> v beside it.  Example::

        >>> src, dst = series_parallel_dag(10, seed=2); len(set(src) | set(dst))
        10
    """
    rng = _rng(seed)
    n = max(n, 2)
    src = [0]
    dst = [1]
    picks = rng.random(n)
    choose = rng.random(n)
    for w in range(2, n):
        e = int(picks[w] * len(src))
        u, v = src[e], dst[e]
        if choose[w] < p_series:
            dst[e] = w
            src.append(w)
            dst.append(v)
        else:
            src.extend((u, w))
            dst.extend((w, v))
    src = np.array(src, np.int64)
    dst = np.array(dst, np.int64)
    # relabel tasks in a topological order (so names grow along the arcs)
    import networkx as nx
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    rank = np.empty(n, np.int64)
    rank[np.array(list(nx.topological_sort(g)), np.int64)] = np.arange(n)
    return rank[src], rank[dst]


def fork_join_dag(n: int, seed=0, max_width: int = 8, max_chain: int = 3):
    """Arcs of a random fork-join DAG on n tasks: stages of fork -> parallel chains -> join.

    Example::

        >>> src, dst = fork_join_dag(30, seed=3); int(src.min()), int(dst.max())
        (0, 29)
    """
    rng = _rng(seed)
    src, dst = [], []
    v = 0  # current fork task
    nxt = 1
    while nxt < n:
        width = int(rng.integers(1, max_width + 1))
        ends = []
        for _ in range(width):
            if nxt >= n - 1:
                break
            length = int(rng.integers(1, max_chain + 1))
            prev = v
            for _ in range(length):
                if nxt >= n - 1:
                    break
                src.append(prev)
                dst.append(nxt)
                prev = nxt
                nxt += 1
            ends.append(prev)
        join = nxt
        nxt += 1
        if join >= n:
            break
        for e in (ends or [v]):
            src.append(e)
            dst.append(join)
        v = join
    return np.array(src, np.int64), np.array(dst, np.int64)


def _min_excluding_self(group, value, ngroups):
    """For each element: the minimum of ``value`` over the other elements of its group
    (+inf when alone)."""
    m = group.shape[0]
    out = np.full(m, np.inf)
    if m == 0:
        return out
    order = np.lexsort((value, group))
    g = group[order]
    first = np.ones(m, bool)
    first[1:] = g[1:] != g[:-1]
    idx_first = np.flatnonzero(first)
    gid = np.cumsum(first) - 1
    best = value[order[idx_first]]
    size = np.diff(np.append(idx_first, m))
    second = np.full(idx_first.shape[0], np.inf)
    two = size >= 2
    second[two] = value[order[idx_first[two] + 1]]
    is_first = np.zeros(m, bool)
    is_first[idx_first] = True
    res_sorted = np.where(is_first, second[gid], best[gid])
    out[order] = res_sorted
    return out


def small_delay_times(n: int, src, dst, seed=0, p_range=(2, 12), c1_range=(1, 8),
                      c2_extra=(0, 10)):
    """Integer p, c1, c2 satisfying c1 <= c2 and conditions (2)-(3) by clipping.

    c2 is drawn as c1 + extra, then c2 is clipped to the smallest p among the *other*
    successors of the arc's source (3), then c1 to min(c2, smallest p among the other
    predecessors of the arc's target) (2).  Example::

        >>> src, dst = layered_dag(50, seed=4)
        >>> p, c1, c2 = small_delay_times(50, src, dst, seed=4)
        >>> bool((c1 <= c2).all() and (c1 >= 1).all())
        True
    """
    rng = _rng(seed)
    m = src.shape[0]
    p = rng.integers(p_range[0], p_range[1] + 1, size=n).astype(np.float64)
    c1 = rng.integers(c1_range[0], c1_range[1] + 1, size=m).astype(np.float64)
    c2 = c1 + rng.integers(c2_extra[0], c2_extra[1] + 1, size=m)
    c2 = np.minimum(c2, _min_excluding_self(src, p[dst], n))          # condition (3)
    c1 = np.minimum(c1, c2)
    c1 = np.minimum(c1, _min_excluding_self(dst, p[src], n))          # condition (2)
    return p, c1, c2


def random_instance(n: int, seed=0, kind: str = "layered", **times) -> TwoLevelInstance:
    """A random valid instance (conditions (2)-(3) hold) of one of :data:`KINDS`.

    Example::

        >>> inst = random_instance(100, seed=7, kind="sp"); inst.n
        100
    """
    if kind == "layered":
        src, dst = layered_dag(n, seed)
    elif kind == "sp":
        src, dst = series_parallel_dag(n, seed)
    elif kind == "forkjoin":
        src, dst = fork_join_dag(n, seed)
    else:
        from .model import TwoLevelInputError
        raise TwoLevelInputError(f"unknown random DAG kind {kind!r} (choose from {', '.join(KINDS)})")
    p, c1, c2 = small_delay_times(n, src, dst, seed=(seed, 1), **times)
    return TwoLevelInstance.from_arrays(p, src, dst, c1, c2,
                                        source=f"<random {kind} n={n} seed={seed}>")


VIOLATIONS = ("cond2", "cond3", "c1>c2", "cycle", "p<=0", "c<=0")


def violating_instance(base: TwoLevelInstance, which: str, seed=0) -> TwoLevelInstance:
    """A copy of ``base`` (unvalidated) that breaks exactly the rule ``which`` of
    :data:`VIOLATIONS` at one random place.  ``base`` needs a task with two
    predecessors (cond2) / two successors (cond3) / an arc (the others)."""
    rng = _rng(seed)
    p, src, dst = base.p.copy(), base.src.copy(), base.dst.copy()
    c1, c2 = base.c1.copy(), base.c2.copy()
    n = base.n
    if which == "cond2":
        indeg = np.bincount(dst, minlength=n)
        j = rng.choice(np.flatnonzero(indeg >= 2))
        arcs = np.flatnonzero(dst == j)
        a, g_arc = arcs[0], arcs[1]
        c1[a] = p[src[g_arc]] + 1          # c_hj(1) > p_g for the other predecessor g
        c2[a] = max(c2[a], c1[a])
        # keep (3) for the arc's source: its other successors must be at least c2
        others = np.flatnonzero((src == src[a]) & (np.arange(src.shape[0]) != a))
        p[dst[others]] = np.maximum(p[dst[others]], c2[a])
    elif which == "cond3":
        outdeg = np.bincount(src, minlength=n)
        i = rng.choice(np.flatnonzero(outdeg >= 2))
        arcs = np.flatnonzero(src == i)
        a, k_arc = arcs[0], arcs[1]
        c2[a] = p[dst[k_arc]] + 1          # c_ij(2) > p_k for the other successor k
    elif which == "c1>c2":
        a = rng.integers(src.shape[0])
        c1[a] = c2[a] + 1
    elif which == "cycle":
        a = rng.integers(src.shape[0])
        src = np.append(src, dst[a])
        dst = np.append(dst, src[a])
        c1 = np.append(c1, 1.0)
        c2 = np.append(c2, 1.0)
    elif which == "p<=0":
        p[rng.integers(n)] = 0.0
    elif which == "c<=0":
        c1[rng.integers(src.shape[0])] = -1.0
    else:
        raise ValueError(f"unknown violation {which!r}")
    return TwoLevelInstance.from_arrays(p, src, dst, c1, c2, names=base.names,
                                        source=f"<{which} violation>", validate=False)


#: Table 1 of the paper: b_i of the 16 tasks of its Fig. 2 DAG.
TABLE1_B = [0, 2, 4, 6, 4, 7, 9, 11, 0, 9, 11, 13, 11, 14, 16, 18]

_TABLE1_P = {1: 2, 2: 2, 3: 2, 4: 4, 5: 3, 6: 4, 7: 2, 8: 3,
             9: 9, 10: 2, 11: 2, 12: 4, 13: 3, 14: 4, 15: 2, 16: 2}
#  (from, to, c1, c2)
_TABLE1_ARCS = [
    # arcs of GC (b_j < b_i + p_i + c_ij(1)): the trees 1-2-{3-4, 5-6}, 7-8,
    # 9-10-{11-12, 13-14} and 15-16
    (1, 2, 1, 2), (2, 3, 1, 2), (2, 5, 1, 2), (3, 4, 1, 2), (5, 6, 1, 2), (7, 8, 1, 2),
    (9, 10, 1, 2), (10, 11, 1, 2), (10, 13, 1, 2), (11, 12, 1, 2), (13, 14, 1, 2),
    (15, 16, 1, 2),
    # tight only in c(2): edges of GSC, i.e. the sequences share a cluster
    (3, 6, 1, 2),      # b6 = 7 = b3 + p3 + 1 < b3 + p3 + 2
    (3, 7, 3, 4),      # 7 is a root of GC: b7 = 9 = b3+p3+3 = b5+p5+2 (a tie) ...
    (5, 7, 2, 2),      # ... and 9 < b3 + p3 + 4 joins sequence 7-8 to 1-2-3-4
    (11, 14, 1, 2),    # b14 = 14 = b11 + p11 + 1 < b11 + p11 + 2
    (11, 15, 3, 4),    # 15 is a root of GC: b15 = 16 = b11+p11+3 = b13+p13+2 ...
    (13, 15, 2, 2),    # ... and 16 < b11 + p11 + 4 joins sequence 15-16 to 9-10-11-12
    # loose in c(2): no edge of GSC, the two components stay apart
    (2, 10, 1, 2), (8, 16, 1, 2),
]


def table1_instance() -> TwoLevelInstance:
    """A 16-task DAG consistent with Table 1 and Figs. 3-4 of the paper (our reconstruction).

    Example::

        >>> inst = table1_instance(); inst.n, inst.m
        (16, 20)
    """
    names = list(range(1, 17))
    return TwoLevelInstance.build(names, _TABLE1_P, _TABLE1_ARCS,
                                  source="<Table 1 reconstruction>")
