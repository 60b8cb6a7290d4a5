"""Reading and writing graphs: DIMACS ``.clq``, whitespace edge lists, networkx.

DIMACS (the clique format of the Second DIMACS Challenge)::

    c any comment
    p edge N M          (or ``p col N M``; exactly one, before the first edge)
    e U V               (1-based vertex ids, 1 <= U, V <= N)

Validation (each failure is one :class:`CliqueInputError` naming ``file:line``):
a line of another kind, a missing, repeated, late or malformed ``p`` line, a
non-numeric or missing field, a vertex id outside 1..N, and an edge count that
matches M neither as lines nor as distinct edges.  What users' files often hold is
accepted with one :class:`~stealsearch.engine.core.errors.InputWarning` saying what was dropped:
duplicate edges (also ``u v`` next to ``v u``) and self-loops (``e 5 5``: a clique
never uses one).  Files are opened through :mod:`stealsearch.engine.core.inputs`, so ``.gz`` inputs
(``keller4.clq.gz``) are read transparently and a directory, binary data or a corrupt
gzip file is one clear line.  Vertex labels are the 1-based ids, so answers read like
the file.

Files may hold millions of edges: the fast path parses the whole buffer with
regular expressions and numpy (no Python loop per line); only when it detects a
problem does a line-by-line scan run, to name the first bad line.

>>> import io as _io, tempfile, os
>>> from pathlib import Path
>>> path = os.path.join(tempfile.mkdtemp(), "t.clq")
>>> _ = Path(path).write_text("c toy\\np edge 3 2\\ne 1 2\\ne 2 3\\n")
>>> g = read_dimacs(path)
>>> g.n, g.m, g.labels
(3, 2, [1, 2, 3])
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np

from stealsearch.engine.core.errors import InputWarning
from stealsearch.engine.core.inputs import read_input_bytes, shown

from .model import CliqueInputError, Graph

_P_LINE = re.compile(rb"(?m)^p[ \t]+(\S+)[ \t]+(\S+)[ \t]+(\S+)[ \t]*\r?$")
_ANY_P = re.compile(rb"(?m)^p")
_ANY_E = re.compile(rb"(?m)^e")
_E_LINE = re.compile(rb"(?m)^e[ \t]+(\d{1,18}[ \t]+\d{1,18})[ \t]*\r?$")
_OTHER = re.compile(rb"(?m)^(?![cpe]|[ \t]*\r?$)")
_FIRST_E = re.compile(rb"(?m)^e")


class _Bad(Exception):
    """The fast path saw a problem; the slow scan names it."""


def _read_bytes(path: str) -> bytes:
    """The file's bytes (gunzipped), or one clear error naming it."""
    data = read_input_bytes(path, CliqueInputError)
    if b"\x00" in data:
        raise CliqueInputError(f"{path}: binary data, not a graph file")
    return data


def _graph_name(path: str) -> str:
    name = Path(path).name
    if name.lower().endswith(".gz") and len(name) > 3:
        name = name[:-3]
    return Path(name).stem


#: The most vertices of a graph read from a file: above it the graph's bitset rows would
#: not fit in memory (n^2 / 8 bytes).  Generated graphs have a smaller limit, set by
#: search time (generators.MAX_GENERATED_VERTICES).
MAX_READ_VERTICES = 200_000


def _drop_loops_and_duplicates(path: str, edges: np.ndarray, labels=None) -> np.ndarray:
    """Edges without self-loops; one warning says what was dropped (loops, duplicates)."""
    if len(edges) == 0:
        return edges
    loops = edges[:, 0] == edges[:, 1]
    kept = edges[~loops]
    dup = len(kept) - _distinct_edges(kept)
    notes = []
    if loops.any():
        first = edges[np.flatnonzero(loops)[0], 0]
        first = labels[first] if labels is not None else first
        notes.append(f"dropped {int(loops.sum())} self-loop(s) (the first at vertex {first})")
    if dup:
        notes.append(f"merged {dup} duplicate edge(s)")
    if notes:
        warnings.warn(f"{path}: " + "; ".join(notes), InputWarning, stacklevel=3)
    return kept


def read_dimacs(path: str | os.PathLike) -> Graph:
    """Read a DIMACS ``.clq`` file (or ``.clq.gz``) into a :class:`Graph` (labels = 1-based ids)."""
    path = str(path)
    return _dimacs_from_bytes(path, _read_bytes(path))


