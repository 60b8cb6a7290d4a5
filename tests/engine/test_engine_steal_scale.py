"""Stealing across machines (StealPolicy.remote_rows, demand_wait): a remote steal sized
for the thief's lanes, a thief answered at once instead of held for an on-demand row.

Three levels: the shared portion alone (how many rows a steal takes, its credit); one
WorkerSearch on a stand-in worker (the victim's reply, held or not; the thief saying
how many lanes it has); and the shared LocalCluster, where every search starts with all
its rows on ONE worker whose kernel holds (a gate) until another worker has stolen from
it, so remote steals certainly happen, under random policies with the new options:
the counts are the tree's, every row conserved.
"""
import asyncio
import random
import threading

import numpy as np
import pytest

from stealsearch.engine import StealPolicy
from stealsearch.engine.core.epochs import NOT_READY, EpochSpec
from stealsearch.engine.core.stack import RowCodec
from stealsearch.engine.core.stealstack import SharedPortion
from stealsearch.engine.core.worker import WorkerSearch
from stealsearch.engine.transports.sequential import run_sequential
from stealsearch.problems.uts import UTSParams, UTSProblem
from forced import Gate, hooked_uts
from test_engine_lanes import StandIn, rest_count

SMALL_OPTIONS = "-t 1 -a 3 -d 9 -b 4 -r 19"
SMALL_COUNT = 1_031_269


def _rows(n, width=2):
    return np.arange(n * width, dtype=np.int64).reshape(n, width)


# -- the shared portion ------------------------------------------------------------------
@pytest.mark.parametrize("held, k, half, at_least, taken", [
    (10, 8, True, 0, 5), (10, 8, True, 8, 8), (10, 8, True, 16, 10), (10, 2, False, 0, 2),
    (10, 2, False, 4, 4), (3, 8, True, 16, 3), (1, 8, True, 16, 1), (10, 8, True, 3, 5)])
def test_a_steal_takes_a_row_per_thief_lane_at_least(held, k, half, at_least, taken):
    sp = SharedPortion(RowCodec(2))
    rows = _rows(held)
    sp.release(rows)
    got, e = sp.steal(k, half, at_least)
    assert len(got) == taken and e == 1 and sp.credit_exp == 1
    # the oldest rows went, each once: what is left and what went make the batch
    rest = sp.close()
    assert np.array_equal(np.concatenate([got, rest]), rows)
    assert sp.rows_given == taken


# -- the defaults: multi-process values from three workers on -------------------------------
def test_defaults_leave_one_process_and_two_workers_as_they_were():
    from stealsearch.engine.core.policy import FEW_PROCESSES, MULTI_PROCESS

    old = {"probes": 1, "reserve": 0, "demand_wait": 2.0, "remote_rows": 0,
           "victims": "ring", "chunk_seconds": 0.005}
    assert FEW_PROCESSES == old
    for n in (1, 2):
        assert {k: getattr(StealPolicy().for_workers(n), k) for k in old} == old
    for n in (3, 8, 512):
        assert {k: getattr(StealPolicy().for_workers(n), k) for k in old} == MULTI_PROCESS
    # a value given is kept, whatever the workers (a fixed budget too)
    given = StealPolicy(probes=2, reserve=0, demand_wait=1.0, remote_rows=3,
                        victims="richest", chunk_seconds=None)
    assert given.for_workers(8) == given == given.for_workers(1)
    assert StealPolicy(chunk_seconds=0.003).for_workers(8).chunk_seconds == 0.003
    with pytest.raises(ValueError, match="chunk_seconds"):
        StealPolicy(chunk_seconds=-0.001)
    with pytest.raises(ValueError, match="remote_rows"):
        StealPolicy(remote_rows=-1)
    with pytest.raises(ValueError, match="demand_wait"):
        StealPolicy(demand_wait=float("inf"))


# -- one worker on a stand-in host ---------------------------------------------------------
class Recording(StandIn):
    """A stand-in whose peers answer ``NOT_READY`` and record every call's arguments."""

    def __init__(self, address):
        super().__init__(address, NOT_READY)
        self.calls = []

    def rpc(self, addr):
        calls = self.calls

        class Peer:
            def __getattr__(self, name):
                async def call(**kwargs):
                    calls.append((addr, name, kwargs))
                    return NOT_READY
                return call
        return Peer()


