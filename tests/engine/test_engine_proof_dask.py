"""Proofs from Dask workers and from the ramp-up onto them: each worker's parts on the
client before its epoch is committed, written there in place (these workers share the
client's filesystem) or pulled (forced: the folder not offered, ``OFFER_FOLDER``).
Random G(n <= 40) with random steal policies and threads per worker, over epochs that
end at node counts (forced: NodeEpochs), on both routes; a worker killed inside an
epoch (forced: the proof kernel hooked to kill its process); a pull that fails
(forced: the client's pull refuses once) and an in-place part cut short (forced: the
client's check truncates it first) each roll the epoch back; a search stopped at a
node limit with a checkpoint and finished by ``resume``; a ramp-up handed over at a
node count; the command line.  Every proof is checked by our checker against the
model this file writes from the graph's edges (VeriPB too, where a ``veripb`` is on
PATH), and has one record per node."""
import functools
import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import dask
import numpy as np
import pytest

from stealsearch.check_proof import ProofRejected, check_files
from stealsearch.cli import main
from stealsearch.engine import StealPolicy, resume, solve
from stealsearch.engine.core.checkpoint import read_manifest
from stealsearch.engine.core.loop import run_epochs
from stealsearch.engine.core.policy import VICTIM_ORDERS
from stealsearch.engine.core.proof import ProofParts
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.engine.transports.dask.driver import DaskTransport
from stealsearch.engine.transports.rampup import Place, run_rampup
from stealsearch.problems.clique import CliqueProblem, gnp
import forced
from forced import HookedClique, NodeEpochs
from procutil import _alive, end_processes

VERIPB = shutil.which("veripb")
WORKERS = 2
SEEN_PIDS: set[int] = set()


@pytest.fixture(scope="module")
def two_processes():
    """Two worker processes; a killed one is restarted by its nanny."""
    config = {"distributed.deploy.lost-worker-timeout": "600s"}
    with dask.config.set(config), dask_client(workers=WORKERS) as client:
        SEEN_PIDS.update(client.run(os.getpid).values())
        yield client
        SEEN_PIDS.update(client.run(os.getpid, on_error="ignore").values())
    end_processes(sorted(SEEN_PIDS))
    assert not any(_alive(p) for p in SEEN_PIDS), "worker processes survived the cluster"


@pytest.fixture
def cluster(two_processes):
    """The module's cluster with both workers present: after the kill test, the nanny's
    new worker may still be starting (on a loaded machine, for seconds)."""
    two_processes.wait_for_workers(WORKERS, timeout=120)
    SEEN_PIDS.update(two_processes.run(os.getpid).values())
    return two_processes


def rebuilt_model(path: Path, graph) -> Path:
    """The canonical max-clique model, from the graph's edges alone (not the producer's
    writer): one clause per non-edge u < v, the objective over every vertex."""
    n, adjacent = graph.n, set()
    for u, v in graph.edges():
        adjacent.update({(int(u), int(v)), (int(v), int(u))})
    clauses = [f"1 ~x{u + 1} 1 ~x{v + 1} >= 1 ;" for u in range(n) for v in range(u + 1, n)
               if (u, v) not in adjacent]
    objective = "min: " + " ".join(f"1 ~x{v}" for v in range(1, n + 1)) + " ;"
    path.write_text("\n".join([f"* #variable= {n} #constraint= {len(clauses)}", objective]
                              + clauses) + "\n")
    return path


def assert_proved(result, prefix, graph, tmp_path):
    """One record per node, and the proof accepted against the rebuilt model by our
    checker (and by VeriPB where it is installed, which must agree)."""
    info = result.info["proof"]
    assert result.status == "optimal" and info["written"], info
    assert info["records"] == result.nodes and info["best"] == result.objective
    model = rebuilt_model(tmp_path / "rebuilt.opb", graph)
    assert Path(f"{prefix}.opb").read_text().split("\n")[0] == model.read_text().split("\n")[0]
    check_files(model, f"{prefix}.pbp")
    if VERIPB is not None:
        out = subprocess.run([VERIPB, str(model), f"{prefix}.pbp"], capture_output=True,
                             text=True, timeout=600)
        text = out.stdout + out.stderr
        assert out.returncode == 0 and "Verification succeeded" in text \
            and "did not claim contradiction" not in text, text[-2000:]


