"""Schedules as plain data (seed 001, §1 model; §3 pieces of 1/5 packet).

A schedule is a sequence of rounds.  Round r has a length ``lengths[r]`` in *ticks*; one
packet is ``unit`` ticks (always 5 here, so the forwarding scheme's fifths are whole ticks).
Each transfer is one row ``(round, msg_src, msg_dst, frm, to, amount)``: ``amount`` ticks of
the message ``msg_src -> msg_dst`` travel from PE ``frm`` to PE ``to`` during the round.
``frm == msg_src`` and ``to == msg_dst`` is a direct delivery; anything else is a hop through
a helper (forwarding).

Choices where the paper leaves room:

* A round is a set of *links*: every PE talks to at most one partner during the round
  (simplex model, §1).  A link may carry data both ways (an "exchange" in §5.2's regular
  schedule, "PE j exchanges its data with PE (i-j) mod P"), the amounts over the link summing
  to at most the round length (half duplex: the two directions take turns).
* Pieces of one message are interchangeable, so a transfer names an amount of a message
  rather than numbered packets; this keeps the size of a schedule independent of the message
  lengths (needed by the strongly polynomial variant of §4).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: Ticks per packet: the forwarding scheme cuts packets into 5 pieces (§3).
UNIT = 5

#: Column names of ``Schedule.transfers``.
COLUMNS = ("round", "msg_src", "msg_dst", "frm", "to", "amount")


@dataclass
class Schedule:
    """Rounds and transfers; see the module docstring.

    >>> b = ScheduleBuilder(P=2)
    >>> r = b.new_round(UNIT)
    >>> b.add(r, 0, 1, 0, 1, UNIT)
    >>> s = b.build("example")
    >>> s.length, s.num_rounds, s.transfers.shape
    (1.0, 1, (1, 6))
    """

    P: int
    lengths: np.ndarray          # int64[R], ticks
    transfers: np.ndarray        # int64[T, 6], see COLUMNS
    algorithm: str = ""
    unit: int = UNIT
    info: dict = field(default_factory=dict)

    @property
    def num_rounds(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def ticks(self) -> int:
        return int(self.lengths.sum())

    @property
    def length(self) -> float:
        """Total communication time in packet times."""
        return self.ticks / self.unit

    def rounds(self):
        """Yield ``(length_ticks, transfers_of_round)`` per round (transfers as an int64[k, 6])."""
        t = self.transfers
        bounds = np.searchsorted(t[:, 0], np.arange(self.num_rounds + 1)) if len(t) else None
        for r in range(self.num_rounds):
            rows = t[bounds[r]:bounds[r + 1]] if bounds is not None else t[:0]
            yield int(self.lengths[r]), rows

    def to_json_obj(self) -> dict:
        rounds = []
        for length, rows in self.rounds():
            rounds.append({"length": length,
                           "transfers": [[int(x) for x in row[1:]] for row in rows]})
        return {"P": self.P, "unit": self.unit, "algorithm": self.algorithm,
                "length": self.length, "transfer_columns": list(COLUMNS[1:]),
                "rounds": rounds, "info": self.info}

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json_obj()))

    @classmethod
    def from_json_obj(cls, obj: dict) -> "Schedule":
        lengths, rows = [], []
        for r, rd in enumerate(obj["rounds"]):
            lengths.append(int(rd["length"]))
            for t in rd["transfers"]:
                rows.append([r, *map(int, t)])
        return cls(P=int(obj["P"]), lengths=np.array(lengths, dtype=np.int64),
                   transfers=np.array(rows, dtype=np.int64).reshape(-1, 6),
                   algorithm=obj.get("algorithm", ""), unit=int(obj.get("unit", UNIT)),
                   info=dict(obj.get("info", {})))


class ScheduleBuilder:
    """Collects rounds and transfers; ``build`` drops rounds without transfers.

    Rounds are allocated in blocks (``new_rounds``) so that the components of one
    2-relation, scheduled independently, share the same rounds.
    """

    def __init__(self, P: int):
        self.P = P
        self._lengths: list[int] = []
        self._rows: list[tuple] = []
        self._blocks: list[np.ndarray] = []

    def new_round(self, length: int) -> int:
        self._lengths.append(int(length))
        return len(self._lengths) - 1

    def new_rounds(self, count: int, length: int) -> int:
        """Allocate ``count`` rounds of equal length; return the first index."""
        first = len(self._lengths)
        self._lengths.extend([int(length)] * count)
        return first

    def add(self, r: int, msg_src: int, msg_dst: int, frm: int, to: int, amount: int) -> None:
        self._rows.append((r, msg_src, msg_dst, frm, to, amount))

    def add_block(self, rows: np.ndarray) -> None:
        """Add many transfers at once (an int64[k, 6] array with absolute round indices)."""
        self._blocks.append(np.asarray(rows, dtype=np.int64).reshape(-1, 6))

    def extend(self, other: Schedule) -> None:
        """Append all rounds of ``other`` (same unit) after the current ones."""
        if other.unit != UNIT:
            raise ValueError("schedules with different units cannot be concatenated")
        off = len(self._lengths)
        self._lengths.extend(int(x) for x in other.lengths)
        if len(other.transfers):
            rows = other.transfers.copy()
            rows[:, 0] += off
            self._blocks.append(rows)

    def build(self, algorithm: str = "", info: dict | None = None) -> Schedule:
        parts = list(self._blocks)
        if self._rows:
            parts.append(np.array(self._rows, dtype=np.int64).reshape(-1, 6))
        if len(parts) == 1:
            rows = parts[0]
        else:
            rows = np.concatenate(parts) if parts else np.zeros((0, 6), dtype=np.int64)
        lengths = np.array(self._lengths, dtype=np.int64)
        if len(rows) and (np.diff(rows[:, 0]) < 0).any():
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
        used = np.bincount(rows[:, 0], minlength=len(lengths)) > 0
        # drop idle rounds and renumber (an idle round only wastes time)
        if not used.all():
            new_index = np.cumsum(used) - 1
            if len(rows):
                rows[:, 0] = new_index[rows[:, 0]]
        return Schedule(P=self.P, lengths=lengths[used], transfers=rows,
                        algorithm=algorithm, info=dict(info or {}))
