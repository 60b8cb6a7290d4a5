"""Synthetic communication tables shaped like the paper's benchmarks (seed 002, sections 2, 4).

* :func:`paper_table1` -- Table 1 of the paper (CG, 8 processes), transcribed.
* :func:`cg_like` -- the traffic pattern of NAS CG 2.0 as Table 1 shows it, for any power of 2.
  NAS CG puts the ``N`` processes on a grid of ``nprows x npcols`` (``npcols = nprows`` when
  ``log2 N`` is even, ``npcols = 2 nprows`` otherwise; process ``me = row * npcols + col``).
  The pattern (derived from Table 1, which it reproduces exactly for ``N = 8``):

  - row reductions: ``me`` sends ``heavy`` (1266) messages to ``me XOR 2**b`` for every bit
    ``b < log2 npcols`` ("four-neighbour blocks" for rows of 4: 0-1, 0-2, 1-3, 2-3);
  - the transpose exchange: ``transpose`` (416) messages to NAS CG's ``exch_proc``
    (itself for processes on the grid's diagonal, hence Table 1's diagonal entries);
  - column traffic: ``light`` (2) messages to ``me XOR npcols * 2**b``, ``b < log2 nprows``;
  - one extra message up a binomial reduction tree rooted at 0 (first along rows, then the
    row leaders along column 0): Table 1's 1267s and its single 3.

  For ``N = 16`` the rows are four blocks of 4 processes, for ``N = 32`` four blocks of 8 --
  the partitions the paper finds best (Table 3, Figure 3).
* :func:`is_like` -- IS (bucket sort): every process sends about the same to every process,
  itself included (the all-to-all exchange of key buckets).  ``self_ratio`` scales the diagonal.
* :func:`ep_like` -- EP (embarrassingly parallel): sparse traffic, zero diagonal: a random set of
  disjoint pairs that talk a lot plus a few light random messages.
* :func:`random_table` -- dense random tables (continuous values: no ties), for tests/benchmarks.

Every generator is deterministic given its ``seed``.
"""
from __future__ import annotations

import re

import numpy as np

from .model import CommTableError

#: Table 1 of the paper, transcribed row by row (T[i, j] = messages from i to j).
PAPER_TABLE_1 = (
    (416, 1266, 1266, 0, 2, 0, 0, 0),
    (1267, 416, 0, 1266, 0, 2, 0, 0),
    (1267, 0, 0, 1266, 416, 0, 2, 0),
    (0, 1266, 1267, 0, 0, 416, 0, 2),
    (3, 0, 416, 0, 0, 1266, 1266, 0),
    (0, 2, 0, 416, 1267, 0, 0, 1266),
    (0, 0, 2, 0, 1267, 0, 416, 1266),
    (0, 0, 0, 2, 0, 1266, 1267, 416),
)


def paper_table1() -> np.ndarray:
    """Table 1 of the paper as an ``int64`` array.

    >>> int(paper_table1()[0, 1] + paper_table1()[1, 0])
    2533
    """
    return np.array(PAPER_TABLE_1, dtype=np.int64)


def _log2_exact(n: int, what: str) -> int:
    if n < 2 or n & (n - 1):
        raise CommTableError(f"{what} needs N a power of 2 >= 2, got {n}")
    return n.bit_length() - 1


