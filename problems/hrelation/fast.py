"""Compiled (numba) core of the strongly polynomial algorithm of seed 001, §4.

Same method as the pure-Python path (``colouring.konig_colouring`` +
``two_relation.schedule_forwarding``/``schedule_direct`` + ``two_relation.make_schedulable``),
re-written over flat integer arrays so that the schedule of a 64-PE instance with 10^4-packet
loads (~4000 peeled matchings, ~10^6 transfers) is computed in well under a second:

* ``peel_matchings``: König colouring of a Delta-regular bipartite multigraph by perfect
  matchings with multiplicities, repaired by augmenting paths (BFS) after every peel;
* ``emit_schedule``: every matching is one 2-relation whose edges carry k packets; direct
  (2 or 3 rounds of k packets) or forwarding (12 rounds of k/5 packet, odd cycles paired, an
  unpaired one helped by a path end or a PE with no edge; for odd P a packet moves into the
  matching M when every PE lies on a cycle, M flushed in one round when it cannot grow).

The rules are those documented in ``two_relation.py``; the verifier checks the output
independently, and the tests compare both implementations' lengths.
"""
from __future__ import annotations

import numpy as np
from numba import njit

UNIT = 5  # ticks per packet, as schedule.UNIT


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

@njit(cache=True, nogil=True)
def _grow(rows, n, need):
    if n + need <= rows.shape[0]:
        return rows
    new = np.empty((max(2 * rows.shape[0], n + need), 6), np.int64)
    new[:n] = rows[:n]
    return new


@njit(cache=True, nogil=True)
def _grow1(arr, n, need):
    if n + need <= arr.shape[0]:
        return arr
    new = np.empty(max(2 * arr.shape[0], n + need), np.int64)
    new[:n] = arr[:n]
    return new


@njit(cache=True, nogil=True)
def _put(rows, n, r, s, d, f, t, a):
    rows[n, 0] = r
    rows[n, 1] = s
    rows[n, 2] = d
    rows[n, 3] = f
    rows[n, 4] = t
    rows[n, 5] = a
    return n + 1


@njit(cache=True, nogil=True)
def _lab(a, dirf, ms, md, j, L):
    """Message (src, dst) on edge (a_j, a_{j+1 mod L}) of a labelled odd cycle."""
    if dirf:
        x = a[j]
    else:
        x = a[(j + 1) % L]
    return ms[x], md[x]


@njit(cache=True, nogil=True)
def _emit_direct(rows, n, lengths, R, P, verts, cst, ccyc, nc, ms, md, k):
    """§2: 3 rounds of k packets with an odd cycle, else 2."""
    has_odd = False
    for c in range(nc):
        if ccyc[c] and (cst[c + 1] - cst[c]) % 2 == 1:
            has_odd = True
    nr = 3 if has_odd else 2
    lengths = _grow1(lengths, R, nr)
    for r in range(nr):
        lengths[R + r] = k * UNIT
    rows = _grow(rows, n, P)
    for c in range(nc):
        L = cst[c + 1] - cst[c]
        ne = L if ccyc[c] else L - 1
        for i in range(ne):
            x = verts[cst[c] + i]
            r = i % 2
            if ccyc[c] and L % 2 == 1 and i == ne - 1:
                r = 2
            n = _put(rows, n, R + r, ms[x], md[x], ms[x], md[x], k * UNIT)
    return rows, n, lengths, R + nr


