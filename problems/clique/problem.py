"""Maximum clique as a plug-in problem of the engine (seed 003, chapters 2-4).

:class:`CliqueProblem` packs a :class:`~stealsearch.problems.clique.model.Graph`, a mode and a
bound into what the engine needs: the root row (the empty clique with C_0 = V), the
kernel, the decode (bitset -> the graph's labels) and an independent verifier.

Modes (``mode=``):

``"max"``            maximum clique (engine OPTIMISE); the empty clique of size 0 is
                     the initial incumbent (the seed's ``OptSize <- 0``).
``"decide"``         a clique of size >= ``k`` (engine DECIDE; how seed §1.2 finds
                     designs and factorizations: k = number of blocks).
``"count"``          count all cliques, the empty one included (seed §1.1.1 lists 22
                     for Fig. 1.1) (engine ENUMERATE).
``"count-maximal"``  count maximal cliques (Bron-Kerbosch with pivot; engine
                     ENUMERATE).  In a graph with no vertex the empty clique is the
                     one maximal clique.

Bounds (``bound=``, max/decide): ``"auto"`` (default) is ``"filtsat"`` with the
``"maxiset"`` order where that order's partition has at most 1.3 x the initial clique's
classes (``AUTO_MAXISET_RATIO``; the default order, 150 vertices or more), else ``"incmaxsat"`` on graphs of
density >= 0.8 whose initial clique has >= 12 vertices and >= 0.7 x the root bound,
``"maxsat"`` on other graphs of density >= 0.7 whose initial clique has >= 12 vertices
and on graphs of any density whose initial clique has >= 30 vertices,
and ``"colour"`` otherwise (measured on the DIMACS and BHOSLIB sets, benchmarks/RESULTS.md);
the MCS family
on a chosen vertex order -- ``"colour"`` (MCS/BBMC greedy colouring at every node), ``"recolour"``
(colour plus Tomita's Re-NUMBER), ``"infra"`` (recolour plus San Segundo's
infra-chromatic test, BBMCX), ``"maxsat"`` (colour plus MoMC-style failed-literal
reasoning that drops whole colour classes, IncMaxCLQ / MoMC), ``"incmaxsat"`` (MoMC's
reasoning: virtual literals instead of dropped classes, Re-NUMBER, two-literal lookahead;
Li, Jiang and Manyà 2017), ``"filtsat"`` (incmaxsat plus CliSAT's SAT filtering: where
the candidates fit in as many independent sets as the vertices still to find, vertices
that no such clique can use leave the candidates; San Segundo, Furini, Alvarez and
Pardalos 2023); or the seed's
``"greedy"``, ``"sampling"``, ``"size"`` in the natural order 0 < 1 < ... < n-1 (seed
§2.1).  The kernels are in :mod:`.kernels` (``bounds_colour``, ``bounds_reason``,
``bounds_seed``); benchmarks/RESULTS.md measures them.

Vertex order (``order=``, MCS family only): ``"degeneracy"`` (reverse min-degree
removal), ``"degree"`` (decreasing degree), ``"colour-sort"`` (greedy colour classes
of the degeneracy order, lowest colour first), ``"iset"`` (the independent-set
partition of :func:`.kernels.orders.iset_partition`, class by class, each class grown
greedily) or ``"maxiset"`` (MoMC's MaxIndSet ordering: each class a maximum independent
set of the vertices left, as far as a search of MAXISET_NODES nodes finds,
:func:`.kernels.orders.maxiset_partition`, largest class first).
Initial clique (``heuristic=``, max mode): ``"amts"`` (the default for the MCS family)
runs ``"greedy"`` and then Wu and Hao's adaptive multistart tabu search from its clique
(:mod:`.local_search`, one vertex per colour class of the root bound's partition, a
budget of vertex reads scaled to the graph and AMTS_CLOSE_FACTOR times it when the
clique ends one vertex below the root bound, a fixed seed);
``"greedy"`` grows a clique from every vertex in turn (dynamic degree, capped work);
either clique, checked by the independent verifier, is the first incumbent of every
worker (:meth:`initial_incumbent`) and the answer when the search finds nothing larger,
so the result stays exact; ``"none"`` (the default for the seed's bounds) starts from
the empty clique (the seed's ``OptSize <- 0``).  Its size, seconds and AMTS iterations
are in the result's ``info`` (``initial_clique``, ``initial_seconds``,
``amts_iterations``).

Root bound (MCS family): omega <= the fewer colours of the greedy colouring in the
search's order and of the independent-set partition (``root_bound`` in ``info``); the
root row carries it, so a first incumbent that reaches it ends the search with no node
expanded (hamming*, san*, frb30-15-*: CliSAT's "0 steps").

>>> from stealsearch.engine.solve import solve
>>> from stealsearch.problems.clique.generators import seed_figure_1_1
>>> r = solve(CliqueProblem(seed_figure_1_1()), backend="sequential")
>>> r.objective, sorted(r.solution)
(4, [1, 2, 4, 5])
>>> solve(CliqueProblem(seed_figure_1_1(), mode="count"), backend="sequential").count
22
"""
from __future__ import annotations

