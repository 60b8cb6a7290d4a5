"""A proof's scaffold parts on the Dask backend: written on the workers, pulled into the
client's parts folder before their epoch is committed.

On a worker (:class:`WorkerParts`, held by the stealstack extension, :mod:`.tables`):
each search that logs a proof gets a folder of its own in the worker's local directory,
made when its first epoch task starts there; that epoch's lanes write their parts into
it (``EpochSpec.proof``'s folder, replaced by the task, :mod:`.task`).  The client reads
a part in chunks (``stealsearch_proof_read``) and has it deleted once it holds it
(``stealsearch_proof_drop``); the search's teardown (``unload``), the reaper of a
vanished client's search and the worker's close remove the whole folder.

On the client (:func:`pull_parts`): after an epoch's outcomes are all in and before the
epoch loop commits them, every part the outcomes name is appended, a chunk of at most
:data:`PULL_CHUNK` bytes at a time, to a file of the same name in the client's parts
folder (never a whole part in memory), and its size checked against its record count;
the outcomes' ``proof_parts`` then name the client's files, which is what ``Cut.commit``
keeps.

Why the proof stays exact: a committed epoch's records must outlive the worker that
wrote them (it may be killed in a later epoch), so they are on the client before the
commit, or the epoch is not committed: a pull that fails (a worker lost after its task
returned, a timeout, a short part) makes the epoch an aborted one (``EpochRun.abort``),
rolled back like a lost worker's, its nodes expanded and recorded again from the old
cut; whatever of its parts reached the client is deleted first.  So every node the
committed counters count has its record on the client (one per node:
:class:`stealsearch.engine.core.worker.WorkerSearch`), and no record of a rolled-back
epoch is kept: an aborted epoch's outcomes name no client file (:func:`forget_parts`).
A retiring worker's outcome reaches the client through a peer (:mod:`.tables`); the
peer pulls its parts from the retiring worker while that one waits for its reply, so
the client pulls them from the peer (``EpochOutcome.proof_host``) like any other; a
hand-over whose parts did not arrive makes that pull fail, and the epoch rolls back.
"""
from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from pathlib import Path

from ...core.epochs import handler_name

logger = logging.getLogger("stealsearch")

#: the most bytes of a part one read returns (the client appends chunk after chunk)
PULL_CHUNK = 8 << 20
#: the suffix of a part's file (:func:`stealsearch.engine.core.proof.open_part`)
PART_SUFFIX = ".rec"


def part_name(search_id: str, name: str) -> bool:
    """Is ``name`` a part of ``search_id`` (a bare file name, never a path)?"""
    return (isinstance(name, str) and os.path.basename(name) == name
            and name.startswith(f"{search_id}.") and name.endswith(PART_SUFFIX))


