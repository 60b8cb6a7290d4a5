"""2LVDSOPT: earliest start dates, critical sequences, their graph, and the schedule.

Seed paper 004 (Colin & Nakechbandi), section 2.2, Algorithms 1-4:

1. :func:`earliest_start_dates` — 2LVDSLWB (Algorithm 1): b_i, a lower bound on the
   start of every copy of task i under condition (2).
2. :func:`critical_sequences` — 2LVDS-Cs (Algorithm 2): the critical subgraph GC
   (arcs with b_j < b_i + p_i + c_ij(1)), a forest, and one critical sequence per leaf
   of GC (the path from its root).
3. :func:`sequence_components` — 2LVDSCC (Algorithm 3): connected components of the
   graph GSC of critical sequences.  The paper's test ``b_i < b_i + p_i + c_ij(2)`` is
   a typo (always true); we use ``b_j < b_i + p_i + c_ij(2)`` as in the text above it.
   :func:`critical_sequence_graph` builds GSC edge by edge (the literal Algorithm 3,
   quadratic, for small instances and cross-checks); the solver never does.
4. :func:`build_schedule` — 2LVDSBUILD (Algorithm 4): one cluster per component, one
   processor per sequence, each copy at its b_i, messages sent when the sending copy
   ends, one message per (predecessor task, receiving processor).

:func:`two_level_opt` runs the four steps.  The schedule is data
(:class:`TwoLevelSchedule`): copies and messages as parallel numpy arrays.

Choices where the paper is loose
--------------------------------
* A critical sequence is the path root -> leaf of GC for every leaf; an isolated task
  is a root and a leaf, its sequence has one task.  Sequences are numbered in the
  depth-first order of GC (roots by task index, children by task index).
* Algorithm 4 tries copies one by one and replaces a message that comes too late for a
  later copy.  We gather, per (task i, receiving processor q), all copies on q that need
  i, and pick the sender once: a copy of i in q's own cluster when one exists (delay
  c(1)), otherwise any copy (delay c(2)).  Theorem 4 guarantees that a same-cluster
  copy exists whenever some consumer has b_j < b_i + p_i + c_ij(2); we assert it.
* A message carries i's result to every copy on q that needs it (the paper's "one
  message is enough for all").  It starts at b_i + p_i; its duration, which is how long
  it holds the channel, is the largest delay c_ij(level) over those consumers, and it
  is on time for consumer j when start + c_ij(level) <= b_j (the GPC).  Condition (3)
  makes this contention free: the next message on the same channel comes from a later
  task on the sending processor, which starts after a successor k of i that lasts
  p_k >= c_ij(2).
* Cluster and processor ids are 0-based; processors are numbered cluster by cluster.
  The *trivial solution* of the paper (one cluster, all sequences in it, the schedule of
  [6]) is ``build_schedule(..., one_cluster=True)``.

Complexity: Algorithms 1-3 are O(n + m) (plus sorting); BUILD is O(copies + sum over
copies of in-degree), not the paper's naive O(m^2 n^2).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import compiled as K
from .model import TwoLevelInstance


# ------------------------------------------------------------------ Algorithm 1
def earliest_start_dates(inst: TwoLevelInstance) -> np.ndarray:
    """Algorithm 1 (2LVDSLWB): the earliest start date b_i of every task.

    Example (Table 1 of the paper, reconstructed DAG)::

        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> earliest_start_dates(table1_instance()).astype(int).tolist()
        [0, 2, 4, 6, 4, 7, 9, 11, 0, 9, 11, 13, 11, 14, 16, 18]
    """
    pptr, parcs = inst.csr("pred")
    return K.earliest_start_dates(inst.topological_order(), inst.p, inst.src, inst.c1,
                                  pptr, parcs)


# ------------------------------------------------------------------ Algorithm 2
@dataclass
class CriticalForest:
    """GC and its critical sequences (one per leaf, ``leaves[s]`` ends sequence s)."""

    parent: np.ndarray        # GC parent task, -1 for a root
    parent_arc: np.ndarray    # arc id of (parent, task) in E, -1 for a root
    in_gc: np.ndarray         # bool per arc of E
    tin: np.ndarray
    tout: np.ndarray
    leaf_lo: np.ndarray
    leaf_hi: np.ndarray
    depth: np.ndarray
    leaves: np.ndarray

    @property
    def n_sequences(self) -> int:
        return int(self.leaves.shape[0])

    def is_ancestor(self, u, v):
        """True where task u is v or a GC ancestor of v (u lies on every sequence of v)."""
        return (self.tin[u] <= self.tin[v]) & (self.tin[v] < self.tout[u])

    def sequence(self, s: int) -> list[int]:
        """Tasks of critical sequence s, root first."""
        out = []
        v = int(self.leaves[s])
        while v != -1:
            out.append(v)
            v = int(self.parent[v])
        return out[::-1]


def critical_sequences(inst: TwoLevelInstance, b: np.ndarray) -> CriticalForest:
    """Algorithm 2 (2LVDS-Cs): GC = arcs with b_j < b_i + p_i + c_ij(1), and its sequences.

    Example::

        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> inst = table1_instance(); b = earliest_start_dates(inst)
        >>> f = critical_sequences(inst, b)
        >>> [[inst.names[t] for t in f.sequence(s)] for s in range(f.n_sequences)]
        [[1, 2, 3, 4], [1, 2, 5, 6], [7, 8], [9, 10, 11, 12], [9, 10, 13, 14], [15, 16]]
    """
    n, src, dst = inst.n, inst.src, inst.dst
    in_gc = b[dst] < b[src] + inst.p[src] + inst.c1
    gc_arcs = np.flatnonzero(in_gc)
    if np.any(np.bincount(dst[gc_arcs], minlength=n) > 1):   # cannot happen (paper, [5])
        raise AssertionError("critical subgraph GC is not a forest")
    parent = np.full(n, -1, np.int64)
    parent_arc = np.full(n, -1, np.int64)
    parent[dst[gc_arcs]] = src[gc_arcs]
    parent_arc[dst[gc_arcs]] = gc_arcs
    has_parent = parent >= 0
    kids = np.flatnonzero(has_parent)
    kids = kids[np.argsort(parent[kids], kind="stable")]
    child_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(parent[kids], minlength=n), out=child_ptr[1:])
    roots = np.flatnonzero(~has_parent).astype(np.int64)
    tin, tout, leaf_lo, leaf_hi, depth, leaves = K.forest_tour(parent, child_ptr,
                                                               kids.astype(np.int64), roots)
    return CriticalForest(parent, parent_arc, in_gc, tin, tout, leaf_lo, leaf_hi, depth, leaves)


# ------------------------------------------------------------------ Algorithm 3
def tight_arcs(inst: TwoLevelInstance, b: np.ndarray, forest: CriticalForest) -> np.ndarray:
    """Arcs (i, j) that create GSC edges: b_j < b_i + p_i + c_ij(2) and i is not a GC
    ancestor of j (so no sequence holds both, and every sequence through i meets
    every sequence through j)."""
    src, dst = inst.src, inst.dst
    tight = (b[dst] < b[src] + inst.p[src] + inst.c2) & ~forest.is_ancestor(src, dst)
    return np.flatnonzero(tight)


def sequence_components(inst: TwoLevelInstance, b: np.ndarray,
                        forest: CriticalForest) -> np.ndarray:
    """Algorithm 3 (2LVDSCC): component id (0..C-1) of each critical sequence.

    Components are numbered in order of their first sequence.  Example::

        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> inst = table1_instance(); b = earliest_start_dates(inst)
        >>> sequence_components(inst, b, critical_sequences(inst, b)).tolist()
        [0, 0, 0, 1, 1, 1]
    """
    arcs = tight_arcs(inst, b, forest)
    root = K.sequence_components(forest.n_sequences, inst.src[arcs], inst.dst[arcs],
                                 forest.leaf_lo, forest.leaf_hi)
    _, first, inverse = np.unique(root, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inverse]


def critical_sequence_graph(inst: TwoLevelInstance, b: np.ndarray, forest: CriticalForest):
    """The graph GSC of Algorithm 3, built literally (pairs of sequences x arcs).

    Quadratic in the number of sequences: for small instances, figures and tests.
    Returns a ``networkx.Graph`` on sequence ids 0..S-1.
    """
    import networkx as nx

    seqs = [set(forest.sequence(s)) for s in range(forest.n_sequences)]
    g = nx.Graph()
    g.add_nodes_from(range(len(seqs)))
    arcs = [(int(i), int(j), float(c2)) for i, j, c2 in zip(inst.src, inst.dst, inst.c2)]
    for s, sc_s in enumerate(seqs):
        for t, sc_t in enumerate(seqs):
            if s == t or g.has_edge(s, t):
                continue
            for i, j, c2 in arcs:
                if i in sc_s and i not in sc_t and j in sc_t and b[j] < b[i] + inst.p[i] + c2:
                    g.add_edge(s, t)
                    break
    return g


# ------------------------------------------------------------------ Algorithm 4
@dataclass
class TwoLevelSchedule:
    """A 2LVDS schedule as data (0-based ids; times in the instance's unit).

    Copies (row r): ``copy_task[r]`` is copy number ``copy_index[r]`` (1-based, the
    paper's i^k) on processor ``copy_processor[r]`` of cluster ``copy_cluster[r]``,
    starting at ``copy_start[r]``.  Processor q belongs to cluster ``processor_cluster[q]``.
    Messages (row e): the result of task ``msg_task[e]`` sent by copy row
    ``msg_from_copy[e]`` (on ``msg_from_processor[e]``) to processor ``msg_to_processor[e]``
    over the channel (from, to), at ``msg_start[e]`` for ``msg_duration[e]``;
    ``msg_level[e]`` is 1 (intra-cluster) or 2 (inter-cluster); ``msg_to_copy[e]`` is
    the first copy it serves.
    """

    instance: TwoLevelInstance
    processor_cluster: np.ndarray
    copy_task: np.ndarray
    copy_index: np.ndarray
    copy_processor: np.ndarray
    copy_cluster: np.ndarray
    copy_start: np.ndarray
    msg_task: np.ndarray
    msg_from_copy: np.ndarray
    msg_to_copy: np.ndarray
    msg_from_processor: np.ndarray
    msg_to_processor: np.ndarray
    msg_level: np.ndarray
    msg_start: np.ndarray
    msg_duration: np.ndarray
    b: np.ndarray | None = None
    lower_bound: float | None = None
    timings: dict = field(default_factory=dict)

    @property
    def n_clusters(self) -> int:
        return int(self.processor_cluster.max()) + 1 if self.processor_cluster.size else 0

    @property
    def n_processors(self) -> int:
        return int(self.processor_cluster.shape[0])

    @property
    def n_copies(self) -> int:
        return int(self.copy_task.shape[0])

    @property
    def n_messages(self) -> int:
        return int(self.msg_task.shape[0])

    @property
    def makespan(self) -> float:
        return float(np.max(self.copy_start + self.instance.p[self.copy_task]))

    def processors_per_cluster(self) -> np.ndarray:
        return np.bincount(self.processor_cluster, minlength=self.n_clusters)

    def summary(self) -> dict:
        """Counts and figures (JSON-ready)."""
        inst = self.instance
        num = (lambda x: int(x)) if inst.integral else float
        ppc = self.processors_per_cluster()
        copies_per_task = np.bincount(self.copy_task, minlength=inst.n)
        return {
            "tasks": inst.n, "arcs": inst.m,
            "makespan": num(self.makespan),
            "lower_bound": None if self.lower_bound is None else num(self.lower_bound),
            "clusters": self.n_clusters,
            "processors": self.n_processors,
            "max_processors_per_cluster": int(ppc.max()) if ppc.size else 0,
            "copies": self.n_copies,
            "duplicated_tasks": int(np.count_nonzero(copies_per_task > 1)),
            "duplication_ratio": self.n_copies / inst.n,
            "messages": self.n_messages,
            "inter_cluster_messages": int(np.count_nonzero(self.msg_level == 2)),
        }

    def to_dict(self) -> dict:
        """The whole schedule as plain JSON-ready data (task names, 0-based ids)."""
        inst = self.instance
        names = inst.names
        num = (lambda x: int(x)) if inst.integral else float
        copies = [{"task": names[t], "copy": int(k), "processor": int(q), "cluster": int(c),
                   "start": num(s)}
                  for t, k, q, c, s in zip(self.copy_task, self.copy_index, self.copy_processor,
                                           self.copy_cluster, self.copy_start)]
        messages = [{"task": names[t], "from_copy": int(fc), "to_copy": int(tc),
                     "to_processor": int(tq), "channel": [int(fq), int(tq)], "level": int(lv),
                     "start": num(s), "duration": num(d)}
                    for t, fc, tc, fq, tq, lv, s, d in zip(
                        self.msg_task, self.msg_from_copy, self.msg_to_copy,
                        self.msg_from_processor, self.msg_to_processor, self.msg_level,
                        self.msg_start, self.msg_duration)]
        return {"processor_cluster": self.processor_cluster.tolist(),
                "copies": copies, "messages": messages}


def build_schedule(inst: TwoLevelInstance, b: np.ndarray, forest: CriticalForest,
                   components: np.ndarray, one_cluster: bool = False) -> TwoLevelSchedule:
    """Algorithm 4 (2LVDSBUILD): clusters, processors, copies and messages.

    ``one_cluster=True`` builds the paper's trivial solution (every sequence in a
    single cluster).  Example::

        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> inst = table1_instance(); b = earliest_start_dates(inst)
        >>> f = critical_sequences(inst, b)
        >>> s = build_schedule(inst, b, f, sequence_components(inst, b, f))
        >>> s.n_clusters, s.n_processors, s.n_copies
        (2, 6, 20)
    """
    nseq = forest.n_sequences
    if one_cluster:
        components = np.zeros(nseq, np.int64)
    components = np.asarray(components, np.int64)
    # processors numbered cluster by cluster, sequences in tour order within a cluster
    seq_order = np.argsort(components, kind="stable")
    proc_of_seq = np.empty(nseq, np.int64)
    proc_of_seq[seq_order] = np.arange(nseq)
    proc_leaf = forest.leaves[seq_order].astype(np.int64)
    processor_cluster = components[seq_order]
    offs, copy_task, copy_index, copy_processor, copy_cluster, copy_start = K.place_copies(
        proc_leaf, forest.depth, forest.parent, b, processor_cluster)

    pptr, parcs = inst.csr("pred")
    msg_task, msg_proc, msg_first, need_intra, max_c1, max_c2 = K.gather_messages(
        offs, copy_task, pptr, parcs, inst.src, forest.tin, forest.tout, b, inst.p,
        inst.c1, inst.c2)
    # sender: a copy of the task in the receiver's cluster if any, else its first copy.
    # The sequences through task i are the tour positions leaf_lo[i] .. leaf_hi[i]-1;
    # look for one of them in cluster C among the positions sorted by (cluster, position).
    by_cluster = np.sort(components * nseq + np.arange(nseq))
    msg_cluster = processor_cluster[msg_proc]
    lo = forest.leaf_lo[msg_task]
    hi = forest.leaf_hi[msg_task]
    pos = np.searchsorted(by_cluster, msg_cluster * nseq + lo)
    pos_ok = np.minimum(pos, nseq - 1)
    same = (pos < nseq) & (by_cluster[pos_ok] < msg_cluster * nseq + hi)
    if np.any(need_intra & ~same):  # Theorem 4 says this cannot happen
        raise AssertionError("2LVDSOPT invariant broken: no copy in the receiver's cluster")
    sender_seq = np.where(same, by_cluster[pos_ok] - msg_cluster * nseq, lo)
    msg_from_copy = offs[proc_of_seq[sender_seq]] + forest.depth[msg_task]
    msg_level = np.where(same, 1, 2).astype(np.int64)
    msg_duration = np.where(same, max_c1, max_c2)
    msg_start = b[msg_task] + inst.p[msg_task]
    return TwoLevelSchedule(
        instance=inst, processor_cluster=processor_cluster, copy_task=copy_task,
        copy_index=copy_index, copy_processor=copy_processor, copy_cluster=copy_cluster,
        copy_start=copy_start, msg_task=msg_task, msg_from_copy=msg_from_copy,
        msg_to_copy=msg_first, msg_from_processor=copy_processor[msg_from_copy],
        msg_to_processor=msg_proc, msg_level=msg_level, msg_start=msg_start,
        msg_duration=msg_duration, b=b, lower_bound=float(np.max(b + inst.p)))


def two_level_opt(inst: TwoLevelInstance, one_cluster: bool = False) -> TwoLevelSchedule:
    """2LVDSOPT: Algorithms 1-4 on a validated instance; ``timings`` holds each step's seconds.

    Example::

        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> s = two_level_opt(table1_instance())
        >>> s.makespan == s.lower_bound, s.n_clusters, s.processors_per_cluster().tolist()
        (True, 2, [3, 3])
    """
    t0 = time.perf_counter()
    b = earliest_start_dates(inst)
    t1 = time.perf_counter()
    forest = critical_sequences(inst, b)
    t2 = time.perf_counter()
    comps = sequence_components(inst, b, forest)
    t3 = time.perf_counter()
    sched = build_schedule(inst, b, forest, comps, one_cluster=one_cluster)
    t4 = time.perf_counter()
    sched.timings = {"lwb": t1 - t0, "cs": t2 - t1, "cc": t3 - t2, "build": t4 - t3,
                     "total": t4 - t0}
    return sched
