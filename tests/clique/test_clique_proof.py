"""Proofs of clique answers (``--prove``): the model rebuilt here from the graph alone, the
proof of the sequential backend accepted by the project's checker (and by VeriPB where a
``veripb`` is on PATH), and tampered proofs rejected by both."""
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stealsearch.check_proof import ProofRejected, check_files
from stealsearch.cli import main
from stealsearch.engine.core.proof import ProofUnavailable
from stealsearch.engine.solve import solve
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
    refusals before any search: no --sequential, a bound with no proof steps, a count."""
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
    for extra in (["--workers", "2"], ["--sequential", "--bound", "maxsat"],
                  ["--sequential", "--mode", "count"]):
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
