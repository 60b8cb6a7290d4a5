"""What travels on Dask besides the search's own messages (their names, the epoch's
spec and its outcome are in :mod:`stealsearch.engine.core.epochs`): the set-up path's handlers
and the ticket of an epoch's share.

Neither the problem nor the rows travel in a task's arguments (the scheduler's
graph): the problem is pickled once per search in the client and loaded once per
worker (``stealsearch_load``, :mod:`.tables`); each epoch's share of rows is sent to
its worker alone (``stealsearch_share``).  The task carries an :class:`EpochSpec`,
which names the search, and a :class:`ShareTicket`, which says what share to expect;
the worker finds both in its worker extension (:mod:`.tables`).
"""
from __future__ import annotations

from dataclasses import dataclass

#: handlers of the set-up path, served by the worker extension itself (no search object needed)
SETUP_OPS = ("load", "unload", "share", "handover", "handovers", "proof_read",
             "proof_drop")


@dataclass(frozen=True)
class ShareTicket:
    """What the epoch task of one worker expects of its share (the rows dealt to it,
    sent beside the task by ``stealsearch_share``): a few numbers, so that the task's
    arguments stay small whatever the cut."""

    n_rows: int                     # rows dealt (checked against what arrived)
    nbytes: int                     # the encoded share's size
    wait: float                     # seconds the task may wait for it to arrive
