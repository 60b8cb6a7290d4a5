"""Proofs of clique answers (``--prove``): the model rebuilt here from the graph alone, the
proofs of the sequential backend and of lanes (random policies, hand-overs between lanes
forced by a hook, epochs cut at node counts and rolled back by force, a checkpoint and
its resume) accepted by the project's checker (and by VeriPB where a ``veripb`` is on
PATH), and tampered proofs rejected by both."""
import dataclasses
import json
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from stealsearch.check_proof import ProofRejected, check_files
from stealsearch.cli import main
from stealsearch.engine import StealPolicy, resume
from stealsearch.engine.core.checkpoint import CheckpointError, read_manifest
from stealsearch.engine.core.loop import EpochRun, run_epochs
from stealsearch.engine.core.proof import ProofParts, ProofUnavailable
from stealsearch.engine.solve import solve
from stealsearch.engine.transports.lanes import Lanes
from stealsearch.problems.clique import CliqueProblem, Graph, gnp

VERIPB = shutil.which("veripb")


def model_text(graph: Graph, k: int | None = None) -> str:
    """The canonical model, written here from the graph's edges (the producer's writer is
    not used): max mode, or decide mode for a clique of ``k``."""
    n = graph.n
    edges = {(int(min(u, v)), int(max(u, v))) for u, v in graph.edges()}
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n) if (u, v) not in edges]
    lines = [f"* #variable= {n} #constraint= {len(pairs) + (k is not None)}"]
    labels = [graph.label(v) for v in range(n)]
    if labels != list(range(1, n + 1)):             # not a DIMACS file's own ids
        lines += [f"* vertex {v + 1} {labels[v]}" for v in range(n)]
    if k is None:
        lines.append("min:" + "".join(f" 1 ~x{v}" for v in range(1, n + 1)) + " ;")
    lines += [f"1 ~x{u + 1} 1 ~x{v + 1} >= 1 ;" for u, v in pairs]
    if k is not None:
        lines.append("".join(f"1 x{v} " for v in range(1, n + 1)) + f">= {k} ;")
    return "\n".join(lines) + "\n"


def veripb_accepts(opb, pbp) -> bool:
    """VeriPB's verdict: success, and a contradiction claimed (it also says "succeeded"
    after warning that a proof claimed none)."""
    out = subprocess.run([VERIPB, str(opb), str(pbp)], capture_output=True, text=True,
                         timeout=300)
    text = out.stdout + out.stderr
    return (out.returncode == 0 and "Verification succeeded" in text
            and "did not claim contradiction" not in text)


def accepted(opb, pbp) -> bool:
    """Our checker's verdict, and VeriPB's where it is installed: they must agree."""
    try:
        check_files(opb, pbp)
        ours = True
    except ProofRejected:
        ours = False
    if VERIPB is not None:
        assert veripb_accepts(opb, pbp) == ours, (opb, pbp, ours)
    return ours


def prove(tmp_path, problem, name="p"):
    """The problem solved on the sequential backend with a proof; the files' paths."""
    prefix = tmp_path / name
    result = solve(problem, backend="sequential", proof=str(prefix))
    return result, Path(f"{prefix}.opb"), Path(f"{prefix}.pbp")


def rebuilt_model(tmp_path, graph, k=None, name="rebuilt.opb") -> Path:
    path = tmp_path / name
    path.write_text(model_text(graph, k))
    return path


CASES = [(int(n), float(p), s) for s, (n, p) in enumerate(zip(
    np.random.default_rng(35).integers(1, 41, 12),
    np.random.default_rng(36).choice([0.1, 0.3, 0.5, 0.7, 0.9], 12)))]


@pytest.mark.parametrize("n,p,s", CASES)
def test_max_proof_checks_against_the_rebuilt_model(tmp_path, n, p, s):
    """Random graphs, the orders and initial heuristics varied: the written model is the
    one rebuilt here, byte for byte, and the proof of the optimum is accepted."""
    g = gnp(n, p, seed=s)
    order = ("degeneracy", "degree", "colour-sort", "iset")[s % 4]
    heuristic = ("amts", "none", "greedy")[s % 3]
    result, opb, pbp = prove(tmp_path, CliqueProblem(g, order=order, heuristic=heuristic))
    assert result.status == "optimal"
    info = result.info["proof"]
    assert info["written"] and info["best"] == result.objective
    assert opb.read_text() == model_text(g)
    assert accepted(rebuilt_model(tmp_path, g), pbp)
    assert check_files(opb, pbp).true_variables == result.objective