def _dimacs_from_bytes(path: str, data: bytes) -> Graph:
    try:
        n, _, edges = _parse_dimacs_fast(data)
    except _Bad:
        _scan_dimacs(path, data)          # raises with file:line
        raise CliqueInputError(f"{path}: malformed DIMACS file") from None
    if n > MAX_READ_VERTICES:
        raise CliqueInputError(f"{path}: {n:,} vertices is more than this solver's "
                               f"{MAX_READ_VERTICES:,} (bitset rows of n^2/8 bytes)")
    edges = _drop_loops_and_duplicates(path, edges)
    return Graph.from_edges(n, edges - 1, labels=list(range(1, n + 1)), name=_graph_name(path))


def _parse_dimacs_fast(data: bytes):
    if _OTHER.search(data):
        raise _Bad
    ps = _ANY_P.findall(data)
    if len(ps) != 1:
        raise _Bad
    pm = _P_LINE.search(data)
    if pm is None or pm.group(1) not in (b"edge", b"col"):
        raise _Bad
    if not (pm.group(2).isdigit() and pm.group(3).isdigit()):
        raise _Bad
    n, m = int(pm.group(2)), int(pm.group(3))
    first_e = _FIRST_E.search(data)
    if first_e is not None and first_e.start() < pm.start():
        raise _Bad
    body = _E_LINE.findall(data)
    if len(body) != len(_ANY_E.findall(data)):
        raise _Bad
    if body:
        edges = np.array(b" ".join(body).split(), dtype=np.int64).reshape(-1, 2)
    else:
        edges = np.zeros((0, 2), dtype=np.int64)
    if len(edges) and (edges.min() < 1 or edges.max() > n):
        raise _Bad
    if not _count_matches(edges, m):
        raise _Bad
    return n, m, edges


def _count_matches(edges: np.ndarray, m: int) -> bool:
    """M of the 'p' line counts edge lines, or lines without self-loops, or distinct edges."""
    if len(edges) == m:
        return True
    proper = edges[edges[:, 0] != edges[:, 1]] if len(edges) else edges
    return len(proper) == m or _distinct_edges(proper) == m


def _distinct_edges(edges: np.ndarray) -> int:
    if len(edges) == 0:
        return 0
    lo = np.minimum(edges[:, 0], edges[:, 1])
    hi = np.maximum(edges[:, 0], edges[:, 1])
    return int(np.unique(lo * (int(hi.max()) + 1) + hi).size)


def _decimal(text: str) -> bool:
    """ASCII digits only: ``str.isdigit`` also accepts '³' and '①', which ``int`` refuses."""
    return text.isascii() and text.isdigit()


def _scan_dimacs(path: str, data: bytes) -> None:
    """Line-by-line check that raises the first problem as ``file:line: what``."""
    n = m = None
    p_line = None
    edges = []
    text = data.decode("utf-8", errors="replace")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        where = f"{path}:{lineno}"
        if not line or raw.startswith("c"):
            continue
        kind, *fields = line.split()
        if raw[0] not in "pe" or kind not in ("p", "e"):
            raise CliqueInputError(f"{where}: unknown line type {shown(kind, 20)} "
                                   "(expected 'c', 'p' or 'e')")
        if kind == "p":
            if p_line is not None:
                raise CliqueInputError(f"{where}: second 'p' line (first at line {p_line})")
            if len(fields) != 3 or fields[0] not in ("edge", "col"):
                raise CliqueInputError(f"{where}: expected 'p edge N M', got {shown(line, 60)}")
            if not (_decimal(fields[1]) and _decimal(fields[2])):
                raise CliqueInputError(f"{where}: N and M of the 'p' line must be "
                                       f"non-negative integers, got {shown(fields[1], 20)} "
                                       f"{shown(fields[2], 20)}")
            n, m, p_line = int(fields[1]), int(fields[2]), lineno
            continue
        if p_line is None:
            raise CliqueInputError(f"{where}: edge before the 'p edge N M' line")
        if len(fields) != 2:
            raise CliqueInputError(f"{where}: expected 'e U V', got {shown(line, 60)}")
        if not (_decimal(fields[0]) and _decimal(fields[1])) or max(map(len, fields)) > 18:
            raise CliqueInputError(f"{where}: vertex ids must be positive integers, "
                                   f"got {shown(fields[0], 20)} {shown(fields[1], 20)}")
        u, v = int(fields[0]), int(fields[1])
        for x in (u, v):
            if not 1 <= x <= n:
                raise CliqueInputError(f"{where}: vertex {x} outside 1..{n}")
        edges.append((u, v))
    if p_line is None:
        raise CliqueInputError(f"{path}: no 'p edge N M' line")
    e = np.array(edges, dtype=np.int64).reshape(-1, 2)
    if not _count_matches(e, m):
        raise CliqueInputError(f"{path}:{p_line}: 'p' line says {m} edges, the file has "
                               f"{len(e)} edge lines ({_distinct_edges(e)} distinct edges)")