class WorkerParts:
    """The proof folders of the searches on one worker (see the module docstring)."""

    def __init__(self, root: str | None):
        self.root = root
        #: search id -> its folder
        self.folders: dict[str, Path] = {}

    def folder(self, search_id: str) -> Path:
        """The folder of ``search_id``'s parts here (made the first time)."""
        folder = self.folders.get(search_id)
        if folder is None:
            root = self.root if self.root and os.path.isdir(self.root) else None
            folder = Path(tempfile.mkdtemp(prefix=f"stealsearch-proof-{search_id}-", dir=root))
            self.folders[search_id] = folder
        return folder

    def read(self, search_id: str, name: str, offset: int, size: int) -> dict:
        """At most ``size`` (<= PULL_CHUNK) bytes of part ``name`` from ``offset``, and
        the part's whole size."""
        folder = self.folders.get(search_id)
        if folder is None or not part_name(search_id, name):
            return {"status": "gone"}
        path = folder / name
        try:
            with open(path, "rb") as fh:
                total = os.fstat(fh.fileno()).st_size
                fh.seek(int(offset))
                data = fh.read(max(0, min(int(size), PULL_CHUNK)))
        except OSError as exc:
            return {"status": "error", "message": f"{exc.__class__.__name__}: {exc}"}
        return {"status": "ok", "data": data, "total": total}

    def drop(self, search_id: str, names) -> int:
        """Delete the parts ``names`` the client holds now; how many were here."""
        folder = self.folders.get(search_id)
        dropped = 0
        for name in names if folder is not None else ():
            if part_name(search_id, name):
                try:
                    os.unlink(folder / name)
                    dropped += 1
                except OSError:
                    pass
        return dropped

    def remove(self, search_id: str) -> None:
        """The search is unloaded here: its folder goes (a lane still writing to a part
        writes to an unlinked file; its epoch is discarded or its part pulled already)."""
        folder = self.folders.pop(search_id, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def remove_all(self) -> None:
        for search_id in list(self.folders):
            self.remove(search_id)


async def read_handler(parts: WorkerParts, search_id, part, offset, size):
    """``stealsearch_proof_read`` (the file read off the worker's event loop)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, parts.read, search_id, part, offset, size)


# -- the client -------------------------------------------------------------------------------
class PullFailed(Exception):
    """A part did not reach the client whole."""


async def pull_part(client, host: str, search_id: str, name: str, target: Path,
                    expected: int | None, timeout: float) -> None:
    """Part ``name`` of ``host`` appended, chunk by chunk, to ``target`` (made anew);
    ``client``: anything with ``rpc`` (the client, or a worker taking a hand-over).
    ``expected``: its size in bytes (None: whatever size the host reports); raises
    :class:`PullFailed` (or a timeout, or the connection's error) if it is not all there.
    """
    read = getattr(client.rpc(host), handler_name("proof_read"))
    offset = 0
    with open(target, "wb") as fh:
        while expected is None or offset < expected:
            reply = await asyncio.wait_for(read(search_id=search_id, part=name, offset=offset,
                                                size=PULL_CHUNK if expected is None
                                                else min(PULL_CHUNK, expected - offset)),
                                           timeout)
            if not isinstance(reply, dict) or reply.get("status") != "ok":
                raise PullFailed(f"{host} answered {reply!r} for part {name}")
            if expected is None:
                expected = int(reply["total"])
                if offset >= expected:
                    break
            if reply["total"] != expected:
                raise PullFailed(f"part {name} on {host} has {reply['total']} bytes, "
                                 f"its records make {expected}")
            data = reply["data"]
            if not data:
                raise PullFailed(f"part {name} on {host} ended at byte {offset} of {expected}")
            fh.write(data)
            offset += len(data)


def pull_parts(client, outcomes, folder, width: int, search_id: str, timeout: float) -> str | None:
    """Every part the outcomes name, into ``folder`` (the client's parts folder); the
    outcomes' ``proof_parts`` then name the client's files, and each worker is told to
    delete what it gave (in the background).  Returns why a pull failed (the caller
    aborts the epoch; nothing pulled is left behind, and the outcomes name no part), or
    None.  ``timeout``: seconds one chunk's call may take."""
    folder = Path(folder)
    jobs = []           # (outcome, host, name, target, records)
    for o in outcomes:
        host = o.proof_host or o.address
        for path, records in o.proof_parts:
            name = os.path.basename(str(path))
            if not part_name(search_id, name):
                return f"{o.address} named a part {name!r} that is not of this search"
            jobs.append((o, host, name, folder / name, int(records)))

    async def pull_all():
        return await asyncio.gather(*(
            pull_part(client, host, search_id, name, target, records * width * 8, timeout)
            for _, host, name, target, records in jobs), return_exceptions=True)

    try:
        replies = client.sync(pull_all) if jobs else []
    except Exception as exc:          # the client's loop itself failed
        replies = [exc] * len(jobs)
    failed = [(job, r) for job, r in zip(jobs, replies) if isinstance(r, BaseException)]
    if failed:
        for _, _, _, target, _ in jobs:
            try:
                target.unlink()
            except OSError:
                pass
        forget_parts(client, outcomes, search_id)
        (_, host, name, _, _), exc = failed[0]
        return f"pulling the proof part {name} from {host} failed ({exc.__class__.__name__}" + \
            (f": {exc}" if isinstance(exc, PullFailed) else "") + ")"
    by_host: dict[str, list[str]] = {}
    for o in outcomes:
        o.proof_parts = tuple((str(folder / os.path.basename(str(p))), int(k))
                              for p, k in o.proof_parts)
        o.proof_host = None
    for _, host, name, _, _ in jobs:
        by_host.setdefault(host, []).append(name)
    _drop(client, by_host, search_id)
    return None


def forget_parts(client, outcomes, search_id: str) -> None:
    """An aborted epoch's outcomes: their parts stay on the workers (deleted there in the
    background) and name no client file (the epoch loop deletes the parts an aborted
    epoch names, which must be the client's own)."""
    by_host: dict[str, list[str]] = {}
    for o in outcomes:
        for path, _ in o.proof_parts:
            by_host.setdefault(o.proof_host or o.address, []).append(
                os.path.basename(str(path)))
        o.proof_parts = ()
    _drop(client, by_host, search_id)


def _drop(client, by_host: dict, search_id: str) -> None:
    """Tell each host to delete the parts named, in the background (not waited for: a
    worker that misses it removes its folder at the search's unload)."""
    from . import timeouts

    async def one(host, names):
        drop = getattr(client.rpc(host), handler_name("proof_drop"))
        return await asyncio.wait_for(drop(search_id=search_id, parts=names),
                                      timeouts.STOP_TIMEOUT)

    for host, names in by_host.items():
        try:
            asyncio.run_coroutine_threadsafe(one(host, names), client.loop.asyncio_loop)
        except Exception as exc:
            logger.debug("dropping proof parts on %s: %r", host, exc)
