"""Readers and writers for communication tables (seed 002, section 2: "table of communication").

Formats (chosen by ``fmt`` or by the file extension: ``.npy``, ``.csv``, ``.trace``/``.tr``/
``.events``; anything else is read as a CSV table):

* **CSV table** -- ``N`` rows of ``N`` numbers; separators ``,`` ``;`` tab or blanks; blank lines
  and lines starting with ``#`` are ignored.  An optional header row (any non-numeric cell, as
  in the paper's Table 1 whose header is ``No. 0 1 ... 7``) is skipped; when the header has
  ``N + 1`` cells the first column holds row labels and is skipped too.
* **NumPy** -- a 2-D numeric ``.npy`` array (``allow_pickle=False``).
* **Trace** of point-to-point events -- one event or one pair per line::

      # comment
      processes 8          (optional: N; default = largest id + 1)
      0 1                  (one message 0 -> 1)
      0 2 1266             (1266 messages, or bytes, 0 -> 2)

  Counts of repeated pairs are summed; ids are integers ``>= 0``; counts are finite, ``>= 0``.

Every problem raises :class:`~stealsearch.problems.commclust.model.CommTableError` naming the file and the
line (and column) at fault.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np

from stealsearch.engine.core.inputs import read_input_bytes, read_input_text, shown

from .model import CommTableError, validate_table

_SPLIT = re.compile(r"[,;\t ]+")
FORMATS = ("csv", "npy", "trace")


def detect_format(path: str) -> str:
    """Format from the extension (a ``.gz`` after it is looked through).

    >>> detect_format("t.npy"), detect_format("run.trace.gz"), detect_format("t.txt")
    ('npy', 'trace', 'csv')
    """
    path = path[:-3] if path.lower().endswith(".gz") else path
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        return "npy"
    if ext in (".trace", ".tr", ".events"):
        return "trace"
    return "csv"


def read_table(path: str, fmt: str | None = None) -> np.ndarray:
    """Read and validate a table from ``path`` (``float64``, ``N x N``)."""
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise CommTableError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "npy":
        return read_npy(path)
    text = read_input_text(path, CommTableError)
    if fmt == "trace":
        return parse_trace(text, source=path)
    return parse_csv_table(text, source=path)


def read_npy(path: str) -> np.ndarray:
    import io

    data = read_input_bytes(path, CommTableError)
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError, TypeError, MemoryError) as exc:
        raise CommTableError(f"{path}: not a readable .npy array ({exc.__class__.__name__})") from None
    return validate_table(arr, source=path)


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except (ValueError, OverflowError):
        return None


def parse_csv_table(text: str, source: str = "<csv>") -> np.ndarray:
    """Parse a CSV/whitespace table (see module docstring).

    >>> parse_csv_table("No. 0 1\\n0 0 5\\n1 7 0\\n").tolist()
    [[0.0, 5.0], [7.0, 0.0]]
    """
    rows: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        rows.append((lineno, [c for c in _SPLIT.split(s) if c != ""]))
    if not rows:
        raise CommTableError(f"{source}: empty table")
    header = None
    if any(_number(c) is None for c in rows[0][1]):
        header = rows.pop(0)
        if not rows:
            cell = next(c for c in header[1] if _number(c) is None)
            raise CommTableError(f"{source}: line {header[0]}: not a number: {shown(cell)} "
                                 "(and no rows after it, so it is no header either)")
    n_cells = len(rows[0][1])
    label_col = header is not None and len(header[1]) == n_cells and n_cells == len(rows) + 1
    values: list[list[float]] = []
    for lineno, cells in rows:
        if len(cells) != n_cells:
            raise CommTableError(f"{source}: line {lineno}: {len(cells)} values, expected {n_cells} "
                                 "(rows of different lengths)")
        if label_col:
            cells = cells[1:]
        row = []
        for col, cell in enumerate(cells):
            v = _number(cell)
            if v is None:
                raise CommTableError(f"{source}: line {lineno}, col {col}: not a number: {shown(cell)}")
            if math.isnan(v) or math.isinf(v):
                raise CommTableError(f"{source}: line {lineno}, col {col}: non-finite value {shown(cell)}")
            if v < 0:
                raise CommTableError(f"{source}: line {lineno}, col {col}: negative value {cell[:30]}")
            row.append(v)
        values.append(row)
    n_rows, n_cols = len(values), len(values[0])
    if n_rows != n_cols:
        raise CommTableError(f"{source}: table is not square ({n_rows} rows x {n_cols} columns)")
    return validate_table(np.array(values, dtype=np.float64), source=source)


def parse_trace(text: str, source: str = "<trace>") -> np.ndarray:
    """Parse a point-to-point trace into a table (counts of repeated pairs are summed).

    >>> parse_trace("processes 3\\n0 1\\n0 1 4\\n2 0 1.5\\n").tolist()
    [[0.0, 5.0, 0.0], [0.0, 0.0, 0.0], [1.5, 0.0, 0.0]]
    """
    declared = None
    src_ids: list[int] = []
    dst_ids: list[int] = []
    counts: list[float] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        cells = s.replace(",", " ").split()
        if not cells:
            raise CommTableError(f"{source}: line {lineno}: expected 'src dst [count]', got "
                                 f"{shown(s)}")
        if cells[0].lower() == "processes":
            if declared is not None or src_ids:
                raise CommTableError(f"{source}: line {lineno}: 'processes' must come once, "
                                     "before the events")
            if len(cells) != 2 or not cells[1].isdigit() or int(cells[1]) < 2:
                raise CommTableError(f"{source}: line {lineno}: expected 'processes N' with N >= 2")
            declared = int(cells[1])
            continue
        if len(cells) not in (2, 3):
            raise CommTableError(f"{source}: line {lineno}: expected 'src dst [count]', "
                                 f"got {len(cells)} fields")
        ids = []
        for col, cell in enumerate(cells[:2]):
            if not re.fullmatch(r"\d+", cell):
                raise CommTableError(f"{source}: line {lineno}, col {col}: process id must be an "
                                     f"integer >= 0, got {shown(cell)}")
            ids.append(int(cell))
        count = 1.0
        if len(cells) == 3:
            c = _number(cells[2])
            if c is None or math.isnan(c) or math.isinf(c):
                raise CommTableError(f"{source}: line {lineno}, col 2: bad count {shown(cells[2])}")
            if c < 0:
                raise CommTableError(f"{source}: line {lineno}, col 2: negative count {cells[2][:30]}")
            count = c
        if declared is not None and max(ids) >= declared:
            raise CommTableError(f"{source}: line {lineno}: process {max(ids)} >= processes {declared}")
        src_ids.append(ids[0])
        dst_ids.append(ids[1])
        counts.append(count)
    if not src_ids:
        raise CommTableError(f"{source}: no events")
    n = declared if declared is not None else max(max(src_ids), max(dst_ids)) + 1
    if n > 65536:
        raise CommTableError(f"{source}: {n} processes is too many (at most 65536)")
    table = np.zeros((n, n), dtype=np.float64)
    np.add.at(table, (np.array(src_ids), np.array(dst_ids)), np.array(counts))
    return validate_table(table, source=source)


def write_table_csv(table, path: str) -> None:
    """Write a table as CSV (integers written without a decimal point)."""
    t = np.asarray(table)
    integral = np.all(np.equal(np.mod(t, 1), 0))
    fmt = "%d" if integral else "%.17g"
    np.savetxt(path, t, fmt=fmt, delimiter=",")


def write_trace(table, path: str) -> None:
    """Write a table as a trace: ``processes N`` then one ``src dst count`` line per non-zero pair."""
    t = np.asarray(table)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"processes {t.shape[0]}\n")
        for i, j in zip(*np.nonzero(t)):
            v = float(t[i, j])
            fh.write(f"{i} {j} {int(v) if v.is_integer() else repr(v)}\n")
