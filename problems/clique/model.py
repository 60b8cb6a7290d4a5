"""The graph model: an undirected simple graph as rows of a uint64 bit matrix.

Seed 003 §4.1: "the graph ... is stored as an array of sets [A_j : j = 0..n-1]", the
j-th set (a bit vector) holding the neighbours of vertex j.  :class:`Graph` is that
array: ``rows[j]`` is a ``uint64`` vector of ``words = ceil(n / 64)`` words whose bit
``i`` (word ``i // 64``, bit ``i % 64``) is set iff ``{i, j}`` is an edge.  Vertices are
``0..n-1`` inside; ``labels[i]`` is the caller's own name of vertex ``i`` (DIMACS
1-based ids, networkx node objects, edge-list tokens), and every answer is given back
in labels.

Choices: duplicate edges (``{u, v}`` listed twice, or as ``u v`` and ``v u``) are
tolerated and merged; a self-loop is an error (the seed's graphs have "no repeated
edges and no loops", §1.1); a graph with no vertices is allowed (ω = 0).

>>> g = Graph.from_edges(4, [(0, 1), (1, 2), (0, 2), (2, 3)])
>>> g.n, g.m, g.degrees().tolist()
(4, 4, [2, 2, 3, 1])
>>> g.has_edge(0, 2), g.has_edge(0, 3)
(True, False)
"""
from __future__ import annotations

from typing import Any, Hashable, Iterable, Sequence

import numpy as np

from stealsearch.engine.core.errors import InputError


class CliqueInputError(InputError):
    """A graph, a file or a parameter of the clique problem is malformed."""