@pytest.mark.parametrize("threads", [2, 3])
def test_elaboration_dealt_over_threads(tmp_path, monkeypatch, threads):
    """The elaboration forced over several threads (blocks of 3 records dealt over 2-3
    threads, whatever the machine's cores), for a max and a decide search: the same
    proof as one thread's up to the order of lines within a level (the same multiset
    of lines), accepted against the rebuilt model."""
    from stealsearch.problems.clique import proof as clique_proof

    g = gnp(60, 0.7, seed=2)
    omega = solve(CliqueProblem(g), backend="sequential").objective
    for k in (None, omega + 1):
        problem = CliqueProblem(g, heuristic="none", **({} if k is None else
                                                         {"mode": "decide", "k": k}))
        monkeypatch.setattr(clique_proof, "ELABORATE_THREADS", 1)
        one, _, pbp_one = prove(tmp_path, problem, "one")
        monkeypatch.setattr(clique_proof, "ELABORATE_THREADS", threads)
        monkeypatch.setattr(clique_proof, "ELABORATE_BLOCK", 3)
        many, opb, pbp = prove(tmp_path, problem, "many")
        monkeypatch.setattr(clique_proof, "ELABORATE_BLOCK", 1 << 14)
        assert one.nodes == many.nodes > 3 * 3 * threads
        assert many.info["proof"]["records"] == many.nodes
        assert sorted(pbp.read_bytes().split(b"\n")) == sorted(pbp_one.read_bytes().split(b"\n"))
        assert accepted(rebuilt_model(tmp_path, g, k), pbp)


@pytest.mark.parametrize("n,p,s", CASES[:6])
def test_decide_without_a_k_clique_is_an_unsatisfiability_proof(tmp_path, n, p, s):
    """--mode decide --k (omega + 1): no clique, and a proof that the model with
    "sum x >= K" is unsatisfiable; --k omega: a clique, its certificate, no proof."""
    g = gnp(n, p, seed=s)
    omega = solve(CliqueProblem(g, heuristic="none"), backend="sequential").objective
    result, opb, pbp = prove(tmp_path, CliqueProblem(g, mode="decide", k=omega + 1))
    assert result.status == "none" and result.info["proof"]["written"]
    assert opb.read_text() == model_text(g, omega + 1)
    assert accepted(rebuilt_model(tmp_path, g, omega + 1), pbp)
    assert check_files(opb, pbp).solution_line is None
    # the model of a K one lower has a clique: this proof does not refute it
    assert not accepted(rebuilt_model(tmp_path, g, omega, "lower.opb"), pbp)
    if omega >= 1:
        found, _, _ = prove(tmp_path, CliqueProblem(g, mode="decide", k=omega), "found")
        assert found.status == "found" and not found.info["proof"]["written"]


def test_tampered_proofs_are_rejected(tmp_path):
    """A proof with thousands of steps: cut before its end anywhere; checked against the
    model of the graph with edges added so that a clique one larger exists; an ``o`` line
    naming a set that is not a clique."""
    g = gnp(40, 0.6, seed=3)
    result, opb, pbp = prove(tmp_path, CliqueProblem(g, bound="colour", heuristic="none"))
    omega = result.objective
    lines = pbp.read_bytes().splitlines(keepends=True)
    assert len(lines) > 200 and accepted(opb, pbp)
    text = b"".join(lines)
    rng = np.random.default_rng(7)
    claim = len(text) - len(lines[-1])             # where the last line, "c ID", starts
    cuts = sorted(set(rng.integers(1, claim, 5).tolist()) | {claim, claim + 2})
    for at in cuts:
        cut = tmp_path / "cut.pbp"
        cut.write_bytes(text[:at])
        assert not accepted(opb, cut), at
    # a vertex outside the clique joined to all of it: a clique of omega + 1
    clique = [int(v) for v in result.solution]             # G(n, p): labels are 0..n-1
    outside = next(v for v in range(g.n) if v not in clique)
    edges = [tuple(e) for e in g.edges()] + [(outside, c) for c in clique]
    bigger = Graph.from_edges(g.n, np.array(edges), name="bigger")
    assert not accepted(rebuilt_model(tmp_path, bigger, name="bigger.opb"), pbp)
    # the o line with one more vertex: not a clique (a non-edge constraint violated)
    o_at = next(i for i, line in enumerate(lines) if line.startswith(b"o "))
    lits = lines[o_at].split()[1:]
    extra = next(v for v in range(g.n) if v not in clique and any(
        not g.has_edge(v, c) for c in clique))
    lits[extra] = f"x{extra + 1}".encode()
    bad = tmp_path / "bad.pbp"
    bad.write_bytes(b"".join(lines[:o_at] + [b"o " + b" ".join(lits) + b"\n"]
                             + lines[o_at + 1:]))
    assert not accepted(opb, bad)


