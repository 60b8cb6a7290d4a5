"""The stealstack's worker extension on the workers of a real in-process LocalCluster (two
workers, threads of this process, so that the tests can hold each worker's objects):
the plugin attaches one extension per worker and re-registering it reuses that
extension and keeps a running search (held at a gate while the plugin is registered
anew), a closed worker's extension keeps no share, and two workers of one process have
state of their own."""
import concurrent.futures
import threading
import uuid

import numpy as np
import pytest

from stealsearch.engine import solve
from stealsearch.engine.core.epochs import GONE, handler_name
from stealsearch.engine.core.worker import WorkerSearch
from stealsearch.engine.transports.dask import PLUGIN_NAME, StealstackPlugin
from stealsearch.engine.transports.dask.tables import (EXTENSION_NAME, REAPER_NAME, Share,
                                                       StealstackExtension, load_count,
                                                       loaded_problems, shares_held)
from stealsearch.problems.uts import UTSProblem
from procutil import wait_until

#: nodes of the UTS preset "default"
DEFAULT_COUNT = 1732
#: seconds any wait of these tests may take before it fails the test
WAIT = 60.0


@pytest.fixture
def cluster():
    """A client on a fresh in-process LocalCluster of two workers, the plugin registered;
    yields (client, {address: Worker})."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                      dashboard_address=None) as local, Client(local) as client:
        client.register_plugin(StealstackPlugin(), name=PLUGIN_NAME)
        workers = {w.address: w for w in local.workers.values()}
        assert len(workers) == 2
        yield client, workers


def _extensions(workers) -> dict:
    return {a: w.extensions[EXTENSION_NAME] for a, w in workers.items()}


def _rpc(client, addr, op, **kwargs):
    async def call():
        return await getattr(client.rpc(addr), handler_name(op))(**kwargs)
    return client.sync(call)


def _register_anew(client) -> None:
    """Register the plugin again so that it reaches the workers (the scheduler skips an
    idempotent registration of a name it has): every worker tears the old plugin down
    and sets the new one up."""
    from distributed.protocol.pickle import dumps

    replies = client.sync(client.scheduler.register_worker_plugin,
                          plugin=dumps(StealstackPlugin()), name=PLUGIN_NAME,
                          idempotent=False)
    assert len(replies) == 2 and all(r["status"] == "OK" for r in replies.values()), replies


def test_the_plugin_attaches_one_extension_per_worker(cluster):
    client, workers = cluster
    found = _extensions(workers)
    assert all(isinstance(e, StealstackExtension) for e in found.values())
    assert len({id(e) for e in found.values()}) == 2          # one each
    for addr, ext in found.items():
        worker = workers[addr]
        assert ext.worker is worker and not ext.closed
        assert worker.handlers[handler_name("share")] == ext.handle_share
        assert worker.periodic_callbacks[REAPER_NAME].is_running()
    reapers = {a: workers[a].periodic_callbacks[REAPER_NAME] for a in workers}
    plugins = {a: workers[a].plugins[PLUGIN_NAME] for a in workers}

    client.register_plugin(StealstackPlugin(), name=PLUGIN_NAME)     # idempotent: a no-op
    _register_anew(client)                                            # torn down, set up
    for addr, worker in workers.items():
        assert worker.plugins[PLUGIN_NAME] is not plugins[addr]      # the new plugin ran
        ext = worker.extensions[EXTENSION_NAME]
        assert ext is found[addr] and not ext.closed
        assert worker.handlers[handler_name("share")] == ext.handle_share
        # one reaper: the closed extension's stopped, the reopened one's running
        assert not reapers[addr].is_running()
        assert worker.periodic_callbacks[REAPER_NAME].is_running()


def test_re_registering_the_plugin_keeps_a_running_search(cluster, monkeypatch):
    """Every epoch task of a search is held at a gate once its search object is
    registered (before it searches); meanwhile the plugin is registered anew.  The same
    extensions still hold the same search objects, the router reaches them, and once the
    gate opens the search ends exact, without a rollback."""
    client, workers = cluster
    before = _extensions(workers)
    gate = threading.Event()
    run = WorkerSearch.run

    def gated_run(self):
        if not gate.wait(WAIT):
            raise RuntimeError("the test never opened the gate")
        return run(self)

    monkeypatch.setattr(WorkerSearch, "run", gated_run)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(solve, UTSProblem.preset("default"), client=client,
                         checkpoint_every=WAIT)
    try:
        wait_until(lambda: future.done() or all(e.searches for e in before.values()), WAIT,
                   "both workers run their epoch task")
        assert not future.done(), future.result()
        running = {a: dict(e.searches) for a, e in before.items()}

        _register_anew(client)

        for addr, worker in workers.items():
            ext = worker.extensions[EXTENSION_NAME]
            assert ext is before[addr] and not ext.closed
            assert ext.searches == running[addr]
            for (search_id, epoch), search in running[addr].items():
                assert ext.lookup(search_id, epoch) is search
                assert _rpc(client, addr, "ping", search_id=search_id, epoch=epoch) == "ok"
    finally:
        gate.set()
        result = future.result(timeout=WAIT)
        pool.shutdown()
    assert result.status == "exhausted" and result.count == DEFAULT_COUNT
    assert result.conservation()["holds"]
    assert result.recoveries == 0
    assert len(result.info["last_epoch_workers"]) == 2
    wait_until(lambda: not any(e.searches for e in before.values()), WAIT,
               "the epoch tasks returned")


def test_a_closed_workers_extension_refuses_new_shares(cluster):
    """A worker retired from the cluster closes: its extension drops the share it held,
    removes its handlers, refuses any share offered later, and an epoch task that would
    wait there for a share gives up at once."""
    client, workers = cluster
    addr = sorted(workers)[0]
    worker, ext = workers[addr], workers[addr].extensions[EXTENSION_NAME]
    sid = "closed-" + uuid.uuid4().hex[:8]
    rows = np.arange(12, dtype=np.int64)
    from distributed.protocol import to_serialize

    reply = _rpc(client, addr, "share", search_id=sid, epoch=1,
                 payload=to_serialize(rows.tobytes()), n_rows=3, keep=WAIT)
    assert reply["status"] == "ok" and ext.shares

    client.retire_workers(workers=[addr], close_workers=True)
    wait_until(lambda: ext.closed, WAIT, "the retired worker's extension closed")
    assert not ext.shares
    assert all(handler_name(op) not in worker.handlers for op in ("share", "load", "steal"))
    assert REAPER_NAME not in worker.periodic_callbacks
    assert not ext.add_share((sid, 2), Share(rows.tobytes(), 3, WAIT))
    assert ext.handle_share(sid, 3, rows.tobytes(), 3, WAIT) == {"status": "dropped"}
    assert not ext.shares and ext.is_ended(sid)
    assert ext.wait_for_share((sid, 2), WAIT) == (None, True)       # at once: closed
    assert ext.wait_for_problem((sid, 2), WAIT) is None


def test_two_workers_of_one_process_do_not_see_each_others_problems(cluster):
    """A problem loaded on one worker (by the real ``stealsearch_load``) and a share sent
    to it are that worker's alone; the other worker of the same process holds neither,
    and the teardown of the search on one leaves the other's untouched."""
    from distributed.protocol import to_serialize
    from distributed.protocol.pickle import dumps

    client, workers = cluster
    a, b = sorted(workers)
    ext = _extensions(workers)
    sid = "mine-" + uuid.uuid4().hex[:8]
    blob = dumps(UTSProblem.preset("default"))
    loads_before = client.run(load_count)

    reply = _rpc(client, a, "load", search_id=sid, blob=to_serialize(blob), keep_idle=WAIT)
    assert reply["status"] == "ok" and reply["loaded"], reply
    assert client.run(loaded_problems) == {a: [sid], b: []}
    loads_after = client.run(load_count)
    assert loads_after == {a: loads_before[a] + 1, b: loads_before[b]}
    assert ext[a].wait_for_problem((sid, 1), 0.0) is not None
    assert ext[b].wait_for_problem((sid, 1), 0.0) is None

    rows = np.arange(12, dtype=np.int64)
    reply = _rpc(client, a, "share", search_id=sid, epoch=1,
                 payload=to_serialize(rows.tobytes()), n_rows=3, keep=WAIT)
    assert reply["status"] == "ok"
    assert client.run(shares_held) == {a: 1, b: 0}
    assert ext[b].take_share((sid, 1)) is None

    # the same search loaded on b too, then ended on a only
    reply = _rpc(client, b, "load", search_id=sid, blob=to_serialize(blob), keep_idle=WAIT)
    assert reply["status"] == "ok" and reply["loaded"], reply
    assert _rpc(client, a, "unload", search_id=sid) == "ok"
    assert client.run(loaded_problems) == {a: [], b: [sid]}
    assert client.run(shares_held) == {a: 0, b: 0}
    assert ext[a].is_ended(sid) and not ext[b].is_ended(sid)
    assert _rpc(client, a, "stop", search_id=sid, epoch=1, reason="abort") == GONE
    assert ext[a].stop_of((sid, 1)) == "abort" and ext[b].stop_of((sid, 1)) is None
    assert _rpc(client, b, "unload", search_id=sid) == "ok"
    assert client.run(loaded_problems) == {a: [], b: []}
