"""Numba kernels of the liquid-schedule searches (seed 000, §3.1-3.2 and Annex).

Sets of transfers and of links are bitsets of ``int64`` words (only bit patterns
matter; no uint64/int64 mixing, which numba would promote to float).  popcount and
count-trailing-zeros are the CPU's instructions through LLVM intrinsics.

Kernel data (read only, built by :func:`stealsearch.problems.liquid.problem.bitset_tables`):

``conf[t]``    transfers congesting with t (sharing a link), t itself excluded;
``users[l]``   transfers using link l;
``tlinks[t]``  links of transfer t;
``params``     sizes and row offsets (see ``P_*`` below).

The liquid-schedule tree (decide mode), one row per node, every row self-contained:

``[phase, steps_done, duration, anchor | R | A | C | E | BN | COV | ASSIGN]``

* ``R``: the reduced traffic X_reduced (transfers not yet scheduled);
* ``phase 0`` (a *schedule node*): recompute the loads of R, its duration and its
  bottlenecks ``BN`` (§3.1: the bottlenecks of the reduced traffic, which include the
  old ones - Theorem 1), then start building a step;
* ``phase 1`` (building one full team of R): ``A`` the partial team, ``COV`` its links,
  ``C`` the transfers that may still join it, ``E`` the transfers left out on purpose
  (that a later member must congest with, for fullness).
  - *Skeleton*: while a bottleneck of R is not used by A, take the uncovered bottleneck
    with the fewest candidates (none → dead end: no team, Theorem 2; ties go to the link
    listed last, i.e. to the inter-switch cables of a topology traffic) and branch on
    one candidate t: "t in the skeleton" / "t not in it" (only the first when t is the
    bottleneck's last candidate: the second would be a dead end).  A skeleton = the
    team's transfers that use bottlenecks, so each skeleton is generated once.
  - *Value ordering* (not in the paper, it only changes which schedule is met first):
    the candidate tried first is the one whose links carry the largest sum of squared
    loads in R (links nearly as loaded as the bottlenecks become bottlenecks of the
    next reduced traffic if left out).  The team-count tree keeps the id order.
  - *Expansion*: the remaining candidates use no bottleneck; branch include/exclude on
    the first one, excluded ones going to E; a node where some e in E congests with
    nothing in A and nothing in C is pruned (the team could never be full).  Each full
    team (= maximal simultaneous subset using all bottlenecks) is generated once.
  - When C is empty the full team is a step: its transfers get the step number in
    ASSIGN (uint16 per transfer, 4 per word), R loses them, and a schedule node follows.
  - A schedule node with R empty is a liquid schedule (every step was a team of the
    then-reduced traffic, so the length is Λ: Theorem 1 applied step after step).
* Symmetry: the steps of a schedule are a set, so the step containing one chosen
  *anchor* transfer of R may be taken first; with ``anchor`` on, each step starts from
  the anchor (the transfer of R using the most bottlenecks, lowest id first).  This is
  not in the paper; it is sound by the same exchange argument as fullness (§3.2) and
  can be switched off (``params[P_ANCHOR] = 0``) to get the paper's plain tree.

The team-count tree (enumerate mode) is phase 1 alone from the root traffic: each leaf
is one team (``params[P_FULL] = 0``) or one full team (``= 1``).

The colouring tree (optimise mode, Annex) colours the congestion graph: vertices in a
fixed order, a vertex goes into an existing colour class it does not congest with or
opens one new class; objective = -(number of classes); a node is pruned when
max(classes used, Λ) cannot beat the incumbent (Λ is a lower bound: the transfers of
a bottleneck form a clique).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import ctz, popcount
from stealsearch.engine.core.problem import BUDGET, EMPTY, GROW, IMPROVED, NODES, SOLUTIONS, N_ENGINE_COUNTERS

# params layout
P_N = 0        # transfers
P_L = 1        # links
P_W = 2        # words per transfer set
P_LW = 3       # words per link set
P_ANCHOR = 4   # 1: anchor each step on one transfer (symmetry breaking)
P_FULL = 5     # team counting: 1 = full teams only
P_OR = 6       # row offsets
P_OA = 7
P_OC = 8
P_OE = 9
P_OBN = 10
P_OCOV = 11
P_OAS = 12
P_WIDTH = 13
P_OLOAD = 14   # link loads over R (uint16, 4 per word), set at schedule nodes
P_MAXLEN = 15  # longest transfer (links)
N_PARAMS = 16

# extra counter slots (after the engine's)
C_STEPS = N_ENGINE_COUNTERS + 0      # full teams taken as steps (schedule nodes created)
C_DEAD = N_ENGINE_COUNTERS + 1       # dead ends: an uncoverable bottleneck (no team)


@njit(inline="always", nogil=True, cache=True)
def _bit(i):
    return np.int64(1) << np.int64(i & 63)


@njit(nogil=True, cache=True)
def _first(row, off, w):
    """Lowest member of the set row[off:off+w], or -1."""
    for k in range(w):
        x = row[off + k]
        if x != 0:
            return k * 64 + ctz(x)
    return -1


@njit(nogil=True, cache=True)
def _empty(row, off, w):
    for k in range(w):
        if row[off + k] != 0:
            return False
    return True


@njit(nogil=True, cache=True)
def _count_and(row, off, table, idx, w):
    """|row[off:off+w] ∩ table[idx]|."""
    c = 0
    for k in range(w):
        c += popcount(row[off + k] & table[idx, k])
    return c


@njit(nogil=True, cache=True)
def _meets(row, off, table, idx, w):
    for k in range(w):
        if row[off + k] & table[idx, k]:
            return True
    return False


@njit(nogil=True, cache=True)
def _add_member(row, params, conf, tlinks, t):
    """Put transfer t into the partial team A: A += t, COV |= links(t),
    C -= t and its congesting transfers, E loses the transfers t congests with."""
    W = params[P_W]
    LW = params[P_LW]
    oA, oC, oE, oCOV = params[P_OA], params[P_OC], params[P_OE], params[P_OCOV]
    row[oA + (t >> 6)] |= _bit(t)
    row[oC + (t >> 6)] &= ~_bit(t)
    for k in range(W):
        row[oC + k] &= ~conf[t, k]
        row[oE + k] &= ~conf[t, k]
    for k in range(LW):
        row[oCOV + k] |= tlinks[t, k]


@njit(nogil=True, cache=True)
def _set_bottlenecks(row, params, users):
    """Loads of the links over R; write BN; return the duration (max load)."""
    L = params[P_L]
    W = params[P_W]
    LW = params[P_LW]
    oR, oBN, oLD = params[P_OR], params[P_OBN], params[P_OLOAD]
    lam = 0
    for k in range(LW):
        row[oBN + k] = 0
    for k in range((L + 3) // 4):
        row[oLD + k] = 0
    for l in range(L):
        c = _count_and(row, oR, users, l, W)
        row[oLD + (l >> 2)] |= np.int64(c) << ((l & 3) * 16)
        if c > lam:
            lam = c
            for k in range(LW):
                row[oBN + k] = 0
        if c == lam and c > 0:
            row[oBN + (l >> 6)] |= _bit(l)
    return lam


@njit(inline="always", nogil=True, cache=True)
def _load(row, oLD, l):
    return (row[oLD + (l >> 2)] >> ((l & 3) * 16)) & 0xFFFF


@njit(nogil=True, cache=True)
def _score(row, params, tlist, t):
    """Value ordering: prefer transfers over heavily loaded links (they become
    bottlenecks soonest if left out): the sum of squared loads of t's links."""
    oLD = params[P_OLOAD]
    sc = 0
    for j in range(tlist.shape[1]):
        l = tlist[t, j]
        if l < 0:
            break
        x = _load(row, oLD, l)
        sc += x * x
    return sc


