"""Checkpoints on disk: a consistent cut (:mod:`stealsearch.engine.core.epochs`) in a directory.

Layout of a checkpoint directory::

    manifest.json       what the cut is (written last: it is the commit point)
    rows-<epoch>.npy    the open rows (the codec's format; .npy for int64 rows)
    problem.pickle      the problem, so ``stealsearch.engine.resume(DIR)`` needs nothing else
    proof/              a search that logs a proof: the cut's scaffold parts (each
                        named in the manifest with its record count and SHA-256)

Every file is written atomically (a temporary name in the same directory, fsync,
rename, fsync of the directory), so a crash leaves either the previous checkpoint or
the new one, never a mix; the manifest names the rows file it belongs to and its
SHA-256, so a truncated or foreign file is refused.  A directory that holds anything
but a checkpoint of ours is never written into, nor one that another process is writing
into (:class:`DirectoryLock`).  A write that fails (a full disk) leaves the last
committed checkpoint as it was and no temporary file; temporary files of a process that
died during a write are removed by the next writer of the folder.

UG (the Ubiquity Generator behind ParaSCIP) checkpoints its open nodes the same way
every ``CheckpointInterval`` seconds and restarts from them.

**A checkpoint never runs code.**  Checkpoints move between machines and users, and a
pickle runs whatever its author wrote.  So every manifest this process writes carries an
HMAC-SHA256 (``hmac``) over its canonical JSON, which holds the SHA-256 of
``problem.pickle`` and of the rows file and the stored command: the key is the user's
own (:func:`signing_key`: ``$XDG_CONFIG_HOME/stealsearch/key``, default
``~/.config/stealsearch/key``, 32 random bytes created 0600 on first use, never in
the checkpoint).  :func:`load_problem` unpickles only a ``problem.pickle`` whose hash
a manifest signed with this key names; anything else (unsigned, another user's key, an
altered byte) is refused unless the caller trusts the checkpoint (``trust=True``,
``stealsearch resume --trust``).  The rows are ``.npy`` read with
``allow_pickle=False``, the manifest is JSON whose every field is checked by type
(:func:`read_manifest`).  ``stealsearch resume`` never unpickles: it rebuilds the
problem from the stored command, which must be a search sub-command, and whose output
paths are replaced (:mod:`stealsearch.cli`).
"""
from __future__ import annotations

import hashlib
import hmac
import io
import json
import numbers
import os
import pickle
import re
import secrets
import shutil
import threading
import time
import weakref
from pathlib import Path

import numpy as np

from .epochs import Cut
from .errors import InputError
from .problem import Problem
from .proof import part_sha256
from .result import json_default

FORMAT = "stealsearch-checkpoint"
#: bumped when the layout changes; other versions are refused
VERSION = 1
MANIFEST = "manifest.json"
PROBLEM_FILE = "problem.pickle"
#: the folder of a proof's scaffold parts
PROOF_DIR = "proof"


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


# -- the user's signing key --------------------------------------------------------------------
#: the key's file name under the user's config directory
KEY_FILE = "key"


def key_path() -> Path:
    """``$XDG_CONFIG_HOME/stealsearch/key`` (``~/.config/stealsearch/key`` by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "stealsearch" / KEY_FILE


def signing_key(create: bool = True) -> bytes | None:
    """This user's checkpoint key (see the module docstring); created 0600 on first use
    when ``create``.  None when there is none (or it cannot be created: the checkpoint is
    then written unsigned, and only a trusting resume takes its pickle).  A key that
    others may read is refused, as ssh refuses such a private key."""
    path = key_path()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        if not create:
            return None
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = path.with_name(f".key.tmp-{os.getpid()}-{secrets.token_hex(4)}")
            wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(wfd, "wb") as f:
                f.write(secrets.token_hex(32).encode())
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)          # never replaces a key another process made
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        except OSError:
            return None
        return signing_key(create=False)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_mode & 0o077 or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            raise CheckpointError(f"checkpoint key {path}: readable by other users or not "
                                  "yours; refusing to use it (chmod 600 it, or remove it)")
        key = f.read(4096).strip()
    return key or None


def _canonical(manifest: dict) -> bytes:
    return json.dumps({k: v for k, v in manifest.items() if k != "hmac"}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True).encode()


def sign(manifest: dict, key: bytes | None) -> dict:
    """``manifest`` as JSON will read it back, with its ``hmac`` (none without a key)."""
    m = json.loads(json.dumps(manifest, default=json_default))
    m.pop("hmac", None)
    if key is not None:
        m["hmac"] = hmac.new(key, _canonical(m), hashlib.sha256).hexdigest()
    return m


def signed_by_me(manifest: dict) -> bool:
    """Was ``manifest`` written, unaltered, by a process holding this user's key?"""
    mac = manifest.get("hmac")
    if not isinstance(mac, str):
        return False
    key = signing_key(create=False)
    if key is None:
        return False
    return hmac.compare_digest(mac, hmac.new(key, _canonical(manifest), hashlib.sha256).hexdigest())


