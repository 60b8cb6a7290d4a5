"""Proof logging, the engine's side: a scaffold buffer on each stack, drained to a part
file after every chunk, and the parts of one search in a folder of their own.

A search that logs a proof (``solve(..., proof=PREFIX)``) runs the problem's
*proof kernel*: the same search as its kernel, which also appends one *record* per node
it expands to a buffer (the scaffold: what elaboration needs to justify that node, a
few words, never the proof itself).  The engine owns the buffer and its file; the
problem owns what a record means and how records become a proof:

``problem.proof_problem()``
    the problem as it searches when it logs a proof (itself, or one with a bound that
    is logged); raises an :class:`~stealsearch.engine.core.errors.InputError` where it
    cannot log one (a mode or a bound without proof steps).
``problem.proof_kernel``
    the kernel variant: the kernel's signature with two more data arrays at the end,
    ``records`` (``int64[capacity, proof_record_width]``) and ``fill`` (``int64[1]``,
    the rows used).  Before it pops a node it returns ``BUDGET`` when the buffer is
    full (so the stack is never empty then, as ``BUDGET`` promises), so no record is
    ever lost; the drain empties the buffer before the next call.
``problem.proof_record_width``
    words per record.
``problem.write_proof(prefix, result, parts)``
    after the search: the model ``PREFIX.opb`` and the proof ``PREFIX.pbp`` from the
    result and the parts' records (read with :func:`read_records`, a block at a time),
    or nothing where the result proves nothing; returns the figures for
    ``result.info["proof"]``.

Why a record is written when a node is *expanded*: it is the one moment a node's
justification (its bound, its children) exists in full, and a node that is never
expanded is either pruned by its parent's bound (the parent's steps cover it) or
still open (then the search did not finish and there is no proof to write).  The
drain runs between two kernel calls, in the thread that owns the stack: no lock, and
at most one buffer of records in memory per stack.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from .errors import InputError
from .inputs import check_output_path

#: bytes of one stack's scaffold buffer (records are drained when it is full)
BUFFER_BYTES = 8 << 20
#: at least this many records per buffer, whatever their width
MIN_BUFFER_RECORDS = 4096
#: records read from a part at a time (:func:`read_records`)
READ_BLOCK_RECORDS = 1 << 16


class ProofUnavailable(InputError):
    """A proof cannot be logged for this search: its problem, mode, bound or backend has
    no proof steps (yet)."""


def proof_paths(prefix) -> tuple[Path, Path]:
    """``(PREFIX.opb, PREFIX.pbp)``: the model and the proof."""
    prefix = os.fspath(prefix)
    return Path(prefix + ".opb"), Path(prefix + ".pbp")


def check_prefix(prefix) -> tuple[Path, Path]:
    """Refuse, before any search, a prefix whose two files cannot be written."""
    if not isinstance(prefix, (str, os.PathLike)) or not os.fspath(prefix):
        raise ProofUnavailable(f"a proof needs a file name prefix, got {prefix!r}")
    opb, pbp = proof_paths(prefix)
    check_output_path(opb, ProofUnavailable)
    check_output_path(pbp, ProofUnavailable)
    return opb, pbp


def proof_problem(problem):
    """The problem as it searches when it logs a proof; :class:`ProofUnavailable` if it
    logs none."""
    make = getattr(problem, "proof_problem", None)
    if make is None:
        raise ProofUnavailable(f"problem {problem.name!r} does not log proofs")
    logged = make()
    if getattr(logged, "proof_kernel", None) is None:
        raise ProofUnavailable(f"problem {problem.name!r} has no proof kernel for this search")
    return logged


class PartWriter:
    """One part of a scaffold: the records of one stack, appended to one file."""

    def __init__(self, path: Path, width: int):
        self.path = Path(path)
        self.width = int(width)
        self.records = 0
        self._fh = open(self.path, "ab")

    def write(self, records: np.ndarray) -> None:
        if len(records):
            records.tofile(self._fh)
            self.records += len(records)

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    @property
    def nbytes(self) -> int:
        return self.records * self.width * 8


class ScaffoldBuffer:
    """A stack's scaffold buffer and the part it drains into.  ``data`` is what the
    proof kernel takes after the problem's own data."""

    def __init__(self, part: PartWriter, capacity: int | None = None):
        width = part.width
        if capacity is None:
            capacity = max(MIN_BUFFER_RECORDS, BUFFER_BYTES // (8 * width))
        self.part = part
        self.records = np.zeros((int(capacity), width), dtype=np.int64)
        self.fill = np.zeros(1, dtype=np.int64)

    @property
    def data(self) -> tuple:
        return (self.records, self.fill)

    def drain(self) -> None:
        """Append the buffered records to the part and empty the buffer."""
        k = int(self.fill[0])
        if k:
            self.part.write(self.records[:k])
            self.fill[0] = 0


class ProofParts:
    """The parts of one search's scaffold: a folder beside the proof's prefix (so that
    the scaffold and the proof share a disk), removed by :meth:`cleanup`."""

    def __init__(self, prefix, width: int):
        opb, _ = proof_paths(prefix)
        parent = opb.parent if str(opb.parent) else Path(".")
        self.dir = Path(tempfile.mkdtemp(prefix=opb.name[:-4] + ".parts-", dir=parent))
        self.width = int(width)
        self.writers: list[PartWriter] = []

    def new_part(self, name: str) -> PartWriter:
        writer = PartWriter(self.dir / f"{name}.{len(self.writers)}.rec", self.width)
        self.writers.append(writer)
        return writer

    def close(self) -> None:
        for w in self.writers:
            w.close()

    def paths(self) -> list[Path]:
        """The parts written, in the order they were made."""
        return [w.path for w in self.writers]

    @property
    def records(self) -> int:
        return sum(w.records for w in self.writers)

    @property
    def nbytes(self) -> int:
        return sum(w.nbytes for w in self.writers)

    def scratch(self, name: str) -> Path:
        """A path in the parts' folder for the problem's own intermediate files."""
        return self.dir / name

    def cleanup(self) -> None:
        self.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def read_records(path, width: int, block: int = READ_BLOCK_RECORDS):
    """The records of one part, ``block`` at a time (``int64[k, width]`` arrays): a part
    is never read whole into memory."""
    size = os.path.getsize(path)
    if size % (8 * width):
        raise ValueError(f"{path}: {size} bytes is not a whole number of "
                         f"{width}-word records")
    total = size // (8 * width)
    with open(path, "rb") as fh:
        for start in range(0, total, block):
            k = min(block, total - start)
            yield np.fromfile(fh, dtype=np.int64, count=k * width).reshape(k, width)


def attach_scaffold(stack, part: PartWriter) -> ScaffoldBuffer:
    """Make ``stack`` (a :class:`~stealsearch.engine.core.stack.LocalStack`) run its
    problem's proof kernel, its records drained into ``part`` after every chunk."""
    problem = stack.problem
    buffer = ScaffoldBuffer(part)
    stack.kernel = problem.proof_kernel
    stack.data = tuple(stack.data) + buffer.data
    stack.scaffold = buffer
    return buffer


def finish_proof(problem, prefix, result, parts: ProofParts) -> dict:
    """After the search: the parts closed, the problem's model and proof written (or
    not, where the result proves nothing), the figures in ``result.info["proof"]``."""
    import time

    parts.close()
    t0 = time.perf_counter()
    info = dict(problem.write_proof(prefix, result, parts))
    info["proof_seconds"] = round(time.perf_counter() - t0, 6)
    result.info["proof"] = info
    return info
