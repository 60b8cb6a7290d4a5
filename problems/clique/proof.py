"""Certified answers of the clique search: the canonical pseudo-Boolean model and a
VeriPB proof (format ``pseudo-Boolean proof version 1.2``) elaborated after the search
from the colour kernel's scaffold (:mod:`stealsearch.engine.core.proof`).

The model ``PREFIX.opb`` can be rebuilt by anyone from the graph alone: variables
``x1 .. xn`` are the vertices in the graph's own order (a DIMACS file's ids; for any
other graph the comment lines ``* vertex i label`` name them), the header
``* #variable= n #constraint= m``, in max mode the objective
``min: 1 ~x1 1 ~x2 ... 1 ~xn ;``, then ``1 ~xu 1 ~xv >= 1 ;`` for each non-adjacent pair
u < v in lexicographic order; in decide mode, no objective, and after the pairs
``1 x1 1 x2 ... 1 xn >= K ;``.  Either way the model's constraint m + 1 of the proof
(``obj``) says "a clique larger than B": the ``o`` line of the best clique (B its size)
adds ``sum x >= B + 1`` there in max mode, and it is the model's last constraint with
B = K - 1 in decide mode.

The proof: ``f``, the best clique as ``o`` (max mode), then for every node the search
expanded, deepest level first, the steps of :mod:`.kernels.elaborate` (the bound as a
``p`` line, the nogood as a ``u`` line), and ``c`` of the root's nogood ``>= 1``, the
contradiction.  Why a node's nogood follows by unit propagation: assume X true and E
false (E: the common neighbours of X that are neither in P nor in X).  The non-edges
set every other vertex outside P false.  A branching vertex v_i of the node (colour
above B - ℓ) was expanded, since its bound ℓ + colour exceeds every incumbent up to B,
and its own nogood ``~X + ~v_i + sum E_i >= 1`` has E_i = (E ∩ N(v_i)) ∪ {v_j in N(v_i)
: j > i}; from the last child down, each of them falsifies its vertex.  What is left
true or free lies in the first B - ℓ colour classes, and the ``p`` line (their
at-most-one constraints added to ``obj``) reads ``sum of the vertices outside those
classes >= B + 1 - (classes)``: only X is true there, ℓ < B + 1 - (B - ℓ), a conflict.
Children's nogoods are the only earlier steps a node needs, so the nodes of one level
are in any order, whoever expanded them; and a child pruned on its parent's stack
(bound <= the incumbent then, <= B) needs no step of its own: its vertex lies in the
parent's first B - ℓ classes.  A root pruned by its own bound (the root bound <= the
first incumbent) is one ``p`` line over the partition of that bound, a contradiction
by itself.  VeriPB levels keep the checker's database small: the bound is wiped after
its nogood, and level ℓ + 1's nogoods once level ℓ is done.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from stealsearch.engine.core.proof import (ProofUnavailable, proof_paths, read_block,
                                           record_blocks)

from .kernels.elaborate import (elaborate_colour, group_by_level, non_edge_lines,
                                non_edge_offsets, partition_bound)
from .model import Graph

HEADER = b"pseudo-Boolean proof version 1.2\n"
#: bytes of text a numba writer fills before Python writes it out
TEXT_BYTES = 8 << 20
#: records one elaborating thread takes at a time (the blocks of every part are dealt
#: over the threads)
ELABORATE_BLOCK = 1 << 14
#: elaborating threads (None: the usable cores; never more than the blocks)
ELABORATE_THREADS: int | None = None


def vertex_names(graph: Graph) -> list[str] | None:
    """The model's ``* vertex i label`` lines (without the ``* `` and newline), or None
    when vertex i is the graph's label i (a DIMACS file).  A label's line breaks and
    backslashes are escaped, so each stays one line."""
    labels = [graph.label(v) for v in range(graph.n)]
    if all(isinstance(lab, int) and lab == v + 1 for v, lab in enumerate(labels)):
        return None
    out = []
    for v, lab in enumerate(labels):
        text = str(lab).replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        out.append(f"vertex {v + 1} {text}")
    return out


def count_non_edges(graph: Graph) -> int:
    n = graph.n
    return n * (n - 1) // 2 - graph.m


def write_model(graph: Graph, path, k: int | None = None) -> int:
    """Write the canonical model (module docstring) of ``graph`` to ``path``: max mode,
    or decide mode for a clique of ``k`` vertices.  Returns its size in bytes."""
    n = graph.n
    m = count_non_edges(graph) + (0 if k is None else 1)
    rows = graph.rows.view(np.int64)
    with open(path, "wb") as fh:
        head = [f"* #variable= {n} #constraint= {m}"]
        head += [f"* {line}" for line in (vertex_names(graph) or ())]
        if k is None:
            head.append("min:" + "".join(f" 1 ~x{v}" for v in range(1, n + 1)) + " ;")
        fh.write(("\n".join(head) + "\n").encode())
        out = np.empty(max(TEXT_BYTES, (n + 1) * (2 * len(str(n + 1)) + 20)), np.uint8)
        u = 0
        while u < n:
            used, u = non_edge_lines(rows, n, u, out)
            fh.write(out[:used].tobytes())
        if k is not None:
            fh.write(("".join(f"1 x{v} " for v in range(1, n + 1)) + f">= {k} ;\n").encode())
        return fh.tell()


def clique_vertices(graph: Graph, solution) -> list[int]:
    """The graph's vertices (0-based) of a clique given as labels."""
    if graph.labels is None:
        return sorted(int(v) for v in solution)
    index = {lab: v for v, lab in enumerate(graph.labels)}
    return sorted(index[lab] for lab in solution)


