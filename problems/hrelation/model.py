"""The h-relation model of Sanders & Solis-Oba, "How helpers hasten h-relations" (seed 001, §1).

P processing elements (PEs) 0..P-1 on a complete network.  ``m[i, j] >= 0`` is the number
of packets PE i must send to PE j (the diagonal is zero).  The *load* of PE i is the number
of packets it sends plus the number it receives, ``sum_j m[i, j] + sum_j m[j, i]``; ``h`` is
the largest load, i.e. the maximum degree of the transfer multigraph in which the pair
{i, j} carries ``m[i, j] + m[j, i]`` parallel edges (§1).  ``h`` is the trivial lower bound
on the communication time (one packet per unit of time and PE).

Communication model (§1, "synchronized simplex"): time is cut into rounds; in a round every
PE talks to at most one other PE.  Packets may be cut into equal pieces (fifths for the
forwarding scheme of §3), so the schedules of :mod:`stealsearch.problems.hrelation.schedule` measure time
in *ticks* of 1/5 packet.

Files: a message matrix is read from CSV (rows of integers; ``#`` starts a comment line),
NumPy ``.npy`` (2-D integer or integral float array) or JSON (a list of rows, or an object
with a ``"messages"`` list of rows).  Anything else raises :class:`HRelationInputError`
naming the file and the offending row/column.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stealsearch.engine.core.errors import InputError

#: Largest packet count accepted per message (keeps every tick count inside int64).
MAX_PACKETS = 10**12


class HRelationInputError(InputError):
    """A message matrix that is not a valid h-relation (or a file that cannot be read)."""


@dataclass(frozen=True)
class HRelation:
    """A validated message matrix.

    >>> r = HRelation.from_matrix([[0, 2, 0], [0, 0, 1], [1, 0, 0]])
    >>> r.P, r.h, r.loads().tolist()
    (3, 3, [3, 3, 2])
    """

    messages: np.ndarray  # int64[P, P]

    @property
    def P(self) -> int:
        return int(self.messages.shape[0])

    @property
    def h(self) -> int:
        return int(self.loads().max()) if self.P else 0

    def loads(self) -> np.ndarray:
        """Packets sent plus packets received, per PE."""
        return self.messages.sum(axis=1) + self.messages.sum(axis=0)

    @property
    def total_packets(self) -> int:
        return int(self.messages.sum())

    @classmethod
    def from_matrix(cls, matrix, where: str = "matrix") -> "HRelation":
        return cls(validate_messages(matrix, where))


def validate_messages(matrix, where: str = "matrix") -> np.ndarray:
    """Check a message matrix and return it as a fresh ``int64`` array.

    Rules: square, at least 1 PE, finite non-negative integers below ``MAX_PACKETS``,
    zero diagonal.  The error names ``where`` and the first offending cell.

    >>> validate_messages([[0, 1], [2, 0]]).tolist()
    [[0, 1], [2, 0]]
    """
    try:
        arr = np.asarray(matrix)
    except Exception:  # ragged nested lists etc.
        raise HRelationInputError(f"{where}: rows have different lengths (not a matrix)") from None
    if arr.dtype == object:
        raise HRelationInputError(f"{where}: rows have different lengths or non-numeric entries")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise HRelationInputError(f"{where}: message matrix must be square, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise HRelationInputError(f"{where}: message matrix is empty (need at least 1 PE)")
    if arr.dtype.kind not in "iufb":
        raise HRelationInputError(f"{where}: entries must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i, j = map(int, np.argwhere(bad)[0])
            raise HRelationInputError(
                f"{where}: row {i}, col {j}: {arr[i, j]!r} is not an integer number of packets")
    neg = arr < 0
    if neg.any():
        i, j = map(int, np.argwhere(neg)[0])
        raise HRelationInputError(f"{where}: row {i}, col {j}: negative message length {arr[i, j]}")
    big = arr > MAX_PACKETS
    if big.any():
        i, j = map(int, np.argwhere(big)[0])
        raise HRelationInputError(
            f"{where}: row {i}, col {j}: message length {arr[i, j]} exceeds {MAX_PACKETS}")
    out = arr.astype(np.int64)
    diag = np.nonzero(np.diag(out))[0]
    if diag.size:
        i = int(diag[0])
        raise HRelationInputError(
            f"{where}: row {i}, col {i}: diagonal must be zero (a PE sends nothing to itself), got {out[i, i]}")
    return out


# ----------------------------------------------------------------------------- readers

def read_messages(path: str | Path) -> HRelation:
    """Read a message matrix from ``.csv``, ``.npy`` or ``.json`` (by suffix)."""
    from stealsearch.engine.core.inputs import read_input_bytes, read_input_text

    p = Path(path)
    name = p.name[:-3] if p.name.lower().endswith(".gz") else p.name
    suffix = Path(name).suffix.lower()
    if suffix == ".npy":
        import io

        try:
            arr = np.load(io.BytesIO(read_input_bytes(p, HRelationInputError)), allow_pickle=False)
        except HRelationInputError:
            raise
        except Exception as exc:
            raise HRelationInputError(f"{path}: not a readable .npy file ({exc.__class__.__name__})") from None
        return HRelation.from_matrix(arr, str(path))
    if suffix == ".json":
        try:
            data = json.loads(read_input_text(p, HRelationInputError))
        except json.JSONDecodeError as exc:
            raise HRelationInputError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise HRelationInputError(f"{path}: JSON nested too deeply") from None
        if isinstance(data, dict):
            if "messages" not in data:
                raise HRelationInputError(f"{path}: JSON object needs a 'messages' key (a list of rows)")
            data = data["messages"]
        if not isinstance(data, list) or not all(isinstance(r, list) for r in data):
            raise HRelationInputError(f"{path}: JSON 'messages' must be a list of rows")
        for i, row in enumerate(data):
            for j, v in enumerate(row):
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise HRelationInputError(f"{path}: row {i}, col {j}: {str(v)[:30]!r} is not a number")
        lengths = {len(r) for r in data}
        if len(lengths) > 1:
            i = next(k for k, r in enumerate(data) if len(r) != len(data[0]))
            raise HRelationInputError(
                f"{path}: row {i} has {len(data[i])} entries, row 0 has {len(data[0])}")
        return HRelation.from_matrix(np.array(data) if data else np.zeros((0, 0)), str(path))
    # CSV (default for .csv, .txt and anything else)
    rows = []
    text = read_input_text(p, HRelationInputError)
    for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or row[0].lstrip().startswith("#") or all(not c.strip() for c in row):
            continue
        vals = []
        for col, cell in enumerate(row):
            cell = cell.strip()
            try:
                vals.append(int(cell))
            except ValueError:
                raise HRelationInputError(
                    f"{path}: line {lineno}, col {col}: {cell[:30]!r} is not an integer") from None
        if rows and len(vals) != len(rows[0][1]):
            raise HRelationInputError(
                f"{path}: line {lineno}: {len(vals)} entries, expected {len(rows[0][1])}")
        big = next((c for c, v in enumerate(vals) if abs(v) >= 2 ** 62), None)
        if big is not None:     # would overflow int64 before the checks below name it
            raise HRelationInputError(f"{path}: line {lineno}, col {big}: message length "
                                      f"{str(vals[big])[:30]} is too large")
        rows.append((lineno, vals))
    if not rows:
        raise HRelationInputError(f"{path}: no rows")
    if len(rows) != len(rows[0][1]):
        raise HRelationInputError(
            f"{path}: message matrix must be square, got {len(rows)} rows of {len(rows[0][1])}")
    return HRelation.from_matrix(np.array([v for _, v in rows], dtype=np.int64), str(path))


def write_messages(relation: HRelation | np.ndarray, path: str | Path) -> None:
    """Write a message matrix; the format follows the suffix (.csv, .npy, .json)."""
    m = relation.messages if isinstance(relation, HRelation) else validate_messages(relation)
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".npy":
        np.save(p, m)
    elif suffix == ".json":
        p.write_text(json.dumps({"messages": m.tolist()}))
    else:
        p.write_text("\n".join(",".join(str(int(v)) for v in row) for row in m) + "\n")
