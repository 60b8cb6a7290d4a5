"""Threads inside a worker (lanes) and the node-limit grant wait.

Two levels:

* in this process, one :class:`WorkerSearch` on a stand-in worker (a real event loop
  in a thread; peer calls answered by a table): the lanes' exactness (UTS counts
  against the published sizes, every row conserved), termination credit (no premature
  "exhausted" while one lane holds work long and the others idle), the node-limit
  reservations (count <= grant), and a grant-starved worker ending its epoch at the cut
  while rank 0 never answers (the #11 stall);
* on the shared LocalCluster (``cluster4``): randomized workers x threads-per-worker x
  policy against published UTS sizes and networkx clique numbers, node limits with
  lanes, and the flags.
"""
import asyncio
import random
import threading

import networkx as nx
import numpy as np
import pytest

from stealsearch.engine import StealPolicy, solve
from stealsearch.engine.core.epochs import GONE, NOT_READY, Cut, EpochSpec, handler_name
from stealsearch.engine.core.worker import WorkerSearch
from stealsearch.engine.core.errors import InputError
from stealsearch.engine.transports.sequential import run_sequential
from stealsearch.problems.clique.problem import CliqueProblem
from stealsearch.problems.uts import PRESETS, UTSParams, UTSProblem
from forced import ENDLESS

T1 = PRESETS["T1"][1][0]                                   # 4,130,071 nodes (published)
SMALL = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 9 -b 4 -r 19"))   # 1,031,269 nodes
SMALL_COUNT = 1_031_269
#: generous bound for an epoch to end (a hang check, not a speed figure)
HANG = 120


# -- a stand-in worker: real event loop, peers answered by a table -------------------------
class StandIn:
    """What WorkerSearch touches of a distributed Worker: ``address``, ``loop`` (a
    tornado IOLoop running in its own thread), ``handlers`` (its own coordinator, as the
    plugin routes them) and ``rpc(addr)`` (here: every peer answers ``peer_reply``)."""

    def __init__(self, address, peer_reply=NOT_READY):
        from tornado.ioloop import IOLoop

        self.address = address
        self.peer_reply = peer_reply
        self.search = None
        box, ready = {}, threading.Event()

        def run():
            asyncio.set_event_loop(asyncio.new_event_loop())
            box["loop"] = IOLoop.current()
            ready.set()
            box["loop"].start()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(10)
        self.loop = box["loop"]
        self.handlers = {}
        for op in ("credit", "report", "request_stop", "progress"):
            self.handlers[handler_name(op)] = self._coordinator(op)

    def _coordinator(self, op):
        def handler(search_id, epoch, **msg):
            s = self.search
            if s is None or s.endpoint is None:
                return GONE
            return getattr(s.endpoint, f"handle_{op}")(**msg)
        return handler

    def rpc(self, addr):
        reply = self.peer_reply

        class Peer:
            def __getattr__(self, name):
                async def call(**kwargs):
                    return reply
                return call
        return Peer()

    def close(self):
        self.loop.add_callback(self.loop.stop)
        self.thread.join(10)


def run_epoch_here(problem, rows, *, peers=1, rank=0, threads=1, policy=None,
                   epoch_seconds=60.0, node_limit=None, peer_reply=NOT_READY):
    """One epoch of ``problem`` on a stand-in worker; returns its outcome."""
    addrs = [f"tcp://stand-in:{i}" for i in range(peers)]
    worker = StandIn(addrs[rank], peer_reply)
    spec = EpochSpec(search_id="lanes", epoch=1, peers=addrs, policy=policy or StealPolicy(),
                     incumbent=0, epoch_seconds=epoch_seconds, time_left=None,
                     node_limit=node_limit, t_offset=0.0, peer_timeout=10.0, threads=threads)
    try:
        search = WorkerSearch(worker, spec, rank, rows, problem)
        worker.search = search
        box = {}
        t = threading.Thread(target=lambda: box.update(out=search.run()), daemon=True)
        t.start()
        t.join(HANG)
        assert not t.is_alive(), "the epoch did not end"
        return box["out"]
    finally:
        worker.close()


def frontier(problem):
    return np.ascontiguousarray(problem.root_frontier(), dtype=np.int64)


def rest_count(problem, out) -> int:
    """Nodes of the whole tree = this epoch's nodes + a sequential search of its rows."""
    cut = Cut(batches={"": out.rows}, counters=out.counters.copy())
    return run_sequential(problem, cut=cut).count


def random_policy(rng):
    return StealPolicy(k=rng.choice([1, 4, 8, 32]), release_threshold=rng.choice([2, 8, 32, 128]),
                       acquire=rng.choice([1, 8, 64]), budget=rng.choice([50, 2000]),
                       steal_half=rng.random() < 0.5)