def check_signed(directory, manifest: dict, what: str) -> None:
    """Refuse (one line) a manifest that this user's key did not sign."""
    if signed_by_me(manifest):
        return
    why = "is not signed" if "hmac" not in manifest else \
        "is signed with another key or was altered"
    raise CheckpointError(f"checkpoint {directory}: {MANIFEST} {why} (written by another user "
                          f"or machine, or edited); {what} only if you trust who wrote it")


def _temporary(path: Path) -> Path:
    """Where :func:`_atomic_write` writes ``path`` first (this process's name for it)."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def _atomic(path: Path, fill) -> None:
    """``fill(tmp)`` makes the file at a temporary name, then it becomes ``path``; or
    nothing: a write that fails (a full disk, a quota, an I/O error) leaves ``path`` as
    it was and no temporary file behind, and raises."""
    tmp = _temporary(path)
    try:
        fill(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass        # (the error that matters is the one being raised)
        raise


def _atomic_write(path: Path, data: bytes) -> None:
    """``data`` into ``path`` or nothing (:func:`_atomic`)."""
    def fill(tmp):
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    _atomic(path, fill)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: the temporary names :func:`_temporary` gives (``.rows-3-0.npy.tmp-1234``)
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.tmp-\d+")


def _our_name(name: str) -> bool:
    """A file name the writer gives: the problem, a rows file, the manifest."""
    return name in (PROBLEM_FILE, MANIFEST, PROOF_DIR) or (name.startswith("rows-")
                                                           and name.count("-") == 2)


def _is_ours(directory: Path) -> bool:
    try:
        return json.loads((directory / MANIFEST).read_text()).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        pass
    # a checkpoint being started: the problem (and rows) written, no cut committed yet, so
    # no manifest — e.g. the ramp-up's first phase, whose directory the cluster phase
    # opens again at the hand-over; or only the temporary files of a run that ended
    # during its first write.  Only names the writer itself gives count.
    names = [p.name for p in directory.iterdir()]
    temporary = [_TEMPORARY.fullmatch(n) for n in names]
    return bool(names) and all(
        _our_name(n) or (t is not None and _our_name(t["name"]))
        for n, t in zip(names, temporary)) and (
        PROBLEM_FILE in names or all(t is not None for t in temporary))


def _make_directory(directory) -> Path:
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise CheckpointError(f"checkpoint {directory}: exists and is not a directory")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CheckpointError(f"checkpoint {directory}: cannot create it ({exc.strerror})") from None
    return d


def _check_ours(d: Path, directory) -> None:
    if any(d.iterdir()) and not _is_ours(d):
        raise CheckpointError(f"checkpoint {directory}: directory is not empty and holds no "
                              "stealsearch checkpoint; refusing to write into it")


def prepare_directory(directory) -> Path:
    """The checkpoint directory, created if missing; refused if it holds anything that
    is not a checkpoint of ours."""
    d = _make_directory(directory)
    _check_ours(d, directory)
    return d


# -- one writer per folder ------------------------------------------------------------------
class DirectoryLock:
    """This process's claim on a checkpoint folder while it writes there: an exclusive
    ``flock`` on the folder itself (no file of its own), held by one open descriptor per
    process and counted, so that the writers of one process (the ramp-up's two phases, a
    resume in the same program) share it while another process is refused in one true
    line.  Two runs writing into one folder would delete each other's rows files.  A
    file system without ``flock`` (some network mounts) writes unlocked.  The kernel
    releases the lock when the process ends, however it ends."""

    _held: dict = {}            # (st_dev, st_ino) -> [descriptor, writers]
    _guard = threading.Lock()

    def __init__(self, key):
        self._key = key

    @classmethod
    def take(cls, d: Path, directory) -> "DirectoryLock":
        try:
            import fcntl
        except ImportError:         # no flock on this system: unlocked, as before
            return cls(None)
        st = os.stat(d)
        key = (st.st_dev, st.st_ino)
        with cls._guard:
            held = cls._held.get(key)
            if held is not None:
                held[1] += 1
                return cls(key)
            fd = os.open(d, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                holder = _lock_holder(st)
                raise CheckpointError(
                    f"checkpoint {directory}: another search"
                    + (f" (process {holder})" if holder else "")
                    + " is writing into it; wait until it ends, or give another folder") from None
            except OSError:         # no flock here: unlocked, as before
                os.close(fd)
                return cls(None)
            cls._held[key] = [fd, 1]
            return cls(key)

    def release(self) -> None:
        """Idempotent; the last writer of this process gives the folder back."""
        key, self._key = self._key, None
        if key is None:
            return
        with self._guard:
            held = self._held.get(key)
            if held is None:
                return
            held[1] -= 1
            if held[1] == 0:
                del self._held[key]
                os.close(held[0])           # (closing the descriptor drops the flock)


def _lock_holder(st) -> int | None:
    """The process that holds the ``flock`` on the folder ``st`` describes, as Linux's
    ``/proc/locks`` names it (None where it does not: another system, another host)."""
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks") as f:
            for line in f:
                parts = line.split()
                if "FLOCK" in parts and where in parts and "->" not in parts:
                    pid = int(parts[parts.index(where) - 1])
                    return pid or None
    except (OSError, ValueError, IndexError):
        pass
    return None


def _remove_leftovers(d: Path) -> None:
    """Temporary files of runs that ended during a write (``kill -9``, a power cut): no
    other process writes here while this one holds the folder's lock."""
    for p in d.iterdir():
        t = _TEMPORARY.fullmatch(p.name)
        if t is not None and _our_name(t["name"]):
            try:
                p.unlink()
            except OSError:
                pass