def write_dimacs(graph: Graph, path: str | os.PathLike, comment: str | None = None) -> None:
    """Write ``graph`` as DIMACS (vertices 1..n in internal order, edges u < v).

    >>> import tempfile, os
    >>> from stealsearch.problems.clique.generators import seed_figure_1_1
    >>> p = os.path.join(tempfile.mkdtemp(), "f.clq")
    >>> write_dimacs(seed_figure_1_1(), p)
    >>> read_dimacs(p).m
    9
    """
    e = graph.edges() + 1
    with open(path, "w") as f:
        for line in (comment or graph.name).splitlines():
            f.write(f"c {line}\n")
        f.write(f"p edge {graph.n} {len(e)}\n")
        if len(e):
            np.savetxt(f, e, fmt="e %d %d")


_EL_LINE = re.compile(rb"(?m)^[ \t]*([^\s#%]\S*)[ \t]+(\S+)[ \t]*\r?$")
_EL_SKIP = re.compile(rb"(?m)^[ \t]*(?:[#%].*)?\r?$")


def read_edge_list(path: str | os.PathLike) -> Graph:
    """Read a whitespace edge list (or its ``.gz``): one ``u v`` per line, ``#`` or ``%``
    comments.

    Vertex labels are the tokens (as ints when every token is an integer); the graph
    has one vertex per distinct label, in sorted order.  Self-loops and duplicate
    edges are dropped with one warning.
    """
    path = str(path)
    return _edge_list_from_bytes(path, _read_bytes(path))


def _edge_list_from_bytes(path: str, data: bytes) -> Graph:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CliqueInputError(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from None
    pairs = _EL_LINE.findall(data)
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    skipped = len(_EL_SKIP.findall(data))
    if data.endswith(b"\n"):
        skipped -= 1   # the empty match after the final newline
    if len(pairs) + skipped != n_lines:
        _scan_edge_list(path, data)
    tokens = np.array([t for p in pairs for t in p]) if pairs else np.zeros(0, dtype="S1")
    as_int = bool(pairs) and bool(np.char.isdigit(np.char.lstrip(tokens, b"-")).all()) \
        and int(np.char.str_len(tokens).max()) <= 18
    if as_int:
        values = tokens.astype(np.int64)
    else:
        values = np.char.decode(tokens, "utf-8", errors="replace") if len(tokens) else tokens
    labels, inverse = np.unique(values, return_inverse=True)
    if len(labels) > MAX_READ_VERTICES:
        raise CliqueInputError(f"{path}: {len(labels):,} vertices is more than this solver's "
                               f"{MAX_READ_VERTICES:,} (bitset rows of n^2/8 bytes)")
    edges = inverse.reshape(-1, 2)
    label_list = [int(x) for x in labels] if as_int else [str(x) for x in labels]
    edges = _drop_loops_and_duplicates(path, edges, label_list)
    return Graph.from_edges(len(label_list), edges, labels=label_list, name=_graph_name(path))


def _scan_edge_list(path: str, data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#%":
            continue
        fields = line.split()
        if len(fields) != 2:
            raise CliqueInputError(f"{path}:{lineno}: expected 'U V' (two vertices), "
                                   f"got {shown(line, 60)}")
    raise CliqueInputError(f"{path}: malformed edge list")


def read_graph(path: str | os.PathLike, fmt: str | None = None) -> Graph:
    """Read a graph file: DIMACS for ``.clq``/``.col``/``.dimacs`` (or a file whose
    first non-comment line starts with ``p``), otherwise a whitespace edge list; each
    may be gzip-compressed (``.clq.gz``)."""
    path = str(path)
    if fmt not in (None, "dimacs", "edgelist"):
        raise CliqueInputError(f"unknown graph format {fmt!r}; expected dimacs or edgelist")
    data = _read_bytes(path)
    if fmt is None:
        name = path.lower()[:-3] if path.lower().endswith(".gz") else path.lower()
        if Path(name).suffix in (".clq", ".col", ".dimacs"):
            fmt = "dimacs"
        else:
            fmt = "edgelist"
            for raw in data.splitlines():
                s = raw.strip()
                if s and not s.startswith(b"c ") and s != b"c":
                    fmt = "dimacs" if s.startswith(b"p ") else "edgelist"
                    break
    if fmt == "dimacs":
        return _dimacs_from_bytes(path, data)
    return _edge_list_from_bytes(path, data)
