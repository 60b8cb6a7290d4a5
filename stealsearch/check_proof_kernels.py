"""The compiled core of ``stealsearch check-proof``: the constraint database, unit
propagation and cutting-plane arithmetic over flat arrays (numba), for
:mod:`stealsearch.check_proof`, which parses and calls these.  Nothing here is shared
with the code that writes proofs.

A literal is a code ``2 v`` (x_v) or ``2 v + 1`` (~x_v); its negation is ``code ^ 1``.
A constraint (id ``cid``) is normalised, ``sum coef * literal >= degree`` with every
coefficient > 0 and each variable once, stored as a segment of ``lits``/``coefs`` and
a row of ``meta``.  Propagation has two indexes, both linked lists in arrays (an entry
is unlinked and reused once its constraint is found deleted):

* a *clause* (degree 1, two literals or more) watches its first two literals (the
  two-watched-literal scheme: an assignment never has to be undone in it);
* any other constraint is in the occurrence list of each of its literals, with its
  slack (sum of the coefficients of its literals not false, less its degree) kept in
  ``meta``: falsifying a literal takes its coefficient off, undoing puts it back, and a
  constraint propagates only once its slack is below its largest coefficient.

Units (clauses of one literal) are assigned first in every propagation; a constraint
that can never hold (coefficients summing below the degree) makes every propagation
conflict.  Unit propagation reaches a conflict or not whatever the order in which it
assigns, so the order of these lists does not matter.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# meta columns
START, LENGTH, DEGREE, ALIVE, KIND, SLACK, MAXCOEF = range(7)
META_COLUMNS = 7
# kinds
TRIVIAL, CLAUSE, GENERAL, UNIT, FALSE = range(5)
# scalars
POOL_TOP, WATCH_TOP, WATCH_FREE, OCC_TOP, OCC_FREE, N_FALSE, N_UNITS, N_GENERALS, \
    POOL_DEAD = range(9)
SCALARS = 9
#: |coefficient| and |degree| this checker computes with (int64, headroom for a sum)
COEF_LIMIT = 1 << 60
# results of :func:`evaluate`
EVAL_OK, EVAL_OVERFLOW = 0, 1


@njit(nogil=True, cache=True)
def lit_value(val, code):
    x = val[code >> 1]
    return -x if code & 1 else x


@njit(nogil=True, cache=True)
def _new_entry(ent, sc, top, free):
    e = sc[free]
    if e >= 0:
        sc[free] = ent[e, 1]
        return e
    e = sc[top]
    sc[top] += 1
    return e


@njit(nogil=True, cache=True)
def add_constraint(meta, lits, coefs, whead, went, ohead, oent, units, generals, sc,
                   cid, new_lits, new_coefs, degree):
    """Store constraint ``cid`` (normalised) and index it; the caller made room."""
    n = new_lits.shape[0]
    s = sc[POOL_TOP]
    total = 0
    biggest = 0
    for i in range(n):
        lits[s + i] = new_lits[i]
        coefs[s + i] = new_coefs[i]
        total += new_coefs[i]
        if new_coefs[i] > biggest:
            biggest = new_coefs[i]
    sc[POOL_TOP] = s + n
    meta[cid, START] = s
    meta[cid, LENGTH] = n
    meta[cid, DEGREE] = degree
    meta[cid, ALIVE] = 1
    meta[cid, SLACK] = total - degree
    meta[cid, MAXCOEF] = biggest
    if degree <= 0:
        meta[cid, KIND] = TRIVIAL
    elif total < degree:
        meta[cid, KIND] = FALSE
        sc[N_FALSE] += 1
    elif degree == 1 and n == 1:
        meta[cid, KIND] = UNIT
        units[sc[N_UNITS]] = cid
        sc[N_UNITS] += 1
    elif degree == 1:
        meta[cid, KIND] = CLAUSE
        for i in range(2):
            e = _new_entry(went, sc, WATCH_TOP, WATCH_FREE)
            went[e, 0] = cid
            went[e, 1] = whead[lits[s + i]]
            whead[lits[s + i]] = e
    else:
        meta[cid, KIND] = GENERAL
        generals[sc[N_GENERALS]] = cid
        sc[N_GENERALS] += 1
        for i in range(n):
            e = _new_entry(oent, sc, OCC_TOP, OCC_FREE)
            oent[e, 0] = cid
            oent[e, 1] = ohead[lits[s + i]]
            oent[e, 2] = coefs[s + i]
            ohead[lits[s + i]] = e


@njit(nogil=True, cache=True)
def delete_constraints(meta, sc, cids):
    """Delete the constraints ``cids`` (their index entries go when next visited)."""
    for cid in cids:
        if meta[cid, ALIVE]:
            meta[cid, ALIVE] = 0
            sc[POOL_DEAD] += meta[cid, LENGTH]
            if meta[cid, KIND] == FALSE:
                sc[N_FALSE] -= 1


@njit(nogil=True, cache=True)
def compact(meta, lits, coefs, units, generals, sc, next_id):
    """Reclaim the segments (and list slots) of deleted constraints."""
    top = 0
    for cid in range(1, next_id):
        if not meta[cid, ALIVE]:
            continue
        s, n = meta[cid, START], meta[cid, LENGTH]
        for i in range(n):
            lits[top + i] = lits[s + i]
            coefs[top + i] = coefs[s + i]
        meta[cid, START] = top
        top += n
    sc[POOL_TOP] = top
    sc[POOL_DEAD] = 0
    sc[N_UNITS] = _keep_live(meta, units, sc[N_UNITS])
    sc[N_GENERALS] = _keep_live(meta, generals, sc[N_GENERALS])


@njit(nogil=True, cache=True)
def _keep_live(meta, cids, count):
    """The live ids of ``cids[:count]`` moved to its front; how many."""
    k = 0
    for i in range(count):
        if meta[cids[i], ALIVE]:
            cids[k] = cids[i]
            k += 1
    return k


@njit(nogil=True, cache=True)
def _assign(val, trail, tlen, code):
    """Make the free literal ``code`` true; the new trail length."""
    val[code >> 1] = -1 if code & 1 else 1
    trail[tlen] = code
    return tlen + 1


@njit(nogil=True, cache=True)
def _assume(val, trail, tlen, code):
    """Make ``code`` true unless it is already: (the trail length, whether it is false)."""
    x = lit_value(val, code)
    if x == 0:
        return _assign(val, trail, tlen, code), False
    return tlen, x < 0


@njit(nogil=True, cache=True)
def _force(meta, lits, coefs, val, trail, tlen, cid):
    """Constraint ``cid`` has slack below its largest coefficient: make true every free
    literal whose coefficient exceeds the slack (a false one's coefficient is off the
    slack already, or will be when its turn in the trail comes)."""
    s, n, slack = meta[cid, START], meta[cid, LENGTH], meta[cid, SLACK]
    for i in range(s, s + n):
        if coefs[i] > slack and lit_value(val, lits[i]) == 0:
            tlen = _assign(val, trail, tlen, lits[i])
    return tlen


@njit(nogil=True, cache=True)
def _unlink(head, ent, sc, free, code, prev, e):
    """Take entry ``e`` (after ``prev``, -1: first) out of ``code``'s list, to the free
    list."""
    if prev < 0:
        head[code] = ent[e, 1]
    else:
        ent[prev, 1] = ent[e, 1]
    ent[e, 1] = sc[free]
    sc[free] = e


@njit(nogil=True, cache=True)
def _next_live(head, ent, meta, sc, free, code, prev, e):
    """From entry ``e`` of ``code``'s list (after ``prev``), the first whose constraint
    is live, or -1; the entries of deleted constraints on the way are unlinked."""
    while e >= 0 and not meta[ent[e, 0], ALIVE]:
        nxt = ent[e, 1]
        _unlink(head, ent, sc, free, code, prev, e)
        e = nxt
    return e


@njit(nogil=True, cache=True)
def propagate(meta, lits, coefs, whead, went, ohead, oent, units, generals, sc, val, trail,
              assume, extra_lits, extra_coefs, extra_degree):
    """Unit propagation over the database from the literals ``assume`` (and the
    constraint ``extra``, not stored: no literals and degree 0 for none).  True when
    it conflicts.  Every assignment and slack change is undone before it returns."""
    if sc[N_FALSE] > 0:
        return True
    nvars2 = whead.shape[0]
    extra = np.zeros(nvars2 if extra_lits.shape[0] else 0, np.int64)
    extra_slack = -extra_degree
    extra_max = 0
    for i in range(extra_lits.shape[0]):
        extra[extra_lits[i]] = extra_coefs[i]
        extra_slack += extra_coefs[i]
        extra_max = max(extra_max, extra_coefs[i])
    tlen = 0
    conflict = extra_slack < 0
    done = 0                      # trail entries whose occurrences were taken off
    if not conflict:
        for i in range(sc[N_GENERALS]):
            cid = generals[i]
            if meta[cid, ALIVE] and meta[cid, SLACK] < meta[cid, MAXCOEF]:
                tlen = _force(meta, lits, coefs, val, trail, tlen, cid)
        if extra_slack < extra_max:
            for i in range(extra_lits.shape[0]):
                if extra_coefs[i] > extra_slack and lit_value(val, extra_lits[i]) == 0:
                    tlen = _assign(val, trail, tlen, extra_lits[i])
        for code in assume:
            tlen, conflict = _assume(val, trail, tlen, code)
            if conflict:
                break
    if not conflict:
        for i in range(sc[N_UNITS]):
            if meta[units[i], ALIVE]:
                tlen, conflict = _assume(val, trail, tlen, lits[meta[units[i], START]])
                if conflict:
                    break
    head = 0
    while not conflict and head < tlen:
        false = trail[head] ^ 1
        head += 1
        # the other constraints with the literal: all of the list, so that undo can
        # put every coefficient back
        prev, e = -1, _next_live(ohead, oent, meta, sc, OCC_FREE, false, -1, ohead[false])
        while e >= 0:
            cid = oent[e, 0]
            meta[cid, SLACK] -= oent[e, 2]
            if not conflict:
                if meta[cid, SLACK] < 0:
                    conflict = True
                elif meta[cid, SLACK] < meta[cid, MAXCOEF]:
                    tlen = _force(meta, lits, coefs, val, trail, tlen, cid)
            prev, e = e, _next_live(ohead, oent, meta, sc, OCC_FREE, false, e, oent[e, 1])
        done = head
        if conflict:
            break
        if extra.shape[0] and extra[false]:
            extra_slack -= extra[false]
            if extra_slack < 0:
                conflict = True
                break
            if extra_slack < extra_max:
                for i in range(extra_lits.shape[0]):
                    if extra_coefs[i] > extra_slack and lit_value(val, extra_lits[i]) == 0:
                        tlen = _assign(val, trail, tlen, extra_lits[i])
        # the clauses watching it
        prev, e = -1, _next_live(whead, went, meta, sc, WATCH_FREE, false, -1, whead[false])
        while e >= 0:
            nxt = went[e, 1]
            cid = went[e, 0]
            s, n = meta[cid, START], meta[cid, LENGTH]
            if lits[s] == false:
                lits[s], lits[s + 1] = lits[s + 1], lits[s]
            other = lits[s]
            if lit_value(val, other) > 0:
                prev, e = e, _next_live(whead, went, meta, sc, WATCH_FREE, false, e, nxt)
                continue
            moved = False
            for k in range(s + 2, s + n):
                if lit_value(val, lits[k]) >= 0:
                    lits[s + 1], lits[k] = lits[k], lits[s + 1]
                    if prev < 0:                      # to the new literal's list
                        whead[false] = nxt
                    else:
                        went[prev, 1] = nxt
                    went[e, 1] = whead[lits[s + 1]]
                    whead[lits[s + 1]] = e
                    moved = True
                    break
            if moved:
                e = _next_live(whead, went, meta, sc, WATCH_FREE, false, prev, nxt)
                continue
            if lit_value(val, other) < 0:
                conflict = True
                break
            tlen = _assign(val, trail, tlen, other)
            prev, e = e, _next_live(whead, went, meta, sc, WATCH_FREE, false, e, nxt)
    # undo: the slack of every occurrence taken off, then the values
    for i in range(done):
        e = ohead[trail[i] ^ 1]
        while e >= 0:
            if meta[oent[e, 0], ALIVE]:
                meta[oent[e, 0], SLACK] += oent[e, 2]
            e = oent[e, 1]
    for i in range(tlen):
        val[trail[i] >> 1] = 0
    return conflict


@njit(nogil=True, cache=True)
def satisfied_by(meta, lits, coefs, val, next_id):
    """The first live constraint a full assignment ``val`` violates, or 0."""
    for cid in range(1, next_id):
        if not meta[cid, ALIVE]:
            continue
        s, n = meta[cid, START], meta[cid, LENGTH]
        got = 0
        for i in range(s, s + n):
            if lit_value(val, lits[i]) > 0:
                got += coefs[i]
        if got < meta[cid, DEGREE]:
            return cid
    return 0


@njit(nogil=True, cache=True)
def evaluate(meta, lits, coefs, program, depth, nvars, out_lits, out_coefs, out):
    """A cutting-planes derivation in reverse Polish notation: ``program`` rows
    ``(0, cid)`` push, ``(1, 0)`` add, ``(2, k)`` multiply, ``(3, k)`` divide
    (rounding up).  The result, normalised, goes to ``out_lits``/``out_coefs``; ``out``
    gets its length and degree.  Returns ``EVAL_OK`` or ``EVAL_OVERFLOW``.

    Rows are dense over the variables, ``sum c_v x_v >= d`` with c_v of any sign
    (``a ~x = a - a x``): adding needs no cancellation step."""
    rows = np.zeros((depth, nvars + 1), np.int64)
    degree = np.zeros(depth, np.int64)
    top = 0
    for p in range(program.shape[0]):
        op, arg = program[p, 0], program[p, 1]
        if op == 0:
            r = rows[top]
            r[:] = 0
            d = meta[arg, DEGREE]
            s, n = meta[arg, START], meta[arg, LENGTH]
            for i in range(s, s + n):
                code = lits[i]
                if code & 1:
                    r[code >> 1] -= coefs[i]
                    d -= coefs[i]
                else:
                    r[code >> 1] += coefs[i]
            degree[top] = d
            top += 1
        elif op == 1:
            top -= 1
            a, b = rows[top - 1], rows[top]
            for v in range(1, nvars + 1):
                a[v] += b[v]
                if abs(a[v]) > COEF_LIMIT:
                    return EVAL_OVERFLOW
            degree[top - 1] += degree[top]
            if abs(degree[top - 1]) > COEF_LIMIT:
                return EVAL_OVERFLOW
        elif op == 2:
            r = rows[top - 1]
            for v in range(1, nvars + 1):
                if abs(r[v]) > COEF_LIMIT // arg:
                    return EVAL_OVERFLOW
                r[v] *= arg
            if abs(degree[top - 1]) > COEF_LIMIT // arg:
                return EVAL_OVERFLOW
            degree[top - 1] *= arg
        else:
            # normalised degree D = d + sum of the negated coefficients; each divided
            # rounding up, then back
            r = rows[top - 1]
            big = degree[top - 1]
            for v in range(1, nvars + 1):
                if r[v] < 0:
                    big -= r[v]
            big = -((-big) // arg)
            for v in range(1, nvars + 1):
                if r[v] > 0:
                    r[v] = -((-r[v]) // arg)
                elif r[v] < 0:           # a = -r[v] becomes ceil(a / k)
                    r[v] = r[v] // arg
                    big += r[v]
            degree[top - 1] = big
    r = rows[0]
    d = degree[0]
    n = 0
    for v in range(1, nvars + 1):
        if r[v] > 0:
            out_lits[n] = 2 * v
            out_coefs[n] = r[v]
            n += 1
        elif r[v] < 0:
            out_lits[n] = 2 * v + 1
            out_coefs[n] = -r[v]
            d -= r[v]
            n += 1
    out[0] = n
    out[1] = d
    return EVAL_OK


# -- the parse of the two frequent lines (a fast path: a line it does not take, for
#    any reason, is parsed again by check_proof's own parser, which accepts or names
#    the fault; what this takes, that parser would take with the same meaning) -----
#: the bytes str.split() separates ASCII text at (``\x1c``-``\x1f`` too: those lines
#: go to the general parser)
_SPACE = np.zeros(256, np.bool_)
for _b in b" \t\n\r\x0b\x0c":
    _SPACE[_b] = True
#: the result of a parse this fast path leaves to the general parser
SLOW = -1


@njit(nogil=True, cache=True)
def _tokens(buf, space, starts, ends):
    """Split ``buf`` at whitespace: the number of tokens, or SLOW (a byte outside
    printable ASCII, or more tokens than room)."""
    n = 0
    i = 0
    size = buf.shape[0]
    while i < size:
        b = buf[i]
        if space[b]:
            i += 1
            continue
        if b < 33 or b > 126:
            return SLOW
        if n == starts.shape[0]:
            return SLOW
        starts[n] = i
        while i < size and not space[buf[i]]:
            if buf[i] < 33 or buf[i] > 126:
                return SLOW
            i += 1
        ends[n] = i
        n += 1
    return n


@njit(nogil=True, cache=True)
def _unsigned(buf, a, b):
    """The unsigned decimal ``buf[a:b]``, or -1 (not one, or at least 2^60)."""
    if b <= a or b - a > 18:
        return -1
    x = 0
    for i in range(a, b):
        c = buf[i] - 48
        if c < 0 or c > 9:
            return -1
        x = 10 * x + c
    return x


@njit(nogil=True, cache=True)
def parse_rpn(buf, space, starts, ends, meta, next_id, program):
    """A ``p`` line's arguments (``buf``): fills ``program`` (see :func:`evaluate`);
    returns (operations, stack depth), or (SLOW, 0)."""
    n = _tokens(buf, space, starts, ends)
    if n <= 0:
        return SLOW, 0
    last = n - 1                 # a trailing ';' or '0' ends the line
    if ends[last] - starts[last] == 1 and (buf[starts[last]] == 59 or buf[starts[last]] == 48):
        n -= 1
    if n == 0 or n > program.shape[0]:
        return SLOW, 0
    ops = height = depth = 0
    i = 0
    while i < n:
        a, b = starts[i], ends[i]
        one = b - a == 1
        if one and buf[a] == 43:                              # +
            if height < 2:
                return SLOW, 0
            program[ops, 0] = 1
            program[ops, 1] = 0
            height -= 1
        elif i + 1 < n and ends[i + 1] - starts[i + 1] == 1 and (
                buf[starts[i + 1]] == 42 or buf[starts[i + 1]] == 100):   # K * | K d
            k = _unsigned(buf, a, b)
            if k <= 0 or height == 0:
                return SLOW, 0
            program[ops, 0] = 2 if buf[starts[i + 1]] == 42 else 3
            program[ops, 1] = k
            i += 1
        else:
            cid = _unsigned(buf, a, b)
            if cid <= 0 or cid >= next_id or not meta[cid, ALIVE]:
                return SLOW, 0
            program[ops, 0] = 0
            program[ops, 1] = cid
            height += 1
            depth = max(depth, height)
        ops += 1
        i += 1
    if height != 1:
        return SLOW, 0
    return ops, depth


@njit(nogil=True, cache=True)
def parse_constraint(buf, space, starts, ends, nvars, pos, neg, touched, out_lits,
                     out_coefs):
    """A ``u`` line's arguments ``c1 l1 c2 l2 ... >= d ;``, normalised (positive
    coefficients, each variable once) into ``out_lits``/``out_coefs``: returns (terms,
    degree), or (SLOW, 0).  ``pos``/``neg``: zeros over the variables (left so)."""
    n = _tokens(buf, space, starts, ends)
    if n < 3 or n % 2 == 0:
        return SLOW, 0
    a = starts[n - 1]
    if ends[n - 1] - a != 1 or buf[a] != 59:
        return SLOW, 0
    a = starts[n - 3]
    if ends[n - 3] - a != 2 or buf[a] != 62 or buf[a + 1] != 61:
        return SLOW, 0
    a, b = starts[n - 2], ends[n - 2]
    sign = 1
    if b - a > 1 and (buf[a] == 45 or buf[a] == 43):
        sign = -1 if buf[a] == 45 else 1
        a += 1
    degree = _unsigned(buf, a, b)
    if degree < 0:
        return SLOW, 0
    degree *= sign
    m = 0
    bad = False
    for t in range(0, n - 3, 2):
        a, b = starts[t], ends[t]
        sign = 1
        if b - a > 1 and (buf[a] == 45 or buf[a] == 43):
            sign = -1 if buf[a] == 45 else 1
            a += 1
        coef = _unsigned(buf, a, b)
        a, b = starts[t + 1], ends[t + 1]
        negated = b - a > 1 and buf[a] == 126                 # ~
        if negated:
            a += 1
        if coef < 0 or b - a < 2 or buf[a] != 120 or buf[a + 1] == 48:   # x, no x0..
            bad = True
            break
        v = _unsigned(buf, a + 1, b)
        if v <= 0 or v > nvars:
            bad = True
            break
        coef *= sign
        if coef < 0:                  # a * l = a - a * ~l
            degree -= coef
            coef = -coef
            negated = not negated
        if coef == 0:
            continue
        if pos[v] == 0 and neg[v] == 0:
            touched[m] = v
            m += 1
        if negated:
            neg[v] += coef
        else:
            pos[v] += coef
        if pos[v] > COEF_LIMIT or neg[v] > COEF_LIMIT or abs(degree) > COEF_LIMIT:
            bad = True
            break
    k = 0
    for i in range(m):
        v = touched[i]
        p, q = pos[v], neg[v]
        pos[v] = 0
        neg[v] = 0
        if bad:
            continue
        if p and q:                    # a x + b ~x = (a - b) x + b
            degree -= min(p, q)
            p, q = p - min(p, q), q - min(p, q)
        if p:
            out_lits[k] = 2 * v
            out_coefs[k] = p
            k += 1
        elif q:
            out_lits[k] = 2 * v + 1
            out_coefs[k] = q
            k += 1
    if bad or abs(degree) > COEF_LIMIT:
        return SLOW, 0
    return k, degree