def leftovers(client) -> dict:
    """What the workers still hold of any search: running epochs, problems, proof
    folders (none may be left after a search)."""
    def probe(dask_worker=None):
        ext = dask_worker.extensions.get("stealsearch")
        if ext is None:
            return (0, 0, 0)
        return (len(ext.searches), len(ext.problems), len(ext.proof.folders))
    return client.run(probe, on_error="ignore")


def random_policy(rng):
    return StealPolicy(k=rng.choice([1, 2, 8]), release_threshold=rng.choice([1, 2, 8]),
                       acquire=rng.choice([1, 4, 64]), budget=rng.choice([1, 5, 50]),
                       chunk_seconds=None, steal_half=rng.random() < 0.5,
                       victims=rng.choice(VICTIM_ORDERS))


CASES = [(int(n), float(p), s) for s, (n, p) in enumerate(zip(
    np.random.default_rng(351).integers(25, 41, 5),
    np.random.default_rng(352).choice([0.5, 0.7, 0.8, 0.9], 5)))]


ROUTES = ("in_place", "pulled")


def take_route(monkeypatch, route: str):
    """Make every part reach the client by ``route``: written into its folder in place
    (these workers share its filesystem), or pulled (the folder not offered)."""
    from stealsearch.engine.transports.dask import proof_parts

    if route == "pulled":
        monkeypatch.setattr(proof_parts, "OFFER_FOLDER", False)


def assert_route(result, route: str):
    """Every part came the way ``route`` says, none failed."""
    figures = result.info["proof_pull"]
    assert figures[route] > 0 and figures["failed"] == 0, figures
    assert all(figures[other] == 0 for other in ROUTES if other != route), figures


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("n,p,s", CASES)
def test_dask_proof_of_random_graphs_over_forced_epochs(cluster, tmp_path, monkeypatch,
                                                        n, p, s, route):
    """Random G(n, p) on 2 workers, 1-2 lanes each, a random policy, each epoch cut
    after a few nodes: the parts of every worker, lane and epoch, written into the
    client's folder or pulled there, make one proof of the sequential optimum."""
    take_route(monkeypatch, route)
    rng = random.Random(s)
    graph = gnp(n, p, seed=s)
    plain = solve(CliqueProblem(graph), backend="sequential")
    problem = CliqueProblem(graph).proof_problem()
    prefix = str(tmp_path / "dask")
    parts = ProofParts(prefix, problem.proof_record_width)
    transport = DaskTransport(cluster, workers=WORKERS, threads_per_worker=rng.choice([1, 2]))
    try:
        r = run_epochs(problem, NodeEpochs(transport, rng.choice([3, 10, 40])),
                       policy=random_policy(rng), checkpoint_every=3600, proof=parts)
    finally:
        parts.cleanup()
    assert r.objective == plain.objective
    assert_route(r, route)
    assert_proved(r, prefix, graph, tmp_path)
    assert all(v == (0, 0, 0) for v in leftovers(cluster).values()), leftovers(cluster)


class HookedProofClique(HookedClique):
    """The kill hook of tests/engine/forced.py around the proof kernel too (a proof's
    stacks run that kernel, not ``kernel``)."""

    @property
    def proof_kernel(self):
        inner = super().proof_kernel
        if inner is None or os.getpid() == self.test_pid:
            return inner
        return functools.partial(forced._hooked_chunk, inner, self)


#: ~4,000 nodes with the colour bound: a kill after at most 1/3 of them always happens
KILL_GRAPH = gnp(90, 0.8, seed=5)


