"""Graphs for tests, benchmarks and the seed's applications (seed 003 §1.1-1.2, §4.3).

* :func:`gnp` -- G(n, p) drawn exactly as fixed here, so figures compare across
  tools: ``rng = numpy.random.default_rng(seed)``, ``i, j = triu_indices(n, 1)``,
  edge {i, j} iff ``rng.random(i.size) < p`` (one draw per pair, row-major, i < j).
  (Seed §4.3: "each possible edge is in the graph with probability k".)
* :func:`seed_figure_1_1` -- the 6-vertex graph of Fig. 1.1, rebuilt from its list of
  22 cliques (the figure itself is an image): edges 01 12 13 14 15 23 24 25 45.
* :func:`design_graph` -- §1.2: vertices = the k-subsets of {0..v-1} in lexicographic
  order (x_0 = 012, x_1 = 013, ... as in Fig. 1.4), adjacent iff the rows of the
  inclusion matrix A are orthogonal, i.e. the subsets share fewer than t elements.  A
  clique of size b = C(v,t)/C(k,t) is a t-(v,k,1) design (:func:`decode_design`).
* :func:`factor_graph` -- §1.2: vertices = the k-factors of a graph, adjacent iff
  *edge*-disjoint.  The seed's text says "vertex disjoint", which cannot be meant
  (two spanning subgraphs always share every vertex); edge-disjoint is what a
  factorization needs.  A clique of size 2|E|/(nk) is a k-factorization
  (:func:`decode_factorization`).  The seed's formula "2|E|/nk" uses n for both the
  vertex count and the factor degree; here n = |V| and k = the degree.
"""
from __future__ import annotations

import itertools
import sys
from math import comb

import numpy as np

from .model import CliqueInputError, Graph, pack_rows, words_for

#: The most vertices a generated design or factor graph may have: a clique search over
#: more would not end in reasonable time (the seed's instances have a few hundred).  A
#: graph read from a file has its own, larger limit, set by memory (io.MAX_READ_VERTICES).
MAX_GENERATED_VERTICES = 20_000


def gnp(n: int, p: float, seed: int = 1) -> Graph:
    """The random graph G(n, p) (see module docstring for the exact draw).

    >>> g = gnp(200, 0.5, seed=1)
    >>> g.n, g.m
    (200, 9979)
    """
    n = int(n)
    if n < 0:
        raise CliqueInputError(f"G(n, p): n must be >= 0, got {n}")
    if not 0.0 <= float(p) <= 1.0:
        raise CliqueInputError(f"G(n, p): p must be in [0, 1], got {p}")
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(n, 1)
    keep = rng.random(i.size) < p
    edges = np.stack([i[keep], j[keep]], axis=1)
    return Graph.from_edges(n, edges, name=f"G({n},{p:g}) seed {seed}")


def seed_figure_1_1() -> Graph:
    """Seed 003 Fig. 1.1: 22 cliques (with the empty one), maximum clique {1,2,4,5}."""
    edges = [(0, 1), (1, 2), (1, 3), (1, 4), (1, 5), (2, 3), (2, 4), (2, 5), (4, 5)]
    return Graph.from_edges(6, edges, name="seed 003 Fig. 1.1")


# -- designs ---------------------------------------------------------------------------

def design_graph(t: int, v: int, k: int) -> Graph:
    """The graph whose cliques of size b are the t-(v, k, 1) designs (seed §1.2).

    Labels are the k-subsets as tuples.

    >>> g = design_graph(2, 7, 3)
    >>> g.n, set(g.degrees().tolist()), g.labels[:2]
    (35, {22}, [(0, 1, 2), (0, 1, 3)])
    """
    t, v, k = int(t), int(v), int(k)
    if not (1 <= t <= k <= v):
        raise CliqueInputError(f"design parameters need 1 <= t <= k <= v, got t={t} v={v} k={k}")
    if comb(v, k) > MAX_GENERATED_VERTICES:
        raise CliqueInputError(f"C({v},{k}) = {comb(v, k)} k-subsets is too many vertices "
                               f"(> {MAX_GENERATED_VERTICES})")
    blocks = list(itertools.combinations(range(v), k))
    inc = np.zeros((len(blocks), v), dtype=np.int32)
    for r, b in enumerate(blocks):
        inc[r, list(b)] = 1
    shared = inc @ inc.T
    u, w = np.nonzero(np.triu(shared < t, 1))
    return Graph.from_edges(len(blocks), np.stack([u, w], 1), labels=blocks,
                            name=f"{t}-({v},{k},1) design graph")


