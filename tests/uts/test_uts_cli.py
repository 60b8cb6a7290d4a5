"""``stealsearch uts`` with the published trees that are ~10^8 nodes (never run whole in a
test: a node limit stops them, and the answer must be a bracket of the published size),
and the validation of supercritical binomial trees (q*m > 1)."""
import json
import warnings

import pytest

from stealsearch.engine.core.errors import InputWarning
from stealsearch.problems.uts import PRESETS, UTSProblem
from stealsearch.problems.uts.problem import UTSParameterError, UTSParams, extinction_probability
from stealsearch.cli import main


@pytest.mark.parametrize("tree", ["T3L", "T1L"])
@pytest.mark.parametrize("limit", [1, 2_000, 150_000])
def test_large_published_tree_under_a_node_limit_is_a_bracket(capsys, tree, limit):
    assert main(["uts", "--tree", tree, "--node-limit", str(limit), "--sequential",
                 "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""                        # a published tree: no warning
    d = json.loads(captured.out)
    published = PRESETS[tree][1][0]
    assert d["status"] == "interrupted" and d["stop_reason"] == "node_limit"
    assert d["count"] == d["nodes"] == limit          # a lower bound of the tree's size...
    assert d["count"] <= published == d["published"]["nodes"]   # ...below the published one
    assert d["matches_published"] is None             # neither a match nor a mismatch


def test_t3l_is_accepted_and_is_supercritical():
    params = UTSParams.parse(PRESETS["T3L"][0])
    assert params.q * params.m > 1 and params.supercritical()
    assert 0.9 < params.finite_probability() < 0.96
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # the preset itself warns about nothing
        UTSProblem.preset("T3L")


def test_the_same_tree_by_options_warns_once_in_one_line(capsys):
    assert main(["uts", "--options", PRESETS["T3L"][0], "--node-limit", "10",
                 "--sequential"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("stealsearch: warning: UTS q*m = 1.00007")
    with pytest.warns(InputWarning, match="finite only with probability 0.93"):
        UTSProblem(UTSParams.parse(PRESETS["T3L"][0]))


@pytest.mark.parametrize("options, finite", [
    ("-t 0 -b 4 -q 0.25 -m 4", 1.0),                # critical: finite with certainty
    ("-t 0 -b 4 -q 0.2 -m 4", 1.0),                 # subcritical
    ("-t 1 -q 0.9 -m 9", 1.0),                      # geometric: q and m unused
])
def test_finite_probability_of_trees_that_are_always_finite(options, finite):
    p = UTSParams.parse(options)
    assert p.finite_probability() == finite and not p.supercritical()


def test_extinction_probability_solves_its_equation():
    for q, m in [(0.5, 4), (0.3, 5), (0.200014, 5), (0.9, 2)]:
        s = extinction_probability(q, m)
        assert 0 <= s < 1 and abs((1 - q + q * s ** m) - s) < 1e-12


@pytest.mark.parametrize("options", ["-t 0 -q 0.5 -m 4", "-t 0 -b 2000 -q 0.21 -m 5",
                                     "-t 2 -q 0.6 -m 4"])
def test_likely_infinite_trees_are_refused(capsys, options):
    with pytest.raises(UTSParameterError, match="infinite with probability"):
        UTSParams.parse(options)
    assert main(["uts", "--options", options, "--sequential"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: q*m" in err


@pytest.mark.parametrize("options, fragment", [
    ("-t 1 -a 1 -d 1", "-d must be >= 2"),                 # expdec: log(gen_mx) = 0
    ("-t 0 -b 1e9", "at most 100,000"),                    # a billion stack rows per node
    ("-t 3 -b 200000 -d 2", "at most 100,000"),
    ("-t 2 -f nan", "-f (shift depth) must be a finite number"),
    ("-t 1 -b inf", "-b (b0) must be > 0"),
])
def test_parameters_that_would_crash_the_kernel_are_refused(capsys, options, fragment):
    assert main(["uts", "--options", options, "--sequential", "--node-limit", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err


@pytest.mark.parametrize("options", ["-t 1 -d 99999999 -b 1e300", "-t 1 -a 1 -d 2 -b 1e300",
                                     "-t 1 -a 2 -b 1e-300 -d 5"])
def test_extreme_geometric_trees_run(capsys, options):
    """b_i so large that 1 - 1/(1 + b_i) rounds to 1 divided by log(1) = 0 in the kernel
    (a ZeroDivisionError traceback): now the node has all the children it may have."""
    assert main(["uts", "--options", options, "--sequential", "--node-limit", "3000",
                 "--json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert 1 <= d["count"] <= 3000