def conserved(out) -> bool:
    st = out.stats
    return st.rows_released == st.rows_acquired + st.rows_given + out.rows_left_shared


# -- in-process: lanes on one worker ---------------------------------------------------------
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_lanes_exhaust_t1_exactly(threads):
    """One worker, T lanes, alone: the whole tree, the published count, credit all back."""
    p = UTSProblem.preset("T1")
    out = run_epoch_here(p, frontier(p), threads=threads)
    assert out.failure is None
    assert out.coordinator["stop_reason"] == "exhausted"
    assert out.coordinator["credit_returned"] == 1.0
    assert len(out.rows) == 0 and int(out.counters[0]) == T1
    assert conserved(out)
    if threads > 1:
        assert out.stats.rows_acquired > 0, "the lanes never shared work"


@pytest.mark.parametrize("seed", range(4))
def test_lanes_randomized_policies_are_exact(seed):
    """Random policy and lane count; a cut at a random moment: nodes done + the rows
    left, searched on, give the published count: nothing lost, nothing twice."""
    rng = random.Random(seed)
    threads = rng.choice([2, 3, 4])
    p = SMALL
    out = run_epoch_here(p, frontier(p), threads=threads, policy=random_policy(rng),
                         epoch_seconds=rng.choice([0.05, 0.2, 60.0]))
    assert out.failure is None and conserved(out)
    assert rest_count(p, out) == SMALL_COUNT


def test_no_premature_exhaustion_while_lanes_come_and_go():
    """UTS T3 (binomial: many tiny subtrees, stacks of a few rows) with 3 lanes that run
    dry and are fed one row at a time, over and over: a credit returned while any lane
    still held a row would stop the search with rows left and a short count."""
    p = UTSProblem.preset("T3")
    pol = StealPolicy(release_threshold=10_000, k=1, acquire=1)    # rows move one by one
    out = run_epoch_here(p, frontier(p), threads=3, policy=pol)
    assert out.coordinator["stop_reason"] == "exhausted"
    assert len(out.rows) == 0 and int(out.counters[0]) == PRESETS["T3"][1][0]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_lanes_never_pass_the_node_grant(threads):
    """A node limit with lanes: the count never passes it (reservations), and the
    search stops at it exactly (every lane draws until the grant is used)."""
    p = SMALL
    limit = 12_345
    out = run_epoch_here(p, frontier(p), threads=threads, node_limit=limit,
                         policy=StealPolicy(budget=700, chunk_seconds=None))
    assert out.coordinator["stop_reason"] == "node_limit"
    assert int(out.counters[0]) == limit
    assert rest_count(p, out) == SMALL_COUNT


@pytest.mark.parametrize("threads", [1, 2])
def test_grant_starved_worker_ends_its_epoch_at_the_cut(threads):
    """#11: rank 1 of 2 uses its grant (limit 10: 5 nodes) and rank 0 never answers (not
    started, or ended): the worker must end its epoch at the cut by itself, with its
    nodes within the grant and every row kept."""
    p = SMALL
    out = run_epoch_here(p, frontier(p), peers=2, rank=1, threads=threads, node_limit=10,
                         epoch_seconds=0.3)
    assert out.stop_reason == "cut" and out.failure is None
    assert int(out.counters[0]) == 5
    assert rest_count(p, out) == SMALL_COUNT


def test_grant_starved_worker_ends_when_rank_0_is_gone():
    p = SMALL
    out = run_epoch_here(p, frontier(p), peers=3, rank=2, threads=2, node_limit=30,
                         epoch_seconds=0.3, peer_reply=GONE)
    assert out.stop_reason == "cut" and int(out.counters[0]) == 10
    assert rest_count(p, out) == SMALL_COUNT


# -- on the cluster ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_randomized_workers_threads_policy_uts(seed, cluster4):
    rng = random.Random(100 + seed)
    workers, threads = rng.choice([1, 2, 3]), rng.choice([1, 2, 3])
    pol = random_policy(rng).with_(victims=rng.choice(["ring", "random", "richest"]),
                                   probes=rng.choice([1, 2, 3]), reserve=rng.choice([0, 2]))
    tree, count = (UTSProblem.preset("T1"), T1) if seed == 0 else (SMALL, SMALL_COUNT)
    r = solve(tree, client=cluster4, workers=workers, threads_per_worker=threads, policy=pol,
              checkpoint_every=rng.choice([0.1, 5.0]))
    assert r.status == "exhausted" and r.count == count, (workers, threads, pol)
    assert r.conservation()["holds"]


