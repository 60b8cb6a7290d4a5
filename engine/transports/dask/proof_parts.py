"""A proof's scaffold parts on the Dask backend: written on the workers, and on the
client before their epoch is committed.

Two ways there, chosen per worker and search.  *In place*: the client writes a token
file into its parts folder (:func:`offer_folder`) and the epoch spec carries the
token; a worker that reads that token at that path and can create a file beside it
shares the client's filesystem (a local cluster, a shared disk), and its lanes write
their parts straight into the client's folder: nothing travels.  *Pulled*: any other
worker's lanes write into a folder of the search in its own local directory
(:class:`WorkerParts`, held by the stealstack extension, :mod:`.tables`; the epoch
task chooses, :mod:`.task`), and the client reads each part in chunks
(``stealsearch_proof_read``) and has it deleted once it holds it
(``stealsearch_proof_drop``); the search's teardown (``unload``), the reaper of a
vanished client's search and the worker's close remove the worker's folder.

On the client (:func:`pull_parts`): after an epoch's outcomes are all in and before the
epoch loop commits them, every part the outcomes name is in the client's parts folder
with the size its record count makes: an in-place part is checked there (its size);
a pulled one is appended, a chunk of at most :data:`PULL_CHUNK` bytes at a time, to a
file of the same name (never a whole part in memory).  The outcomes' ``proof_parts`` then name the client's files,
which is what ``Cut.commit`` keeps.

Why the proof stays exact: a committed epoch's records must outlive the worker that
wrote them (it may be killed in a later epoch), so they are on the client before the
commit, or the epoch is not committed: a part that is not there whole (a worker lost
after its task returned, a timeout, a part of the wrong size) makes the epoch an
aborted one (``EpochRun.abort``), rolled back like a lost worker's, its nodes
expanded and recorded again from the old cut; every file of that epoch in
the client's folder is deleted first (:func:`discard_epoch`: a killed worker's partial
in-place parts too, which no outcome names), and a folder that once failed this way
is not offered again in the search.  So every node the committed counters count has
its record on the client (one per node: :class:`stealsearch.engine.core.worker.WorkerSearch`),
and no record of a rolled-back epoch is kept: an aborted epoch's outcomes name no
client file (:func:`forget_parts`).  A part's name is its search, epoch, rank and lane,
and an epoch number is never reused in a search, so two epochs never write one file; a
part is created, never appended to (:class:`~stealsearch.engine.core.proof.PartWriter`),
so a second writer of one name fails its epoch instead of adding records.  A late
writer of a rolled-back epoch (a stalled worker that wakes) writes to an unlinked file
or a file no cut names: the proof is made of the parts the final cut names, nothing
else in the folder.  A retiring worker's outcome reaches the client through a peer
(:mod:`.tables`): in-place parts are where they are; otherwise the peer
pulls them from the retiring worker while that one waits for its reply, so the
client pulls them from the peer (``EpochOutcome.proof_host``) like any other; a
hand-over whose parts did not arrive makes that pull fail, and the epoch rolls back.
"""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import tempfile
import uuid
from pathlib import Path

from ...core.epochs import handler_name

logger = logging.getLogger("stealsearch")

#: the most bytes of a part one read returns (the client appends chunk after chunk)
PULL_CHUNK = 8 << 20
#: the suffix of a part's file (:func:`stealsearch.engine.core.proof.open_part`)
PART_SUFFIX = ".rec"
#: offer the client's parts folder to workers that share its filesystem (else every
#: part is pulled)
OFFER_FOLDER = True


def token_path(folder, search_id: str) -> Path:
    """The token file of ``search_id`` in the client's parts folder."""
    return Path(folder) / f".{search_id}.token"


def offer_folder(folder, search_id: str) -> str:
    """Write a fresh token for ``search_id`` into the client's parts folder and return
    it (the epoch spec carries it: ``EpochSpec.proof_token``)."""
    token = secrets.token_hex(16)
    with open(token_path(folder, search_id), "w") as fh:
        fh.write(token)
    return token


