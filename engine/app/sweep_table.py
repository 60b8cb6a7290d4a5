"""A sweep's table: ``OUT/<name>.csv`` (and Parquet), its rows, and reading them back.

The table.  ``OUT/<name>.csv``: one row per finished item, written with one ``write``
and an ``fsync``, so an interrupted sweep leaves whole rows (a torn last line, after a
crash, is cut off at the next start); one sweep at a time writes a table (a lock on
``OUT/.<name>.lock``).  Columns: key, kind, repeat, size, status
(``ok``, ``failed``, ``timeout``), error (one line), the parameters, the item's
figures, seconds, where it ran (worker, host, CPU model), date (UTC) and the git
commit of this checkout (``unknown`` outside one; ``-dirty`` with local changes).  When
a later item brings new columns the table is rewritten once with the wider header (a
new file renamed over the old).  A parameter named like a runner column (twolevel's DAG
``kind``) is stored as ``param_<name>``, a figure named like any other column as
``result_<name>``.  ``OUT/<name>.parquet`` is written at the end when pyarrow is
importable.

Resume: the keys of the rows with status ``ok`` are done (:meth:`SweepTable.done_keys`;
the rule: :mod:`stealsearch.engine.app.sweep`); the newest row of a key is its answer.

Reading a sweep back.  :func:`read_outcomes` gives, for every item of a grid, its newest
row as an :class:`ItemOutcome` (status, error, its figures decoded to values: numbers,
booleans, lists), or status ``""`` for an item that never ran.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..core.errors import InputError
from .sweep_grid import Grid, SweepItem

STATUS_OK, STATUS_FAILED, STATUS_TIMEOUT = "ok", "failed", "timeout"
LEAD_COLUMNS = ("key", "kind", "repeat", "size", "status", "error")
TAIL_COLUMNS = ("seconds", "worker", "host", "cpu", "date", "commit")

def plain_value(value):
    """A figure -> a CSV-friendly plain value (numpy scalars unwrapped, lists as JSON)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return plain_value(value.item())
    try:
        return json.dumps(value, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    except (TypeError, ValueError):
        return str(value)


def _cell(value) -> str:
    if value is None:
        return ""
    return str(value)


def parse_cell(text: str):
    """A CSV cell back to a value: '' -> None, numbers, True/False, else the text."""
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


class SweepTable:
    """``OUT/<name>.csv``: read what is there, append rows durably, widen when needed."""

    def __init__(self, out_dir: str | os.PathLike, name: str):
        self.dir = Path(out_dir)
        if self.dir.exists() and not self.dir.is_dir():
            raise InputError(f"--out {out_dir}: exists and is not a folder")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / f"{name}.csv"
        self.parquet_path = self.dir / f"{name}.parquet"
        self.columns: list = []
        self.rows: list = []
        self._lock = self._take_lock(self.dir / f".{name}.lock", self.path)
        try:
            if self.path.exists():
                self._read()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _take_lock(path: Path, table: Path):
        """One writer per table: a second sweep on the same table stops at once
        (an advisory lock, released by the OS whatever ends this process)."""
        try:
            import fcntl
        except ImportError:          # not POSIX: no lock
            return None
        f = open(path, "a")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise InputError(f"another sweep is writing {table}; "
                             "wait for it or choose another --out folder") from None
        return f

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> "SweepTable":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def _read(self) -> None:
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            # a torn last row (a crash mid-write): cut it off, keep the whole rows
            raw = raw[:raw.rfind(b"\n") + 1]
            with open(self.path, "r+b") as f:
                f.truncate(len(raw))
        try:
            reader = csv.DictReader(io.StringIO(raw.decode()))
            header = reader.fieldnames or []
            rows = list(reader)
        except (UnicodeDecodeError, csv.Error):
            header, rows = [], []
        if raw and not {"key", "status"} <= set(header):
            raise InputError(f"{self.path} exists and is not a sweep table; "
                             "choose another --out folder")
        self.columns = list(header)
        self.rows = rows

    def done_keys(self) -> set:
        return {r["key"] for r in self.rows if r.get("status") == STATUS_OK}

    def _write_all(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow({k: r.get(k, "") for k in self.columns})
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def append(self, row: dict) -> None:
        """One row, durably: a single write + fsync (whole rows only, whatever stops us)."""
        row = {k: _cell(v) for k, v in row.items()}
        new = [k for k in row if k not in self.columns]
        self.rows.append(row)
        if new or not self.path.exists():
            tail = [c for c in self.columns if c in TAIL_COLUMNS]
            body = [c for c in self.columns if c not in TAIL_COLUMNS]
            self.columns = body + [c for c in new if c not in TAIL_COLUMNS] + \
                [c for c in TAIL_COLUMNS if c in tail or c in new]
            self._write_all()
            return
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=self.columns, extrasaction="ignore",
                       lineterminator="\n").writerow({k: row.get(k, "") for k in self.columns})
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, buf.getvalue().encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def write_parquet(self) -> Path | None:
        """The whole table as Parquet (typed columns) when pyarrow is importable."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            return None
        data = {}
        for c in self.columns:
            vals = [parse_cell(r.get(c, "") or "") for r in self.rows]
            present = [v for v in vals if v is not None]
            if present and all(isinstance(v, bool) for v in present):
                pass
            elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
                pass
            elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                 for v in present):
                vals = [None if v is None else float(v) for v in vals]
            else:
                vals = [None if v is None else (r.get(c) or "") for v, r in zip(vals, self.rows)]
            data[c] = vals
        tmp = self.parquet_path.with_name(self.parquet_path.name + ".tmp")
        pq.write_table(pa.table(data), tmp)
        os.replace(tmp, self.parquet_path)
        return self.parquet_path



def table_row(item: SweepItem, outcome: dict, commit: str) -> dict:
    """The row of ``item`` as ``outcome`` (a run_item dict) describes it."""
    row = {"key": item.key, "kind": item.kind, "repeat": item.repeat, "size": item.size,
           "status": outcome["status"], "error": outcome["error"]}
    for k, v in item.columns.items():
        # a parameter named like a runner column (twolevel's DAG ``kind``) is renamed
        row[k if k not in LEAD_COLUMNS and k not in TAIL_COLUMNS else f"param_{k}"] = plain_value(v)
    for k, v in outcome["figures"].items():
        name = k if k not in row and k not in TAIL_COLUMNS else f"result_{k}"
        row[name] = v
    row["seconds"] = round(outcome["seconds"], 6)
    for k in ("worker", "host", "cpu"):
        row[k] = outcome[k]
    row["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    row["commit"] = commit
    return row


@dataclass
class ItemOutcome:
    """One grid item's newest row: ``status`` ok / failed / timeout, or ``""`` when the
    item never ran (a time limit, ``limit``, Ctrl-C); ``figures`` are what the item
    function returned, decoded from the table's cells."""

    item: SweepItem
    status: str = ""
    error: str = ""
    figures: dict = field(default_factory=dict)
    seconds: float | None = None
    worker: str = ""

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def record(self) -> dict:
        """The item's parameters (as the grid gave them) and its figures in one dict."""
        return {**self.item.columns, **self.figures}


def decode_cell(text: str):
    """A table cell back to the value the item returned: :func:`parse_cell`, and a list
    or mapping (stored as JSON) decoded."""
    value = parse_cell(text)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value


def read_outcomes(grid: Grid, out_dir: str | os.PathLike) -> list:
    """Every item of ``grid`` with its newest row in ``OUT/<name>.csv`` (the order of the
    grid; status ``""`` for an item without a row).  Rows of other grids written into the
    same table are ignored."""
    path = Path(out_dir) / f"{grid.name}.csv"
    newest: dict = {}
    if path.exists():
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("key"):
                    newest[row["key"]] = row
    runner = set(LEAD_COLUMNS) | set(TAIL_COLUMNS)
    out = []
    for item in grid.items:
        row = newest.get(item.key)
        if row is None:
            out.append(ItemOutcome(item))
            continue
        reserved = runner | set(item.columns)
        params = set(item.columns) | {f"param_{k}" for k in item.columns if k in runner}
        figures = {}
        for col, text in row.items():
            if col is None or col in runner or col in params:
                continue
            name = col[len("result_"):] if col.startswith("result_") and \
                col[len("result_"):] in reserved else col
            figures[name] = decode_cell(text or "")
        out.append(ItemOutcome(item, status=row.get("status", ""), error=row.get("error", ""),
                               figures=figures, seconds=parse_cell(row.get("seconds") or ""),
                               worker=row.get("worker") or ""))
    return out