def words_for(n: int) -> int:
    """uint64 words per bitset row for ``n`` vertices (at least 1)."""
    return max(1, (int(n) + 63) // 64)


class Graph:
    """An undirected simple graph on vertices ``0..n-1`` as bitset rows.

    Build one with :meth:`from_edges`, :meth:`from_networkx`, or the readers in
    :mod:`stealsearch.problems.clique.io`.  ``rows`` is ``uint64[n, words]``; ``labels`` maps a
    vertex to the caller's label (``None`` means "the vertex number itself").
    """

    def __init__(self, rows: np.ndarray, labels: Sequence[Hashable] | None = None,
                 name: str = "graph"):
        rows = np.ascontiguousarray(rows, dtype=np.uint64)
        if rows.ndim != 2:
            raise CliqueInputError(f"{name}: adjacency rows must be 2-D, got shape {rows.shape}")
        n = rows.shape[0]
        if rows.shape[1] != words_for(n):
            raise CliqueInputError(f"{name}: {n} vertices need {words_for(n)} words per row, "
                                   f"got {rows.shape[1]}")
        if labels is not None:
            labels = list(labels)
            if len(labels) != n:
                raise CliqueInputError(f"{name}: {len(labels)} labels for {n} vertices")
            if len(set(labels)) != n:
                raise CliqueInputError(f"{name}: vertex labels are not distinct")
        self.rows = rows
        self.n = int(n)
        self.labels = labels
        self.name = name

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_edges(cls, n: int, edges: Iterable[tuple[int, int]] | np.ndarray,
                   labels: Sequence[Hashable] | None = None, name: str = "graph") -> "Graph":
        """Graph on ``n`` vertices from 0-based vertex pairs (numpy ``(m, 2)`` or pairs).

        >>> Graph.from_edges(3, [(0, 1), (1, 0)]).m
        1
        """
        n = int(n)
        if n < 0:
            raise CliqueInputError(f"{name}: number of vertices must be >= 0, got {n}")
        e = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges)
        if e.size == 0:
            e = np.zeros((0, 2), dtype=np.int64)
        if e.ndim != 2 or e.shape[1] != 2:
            raise CliqueInputError(f"{name}: edges must be pairs, got shape {e.shape}")
        if not np.issubdtype(e.dtype, np.integer):
            raise CliqueInputError(f"{name}: edge endpoints must be integers")
        e = e.astype(np.int64)
        bad = np.flatnonzero((e < 0).any(1) | (e >= n).any(1))
        if bad.size:
            u, v = e[bad[0]]
            raise CliqueInputError(f"{name}: edge {bad[0]} ({u}, {v}) has a vertex outside 0..{n - 1}")
        loops = np.flatnonzero(e[:, 0] == e[:, 1])
        if loops.size:
            raise CliqueInputError(f"{name}: edge {loops[0]} is a self-loop at vertex {e[loops[0], 0]}")
        return cls(_pack_pairs(n, e), labels, name)

    @classmethod
    def from_networkx(cls, graph, name: str | None = None) -> "Graph":
        """From a networkx graph with any hashable node labels (kept as labels).

        Self-loops are rejected; a directed graph is read as undirected.

        >>> import networkx as nx
        >>> g = Graph.from_networkx(nx.path_graph(["a", "b", "c"]))
        >>> g.labels, g.m
        (['a', 'b', 'c'], 2)
        """
        nodes = list(graph.nodes())
        index = {v: i for i, v in enumerate(nodes)}
        edges = np.array([(index[u], index[v]) for u, v in graph.edges()], dtype=np.int64)
        return cls.from_edges(len(nodes), edges.reshape(-1, 2), labels=nodes,
                              name=name or (getattr(graph, "name", "") or "networkx graph"))

    # -- queries ------------------------------------------------------------------------
    @property
    def words(self) -> int:
        return self.rows.shape[1]

    def neighbours(self, v: int) -> np.ndarray:
        """Sorted neighbours of vertex ``v`` (0-based)."""
        return bitset_to_indices(self.rows[v], self.n)

    def degrees(self) -> np.ndarray:
        return np.bitwise_count(self.rows).sum(axis=1).astype(np.int64)

    @property
    def m(self) -> int:
        return int(self.degrees().sum() // 2)

    def has_edge(self, u: int, v: int) -> bool:
        return bool((int(self.rows[u, v // 64]) >> (v % 64)) & 1)

    def edges(self) -> np.ndarray:
        """``(m, 2)`` int64 array of edges ``u < v``, sorted."""
        if self.n == 0:
            return np.zeros((0, 2), dtype=np.int64)
        parts = []
        for start in range(0, self.n, _CHUNK):     # row blocks: memory O(chunk * n)
            bits = unpack_rows(self.rows[start:start + _CHUNK], self.n)
            u, v = np.nonzero(np.triu(bits, 1 + start))
            parts.append(np.stack([u + start, v], axis=1).astype(np.int64))
        return np.concatenate(parts)

    def density(self) -> float:
        return 0.0 if self.n < 2 else 2 * self.m / (self.n * (self.n - 1))

    def label(self, v: int) -> Any:
        return v if self.labels is None else self.labels[v]

    def labelled(self, vertices: Iterable[int]) -> list:
        return [self.label(int(v)) for v in vertices]

    def complement(self) -> "Graph":
        """The complement graph (a maximum independent set of G is a maximum clique of it, §1.2)."""
        full = np.zeros((self.n, self.words), dtype=np.uint64)
        full[:] = indices_to_bitset(np.arange(self.n), self.n)
        comp = full & ~self.rows
        idx = np.arange(self.n)
        comp[idx, idx // 64] &= ~np.left_shift(np.uint64(1), (idx % 64).astype(np.uint64))
        return Graph(comp, self.labels, f"complement of {self.name}")

    def subgraph(self, vertices: Sequence[int]) -> "Graph":
        vs = np.asarray(vertices, dtype=np.int64)
        pos = {int(v): i for i, v in enumerate(vs)}
        e = self.edges()
        keep = np.isin(e[:, 0], vs) & np.isin(e[:, 1], vs)
        e2 = np.array([(pos[int(a)], pos[int(b)]) for a, b in e[keep]], dtype=np.int64).reshape(-1, 2)
        return Graph.from_edges(len(vs), e2, labels=self.labelled(vs), name=f"subgraph of {self.name}")

    def to_networkx(self):
        """A ``networkx.Graph`` with the labels as nodes."""
        import networkx as nx

        g = nx.Graph(name=self.name)
        g.add_nodes_from(self.labelled(range(self.n)))
        g.add_edges_from((self.label(int(u)), self.label(int(v))) for u, v in self.edges())
        return g

    def permuted(self, order: np.ndarray) -> np.ndarray:
        """Adjacency rows with vertex ``order[i]`` renamed ``i`` (uint64 rows)."""
        order = np.asarray(order, dtype=np.int64)
        from .kernels.orders import permute_rows

        if self.n == 0:
            return self.rows.copy()
        return permute_rows(self.rows.view(np.int64), order).view(np.uint64)

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, n={self.n}, m={self.m})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Graph) and self.n == other.n and np.array_equal(self.rows, other.rows)

    __hash__ = None


_CHUNK = 2048


def unpack_rows(rows: np.ndarray, n: int) -> np.ndarray:
    """Bitset rows -> ``uint8[len(rows), n]`` 0/1 matrix."""
    rows = np.ascontiguousarray(rows, dtype=np.uint64)
    return np.unpackbits(rows.view(np.uint8), axis=1, bitorder="little")[:, :n]


def pack_rows(bits: np.ndarray) -> np.ndarray:
    """``[r, n]`` 0/1 matrix -> uint64 bitset rows of ``words_for(n)`` words."""
    r, n = bits.shape
    W = words_for(n)
    padded = np.zeros((r, W * 64), dtype=np.uint8)
    padded[:, :n] = bits
    return np.ascontiguousarray(np.packbits(padded, axis=1, bitorder="little")).view(np.uint64)


def bitset_to_indices(words: np.ndarray, n: int) -> np.ndarray:
    """Element indices of a bitset (uint64 or int64 words)."""
    w = np.ascontiguousarray(words).view(np.uint8)
    return np.flatnonzero(np.unpackbits(w, bitorder="little")[:n]).astype(np.int64)


def indices_to_bitset(indices: Iterable[int], n: int) -> np.ndarray:
    """uint64 bitset of ``words_for(n)`` words holding ``indices``."""
    out = np.zeros(words_for(n), dtype=np.uint64)
    idx = np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices, dtype=np.int64)
    if idx.size:
        np.bitwise_or.at(out, idx // 64, np.left_shift(np.uint64(1), (idx % 64).astype(np.uint64)))
    return out


def _pack_pairs(n: int, e: np.ndarray) -> np.ndarray:
    """uint64 adjacency rows from 0-based pairs (both directions set; duplicates merge).

    Vectorised: word index and bit of every (u, v) and (v, u), sorted, OR-reduced per
    word (no Python loop, no ufunc.at)."""
    W = words_for(n)
    rows = np.zeros((n, W), dtype=np.uint64)
    if len(e) == 0:
        return rows
    u = np.concatenate([e[:, 0], e[:, 1]])
    v = np.concatenate([e[:, 1], e[:, 0]])
    word = u * W + (v >> 6)
    order = np.argsort(word, kind="stable")
    word = word[order]
    bits = np.left_shift(np.uint64(1), (v[order] & 63).astype(np.uint64))
    starts = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])
    rows.reshape(-1)[word[starts]] = np.bitwise_or.reduceat(bits, starts)
    return rows