import time

import numpy as np

from stealsearch.engine.core.finished import new_key_rows
from stealsearch.engine.core.problem import Mode, Problem

from .kernels.bounds_colour import colour_kernel
from .kernels.bounds_reason import reason_kernel
from .kernels.bounds_seed import SEED_BOUNDS, seed_kernel
from .kernels.colour_classes import class_of_vertices, greedy_colour_classes
from .kernels.counting import count_all_kernel, count_maximal_kernel
from .kernels.greedy import greedy_clique
from .kernels.orders import (colour_sort_order, degeneracy_order, degree_order, iset_partition,
                             maxiset_partition)
from .kernels.rows import BOUND, LEVEL, X0
from .local_search import AMTS_DEPTH, amts, amts_iterations
from .model import CliqueInputError, Graph, bitset_to_indices, words_for
from .verify import check_clique

MODES = ("max", "decide", "count", "count-maximal")
#: the MCS-family bounds (vertex order + colouring kernels), the default first
FAST_BOUNDS = ("colour", "recolour", "infra", "maxsat", "incmaxsat", "filtsat")
#: ``auto`` (the default) picks ``maxsat`` on graphs of density >= AUTO_MAXSAT_DENSITY
#: whose greedy initial clique has >= AUTO_MAXSAT_CLIQUE vertices, ``colour`` otherwise:
#: the MaxSAT reasoning pays for its cost per node on dense graphs and not on sparse ones,
#: nor where the clique (so the number of colour classes it reasons over) is small
#: (benchmarks/results/peers*.md).
BOUNDS = ("auto",) + FAST_BOUNDS + ("greedy", "sampling", "size")
AUTO_MAXSAT_DENSITY = 0.7
AUTO_MAXSAT_CLIQUE = 12
#: ``auto`` picks ``maxsat`` at any density where the first incumbent has >=
#: AUTO_MAXSAT_LARGE_CLIQUE vertices: the reasoning's worth grows with the colour classes
#: below the threshold, so with the clique, and at density 0.5 a clique this large (the
#: p_hat*-2 graphs) already makes it pay (benchmarks/RESULTS.md), while below it the
#: sparse graphs (DSJC*, sanr*_0.5, p_hat*-1, brock800_*) keep the colour bound
AUTO_MAXSAT_LARGE_CLIQUE = 30
#: ``auto`` picks ``incmaxsat`` (MoMC's reasoning) instead of ``maxsat`` where the density
#: is >= AUTO_INCMAXSAT_DENSITY and the first incumbent is >= AUTO_INCMAXSAT_GAP x the root
#: bound: a large clique close to the colouring bound (gen*, MANN, frb).  There MoMC's
#: stronger reasoning proves the incumbent in far fewer nodes, while on dense graphs with
#: a small clique for their colouring (sanr200_0.9, C125.9, p_hat*-3, brock) its cost per
#: node does not pay (benchmarks/RESULTS.md).
AUTO_INCMAXSAT_DENSITY = 0.8
AUTO_INCMAXSAT_GAP = 0.7
#: ``auto`` takes the ``maxiset`` order and the ``filtsat`` bound, in place of the
#: degeneracy order and the rules above, where the maximum independent sets partition
#: the vertices into at most AUTO_MAXISET_RATIO x the first incumbent's size classes: a
#: partition close to omega, where CliSAT's COLOR-SORT and MoMC's MaxIndSet orders pay
#: (keller graphs), and where the candidates often fit in as many classes as vertices are
#: still to find (FiltSAT's case).  Where the partition stays far above omega (p_hat*-3,
#: brock, C*.9) the degeneracy order expands fewer nodes (benchmarks/RESULTS.md).  The
#: partition is searched only on graphs of density >= AUTO_MAXISET_DENSITY (a sparse
#: graph's complement makes each search long) whose root bound is <= AUTO_MAXISET_SCREEN
#: x the incumbent, and with at least AUTO_MAXISET_MIN_N vertices (below it any order
#: solves in milliseconds, and the small graphs keep the trees they had)
AUTO_MAXISET_RATIO = 1.3
AUTO_MAXISET_MIN_N = 150
AUTO_MAXISET_DENSITY = 0.6
AUTO_MAXISET_SCREEN = 2.0
#: reasoning level of :func:`reason_kernel` per bound
REASON_LEVEL = {"recolour": 1, "infra": 2, "maxsat": 3, "incmaxsat": 4, "filtsat": 5}
ORDERS = ("degeneracy", "degree", "colour-sort", "iset", "maxiset")
HEURISTICS = ("amts", "greedy", "none")
#: cap on the initial heuristic's work (candidate evaluations of W words each)
HEURISTIC_EFFORT = 2_000_000
#: AMTS's random seed (fixed: a run, its first incumbent and its tree are reproducible)
AMTS_SEED = 1
#: AMTS's budget multiplier when its clique ends one vertex below the root bound
AMTS_CLOSE_FACTOR = 10
#: the independent-set partition of the root bound is computed when n^2 W word operations
#: stay below this, so that it stays a small part of the set-up; above it the root bound
#: is the greedy colouring's
ISET_WORK_LIMIT = 500_000_000
#: the node budget of each maximum independent set search of the ``maxiset`` order
#: (MoMC's MaxIndSet ordering cuts each search off after 50,000 backtracks)
MAXISET_NODES = 50_000


