"""The UTS kernel: SHA-1 node states and child counts computed inside numba.

One node row is ``[height, h0, h1, h2, h3, h4]``: the height and the five 32-bit
words of the node's 20-byte SHA-1 state (big-endian, as UTS's ``brg_sha1`` writes
them).  A child's state is SHA1(parent state ‖ i as 4 big-endian bytes): 24 bytes,
one padded 64-byte block, so one SHA-1 compression per generated node.

All arithmetic is on int64 holding 32-bit values (masked), which avoids numba's
uint64/int64 promotion to float.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from stealsearch.engine.core.problem import BUDGET, EMPTY, GROW, N_ENGINE_COUNTERS, NODES, SOLUTIONS

M32 = 0xFFFFFFFF

# SHA-1 initial state and round constants as uint32 (the UTS kernel's fast path)
H0, H1, H2, H3, H4 = (np.uint32(0x67452301), np.uint32(0xEFCDAB89), np.uint32(0x98BADCFE),
                      np.uint32(0x10325476), np.uint32(0xC3D2E1F0))
K0, K1, K2, K3 = (np.uint32(0x5A827999), np.uint32(0x6ED9EBA1), np.uint32(0x8F1BBCDC),
                  np.uint32(0xCA62C1D6))

# tree types and geometric shapes (UTS 2.1 numbering)
BIN, GEO, HYBRID, BALANCED = 0, 1, 2, 3
LINEAR, EXPDEC, CYCLIC, FIXED = 0, 1, 2, 3
MAXNUMCHILDREN = 100

# layout of the float64 parameter vector handed to the kernel
P_TYPE, P_SHAPE, P_B0, P_GENMX, P_Q, P_M, P_SHIFT = range(7)
N_PARAMS = 7

# the problem's own counters, after the engine's
LEAVES = N_ENGINE_COUNTERS
MAXDEPTH = N_ENGINE_COUNTERS + 1


@njit(nogil=True, cache=True, inline="always")
def _rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & M32


@njit(nogil=True, cache=True)
def sha1_block(w, out):
    """SHA-1 of one already padded 64-byte block given as 16 words in ``w[:16]``
    (``w`` has room for 80); the five digest words go to ``out``."""
    for t in range(16, 80):
        w[t] = _rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)
    a = 0x67452301
    b = 0xEFCDAB89
    c = 0x98BADCFE
    d = 0x10325476
    e = 0xC3D2E1F0
    for t in range(20):
        tmp = (_rotl(a, 5) + ((b & c) | ((~b) & d)) + e + w[t] + 0x5A827999) & M32
        e = d
        d = c
        c = _rotl(b, 30)
        b = a
        a = tmp
    for t in range(20, 40):
        tmp = (_rotl(a, 5) + (b ^ c ^ d) + e + w[t] + 0x6ED9EBA1) & M32
        e = d
        d = c
        c = _rotl(b, 30)
        b = a
        a = tmp
    for t in range(40, 60):
        tmp = (_rotl(a, 5) + ((b & c) | (b & d) | (c & d)) + e + w[t] + 0x8F1BBCDC) & M32
        e = d
        d = c
        c = _rotl(b, 30)
        b = a
        a = tmp
    for t in range(60, 80):
        tmp = (_rotl(a, 5) + (b ^ c ^ d) + e + w[t] + 0xCA62C1D6) & M32
        e = d
        d = c
        c = _rotl(b, 30)
        b = a
        a = tmp
    out[0] = (0x67452301 + a) & M32
    out[1] = (0xEFCDAB89 + b) & M32
    out[2] = (0x98BADCFE + c) & M32
    out[3] = (0x10325476 + d) & M32
    out[4] = (0xC3D2E1F0 + e) & M32


@njit(nogil=True, cache=True)
def root_state(seed, out):
    """UTS rng_init: SHA1(16 zero bytes ‖ seed as 4 big-endian bytes)."""
    w = np.zeros(80, dtype=np.int64)
    w[4] = seed & M32
    w[5] = 0x80000000          # padding bit after 20 bytes
    w[15] = 160                # message length in bits
    sha1_block(w, out)


@njit(nogil=True, cache=True, inline="always")
def _geometric_children(height, r, p_vec):
    shape = int(p_vec[P_SHAPE])
    b0 = p_vec[P_B0]
    gen_mx = p_vec[P_GENMX]
    b_i = b0
    if height > 0:
        depth = float(height)
        if shape == EXPDEC:
            b_i = b0 * math.pow(depth, -math.log(b0) / math.log(gen_mx))
        elif shape == CYCLIC:
            if depth > 5 * gen_mx:
                b_i = 0.0
            else:
                b_i = math.pow(b0, math.sin(2.0 * 3.141592653589793 * depth / gen_mx))
        elif shape == FIXED:
            b_i = b0 if depth < gen_mx else 0.0
        else:  # LINEAR
            b_i = b0 * (1.0 - depth / gen_mx)
    p = 1.0 / (1.0 + b_i)
    u = r / 2147483648.0
    lp = math.log(1.0 - p)
    if lp == 0.0:              # b_i so large that 1 - p rounds to 1: all children allowed
        return 1000000000
    x = math.floor(math.log(1.0 - u) / lp)
    if not (x > 0.0):          # also catches NaN and -0.0
        return 0
    if x > 1e9:
        return 1000000000
    return int(x)


@njit(nogil=True, cache=True, inline="always")
def num_children(height, rand31, p_vec):
    """UTS uts_numChildren for a node of the given height and rng value."""
    tree = int(p_vec[P_TYPE])
    b0 = p_vec[P_B0]
    n = 0
    if tree == BIN:
        if height == 0:
            n = int(math.floor(b0))
        elif rand31 / 2147483648.0 < p_vec[P_Q]:
            n = int(p_vec[P_M])
    elif tree == GEO:
        n = _geometric_children(height, rand31, p_vec)
    elif tree == HYBRID:
        if height < p_vec[P_SHIFT] * p_vec[P_GENMX]:
            n = _geometric_children(height, rand31, p_vec)
        elif rand31 / 2147483648.0 < p_vec[P_Q]:
            n = int(p_vec[P_M])
    else:  # BALANCED
        if height < p_vec[P_GENMX]:
            n = int(b0)
    if height == 0 and tree == BIN:
        cap = int(math.ceil(b0))
        if n > cap:
            n = cap
    elif tree != BALANCED and n > MAXNUMCHILDREN:
        n = MAXNUMCHILDREN
    return n


@njit(nogil=True, cache=True, inline="always")
def _rotl32(x, n):
    """32-bit rotate on uint32 (the truncation lets LLVM emit one rotate)."""
    return np.uint32((x << np.uint32(n)) | (x >> np.uint32(32 - n)))


@njit(nogil=True, cache=True, inline="always")
def _expand32(w):
    """SHA-1 message schedule in place on uint32: w[16:80] from w[:16]."""
    for t in range(16, 80):
        w[t] = _rotl32(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)


@njit(nogil=True, cache=True)
def _child_index_schedule(itab, start, stop):
    """Rows ``start..stop-1`` of the child-index table: the SHA-1 schedule of the
    message whose only non-zero word is w[5] = i (the child index)."""
    for i in range(start, stop):
        for t in range(16):
            itab[i, t] = 0
        itab[i, 5] = i
        _expand32(itab[i])


def max_kids(p_vec) -> int:
    """The most children a node of this tree can have (the child-index table's rows - 1)."""
    if int(p_vec[P_TYPE]) in (BIN, BALANCED):
        return max(MAXNUMCHILDREN, int(math.ceil(p_vec[P_B0])))
    return MAXNUMCHILDREN


def scratch(p_vec) -> tuple:
    """The kernel's arrays after ``p_vec``, new on every call (one set per stack):
    ``itab``, the child-index table, complete (``max_kids + 1`` rows, read-only after
    this), and ``pw``, the per-parent schedule the kernel overwrites for every parent.

    Made once per stack rather than once per kernel call, so that no chunk allocates
    them or computes the table again; see the module docstring of
    :mod:`stealsearch.problems.uts.problem`."""
    itab = np.zeros((max_kids(p_vec) + 1, 80), dtype=np.uint32)
    _child_index_schedule(itab, 0, len(itab))
    return itab, np.zeros(80, dtype=np.uint32)


@njit(nogil=True, cache=True)
def uts_kernel(stack, top, budget, mode, incumbent, counters, solution, p_vec, itab, pw):
    """Advance the UTS depth-first traversal by at most ``budget`` nodes.

    Every expanded node is counted (``NODES`` and ``SOLUTIONS``: in UTS every node is
    what is enumerated), leaves and the largest height are tracked.

    SHA-1 per child, the work UTS measures, is split along what changes between
    siblings.  A child's message is parent state (w[0..4]) | i (w[5]) | padding
    (w[6], w[15]).  The message schedule is linear over GF(2) (XORs and rotations), so
    schedule(message) = schedule(parent part) XOR schedule(i part): the parent part is
    expanded once per parent (into ``pw``), the i part once per index into a table
    made with the stack (``itab``, :func:`scratch`), and a child's word t is one XOR.  Rounds 0-4 read
    only w[0..4], identical for all siblings, so they also run once per parent.  The
    remaining 75 rounds run on uint32 locals (each result truncated to 32 bits, so
    LLVM emits 32-bit adds and rotates as the C code does).  No allocation,
    per node or per call; the digests are bit-identical to UTS's BRG SHA-1 (tree sizes unchanged).
    """
    cap = stack.shape[0]
    # itab holds every index a node can have (scratch() sizes it by the tree's maximum),
    # so no check per parent; pw's words 5 and 7-14 stay zero, 0-4, 6, 15 are set below
    max_kids = itab.shape[0] - 1
    done = 0
    leaves = 0
    maxdepth = counters[MAXDEPTH]
    status = BUDGET
    while done < budget:
        if top == 0:
            status = EMPTY
            break
        if top + max_kids > cap:
            status = GROW
            break
        top -= 1
        height = stack[top, 0]
        h0 = stack[top, 1]
        h1 = stack[top, 2]
        h2 = stack[top, 3]
        h3 = stack[top, 4]
        h4 = stack[top, 5]
        done += 1
        if height > maxdepth:
            maxdepth = height
        n = num_children(height, h4 & 0x7FFFFFFF, p_vec)
        if n == 0:
            leaves += 1
            continue
        pw[0] = h0
        pw[1] = h1
        pw[2] = h2
        pw[3] = h3
        pw[4] = h4
        pw[6] = 0x80000000
        pw[15] = 192
        _expand32(pw)
        # rounds 0-4: shared by all siblings
        a = H0
        b = H1
        c = H2
        d = H3
        e = H4
        for t in range(5):
            tmp = np.uint32(_rotl32(a, 5) + ((b & c) | ((~b) & d)) + e + pw[t] + K0)
            e = d
            d = c
            c = _rotl32(b, 30)
            b = a
            a = tmp
        a5 = a
        b5 = b
        c5 = c
        d5 = d
        e5 = e
        hb = height + 1
        for i in range(n):
            wi = itab[i]
            a = a5
            b = b5
            c = c5
            d = d5
            e = e5
            for t in range(5, 20):
                tmp = np.uint32(_rotl32(a, 5) + ((b & c) | ((~b) & d)) + e + (pw[t] ^ wi[t]) + K0)
                e = d
                d = c
                c = _rotl32(b, 30)
                b = a
                a = tmp
            for t in range(20, 40):
                tmp = np.uint32(_rotl32(a, 5) + (b ^ c ^ d) + e + (pw[t] ^ wi[t]) + K1)
                e = d
                d = c
                c = _rotl32(b, 30)
                b = a
                a = tmp
            for t in range(40, 60):
                tmp = np.uint32(_rotl32(a, 5) + ((b & c) | (b & d) | (c & d)) + e
                                + (pw[t] ^ wi[t]) + K2)
                e = d
                d = c
                c = _rotl32(b, 30)
                b = a
                a = tmp
            for t in range(60, 80):
                tmp = np.uint32(_rotl32(a, 5) + (b ^ c ^ d) + e + (pw[t] ^ wi[t]) + K3)
                e = d
                d = c
                c = _rotl32(b, 30)
                b = a
                a = tmp
            row = top + i
            stack[row, 0] = hb
            stack[row, 1] = np.int64(np.uint32(H0 + a))
            stack[row, 2] = np.int64(np.uint32(H1 + b))
            stack[row, 3] = np.int64(np.uint32(H2 + c))
            stack[row, 4] = np.int64(np.uint32(H3 + d))
            stack[row, 5] = np.int64(np.uint32(H4 + e))
        top += n
    if status == BUDGET and top == 0:
        status = EMPTY
    counters[NODES] += done
    counters[SOLUTIONS] += done
    counters[LEAVES] += leaves
    counters[MAXDEPTH] = maxdepth
    return top, status, 0