def proven_best(problem, result) -> int | None:
    """B, the size no clique exceeds, where ``result`` proves it: a finished max search
    (its objective) or a decide search that found no clique of K (K - 1); else None."""
    if problem.clique_mode == "max" and result.status == "optimal":
        return int(result.objective)
    if problem.clique_mode == "decide" and result.status == "none":
        return problem.k - 1
    return None


def write_clique_proof(problem, prefix, result, parts) -> dict:
    """The model and the proof of a finished search (``problem.write_proof``; the
    engine's contract in :mod:`stealsearch.engine.core.proof`).  Nothing is written
    when the result proves nothing (an interrupted search, a decide search that found a
    clique: the clique itself, checked by the verifier, is that answer's certificate).
    Both files are written beside their final names and renamed into place at the end."""
    opb, pbp = proof_paths(prefix)
    info = {"bound": problem.bound, "records": parts.records, "scaffold_bytes": parts.nbytes}
    best = proven_best(problem, result)
    if best is None:
        why = ("a decide search that found a clique: the clique is its certificate"
               if result.status == "found" else
               f"the search did not finish (status {result.status}): no proof without a "
               "finished search")
        return dict(info, written=False, reason=why)
    t0 = time.perf_counter()
    graph = problem.graph
    tmp_opb = parts.scratch("model.opb")
    tmp_pbp = parts.scratch("proof.pbp")
    info["opb_bytes"] = write_model(graph, tmp_opb, problem.k if problem.clique_mode ==
                                    "decide" else None)
    m = count_non_edges(graph)
    obj_id = m + 1
    with open(tmp_pbp, "wb") as fh:
        fh.write(HEADER)
        fh.write(f"f {m + (1 if problem.clique_mode == 'decide' else 0)}\n".encode())
        lines = 2
        if problem.clique_mode == "max":
            chosen = set(clique_vertices(graph, result.solution))
            fh.write(("o" + "".join(f" x{v + 1}" if v in chosen else f" ~x{v + 1}"
                                    for v in range(graph.n)) + "\n").encode())
            lines += 1
        levels = _elaborate(problem, parts, best, obj_id)
        first_free = obj_id + 1
        if not levels.constraints_at:
            if parts.records:
                raise RuntimeError("a scaffold without its root: the search expanded nodes "
                                   "but not the root (a kernel bug)")
            claim, text, derived = _root_bound(problem, obj_id, first_free)
            fh.write(text)
            lines += text.count(b"\n")
        else:
            lines += levels.copy_into(fh)
            claim = first_free + levels.total_constraints - 1
        fh.write(f"c {claim}\n".encode())
        lines += 1
        info["pbp_bytes"] = fh.tell()
    os.replace(tmp_opb, opb)
    os.replace(tmp_pbp, pbp)
    info.update(written=True, opb=str(opb), pbp=str(pbp), pbp_lines=lines, best=best,
                levels=len(levels.constraints_at),
                elaboration_seconds=round(time.perf_counter() - t0, 6))
    return info