#: The largest decide target (the kernels' incumbent is an int64).
MAX_K = 2 ** 62

class CliqueProblem(Problem):
    """A clique search on ``graph``; see the module docstring for modes and bounds."""

    name = "clique"
    #: ``branched``: nodes that pushed a child (the MCS-family bounds; see
    #: :data:`.kernels.rows.BRANCHED`), what compares with CliSAT's recursive calls
    extra_counters = (("max_depth", "max"), ("branched", "sum"))

    def __init__(self, graph: Graph, mode: str = "max", k: int | None = None,
                 bound: str = "auto", order: str = "degeneracy", heuristic: str | None = None,
                 incremental: bool = False):
        if not isinstance(graph, Graph):
            if hasattr(graph, "nodes") and hasattr(graph, "edges"):
                graph = Graph.from_networkx(graph)      # networkx in, labels out
            else:
                raise CliqueInputError(f"expected a clique.Graph or a networkx graph, "
                                       f"got {type(graph).__name__}")
        mode = {"optimise": "max", "maximum": "max", "enumerate": "count"}.get(mode, mode)
        if mode not in MODES:
            raise CliqueInputError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        bound = {"color": "colour"}.get(bound, bound)
        if bound not in BOUNDS:
            raise CliqueInputError(f"unknown bound {bound!r}; expected one of {', '.join(BOUNDS)}")
        auto = bound == "auto"
        if auto:
            bound = "colour"            # the same order and heuristic as maxsat; see below
        if order not in ORDERS:
            raise CliqueInputError(f"unknown order {order!r}; expected one of {', '.join(ORDERS)}")
        if heuristic is None:
            # the seed's bounds keep the seed's start (OptSize <- 0): their node counts
            # are the seed's tables' analogue
            heuristic = "amts" if bound in FAST_BOUNDS else "none"
        if heuristic not in HEURISTICS:
            raise CliqueInputError(f"unknown heuristic {heuristic!r}; expected one of "
                                   f"{', '.join(HEURISTICS)}")
        if mode == "decide":
            if k is None:
                raise CliqueInputError("mode decide needs --k K, the clique size to find")
            if int(k) < 1:
                raise CliqueInputError(f"k must be >= 1, got {k}")
            if int(k) > MAX_K:
                # the kernel's incumbent is an int64; any k above n simply has no clique
                raise CliqueInputError(f"k must be at most {MAX_K} (2^62), got {k}")
        if incremental and (mode not in ("max", "decide") or bound not in FAST_BOUNDS + ("auto",)):
            raise CliqueInputError("the incremental bound needs mode max or decide and a bound "
                                   f"of the MCS family ({', '.join(FAST_BOUNDS)} or auto)")
        self.graph = graph
        self.clique_mode = mode
        self.bound = bound
        #: the bound was ``auto``'s choice (a proof may then pick a logged one)
        self.bound_chosen = auto
        self.order_name = order
        self.heuristic = heuristic
        self.k = None if k is None else int(k)
        self.mode = {"max": Mode.OPTIMISE, "decide": Mode.DECIDE}.get(mode, Mode.ENUMERATE)
        self.target = self.k if mode == "decide" else None
        n = graph.n
        W = words_for(n)
        self.words = W
        self.row_width = 2 + (3 if mode == "count-maximal" else 2) * W
        self.max_children = max(n, 1)
        self.solution_size = 1 + W
        # the root bound: omega <= the fewer colours of two colourings of G (the greedy
        # one in the search's order, the independent-set partition); the root row carries
        # it, so a first incumbent that reaches it ends the search before a node
        self.root_bound = n
        # a partition of V into independent sets (kernel numbering), the one of the root
        # bound: AMTS keeps its sets to one vertex per class (local_search)
        self.colour_classes = np.arange(n, dtype=np.int64)
        if mode in ("max", "decide") and bound in FAST_BOUNDS:
            isets = None
            if n and n * n * W <= ISET_WORK_LIMIT:
                if order == "maxiset":
                    isets, n_isets, iset_of = maxiset_partition(graph.rows.view(np.int64), n,
                                                                MAXISET_NODES)
                else:
                    isets, n_isets, iset_of = iset_partition(graph.rows.view(np.int64), n)
                self.root_bound = int(n_isets)
            self.order = (isets if order in ("iset", "maxiset") and isets is not None
                          else vertex_order(graph, order))
            self.adj = graph.permuted(self.order).view(np.int64)
            if n:
                greedy = greedy_colour_classes(self.adj, n)
                if isets is not None and n_isets <= greedy.shape[0]:
                    self.colour_classes = iset_of[self.order]
                else:
                    self.colour_classes = class_of_vertices(greedy, n)
                self.root_bound = min(self.root_bound, int(greedy.shape[0]))
        else:
            self.order = np.arange(n, dtype=np.int64)
            self.adj = graph.rows.view(np.int64)
        if mode in ("max", "decide") and bound == "sampling":
            self.classes = greedy_colour_classes(self.adj, n)
        else:
            self.classes = np.zeros((1, W), np.int64)
        # the initial clique (max mode): vertices in the kernel's numbering
        self.start_clique = np.zeros(0, np.int64)
        self.initial_seconds = 0.0
        self.amts_iterations = 0
        if mode == "max" and heuristic != "none" and n:
            t0 = time.perf_counter()
            self.start_clique = greedy_clique(self.adj, n, n, HEURISTIC_EFFORT)
            if heuristic == "amts":
                ncls = int(self.colour_classes.max()) + 1
                budget = amts_iterations(n, graph.density())
                self.start_clique, self.amts_iterations = amts(
                    self.adj, n, self.start_clique, budget, AMTS_DEPTH, self.root_bound,
                    AMTS_SEED, self.colour_classes, ncls)
                if len(self.start_clique) == self.root_bound - 1:
                    # one vertex short of the root bound: a clique of the bound ends the
                    # search at the root, while the tree search may not find it (on
                    # BHOSLIB graphs AMTS can end at omega - 1, and the proof tree is then
                    # huge), so AMTS goes on with AMTS_CLOSE_FACTOR - 1 more budgets
                    more, its = amts(self.adj, n, self.start_clique,
                                     budget * (AMTS_CLOSE_FACTOR - 1), AMTS_DEPTH,
                                     self.root_bound, AMTS_SEED + 1, self.colour_classes, ncls)
                    self.start_clique = more
                    self.amts_iterations += its
            self.initial_seconds = time.perf_counter() - t0
            # checked by the independent verifier before it may prune anything
            check_clique(graph, self._labels(self.start_clique), size=len(self.start_clique),
                         maximal=True)
        #: MoMC's incremental bound (:mod:`.kernels.finished`): the root branched in the
        #: prefix decomposition, each vertex's subtree a key of the engine's finished
        #: subtrees; key u's bound starts at u + 1 (G_u has u + 1 vertices)
        self.incremental = bool(incremental) and n > 0
        self.subtree_keys = n if self.incremental else 0
        if self.incremental:            # the kernels count what the finished bounds prune
            self.extra_counters = CliqueProblem.extra_counters + (("finished_pruned", "sum"),)
        self.finished = np.zeros((2, max(n, 1)), np.int64)
        self.finished[0] = np.arange(1, max(n, 1) + 1)
        self.key_rows = new_key_rows(n) if self.incremental else None
        if auto and mode in ("max", "decide") and n:
            clique = (len(self.start_clique) if len(self.start_clique)
                      else len(greedy_clique(self.adj, n, n, HEURISTIC_EFFORT)))
            if order == "degeneracy":
                self._maxiset_where_it_fits(graph, clique)
            if ((graph.density() >= AUTO_MAXSAT_DENSITY and clique >= AUTO_MAXSAT_CLIQUE)
                    or clique >= AUTO_MAXSAT_LARGE_CLIQUE):
                self.bound = "maxsat"
                if (graph.density() >= AUTO_INCMAXSAT_DENSITY
                        and clique >= AUTO_INCMAXSAT_GAP * self.root_bound):
                    self.bound = "incmaxsat"
            if self.order_name == "maxiset":
                # candidates that fit in the few classes left: FiltSAT's case
                self.bound = "filtsat"

    def _maxiset_where_it_fits(self, graph: Graph, clique: int) -> None:
        """``auto``'s order: the ``maxiset`` order instead of the degeneracy order where
        its partition has at most AUTO_MAXISET_RATIO x ``clique`` classes (the first
        incumbent's size, or a greedy clique's), on graphs of density >= AUTO_MAXISET_DENSITY
        whose root bound is already within AUTO_MAXISET_SCREEN x ``clique`` (the partition
        is searched only there).  The search's numbering changes; the first incumbent is
        carried over vertex for vertex and the root bound stays the least of the bounds
        computed."""
        n, W = graph.n, self.words
        if (n < AUTO_MAXISET_MIN_N or graph.density() < AUTO_MAXISET_DENSITY
                or n * n * W > ISET_WORK_LIMIT or self.root_bound > AUTO_MAXISET_SCREEN * clique):
            return
        isets, n_isets, iset_of = maxiset_partition(graph.rows.view(np.int64), n, MAXISET_NODES)
        if n_isets > AUTO_MAXISET_RATIO * clique:
            return
        position = np.empty(n, np.int64)        # a vertex's place in the old numbering
        position[self.order] = np.arange(n)
        originals = self.order[self.start_clique]
        # the partition of the root bound (the proof's, AMTS's), renumbered with the
        # vertices: the old one, the maximum independent sets or the greedy colouring
        # in the new order, whichever has the fewest classes
        partitions = [(self.root_bound, self.colour_classes[position[isets]]),
                      (int(n_isets), iset_of[isets])]
        self.order = isets
        self.order_name = "maxiset"
        self.adj = graph.permuted(isets).view(np.int64)
        greedy = greedy_colour_classes(self.adj, n)
        partitions.append((int(greedy.shape[0]), None))
        self.root_bound, classes = min(partitions, key=lambda pc: pc[0])
        self.colour_classes = class_of_vertices(greedy, n) if classes is None else classes
        position[isets] = np.arange(n)
        self.start_clique = np.sort(position[originals])

    # -- engine contract --------------------------------------------------------------
    @property
    def kernel(self):
        if self.clique_mode == "count":
            return count_all_kernel
        if self.clique_mode == "count-maximal":
            return count_maximal_kernel
        if self.incremental:
            return reason_kernel            # level 0 is the colour kernel
        if self.bound == "colour":
            return colour_kernel
        if self.bound in REASON_LEVEL:
            return reason_kernel
        return seed_kernel

    # -- proof logging (the engine's side: stealsearch.engine.core.proof) --------------
    @property
    def proof_kernel(self):
        """The colour kernel logs a scaffold (its records are its rows); no other bound
        has proof steps yet."""
        if self.bound == "colour" and self.clique_mode in ("max", "decide"):
            return colour_kernel
        return None

    @property
    def proof_record_width(self) -> int:
        return self.row_width

    def proof_problem(self) -> "CliqueProblem":
        """This search as it runs with a proof: itself with the colour bound; with
        ``auto``'s reasoning bound (``maxsat``, ``incmaxsat``), a copy with the colour
        bound (same order and initial clique); any other bound or a counting mode is
        refused (:class:`~stealsearch.engine.core.proof.ProofUnavailable`)."""
        from stealsearch.engine.core.proof import ProofUnavailable

        if self.clique_mode not in ("max", "decide"):
            raise ProofUnavailable(f"a proof certifies --mode max or decide, not "
                                   f"{self.clique_mode}")
        if self.incremental:
            # the finished subtrees' bounds are not logged: a proved search does not
            # use them (the MCS root and the logged bound, as without the option)
            import copy

            plain = copy.copy(self)
            plain.incremental, plain.subtree_keys, plain.key_rows = False, 0, None
            plain.extra_counters = CliqueProblem.extra_counters
            return plain.proof_problem()
        if self.bound == "colour":
            return self
        if not getattr(self, "bound_chosen", False):
            raise ProofUnavailable(f"the {self.bound} bound logs no proof steps; a proof "
                                   "logs the colour bound (--bound colour, or auto)")
        import copy

        logged = copy.copy(self)
        logged.bound = "colour"
        logged.proof_note = (f"auto picked {self.bound}, which logs no proof steps; the "
                             "proof's search used the colour bound")
        return logged

    def write_proof(self, prefix, result, parts) -> dict:
        """``PREFIX.opb`` and ``PREFIX.pbp`` of a finished search
        (:func:`.proof.write_clique_proof`)."""
        from .proof import write_clique_proof

        info = write_clique_proof(self, prefix, result, parts)
        note = getattr(self, "proof_note", None)
        return info if note is None else dict(info, note=note)

    def kernel_data(self) -> tuple:
        if self.incremental:
            return (self.adj, np.int64(REASON_LEVEL.get(self.bound, 0)), self.finished,
                    self.key_rows)
        if self.kernel is seed_kernel:
            return (self.adj, np.int64(SEED_BOUNDS[self.bound]), self.classes)
        if self.kernel is reason_kernel:
            return (self.adj, np.int64(REASON_LEVEL[self.bound]))
        return (self.adj,)

    def subtree_key(self, rows: np.ndarray) -> np.ndarray:
        """The highest vertex of each row's clique (-1 for the root): the root's child
        whose subtree holds the row, in the prefix decomposition (:mod:`.kernels.finished`)."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.row_width)
        keys = np.full(len(rows), -1, dtype=np.int64)
        X = rows[:, X0:X0 + self.words].view(np.uint64)
        for w in range(self.words):                 # the highest non-zero word wins
            word = X[:, w]
            nz = word != 0
            high = np.zeros(int(nz.sum()), np.int64)
            rest = word[nz]
            for shift in (32, 16, 8, 4, 2, 1):      # the highest set bit, exactly
                big = rest >= (np.uint64(1) << np.uint64(shift))
                high[big] += shift
                rest = np.where(big, rest >> np.uint64(shift), rest)
            keys[nz] = 64 * w + high
        keys[rows[:, LEVEL] == 0] = -1
        return keys

    def finished_array(self) -> np.ndarray:
        return self.finished

    def root_frontier(self) -> np.ndarray:
        """One row: the empty clique, C_0 = V (seed Algorithm 2.1.1, ℓ = 0)."""
        n, W = self.graph.n, self.words
        row = np.zeros((1, self.row_width), dtype=np.int64)
        row[0, LEVEL] = 0
        fast = self.bound in FAST_BOUNDS and self.clique_mode in ("max", "decide")
        row[0, BOUND] = min(n + 1, self.root_bound) if fast else n + 1
        full = np.zeros(W, dtype=np.uint64)
        if n:
            idx = np.arange(n)
            np.bitwise_or.at(full, idx // 64, np.left_shift(np.uint64(1), (idx % 64).astype(np.uint64)))
        row[0, X0 + W:X0 + 2 * W] = full.view(np.int64)
        return row

    def initial_incumbent(self) -> int:
        if self.mode is Mode.DECIDE:
            return self.k - 1
        return len(self.start_clique)

    def initial_solution(self):
        return self._labels(self.start_clique) if self.mode is Mode.OPTIMISE else None

    def _labels(self, vertices) -> list:
        return self.graph.labelled(sorted(int(v) for v in self.order[np.asarray(vertices, np.int64)]))

    def row_bounds(self, rows: np.ndarray) -> np.ndarray:
        """The bound each row carries (ℓ + colours, or the parent's M)."""
        cap = min(self.graph.n, self.root_bound)       # omega <= the root bound everywhere
        return np.minimum(rows[:, BOUND], cap).astype(np.int64)

    def decode(self, solution: np.ndarray, value: int) -> list:
        """The clique as the graph's labels, in increasing vertex order."""
        vs = bitset_to_indices(np.asarray(solution[1:1 + self.words], dtype=np.int64), self.graph.n)
        return self.graph.labelled(sorted(int(v) for v in self.order[vs]))

    def verify(self, solution, value) -> bool:
        # What a result claims: a clique of the reported size.  Not maximality: an
        # interrupted search reports the incumbent, recorded the moment it beat the
        # previous one (before the kernel extends it), so it need not be maximal.  A
        # finished 'optimal' result is maximal; the clique command checks that too.
        check_clique(self.graph, solution, size=int(value))
        if self.mode is Mode.DECIDE and len(solution) < self.k:
            return False
        return True

    def describe(self) -> dict:
        g = self.graph
        return {"problem": "clique", "graph": g.name, "n": g.n, "m": g.m,
                "density": round(g.density(), 6), "clique_mode": self.clique_mode,
                "bound": self.bound if self.mode is not Mode.ENUMERATE else None, "k": self.k,
                **({"incremental": True} if self.incremental else {}),
                "order": self.order_name if self.bound in FAST_BOUNDS else "natural",
                "initial_clique": len(self.start_clique), "initial_heuristic": self.heuristic,
                "initial_seconds": round(self.initial_seconds, 6),
                "amts_iterations": int(self.amts_iterations), "root_bound": int(self.root_bound)}


def vertex_order(graph: Graph, order: str) -> np.ndarray:
    """The vertex order of the MCS-family kernels: position i holds the vertex renamed i."""
    n = graph.n
    if n == 0:
        return np.zeros(0, np.int64)
    rows = graph.rows.view(np.int64)
    if order == "degree":
        return degree_order(rows, n)
    dgn = degeneracy_order(rows, n)
    if order == "iset":
        return iset_partition(rows, n)[0]
    if order == "maxiset":
        return maxiset_partition(rows, n, MAXISET_NODES)[0]
    if order == "colour-sort":
        return colour_sort_order(rows, n, dgn)
    return dgn