def _worker(problem, rows, policy, *, threads, rank=1, peers=2, epoch_seconds=60.0):
    addrs = [f"tcp://stand-in:{i}" for i in range(peers)]
    host = Recording(addrs[rank])
    spec = EpochSpec(search_id="steal", epoch=1, peers=addrs, policy=policy, incumbent=0,
                     epoch_seconds=epoch_seconds, time_left=None, node_limit=None,
                     t_offset=0.0, peer_timeout=10.0, threads=threads)
    search = WorkerSearch(host, spec, rank, rows, problem)
    host.search = search
    return host, search


def _run_epoch(host, search):
    """``search.run()`` in a thread (as the worker runs it), at most 120 s; the host closed."""
    try:
        box = {}
        t = threading.Thread(target=lambda: box.update(out=search.run()), daemon=True)
        t.start()
        t.join(120)
        assert not t.is_alive(), "the epoch did not end"
    finally:
        host.close()
    return box["out"]


def test_victim_answers_at_once_or_holds_and_sizes_for_the_thief():
    p = UTSProblem(UTSParams.parse(SMALL_OPTIONS))
    rows = np.ascontiguousarray(p.root_frontier(), dtype=np.int64)
    for demand_wait in (0.0, 2.0):
        host, s = _worker(p, rows, StealPolicy(demand_wait=demand_wait, remote_rows=1),
                          threads=2)
        try:
            # the portion is empty, the lanes hold the dealt rows (not started: no chunk)
            reply = s.handle_steal(k=8, half=True, lanes=4)
            assert s.shared.wanted, "an empty portion of a working worker is a demand"
            if demand_wait:
                assert hasattr(reply, "__await__"), "held for the on-demand row"
                reply.close()
            else:
                assert reply == {"n": 0, "shared": 0}, "answered at once, empty"
            # 6 rows shared: half is 3, a thief of 4 lanes takes 4, of 8 lanes all 6
            s.shared.release(_rows(6, rows.shape[1]))
            assert s.handle_steal(k=8, half=True, lanes=4)["n"] == 4
            s.shared.release(_rows(4, rows.shape[1]))
            assert s.handle_steal(k=8, half=True, lanes=8)["n"] == 6
            assert s.shared.credit_exp == 2 and len(s.shared) == 0
        finally:
            host.close()
    host, s = _worker(p, rows, StealPolicy(), threads=2)     # remote_rows 0: half
    try:
        s.shared.release(_rows(6, rows.shape[1]))
        assert s.handle_steal(k=8, half=True, lanes=4)["n"] == 3
    finally:
        host.close()


def test_thief_says_how_many_lanes_it_has():
    """A worker of 3 lanes that runs dry asks its peer with ``lanes=3``."""
    p = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 3 -b 4 -r 19"))
    rows = np.ascontiguousarray(p.root_frontier(), dtype=np.int64)
    host, s = _worker(p, rows, StealPolicy(remote_rows=1, demand_wait=0.0), threads=3,
                      rank=0, epoch_seconds=0.3)
    out = _run_epoch(host, s)
    steals = [kw for _, name, kw in host.calls if name.endswith("steal")]
    assert steals and all(kw["lanes"] == 3 and kw["half"] for kw in steals)
    # nothing stolen (the peer never started): its own tree, whole, with the rows left
    assert out.failure is None and out.stats.steals_succeeded == 0
    assert rest_count(p, out) == run_sequential(p).count


class InFlight(StandIn):
    """A stand-in whose peers hold every steal until ``group`` of them are in flight at
    once (or ``HOLD`` seconds pass: a thief that asks fewer at a time is seen, never
    waited out), then answer ``NOT_READY``; ``most`` is the most seen in flight.  Once
    the first group is answered it stops the search (a stop message): the epoch ends
    there, whatever the machine's speed."""

    HOLD = 5.0

    def __init__(self, address, group):
        super().__init__(address, NOT_READY)
        self.group, self.in_flight, self.most, self.held_out = group, 0, 0, 0
        self.full = None

    def rpc(self, addr):
        stand_in = self

        class Peer:
            def __getattr__(self, name):
                async def call(**kwargs):
                    if not name.endswith("steal"):
                        return NOT_READY
                    if stand_in.full is None:
                        stand_in.full = asyncio.Event()
                    stand_in.in_flight += 1
                    stand_in.most = max(stand_in.most, stand_in.in_flight)
                    if stand_in.in_flight >= stand_in.group:
                        stand_in.full.set()
                    try:
                        await asyncio.wait_for(stand_in.full.wait(), stand_in.HOLD)
                    except asyncio.TimeoutError:
                        stand_in.held_out += 1
                    stand_in.in_flight -= 1
                    if stand_in.in_flight == 0:
                        stand_in.full.clear()
                        stand_in.search.handle_stop("cut")
                    return NOT_READY
                return call
        return Peer()


