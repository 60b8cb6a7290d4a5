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
#: reverse unit propagation of a constraint that is not a clause (degree 2), then of
#: the contradiction
BY_RUP_GENERAL = SOLUTION + "# 1\nu 1 ~x1 >= 1 ;\nu 1 ~x2 >= 1 ;\nu 1 ~x1 1 ~x2 >= 2 ;\n" \
    "u >= 1 ;\n"
#: a proof by cutting planes: the three non-edges added, halved (at most one true), plus 4
BY_CUTS = SOLUTION + "p 1 2 + 3 + 2 d 4 + ;\n"


def check(tmp_path, proof: str, model: str = MODEL):
    (tmp_path / "t.opb").write_text(model)
    (tmp_path / "t.pbp").write_text(proof)
    return check_files(tmp_path / "t.opb", tmp_path / "t.pbp")


@pytest.mark.parametrize("proof,claimed", [(HEAD + BY_RUP + "c 7\n", 7),
                                           (HEAD + BY_CUTS + "c 5\n", 5),
                                           (HEAD + BY_CUTS + "* a comment\n\nc 5 0\n", 5),
                                           (HEAD + BY_RUP_GENERAL + "c 8\n", 8)])
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
    (HEAD + SOLUTION + "u 1 x1 1 x2 >= 2 ;\n", 4, "reverse unit propagation"),
    (HEAD + SOLUTION + f"u {10 ** 30} x1 1 x2 >= 2 ;\n", 4, "beyond what this checker"),
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


def _fast_and_general(line: str, nvars: int = 6):
    """The fast parse of a ``u`` line's arguments and the general parse, each as
    ({literal: coefficient}, degree), or None where it does not take the line."""
    import numpy as np

    from stealsearch import check_proof as cp
    from stealsearch import check_proof_kernels as K

    fast = cp._FastLines(cp.Database(nvars), nvars)
    k, degree = K.parse_constraint(np.frombuffer(line.encode(), np.uint8), fast.space,
                                   fast.starts, fast.ends, nvars, fast.pos, fast.neg,
                                   fast.touched, fast.lits, fast.coefs)
    got = None if k == K.SLOW else (
        {(int(c) >> 1) * (-1 if c & 1 else 1): int(a)
         for c, a in zip(fast.lits[:k], fast.coefs[:k])}, int(degree))
    assert not fast.pos.any() and not fast.neg.any()        # the scratch is left clean
    try:
        c = cp._constraint(line.split(), nvars)
        general = (dict(c.terms), c.degree)
    except cp._Syntax:
        general = None
    return got, general


def test_the_fast_parse_takes_only_what_the_general_parse_takes_alike():
    """Random ``u`` lines in many spellings (signs, repeats, both polarities, tabs,
    leading zeros, bad literals): where the fast parse takes a line, the general parse
    takes it with the same normalised constraint; a line the general parse refuses,
    the fast parse never takes."""
    import random

    rng = random.Random(35)
    pieces_coef = ["1", "2", "+3", "-1", "-2", "0", "007", "+", "x1", "12345678901234567890"]
    pieces_lit = ["x1", "~x2", "x3", "~x1", "x6", "x7", "x0", "x01", "~~x1", "y1", "~", "x"]
    taken = 0
    for _ in range(3000):
        terms = [f"{rng.choice(pieces_coef)}{rng.choice([' ', '  ', chr(9)])}"
                 f"{rng.choice(pieces_lit)}" for _ in range(rng.randint(0, 5))]
        tail = rng.choice([">= 1 ;", ">= 2 ;", ">= -1 ;", ">= +0 ;", ">= 1", "> 1 ;",
                           ">= 1 ; ;", ">=1 ;"])
        got, general = _fast_and_general(" ".join(terms + [tail]))
        if got is not None:
            taken += 1
            assert got == general
    assert taken > 100


