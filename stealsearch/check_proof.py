"""``stealsearch check-proof PREFIX``: check a pseudo-Boolean proof (``PREFIX.pbp``) of a
model (``PREFIX.opb``), with nothing of the code that wrote them.

A checker of its own, for where VeriPB cannot be installed: it reads the two files and
nothing else (no graph, no search, no module of the engine or of a problem: the
standard library only), and accepts the subset of VeriPB's format ``pseudo-Boolean
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
slack of every other constraint.  The proof is accepted (exit 0) only when every line
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

    def add(self, other: "Constraint") -> "Constraint":
        acc = dict(self.terms)
        for lit, coef in other.terms.items():
            acc[lit] = acc.get(lit, 0) + coef
        return Constraint._cancel(acc, self.degree + other.degree)

    def multiply(self, k: int) -> "Constraint":
        return Constraint({lit: c * k for lit, c in self.terms.items()}, self.degree * k)

    def divide(self, k: int) -> "Constraint":
        return Constraint({lit: -(-c // k) for lit, c in self.terms.items()},
                          -(-self.degree // k))

    def negation(self) -> "Constraint":
        """not (sum a l >= d)  <=>  sum a ~l >= sum a - d + 1."""
        return Constraint({-lit: c for lit, c in self.terms.items()},
                          sum(self.terms.values()) - self.degree + 1)

    def is_contradiction(self) -> bool:
        return sum(self.terms.values()) < self.degree

    def satisfied_by(self, value) -> bool:
        return sum(c for lit, c in self.terms.items() if value(lit) > 0) >= self.degree

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
class Database:
    """Constraints by id, with their levels, and unit propagation over them."""

    def __init__(self, nvars: int):
        self.nvars = nvars
        self.by_id: dict = {}                 # id -> Constraint (deleted ones removed)
        self.next_id = 1
        self.level = None
        self.at_level: dict = {}              # level -> ids
        self.units: dict = {}                 # id -> literal (clauses of one literal)
        self.empty: set = set()               # ids of clauses with no literal
        self.binary: dict = {}                # literal l -> [(other, id)]: l false forces other
        self.watches: dict = {}               # literal l -> [id] of longer clauses watching l
        self.clause_lits: dict = {}           # id -> list of literals, first two watched
        self.general: dict = {}               # id -> Constraint that is not a clause
        self.occurs: dict = {}                # literal -> [(id, coef)] in general constraints
        self.value = [0] * (nvars + 1)        # +1 true, -1 false, 0 free (per check)

    def add(self, c: Constraint) -> int:
        cid = self.next_id
        self.next_id += 1
        self.by_id[cid] = c
        if self.level is not None:
            self.at_level.setdefault(self.level, []).append(cid)
        lits = list(c.terms)
        if c.degree <= 0:
            return cid                        # always true: nothing to propagate
        if c.is_clause():
            if not lits:
                self.empty.add(cid)
            elif len(lits) == 1:
                self.units[cid] = lits[0]
            elif len(lits) == 2:
                a, b = lits
                self.binary.setdefault(a, []).append((b, cid))
                self.binary.setdefault(b, []).append((a, cid))
            else:
                self.clause_lits[cid] = lits
                self.watches.setdefault(lits[0], []).append(cid)
                self.watches.setdefault(lits[1], []).append(cid)
        else:
            self.general[cid] = c
            for lit, coef in c.terms.items():
                self.occurs.setdefault(lit, []).append((cid, coef))
        return cid

    def get(self, cid: int) -> Constraint:
        c = self.by_id.get(cid)
        if c is None:
            state = "deleted" if 0 < cid < self.next_id else "not derived yet"
            raise _Syntax(f"constraint {cid} is {state}")
        return c

    def wipe(self, level: int) -> None:
        """Delete the constraints at levels >= ``level``.  A longer clause's watches go
        when they are next visited; the lists of binary clauses and of occurrences in
        other constraints are filtered here, once per wipe."""
        touched_binary, touched_occurs, gone = set(), set(), set()
        for lv in [lv for lv in self.at_level if lv >= level]:
            for cid in self.at_level.pop(lv):
                c = self.by_id.pop(cid, None)
                if c is None:
                    continue
                gone.add(cid)
                self.units.pop(cid, None)
                self.empty.discard(cid)
                self.clause_lits.pop(cid, None)
                if self.general.pop(cid, None) is not None:
                    touched_occurs.update(c.terms)
                elif c.degree == 1 and len(c.terms) == 2:
                    touched_binary.update(c.terms)
        for lit in touched_binary:
            self.binary[lit] = [e for e in self.binary[lit] if e[1] not in gone]
        for lit in touched_occurs:
            self.occurs[lit] = [e for e in self.occurs[lit] if e[0] not in gone]

    # -- propagation ----------------------------------------------------------------------
    def lit_value(self, lit: int) -> int:
        v = self.value[lit if lit > 0 else -lit]
        return v if lit > 0 else -v

    def propagate(self, assume: list, extra: Constraint | None = None) -> tuple[bool, list]:
        """Unit propagation from the literals ``assume`` (and the constraint ``extra``,
        not in the database).  Returns (conflict, the literals assigned); the caller
        undoes them with :meth:`undo`."""
        value, lit_value = self.value, self.lit_value
        binary, watches, occurs_of = self.binary, self.watches, self.occurs
        trail: list = []                # the literals set true, in order: also the queue

        def assign(lit: int) -> bool:
            """Set ``lit`` true; False if it is false already (a conflict)."""
            v = value[lit if lit > 0 else -lit]
            if v:
                return (v > 0) == (lit > 0)
            value[lit if lit > 0 else -lit] = 1 if lit > 0 else -1
            trail.append(lit)
            return True

        if self.empty:
            return True, trail
        general = dict(self.general)
        extra_occurs: dict = {}
        if extra is not None and extra.degree > 0:
            general[0] = extra
            extra_occurs = {lit: [(0, coef)] for lit, coef in extra.terms.items()}
        # slack = sum of the coefficients of the literals not false - degree, from no
        # literal assigned; each literal made false below takes its coefficient once
        slack = {cid: sum(c.terms.values()) - c.degree for cid, c in general.items()}
        # a constraint propagates only once its slack is below its largest coefficient
        largest = {cid: max(c.terms.values(), default=0) for cid, c in general.items()}
        for cid, c in general.items():
            s = slack[cid]
            if s < 0:
                return True, trail
            if s >= largest[cid]:
                continue
            for lit, coef in c.terms.items():
                if coef > s and not assign(lit):
                    return True, trail
        for lit in assume:
            if not assign(lit):
                return True, trail
        for lit in self.units.values():
            if not assign(lit):
                return True, trail
        head = 0
        while head < len(trail):
            false = -trail[head]
            head += 1
            # binary clauses (wipe keeps these lists exact): assign inlined, the hot loop
            for other, _cid in binary.get(false, ()):
                var = other if other > 0 else -other
                v = value[var]
                if v:
                    if (v > 0) != (other > 0):
                        return True, trail
                    continue
                value[var] = 1 if other > 0 else -1
                trail.append(other)
            watching = watches.get(false)
            if watching:
                keep = []
                conflict = False
                for cid in watching:
                    lits = self.clause_lits.get(cid)
                    if lits is None:
                        continue                  # deleted: its watch goes
                    if conflict:
                        keep.append(cid)
                        continue
                    if lits[0] == false:
                        lits[0], lits[1] = lits[1], lits[0]
                    if lit_value(lits[0]) > 0:
                        keep.append(cid)
                        continue
                    for k in range(2, len(lits)):
                        if lit_value(lits[k]) >= 0:
                            lits[1], lits[k] = lits[k], lits[1]
                            watches.setdefault(lits[1], []).append(cid)
                            break
                    else:
                        keep.append(cid)
                        conflict = not assign(lits[0])
                watches[false] = keep
                if conflict:
                    return True, trail
            for occurs in (occurs_of.get(false, ()), extra_occurs.get(false, ())):
                for cid, coef in occurs:
                    c = general.get(cid)
                    if c is None:
                        continue                  # deleted
                    s = slack[cid] = slack[cid] - coef
                    if s < 0:
                        return True, trail
                    if s >= largest[cid]:
                        continue
                    for lit, cf in c.terms.items():
                        if cf > s and lit_value(lit) == 0 and not assign(lit):
                            return True, trail
        return False, trail

    def undo(self, trail: list) -> None:
        for lit in trail:
            self.value[lit if lit > 0 else -lit] = 0

    def implied_by_rup(self, c: Constraint) -> bool:
        """Reverse unit propagation: does adding not-C and propagating conflict?"""
        neg = c.negation()
        if neg.is_contradiction():
            return True
        assume = [lit for lit in neg.terms] if c.is_clause() else []
        conflict, trail = self.propagate(assume, None if c.is_clause() else neg)
        self.undo(trail)
        return conflict


# -- the proof ---------------------------------------------------------------------------
def _rpn(tokens: list, db: Database) -> Constraint:
    """``p`` (or ``pol``): ids, ``+``, ``K *``, ``K d``; a trailing ``;`` or ``0`` ends it."""
    if tokens and tokens[-1] in (";", "0"):
        tokens = tokens[:-1]
    if not tokens:
        raise _Syntax("an empty 'p' line")
    stack: list = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok == "+":
            if len(stack) < 2:
                raise _Syntax("'+' needs two constraints on the stack")
            b, a = stack.pop(), stack.pop()
            stack.append(a.add(b))
        elif nxt in ("*", "d"):
            k = _integer(tok)
            if k <= 0:
                raise _Syntax(f"multiplier or divisor {k} must be > 0")
            if not stack:
                raise _Syntax(f"'{nxt}' needs a constraint on the stack")
            c = stack.pop()
            stack.append(c.multiply(k) if nxt == "*" else c.divide(k))
            i += 1
        elif tok in ("*", "d"):
            raise _Syntax(f"'{tok}' must follow its integer operand")
        else:
            cid = _integer(tok)
            if cid <= 0:
                raise _Syntax(f"constraint id {cid}: ids are >= 1 here")
            stack.append(db.get(cid))
        i += 1
    if len(stack) != 1:
        raise _Syntax(f"the 'p' line leaves {len(stack)} constraints, not one")
    return stack[0]


def check_files(opb_path, pbp_path) -> Verdict:
    """Check the proof ``pbp_path`` of the model ``opb_path``; :class:`ProofRejected` if
    it does not check (``OSError`` / ``UnicodeDecodeError`` for a file that cannot be read)."""
    model = read_model(opb_path)
    where = os.fspath(pbp_path)
    db = Database(model.nvars)
    loaded = False
    claimed = None
    verdict = Verdict(rules=0, claimed=0)
    with open(pbp_path, encoding="ascii", errors="strict") as fh:
        first = fh.readline()
        if not _VERSION.match(first.strip()):
            raise ProofRejected(where, 1, "expected 'pseudo-Boolean proof version 1.2'")
        number = 1
        for line in fh:
            number += 1
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
                    db.add(_rpn(args, db))
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
                    if not db.get(cid).is_contradiction():
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
    conflict, trail = db.propagate(list(seen.values()))
    try:
        if conflict:
            raise _Syntax("the solution violates a constraint (unit propagation conflicts)")
        for cid, c in db.by_id.items():
            if not c.satisfied_by(db.lit_value):
                raise _Syntax(f"the solution violates constraint {cid}")
        value = sum(coef for coef, lit in model.objective if db.lit_value(lit) > 0)
        true_vars = sum(1 for v in range(1, model.nvars + 1) if db.value[v] > 0)
    finally:
        db.undo(trail)
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
