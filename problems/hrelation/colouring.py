"""From an h-relation to ceil(h/2) 2-relations (seed 001, §2 and §4).

Steps of §2:

1. the transfer multigraph G (pair {i, j} carries m_ij + m_ji packets); a dummy edge between
   consecutive odd-degree PEs makes every degree even;
2. orient the edges along closed trails (Euler cycles of each component), so that every PE has
   in-degree = out-degree <= ceil(h/2);
3. the bipartite multigraph (L = R = PEs, an edge u in L -> v in R per oriented edge u -> v) has
   maximum degree ceil(h/2); colour its edges with ceil(h/2) colours (König's theorem);
4. each colour class is a matching, i.e. a 2-relation (every PE sends <= 1 and receives <= 1
   oriented edge: disjoint paths and cycles).

The bipartite edges are *typed*: the count of oriented edges u -> v carrying packets of
message u -> v, the count carrying packets of message v -> u, and dummy edges are separate
parallel edges, so a colour class never mixes two messages on one edge.

König colouring (``konig_colouring``): pad the bipartite multigraph with dummy edges to a
Delta-regular one (a two-pointer walk over the degree deficits, at most 2P new edges), then
peel perfect matchings; a perfect matching of the support is used ``k`` times, ``k`` the smallest
multiplicity on it (so every peel removes at least one typed edge: at most #edges + 2P peels,
independent of the message lengths).  The matching is repaired after each peel by augmenting
(alternating) paths from the freed left vertices; a regular bipartite multigraph always has a
perfect matching (Hall), so the repair always succeeds.  This is the strongly polynomial
colouring that §4 asks for; §4 itself peels matchings that cover the max-degree vertices
instead of padding to a regular graph, which gives the same ceil(h/2) colours.

Orientation: ``orient_packets`` (§2) walks closed trails over every packet (time ~ number of
packets); ``orient_halves`` (§4) puts floor(w/2) packets of a message of w packets on each of
the two orientations and walks closed trails only over the odd remainders (time ~ number of
messages).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DUMMY = -1


@dataclass
class TypedEdges:
    """Parallel typed edges of the bipartite multigraph: L vertex ``u`` -> R vertex ``v``,
    carrying ``count`` packets of message ``src -> dst`` (``src == DUMMY`` for a dummy)."""

    u: list
    v: list
    src: list
    dst: list
    count: list

    def __len__(self):
        return len(self.u)


def _pair_odd_vertices(adj: list[dict], P: int) -> None:
    """Add a dummy edge between consecutive odd-degree vertices (§2)."""
    odd = [x for x in range(P) if sum(adj[x].values()) % 2]
    for a, b in zip(odd[0::2], odd[1::2]):
        adj[a][b] = adj[a].get(b, 0) + 1
        adj[b][a] = adj[b].get(a, 0) + 1


def _walk_closed_trails(adj: list[dict], P: int) -> dict:
    """Orient every edge of an even-degree multigraph along closed trails.

    ``adj[x][y]`` is the multiplicity of {x, y}; it is consumed.  Returns the number of
    traversals per ordered pair, so out-degree = in-degree at every vertex.
    """
    oriented: dict = {}
    for start in range(P):
        while adj[start]:
            x = start
            while True:
                nbrs = adj[x]
                if not nbrs:
                    break  # back at the start: a trail in an even graph closes there
                y = next(iter(nbrs))
                c = nbrs[y]
                if c == 1:
                    del nbrs[y]
                else:
                    nbrs[y] = c - 1
                back = adj[y]
                c = back[x]
                if c == 1:
                    del back[x]
                else:
                    back[x] = c - 1
                oriented[(x, y)] = oriented.get((x, y), 0) + 1
                x = y
    return oriented


def orient_packets(m: np.ndarray) -> TypedEdges:
    """§2: dummy edges between odd-degree PEs, closed trails over *every packet*.

    >>> te = orient_packets(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]]))
    >>> sorted(zip(te.u, te.v))
    [(0, 1), (1, 2), (2, 0)]
    """
    P = m.shape[0]
    adj = [dict() for _ in range(P)]
    for i in range(P):
        for j in range(i + 1, P):
            c = int(m[i, j] + m[j, i])
            if c:
                adj[i][j] = c
                adj[j][i] = c
    _pair_odd_vertices(adj, P)
    oriented = _walk_closed_trails(adj, P)
    return _label(m, {k: v for k, v in oriented.items()}, remainder_only=False)


def _label(m: np.ndarray, oriented: dict, remainder_only: bool, typed: dict | None = None) -> TypedEdges:
    """Distribute the packets of each pair over its oriented traversals."""
    typed = {} if typed is None else typed
    left = {}  # unordered pair -> [remaining of a->b, remaining of b->a]
    for (x, y) in oriented:
        a, b = (x, y) if x < y else (y, x)
        if (a, b) not in left:
            if remainder_only:
                left[(a, b)] = [int(m[a, b] % 2), int(m[b, a] % 2)]
            else:
                left[(a, b)] = [int(m[a, b]), int(m[b, a])]
    for (x, y), c in sorted(oriented.items()):
        a, b = (x, y) if x < y else (y, x)
        rem = left[(a, b)]
        for idx, (s, d) in enumerate(((a, b), (b, a))):
            take = min(rem[idx], c)
            if take:
                key = (x, y, s, d)
                typed[key] = typed.get(key, 0) + take
                rem[idx] -= take
                c -= take
        if c:
            key = (x, y, DUMMY, DUMMY)
            typed[key] = typed.get(key, 0) + c
    items = sorted(typed.items())
    return TypedEdges(u=[k[0] for k, _ in items], v=[k[1] for k, _ in items],
                      src=[k[2] for k, _ in items], dst=[k[3] for k, _ in items],
                      count=[c for _, c in items])


def orient_halves(m: np.ndarray) -> TypedEdges:
    """§4: floor(w/2) packets of a message of w packets on each orientation; closed trails
    only over the odd remainders (one edge per odd message) plus dummies.

    >>> te = orient_halves(np.array([[0, 1000001], [0, 0]]))
    >>> sorted(zip(te.u, te.v, te.count))
    [(0, 1, 500001), (1, 0, 1), (1, 0, 500000)]

    (the odd packet and the dummy closing its trail: 1 -> 0 is the dummy)
    """
    P = m.shape[0]
    typed: dict = {}
    rows, cols = np.nonzero(m)
    for i, j in zip(rows.tolist(), cols.tolist()):
        half = int(m[i, j]) // 2
        if half:
            typed[(i, j, i, j)] = typed.get((i, j, i, j), 0) + half
            typed[(j, i, i, j)] = typed.get((j, i, i, j), 0) + half
    adj = [dict() for _ in range(P)]
    for i, j in zip(rows.tolist(), cols.tolist()):
        if m[i, j] % 2:
            adj[i][j] = adj[i].get(j, 0) + 1
            adj[j][i] = adj[j].get(i, 0) + 1
    _pair_odd_vertices(adj, P)
    oriented = _walk_closed_trails(adj, P)
    return _label(m, oriented, remainder_only=True, typed=typed)


# ----------------------------------------------------------------------------- König

def pad_regular(edges: TypedEdges, P: int):
    """Add dummy edges (a two-pointer walk over the degree deficits of both sides, at most
    2P edges) so that every vertex has degree Delta; returns (padded edges, Delta)."""
    eu, ev = list(edges.u), list(edges.v)
    src, dst = list(edges.src), list(edges.dst)
    cnt = list(edges.count)
    degL = [0] * P
    degR = [0] * P
    for a, b, c in zip(eu, ev, cnt):
        degL[a] += c
        degR[b] += c
    delta = max(max(degL, default=0), max(degR, default=0))
    # pad to a delta-regular bipartite multigraph
    defL = [(x, delta - d) for x, d in enumerate(degL) if d < delta]
    defR = [(x, delta - d) for x, d in enumerate(degR) if d < delta]
    i = j = 0
    while i < len(defL) and j < len(defR):
        (a, da), (b, db) = defL[i], defR[j]
        c = min(da, db)
        eu.append(a); ev.append(b); src.append(DUMMY); dst.append(DUMMY); cnt.append(c)
        defL[i] = (a, da - c)
        defR[j] = (b, db - c)
        if da == c:
            i += 1
        if db == c:
            j += 1
    return TypedEdges(u=eu, v=ev, src=src, dst=dst, count=list(cnt)), delta


def konig_colouring(edges: TypedEdges, P: int):
    """Colour the bipartite multigraph with Delta colours (König), as peeled matchings.

    Returns ``(edges, colours)`` where ``edges`` is the typed edge list padded with dummy
    edges and ``colours`` a list of ``(edge_ids, k)``: a perfect matching (one edge id per
    left vertex) that stands for ``k`` identical colour classes.  ``sum(k) == Delta``.

    >>> te = TypedEdges(u=[0, 0, 1], v=[0, 1, 0], src=[0, 0, 1], dst=[1, 1, 0], count=[1, 1, 2])
    >>> padded, colours = konig_colouring(te, 2)
    >>> sum(k for _, k in colours)     # Delta = degree of R vertex 0
    3
    """
    padded, delta = pad_regular(edges, P)
    eu, ev, cnt = padded.u, padded.v, padded.count
    if delta == 0:
        return padded, []
    adj = [set() for _ in range(P)]
    for e, a in enumerate(eu):
        adj[a].add(e)
    matchL = [-1] * P
    matchR = [-1] * P

    def augment(root: int) -> None:
        parent = {}
        queue = [root]
        seen = {root}
        for x in queue:
            for e in adj[x]:
                v = ev[e]
                if v in parent:
                    continue
                parent[v] = e
                me = matchR[v]
                if me < 0:
                    while True:
                        e2 = parent[v]
                        x2 = eu[e2]
                        prev = matchL[x2]
                        matchL[x2] = e2
                        matchR[v] = e2
                        if x2 == root:
                            return
                        v = ev[prev]
                y = eu[me]
                if y not in seen:
                    seen.add(y)
                    queue.append(y)
        raise RuntimeError("no perfect matching in a regular bipartite graph (cannot happen)")

    for x in range(P):
        augment(x)
    counts = np.array(cnt, dtype=np.int64)
    colours = []
    remaining = delta
    while remaining > 0:
        ids = np.array(matchL, dtype=np.int64)
        k = int(counts[ids].min())
        colours.append((ids, k))
        counts[ids] -= k
        remaining -= k
        if remaining == 0:
            break
        for e in ids[counts[ids] == 0].tolist():
            adj[eu[e]].discard(e)
            matchL[eu[e]] = -1
            matchR[ev[e]] = -1
        for x in range(P):
            if matchL[x] < 0:
                augment(x)
    return padded, colours