def test_dask_proof_through_a_kill(cluster, tmp_path, monkeypatch):
    """A worker kills itself inside a chunk of an epoch after a random number of nodes:
    the epoch rolls back, every part of it in the client's folder deleted (the dead
    worker's, written there in place, with them), and the proof of the whole search
    still has one record per node and checks."""
    from stealsearch.engine.transports.dask import driver

    real, deleted = driver.discard_epoch, []
    monkeypatch.setattr(driver, "discard_epoch",
                        lambda *a: deleted.append(real(*a)) or deleted[-1])
    plain = solve(CliqueProblem(KILL_GRAPH), backend="sequential")
    most = max(2, plain.nodes // (WORKERS + 1))
    rng = np.random.default_rng(35)
    problem = HookedProofClique(KILL_GRAPH, bound="colour").hook(
        tmp_path, kill_after=int(rng.integers(1, most + 1)))
    prefix = str(tmp_path / "killed")
    r = solve(problem, client=cluster, workers=WORKERS, checkpoint_every=0.2, proof=prefix)
    assert problem.killed() == 1 and r.recoveries >= 1
    assert r.objective == plain.objective
    # the killed worker had created its part in the client's folder before it searched
    assert r.info["proof_pull"]["in_place"] > 0 and sum(deleted) >= 1, deleted
    assert_proved(r, prefix, KILL_GRAPH, tmp_path)


def test_a_failed_pull_rolls_the_epoch_back(cluster, tmp_path, monkeypatch):
    """The first pull of a part fails (forced: the client's pull refuses once): the epoch
    is rolled back, its nodes searched again, and the proof still checks."""
    from stealsearch.engine.transports.dask import proof_parts

    take_route(monkeypatch, "pulled")
    real, calls = proof_parts.pull_part, {"n": 0}

    async def failing_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise proof_parts.PullFailed("refused by the test")
        return await real(*args, **kwargs)

    monkeypatch.setattr(proof_parts, "pull_part", failing_once)
    graph = gnp(40, 0.8, seed=7)
    prefix = str(tmp_path / "pull")
    r = solve(CliqueProblem(graph), client=cluster, workers=WORKERS, proof=prefix)
    assert r.recoveries >= 1 and r.info["proof_pull"]["failed"] == 1 and r.nodes_redone > 0
    assert_proved(r, prefix, graph, tmp_path)
    assert not list(Path(tmp_path).glob("pull.parts-*")), "the parts folder was left"


def test_a_short_in_place_part_rolls_the_epoch_back(cluster, tmp_path, monkeypatch):
    """A part a worker wrote into the client's folder is one record short when the
    client checks it (forced: truncated just before the first check): the epoch is
    rolled back, its parts deleted, the folder offered no more (the epochs after it
    pull their parts), and the proof still has one record per node and checks."""
    from stealsearch.engine.transports.dask import proof_parts

    real, calls = proof_parts._check_in_place, {"n": 0}

    def truncating_once(folder, path, name, expected):
        calls["n"] += 1
        if calls["n"] == 1:
            os.truncate(Path(folder) / name, max(0, os.path.getsize(Path(folder) / name) - 8))
        return real(folder, path, name, expected)

    monkeypatch.setattr(proof_parts, "_check_in_place", truncating_once)
    graph = gnp(40, 0.8, seed=7)
    prefix = str(tmp_path / "short")
    r = solve(CliqueProblem(graph), client=cluster, workers=WORKERS, proof=prefix)
    figures = r.info["proof_pull"]
    assert r.recoveries >= 1 and figures["failed"] == 1 and r.nodes_redone > 0, figures
    assert figures["pulled"] > 0 and figures["in_place"] == 0, figures
    assert_proved(r, prefix, graph, tmp_path)
    assert not list(Path(tmp_path).glob("short.parts-*")), "the parts folder was left"


def test_a_worker_reaches_the_folder_only_with_its_token(tmp_path):
    """A worker writes into the client's folder only where it reads the token the client
    wrote there, at that absolute path, and can create a file there."""
    from stealsearch.engine.transports.dask import proof_parts

    token = proof_parts.offer_folder(tmp_path, "abc")
    folder = os.path.abspath(tmp_path)
    assert proof_parts.reaches_folder(folder, "abc", token)
    assert not proof_parts.reaches_folder(folder, "abc", token[::-1])
    assert not proof_parts.reaches_folder(folder, "abd", token)
    assert not proof_parts.reaches_folder(os.path.relpath(folder), "abc", token)
    assert not proof_parts.reaches_folder(str(tmp_path / "none"), "abc", token)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".abc.token"], "a probe was left"
    parts = proof_parts.WorkerParts(None)
    assert parts.in_place("abc", folder, token) and not parts.in_place("abc", folder, None)
    assert not parts.in_place("abc", folder, "other")
    parts.remove_all()
    assert not parts.reached and not parts.folders


