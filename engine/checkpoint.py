"""Checkpoints on disk: a consistent cut (:mod:`stealsearch.engine.epochs`) in a directory.

Layout of a checkpoint directory::

    manifest.json       what the cut is (written last: it is the commit point)
    rows-<epoch>.npy    the open rows (the codec's format; .npy for int64 rows)
    problem.pickle      the problem, so ``stealsearch.engine.resume(DIR)`` needs nothing else

Every file is written atomically (a temporary name in the same directory, fsync,
rename, fsync of the directory), so a crash leaves either the previous checkpoint or
the new one, never a mix; the manifest names the rows file it belongs to and its
SHA-256, so a truncated or foreign file is refused.  A directory that holds anything
but a checkpoint of ours is never written into.

UG (the Ubiquity Generator behind ParaSCIP) checkpoints its open nodes the same way
every ``CheckpointInterval`` seconds and restarts from them.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import time
from pathlib import Path

import numpy as np

from .epochs import Cut
from .errors import InputError
from .problem import Problem
from .result import json_default

FORMAT = "stealsearch-checkpoint"
#: bumped when the layout changes; other versions are refused
VERSION = 1
MANIFEST = "manifest.json"
PROBLEM_FILE = "problem.pickle"


class CheckpointError(InputError):
    """A checkpoint that cannot be used (missing, truncated, corrupt, another version,
    another input), or a directory that is not ours to write."""


def engine_version() -> str:
    try:
        from importlib.metadata import version
        return version("stealsearch")
    except Exception:  # not installed (a source checkout): still a valid engine
        return "0+unknown"


def instance_hash(problem: Problem) -> str:
    """SHA-256 of what defines the search: the problem's name, mode, target, row layout,
    root frontier and kernel data.  A changed input file changes it."""
    h = hashlib.sha256()
    h.update(repr((problem.name, problem.mode.name, problem.target, problem.row_width,
                   problem.n_counters())).encode())
    kernel = getattr(problem.kernel, "__name__", repr(type(problem.kernel)))
    h.update(kernel.encode())
    parts = [problem.root_frontier()] + list(problem.kernel_data())
    for part in parts:
        a = np.asarray(part)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_ours(directory: Path) -> bool:
    try:
        return json.loads((directory / MANIFEST).read_text()).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def prepare_directory(directory) -> Path:
    """The checkpoint directory, created if missing; refused if it holds anything that
    is not a checkpoint of ours."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise CheckpointError(f"checkpoint {directory}: exists and is not a directory")
    if d.is_dir() and any(d.iterdir()) and not _is_ours(d):
        raise CheckpointError(f"checkpoint {directory}: directory is not empty and holds no "
                              "stealsearch checkpoint; refusing to write into it")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CheckpointError(f"checkpoint {directory}: cannot create it ({exc.strerror})") from None
    return d


