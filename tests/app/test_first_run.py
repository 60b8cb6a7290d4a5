"""A first run that is fast and says so (the compile notice, the small clique tier), and
the small points of the first ten minutes: a count with nothing to count, --time-limit's
help and check, hrel's word on the naive baseline, an example under every --help."""
import argparse
import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stealsearch.cli import build_parser, main
from stealsearch.engine import FastProblem, PythonProblem, RowLayout
from stealsearch.engine.app.commandline import EXAMPLE_HEADING
from stealsearch.engine.app.compile_notice import NOTICE
from stealsearch.engine.core.problem import ContractError

ROOT = Path(__file__).resolve().parents[2]

# -- the notice: once on a cold cache, never from the cache ---------------------------------
TINY_PROBLEM = textwrap.dedent('''
    from stealsearch.engine import FastProblem, RowLayout

    ROW = RowLayout("depth")


    def expand(row, out, data):
        if row[ROW.depth] == 4:
            return 0
        out[0, ROW.depth] = row[ROW.depth] + 1
        out[1, ROW.depth] = row[ROW.depth] + 1
        return 2


    def is_leaf(row, data):
        return row[ROW.depth] == 4


    class Binary(FastProblem):
        mode = "enumerate"
        layout, expand, is_solution = ROW, expand, is_leaf
        max_children = 2

        def root(self):
            return ROW.encode()
''')

TINY_COMMAND = textwrap.dedent('''
    import sys
    from tiny_problem import Binary
    from stealsearch.engine.app.commandline import (OneLineParser, add_backend_arguments,
                                                    print_json, result_json, solve_from_args)

    parser = OneLineParser(prog="tiny")
    add_backend_arguments(parser)
    args = parser.parse_args(sys.argv[1:])
    print_json(result_json(solve_from_args(Binary(), args)))
''')


def run_tiny(folder: Path, cache: str, *flags):
    """The tiny command in a fresh process whose numba and driver caches are ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / cache / "numba"),
               STEALSEARCH_CACHE=str(folder / cache / "drivers"),
               PYTHONPATH=os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", TINY_COMMAND, "--sequential", *flags],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)                 # stdout is the one JSON object
    assert (result["status"], result["count"], result["nodes"]) == ("exhausted", 16, 31)
    return proc.stderr, result


def test_the_compile_notice_appears_once_on_a_cold_cache_and_not_again(tmp_path):
    (tmp_path / "tiny_problem.py").write_text(TINY_PROBLEM)
    err, cold = run_tiny(tmp_path, "cache")
    assert err.splitlines().count(NOTICE) == 1, err  # once, however many kernels compiled
    compiled = cold["info"]["compile_seconds"]
    # with --sequential every compilation is the warm-up's, before the search's clock:
    # the reported wall time counts them (compile_seconds is rounded to the millisecond)
    assert compiled > 0 and cold["wall_seconds"] >= compiled - 0.0005
    err, warm = run_tiny(tmp_path, "cache")          # the same cache: everything loads
    assert NOTICE not in err, err
    assert "compile_seconds" not in warm["info"]
    err, quiet = run_tiny(tmp_path, "cold-again", "--quiet")
    assert err == "" and quiet["info"]["compile_seconds"] > 0


# -- a small clique in plain Python, the same answer ------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_the_small_tier_finds_the_verified_optimum_on_random_graphs(seed):
    import random

    from stealsearch.engine.solve import solve
    from stealsearch.problems.clique import check_clique
    from stealsearch.problems.clique.generators import gnp
    from stealsearch.problems.clique.problem import CliqueProblem
    from stealsearch.problems.clique.small import SmallCliqueProblem

    rng = random.Random(seed)
    n, p = rng.randint(0, 40), rng.choice([0.1, 0.5, 0.8, 0.95])
    graph = gnp(n, p, seed=seed)
    small = solve(SmallCliqueProblem(graph), backend="sequential")
    compiled = solve(CliqueProblem(graph), backend="sequential")
    assert small.status == "optimal" and small.verified
    assert small.objective == compiled.objective == len(small.solution)
    check_clique(graph, small.solution, size=small.objective, maximal=True)
    for k in (small.objective, small.objective + 1):      # found, then none
        if k >= 1:
            decided = solve(SmallCliqueProblem(graph, mode="decide", k=k), backend="sequential")
            assert decided.status == ("found" if k == small.objective else "none")
    m = min(n, 16)                                          # the counts, on a subgraph
    sub = gnp(m, p, seed=seed)
    for mode in ("count", "count-maximal"):
        assert (solve(SmallCliqueProblem(sub, mode=mode), backend="sequential").count
                == solve(CliqueProblem(sub, mode=mode), backend="sequential").count)


def clique_json(capsys, *argv):
    assert main(["clique", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_command_picks_the_tier_by_size_and_says_which(capsys):
    small = clique_json(capsys, "--gnp", "40", "0.6", "--seed", "3")
    assert small["info"]["tier"] == "python" and small["backend"] == "sequential"
    compiled = clique_json(capsys, "--gnp", "40", "0.6", "--seed", "3", "--tier", "compiled")
    assert compiled["info"]["tier"] == "compiled"
    assert small["objective"] == compiled["objective"] == small["clique_size"]
    assert clique_json(capsys, "--gnp", "41", "0.6")["info"]["tier"] == "compiled"
    # what only the kernels do: another bound, a proof, a place flag
    assert clique_json(capsys, "--gnp", "20", "0.6", "--bound", "maxsat")["info"]["tier"] == "compiled"
    assert clique_json(capsys, "--gnp", "20", "0.6", "--sequential")["info"]["tier"] == "compiled"
    assert main(["clique", "--gnp", "20", "0.6", "--tier", "python", "--bound", "maxsat"]) == 2
    assert "--tier python" in capsys.readouterr().err
    assert main(["clique", "--gnp", "12", "0.5"]) == 0
    assert "tier           python" in capsys.readouterr().out


# -- the small points ---------------------------------------------------------------------------
class PythonTree(PythonProblem):
    """Enumerate mode, no is_solution nor objective: nothing it could count."""

    mode = "enumerate"

    def root(self):
        return 0

    def children(self, depth):
        return [depth + 1, depth + 1] if depth < 3 else []


def grow(row, out, data):
    if row[0] == 3:
        return 0
    out[0, 0] = row[0] + 1
    return 1


class FastTree(FastProblem):
    """The fast tier's PythonTree."""

    mode = "enumerate"
    layout, expand = RowLayout("depth"), grow

    def root(self):
        return self.layout.encode()