class CheckpointWriter:
    """Writes the cuts of one search into ``directory`` (see the module docstring).

    A write that fails (``OSError``: a full disk, a quota, an I/O error) raises and
    leaves the folder as the last write that succeeded left it: the manifest is the
    commit point, a rows file written for a manifest that could not be is removed, and
    :func:`_atomic_write` leaves no temporary file.  What then becomes of the search is
    the epoch loop's choice (:mod:`stealsearch.engine.core.loop`).  The folder is this
    process's while a writer of it is open (:class:`DirectoryLock`, released by
    :meth:`close`)."""

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
        self.dir = _make_directory(directory)
        self.lock = DirectoryLock.take(self.dir, directory)
        self._release = weakref.finalize(self, self.lock.release)
        try:
            _check_ours(self.dir, directory)
            _remove_leftovers(self.dir)
            self.problem, self.codec = problem, codec
            self.hash = instance_hash(problem)
            self.key = signing_key()
            pickled = pickle.dumps(problem, protocol=5)
            self.meta = {"format": FORMAT, "version": VERSION,
                         "engine_version": engine_version(), "problem": problem.name,
                         "mode": mode, "instance_hash": self.hash, "policy": policy,
                         "info": info or {},
                         "problem_sha256": hashlib.sha256(pickled).hexdigest()}
            #: the rows file the manifest on disk names (never removed by a failed write)
            self.committed_rows = _rows_named(self.dir)
            #: proof parts in the folder, by name: their SHA-256 (each hashed once)
            self.part_hashes: dict[str, str] = {}
            _atomic_write(self.dir / PROBLEM_FILE, pickled)
        except BaseException:
            self.close()
            raise
        self.writes = 0
        self.seconds = 0.0
        self.bytes = 0

    def close(self) -> None:
        """This writer is done: the folder goes back (see :class:`DirectoryLock`)."""
        self._release()

    def figures(self) -> dict:
        """What writing this checkpoint cost, for a search's result ``info`` (every
        backend reports the same keys)."""
        return {"checkpoint_writes": self.writes, "checkpoint_seconds": self.seconds,
                "checkpoint_bytes": self.bytes}

    def write(self, cut: Cut, status: str = "running") -> None:
        t = time.perf_counter()
        buf = io.BytesIO()
        self.codec.write(buf, cut.rows(self.codec))
        data = buf.getvalue()
        rows_name = f"rows-{cut.epochs}-{cut.recoveries}{self.codec.suffix}"
        proof_parts = None if cut.proof_parts is None else self._store_parts(cut.proof_parts)
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
        if proof_parts is not None:
            manifest["proof_parts"] = proof_parts
        try:
            _atomic_write(self.dir / rows_name, data)
            _atomic_write(self.dir / MANIFEST,
                          json.dumps(sign(manifest, self.key), indent=1).encode())
        except OSError:
            # the manifest on disk still names the last rows file that was committed;
            # one written for the manifest that failed is nobody's
            if rows_name != self.committed_rows:
                try:
                    (self.dir / rows_name).unlink(missing_ok=True)
                except OSError:
                    pass
            raise
        self.committed_rows = rows_name
        _fsync_dir(self.dir)
        for old in self.dir.glob("rows-*"):
            if old.name != rows_name:
                try:
                    old.unlink(missing_ok=True)
                except OSError:     # a stale file only: the next write tries again
                    pass
        if proof_parts is not None:     # a part no cut names (a failed write's) goes
            named = {name for name, _, _ in proof_parts}
            for old in (self.dir / PROOF_DIR).iterdir():
                if old.name not in named:
                    try:
                        old.unlink(missing_ok=True)
                    except OSError:
                        pass
        self.writes += 1
        self.bytes = len(data)
        self.seconds += time.perf_counter() - t


    def _store_parts(self, parts) -> list:
        """The cut's proof parts in the folder's ``proof/`` (hard-linked where the file
        system allows, else copied; atomically, before the manifest that names them),
        as the manifest's ``[[name, records, sha256], ...]``.  A part never changes once
        its epoch is committed, so one already here is neither copied nor hashed again."""
        folder = self.dir / PROOF_DIR
        folder.mkdir(exist_ok=True)
        out = []
        for path, records in parts:
            path = Path(path)
            target = folder / path.name
            if path.name not in self.part_hashes:
                if not target.exists() or not _same_file(path, target):
                    _link_or_copy(path, target)
                self.part_hashes[path.name] = part_sha256(target)
            out.append([path.name, int(records), self.part_hashes[path.name]])
        _fsync_dir(folder)
        return out


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _link_or_copy(src: Path, dst: Path) -> None:
    """``src`` at ``dst`` or nothing (:func:`_atomic`): a hard link (a part is never
    written again once committed), or a copy across file systems."""
    def fill(tmp):
        tmp.unlink(missing_ok=True)
        try:
            os.link(src, tmp)
        except OSError:
            with open(src, "rb") as fin, open(tmp, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
                fout.flush()
                os.fsync(fout.fileno())
    _atomic(dst, fill)


def _rows_named(d: Path) -> str | None:
    """The rows file the manifest in ``d`` names (None: no readable manifest)."""
    try:
        name = json.loads((d / MANIFEST).read_text()).get("rows_file")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


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
    _check_types(directory, manifest)
    return manifest


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


#: the manifest's fields, each with a test of its JSON type and what it should be
_FIELDS = {
    "problem": (lambda v: isinstance(v, str), "a string"),
    "mode": (lambda v: isinstance(v, str), "a string"),
    "instance_hash": (lambda v: isinstance(v, str), "a string"),
    "info": (lambda v: isinstance(v, dict), "an object"),
    "policy": (lambda v: v is None or isinstance(v, dict), "an object"),
    "status": (lambda v: isinstance(v, str), "a string"),
    "rows_file": (lambda v: _plain_name(v), "a file name"),
    "rows": (lambda v: _is_int(v) and v >= 0, "a count"),
    "rows_sha256": (lambda v: isinstance(v, str), "a string"),
    "counters": (lambda v: isinstance(v, list) and all(_is_int(x) for x in v), "a list of integers"),
    "nodes": (lambda v: _is_int(v) and v >= 0, "a count"),
    "best_value": (lambda v: v is None or _is_int(v), "an integer or null"),
    "best_buffer": (lambda v: v is None or (isinstance(v, list) and all(_is_int(x) for x in v)),
                    "a list of integers or null"),
    "history": (lambda v: isinstance(v, list) and all(
        isinstance(h, list) and len(h) == 2 and _is_real(h[0]) and _is_int(h[1]) for h in v),
        "a list of [seconds, value] pairs"),
    "elapsed": (lambda v: _is_real(v) and v >= 0, "a number of seconds"),
    "epochs": (lambda v: _is_int(v) and v >= 0, "a count"),
    "recoveries": (lambda v: _is_int(v) and v >= 0, "a count"),
    "nodes_redone": (lambda v: _is_int(v) and v >= 0, "a count"),
    "problem_sha256": (lambda v: isinstance(v, str), "a string"),
    "hmac": (lambda v: isinstance(v, str), "a string"),
    "proof_parts": (lambda v: isinstance(v, list) and all(
        isinstance(e, list) and len(e) == 3 and _plain_name(e[0]) and _is_int(e[1])
        and e[1] >= 0 and isinstance(e[2], str) for e in v),
        "a list of [file name, records, sha256]"),
}


def _plain_name(v) -> bool:
    return isinstance(v, str) and "/" not in v and "\\" not in v and v not in ("", ".", "..")


def _check_types(directory, manifest: dict) -> None:
    """One line for the first field of the wrong type (an edited or foreign manifest),
    before any of it is used."""
    for name, (ok, what) in _FIELDS.items():
        if name in manifest and not ok(manifest[name]):
            raise CheckpointError(f"checkpoint {directory}: {MANIFEST} field {name!r} must be "
                                  f"{what}, got {json.dumps(manifest[name])[:60]}")
    argv = manifest.get("info", {}).get("argv")
    if argv is not None and not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        raise CheckpointError(f"checkpoint {directory}: {MANIFEST} field 'info.argv' must be "
                              "a list of strings")


def load_problem(directory, trust: bool = False) -> Problem:
    """The pickled problem of a checkpoint: unpickled only when a manifest signed with this
    user's key names its SHA-256, or when the caller ``trust``-s the checkpoint (see the
    module docstring).  Nothing is unpickled before that check."""
    try:
        data = (Path(directory) / PROBLEM_FILE).read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {directory}: {PROBLEM_FILE} is missing") from None
    except OSError as exc:
        raise CheckpointError(f"checkpoint {directory}: {PROBLEM_FILE} cannot be read "
                              f"({exc.strerror})") from None
    if not trust:
        m = read_manifest(directory)
        check_signed(directory, m, "unpickling its problem could run code: pass trust=True "
                                   "(stealsearch resume --trust), or the problem rebuilt "
                                   "from its inputs,")
        if not hmac.compare_digest(str(m.get("problem_sha256")),
                                   hashlib.sha256(data).hexdigest()):
            raise CheckpointError(f"checkpoint {directory}: {PROBLEM_FILE} is not the one its "
                                  "signed manifest names (replaced or altered); refusing to "
                                  "unpickle it")
    try:
        return pickle.loads(data)
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
    if "proof_parts" in m:
        cut.proof_parts = _read_parts(directory, m["proof_parts"],
                                      getattr(problem, "proof_record_width", None))
    return cut, m


def _read_parts(directory, entries, width) -> tuple:
    """The proof parts a manifest names, each checked (its size against its record
    count, its SHA-256) as a rows file is: ``((path, records), ...)``."""
    folder = Path(directory) / PROOF_DIR
    parts = []
    for name, records, sha in entries:
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError:
            raise CheckpointError(f"checkpoint {directory}: proof part {name} is "
                                  "missing") from None
        if (width is not None and size != records * width * 8) or \
                not hmac.compare_digest(part_sha256(path), sha):
            raise CheckpointError(f"checkpoint {directory}: proof part {name} is truncated "
                                  "or corrupt (size or checksum mismatch)")
        parts.append((str(path), int(records)))
    return tuple(parts)