def design_blocks_needed(t: int, v: int, k: int) -> int | None:
    """b = C(v,t)/C(k,t), or None when it is not an integer (no design can exist)."""
    num, den = comb(v, t), comb(k, t)
    return num // den if num % den == 0 else None


def decode_design(blocks, t: int, v: int) -> dict:
    """Check that ``blocks`` (k-subsets) form a t-(v,k,1) design; return it as data.

    Independent of the clique search: every t-subset of {0..v-1} must lie in exactly
    one block.
    """
    cover: dict[tuple, int] = {}
    for b in blocks:
        for s in itertools.combinations(sorted(b), t):
            cover[s] = cover.get(s, 0) + 1
    missing = [s for s in itertools.combinations(range(v), t) if cover.get(s, 0) != 1]
    return {"blocks": [list(b) for b in sorted(blocks)], "is_design": not missing,
            "t_subsets_not_covered_once": len(missing)}


# -- factorizations -------------------------------------------------------------------

def k_factors(graph: Graph, k: int,
              limit: int | None = MAX_GENERATED_VERTICES) -> list[tuple[tuple[int, int], ...]]:
    """All k-factors (spanning k-regular subgraphs) of ``graph``, each a sorted tuple of
    0-based edges ``(u, v)``, u < v.  Vertices are settled in increasing order: vertex
    v picks its missing edges among its later neighbours, so each factor appears once.

    More than ``limit`` factors (the vertices of the factor graph a clique search gets)
    raise :class:`CliqueInputError` as soon as the enumeration passes it: K_n has
    (n-1)!! 1-factors, so ``factorize K2000 1`` would otherwise never end.

    >>> len(k_factors(named_graph("cube"), 1)), len(k_factors(named_graph("K5"), 2))
    (9, 12)
    >>> k_factors(named_graph("K16"), 1)
    Traceback (most recent call last):
    ...
    stealsearch.problems.clique.model.CliqueInputError: K16 has more than 20000 1-factors: the factor graph would be too large for a clique search (at most 20000 vertices)
    """
    n, k = graph.n, int(k)
    if k < 1:
        raise CliqueInputError(f"factor degree k must be >= 1, got {k}")
    nbrs = [[int(u) for u in graph.neighbours(v)] for v in range(n)]
    deg = [0] * n
    chosen: list[tuple[int, int]] = []
    out: list[tuple[tuple[int, int], ...]] = []

    def settle(v: int) -> None:
        while v < n and deg[v] == k:
            v += 1
        if v == n:
            out.append(tuple(sorted(chosen)))
            if limit is not None and len(out) > limit:
                raise CliqueInputError(
                    f"{graph.name} has more than {limit} {k}-factors: the factor graph would "
                    f"be too large for a clique search (at most {limit} vertices)")
            return
        need = k - deg[v]
        later = [u for u in nbrs[v] if u > v and deg[u] < k]
        for pick in itertools.combinations(later, need):
            for u in pick:
                deg[u] += 1
                chosen.append((v, u))
            deg[v] += need
            # every vertex before v+1 must be full already; a later vertex whose
            # remaining later neighbours cannot fill it is a dead end (checked lazily)
            settle(v + 1)
            deg[v] -= need
            for u in pick:
                deg[u] -= 1
                chosen.pop()

    if n:
        # one level of recursion per vertex: a 2000-vertex cycle's one 2-factor needs 2000
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, n + 200))
        try:
            settle(0)
        finally:
            sys.setrecursionlimit(old)
    return out