def reaches_folder(folder, search_id: str, token: str) -> bool:
    """Does this process see the client's parts folder ``folder`` (an absolute path):
    the token the client wrote there, and a file of its own created there?"""
    if not (isinstance(folder, str) and os.path.isabs(folder) and isinstance(token, str)):
        return False
    try:
        with open(token_path(folder, search_id)) as fh:
            if fh.read() != token:
                return False
        probe = Path(folder) / f".{search_id}.probe-{uuid.uuid4().hex}"
        with open(probe, "xb"):
            pass
        os.unlink(probe)
    except OSError:
        return False
    return True


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
        #: search id -> (the client's folder, its token, whether this worker reaches it)
        self.reached: dict[str, tuple[str, str, bool]] = {}

    def in_place(self, search_id: str, folder, token) -> bool:
        """Do this search's parts go straight into the client's ``folder`` from here
        (:func:`reaches_folder`, asked once per search)?"""
        if token is None:
            return False
        seen = self.reached.get(search_id)
        if seen is None or seen[:2] != (folder, token):
            seen = (folder, token, reaches_folder(folder, search_id, token))
            self.reached[search_id] = seen
        return seen[2]

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
        self.reached.pop(search_id, None)
        folder = self.folders.pop(search_id, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def remove_all(self) -> None:
        for search_id in set(self.folders) | set(self.reached):
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


def pull_parts(client, outcomes, folder, width: int, search_id: str, timeout: float,
               figures: dict | None = None) -> str | None:
    """Every part the outcomes name, in ``folder`` (the client's parts folder): an
    in-place part checked there, any other pulled there; the outcomes' ``proof_parts``
    then name the client's files, and each worker is told to delete what it gave (in
    the background).  Returns why a part is not there whole (the caller aborts the
    epoch and deletes its files, :func:`discard_epoch`; the outcomes then name no
    part), or None.  ``timeout``: seconds one chunk's call may take; ``figures``:
    counts added to (parts and bytes: ``pulled``, ``in_place``)."""
    folder = Path(folder)
    jobs = []           # (outcome, host, name, target, records)
    in_place = []       # (outcome, path, name, records)
    for o in outcomes:
        host = o.proof_host or o.address
        for path, records in o.proof_parts:
            name = os.path.basename(str(path))
            if not part_name(search_id, name):
                forget_parts(client, outcomes, search_id)
                return f"{o.address} named a part {name!r} that is not of this search"
            if o.proof_in_place:
                in_place.append((o, str(path), name, int(records)))
            else:
                jobs.append((o, host, name, folder / name, int(records)))
    for o, path, name, records in in_place:
        why = _check_in_place(folder, path, name, records * width * 8)
        if why is not None:
            forget_parts(client, outcomes, search_id)
            return f"the proof part {name} of {o.address} {why}"

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
    if figures is not None:
        for key, value in (("pulled", len(jobs)),
                           ("pulled_bytes", sum(j[4] for j in jobs) * width * 8),
                           ("in_place", len(in_place)),
                           ("in_place_bytes", sum(k for *_, k in in_place) * width * 8)):
            figures[key] = figures.get(key, 0) + value
    _drop(client, by_host, search_id)
    return None


def _check_in_place(folder: Path, path: str, name: str, expected: int) -> str | None:
    """Why an in-place part is not in ``folder`` whole, or None."""
    if os.path.dirname(os.path.abspath(path)) != os.path.abspath(folder):
        return f"is not in the client's folder ({path})"
    try:
        size = os.stat(folder / name).st_size
    except OSError as exc:
        return f"is not in the client's folder ({exc.__class__.__name__})"
    if size != expected:
        return f"has {size} bytes in the client's folder, its records make {expected}"
    return None


def discard_epoch(folder, epoch_prefix: str) -> int:
    """Delete every part of a rolled-back epoch in the client's ``folder``
    (``epoch_prefix``: ``EpochSpec.proof``'s name prefix, ``SEARCH.EPOCH``): pulled or
    written in place, named by an outcome or left by a worker that died; how many."""
    deleted = 0
    for path in Path(folder).glob(f"{epoch_prefix}.*{PART_SUFFIX}"):
        try:
            path.unlink()
            deleted += 1
        except OSError:
            pass
    return deleted


def forget_parts(client, outcomes, search_id: str) -> None:
    """An aborted epoch's outcomes: their pulled parts stay on the workers (deleted
    there in the background), and they name no client file (the epoch loop deletes the
    parts an aborted epoch names, which must be the client's own; the client's files
    of the epoch go with :func:`discard_epoch`)."""
    by_host: dict[str, list[str]] = {}
    for o in outcomes:
        if not o.proof_in_place:
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