@pytest.mark.parametrize("policy, at_once", [(StealPolicy(), 8), (StealPolicy(probes=4), 4),
                                             (StealPolicy(probes=1), 1)])
def test_a_thief_of_nine_workers_asks_its_victims_probes_at_a_time(policy, at_once):
    """With 9 workers the defaults ask all 8 peers in one group (one round trip); a
    policy that gives ``probes`` asks that many at a time, never more, each group
    answered before the next goes."""
    assert StealPolicy().for_workers(9).probes == 8
    p = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 3 -b 4 -r 19"))
    rows = np.ascontiguousarray(p.root_frontier(), dtype=np.int64)
    addrs = [f"tcp://stand-in:{i}" for i in range(9)]
    host = InFlight(addrs[0], at_once)
    spec = EpochSpec(search_id="steal", epoch=1, peers=addrs, policy=policy, incumbent=0,
                     epoch_seconds=120.0, time_left=None, node_limit=None, t_offset=0.0,
                     peer_timeout=10.0, threads=2)
    s = WorkerSearch(host, spec, 0, rows, p)
    host.search = s
    out = _run_epoch(host, s)
    assert host.most == at_once and host.held_out == 0
    assert out.failure is None and out.stats.steals_tried == at_once
    assert rest_count(p, out) == run_sequential(p).count


# -- on the cluster: remote steals forced --------------------------------------------------
def _steals(dask_worker=None) -> int:
    """Remote steals made so far by the searches running on this worker."""
    from stealsearch.engine.transports.dask.tables import extension_of

    ext = extension_of(dask_worker)
    if ext is None:
        return 0
    return sum(int(s.stats.steals_succeeded) for s in list(ext.searches.values())
               if hasattr(s, "stats"))


def _open_after_a_steal(client, holder, gate, stop, seen):
    """Open ``gate`` once a worker other than ``holder`` has stolen (``seen`` set), or
    when the search ends or the gate's own limit comes."""
    while not stop.is_set() and not gate.is_open():
        try:
            if any(n for w, n in client.run(_steals).items() if w != holder):
                seen.set()
                break
        except Exception:           # a worker between epochs: look again
            pass
        stop.wait(0.02)
    gate.open()


@pytest.mark.parametrize("seed", range(3))
def test_forced_remote_steals_exact_under_random_policies(seed, cluster4, tmp_path):
    from stealsearch.engine.transports.dask.calls import live_workers
    from stealsearch.engine.transports.dask.driver import first_cut, run_dask

    rng = random.Random(3300 + seed)
    workers, threads = rng.choice([2, 3, 4]), rng.choice([1, 2, 3])
    policy = StealPolicy(
        remote_rows=rng.choice([0, 1, 2]), demand_wait=rng.choice([0.0, 0.5, 2.0]),
        probes=rng.choice([1, 2, 4]), reserve=rng.choice([0, 2]),
        victims=rng.choice(["ring", "random", "richest"]),
        chunk_seconds=rng.choice([0.001, 0.005]), steal_half=rng.random() < 0.8,
        k=rng.choice([1, 4, 8]), seed=seed)
    gate = Gate(tmp_path)
    p = hooked_uts(SMALL_OPTIONS, tmp_path, gate=gate)
    # every row on one worker: the others hold nothing and must steal from it, which
    # holds (expands nothing) until one of them has
    cut = first_cut(p, 40)
    holder = live_workers(cluster4)[0]
    cut.batches = {holder: cut.batches[""]}
    stop, seen = threading.Event(), threading.Event()
    opener = threading.Thread(target=_open_after_a_steal, daemon=True,
                              args=(cluster4, holder, gate, stop, seen))
    opener.start()
    try:
        r = run_dask(p, cluster4, workers=workers, threads_per_worker=threads,
                     policy=policy, cut=cut)
    finally:
        stop.set()
        opener.join(30)
    assert seen.is_set(), "the gate opened by its limit: nobody stole while it held"
    assert r.status == "exhausted" and r.count == SMALL_COUNT, (workers, threads, policy)
    assert r.conservation()["holds"]
    thieves = [w for w in r.workers if w.worker != holder]
    assert sum(w.steals_succeeded for w in thieves) > 0, (workers, threads, policy)
