"""``stealsearch check-proof``: the project's own pseudo-Boolean proof checker on proofs
written by hand (the model: three pairwise non-adjacent vertices, so a clique has one
vertex), each rule accepted where it holds and each failure named by its line."""
import pytest

from stealsearch.check_proof import ProofRejected, check_files
from stealsearch.cli import main

MODEL = """* #variable= 3 #constraint= 3
min: 1 ~x1 1 ~x2 1 ~x3 ;
1 ~x1 1 ~x2 >= 1 ;
1 ~x1 1 ~x3 >= 1 ;
1 ~x2 1 ~x3 >= 1 ;
"""
HEAD = "pseudo-Boolean proof version 1.2\nf 3\n"
#: the solution {x1} adds constraint 4, "x1 + x2 + x3 >= 2" (a clique of two)
SOLUTION = "o x1 ~x2 ~x3\n"
#: a proof by reverse unit propagation, at level 1
BY_RUP = SOLUTION + "# 1\nu 1 ~x1 >= 1 ;\nu 1 ~x2 >= 1 ;\nu >= 1 ;\n"
#: a proof by cutting planes: the three non-edges added, halved (at most one true), plus 4
BY_CUTS = SOLUTION + "p 1 2 + 3 + 2 d 4 + ;\n"


def check(tmp_path, proof: str, model: str = MODEL):
    (tmp_path / "t.opb").write_text(model)
    (tmp_path / "t.pbp").write_text(proof)
    return check_files(tmp_path / "t.opb", tmp_path / "t.pbp")


@pytest.mark.parametrize("proof,claimed", [(HEAD + BY_RUP + "c 7\n", 7),
                                           (HEAD + BY_CUTS + "c 5\n", 5),
                                           (HEAD + BY_CUTS + "* a comment\n\nc 5 0\n", 5)])
def test_accepted(tmp_path, proof, claimed):
    verdict = check(tmp_path, proof)
    assert verdict.claimed == claimed
    assert (verdict.solution_line, verdict.objective_value, verdict.true_variables) == (3, 2, 1)


@pytest.mark.parametrize("proof,line,reason", [
    ("pseudo-Boolean proof version 2.0\nf 3\n", 1, "version 1.2"),
    ("pseudo-Boolean proof version 1.2\n" + SOLUTION, 2, "before the model"),
    ("pseudo-Boolean proof version 1.2\nf 2\n", 2, "the model has 3"),
    (HEAD + "u 1 ~x1 >= 1 ;\n", 3, "reverse unit propagation"),
    (HEAD + "o x1 x2 ~x3\n", 3, "violates"),
    (HEAD + "o ~x1 ~x2\n", 3, "unset"),
    (HEAD + "o x1 ~x2\n", 3, "unset"),                 # x3 is forced, but not named
    (HEAD + "o x1 ~x2 ~x3 ~x4\n", 3, "not in the model"),
    (HEAD + SOLUTION + "c 4\n", 4, "not a contradiction"),
    (HEAD + SOLUTION + "p 1 2 ;\n", 4, "leaves 2 constraints"),
    (HEAD + SOLUTION + "p 1 9 + ;\n", 4, "not derived yet"),
    (HEAD + SOLUTION + "p 1 2 * 4 2 * + ;\nc 5\n", 5, "not a contradiction"),
    (HEAD + BY_RUP + "w 1\nc 7\n", 9, "deleted"),
    (HEAD + SOLUTION + "a 1 x1 >= 1 ;\n", 4, "not one this checker knows"),
    (HEAD + BY_RUP, 0, "no contradiction claimed"),
])
def test_rejected(tmp_path, proof, line, reason):
    with pytest.raises(ProofRejected) as exc:
        check(tmp_path, proof)
    assert exc.value.line == line and reason in exc.value.reason, str(exc.value)


def test_model_errors_and_the_command(tmp_path, capsys):
    """A model whose header miscounts is rejected; the command's exit codes and lines."""
    with pytest.raises(ProofRejected, match="declares 4 constraints"):
        check(tmp_path, HEAD, MODEL.replace("#constraint= 3", "#constraint= 4"))
    check(tmp_path, HEAD + BY_CUTS + "c 5\n")
    prefix = str(tmp_path / "t")
    assert main(["check-proof", prefix]) == 0
    assert "unsatisfiable" not in capsys.readouterr().out
    (tmp_path / "t.pbp").write_text(HEAD + BY_CUTS)
    assert main(["check-proof", prefix]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no contradiction claimed" in err[0]
    (tmp_path / "t.pbp").write_bytes(b"pseudo-Boolean proof version 1.2\n\xff\n")
    assert main(["check-proof", prefix]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
