"""Compiled (numba) core of the strongly polynomial algorithm of seed 001, §4.

Same method as the pure-Python path (``colouring.konig_colouring`` +
``two_relation.schedule_forwarding``/``schedule_direct`` + ``two_relation.make_schedulable``),
re-written over flat integer arrays so that the schedule of a 64-PE instance with 10^4-packet
loads (thousands of peeled matchings, ~10^6 transfers) is computed without Python per transfer:

* ``peel_matchings``: König colouring of a Delta-regular bipartite multigraph by perfect
  matchings with multiplicities, repaired by augmenting paths (BFS) after every peel;
* ``emit_colour`` (driven by ``weighted_schedule``): every matching is one 2-relation whose edges carry k packets; direct
  (2 or 3 rounds of k packets) or forwarding (12 rounds of k/5 packet, odd cycles paired, an
  unpaired one helped by a path end or a PE with no edge; for odd P a packet moves into the
  matching M when every PE lies on a cycle, M flushed in one round when it cannot grow).

The rules are those documented in ``two_relation.py``; the verifier checks the output
independently, and the tests compare both implementations' lengths.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .schedule import UNIT


@njit(cache=True, nogil=True)
def _augment(root, eu, ev, c, start, adj, matchL, matchR, parent, stampR, stampL, queue, it):
    qh = 0
    qt = 1
    queue[0] = root
    stampL[root] = it
    while qh < qt:
        x = queue[qh]
        qh += 1
        for idx in range(start[x], start[x + 1]):
            e = adj[idx]
            if c[e] == 0:
                continue
            v = ev[e]
            if stampR[v] == it:
                continue
            stampR[v] = it
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
                        return True
                    v = ev[prev]
            y = eu[me]
            if stampL[y] != it:
                stampL[y] = it
                queue[qt] = y
                qt += 1
    return False


@njit(cache=True, nogil=True)
def peel_matchings(P, eu, ev, count, delta):
    """Perfect matchings (edge id per left vertex) and multiplicities covering a
    ``delta``-regular bipartite multigraph.  Returns (int64[n, P], int64[n]); n = 0 on failure
    of the (impossible) augmenting step is signalled by a -1 multiplicity."""
    E = eu.shape[0]
    c = count.copy()
    start = np.zeros(P + 1, np.int64)
    for e in range(E):
        start[eu[e] + 1] += 1
    for x in range(P):
        start[x + 1] += start[x]
    fill = start[:-1].copy()
    adj = np.empty(E, np.int64)
    for e in range(E):
        adj[fill[eu[e]]] = e
        fill[eu[e]] += 1
    matchL = -np.ones(P, np.int64)
    matchR = -np.ones(P, np.int64)
    parent = np.zeros(P, np.int64)
    stampR = -np.ones(P, np.int64)
    stampL = -np.ones(P, np.int64)
    queue = np.zeros(P, np.int64)
    cap = min(E, delta) + 1
    out = np.empty((cap, P), np.int64)
    ks = np.empty(cap, np.int64)
    it = 0
    for x in range(P):
        it += 1
        if not _augment(x, eu, ev, c, start, adj, matchL, matchR, parent, stampR, stampL, queue, it):
            ks[0] = -1
            return out[:1], ks[:1]
    n = 0
    remaining = delta
    while remaining > 0:
        k = c[matchL[0]]
        for x in range(1, P):
            if c[matchL[x]] < k:
                k = c[matchL[x]]
        out[n, :] = matchL
        ks[n] = k
        n += 1
        remaining -= k
        for x in range(P):
            c[matchL[x]] -= k
        if remaining == 0:
            break
        for x in range(P):
            e = matchL[x]
            if c[e] == 0:
                matchL[x] = -1
                matchR[ev[e]] = -1
        for x in range(P):
            if matchL[x] < 0:
                it += 1
                if not _augment(x, eu, ev, c, start, adj, matchL, matchR, parent, stampR, stampL,
                                queue, it):
                    ks[0] = -1
                    return out[:1], ks[:1]
    return out[:n], ks[:n]


# ----------------------------------------------------------------------------- emission
#
# State shared with the Python driver (``weighted_schedule``): ``rows`` int64[cap, 6] and
# ``lengths`` int64[capL] are filled from ``st[0]`` / ``st[1]``; ``st[2]`` = |M|,
# ``st[3]`` = flush rounds; ``M`` int64[P, 5] holds (src, dst, x, y, ticks) per edge of M;
# ``busy`` marks the PEs on M.  The driver makes room before every call, so the kernels
# never reallocate (one compiled signature each, short compile time).


@njit(cache=True, nogil=True)
def _put(rows, st, r, s, d, f, t, a):
    i = st[0]
    rows[i, 0] = r
    rows[i, 1] = s
    rows[i, 2] = d
    rows[i, 3] = f
    rows[i, 4] = t
    rows[i, 5] = a
    st[0] = i + 1


@njit(cache=True, nogil=True)
def _emit_forwarding(rows, lengths, st, P, verts, cst, ccyc, nc, ms, md, k, use_forwarding):
    """§2 (direct: 3 rounds of k packets with an odd cycle, else 2) or §3.1 (forwarding: 12
    rounds of k/5 packet = k ticks when there are odd cycles, else 2 rounds of k packets; needs
    an even number of odd cycles or a path / edge-free PE as helper)."""
    no = 0
    for c in range(nc):
        if ccyc[c] and (cst[c + 1] - cst[c]) % 2 == 1:
            no += 1
    R = st[1]
    if no == 0 or not use_forwarding:
        nr = 3 if no > 0 else 2
        for r in range(nr):
            lengths[R + r] = k * UNIT
        st[1] = R + nr
        for c in range(nc):
            L = cst[c + 1] - cst[c]
            ne = L if ccyc[c] else L - 1
            for i in range(ne):
                x = verts[cst[c] + i]
                r = i % 2
                if ccyc[c] and L % 2 == 1 and i == ne - 1:
                    r = 2
                _put(rows, st, R + r, ms[x], md[x], ms[x], md[x], k * UNIT)
        return
    base = R
    for r in range(12):
        lengths[R + r] = k
    st[1] = R + 12
    lab = np.empty(P, np.int64)       # labelled odd cycles, concatenated
    lst = np.empty(P + 1, np.int64)
    ldir = np.empty(P, np.bool_)
    # label odd cycles so that the closing packet goes a_{L-1} -> a_0
    no = 0
    lp = 0
    for c in range(nc):
        L = cst[c + 1] - cst[c]
        if not ccyc[c] or L % 2 == 0:
            continue
        lst[no] = lp
        x0 = verts[cst[c]]
        fwd = ms[x0] == x0
        ldir[no] = fwd
        for j in range(L):
            if fwd:
                lab[lp + j] = verts[cst[c] + (j + 1) % L]
            else:
                lab[lp + j] = verts[cst[c] + (L - j) % L]
        lp += L
        no += 1
    lst[no] = lp
    helper_path = -1
    helper = -1
    if no % 2 == 1:
        for c in range(nc):
            if not ccyc[c]:
                if cst[c + 1] - cst[c] == 1:   # a PE on no edge
                    helper = verts[cst[c]]
                    helper_path = -1
                    break
                if helper_path < 0:
                    helper_path = c
        if helper < 0:
            helper = verts[cst[helper_path]]
    hb = np.empty(3, np.int64)
    for q in range(no):
        a = lab[lst[q]:lst[q + 1]]
        L = a.shape[0]
        dirf = ldir[q]
        paired = q < no - (no % 2)
        if paired:
            partner = q + 1 if q % 2 == 0 else q - 1
            for t in range(3):
                hb[t] = lab[lst[partner] + t]
            off_helped = 0 if q % 2 == 0 else 6
        else:
            hb[:] = helper
            off_helped = 0
        off_helping = 6 - off_helped
        # helped phase: 3 pieces per edge, the closing packet via the helpers
        xc = (a[L - 1] if dirf else a[(L - 1 + 1) % L])
        for i in range(3):
            r0 = base + off_helped + 2 * i
            for j in range(0, L - 1, 2):
                x = (a[j] if dirf else a[(j + 1) % L])
                _put(rows, st, r0, ms[x], md[x], ms[x], md[x], k)
            for j in range(1, L - 1, 2):
                x = (a[j] if dirf else a[(j + 1) % L])
                _put(rows, st, r0 + 1, ms[x], md[x], ms[x], md[x], k)
            _put(rows, st, r0, ms[xc], md[xc], a[L - 1], hb[i], k)
            _put(rows, st, r0 + 1, ms[xc], md[xc], hb[i], a[0], k)
        # helping phase: 2 pieces per edge, a_0 / a_1 / a_2 free in turn
        b0 = base + off_helping
        for j in range(1, L):
            x = (a[j] if dirf else a[(j + 1) % L])
            rr = b0 if j % 2 == 1 else b0 + 2
            if j == L - 1:
                rr = b0 + 2
            _put(rows, st, rr, ms[x], md[x], ms[x], md[x], k)
            _put(rows, st, rr + 1, ms[x], md[x], ms[x], md[x], k)
        x = (a[0] if dirf else a[(0 + 1) % L])
        _put(rows, st, b0 + 4, ms[x], md[x], ms[x], md[x], k)
        _put(rows, st, b0 + 5, ms[x], md[x], ms[x], md[x], k)
    for c in range(nc):
        L = cst[c + 1] - cst[c]
        if ccyc[c] and L % 2 == 1:
            continue
        ne = L if ccyc[c] else L - 1
        for i in range(ne):
            x = verts[cst[c] + i]
            if c == helper_path and helper == verts[cst[c]]:
                first = 6 if i % 2 == 0 else 0
            else:
                first = 0 if i % 2 == 0 else 5
            for r in range(5):
                _put(rows, st, base + first + r, ms[x], md[x], ms[x], md[x], k)


@njit(cache=True, nogil=True)
def partial_flush(rows, lengths, st, M, busy):
    """Send the lightest weight w of every edge of M in one round of length w (every link of
    the round busy throughout); edges that are done leave M."""
    nM = st[2]
    w = M[0, 4]
    for q in range(1, nM):
        if M[q, 4] < w:
            w = M[q, 4]
    R = st[1]
    lengths[R] = w
    st[1] = R + 1
    keep = 0
    for q in range(nM):
        _put(rows, st, R, M[q, 0], M[q, 1], M[q, 0], M[q, 1], w)
        if M[q, 4] > w:
            for t in range(4):
                M[keep, t] = M[q, t]
            M[keep, 4] = M[q, 4] - w
            keep += 1
        else:
            busy[M[q, 2]] = False
            busy[M[q, 3]] = False
    st[2] = keep
    st[3] += 1


@njit(cache=True, nogil=True)
def emit_colour(P, colour, k, ev, esrc, edst, use_forwarding, rows, lengths, st, M, busy):
    """Schedule one peeled matching (k identical 2-relations).

    Odd P (§3.2 with multiplicities): when every PE lies on a cycle and the number of odd
    cycles is odd, each of the k copies must drop one packet into M.  Compressed: take a
    maximal set S of pairwise disjoint cycle edges whose PEs are not on M (odd cycles' edges
    first); copy group t (k_t copies) drops edge e_t into M with weight k_t and is scheduled
    without it.  k_t = the lightest weight on M (so the next flush drains old and new edges
    together), or ceil(k/|S|) when M is empty.  When S is empty, M cannot grow and is flushed
    *partially* (``partial_flush``, one round as long as its lightest edge): Lemma 3.1 gives
    |M| >= ceil(P/4) then, so no flush round is emptier than in the packet-level algorithm.
    Each loop either places all remaining copies, fills M, or drains M's lightest edges, so a
    call costs O(P) iterations whatever k is.
    """
    succ = -np.ones(P, np.int64)
    pred = -np.ones(P, np.int64)
    ms = np.zeros(P, np.int64)
    md = np.zeros(P, np.int64)
    for x in range(P):
        e = colour[x]
        if esrc[e] >= 0:
            v = ev[e]
            succ[x] = v
            pred[v] = x
            ms[x] = esrc[e]
            md[x] = edst[e]
    # components: paths (incl. single PEs) first, then cycles
    seen = np.zeros(P, np.bool_)
    verts = np.empty(P, np.int64)
    cst = np.empty(P + 1, np.int64)
    ccyc = np.empty(P, np.bool_)
    nc = 0
    pos = 0
    for x in range(P):
        if pred[x] < 0:
            cst[nc] = pos
            ccyc[nc] = False
            y = x
            while y >= 0:
                verts[pos] = y
                pos += 1
                seen[y] = True
                y = succ[y]
            nc += 1
    for x in range(P):
        if not seen[x]:
            cst[nc] = pos
            ccyc[nc] = True
            y = x
            while not seen[y]:
                verts[pos] = y
                pos += 1
                seen[y] = True
                y = succ[y]
            nc += 1
    cst[nc] = pos
    n_odd = 0
    n_path = 0
    for c in range(nc):
        if ccyc[c]:
            if (cst[c + 1] - cst[c]) % 2 == 1:
                n_odd += 1
        else:
            n_path += 1
    if not use_forwarding or n_odd % 2 == 0 or n_path > 0:
        _emit_forwarding(rows, lengths, st, P, verts, cst, ccyc, np.int64(nc), ms, md, k, use_forwarding)
        return
    # §3.2 with multiplicities: place the k removals in M, keeping M's weights aligned
    Sc = np.empty(P, np.int64)
    Si = np.empty(P, np.int64)
    taken = np.zeros(P, np.bool_)
    verts2 = np.empty(P, np.int64)
    ccyc2 = np.empty(P, np.bool_)
    k_rem = k
    while k_rem > 0:
        # a maximal set S of disjoint cycle edges whose PEs are not on M (odd cycles first)
        taken[:] = False
        nS = 0
        for pass_ in range(2):
            want_odd = pass_ == 0
            for c in range(nc):
                L = cst[c + 1] - cst[c]
                if (L % 2 == 1) != want_odd:
                    continue
                for i in range(L):
                    x = verts[cst[c] + i]
                    y = verts[cst[c] + (i + 1) % L]
                    if not (busy[x] or busy[y] or taken[x] or taken[y]):
                        taken[x] = True
                        taken[y] = True
                        Sc[nS] = c
                        Si[nS] = i
                        nS += 1
        if nS == 0:   # M cannot grow: Lemma 3.1, |M| >= ceil(P/4)
            partial_flush(rows, lengths, st, M, busy)
            continue
        if st[2] > 0:  # align with M's lightest edge, so the next flush drains them together
            w = M[0, 4]
            for q in range(1, st[2]):
                if M[q, 4] < w:
                    w = M[q, 4]
            w = w // UNIT
        else:          # M empty: spread the copies evenly over S
            w = (k_rem + nS - 1) // nS
        for t in range(nS):
            if k_rem == 0:
                break
            kt = min(w, k_rem)
            k_rem -= kt
            c = Sc[t]
            i = Si[t]
            L = cst[c + 1] - cst[c]
            verts2[:] = verts
            ccyc2[:] = ccyc
            for u in range(L):
                verts2[cst[c] + u] = verts[cst[c] + (i + 1 + u) % L]
            ccyc2[c] = False
            x = verts[cst[c] + i]
            y = verts[cst[c] + (i + 1) % L]
            nM = st[2]
            M[nM, 0] = ms[x]
            M[nM, 1] = md[x]
            M[nM, 2] = x
            M[nM, 3] = y
            M[nM, 4] = kt * UNIT
            st[2] = nM + 1
            busy[x] = True
            busy[y] = True
            _emit_forwarding(rows, lengths, st, P, verts2, cst, ccyc2, np.int64(nc), ms, md, kt,
                             use_forwarding)


def weighted_schedule(P, colours, ks, ev, esrc, edst, use_forwarding):
    """Drive ``emit_colour`` over all peeled matchings, making room before every call; then
    empty M.  Returns (rows, lengths, flush rounds)."""
    rows = np.empty((max(64, len(ks) * 6 * P), 6), np.int64)
    lengths = np.empty(max(64, len(ks) * 12), np.int64)
    st = np.zeros(4, np.int64)
    M = np.zeros((P + 1, 5), np.int64)
    busy = np.zeros(P, np.bool_)
    half = P // 2 + 1
    for ci in range(len(ks)):
        k = int(ks[ci])
        # sub-items (copy groups) and flush rounds one call may produce
        q = min(k, half * (half + 1)) if (use_forwarding and P % 2) else 1
        flushes = half * (half + 1) + 1 if (use_forwarding and P % 2) else 0
        need_rows = q * 7 * P + flushes * half
        need_len = q * 12 + flushes
        if st[0] + need_rows > rows.shape[0]:
            rows = np.concatenate([rows, np.empty((max(rows.shape[0], need_rows), 6), np.int64)])
        if st[1] + need_len > lengths.shape[0]:
            lengths = np.concatenate([lengths, np.empty(max(lengths.shape[0], need_len), np.int64)])
        emit_colour(P, colours[ci], k, ev, esrc, edst, use_forwarding, rows, lengths, st, M, busy)
    if st[2] > 0:
        need = (half + 1) * half
        if st[0] + need > rows.shape[0]:
            rows = np.concatenate([rows, np.empty((need, 6), np.int64)])
        if st[1] + half + 1 > lengths.shape[0]:
            lengths = np.concatenate([lengths, np.empty(half + 1, np.int64)])
        while st[2] > 0:
            partial_flush(rows, lengths, st, M, busy)
    return rows[:st[0]], lengths[:st[1]], int(st[3])


# ----------------------------------------------------------------------------- §5.2 regular

@njit(cache=True, nogil=True)
def regular_rows(reg):
    """Rows and round lengths of the 1-factorization schedule of a regular part ``reg``
    (int64[P, P]): odd P, round i pairs j with (i - j) mod P; even P, PEs 0..P-2 run that for
    P - 1 and the PE left idle pairs with P - 1.  Each pair exchanges both ways on its link."""
    P = reg.shape[0]
    Q = P if P % 2 == 1 else P - 1
    rows = np.empty((P * (P - 1), 6), np.int64)
    lengths = np.zeros(Q, np.int64)
    st = np.zeros(1, np.int64)                    # rows written
    for i in range(Q):
        for j in range(Q):
            p = i - j
            if p < 0:
                p += Q
            if p == j:
                if P % 2 == 1:
                    continue
                p = P - 1
            if p < j:
                continue
            x = reg[j, p] * UNIT
            y = reg[p, j] * UNIT
            if x + y > lengths[i]:
                lengths[i] = x + y
            if x > 0:
                _put(rows, st, i, j, p, j, p, x)
            if y > 0:
                _put(rows, st, i, p, j, p, j, y)
    return rows[:st[0]], lengths
