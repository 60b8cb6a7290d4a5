"""Reading and writing graphs: DIMACS ``.clq``, whitespace edge lists, networkx.

DIMACS (the clique format of the Second DIMACS Challenge)::

    c any comment
    p edge N M          (or ``p col N M``; exactly one, before the first edge)
    e U V               (1-based vertex ids, 1 <= U, V <= N)

Validation (each failure is one :class:`CliqueInputError` naming ``file:line``):
a line of another kind, a missing, repeated, late or malformed ``p`` line, a
non-numeric or missing field, a vertex id outside 1..N, a self-loop, and an edge
count that matches M neither as lines nor as distinct edges.  Duplicate edges (also
``u v`` next to ``v u``) are tolerated.  Vertex labels are the 1-based ids, so answers
read like the file.

Files may hold millions of edges: the fast path parses the whole buffer with
regular expressions and numpy (no Python loop per line); only when it detects a
problem does a line-by-line scan run, to name the first bad line.

>>> import io as _io, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "t.clq")
>>> _ = open(path, "w").write("c toy\\np edge 3 2\\ne 1 2\\ne 2 3\\n")
>>> g = read_dimacs(path)
>>> g.n, g.m, g.labels
(3, 2, [1, 2, 3])
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

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
    """The file's bytes, or one clear error naming it."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise CliqueInputError(f"{path}: no such file") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise CliqueInputError(f"{path}: cannot read ({exc.__class__.__name__})") from None


def read_dimacs(path: str | os.PathLike) -> Graph:
    """Read a DIMACS ``.clq`` file into a :class:`Graph` (labels = 1-based ids)."""
    path = str(path)
    data = _read_bytes(path)
    name = Path(path).stem
    try:
        n, m_declared, edges = _parse_dimacs_fast(data)
    except _Bad:
        _scan_dimacs(path, data)          # raises with file:line
        raise CliqueInputError(f"{path}: malformed DIMACS file") from None
    return Graph.from_edges(n, edges - 1, labels=list(range(1, n + 1)), name=name)


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
    if len(edges) and (edges.min() < 1 or edges.max() > n or (edges[:, 0] == edges[:, 1]).any()):
        raise _Bad
    if len(edges) != m and _distinct_edges(edges) != m:
        raise _Bad
    return n, m, edges


def _distinct_edges(edges: np.ndarray) -> int:
    if len(edges) == 0:
        return 0
    lo = np.minimum(edges[:, 0], edges[:, 1])
    hi = np.maximum(edges[:, 0], edges[:, 1])
    return int(np.unique(lo * (int(hi.max()) + 1) + hi).size)


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
            raise CliqueInputError(f"{where}: unknown line type {kind[:20]!r} "
                                   "(expected 'c', 'p' or 'e')")
        if kind == "p":
            if p_line is not None:
                raise CliqueInputError(f"{where}: second 'p' line (first at line {p_line})")
            if len(fields) != 3 or fields[0] not in ("edge", "col"):
                raise CliqueInputError(f"{where}: expected 'p edge N M', got {line[:60]!r}")
            if not (fields[1].isdigit() and fields[2].isdigit()):
                raise CliqueInputError(f"{where}: N and M of the 'p' line must be "
                                       f"non-negative integers, got {fields[1]!r} {fields[2]!r}")
            n, m, p_line = int(fields[1]), int(fields[2]), lineno
            continue
        if p_line is None:
            raise CliqueInputError(f"{where}: edge before the 'p edge N M' line")
        if len(fields) != 2:
            raise CliqueInputError(f"{where}: expected 'e U V', got {line[:60]!r}")
        if not (fields[0].isdigit() and fields[1].isdigit()) or max(map(len, fields)) > 18:
            raise CliqueInputError(f"{where}: vertex ids must be positive integers, "
                                   f"got {fields[0][:20]!r} {fields[1][:20]!r}")
        u, v = int(fields[0]), int(fields[1])
        for x in (u, v):
            if not 1 <= x <= n:
                raise CliqueInputError(f"{where}: vertex {x} outside 1..{n}")
        if u == v:
            raise CliqueInputError(f"{where}: self-loop at vertex {u}")
        edges.append((u, v))
    if p_line is None:
        raise CliqueInputError(f"{path}: no 'p edge N M' line")
    e = np.array(edges, dtype=np.int64).reshape(-1, 2)
    if len(e) != m and _distinct_edges(e) != m:
        raise CliqueInputError(f"{path}:{p_line}: 'p' line says {m} edges, the file has "
                               f"{len(e)} edge lines ({_distinct_edges(e)} distinct edges)")


