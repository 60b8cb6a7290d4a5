"""A fast-tier node row: named fields at constant word offsets, and the helpers
per-node functions use on rows.

:func:`RowLayout` names the fields of a node row (``int64`` words; a bitset field as
:class:`Bits`); numba code reads ``ROW.<field>`` as a constant.  The helpers are
``@njit(inline="always")``: inlined into the generated driver (a call to an ordinary
jitted function would count references on every array it is given), and allocation-free.

>>> import numpy as np
>>> ROW = RowLayout("depth", "count")
>>> ROW.depth, ROW.count, ROW.width()
(0, 1, 2)
>>> ROW.encode(depth=3, count=7)
array([3, 7])
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .problem import ContractError


class Bits:
    """A bitset field of ``n`` bits (``n`` an int, or the name of an instance size)."""

    def __init__(self, n):
        self.n = n

    def words(self, n: int) -> int:
        return (int(n) + 63) // 64

    def __repr__(self):
        return f"Bits({self.n!r})"


def RowLayout(*names: str, **sized):
    """Named fields of a node row -> their word offsets, as a namedtuple that numba code
    reads as constants (``row[ROW.weight]``).

    ``names``: one ``int64`` word each.  ``sized``: ``name=k`` (``k`` words),
    ``name=Bits(k)`` (a bitset of ``k`` bits), where ``k`` may be the *name* of an instance
    size (``Bits("n")``, ``"n"``): only the last field may be sized so, so every offset
    stays a constant.  ``ROW.width(n=...)`` is the row width of an instance;
    ``ROW.encode(width, **values)`` and ``ROW.decode(row)`` convert to and from Python
    (a Bits field as the sorted list of its members).

    >>> ROW = RowLayout("i", "weight", taken=Bits("n"))
    >>> ROW.taken, ROW.width(n=100)
    (2, 4)
    >>> row = ROW.encode(4, i=2, taken=[0, 65])
    >>> ROW.decode(row)
    {'i': 2, 'weight': 0, 'taken': [0, 65]}
    """
    fields = [(n, 1) for n in names] + list(sized.items())
    if not fields:
        raise ContractError("a RowLayout needs at least one field")
    offsets, at, variable = [], 0, None
    for name, size in fields:
        if variable is not None:
            raise ContractError(f"RowLayout: field {variable!r} has an instance-dependent size, "
                                f"so it must be the last field ({name!r} follows it)")
        offsets.append(at)
        n = size.n if isinstance(size, Bits) else size
        if isinstance(n, str):
            variable = name
        elif isinstance(n, (int, np.integer)) and n >= 0:
            at += size.words(n) if isinstance(size, Bits) else int(n)
        else:
            raise ContractError(f"RowLayout: size of {name!r} must be an int or a name, got {size!r}")
    base = namedtuple("RowLayout", [n for n, _ in fields])
    cls = type("RowLayout", (_LayoutMixin, base),
               {"__slots__": (), "_sizes": dict(fields), "_fixed": at, "_variable": variable})
    return cls(*offsets)


class _LayoutMixin:
    __slots__ = ()

    def width(self, **sizes) -> int:
        """The row width; give the instance size of the last field if it has one."""
        if self._variable is None:
            return self._fixed
        size = self._sizes[self._variable]
        key = size.n if isinstance(size, Bits) else size
        if key not in sizes:
            raise ContractError(f"RowLayout.width needs {key}=... (the size of {self._variable!r})")
        n = int(sizes[key])
        return self._fixed + (size.words(n) if isinstance(size, Bits) else n)

    def _span(self, name, width):
        start = getattr(self, name)
        i = self._fields.index(name)
        end = getattr(self, self._fields[i + 1]) if i + 1 < len(self._fields) else width
        return start, end

    def encode(self, width: int | None = None, **values) -> np.ndarray:
        """A row with the given fields set (others 0)."""
        width = self.width() if width is None else int(width)
        row = np.zeros(width, dtype=np.int64)
        for name, v in values.items():
            if name not in self._fields:
                raise ContractError(f"RowLayout has no field {name!r}")
            start, end = self._span(name, width)
            if isinstance(self._sizes[name], Bits):
                for b in v:
                    b = int(b)
                    if not 0 <= b < 64 * (end - start):
                        raise ContractError(f"bit {b} does not fit field {name!r}")
                    row[start + b // 64] |= np.int64(1) << np.int64(b % 64)
            elif end - start == 1 and np.ndim(v) == 0:
                row[start] = int(v)
            else:
                row[start:end] = np.asarray(v, dtype=np.int64)
        return row

    def decode(self, row) -> dict:
        """The fields of ``row`` as Python values."""
        out = {}
        for name in self._fields:
            start, end = self._span(name, len(row))
            if isinstance(self._sizes[name], Bits):
                out[name] = [64 * (w - start) + b for w in range(start, end)
                             for b in range(64) if (int(row[w]) >> b) & 1]
            elif self._sizes[name] == 1:
                out[name] = int(row[start])
            else:
                out[name] = [int(x) for x in row[start:end]]
        return out


# Helpers for per-node functions.  They are inlined into the driver (a call to an
# ordinary jitted function would count references on every array it is given).
@njit(inline="always")
def has_bit(row, at, i):
    """Whether bit ``i`` of the bitset starting at word ``at`` is set."""
    return (row[at + (i >> 6)] >> (i & 63)) & 1 != 0


@njit(inline="always")
def set_bit(row, at, i):
    row[at + (i >> 6)] |= np.int64(1) << (i & 63)


@njit(inline="always")
def clear_bit(row, at, i):
    row[at + (i >> 6)] &= ~(np.int64(1) << (i & 63))


@njit(inline="always")
def copy_row(dst, src):
    """``dst[:] = src`` without an allocation (see "No allocation" in the module doc)."""
    for j in range(src.shape[0]):
        dst[j] = src[j]