@pytest.mark.parametrize("seed", range(2))
def test_randomized_workers_threads_clique_vs_networkx(seed, cluster4):
    rng = random.Random(200 + seed)
    g = nx.gnp_random_graph(rng.choice([90, 120]), rng.choice([0.5, 0.6]), seed=seed)
    omega = max(len(c) for c in nx.find_cliques(g))
    workers, threads = rng.choice([1, 2, 3]), rng.choice([2, 3])
    r = solve(CliqueProblem(g), client=cluster4, workers=workers, threads_per_worker=threads,
              policy=random_policy(rng), checkpoint_every=rng.choice([0.1, 5.0]))
    assert r.status == "optimal" and r.verified and r.objective == omega


def test_node_limit_with_lanes_on_dask(cluster4):
    """#11 with lanes: the grant is per worker, the lanes reserve from it; the count
    never passes the limit (overshoot 0 <= one chunk per worker)."""
    for workers, threads in ((2, 2), (3, 3)):
        r = solve(UTSProblem.preset("T1L"), client=cluster4, workers=workers,
                  threads_per_worker=threads, node_limit=5000)
        assert r.status == "interrupted" and r.stop_reason == "node_limit"
        assert 0 < r.nodes <= 5000
        assert r.conservation()["holds"]


def test_grant_starved_epochs_end_at_their_cuts_on_dask(cluster4):
    """A small node limit and short epochs: workers run out of grant in milliseconds;
    every epoch must still end (cut or limit) and the search stop at the limit."""
    r = solve(UTSProblem.preset("T1L"), client=cluster4, workers=3, threads_per_worker=2,
              node_limit=300, checkpoint_every=0.05)
    assert r.status == "interrupted" and r.stop_reason == "node_limit"
    assert 0 < r.nodes <= 300 and r.conservation()["holds"]


def test_threads_per_worker_input_errors():
    p = UTSProblem.preset("default")
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InputError):
            solve(p, backend="dask", workers=1, threads_per_worker=bad)
    assert solve(p, backend="sequential", threads_per_worker=1).count == 1732


# -- in this process, no Dask: the sequential backend with lanes (stealsearch.engine.transports.lanes) -----------
@pytest.mark.parametrize("threads", [2, 3])
def test_sequential_threads_exact(threads):
    r = solve(UTSProblem.preset("T1"), backend="sequential", threads_per_worker=threads,
              checkpoint_every=0.1)
    assert r.status == "exhausted" and r.count == T1 and r.epochs >= 1
    assert r.backend == f"sequential[{threads} threads]" and r.conservation()["holds"]
    assert r.phases[0]["where"] == "this process"


def test_sequential_threads_clique_and_limits():
    g = nx.gnp_random_graph(150, 0.5, seed=4)
    omega = max(len(c) for c in nx.find_cliques(g))
    r = solve(CliqueProblem(g), backend="sequential", threads_per_worker=2)
    assert r.status == "optimal" and r.verified and r.objective == omega
    r = solve(SMALL, backend="sequential", threads_per_worker=3, node_limit=54_321,
              checkpoint_every=0.05)
    assert r.stop_reason == "node_limit" and r.nodes == 54_321
    r = solve(UTSProblem(UTSParams.parse(ENDLESS)), backend="sequential", threads_per_worker=2,
              time_limit=0.3, checkpoint_every=0.1)     # a tree no machine finishes in 0.3 s
    assert r.status == "interrupted" and r.stop_reason == "time_limit"
    assert r.nodes > 0 and r.conservation()["holds"]


def test_sequential_threads_checkpoint_resume(tmp_path):
    from stealsearch.engine import resume
    d = str(tmp_path / "ck")
    r = solve(SMALL, backend="sequential", threads_per_worker=2, node_limit=200_000,
              checkpoint=d, checkpoint_every=0.05)
    assert r.status == "interrupted"
    r = resume(d, backend="sequential", threads_per_worker=2)
    assert r.status == "exhausted" and r.count == SMALL_COUNT


# -- the shared portion's lane accounting (stealsearch.engine.core.stealstack), step by step ----------------
class _Lane:
    active = True