def write_dimacs(graph: Graph, path: str | os.PathLike, comment: str | None = None) -> None:
    """Write ``graph`` as DIMACS (vertices 1..n in internal order, edges u < v).

    >>> import tempfile, os
    >>> from problems.clique.generators import seed_figure_1_1
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
    """Read a whitespace edge list: one ``u v`` per line, ``#`` or ``%`` comments.

    Vertex labels are the tokens (as ints when every token is an integer); the graph
    has one vertex per distinct label, in sorted order.
    """
    path = str(path)
    data = _read_bytes(path)
    pairs = _EL_LINE.findall(data)
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    skipped = len(_EL_SKIP.findall(data))
    if data.endswith(b"\n"):
        skipped -= 1   # the empty match after the final newline
    if len(pairs) + skipped != n_lines:
        _scan_edge_list(path, data)
    tokens = np.array([t for p in pairs for t in p]) if pairs else np.zeros(0, dtype="S1")
    as_int = bool(pairs) and bool(np.char.isdigit(np.char.lstrip(tokens, b"-")).all())
    if as_int:
        values = tokens.astype(np.int64)
    else:
        values = np.char.decode(tokens, "utf-8", errors="replace") if len(tokens) else tokens
    labels, inverse = np.unique(values, return_inverse=True)
    edges = inverse.reshape(-1, 2)
    loops = np.flatnonzero(edges[:, 0] == edges[:, 1]) if len(edges) else np.zeros(0, int)
    if loops.size:
        _scan_edge_list(path, data)
    label_list = [int(x) for x in labels] if as_int else [str(x) for x in labels]
    return Graph.from_edges(len(label_list), edges, labels=label_list, name=Path(path).stem)


def _scan_edge_list(path: str, data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#%":
            continue
        fields = line.split()
        if len(fields) != 2:
            raise CliqueInputError(f"{path}:{lineno}: expected 'U V' (two vertices), "
                                   f"got {line[:60]!r}")
        if fields[0] == fields[1]:
            raise CliqueInputError(f"{path}:{lineno}: self-loop at vertex {fields[0]!r}")
    raise CliqueInputError(f"{path}: malformed edge list")


def read_graph(path: str | os.PathLike, fmt: str | None = None) -> Graph:
    """Read a graph file: DIMACS for ``.clq``/``.col``/``.dimacs`` (or a file whose
    first non-comment line starts with ``p``), otherwise a whitespace edge list."""
    path = str(path)
    if fmt is None:
        suffix = Path(path).suffix.lower()
        if suffix in (".clq", ".col", ".dimacs"):
            fmt = "dimacs"
        else:
            fmt = "edgelist"
            try:
                with open(path, "rb") as f:
                    for raw in f:
                        s = raw.strip()
                        if s and not s.startswith(b"c ") and s != b"c":
                            fmt = "dimacs" if s.startswith(b"p ") else "edgelist"
                            break
            except OSError:
                pass
    if fmt == "dimacs":
        return read_dimacs(path)
    if fmt == "edgelist":
        return read_edge_list(path)
    raise CliqueInputError(f"unknown graph format {fmt!r}; expected dimacs or edgelist")