@pytest.mark.parametrize("tree", [PythonTree, FastTree])
def test_a_count_with_nothing_to_count_is_one_clear_error(tree):
    from stealsearch.engine.solve import solve

    with pytest.raises(ContractError, match="defines neither is_solution nor objective") as info:
        solve(tree(), backend="sequential")
    assert "\n" not in str(info.value)


def test_time_limit_help_and_check_agree(capsys):
    assert main(["clique", "--gnp", "10", "0.5", "--time-limit", "0"]) == 2
    err = capsys.readouterr().err
    assert "> 0" in err and err.count("\n") == 1
    clique = subparser(build_parser(), "clique")
    assert "(a number > 0)" in " ".join(clique.format_help().split())


def test_hrel_says_why_naive_can_win(capsys):
    from stealsearch.problems.hrelation.cli import naive_note

    assert main(["hrel", "--random", "8", "16", "--algorithm", "all"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: float(line.split()[1]) for line in out.splitlines()
            if line.split() and line.split()[0] in ("direct", "forwarding", "naive")}
    assert rows["naive"] < min(rows["direct"], rows["forwarding"])
    assert [line for line in out.splitlines() if line.startswith("note: naive")] == [
        naive_note([{"algorithm": a, "length": v} for a, v in rows.items()])]
    assert naive_note([{"algorithm": "naive", "length": 15.0},
                       {"algorithm": "forwarding", "length": 12.0}]) is None


def subparser(parser, name):
    return next(a for a in parser._actions
                if isinstance(a, argparse._SubParsersAction))._name_parser_map[name]


def every_parser(parser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action._name_parser_map.items():
                if sub.prog.split()[-1] == name:
                    yield from every_parser(sub)


#: the commands whose --help shows an example (the application's own, stealsearch, demo,
#: resume and check-proof, are their owners' files)
WITH_EXAMPLES = {"uts", "clique", "design", "factorize", "liquid", "liquid example",
                 "liquid alloc", "liquid traffic", "liquid teams", "liquid t1-study", "hrel",
                 "hrel sweep", "commclust", "commclust sweep", "twolevel", "twolevel sweep",
                 "sweep", "reproduce"}


def test_every_example_in_a_help_parses_and_names_files_that_exist():
    parser = build_parser()
    shown = set()
    for sub in every_parser(parser):
        if not sub.epilog:
            continue
        command = sub.prog.split(maxsplit=1)[1] if " " in sub.prog else ""
        shown.add(command)
        lines = sub.epilog.splitlines()
        assert lines[0] == EXAMPLE_HEADING and len(lines) > 1, sub.prog
        assert EXAMPLE_HEADING + "\n  " + lines[1].strip() in sub.format_help()  # as written
        commands = [shlex.split(line) for line in lines[1:]]
        # the command itself, maybe after what it needs first (a checkpoint, a proof)
        assert " ".join(commands[-1][1:]).startswith(command), sub.prog
        for words in commands:
            line = " ".join(words)
            assert words[0] == "stealsearch", line
            parser.parse_args(words[1:])                  # the flags exist, the values parse
            for word in words:
                if "/" in word:
                    assert (ROOT / word).exists(), line
    assert WITH_EXAMPLES <= shown, WITH_EXAMPLES - shown
