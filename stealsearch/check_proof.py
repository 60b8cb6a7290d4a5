"""``stealsearch check-proof PREFIX``: check a pseudo-Boolean proof (``PREFIX.pbp``) of a
model (``PREFIX.opb``), with nothing of the code that wrote them.

A checker of its own, for where VeriPB cannot be installed: it reads the two files and
nothing else (no graph, no search, no module of the engine or of a problem: the
standard library, numpy, and its own compiled core
:mod:`stealsearch.check_proof_kernels`), and accepts the subset of VeriPB's format ``pseudo-Boolean
proof version 1.x`` (x = 0..2) that the clique proofs use:

``f N``        load the model's N constraints (ids 1..N)
``o LITS``     a solution: every variable named, every constraint in the database
               satisfied; adds "objective <= its value - 1"
``p RPN``      cutting planes in reverse Polish notation over constraint ids: ``+``,
               ``K *`` (multiply), ``K d`` (divide, rounding up)
``u C``        C by reverse unit propagation: C's negation and unit propagation over
               the database must conflict
``# L``        later constraints are at level L;  ``w L``: delete those at levels >= L
``c ID``       constraint ID is a contradiction (the claim)
``* ...``      a comment

Every constraint is kept normalised (positive coefficients, each variable once, as a
literal ``x`` or ``~x``); propagation watches two literals of each clause and counts the
slack of every other constraint through an occurrence index.  ``p`` and ``u`` lines as
the solver writes them are parsed by the compiled core; every other line, and any
such line that parse does not take, by the general parser here, which is strict.
Coefficients and degrees are 64-bit: a proof whose numbers pass 2^60 is rejected
with a line saying so (the clique proofs' stay below the number of vertices).  The proof is accepted (exit 0) only when every line
checks and a contradiction was derived and claimed; anything else is one line saying
which line failed and why, and exit 1 (2: a file that cannot be read).

>>> import os, shutil, tempfile
>>> d = tempfile.mkdtemp()
>>> def write(name, text):
...     with open(os.path.join(d, name), "w") as fh:
...         return fh.write(text)
>>> _ = write("t.opb", "* #variable= 2 #constraint= 2\\n1 x1 1 x2 >= 2 ;\\n1 ~x1 1 ~x2 >= 1 ;\\n")
>>> _ = write("t.pbp", "pseudo-Boolean proof version 1.2\\nf 2\\np 1 2 + ;\\nc 3\\n")
>>> check_files(os.path.join(d, "t.opb"), os.path.join(d, "t.pbp")).claimed
3
>>> shutil.rmtree(d)
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

import numpy as np

from stealsearch import check_proof_kernels as K

_VERSION = re.compile(r"pseudo-Boolean proof version 1\.[012]\Z")
_VARIABLE = re.compile(r"x([1-9][0-9]*)\Z")


class ProofRejected(Exception):
    """The proof does not check: ``line`` (1-based, 0 for the model) and why."""

    def __init__(self, where: str, line: int, reason: str):
        super().__init__(f"{where} line {line}: {reason}" if line else f"{where}: {reason}")
        self.where, self.line, self.reason = where, line, reason


class _Syntax(Exception):
    """A line that does not parse (turned into :class:`ProofRejected` with its place)."""


@dataclass
class Verdict:
    """A proof that checked: the rules read, the id of the contradiction claimed, the
    last solution logged (``o``) with its objective value, if any."""

    rules: int
    claimed: int
    solution_line: int | None = None
    objective_value: int | None = None
    true_variables: int | None = None


# -- constraints ---------------------------------------------------------------------
class Constraint:
    """``sum coef * literal >= degree``, normalised: a literal is ``+v`` (x_v) or ``-v``
    (~x_v), each variable at most once, every coefficient > 0."""

    __slots__ = ("terms", "degree")

    def __init__(self, terms: dict, degree: int):
        self.terms = terms
        self.degree = degree

    @classmethod
    def build(cls, pairs, degree: int) -> "Constraint":
        """From any ``(coefficient, literal)`` pairs (signs and repeats allowed)."""
        acc: dict = {}
        for coef, lit in pairs:
            if coef < 0:                  # a * l = a - a * ~l
                degree -= coef
                coef, lit = -coef, -lit
            if coef:
                acc[lit] = acc.get(lit, 0) + coef
        return cls._cancel(acc, degree)

    @classmethod
    def _cancel(cls, acc: dict, degree: int) -> "Constraint":
        """a * x + b * ~x = (a - b) * x + b (a >= b): each variable once."""
        terms = {}
        for lit, coef in acc.items():
            other = acc.get(-lit, 0)
            if not other:
                if coef:
                    terms[lit] = coef
            elif lit > 0:                    # the pair, once (from its positive side)
                degree -= min(coef, other)
                if coef > other:
                    terms[lit] = coef - other
                elif other > coef:
                    terms[-lit] = other - coef
        return cls(terms, degree)

    def negation(self) -> "Constraint":
        """not (sum a l >= d)  <=>  sum a ~l >= sum a - d + 1."""
        return Constraint({-lit: c for lit, c in self.terms.items()},
                          sum(self.terms.values()) - self.degree + 1)

    def is_contradiction(self) -> bool:
        return sum(self.terms.values()) < self.degree

    def is_clause(self) -> bool:
        return self.degree == 1            # with coefficients >= 1: one true literal suffices


# -- parsing ---------------------------------------------------------------------------
def _literal(token: str, nvars: int) -> int:
    neg = token.startswith("~")
    m = _VARIABLE.match(token[1:] if neg else token)
    if not m:
        raise _Syntax(f"expected a literal x<i> or ~x<i>, got {token[:30]!r}")
    v = int(m.group(1))
    if v > nvars:
        raise _Syntax(f"variable x{v} is not in the model ({nvars} variables)")
    return -v if neg else v


def _integer(token: str) -> int:
    if token.isdigit():
        return int(token)
    if not re.fullmatch(r"[+-]?[0-9]+", token):
        raise _Syntax(f"expected an integer, got {token[:30]!r}")
    return int(token)


def _constraint(tokens: list, nvars: int) -> Constraint:
    """``coef lit coef lit ... >= degree ;`` (the terms may be none)."""
    if len(tokens) < 3 or tokens[-1] != ";" or tokens[-3] != ">=":
        raise _Syntax("expected a constraint 'c1 l1 c2 l2 ... >= d ;'")
    body = tokens[:-3]
    if len(body) % 2:
        raise _Syntax("a constraint's terms are coefficient-literal pairs")
    pairs = [(_integer(body[i]), _literal(body[i + 1], nvars)) for i in range(0, len(body), 2)]
    return Constraint.build(pairs, _integer(tokens[-2]))


@dataclass
class Model:
    nvars: int
    constraints: list
    objective: list | None          # [(coef, literal)] of "min:", or None


def read_model(path: str) -> Model:
    """The model: header ``* #variable= N #constraint= M``, comments, at most one
    ``min: ... ;``, constraints ``... >= d ;`` (one per line)."""
    where = os.fspath(path)
    with open(path, encoding="ascii", errors="strict") as fh:
        head = fh.readline().split()
        if len(head) != 5 or head[:2] != ["*", "#variable="] or head[3] != "#constraint=" \
                or not head[2].isdigit() or not head[4].isdigit():
            raise ProofRejected(where, 1, "expected the header "
                                          "'* #variable= N #constraint= M'")
        nvars, declared = int(head[2]), int(head[4])
        constraints, objective = [], None
        for number, line in enumerate(fh, start=2):
            objective = _model_line(line, number, nvars, constraints, objective, where)
    if len(constraints) != declared:
        raise ProofRejected(where, 1, f"the header declares {declared} constraints, the "
                                      f"file has {len(constraints)}")
    return Model(nvars, constraints, objective)


def _model_line(line: str, number: int, nvars: int, constraints: list, objective, where):
    """One line of the model: a constraint appended, or the objective returned."""
    tokens = line.split()
    if tokens and not tokens[0].startswith("*"):
        try:
            if tokens[0] == "min:":
                if objective is not None or constraints:
                    raise _Syntax("the objective must come once, before the constraints")
                if tokens[-1] != ";" or len(tokens) % 2:
                    raise _Syntax("expected 'min: c1 l1 c2 l2 ... ;'")
                objective = [(_integer(tokens[i]), _literal(tokens[i + 1], nvars))
                             for i in range(1, len(tokens) - 1, 2)]
            else:
                constraints.append(_constraint(tokens, nvars))
        except _Syntax as exc:
            raise ProofRejected(where, number, str(exc)) from None
    return objective


# -- the database and unit propagation --------------------------------------------------
def _codes(c: Constraint):
    """A normalised constraint as arrays: literal codes (``2 v``: x_v, ``2 v + 1``:
    ~x_v) and coefficients."""
    lits = np.fromiter(((lit << 1) if lit > 0 else ((-lit) << 1) | 1 for lit in c.terms),
                       np.int64, len(c.terms))
    return lits, np.fromiter(c.terms.values(), np.int64, len(c.terms))


class Database:
    """Constraints by id, with their levels, and unit propagation over them
    (:mod:`stealsearch.check_proof_kernels`: flat arrays, grown here as needed)."""

    #: the deleted constraints' literals reclaimed once more than this, and than the
    #: live ones
    COMPACT_AFTER = 1 << 16

    def __init__(self, nvars: int):
        self.nvars = nvars
        self.next_id = 1
        self.level = None
        self.at_level: dict = {}              # level -> ids
        self.meta = np.zeros((1024, K.META_COLUMNS), np.int64)
        self.lits = np.zeros(4096, np.int64)
        self.coefs = np.zeros(4096, np.int64)
        self.whead = np.full(2 * nvars + 2, -1, np.int64)
        self.went = np.zeros((4096, 2), np.int64)
        self.ohead = np.full(2 * nvars + 2, -1, np.int64)
        self.oent = np.zeros((4096, 3), np.int64)
        self.units = np.zeros(1024, np.int64)
        self.generals = np.zeros(1024, np.int64)
        self.sc = np.zeros(K.SCALARS, np.int64)
        self.sc[K.WATCH_FREE] = self.sc[K.OCC_FREE] = -1
        self.value = np.zeros(nvars + 1, np.int64)       # +1 true, -1 false, 0 free
        self.trail = np.zeros(nvars + 1, np.int64)
        self.out_lits = np.zeros(nvars + 1, np.int64)
        self.out_coefs = np.zeros(nvars + 1, np.int64)
        self.out = np.zeros(2, np.int64)
        self._none = np.zeros(0, np.int64)

    @staticmethod
    def _room(array, needed: int):
        """``array``, or a copy at least twice as long if it has fewer than ``needed`` rows."""
        if needed <= array.shape[0]:
            return array
        grown = np.zeros((max(needed, 2 * array.shape[0]),) + array.shape[1:], array.dtype)
        grown[:array.shape[0]] = array
        return grown

    def add(self, c: Constraint) -> int:
        if abs(c.degree) > K.COEF_LIMIT or any(a > K.COEF_LIMIT for a in c.terms.values()):
            raise _Syntax("a coefficient or degree beyond what this checker computes with")
        return self.add_arrays(*_codes(c), c.degree)

    def add_arrays(self, lits, coefs, degree: int) -> int:
        cid = self.next_id
        self.next_id += 1
        if self.level is not None:
            self.at_level.setdefault(self.level, []).append(cid)
        n, sc = lits.shape[0], self.sc
        if sc[K.POOL_DEAD] > max(self.COMPACT_AFTER, sc[K.POOL_TOP] // 2):
            K.compact(self.meta, self.lits, self.coefs, self.units, self.generals, sc,
                      self.next_id - 1)
        self.meta = self._room(self.meta, cid + 1)
        self.lits = self._room(self.lits, int(sc[K.POOL_TOP]) + n)
        self.coefs = self._room(self.coefs, int(sc[K.POOL_TOP]) + n)
        self.went = self._room(self.went, int(sc[K.WATCH_TOP]) + 2)
        self.oent = self._room(self.oent, int(sc[K.OCC_TOP]) + n)
        self.units = self._room(self.units, int(sc[K.N_UNITS]) + 1)
        self.generals = self._room(self.generals, int(sc[K.N_GENERALS]) + 1)
        if not -K.COEF_LIMIT <= degree <= K.COEF_LIMIT or (n and int(coefs.max()) > K.COEF_LIMIT):
            raise _Syntax("a coefficient or degree beyond what this checker computes with")
        K.add_constraint(self.meta, self.lits, self.coefs, self.whead, self.went, self.ohead,
                         self.oent, self.units, self.generals, sc, cid, lits, coefs,
                         int(degree))
        return cid

    def check_id(self, cid: int) -> int:
        if not (0 < cid < self.next_id and self.meta[cid, K.ALIVE]):
            state = "deleted" if 0 < cid < self.next_id else "not derived yet"
            raise _Syntax(f"constraint {cid} is {state}")
        return cid

    def is_contradiction(self, cid: int) -> bool:
        s, n = self.meta[self.check_id(cid), K.START], self.meta[cid, K.LENGTH]
        return int(self.coefs[s:s + n].sum()) < int(self.meta[cid, K.DEGREE])

    def wipe(self, level: int) -> None:
        """Delete the constraints at levels >= ``level``."""
        for lv in [lv for lv in self.at_level if lv >= level]:
            K.delete_constraints(self.meta, self.sc, np.asarray(self.at_level.pop(lv),
                                                                 np.int64))

    def propagate(self, assume, extra: Constraint | None = None) -> bool:
        """Unit propagation from the literal codes ``assume`` (and the constraint
        ``extra``, not stored): does it conflict?  Nothing stays assigned."""
        if extra is None:
            el, ec, ed = self._none, self._none, 0
        elif abs(extra.degree) > K.COEF_LIMIT or any(a > K.COEF_LIMIT
                                                     for a in extra.terms.values()):
            raise _Syntax("a coefficient or degree beyond what this checker computes with")
        else:
            (el, ec), ed = _codes(extra), extra.degree
        return bool(K.propagate(self.meta, self.lits, self.coefs, self.whead, self.went,
                                self.ohead, self.oent, self.units, self.generals, self.sc,
                                self.value, self.trail, assume, el, ec, int(ed)))

    def implied_by_rup(self, c: Constraint) -> bool:
        """Reverse unit propagation: does adding not-C and propagating conflict?"""
        neg = c.negation()
        if neg.is_contradiction():
            return True
        if c.is_clause():
            return self.propagate(_codes(neg)[0])
        return self.propagate(self._none, neg)

    def evaluate(self, program, depth: int):
        """The constraint a ``p`` line derives (program of :func:`_rpn`): arrays."""
        if K.evaluate(self.meta, self.lits, self.coefs, program, depth, self.nvars,
                      self.out_lits, self.out_coefs, self.out) != K.EVAL_OK:
            raise _Syntax("a coefficient beyond what this checker computes with (2^60)")
        n = int(self.out[0])
        return self.out_lits[:n].copy(), self.out_coefs[:n].copy(), int(self.out[1])

    def first_violated(self, value) -> int:
        """The first live constraint the full assignment ``value`` violates, or 0."""
        return int(K.satisfied_by(self.meta, self.lits, self.coefs, value, self.next_id))


# -- the proof ---------------------------------------------------------------------------
def _rpn(tokens: list, db: Database):
    """``p`` (or ``pol``): ids, ``+``, ``K *``, ``K d``; a trailing ``;`` or ``0`` ends
    it.  Checked here (syntax, ids live, the stack); computed by :meth:`Database.evaluate`."""
    if tokens and tokens[-1] in (";", "0"):
        tokens = tokens[:-1]
    if not tokens:
        raise _Syntax("an empty 'p' line")
    program = np.zeros((len(tokens), 2), np.int64)
    ops = height = depth = i = 0
    while i < len(tokens):
        tok = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok == "+":
            if height < 2:
                raise _Syntax("'+' needs two constraints on the stack")
            program[ops] = (1, 0)
            height -= 1
        elif nxt in ("*", "d"):
            k = int(tok) if tok.isdigit() else _integer(tok)
            if k <= 0:
                raise _Syntax(f"multiplier or divisor {k} must be > 0")
            if not height:
                raise _Syntax(f"'{nxt}' needs a constraint on the stack")
            if k > K.COEF_LIMIT:
                raise _Syntax("a multiplier or divisor beyond what this checker computes with")
            program[ops] = (2 if nxt == "*" else 3, k)
            i += 1
        elif tok in ("*", "d"):
            raise _Syntax(f"'{tok}' must follow its integer operand")
        else:
            cid = int(tok) if tok.isdigit() else _integer(tok)
            if cid <= 0:
                raise _Syntax(f"constraint id {cid}: ids are >= 1 here")
            program[ops] = (0, db.check_id(cid))
            height += 1
            depth = max(depth, height)
        ops += 1
        i += 1
    if height != 1:
        raise _Syntax(f"the 'p' line leaves {height} constraints, not one")
    return db.evaluate(program[:ops], depth)


class _FastLines:
    """The two frequent rules, ``p`` and ``u`` as the solver writes them, parsed by
    :mod:`stealsearch.check_proof_kernels`; any line that parse does not take (another
    rule, another spelling, an error) goes to the general parser below, which accepts
    it or names its fault."""

    #: tokens of a line the fast parse takes at most
    MAX_TOKENS = 1 << 16

    def __init__(self, db: Database, nvars: int):
        self.db, self.nvars = db, nvars
        self.space = K._SPACE
        self.starts = np.zeros(self.MAX_TOKENS, np.int64)
        self.ends = np.zeros(self.MAX_TOKENS, np.int64)
        self.program = np.zeros((self.MAX_TOKENS, 2), np.int64)
        self.pos = np.zeros(nvars + 1, np.int64)
        self.neg = np.zeros(nvars + 1, np.int64)
        self.touched = np.zeros(nvars + 1, np.int64)
        self.lits = np.zeros(nvars + 1, np.int64)
        self.coefs = np.zeros(nvars + 1, np.int64)

    def take(self, raw: bytes, number: int, where: str) -> bool:
        """Check the line ``raw`` if it is one of the two; False: not taken."""
        head = raw[:2]
        if head == b"p ":
            buf = np.frombuffer(raw, np.uint8)[2:]
            ops, depth = K.parse_rpn(buf, self.space, self.starts, self.ends, self.db.meta,
                                     self.db.next_id, self.program)
            if ops == K.SLOW:
                return False
            try:
                self.db.add_arrays(*self.db.evaluate(self.program[:ops], depth))
            except _Syntax as exc:
                raise ProofRejected(where, number, str(exc)) from None
            return True
        if head == b"u ":
            buf = np.frombuffer(raw, np.uint8)[2:]
            k, degree = K.parse_constraint(buf, self.space, self.starts, self.ends,
                                           self.nvars, self.pos, self.neg, self.touched,
                                           self.lits, self.coefs)
            if k == K.SLOW:
                return False
            lits, coefs = self.lits[:k].copy(), self.coefs[:k].copy()
            db = self.db
            if degree == 1:
                implied = db.propagate(lits ^ 1)
            elif degree > 1:           # the negation: sum a ~l >= sum a - d + 1
                implied = bool(K.propagate(
                    db.meta, db.lits, db.coefs, db.whead, db.went, db.ohead, db.oent,
                    db.units, db.generals, db.sc, db.value, db.trail, db._none, lits ^ 1,
                    coefs, int(coefs.sum()) - degree + 1))
            else:
                implied = True         # always true
            if not implied:
                raise ProofRejected(where, number,
                                    "reverse unit propagation does not reach a conflict")
            try:
                db.add_arrays(lits, coefs, degree)
            except _Syntax as exc:
                raise ProofRejected(where, number, str(exc)) from None
            return True
        return False


def check_files(opb_path, pbp_path) -> Verdict:
    """Check the proof ``pbp_path`` of the model ``opb_path``; :class:`ProofRejected` if
    it does not check (``OSError`` / ``UnicodeDecodeError`` for a file that cannot be read)."""
    model = read_model(opb_path)
    where = os.fspath(pbp_path)
    db = Database(model.nvars)
    loaded = False
    claimed = None
    verdict = Verdict(rules=0, claimed=0)
    fast = _FastLines(db, model.nvars)
    with open(pbp_path, "rb") as fh:
        first = fh.readline().decode("ascii")
        if not _VERSION.match(first.strip()):
            raise ProofRejected(where, 1, "expected 'pseudo-Boolean proof version 1.2'")
        number = 1
        for raw in fh:
            number += 1
            if loaded and fast.take(raw, number, where):
                verdict.rules += 1
                continue
            line = raw.decode("ascii")
            tokens = line.split()
            if not tokens or tokens[0].startswith("*"):
                continue
            rule, args = tokens[0], tokens[1:]
            verdict.rules += 1
            try:
                if rule == "f":
                    if loaded:
                        raise _Syntax("the model is loaded once")
                    if args and (len(args) != 1 or _integer(args[0]) not in
                                 (0, len(model.constraints))):
                        raise _Syntax(f"'f {' '.join(args)[:20]}': the model has "
                                      f"{len(model.constraints)} constraints")
                    for c in model.constraints:
                        db.add(c)
                    loaded = True
                elif not loaded:
                    raise _Syntax(f"rule {rule!r} before the model is loaded ('f')")
                elif rule in ("p", "pol"):
                    db.add_arrays(*_rpn(args, db))
                elif rule in ("u", "rup"):
                    c = _constraint(args, model.nvars)
                    if not db.implied_by_rup(c):
                        raise _Syntax("reverse unit propagation does not reach a conflict")
                    db.add(c)
                elif rule == "o":
                    _solution(args, model, db, verdict, number)
                elif rule == "#":
                    if len(args) != 1 or _integer(args[0]) < 0:
                        raise _Syntax("expected '# LEVEL' (an integer >= 0)")
                    db.level = int(args[0])
                elif rule == "w":
                    if len(args) != 1 or _integer(args[0]) < 0:
                        raise _Syntax("expected 'w LEVEL' (an integer >= 0)")
                    db.wipe(int(args[0]))
                elif rule == "c":
                    if len(args) not in (1, 2) or (len(args) == 2 and args[1] != "0"):
                        raise _Syntax("expected 'c ID'")
                    cid = _integer(args[0])
                    if not db.is_contradiction(cid):
                        raise _Syntax(f"constraint {cid} is not a contradiction")
                    claimed = cid
                else:
                    raise _Syntax(f"rule {rule[:20]!r} is not one this checker knows")
            except _Syntax as exc:
                raise ProofRejected(where, number, str(exc)) from None
    if claimed is None:
        raise ProofRejected(where, 0, "no contradiction claimed: the proof ends before "
                                      "its 'c' line")
    verdict.claimed = claimed
    return verdict


def _solution(args: list, model: Model, db: Database, verdict: Verdict, number: int) -> None:
    """``o``: a full assignment that satisfies the database; adds "objective < value"."""
    if model.objective is None:
        raise _Syntax("'o' needs a model with an objective ('min:')")
    seen: dict = {}
    for tok in args:
        lit = _literal(tok, model.nvars)
        if seen.setdefault(abs(lit), lit) != lit:
            raise _Syntax(f"variable x{abs(lit)} is set twice")
    free = [v for v in range(1, model.nvars + 1) if v not in seen]
    if free:                    # as VeriPB: every variable named, none left to propagation
        raise _Syntax(f"the solution leaves x{free[0]} unset (and {len(free) - 1} more)")
    # a full assignment: propagation would only find a violated constraint
    value_of = np.zeros(model.nvars + 1, np.int64)
    for v, lit in seen.items():
        value_of[v] = 1 if lit > 0 else -1
    violated = db.first_violated(value_of)
    if violated:
        raise _Syntax(f"the solution violates constraint {violated}")
    value = sum(coef for coef, lit in model.objective if (value_of[abs(lit)] > 0) == (lit > 0))
    true_vars = int((value_of > 0).sum())
    # objective <= value - 1, as  sum -c l >= 1 - value
    db.add(Constraint.build([(-coef, lit) for coef, lit in model.objective], 1 - value))
    verdict.solution_line, verdict.objective_value = number, value
    verdict.true_variables = true_vars


# -- the command ---------------------------------------------------------------------------
def register(subparsers) -> None:
    from stealsearch.engine.app.commandline import example_epilog

    p = subparsers.add_parser(
        "check-proof", help="check a proof written by --prove PREFIX (PREFIX.opb, PREFIX.pbp)",
        description="Check the pseudo-Boolean proof PREFIX.pbp of the model PREFIX.opb with "
                    "a checker of its own (no code shared with the search).  Exit 0: a "
                    "contradiction derived and claimed; 1: the proof does not check; 2: a "
                    "file cannot be read.  VeriPB checks the same files: "
                    "veripb PREFIX.opb PREFIX.pbp",
        epilog=example_epilog(
            "stealsearch clique --gnp 40 0.5 --seed 1 --prove proof",
            "stealsearch check-proof proof"))
    p.add_argument("prefix", metavar="PREFIX", help="the files PREFIX.opb and PREFIX.pbp")
    p.add_argument("--model", metavar="FILE", default=None,
                   help="check against this model instead of PREFIX.opb (one rebuilt "
                        "from the input)")
    p.set_defaults(func=run_check)


def run_check(args) -> int:
    opb = args.model if args.model is not None else args.prefix + ".opb"
    pbp = args.prefix + ".pbp"
    for path in (opb, pbp):
        if not os.path.isfile(path):
            print(f"stealsearch: error: check-proof: {path}: no such file", file=sys.stderr)
            return 2
    try:
        verdict = check_files(opb, pbp)
    except ProofRejected as exc:
        print(f"check-proof: rejected: {exc}", file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError) as exc:
        print(f"stealsearch: error: check-proof: cannot read {pbp} or {opb}: "
              f"{exc.__class__.__name__}", file=sys.stderr)
        return 2
    what = ("the model is unsatisfiable" if verdict.solution_line is None else
            f"the solution of line {verdict.solution_line} is optimal (objective value "
            f"{verdict.objective_value}, {verdict.true_variables} variables true)")
    print(f"check-proof: verified {pbp}: contradiction {verdict.claimed} derived and "
          f"claimed, {verdict.rules:,} rules checked; {what}")
    return 0