def _root_bound(problem, obj_id: int, first_free: int) -> tuple[int, bytes, int]:
    """A root the search never expanded (its bound, the partition of the root bound,
    was at most the first incumbent): that partition's ``p`` line, a contradiction.
    Returns (the id claimed, the text, constraints derived)."""
    graph = problem.graph
    n = graph.n
    rows = graph.rows.view(np.int64)
    offsets = non_edge_offsets(rows, n)
    classes = problem.colour_classes.astype(np.int64)
    sizes = np.bincount(classes, minlength=1).astype(np.int64)
    room = int((sizes * (sizes - 1) // 2 + 2 * sizes + 2).sum())
    out = np.empty(64 + room * (len(str(max(offsets[n], obj_id))) + 4), np.uint8)
    used, derived = partition_bound(classes, problem.order.astype(np.int64), rows, offsets,
                                    obj_id, out)
    return (first_free if derived else obj_id), out[:used].tobytes(), derived


class _Levels:
    """The elaborated steps: each elaborating thread writes one file per tree level of
    its own (no lock on a file); copied into the proof deepest level first, a level's
    files one after another (the nodes of one level may come in any order)."""

    def __init__(self, folder: Path, writers: int):
        self.folders = [Path(folder) / f"elaborated-{i}" for i in range(writers)]
        for path in self.folders:
            path.mkdir(exist_ok=True)
        self.constraints_at: dict[int, int] = {}
        self._lock = threading.Lock()

    def path(self, writer: int, level: int) -> Path:
        return self.folders[writer] / f"level-{level}.pbp"

    def append(self, writer: int, level: int, text: np.ndarray, constraints: int) -> None:
        with open(self.path(writer, level), "ab") as fh:
            fh.write(text.tobytes())
        with self._lock:
            self.constraints_at[level] = self.constraints_at.get(level, 0) + constraints

    @property
    def total_constraints(self) -> int:
        return sum(self.constraints_at.values())

    def copy_into(self, fh) -> int:
        """Level files deepest first; after level L, ``w L + 2`` wipes the nogoods of
        level L + 1 (at VeriPB level L + 2), which nothing needs any more.  Returns the
        lines written."""
        deepest = max(self.constraints_at)
        if set(self.constraints_at) != set(range(deepest + 1)):
            raise RuntimeError(f"a scaffold with nodes at levels {sorted(self.constraints_at)}: "
                               "a level between the root and the deepest is missing")
        lines = 0
        for level in range(deepest, -1, -1):
            for writer in range(len(self.folders)):
                try:
                    src = open(self.path(writer, level), "rb")
                except FileNotFoundError:       # this thread met no node of the level
                    continue
                with src:
                    while True:
                        chunk = src.read(TEXT_BYTES)
                        if not chunk:
                            break
                        fh.write(chunk)
                        lines += chunk.count(b"\n")
            if level < deepest:
                fh.write(f"w {level + 2}\n".encode())
                lines += 1
        return lines


def _elaborate(problem, parts, best: int, obj_id: int) -> _Levels:
    """Every record of every part elaborated (:func:`.kernels.elaborate.elaborate_colour`)
    into per-level files, a block of :data:`ELABORATE_BLOCK` records at a time (never
    the scaffold whole), the blocks dealt round-robin over :data:`ELABORATE_THREADS`
    threads (the kernels release the GIL).  A record's steps need nothing but the
    record and B, so any split gives the same steps, and a level's files may be
    concatenated in any order."""
    from stealsearch.engine.deploy.cores import usable_cores

    width = problem.proof_record_width
    blocks = [(path, start, count) for path in parts.paths()
              for start, count in record_blocks(path, width, ELABORATE_BLOCK)]
    writers = max(1, min(len(blocks), ELABORATE_THREADS or usable_cores()))
    levels = _Levels(parts.scratch(""), writers)
    n = problem.graph.n
    rows = problem.graph.rows.view(np.int64)
    shared = (problem.adj, problem.order.astype(np.int64), rows, non_edge_offsets(rows, n),
              best, obj_id, n + 2)          # (temp level: above every node's level + 1)
    if writers == 1:
        _elaborate_blocks(blocks, width, shared, levels, 0)
        return levels
    with ThreadPoolExecutor(writers, thread_name_prefix="elaborate") as pool:
        for done in [pool.submit(_elaborate_blocks, blocks[i::writers], width, shared,
                                 levels, i) for i in range(writers)]:
            done.result()
    return levels


def _elaborate_blocks(blocks, width: int, shared: tuple, levels: _Levels, writer: int) -> None:
    """One thread's blocks ``[(part, first record, records)]`` into its level files."""
    adj, order, rows, offsets, best, obj_id, temp_level = shared
    out = np.empty(TEXT_BYTES, np.uint8)
    dest = np.empty(TEXT_BYTES, np.uint8)
    for path, first, count in blocks:
        block = read_block(path, width, first, count)
        k = len(block)
        text_start = np.empty(k, np.int64)
        text_len = np.empty(k, np.int64)
        lev = np.empty(k, np.int64)
        cons = np.empty(k, np.int64)
        start = 0
        while start < k:
            done, need = elaborate_colour(block, start, adj, order, rows, offsets, best,
                                          obj_id, temp_level, out, text_start, text_len,
                                          lev, cons)
            if done < 0:
                raise RuntimeError(f"a scaffold record at level {block[start - 1 - done, 0]}"
                                   f" above the best clique {best} (a kernel bug)")
            if done == 0:
                out = np.empty(max(2 * len(out), need), np.uint8)
                dest = np.empty(len(out), np.uint8)
                continue
            top = int(lev[:done].max())
            bounds = np.empty(top + 2, np.int64)
            group_by_level(out, text_start, text_len, lev, done, top, dest, bounds)
            per_level = np.bincount(lev[:done], weights=cons[:done], minlength=top + 1)
            for level in np.flatnonzero(bounds[1:] > bounds[:-1]):
                levels.append(writer, int(level), dest[bounds[level]:bounds[level + 1]],
                              int(per_level[level]))
            start += done