@njit(nogil=True, cache=True)
def _best_of(row, params, tlist, users, b, oC, W):
    """Highest-scoring member of C (restricted to users of link b if b >= 0)."""
    best = -1
    best_s = -1
    for k in range(W):
        x = row[oC + k]
        if b >= 0:
            x &= users[b, k]
        while x != 0:
            t = k * 64 + ctz(x)
            x &= ~_bit(t)
            sc = _score(row, params, tlist, t)
            if sc > best_s:
                best_s = sc
                best = t
    return best


@njit(nogil=True, cache=True)
def _team_branch(cur, params, conf, users, tlinks, tlist, full, ordered):
    """Classify a phase-1 row.  Returns (kind, t):
    kind 0: dead end (uncoverable bottleneck) ; 1: pruned (cannot become full);
    2: branch on t in the skeleton; 3: branch on t in the expansion; 4: team complete;
    5: t is the only candidate left for a bottleneck (its "without t" child would be a
    dead end, so only "with t" is pushed)."""
    W = params[P_W]
    LW = params[P_LW]
    oA, oC, oE, oBN, oCOV = params[P_OA], params[P_OC], params[P_OE], params[P_OBN], params[P_OCOV]
    best_b = -1
    best_c = 1 << 62
    for k in range(LW):
        x = cur[oBN + k] & ~cur[oCOV + k]
        while x != 0:
            b = k * 64 + ctz(x)
            x &= ~_bit(b)
            c = _count_and(cur, oC, users, b, W)
            if c == 0:
                return 0, -1
            if c <= best_c:
                best_c = c
                best_b = b
    if best_b >= 0:
        kind = 5 if best_c == 1 else 2
        if ordered:
            return kind, _best_of(cur, params, tlist, users, best_b, oC, W)
        for k in range(W):
            x = cur[oC + k] & users[best_b, k]
            if x != 0:
                return kind, k * 64 + ctz(x)
    if full:
        for k in range(W):
            x = cur[oE + k]
            while x != 0:
                e = k * 64 + ctz(x)
                x &= ~_bit(e)
                if not _meets(cur, oA, conf, e, W) and not _meets(cur, oC, conf, e, W):
                    return 1, -1
    if ordered:
        t = _best_of(cur, params, tlist, users, -1, oC, W)
    else:
        t = _first(cur, oC, W)
    if t >= 0:
        return 3, t
    return 4, -1