def test_the_fast_rpn_parse_takes_only_what_the_general_parse_takes_alike(tmp_path):
    """Random ``p`` lines over the model's constraints (one deleted): where the fast
    parse takes a line, the general parse derives the same constraint from it; a line
    the general parse refuses, the fast parse never takes."""
    import random

    import numpy as np

    from stealsearch import check_proof as cp
    from stealsearch import check_proof_kernels as K

    (tmp_path / "t.opb").write_text(MODEL)
    db = cp.Database(3)
    for c in cp.read_model(tmp_path / "t.opb").constraints:
        db.add(c)
    db.level = 1
    db.add(cp.Constraint.build([(1, 1), (1, 2)], 1))       # 4, then deleted
    db.wipe(1)
    fast = cp._FastLines(db, 3)
    rng = random.Random(36)
    taken = 0
    for _ in range(3000):
        tokens = [rng.choice(["1", "2", "3", "4", "5", "0", "+", "+", "2 *", "3 d", "0 d",
                              "-2 *", "*", "d", "02"]) for _ in range(rng.randint(1, 7))]
        line = " ".join(tokens + rng.choice([[], [";"], ["0"]]))
        ops, depth = K.parse_rpn(np.frombuffer(line.encode(), np.uint8), fast.space,
                                 fast.starts, fast.ends, db.meta, db.next_id, fast.program)
        try:
            lits, coefs, degree = cp._rpn(line.split(), db)
            general = (dict(zip(lits.tolist(), coefs.tolist())), degree)
        except cp._Syntax:
            general = None
        if ops != K.SLOW:
            taken += 1
            lits, coefs, degree = db.evaluate(fast.program[:ops], depth)
            assert (dict(zip(lits.tolist(), coefs.tolist())), degree) == general, line
            assert general == _by_hand(line.split(), db), line
    assert taken > 100


def _by_hand(tokens, db):
    """A ``p`` line's constraint computed here, on dictionaries {literal code: coef}:
    the reference for the compiled arithmetic."""
    from stealsearch import check_proof_kernels as K

    def load(cid):
        s, n = db.meta[cid, K.START], db.meta[cid, K.LENGTH]
        return dict(zip(db.lits[s:s + n].tolist(), db.coefs[s:s + n].tolist())), \
            int(db.meta[cid, K.DEGREE])

    def normal(acc, degree):            # a x + b ~x = (a - b) x + b
        out = {}
        for code in {c & ~1 for c in acc}:
            a, b = acc.get(code, 0), acc.get(code | 1, 0)
            degree -= min(a, b)
            if a != b:
                out[code if a > b else code | 1] = abs(a - b)
        return out, degree

    if tokens[-1] in (";", "0"):
        tokens = tokens[:-1]
    stack, i = [], 0
    while i < len(tokens):
        if tokens[i] == "+":
            (b, db_), (a, da) = stack.pop(), stack.pop()
            acc = dict(a)
            for code, c in b.items():
                acc[code] = acc.get(code, 0) + c
            stack.append(normal(acc, da + db_))
        elif i + 1 < len(tokens) and tokens[i + 1] in ("*", "d"):
            k, (a, d) = int(tokens[i]), stack.pop()
            if tokens[i + 1] == "*":
                stack.append(({c: x * k for c, x in a.items()}, d * k))
            else:
                stack.append(({c: -(-x // k) for c, x in a.items()}, -(-d // k)))
            i += 1
        else:
            stack.append(load(int(tokens[i])))
        i += 1
    return stack[0]


def test_a_search_proof_checks_with_the_database_compacted_at_every_add(tmp_path,
                                                                         monkeypatch):
    """A clique search's proof (thousands of steps, levels wiped) checks when the
    deleted constraints' space is reclaimed at every add, and its cut copy is still
    rejected."""
    from stealsearch import check_proof as cp
    from stealsearch.engine import solve
    from stealsearch.problems.clique import CliqueProblem, gnp

    monkeypatch.setattr(cp.Database, "COMPACT_AFTER", 0)
    prefix = str(tmp_path / "g")
    r = solve(CliqueProblem(gnp(40, 0.7, seed=2), bound="colour"), backend="sequential",
              proof=prefix)
    assert r.info["proof"]["written"]
    verdict = check_files(prefix + ".opb", prefix + ".pbp")
    assert verdict.objective_value == 40 - r.objective
    text = (tmp_path / "g.pbp").read_text()
    (tmp_path / "g.pbp").write_text(text[:len(text) * 2 // 3])
    with pytest.raises(ProofRejected):
        check_files(prefix + ".opb", prefix + ".pbp")