class CheckpointWriter:
    """Writes the cuts of one search into ``directory`` (see the module docstring)."""

    @classmethod
    def open(cls, directory, problem: Problem, codec, policy, info: dict | None = None):
        """The writer every backend uses: None when no ``directory`` was asked for;
        ``policy`` a StealPolicy (recorded as its dict)."""
        if directory is None:
            return None
        return cls(directory, problem, codec, mode=problem.mode.name.lower(),
                   policy=policy.as_dict(), info=info)

    def __init__(self, directory, problem: Problem, codec, *, mode: str, policy: dict | None,
                 info: dict | None = None):
        self.dir = prepare_directory(directory)
        self.problem, self.codec = problem, codec
        self.hash = instance_hash(problem)
        self.meta = {"format": FORMAT, "version": VERSION, "engine_version": engine_version(),
                     "problem": problem.name, "mode": mode, "instance_hash": self.hash,
                     "policy": policy, "info": info or {}}
        _atomic_write(self.dir / PROBLEM_FILE, pickle.dumps(problem, protocol=5))
        self.writes = 0
        self.seconds = 0.0
        self.bytes = 0

    def describe(self, result) -> None:
        """Name this checkpoint and what writing it cost in a search's result (every
        backend reports the same keys)."""
        result.checkpoint = str(self.dir)
        result.info["checkpoint_writes"] = self.writes
        result.info["checkpoint_seconds"] = self.seconds
        result.info["checkpoint_bytes"] = self.bytes

    def write(self, cut: Cut, status: str = "running") -> None:
        t = time.perf_counter()
        buf = io.BytesIO()
        self.codec.write(buf, cut.rows(self.codec))
        data = buf.getvalue()
        rows_name = f"rows-{cut.epochs}-{cut.recoveries}{self.codec.suffix}"
        _atomic_write(self.dir / rows_name, data)
        manifest = dict(self.meta, status=status, written_at=time.time(),
                        rows_file=rows_name, rows=cut.n_rows(),
                        rows_sha256=hashlib.sha256(data).hexdigest(),
                        counters=[int(x) for x in cut.counters], nodes=cut.nodes,
                        best_value=cut.best_value,
                        best_buffer=None if cut.best_buffer is None else
                        [int(x) for x in cut.best_buffer],
                        history=[[float(t_), int(v)] for t_, v in cut.history],
                        elapsed=cut.elapsed, epochs=cut.epochs, recoveries=cut.recoveries,
                        nodes_redone=cut.nodes_redone)
        _atomic_write(self.dir / MANIFEST,
                      json.dumps(manifest, indent=1, default=json_default).encode())
        _fsync_dir(self.dir)
        for old in self.dir.glob("rows-*"):
            if old.name != rows_name:
                old.unlink(missing_ok=True)
        self.writes += 1
        self.bytes = len(data)
        self.seconds += time.perf_counter() - t


def read_manifest(directory) -> dict:
    d = Path(directory)
    path = d / MANIFEST
    if not d.is_dir():
        raise CheckpointError(f"checkpoint {directory}: no such directory")
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {directory}: no {MANIFEST} (not a checkpoint)") from None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {directory}: {MANIFEST} is unreadable or truncated "
                              f"({exc.__class__.__name__})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {directory}: not a stealsearch checkpoint")
    if manifest.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {directory}: format version {manifest.get('version')!r}, "
                              f"this engine reads version {VERSION}")
    return manifest


def load_problem(directory) -> Problem:
    try:
        with open(Path(directory) / PROBLEM_FILE, "rb") as f:
            return pickle.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {directory}: {PROBLEM_FILE} is missing") from None
    except Exception as exc:
        raise CheckpointError(f"checkpoint {directory}: {PROBLEM_FILE} cannot be read "
                              f"({exc.__class__.__name__})") from None


def read_cut(directory, problem: Problem, codec) -> tuple[Cut, dict]:
    """The cut stored in ``directory``, checked against ``problem``; (cut, manifest)."""
    m = read_manifest(directory)
    if m.get("instance_hash") != instance_hash(problem):
        raise CheckpointError(f"checkpoint {directory}: it was written for a different input "
                              f"({m.get('problem')}); refusing to resume another instance")
    try:
        data = (Path(directory) / m["rows_file"]).read_bytes()
    except (OSError, KeyError, TypeError):
        raise CheckpointError(f"checkpoint {directory}: its rows file is missing") from None
    if hashlib.sha256(data).hexdigest() != m.get("rows_sha256"):
        raise CheckpointError(f"checkpoint {directory}: rows file is truncated or corrupt "
                              "(checksum mismatch)")
    try:
        rows = codec.read(io.BytesIO(data))
        counters = np.asarray(m["counters"], dtype=np.int64)
        if len(counters) != problem.n_counters() or len(rows) != m["rows"]:
            raise ValueError("counter or row count mismatch")
        buf = m.get("best_buffer")
        cut = Cut(batches={"": rows}, counters=counters, best_value=m.get("best_value"),
                  best_buffer=None if buf is None else np.asarray(buf, dtype=np.int64),
                  history=[(float(t), int(v)) for t, v in m.get("history", [])],
                  elapsed=float(m.get("elapsed", 0.0)), epochs=int(m.get("epochs", 0)),
                  recoveries=int(m.get("recoveries", 0)),
                  nodes_redone=int(m.get("nodes_redone", 0)))
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {directory}: inconsistent contents ({exc})") from None
    return cut, m