@njit(cache=True, nogil=True)
def _emit_forwarding(rows, n, lengths, R, P, verts, cst, ccyc, nc, ms, md, k, lab, lst, ldir):
    """§3.1: 12 rounds of k/5 packet (k ticks) when there are odd cycles, else 2 rounds of k
    packets.  Needs an even number of odd cycles or a path / edge-free PE as helper."""
    no = 0
    for c in range(nc):
        if ccyc[c] and (cst[c + 1] - cst[c]) % 2 == 1:
            no += 1
    if no == 0:
        lengths = _grow1(lengths, R, 2)
        lengths[R] = k * UNIT
        lengths[R + 1] = k * UNIT
        rows = _grow(rows, n, P)
        for c in range(nc):
            L = cst[c + 1] - cst[c]
            ne = L if ccyc[c] else L - 1
            for i in range(ne):
                x = verts[cst[c] + i]
                n = _put(rows, n, R + i % 2, ms[x], md[x], ms[x], md[x], k * UNIT)
        return rows, n, lengths, R + 2
    base = R
    lengths = _grow1(lengths, R, 12)
    for r in range(12):
        lengths[R + r] = k
    R += 12
    rows = _grow(rows, n, 7 * P)
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
        cs, cd = _lab(a, dirf, ms, md, L - 1, L)
        for i in range(3):
            r0 = base + off_helped + 2 * i
            for j in range(0, L - 1, 2):
                s, d = _lab(a, dirf, ms, md, j, L)
                n = _put(rows, n, r0, s, d, s, d, k)
            for j in range(1, L - 1, 2):
                s, d = _lab(a, dirf, ms, md, j, L)
                n = _put(rows, n, r0 + 1, s, d, s, d, k)
            n = _put(rows, n, r0, cs, cd, a[L - 1], hb[i], k)
            n = _put(rows, n, r0 + 1, cs, cd, hb[i], a[0], k)
        # helping phase: 2 pieces per edge, a_0 / a_1 / a_2 free in turn
        b0 = base + off_helping
        for j in range(1, L - 1, 2):
            s, d = _lab(a, dirf, ms, md, j, L)
            n = _put(rows, n, b0, s, d, s, d, k)
            n = _put(rows, n, b0 + 1, s, d, s, d, k)
        for j in range(2, L, 2):
            s, d = _lab(a, dirf, ms, md, j, L)
            n = _put(rows, n, b0 + 2, s, d, s, d, k)
            n = _put(rows, n, b0 + 3, s, d, s, d, k)
        s, d = _lab(a, dirf, ms, md, 0, L)
        n = _put(rows, n, b0 + 4, s, d, s, d, k)
        n = _put(rows, n, b0 + 5, s, d, s, d, k)
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
                n = _put(rows, n, base + first + r, ms[x], md[x], ms[x], md[x], k)
    return rows, n, lengths, R


@njit(cache=True, nogil=True)
def _partial_flush(rows, n, lengths, R, Ms, Md, Mx, My, Mt, nM, busy):
    """Send the lightest weight w of every edge of M in one round of length w (every link of
    the round busy throughout); edges that are done leave M."""
    w = Mt[0]
    for q in range(1, nM):
        if Mt[q] < w:
            w = Mt[q]
    lengths = _grow1(lengths, R, 1)
    lengths[R] = w
    rows = _grow(rows, n, nM)
    keep = 0
    for q in range(nM):
        n = _put(rows, n, R, Ms[q], Md[q], Ms[q], Md[q], w)
        if Mt[q] > w:
            Ms[keep] = Ms[q]
            Md[keep] = Md[q]
            Mx[keep] = Mx[q]
            My[keep] = My[q]
            Mt[keep] = Mt[q] - w
            keep += 1
        else:
            busy[Mx[q]] = False
            busy[My[q]] = False
    return rows, n, lengths, R + 1, keep