def factor_graph(graph: Graph, k: int) -> tuple[Graph, list]:
    """The k-factor graph of ``graph`` (seed §1.2) and the list of its k-factors.

    >>> fg, factors = factor_graph(named_graph("cube"), 1)
    >>> fg.n, fg.m
    (9, 12)
    """
    factors = k_factors(graph, k)
    edge_index = {tuple(e): i for i, e in enumerate(graph.edges().tolist())}
    m = len(edge_index)
    words = max(1, (m + 63) // 64)
    masks = np.zeros((len(factors), words), dtype=np.uint64)
    for f, edges in enumerate(factors):
        for e in edges:
            i = edge_index[e]
            masks[f, i // 64] |= np.uint64(1) << np.uint64(i % 64)
    F = len(factors)
    rows = np.zeros((F, words_for(F)), dtype=np.uint64)
    for start in range(0, F, 256):     # adjacency rows straight from the disjointness test
        block = masks[start:start + 256]
        disjoint = np.ones((len(block), F), dtype=bool)
        for w in range(words):
            disjoint &= (block[:, w, None] & masks[None, :, w]) == 0
        disjoint[np.arange(len(block)), np.arange(start, start + len(block))] = False
        rows[start:start + len(block)] = pack_rows(disjoint)
    labels = [tuple((graph.label(a), graph.label(b)) for a, b in f) for f in factors]
    fg = Graph(rows, labels=labels, name=f"{k}-factor graph of {graph.name}")
    return fg, factors


def factors_needed(graph: Graph, k: int) -> int | None:
    """Factors in a k-factorization: 2|E|/(|V| k), or None if not an integer."""
    num, den = 2 * graph.m, graph.n * int(k)
    return num // den if den and num % den == 0 else None


def decode_factorization(graph: Graph, factors, k: int) -> dict:
    """Check that ``factors`` (labelled edge tuples) partition E into k-factors."""
    seen: dict = {}
    ok = True
    for f in factors:
        deg: dict = {}
        for a, b in f:
            key = frozenset((a, b))
            seen[key] = seen.get(key, 0) + 1
            deg[a] = deg.get(a, 0) + 1
            deg[b] = deg.get(b, 0) + 1
        if len(deg) != graph.n or set(deg.values()) != {int(k)}:
            ok = False
    all_edges = {frozenset((graph.label(int(a)), graph.label(int(b)))) for a, b in graph.edges()}
    ok = ok and set(seen) == all_edges and all(c == 1 for c in seen.values())
    return {"factors": [[list(e) for e in f] for f in factors], "is_factorization": ok}


#: The most vertices of a named complete (bipartite) graph: K2000 has ~2 M edges, and
#: its factors are far too many long before (see :func:`k_factors`).
MAX_NAMED_VERTICES = 2000


def _check_named_size(name: str, n: int) -> None:
    if not 1 <= n <= MAX_NAMED_VERTICES:
        raise CliqueInputError(f"graph {name!r}: {n} vertices; a named graph has 1 to "
                               f"{MAX_NAMED_VERTICES}")


def named_graph(name: str) -> Graph:
    """Small named graphs for ``stealsearch factorize``: ``cube`` (Q3), ``Kn``
    (complete graph on n vertices), ``Kn,n`` (complete bipartite), ``petersen``.

    >>> named_graph("K4").m
    6
    """
    import networkx as nx

    key = name.strip().lower()
    if key in ("cube", "q3"):
        g = nx.convert_node_labels_to_integers(nx.hypercube_graph(3), label_attribute=None)
        return Graph.from_edges(8, np.array(list(g.edges())), name="cube")
    if key == "petersen":
        return Graph.from_edges(10, np.array(list(nx.petersen_graph().edges())), name="petersen")
    if key.startswith("k") and "," in key:
        a, b = key[1:].split(",", 1)
        if a.isdigit() and b.isdigit():
            _check_named_size(name, int(a) + int(b))
            g = nx.complete_bipartite_graph(int(a), int(b))
            return Graph.from_edges(int(a) + int(b), np.array(list(g.edges())).reshape(-1, 2),
                                    name=f"K{a},{b}")
    if key.startswith("k") and key[1:].isdigit():
        n = int(key[1:])
        _check_named_size(name, n)
        i, j = np.triu_indices(n, 1)
        return Graph.from_edges(n, np.stack([i, j], 1), name=f"K{n}")
    raise CliqueInputError(f"unknown graph name {name!r}; expected cube, petersen, Kn, Kn,m or a file")
