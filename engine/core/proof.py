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

The engine keeps one part per stack and epoch (a lane's, or the sequential stack's:
:func:`open_part`), so a part's fate is its epoch's: the epoch's outcome names its
parts, a committed epoch's join the cut's list (``Cut.proof_parts``, kept across
checkpoints and resumes), a rolled-back epoch's are deleted (:func:`discard_parts`), and
the proof is made from the final cut's list alone.  Whichever stack expanded a node,
the elaboration merges every part (the argument is in
:class:`stealsearch.engine.core.worker.WorkerSearch`).

Why a record is written when a node is *expanded*: it is the one moment a node's
justification (its bound, its children) exists in full, and a node that is never
expanded is either pruned by its parent's bound (the parent's steps cover it) or
still open (then the search did not finish and there is no proof to write).  The
drain runs between two kernel calls, in the thread that owns the stack: no lock, and
at most one buffer of records in memory per stack.
"""
from __future__ import annotations

import hashlib
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
    """One part of a scaffold: the records of one stack, appended to one new file (a
    file of that name already there is refused, ``FileExistsError``: one writer per
    part, so no part ever holds another writer's records)."""

    def __init__(self, path: Path, width: int):
        self.path = Path(path)
        self.width = int(width)
        self.records = 0
        self._fh = open(self.path, "xb")

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

    def __init__(self, part: PartWriter | None, width: int, capacity: int | None = None):
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
            if self.part is None:
                raise RuntimeError("scaffold records with no part to drain them into")
            self.part.write(self.records[:k])
            self.fill[0] = 0


class ProofParts:
    """The parts of one search's scaffold: a folder beside the proof's prefix (so that
    the scaffold and the proof share a disk), removed by :meth:`cleanup`.

    Every epoch writes parts of its own into the folder (:func:`open_part`, named by
    :meth:`epoch_name`); which of them are the search's is the cut's business
    (:attr:`stealsearch.engine.core.epochs.Cut.proof_parts`): :meth:`keep` takes the
    final cut's list, which may also name parts in a checkpoint's folder (a resumed
    search), and only those are read for the proof."""

    def __init__(self, prefix, width: int):
        self.prefix = os.fspath(prefix)
        opb, _ = proof_paths(prefix)
        parent = opb.parent if str(opb.parent) else Path(".")
        self.dir = Path(tempfile.mkdtemp(prefix=opb.name[:-4] + ".parts-", dir=parent))
        self.width = int(width)
        #: the kept parts, ``[(path, records)]``, in the order they were committed
        self.kept: list[tuple[Path, int]] = []

    def epoch_name(self, search_id: str, epoch: int) -> tuple[str, str]:
        """``EpochSpec.proof`` of one epoch: (this folder, the part-name prefix)."""
        return str(self.dir), f"{search_id}.{epoch}"

    def keep(self, parts) -> None:
        """The parts the proof is made of: the final cut's ``proof_parts``."""
        self.kept = [(Path(path), int(records)) for path, records in parts]

    def paths(self) -> list[Path]:
        """The kept parts, in the order they were committed."""
        return [path for path, _ in self.kept]

    @property
    def records(self) -> int:
        return sum(records for _, records in self.kept)

    @property
    def nbytes(self) -> int:
        return self.records * self.width * 8

    def scratch(self, name: str) -> Path:
        """A path in the parts' folder for the problem's own intermediate files."""
        return self.dir / name

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def open_part(proof, rank: int, lane: int, width: int) -> PartWriter:
    """The part lane ``lane`` of worker ``rank`` writes in the epoch whose
    ``EpochSpec.proof`` is ``proof`` (folder, name prefix): ``PREFIX.RANK.LANE.rec``.
    One writer per part and one part per lane and epoch, so no two threads ever append
    to one file."""
    folder, name = proof
    return PartWriter(Path(folder) / f"{name}.{rank}.{lane}.rec", width)


def close_part(writer: PartWriter | None) -> tuple:
    """The epoch's end for one part: closed, and ``((path, records),)`` for the outcome,
    or ``()`` (and the empty file removed) when it holds no record."""
    if writer is None:
        return ()
    writer.close()
    if not writer.records:
        try:
            writer.path.unlink()
        except OSError:
            pass
        return ()
    return ((str(writer.path), writer.records),)


def discard_parts(parts) -> None:
    """Delete the parts of a rolled-back epoch (``[(path, records)]``): the nodes they
    record are expanded again from the old cut, and recorded again then."""
    for path, _ in parts:
        try:
            os.unlink(path)
        except OSError:
            pass


def part_sha256(path) -> str:
    """SHA-256 of a part, read a block at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(1 << 20)
            if not block:
                return h.hexdigest()
            h.update(block)


def record_blocks(path, width: int, block: int = READ_BLOCK_RECORDS) -> list[tuple[int, int]]:
    """``[(first record, records), ...]``: one part cut into blocks of at most ``block``
    records (:func:`read_block` reads one)."""
    size = os.path.getsize(path)
    if size % (8 * width):
        raise ValueError(f"{path}: {size} bytes is not a whole number of "
                         f"{width}-word records")
    total = size // (8 * width)
    return [(start, min(block, total - start)) for start in range(0, total, block)]


def read_block(path, width: int, start: int, count: int) -> np.ndarray:
    """Records ``start .. start + count - 1`` of one part (``int64[count, width]``)."""
    return np.fromfile(path, dtype=np.int64, count=count * width,
                       offset=start * width * 8).reshape(count, width)


def read_records(path, width: int, block: int = READ_BLOCK_RECORDS):
    """The records of one part, ``block`` at a time (``int64[k, width]`` arrays): a part
    is never read whole into memory."""
    for start, count in record_blocks(path, width, block):
        yield read_block(path, width, start, count)


def attach_scaffold(stack, part: PartWriter | None = None) -> ScaffoldBuffer:
    """Make ``stack`` (a :class:`~stealsearch.engine.core.stack.LocalStack`) run its
    problem's proof kernel, its records drained into ``part`` after every chunk
    (``buffer.part``: set it before a chunk that expands nodes; a budget of 0, which
    loads the kernel, records nothing)."""
    problem = stack.problem
    buffer = ScaffoldBuffer(part, int(problem.proof_record_width))
    stack.kernel = problem.proof_kernel
    stack.data = tuple(stack.data) + buffer.data
    stack.scaffold = buffer
    return buffer


def finish_proof(problem, result, parts: ProofParts, kept) -> dict:
    """After the search: ``kept`` (the final cut's parts) are the proof's records, the
    problem's model and proof written (or not, where the result proves nothing), the
    figures in ``result.info["proof"]``."""
    import time

    parts.keep(kept)
    t0 = time.perf_counter()
    info = dict(problem.write_proof(parts.prefix, result, parts))
    info["proof_seconds"] = round(time.perf_counter() - t0, 6)
    result.info["proof"] = info
    return info