@njit(cache=True, nogil=True)
def emit_schedule(P, colours, ks, eu, ev, esrc, edst, use_forwarding):
    """Rows (round, msg_src, msg_dst, frm, to, ticks), round lengths and the number of flush
    rounds for all peeled matchings.

    Odd P (§3.2 with multiplicities): when every PE of a matching lies on a cycle and the
    number of odd cycles is odd, its k copies are split over a maximal set S of pairwise
    disjoint cycle edges whose PEs are not in M (odd cycles' edges first): copy group t drops
    edge e_t into M with weight k_t (k_t = k/|S| rounded) and is scheduled without it.  When S
    is empty, M is flushed *partially*: one round as long as its lightest edge, every edge of
    M sending that much (Lemma 3.1: then |M| >= ceil(P/4), so no flush round is emptier than in
    the packet-level algorithm).  At the end M is emptied the same way.
    """
    rows = np.empty((max(16, colours.shape[0] * P * 6), 6), np.int64)
    lengths = np.empty(max(16, colours.shape[0] * 12), np.int64)
    n = 0
    R = 0
    succ = np.empty(P, np.int64)
    pred = np.empty(P, np.int64)
    ms = np.empty(P, np.int64)
    md = np.empty(P, np.int64)
    seen = np.empty(P, np.bool_)
    verts = np.empty(P, np.int64)     # all components, concatenated
    cst = np.empty(P + 1, np.int64)   # component starts
    ccyc = np.empty(P, np.bool_)
    verts2 = np.empty(P, np.int64)
    ccyc2 = np.empty(P, np.bool_)
    lab = np.empty(P, np.int64)       # labelled odd cycles, concatenated
    lst = np.empty(P + 1, np.int64)
    ldir = np.empty(P, np.bool_)
    busy = np.zeros(P, np.bool_)      # PEs on an edge of M
    taken = np.zeros(P, np.bool_)
    Ms = np.empty(P, np.int64)
    Md = np.empty(P, np.int64)
    Mx = np.empty(P, np.int64)
    My = np.empty(P, np.int64)
    Mt = np.empty(P, np.int64)
    Sc = np.empty(P, np.int64)
    Si = np.empty(P, np.int64)
    nM = 0
    flushes = 0
    for ci in range(colours.shape[0]):
        k = ks[ci]
        succ[:] = -1
        pred[:] = -1
        for x in range(P):
            e = colours[ci, x]
            if esrc[e] >= 0:
                v = ev[e]
                succ[x] = v
                pred[v] = x
                ms[x] = esrc[e]
                md[x] = edst[e]
        # components: paths (incl. single PEs) first, then cycles
        seen[:] = False
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
        if not use_forwarding:
            rows, n, lengths, R = _emit_direct(rows, n, lengths, R, P, verts, cst, ccyc, nc, ms, md, k)
            continue
        n_odd = 0
        n_path = 0
        for c in range(nc):
            if ccyc[c]:
                if (cst[c + 1] - cst[c]) % 2 == 1:
                    n_odd += 1
            else:
                n_path += 1
        if n_odd % 2 == 0 or n_path > 0:
            rows, n, lengths, R = _emit_forwarding(rows, n, lengths, R, P, verts, cst, ccyc, nc,
                                                   ms, md, k, lab, lst, ldir)
            continue
        # §3.2: choose a maximal set S of disjoint free cycle edges
        nS = 0
        while nS == 0:
            taken[:] = False
            for want_odd in (True, False):
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
            if nS == 0:
                rows, n, lengths, R, nM = _partial_flush(rows, n, lengths, R, Ms, Md, Mx, My, Mt,
                                                         nM, busy)
                flushes += 1
        q = min(nS, k)
        for t in range(q):
            kt = k // q + (1 if t < k % q else 0)
            c = Sc[t]
            i = Si[t]
            L = cst[c + 1] - cst[c]
            verts2[:pos] = verts[:pos]
            ccyc2[:nc] = ccyc[:nc]
            for u in range(L):
                verts2[cst[c] + u] = verts[cst[c] + (i + 1 + u) % L]
            ccyc2[c] = False
            x = verts[cst[c] + i]
            y = verts[cst[c] + (i + 1) % L]
            Ms[nM] = ms[x]
            Md[nM] = md[x]
            Mx[nM] = x
            My[nM] = y
            Mt[nM] = kt * UNIT
            nM += 1
            busy[x] = True
            busy[y] = True
            rows, n, lengths, R = _emit_forwarding(rows, n, lengths, R, P, verts2, cst, ccyc2, nc,
                                                   ms, md, kt, lab, lst, ldir)
    while nM > 0:
        rows, n, lengths, R, nM = _partial_flush(rows, n, lengths, R, Ms, Md, Mx, My, Mt, nM, busy)
        flushes += 1
    return rows[:n], lengths[:R], flushes