def test_cli_prove_and_check_proof(tmp_path, capsys):
    """``clique --prove`` then ``check-proof``; ``--model`` checks against another model;
    refusals before any search: a bound with no proof steps, a count (every backend
    proves: tests/engine/test_engine_proof_dask.py has the cluster's)."""
    prefix = str(tmp_path / "cli")
    argv = ["clique", "--gnp", "30", "0.5", "--seed", "4", "--sequential", "--json",
            "--prove", prefix]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["proof"]["written"] and out["proof"]["best"] == out["objective"]
    assert main(["check-proof", prefix]) == 0
    assert "verified" in capsys.readouterr().out
    g = gnp(30, 0.5, seed=4)
    other = rebuilt_model(tmp_path, g, out["objective"] + 2, "other.opb")
    assert main(["check-proof", prefix, "--model", str(other)]) == 1
    assert "rejected" in capsys.readouterr().err
    assert main(["check-proof", str(tmp_path / "absent")]) == 2
    assert "no such file" in capsys.readouterr().err
    for extra in (["--sequential", "--bound", "maxsat"], ["--sequential", "--mode", "count"],
                  ["--workers", "2", "--mode", "count"]):
        assert main(["clique", "--gnp", "20", "0.5"] + extra + ["--prove", prefix + "x"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "proof" in err[0]
    assert not Path(prefix + "x.pbp").exists()


def test_auto_bound_and_labelled_vertices(tmp_path):
    """auto's maxsat bound (a dense graph) is replaced by the logged colour bound and the
    result says so; a graph with labels names its vertices in the model's comments."""
    g = gnp(24, 0.9, seed=1)
    result, opb, pbp = prove(tmp_path, CliqueProblem(g))
    assert "colour" in result.info["proof"]["note"] and accepted(opb, pbp)
    labels = [f"v{i}" for i in range(12)]
    edges = [tuple(e) for e in gnp(12, 0.5, seed=2).edges()]
    named = Graph.from_edges(12, np.array(edges), labels=labels, name="named")
    result, opb, pbp = prove(tmp_path, CliqueProblem(named), "named")
    assert opb.read_text() == model_text(named) and "* vertex 3 v2\n" in opb.read_text()
    assert accepted(rebuilt_model(tmp_path, named), pbp)
    with pytest.raises(ProofUnavailable):
        solve(CliqueProblem(g, bound="maxsat"), backend="sequential", proof=str(tmp_path / "x"))


def test_a_full_scaffold_buffer_is_drained_and_nothing_is_lost(tmp_path, monkeypatch):
    """A buffer of 3 records: the kernel stops its chunk whenever the buffer is full, the
    stack drains it, and the proof has one record per expanded node and still checks."""
    import stealsearch.engine.core.proof as engine_proof

    monkeypatch.setattr(engine_proof, "BUFFER_BYTES", 0)
    monkeypatch.setattr(engine_proof, "MIN_BUFFER_RECORDS", 3)
    g = gnp(40, 0.7, seed=11)
    result, opb, pbp = prove(tmp_path, CliqueProblem(g, bound="colour", heuristic="none"))
    plain = solve(CliqueProblem(g, bound="colour", heuristic="none"), backend="sequential")
    assert result.nodes == plain.nodes > 30 and result.objective == plain.objective
    assert result.info["proof"]["records"] == result.nodes
    assert accepted(opb, pbp)


# -- lanes: the parts of every lane and epoch merged ----------------------------------------
#: a bound on any wait of these tests (a hang check, never a speed figure)
HANG = 120


class CutEvery(Lanes):
    """Lanes whose every epoch ends after ``quota`` nodes (a forced cut, as the ramp-up's
    hold makes one; None: only when the tree is searched), the epochs numbered in
    ``abort`` rolled back by force after they ran (as a lost worker's are): their parts
    must be deleted and their nodes recorded again from the old cut."""

    def __init__(self, threads, quota=None, abort=()):
        super().__init__(threads)
        self.quota, self.abort = quota, set(abort)
        self.discarded: list[str] = []

    def run_epoch(self, loop, spec, cut):
        spec = dataclasses.replace(spec, epoch_seconds=HANG, node_limit=self.quota)
        run = super().run_epoch(loop, spec, cut)
        out = run.outcomes[0]
        if "node_limit" in (out.stop_reason, out.coordinator.get("stop_reason")):
            out.stop_reason = out.coordinator["stop_reason"] = "cut"    # the search goes on
        if spec.epoch in self.abort:
            self.discarded += [path for path, _ in out.proof_parts]
            return EpochRun(run.outcomes, abort="forced")
        return run


def prove_on(tmp_path, problem, transport, policy=None, name="lanes"):
    """``problem`` proved on ``transport`` by the one epoch loop; the files' paths."""
    prefix = str(tmp_path / name)
    problem = problem.proof_problem()
    parts = ProofParts(prefix, problem.proof_record_width)
    try:
        result = run_epochs(problem, transport, policy=policy, proof=parts)
    finally:
        parts.cleanup()
    return result, Path(prefix + ".opb"), Path(prefix + ".pbp")


@pytest.fixture
def hand_overs(monkeypatch):
    """A hook that forces hand-overs between lanes: lane 0 (dealt the root) may not
    ACQUIRE while the shared portion holds rows until another lane has acquired some,
    so what lane 0 released is expanded by its siblings.  The wait ends on the epoch's
    stop (never a timing bet).  Yields the rows the other lanes acquired."""
    from stealsearch.engine.core import stealstack, worker

    real_acquire, real_init = stealstack.SharedPortion.acquire, worker.WorkerSearch.__init__
    searches, taken = [], {"others": 0}
    other = threading.Event()

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        searches.append(self)

    def acquire(self, a, lane=None):
        if lane is not None and lane.index == 0:
            stop, until = searches[-1].stop_event, time.monotonic() + HANG
            while len(self) and not other.is_set() and not stop.is_set() \
                    and time.monotonic() < until:
                other.wait(0.002)
        rows = real_acquire(self, a, lane)
        if rows is not None and lane is not None and lane.index != 0:
            taken["others"] += len(rows)
            other.set()
        return rows

    monkeypatch.setattr(worker.WorkerSearch, "__init__", init)
    monkeypatch.setattr(stealstack.SharedPortion, "acquire", acquire)
    yield taken


def random_policy(rng):
    return StealPolicy(k=rng.choice([1, 2, 8]), release_threshold=rng.choice([1, 2, 8]),
                       acquire=rng.choice([1, 4, 64]), budget=rng.choice([1, 5, 50]),
                       chunk_seconds=None, steal_half=rng.random() < 0.5)


LANE_CASES = [(int(n), float(p), s) for s, (n, p) in enumerate(zip(
    np.random.default_rng(37).integers(25, 41, 6),
    np.random.default_rng(38).choice([0.6, 0.7, 0.8], 6)))]


@pytest.mark.parametrize("n,p,s", LANE_CASES)
def test_lanes_proof_with_forced_hand_overs_cuts_and_a_rollback(tmp_path, hand_overs, n, p, s):
    """Random G(n, p), 2-4 lanes, a random policy, epochs cut every few nodes and one
    rolled back by force, lane 0's releases handed to its siblings by the hook: one
    record per committed node (none of the rolled-back epoch's), and the merged proof
    checks against the model rebuilt here."""
    rng = random.Random(s)
    g = gnp(n, p, seed=100 + s)
    threads, quota = rng.choice([2, 3, 4]), rng.choice([3, 7, 20])
    problem = CliqueProblem(g, heuristic=rng.choice(["none", "none", "greedy"]),
                            order=rng.choice(["degeneracy", "degree"]))
    transport = CutEvery(threads, quota, abort={2})
    result, opb, pbp = prove_on(tmp_path, problem, transport, random_policy(rng))
    plain = solve(CliqueProblem(g, heuristic="none"), backend="sequential")
    assert result.status == "optimal" and result.objective == plain.objective
    assert result.info["proof"]["records"] == result.nodes
    if result.epochs >= 2:                        # epoch 2 ran: rolled back, its parts gone
        assert result.recoveries == 1 and transport.discarded
        assert not any(Path(p).exists() for p in transport.discarded)
    assert opb.read_text() == model_text(g)
    assert accepted(rebuilt_model(tmp_path, g), pbp)


def test_lanes_proof_with_hand_overs_in_one_epoch(tmp_path, hand_overs):
    """One epoch (it ends when the tree is searched), 3 lanes, lane 0 dealt the root:
    the hook makes its siblings expand what it releases; the proof merges the three
    lanes' parts and checks."""
    g = gnp(40, 0.75, seed=2)
    pol = StealPolicy(k=1, release_threshold=1, acquire=1, budget=2, chunk_seconds=None)
    result, opb, pbp = prove_on(tmp_path, CliqueProblem(g, heuristic="none"), CutEvery(3), pol)
    assert result.epochs == 1 and hand_overs["others"] > 0
    assert result.info["proof"]["records"] == result.nodes
    assert accepted(rebuilt_model(tmp_path, g), pbp)


def test_lanes_proof_many_epochs_and_rollbacks(tmp_path):
    """3 lanes, an epoch every 3 nodes, epochs 2 and 5 rolled back by force.  Every run
    of this graph expands at least the 45 nodes whose bound exceeds its clique number
    (so at least 15 epochs, whatever the order): every committed epoch's parts are
    merged, none of the rolled-back epochs', and the proof checks."""
    g = gnp(40, 0.75, seed=2)
    minimal = solve(CliqueProblem(g, heuristic="amts", bound="colour"), backend="sequential")
    assert minimal.nodes == 45
    transport = CutEvery(3, quota=3, abort={2, 5})
    pol = StealPolicy(k=1, release_threshold=1, acquire=1, budget=2, chunk_seconds=None)
    result, opb, pbp = prove_on(tmp_path, CliqueProblem(g, heuristic="none"), transport, pol)
    assert result.nodes >= 45 and result.epochs >= 15 and result.recoveries == 2
    assert transport.discarded and not any(Path(p).exists() for p in transport.discarded)
    assert result.info["proof"]["records"] == result.nodes
    assert accepted(rebuilt_model(tmp_path, g), pbp)


def test_decide_proof_on_lanes(tmp_path):
    """--mode decide --k (omega + 1) on lanes: no clique, the unsatisfiability proof."""
    g = gnp(36, 0.7, seed=8)
    omega = solve(CliqueProblem(g), backend="sequential").objective
    prefix = tmp_path / "decide"
    result = solve(CliqueProblem(g, mode="decide", k=omega + 1), backend="sequential",
                   threads_per_worker=3, proof=str(prefix))
    assert result.status == "none" and result.info["proof"]["records"] == result.nodes
    assert accepted(rebuilt_model(tmp_path, g, omega + 1), f"{prefix}.pbp")


# -- checkpoint and resume --------------------------------------------------------------------
@pytest.mark.parametrize("first,then", [(1, 2), (3, 1)])
def test_checkpointed_stop_then_resume_continues_the_proof(tmp_path, first, then):
    """Stopped at a node count with a checkpoint (no proof: the search did not finish;
    the cut keeps its parts, each with its count and SHA-256), resumed with a proof on
    another number of lanes: the proof covers the nodes of both runs, and checks."""
    g = gnp(40, 0.85, seed=21)
    problem = CliqueProblem(g, heuristic="none")
    ck = str(tmp_path / "ck")
    stopped = solve(problem, backend="sequential", threads_per_worker=first, node_limit=40,
                    checkpoint=ck, proof=str(tmp_path / "first"))
    assert stopped.status == "interrupted" and not stopped.info["proof"]["written"]
    parts = read_manifest(ck)["proof_parts"]
    assert parts and sum(records for _, records, _ in parts) == stopped.nodes == 40
    assert all(len(sha) == 64 for _, _, sha in parts)
    prefix = tmp_path / "resumed"
    done = resume(ck, backend="sequential", threads_per_worker=then, proof=str(prefix))
    assert done.status == "optimal" and done.nodes > 40
    assert done.info["proof"]["records"] == done.nodes
    assert accepted(rebuilt_model(tmp_path, g), f"{prefix}.pbp")


def test_resume_with_a_proof_refuses_what_it_cannot_continue(tmp_path):
    """A checkpoint of a search that logged no proof, one whose part was altered, and
    one a resume without a proof continued, are refused before any search."""
    g = gnp(40, 0.85, seed=21)
    plain_ck, ck = str(tmp_path / "plain"), str(tmp_path / "ck")
    solve(CliqueProblem(g, bound="colour"), backend="sequential", node_limit=30,
          checkpoint=plain_ck)
    with pytest.raises(ProofUnavailable, match="logged no proof"):
        resume(plain_ck, backend="sequential", proof=str(tmp_path / "x"))
    solve(CliqueProblem(g), backend="sequential", threads_per_worker=2, node_limit=30,
          checkpoint=ck, proof=str(tmp_path / "y"))
    name = read_manifest(ck)["proof_parts"][0][0]
    part = Path(ck) / "proof" / name
    data = bytearray(part.read_bytes())
    data[8] ^= 1
    part.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupt"):
        resume(ck, backend="sequential", proof=str(tmp_path / "z"))
    assert not (tmp_path / "z.pbp").exists()
    # a resume without a proof ends the proof: its nodes are recorded nowhere
    proof_ck = str(tmp_path / "ck2")
    solve(CliqueProblem(g), backend="sequential", node_limit=30, checkpoint=proof_ck,
          proof=str(tmp_path / "w"))
    resume(proof_ck, backend="sequential", node_limit=10)
    assert "proof_parts" not in read_manifest(proof_ck)
    with pytest.raises(ProofUnavailable, match="logged no proof"):
        resume(proof_ck, backend="sequential", proof=str(tmp_path / "v"))


def test_resume_without_a_proof_goes_on_as_the_proof_search(tmp_path):
    """A dense graph, where "auto" picks a bound that logs no proof: the checkpoint of its
    proof's search (the colour bound) resumes from the graph rebuilt, without a proof,
    as that search."""
    g = gnp(60, 0.9, seed=1)
    ck = str(tmp_path / "ck")
    stopped = solve(CliqueProblem(g), backend="sequential", node_limit=5, checkpoint=ck,
                    proof=str(tmp_path / "p"))
    assert stopped.status == "interrupted" and "colour" in stopped.info["proof"]["note"]
    done = resume(ck, CliqueProblem(g), backend="sequential")
    assert done.status == "optimal" and done.verified
    assert done.objective == solve(CliqueProblem(g), backend="sequential").objective


def test_cli_prove_on_the_default_backend_and_lanes(tmp_path, capsys):
    """``clique --prove`` with no backend flag (lanes on every usable core here) and
    with ``--sequential --threads-per-worker 3``: both proofs check."""
    g = gnp(35, 0.6, seed=9)
    for name, extra in (("auto", []), ("lanes", ["--sequential", "--threads-per-worker", "3"])):
        prefix = str(tmp_path / name)
        argv = ["clique", "--gnp", "35", "0.6", "--seed", "9", "--json", "--prove", prefix]
        assert main(argv + extra) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["proof"]["written"] and out["proof"]["records"] == out["nodes"]
        assert main(["check-proof", prefix]) == 0
        capsys.readouterr()
        assert accepted(rebuilt_model(tmp_path, g), prefix + ".pbp")


def test_cli_checkpointed_stop_then_resume_with_prove(tmp_path, capsys):
    """``clique --prove --checkpoint DIR`` stopped at a node count writes no proof;
    ``resume DIR --prove PREFIX`` (the stored --prove dropped, as the stored checkpoint
    is) finishes the search and writes the proof of all of it; both checkers accept.
    The finished search's checkpoint keeps every part: resumed again, the same proof."""
    g = gnp(40, 0.85, seed=21)
    ck, first, final = (str(tmp_path / n) for n in ("ck", "first", "final"))
    argv = ["clique", "--gnp", "40", "0.85", "--seed", "21", "--heuristic", "none",
            "--threads-per-worker", "2", "--sequential", "--json", "--node-limit", "40",
            "--checkpoint", ck, "--prove", first]
    main(argv)
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "interrupted" and not out["proof"]["written"]
    assert main(["resume", ck, "--sequential", "--json", "--prove", final]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["proof"]["records"] == out["nodes"] > 40
    assert not Path(first + ".pbp").exists()
    assert main(["check-proof", final]) == 0
    capsys.readouterr()
    assert accepted(rebuilt_model(tmp_path, g), final + ".pbp")
    # the final cut is checkpointed with every part: the proof can be written again
    again = str(tmp_path / "again")
    assert main(["resume", ck, "--sequential", "--quiet", "--prove", again]) == 0
    assert Path(again + ".pbp").read_bytes() == Path(final + ".pbp").read_bytes()