def test_credit_stays_while_any_lane_holds_rows():
    """Lanes B and C run dry while A still works (for as long as it likes): the credit
    must not go back; it goes back only when A, the last, runs dry with the portion
    empty; then a steal reply's credit activates the thief lane alone."""
    from stealsearch.engine.core.stack import RowCodec
    from stealsearch.engine.core.stealstack import SharedPortion

    sp = SharedPortion(RowCodec(2), lanes=3)
    a, b, c = _Lane(), _Lane(), _Lane()
    assert sp.return_credit_if_empty(b) is None and sp.return_credit_if_empty(c) is None
    assert (sp.active, sp.hungry) == (1, 2)
    for _ in range(3):                      # A keeps working: B and C stay idle, credit stays
        assert sp.return_credit_if_empty(b) is None
    sp.release(np.zeros((4, 2), np.int64))  # A feeds its hungry siblings
    assert len(sp.acquire(8, b)) == 2 and b.active and sp.active == 2   # B's share: 2 idle
    assert len(sp.acquire(8, c)) == 2 and c.active and sp.active == 3   # C's: the rest
    assert sp.return_credit_if_empty(a) is None        # B and C now hold rows
    assert sp.return_credit_if_empty(c) is None        # B still does
    rows, e = sp.steal(1, False)            # a thief may not take from an empty portion
    assert rows is None
    assert sp.return_credit_if_empty(b) == 0           # the last lane ran dry: credit 2^0
    assert sp.credit_exp is None and sp.active == 0 and sp.hungry == 3
    assert sp.return_credit_if_empty(c) is None        # given once only
    sp.receive_credit(3, c)
    assert c.active and sp.active == 1 and sp.credit_exp == 3 and sp.hungry == 2
    with pytest.raises(AssertionError):
        sp.receive_credit(4, a)             # a second credit while holding one: impossible


def test_dilation_stretches_every_chunk_and_counts_stay(monkeypatch):
    """The emulated cluster's seam (StealPolicy.dilation): every chunk of every lane is
    followed by its stretch, every worker period is D times the real one, and the
    count, the rows and the credit are what they are undilated; off, no chunk is
    stretched."""
    from stealsearch.engine.core import worker as worker_mod
    from stealsearch.engine.transports.dask import timeouts

    stretched = []
    real_stretch = WorkerSearch._stretch
    monkeypatch.setattr(WorkerSearch, "_stretch",
                        lambda self, cpu0, wall0: (stretched.append(1),
                                                   real_stretch(self, cpu0, wall0)))
    p = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 7 -b 4 -r 19"))
    expected = run_sequential(p).count
    for dilation in (1.0, 3.0):
        stretched.clear()
        pol = StealPolicy(budget=200, chunk_seconds=None, dilation=dilation)
        out = run_epoch_here(p, frontier(p), threads=2, policy=pol)
        assert out.coordinator["stop_reason"] == "exhausted" and conserved(out)
        assert int(out.counters[0]) == expected and len(out.rows) == 0
        assert len(stretched) == (out.stats.chunks if dilation > 1 else 0)
        periods = worker_mod.Periods(pol)
        assert periods.backoff == pol.idle_backoff * dilation
        assert periods.report == worker_mod.REPORT_INTERVAL * dilation
    saved = timeouts.PEER_TIMEOUT, timeouts.LOAD_RATE
    with timeouts.dilated(4.0):
        assert timeouts.PEER_TIMEOUT == 4 * saved[0] and timeouts.LOAD_RATE == saved[1] / 4
    assert (timeouts.PEER_TIMEOUT, timeouts.LOAD_RATE) == saved
    with pytest.raises(ValueError, match="dilation"):
        StealPolicy(dilation=0.5)


def test_concurrent_probes_keep_every_reply_and_its_credit():
    """``probes`` 2: both victims (stand-ins that always give the whole tree's root rows
    and credit 2^-40) answer each round with rows.  The thief keeps every reply's rows,
    takes the first credit and sends the second back at once; at the cut, the nodes done
    plus the rows left searched on are the tree's count once for its own rows and once
    for each reply: nothing lost, nothing twice; the credit back is its own plus every
    stolen credit but the one it holds."""
    from stealsearch.engine.core.stack import RowCodec

    p = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 6 -b 4 -r 19"))
    full = run_sequential(p).count
    rows = frontier(p)
    e = 40
    reply = {"rows": RowCodec(rows.shape[1]).encode(rows), "n": len(rows), "credit": e,
             "shared": len(rows)}
    out = run_epoch_here(p, rows, peers=3, rank=0, threads=2, epoch_seconds=0.3,
                         policy=StealPolicy(probes=2), peer_reply=reply)
    assert out.failure is None and out.stop_reason == "cut"
    k = out.stats.steals_succeeded
    assert k >= 2 and k % 2 == 0, "every round's two replies both kept"
    assert rest_count(p, out) == full * (1 + k)
    back = out.coordinator["credit_returned"] - 1          # its own credit came back first
    assert round(back * 2 ** e) in (k - 1, k), (back * 2 ** e, k)