@njit(nogil=True, cache=True)
def liquid_kernel(stack, top, budget, mode, incumbent, counters, solution,
                  conf, users, tlinks, tlist, params):
    """Decide whether a liquid schedule exists (see module docstring)."""
    n = params[P_N]
    W = params[P_W]
    LW = params[P_LW]
    width = params[P_WIDTH]
    oR, oA, oC, oE, oAS = params[P_OR], params[P_OA], params[P_OC], params[P_OE], params[P_OAS]
    oBN = params[P_OBN]
    oCOV = params[P_OCOV]
    anchor = params[P_ANCHOR]
    cap = stack.shape[0]
    cur = np.empty(width, dtype=np.int64)
    done = 0
    while top > 0:
        if done >= budget:
            return top, BUDGET, 0
        if top + 2 > cap:
            return top, GROW, 0
        top -= 1
        for k in range(width):
            cur[k] = stack[top, k]
        done += 1
        counters[NODES] += 1
        if cur[0] == 0:
            # schedule node: reduced traffic R
            if _empty(cur, oR, W):
                if incumbent < 1:
                    for t in range(n):
                        solution[t] = (cur[oAS + (t >> 2)] >> ((t & 3) * 16)) & 0xFFFF
                    return top, IMPROVED, 1
                continue
            lam = _set_bottlenecks(cur, params, users)
            cur[2] = lam
            for k in range(W):
                cur[oA + k] = 0
                cur[oE + k] = 0
                cur[oC + k] = cur[oR + k]
            for k in range(LW):
                cur[oCOV + k] = 0
            cur[0] = 1
            if anchor:
                # the transfer of R using the most bottlenecks (lowest id on ties)
                best_t = -1
                best_u = -1
                for k in range(W):
                    x = cur[oR + k]
                    while x != 0:
                        t = k * 64 + ctz(x)
                        x &= ~_bit(t)
                        u = 0
                        for j in range(LW):
                            u += popcount(tlinks[t, j] & cur[oBN + j])
                        u = u * (1 << 40) + _score(cur, params, tlist, t)
                        if u > best_u:
                            best_u = u
                            best_t = t
                _add_member(cur, params, conf, tlinks, best_t)
            for k in range(width):
                stack[top, k] = cur[k]
            top += 1
            continue
        kind, t = _team_branch(cur, params, conf, users, tlinks, tlist, True, True)
        if kind == 0:
            counters[C_DEAD] += 1
            continue
        if kind == 1:
            continue
        if kind == 4:
            counters[C_STEPS] += 1
            step = cur[1] + 1
            for k in range(W):
                x = cur[oA + k]
                cur[oR + k] &= ~x
                while x != 0:
                    s = k * 64 + ctz(x)
                    x &= ~_bit(s)
                    cur[oAS + (s >> 2)] |= step << ((s & 3) * 16)
            cur[0] = 0
            cur[1] = step
            for k in range(width):
                stack[top, k] = cur[k]
            top += 1
            continue
        # kind 2 or 3: two children, "without t" below "with t"; kind 5: "with t" only
        if kind != 5:
            for k in range(width):
                stack[top, k] = cur[k]
            stack[top, oC + (t >> 6)] &= ~_bit(t)
            if kind == 3:
                stack[top, oE + (t >> 6)] |= _bit(t)
            top += 1
        _add_member(cur, params, conf, tlinks, t)
        for k in range(width):
            stack[top, k] = cur[k]
        top += 1
    return top, EMPTY, 0