def cg_grid(n: int) -> tuple[int, int]:
    """NAS CG's process grid ``(nprows, npcols)`` for ``n`` processes.

    >>> cg_grid(8), cg_grid(16), cg_grid(32)
    ((2, 4), (4, 4), (4, 8))
    """
    log_n = _log2_exact(n, "cg_like")
    rows = 1 << (log_n // 2)
    return rows, n // rows


def cg_exchange_partner(me: int, nprows: int, npcols: int) -> int:
    """NAS CG's transpose partner ``exch_proc`` of process ``me``.

    >>> [cg_exchange_partner(me, 2, 4) for me in range(8)]
    [0, 1, 4, 5, 2, 3, 6, 7]
    """
    if npcols == nprows:
        return (me % nprows) * nprows + me // nprows
    half = me // 2
    return 2 * ((half % nprows) * nprows + half // nprows) + me % 2


def cg_like(n: int, heavy: int = 1266, transpose: int = 416, light: int = 2) -> np.ndarray:
    """A CG-like table for ``n`` processes (a power of 2); ``cg_like(8)`` is Table 1.

    >>> bool((cg_like(8) == paper_table1()).all())
    True
    """
    rows, cols = cg_grid(n)
    t = np.zeros((n, n), dtype=np.int64)
    col_bits = cols.bit_length() - 1
    row_bits = rows.bit_length() - 1
    for me in range(n):
        for b in range(col_bits):
            t[me, me ^ (1 << b)] += heavy
        t[me, cg_exchange_partner(me, rows, cols)] += transpose
        for b in range(row_bits):
            t[me, me ^ (cols << b)] += light
        row, col = divmod(me, cols)
        if col:
            t[me, row * cols + (col & (col - 1))] += 1     # binomial tree within the row
        elif row:
            t[me, (row & (row - 1)) * cols] += 1          # row leaders up column 0
    return t


def is_like(n: int, seed: int = 0, amount: float = 1000.0, noise: float = 0.02,
            self_ratio: float = 1.0, integer: bool = True) -> np.ndarray:
    """An IS-like (uniform all-to-all) table: every entry ``amount * (1 +- noise)``, diagonal
    scaled by ``self_ratio``.

    >>> t = is_like(16, seed=1)
    >>> bool(t.min() >= 980 and t.max() <= 1020)
    True
    """
    if n < 2:
        raise CommTableError(f"is_like needs N >= 2, got {n}")
    rng = np.random.default_rng(seed)
    t = amount * (1.0 + noise * rng.uniform(-1.0, 1.0, size=(n, n)))
    t[np.diag_indices(n)] *= self_ratio
    return np.rint(t).astype(np.int64) if integer else t


def ep_like(n: int, seed: int = 0, pair_fraction: float = 0.7, heavy: int = 40,
            light: int = 2, light_density: float = 0.1) -> np.ndarray:
    """An EP-like sparse table: disjoint random pairs exchange ``~heavy`` messages each way
    (a fraction ``pair_fraction`` of the processes are paired), a random ``light_density`` of
    the other entries carry ``1..light`` messages; zero diagonal.

    >>> t = ep_like(16, seed=3)
    >>> bool(np.trace(t) == 0 and (t > 0).mean() < 0.3)
    True
    """
    if n < 2:
        raise CommTableError(f"ep_like needs N >= 2, got {n}")
    rng = np.random.default_rng(seed)
    t = np.zeros((n, n), dtype=np.int64)
    mask = rng.random((n, n)) < light_density
    t[mask] = rng.integers(1, light + 1, size=int(mask.sum()))
    perm = rng.permutation(n)
    n_pairs = max(1, int(round(pair_fraction * n / 2)))
    for p in range(min(n_pairs, n // 2)):
        i, j = int(perm[2 * p]), int(perm[2 * p + 1])
        t[i, j] = heavy + int(rng.integers(0, heavy // 4 + 1))
        t[j, i] = heavy + int(rng.integers(0, heavy // 4 + 1))
    np.fill_diagonal(t, 0)
    return t


def random_table(n: int, seed: int = 0, density: float = 1.0) -> np.ndarray:
    """Random real-valued table (uniform on [0, 1000), a fraction ``density`` non-zero):
    with probability 1 it has no ties in eq. 1.

    >>> random_table(3, seed=0).shape
    (3, 3)
    """
    if n < 2:
        raise CommTableError(f"random_table needs N >= 2, got {n}")
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1000.0, size=(n, n))
    if density < 1.0:
        t[rng.random((n, n)) >= density] = 0.0
    t[0, 1] += 1.0   # never an all-zero off-diagonal
    return t


_EXAMPLE = re.compile(r"^(cg|is|ep|random)(\d+)$")


def example_table(name: str, seed: int = 0) -> np.ndarray:
    """A named example: ``cg8`` (= Table 1), ``cgN``, ``isN``, ``epN``, ``randomN``.

    >>> example_table("cg8").shape
    (8, 8)
    """
    m = _EXAMPLE.match(name.strip().lower())
    if not m:
        raise CommTableError(f"unknown example {name!r}; use cgN, isN, epN or randomN "
                             "(e.g. cg8 = the paper's Table 1, is16, ep32)")
    kind, n = m.group(1), int(m.group(2))
    if n > 16384:
        raise CommTableError(f"example {name!r}: N = {n} is too large (at most 16384)")
    if kind == "cg":
        return cg_like(n)
    if kind == "is":
        return is_like(n, seed=seed)
    if kind == "ep":
        return ep_like(n, seed=seed)
    return random_table(n, seed=seed)
