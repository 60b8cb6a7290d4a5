"""Issue #11 items whose fix belongs to files the audit helper does not own
(engine/cluster.py, engine/solve.py).  Each test states the behaviour the issue asks
for and is marked ``xfail(strict=True)``: it fails today; once the change named in its
reason is applied it passes, strict makes the run fail, and the mark must go."""
import pytest

from engine.errors import InputError
from stealsearch.cli import main


@pytest.mark.xfail(strict=True, reason="engine/cluster.py local_cluster(): a LocalCluster "
                   "that fails to start from a config's values (ValueError from "
                   "parse_bytes, RuntimeError 'Cluster failed to start') must become one "
                   "ClusterUnavailable line")
@pytest.mark.parametrize("text", ["kind: local\nworkers: 2\nmemory_limit: lots\n",
                                  "kind: local\nworkers: 2\ndashboard_address: 'x'\n"])
def test_bad_values_in_a_local_cluster_config_are_one_line(tmp_path, capsys, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    code = main(["uts", "--cluster-config", str(path), "--node-limit", "10", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.xfail(strict=True, reason="engine/solve.py solve(): node_limit, time_limit and "
                   "checkpoint_every of the wrong type must raise InputError (today "
                   "TypeError from the comparison)")
@pytest.mark.parametrize("kw", [{"node_limit": "3"}, {"time_limit": "1"},
                                {"checkpoint_every": "5"}, {"node_limit": 2.5}])
def test_solve_limits_of_the_wrong_type_raise_input_error(kw):
    from engine import solve
    from problems.uts import UTSProblem

    with pytest.raises(InputError):
        solve(UTSProblem.preset("default"), backend="sequential", **kw)