@njit(nogil=True, cache=True)
def teams_kernel(stack, top, budget, mode, incumbent, counters, solution,
                 conf, users, tlinks, tlist, params):
    """Count the teams (``params[P_FULL] = 0``) or full teams (``= 1``) of a traffic:
    every leaf of the skeleton + expansion tree is one, generated once."""
    width = params[P_WIDTH]
    oC, oE = params[P_OC], params[P_OE]
    full = params[P_FULL] == 1
    cap = stack.shape[0]
    cur = np.empty(width, dtype=np.int64)
    done = 0
    while top > 0:
        if done >= budget:
            return top, BUDGET, 0
        if top + 2 > cap:
            return top, GROW, 0
        top -= 1
        for k in range(width):
            cur[k] = stack[top, k]
        done += 1
        counters[NODES] += 1
        kind, t = _team_branch(cur, params, conf, users, tlinks, tlist, full, False)
        if kind == 0:
            counters[C_DEAD] += 1
            continue
        if kind == 1:
            continue
        if kind == 4:
            counters[SOLUTIONS] += 1
            continue
        if kind != 5:
            for k in range(width):
                stack[top, k] = cur[k]
            stack[top, oC + (t >> 6)] &= ~_bit(t)
            if kind == 3 and full:
                stack[top, oE + (t >> 6)] |= _bit(t)
            top += 1
        _add_member(cur, params, conf, tlinks, t)
        for k in range(width):
            stack[top, k] = cur[k]
        top += 1
    return top, EMPTY, 0


# colouring rows: [vertices coloured, classes used | class 0 bits | class 1 bits | ...]
@njit(nogil=True, cache=True)
def colour_kernel(stack, top, budget, mode, incumbent, counters, solution,
                  conf, order, cparams):
    """Exact minimum colouring of the congestion graph (optimise, objective = -colours).

    ``order``: the vertex order; ``cparams = [n, W, max_classes, lower_bound]``."""
    n = cparams[0]
    W = cparams[1]
    K = cparams[2]
    lower = cparams[3]
    width = 2 + K * W
    cap = stack.shape[0]
    cur = np.empty(width, dtype=np.int64)
    done = 0
    while top > 0:
        if done >= budget:
            return top, BUDGET, 0
        if top + K + 1 > cap:
            return top, GROW, 0
        top -= 1
        for k in range(width):
            cur[k] = stack[top, k]
        done += 1
        counters[NODES] += 1
        depth = cur[0]
        used = cur[1]
        bound = used if used > lower else lower
        if -bound <= incumbent:
            continue
        if depth == n:
            for c in range(used):
                for k in range(W):
                    x = cur[2 + c * W + k]
                    while x != 0:
                        v = k * 64 + ctz(x)
                        x &= ~_bit(v)
                        solution[v] = c
            return top, IMPROVED, -used
        v = order[depth]
        # a new class last in trial order (pushed first), only if it can still win
        if used < K:
            nb = used + 1
            if nb < lower:
                nb = lower
            if -nb > incumbent:
                for k in range(width):
                    stack[top, k] = cur[k]
                stack[top, 0] = depth + 1
                stack[top, 1] = used + 1
                stack[top, 2 + used * W + (v >> 6)] |= _bit(v)
                top += 1
        for c in range(used - 1, -1, -1):
            ok = True
            for k in range(W):
                if cur[2 + c * W + k] & conf[v, k]:
                    ok = False
                    break
            if ok:
                for k in range(width):
                    stack[top, k] = cur[k]
                stack[top, 0] = depth + 1
                stack[top, 2 + c * W + (v >> 6)] |= _bit(v)
                top += 1
    return top, EMPTY, 0