def test_checkpointed_stop_on_dask_then_resume_finishes_the_proof(cluster, tmp_path):
    """Stopped at a node limit on 2 workers (no proof written, the parts kept in the
    checkpoint), resumed on the workers with a proof: the proof of the whole search."""
    graph = gnp(40, 0.9, seed=3)
    plain = solve(CliqueProblem(graph), backend="sequential")
    ck = str(tmp_path / "ck")
    first = solve(CliqueProblem(graph), client=cluster, workers=WORKERS, checkpoint=ck,
                  node_limit=max(1, plain.nodes // 3), proof=str(tmp_path / "first"))
    assert first.status == "interrupted"
    assert not first.info.get("proof", {}).get("written")
    assert not Path(tmp_path / "first.pbp").exists()
    assert read_manifest(ck)["proof_parts"]
    prefix = str(tmp_path / "resumed")
    r = resume(ck, client=cluster, workers=WORKERS, proof=prefix)
    assert r.nodes >= plain.nodes // 3 and r.objective == plain.objective
    assert_proved(r, prefix, graph, tmp_path)


@pytest.mark.parametrize("threads", [1, 2])
def test_rampup_proof_handed_over_at_a_node_count(cluster, tmp_path, threads):
    """Phase 1 (one stack, or lanes) holds at a node count and hands its cut over to
    the workers: its parts continue into phase 2's, and the proof covers both."""
    graph = gnp(40, 0.9, seed=11 + threads)
    plain = solve(CliqueProblem(graph), backend="sequential")
    prefix = str(tmp_path / "ramp")
    hold = max(1, plain.nodes // 4)
    r = run_rampup(CliqueProblem(graph).proof_problem(), place=Place(client=cluster,
                                                                     workers=WORKERS),
                   grace=3600, handover_nodes=hold, first_threads=threads,
                   policy=StealPolicy(budget=1, chunk_seconds=None), proof=prefix)
    assert r.phases[0]["nodes"] == hold and r.phases[1]["where"] == "cluster"
    assert r.phases[1]["nodes"] > 0 and r.objective == plain.objective
    assert_proved(r, prefix, graph, tmp_path)


def test_cli_proves_on_two_workers(tmp_path, capsys):
    """``--workers 2 --no-ramp-up --prove`` on the command line (its own LocalCluster):
    the proof is written and checked by ``check-proof``."""
    graph = gnp(30, 0.8, seed=4)
    path = tmp_path / "g.col"
    edges = list(graph.edges())
    path.write_text(f"p edge {graph.n} {len(edges)}\n"
                    + "".join(f"e {u + 1} {v + 1}\n" for u, v in edges))
    prefix = str(tmp_path / "cli")
    assert main(["clique", str(path), "--workers", "2", "--no-ramp-up", "--prove",
                 prefix]) == 0
    assert "proof" in capsys.readouterr().out
    assert main(["check-proof", prefix, "--model",
                 str(rebuilt_model(tmp_path / "m.opb", graph))]) == 0
    try:
        check_files(f"{prefix}.opb", f"{prefix}.pbp")
    except ProofRejected as exc:       # pragma: no cover - the assertion's message
        pytest.fail(str(exc))


class ProofKernelHooked(CliqueProblem):
    """A clique problem whose proof kernel is wrapped by ``hook`` in every process but
    the test's (``test_pid``)."""

    @property
    def proof_kernel(self):
        inner = super().proof_kernel
        if inner is None or os.getpid() == self.test_pid:
            return inner
        return functools.partial(type(self).hook, inner, self)


class HeldCliqueProblem(ProofKernelHooked):
    """A clique search whose every process but the test's holds (expands nothing) once
    it has expanded ``after`` nodes, until the gate opens."""

    def hold_after(self, folder, after: int):
        self.gate, self.after = forced.Gate(folder), int(after)
        self.test_pid, self.token = os.getpid(), os.urandom(8).hex()
        return self

    @staticmethod
    def hook(*args):
        return _hold_after_nodes(*args)


def _hold_after_nodes(inner, problem, stack, top, budget, mode, incumbent, counters,
                      solution, *data):
    done = _held_nodes.get(problem.token, 0)
    if done >= problem.after and not problem.gate.is_open():
        forced.time.sleep(forced.GATE_POLL)
        return top, forced.BUDGET, 0
    before = int(counters[forced.NODES])
    out = inner(stack, top, min(budget, problem.after - done) if done < problem.after
                else budget, mode, incumbent, counters, solution, *data)
    _held_nodes[problem.token] = done + int(counters[forced.NODES]) - before
    return out


def test_time_limit_stop_on_dask_then_resume_finishes_the_proof(cluster, tmp_path):
    """A proof's search on 2 workers stopped by its time limit, with a checkpoint (its
    last epoch ended by the limit is a cut, committed with the workers' parts), then
    resumed on the workers with a proof: the proof of the whole search.  The stop is
    forced: every worker holds once it has expanded a few nodes, until the test opens
    the gate after the first run, so the search cannot end before its time limit
    however fast the machine."""
    graph = KILL_GRAPH
    plain = solve(CliqueProblem(graph), backend="sequential")
    problem = HeldCliqueProblem(graph, bound="colour").hold_after(tmp_path, 5)
    ck = str(tmp_path / "ck")
    first = solve(problem, client=cluster, workers=WORKERS, checkpoint=ck, time_limit=1.0,
                  proof=str(tmp_path / "first"))
    problem.gate.open()
    assert first.status == "interrupted" and first.stop_reason == "time_limit"
    assert not Path(tmp_path / "first.pbp").exists()
    assert first.info["proof"]["records"] == first.nodes
    assert sum(k for _, k, _ in read_manifest(ck)["proof_parts"]) == first.nodes
    prefix = str(tmp_path / "resumed")
    r = resume(ck, client=cluster, workers=WORKERS, proof=prefix)
    assert r.nodes > first.nodes and r.objective == plain.objective
    assert_proved(r, prefix, graph, tmp_path)


def test_cli_resume_on_the_workers_finishes_a_proof(cluster, tmp_path, capsys):
    """The command line: a proof's search stopped with a checkpoint on the module's
    workers, then ``resume DIR --workers 2 --no-ramp-up --prove`` (on a LocalCluster
    of its own, from the first node: not a ramp-up): the proof of the whole search."""
    graph = gnp(40, 0.9, seed=3)
    plain = solve(CliqueProblem(graph), backend="sequential")
    path = tmp_path / "g.col"
    edges = list(graph.edges())
    path.write_text(f"p edge {graph.n} {len(edges)}\n"
                    + "".join(f"e {u + 1} {v + 1}\n" for u, v in edges))
    ck, prefix = str(tmp_path / "ck"), str(tmp_path / "cli")
    assert main(["clique", str(path), "--scheduler", cluster.scheduler.address,
                 "--no-ramp-up", "--prove", str(tmp_path / "first"),
                 "--checkpoint", ck, "--node-limit", str(max(1, plain.nodes // 3)),
                 "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["status"] == "interrupted" and first["stop_reason"] == "node_limit"
    assert main(["resume", ck, "--workers", "2", "--no-ramp-up", "--prove", prefix,
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backend"].startswith("dask") and out["status"] == "optimal", out["backend"]
    assert out["info"]["proof"]["records"] == out["nodes"]
    assert main(["check-proof", prefix, "--model",
                 str(rebuilt_model(tmp_path / "m.opb", graph))]) == 0


#: per hooked problem (its token), nodes this process expanded
_held_nodes: dict = {}


def _hold_after_a_node(inner, problem, stack, top, budget, mode, incumbent, counters,
                       solution, *data):
    """The victim's proof kernel: once it has expanded a node, it marks a file and holds
    (expands nothing) until the gate opens; other processes search on."""
    if os.getpid() == problem.victim_pid and _held_nodes.get(problem.token, 0) \
            and not problem.gate.is_open():
        if not os.path.exists(problem.mark):
            with open(problem.mark, "w"):
                pass
        forced.time.sleep(forced.GATE_POLL)
        return top, forced.BUDGET, 0
    before = int(counters[forced.NODES])
    out = inner(stack, top, budget, mode, incumbent, counters, solution, *data)
    _held_nodes[problem.token] = _held_nodes.get(problem.token, 0) \
        + int(counters[forced.NODES]) - before
    return out


class HeldVictimClique(ProofKernelHooked):
    """A clique search whose victim process holds after its first node (see above)."""

    def hold(self, folder, victim_pid: int):
        self.gate = forced.Gate(folder)
        self.mark = os.path.join(str(folder), "victim-searched")
        self.victim_pid, self.test_pid = victim_pid, os.getpid()
        self.token = os.urandom(8).hex()
        return self

    @staticmethod
    def hook(*args):
        return _hold_after_a_node(*args)


def test_a_retired_worker_hands_its_pulled_parts_over(tmp_path, monkeypatch):
    """As below, every part pulled (the folder not offered): the peer that takes the
    hand-over pulls the retiring worker's parts first, and the client pulls them from
    that peer.  On a cluster of its own (the retired worker does not come back)."""
    take_route(monkeypatch, "pulled")
    with dask_client(workers=WORKERS) as client:
        pids = set(client.run(os.getpid).values())
        try:
            r = retire_one_mid_epoch(client, tmp_path)
        finally:
            pids.update(client.run(os.getpid, on_error="ignore").values())
    end_processes(sorted(pids))
    assert_route(r, "pulled")


def test_a_retired_worker_hands_its_parts_over(cluster, tmp_path):
    """A worker retired mid-epoch after it expanded a node (forced: it holds there until
    the retire is done): its outcome reaches the client through its peer, its parts in
    the client's folder already, and the epoch is committed without a rollback; the
    proof checks.  Last in the module: the retired worker does not come back."""
    r = retire_one_mid_epoch(cluster, tmp_path)
    assert_route(r, "in_place")


def retire_one_mid_epoch(cluster, tmp_path):
    """The retire of the two tests above, its proof checked; the result."""
    import threading

    graph = KILL_GRAPH
    plain = solve(CliqueProblem(graph, heuristic="none"), backend="sequential")
    pids = dict(cluster.run(os.getpid))
    victim = sorted(pids)[1]
    problem = HeldVictimClique(graph, bound="colour", heuristic="none").hold(
        tmp_path, pids[victim])
    retired = {}

    def retire_once_held():
        try:
            deadline = forced.time.monotonic() + 60
            while forced.time.monotonic() < deadline and not os.path.exists(problem.mark):
                forced.time.sleep(0.01)
            retired.update(cluster.retire_workers([victim]))
        finally:
            problem.gate.open()

    t = threading.Thread(target=retire_once_held, daemon=True)
    t.start()
    prefix = str(tmp_path / "retired")
    r = solve(problem, client=cluster, workers=WORKERS, checkpoint_every=3600, proof=prefix)
    t.join(30)
    assert victim in retired
    handed = [e for e, who in r.info["handovers"] if victim in who]
    # The path forced here: the hand-over and no rollback.  A STEAL reply the victim
    # gave as it left may be lost in flight (the scheduler closes the others'
    # connections to it): its rows go back into the victim's outcome (info
    # "gift_rows_reclaimed", tests/engine/test_engine_lost_gifts.py forces it), so the
    # epoch is still committed.  One rarer alternative is not explained yet: the
    # hand-over not reaching the client within RETIRE_GRACE (the abort's message names
    # what the holders answered); then one exact rollback, and nothing else may differ.
    assert (handed and r.recoveries == 0) or (not handed and r.recoveries == 1), \
        (r.info["handovers"], r.recoveries)
    assert r.objective == plain.objective
    assert_proved(r, prefix, graph, tmp_path)
    return r
